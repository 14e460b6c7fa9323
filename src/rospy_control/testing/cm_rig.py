"""A controller manager on an in-memory graph, driven cycle by cycle from a test.

:class:`ControllerManagerRig` puts a RobotHW, an :class:`~.in_memory.InMemoryGraph` (its clock is
ROS time) and a :class:`~rospy_control.controller_manager.ControllerManager` together and plays the
control loop: :meth:`~ControllerManagerRig.cycle` advances ROS time by one period and runs the
controller manager's ``update``.  ``switch_controller`` blocks until the control loop applies the
switch, so :meth:`~ControllerManagerRig.switch` runs it in a thread (:class:`SwitchRunner`) while the
test thread keeps cycling: nothing depends on sleeps or on the speed of the machine.

Subclasses that simulate a robot override :meth:`~ControllerManagerRig.cycle` (read, update, write,
step the physics); the switch helpers call it, so a switch sees the same loop as the rest of the test.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

from rospy_control.controller_manager import ControllerManager
from rospy_control.controller_manager.controller_manager import STRICT
from rospy_control.plugins import Registry
from rospy_control.testing.in_memory import InMemoryGraph, InMemoryNodeHandle

__all__ = ["ControllerManagerRig", "SwitchRunner"]


class ControllerManagerRig:
    """A RobotHW, an in-memory graph and a controller manager, with helpers to drive them.

    :param robot_hw: the RobotHW under the controller manager (reach it as :attr:`robot_hw`).
    :param t0: ROS time before the first cycle (the graph's clock is set to it).
    :param dt: default period of :meth:`cycle`.
    :param robot_description: set as ``/robot_description`` when given (a URDF string).
    :param registry: controller types; the shared registry when omitted.
    :param cm_options: passed to :class:`ControllerManager` (``switch_wall_margin``, ...).
    """

    #: True: :meth:`switch` asserts that the switch succeeded (rigs whose tests only switch to test
    #: something else); False: it returns the result for the test to check.
    check_switch = False

    def __init__(self, robot_hw: Any, t0: float = 0.0, dt: float = 0.01,
                 robot_description: Optional[str] = None, registry: Optional[Registry] = None,
                 **cm_options: Any) -> None:
        self.graph = InMemoryGraph(time=t0)
        self.root_nh = InMemoryNodeHandle("/", self.graph)
        if robot_description is not None:
            self.root_nh.set_param("robot_description", robot_description)
        self.robot_hw = robot_hw
        self.cm = ControllerManager(robot_hw, self.root_nh, registry=registry, **cm_options)
        self.t = float(t0)
        self.dt = float(dt)

    # -- controllers ---------------------------------------------------------------------------
    def configure(self, name: str, type_name: str, **params: Any) -> None:
        """Put the controller's parameters (with ``type``) on the parameter server."""
        self.root_nh.set_param(name, dict(params, type=type_name))

    def load(self, name: str, type_name: str, params: Optional[Dict[str, Any]] = None,
             **more_params: Any) -> Any:
        """Configure (``params`` and/or keywords) and load ``name``, asserting that it loads; returns
        the controller."""
        self.configure(name, type_name, **dict(params or {}, **more_params))
        result = self.cm.load_controller(name)
        assert result.ok, result.message
        return self.cm.get_controller_by_name(name)

    def switch(self, start: Sequence[str] = (), stop: Sequence[str] = (), strictness: int = STRICT,
               start_asap: bool = False, timeout: float = 0.0,
               driver: Optional[Callable[[Any], None]] = None) -> Any:
        """``switch_controller`` while ``driver(self)`` (default: cycle until applied) plays the loop.

        Returns the controller manager's ``Result``; asserts that it is ok if :attr:`check_switch`.
        """
        runner = SwitchRunner(self.cm, list(start), list(stop), strictness, start_asap, timeout)
        runner.start()
        if runner.wait_armed():
            if driver is None:
                while runner.running():
                    self.cycle()
                    if not self.cm.is_switch_pending():
                        break
            else:
                driver(self)
        result = runner.join()
        if self.check_switch:
            assert result is not None and result.ok, result
        return result

    def shutdown(self) -> None:
        self.cm.shutdown()

    # -- time ----------------------------------------------------------------------------------
    def cycle(self, dt: Optional[float] = None) -> float:
        """One control cycle: ROS time += ``dt`` (default :attr:`dt`), then :meth:`control`."""
        dt = self.dt if dt is None else dt
        self.t += dt
        self.graph.set_time(self.t)
        self.control(self.t, dt)
        return self.t

    def control(self, t: float, dt: float) -> None:
        """What a cycle runs at ROS time ``t``: ``cm.update``; a simulated robot adds read, write and
        its physics around it."""
        self.cm.update(t, dt)


class SwitchRunner:
    """``switch_controller`` in a thread, while the test thread plays the control loop."""

    def __init__(self, cm: ControllerManager, start: List[str], stop: List[str], strictness: int,
                 start_asap: bool, timeout: float) -> None:
        self.cm = cm
        self.args = (start, stop, strictness, start_asap, timeout)
        self.result: Any = None
        self.thread = threading.Thread(target=self._run, name="rospy_control.test.switch_controller")

    def _run(self) -> None:
        self.result = self.cm.switch_controller(*self.args)

    def start(self) -> None:
        self.thread.start()

    def running(self) -> bool:
        return self.thread.is_alive()

    def wait_armed(self, timeout: float = 5.0) -> bool:
        """True once the switch is armed; False if the call already returned (non-RT failure)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.cm.is_switch_pending():
                return True
            if not self.thread.is_alive():
                return False
            time.sleep(0.0005)
        raise AssertionError("switch was never armed")

    def join(self, timeout: float = 5.0) -> Any:
        self.thread.join(timeout)
        assert not self.thread.is_alive(), "switch_controller did not return"
        return self.result
