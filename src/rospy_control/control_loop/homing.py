"""What the driver's ``~home`` services do, without ROS (unit-testable).

:class:`Homing` homes units through the RobotHW (``homeable_units``, ``home``: a CiA 402 drive with
``<homing>`` in the hardware XML, or a trajectory board's axis with ``<homing>``), refusing while a
trajectory goal runs on any controller (a homing moves the joint and moves its zero: a trajectory
planned before it would be meaningless after), then waits until the control loop has taken the homed
joints back (two more cycles), so a goal sent right after a successful answer starts from the new
zero.  Never at start-up unless the configuration asks
for it (:meth:`Homing.home_at_start`).

The answer is ``(success, message)`` as ``std_srvs/Trigger`` wants it: success when every unit asked
for homed; the message names each unit with its outcome.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, List, Optional, Sequence, Tuple

from rospy_control.hardware_interface.robot_hw import RobotHW
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["Homing", "running_trajectories"]


def running_trajectories(controller_manager: Any) -> List[str]:
    """The running controllers of ``controller_manager`` that execute a trajectory goal now."""
    if controller_manager is None:
        return []
    busy = []
    for name in controller_manager.get_controller_names():
        c = controller_manager.get_controller_by_name(name)
        executor = getattr(c, "executor", None)
        if c is not None and c.is_running() and executor is not None and executor.active_goal_key is not None:
            busy.append(name)
    return busy


class Homing:
    """Homes units through ``robot_hw`` and waits for ``loop`` to resume their joints.

    :param robot_hw: the :class:`~rospy_control.hardware_interface.RobotHW`.
    :param loop: the control loop (``stats().cycles``, ``is_running()``), or None.
    :param busy: returns the controllers executing a trajectory goal now (a homing is refused then).
    """

    def __init__(self, robot_hw: RobotHW, loop: Any = None,
                 busy: Callable[[], List[str]] = lambda: []) -> None:
        self.robot_hw = robot_hw
        self.loop = loop
        self.busy = busy
        self._lock = threading.Lock()   # one homing request at a time

    def units(self) -> List[str]:
        return list(self.robot_hw.homeable_units())

    def home(self, units: Optional[Sequence[str]] = None,
             timeout: Optional[float] = None) -> Tuple[bool, str]:
        """Home ``units`` (None: every unit that can); ``(success, message)``."""
        can = self.units()
        if not can:
            return False, ("no unit can home: give a CiA 402 drive a <homing method=...>, or a trajectory "
                           "board's <axis> a <homing switch=...>, in the hardware XML "
                           "(docs/commissioning.md)")
        wanted = list(units) if units else can
        unknown = [u for u in wanted if u not in can]
        if unknown:
            return False, (f"cannot home {', '.join(repr(u) for u in unknown)}: the units that can are "
                           f"{', '.join(can)}")
        if not self._lock.acquire(blocking=False):
            return False, "refused: a homing is already running"
        try:
            busy = self.busy()
            if busy:
                return False, (f"refused: a trajectory is running on {', '.join(busy)}; a homing moves the "
                               "joints and their zero: let it end or cancel it first")
            logger.warning("home: homing %s", ", ".join(wanted))
            results = self.robot_hw.home(wanted, timeout)
            self._wait_for_loop()
        finally:
            self._lock.release()
        ok = all(results.get(u, (False, ""))[0] for u in wanted)
        message = "; ".join(f"{u}: {results.get(u, (False, 'no outcome'))[1]}" for u in wanted)
        (logger.info if ok else logger.error)("home: %s", message)
        return ok, message

    def home_at_start(self) -> Optional[Tuple[bool, str]]:
        """Home the units whose configuration asks for it at start-up (None: none does)."""
        units = list(self.robot_hw.homing_at_start())
        if not units:
            return None
        return self.home(units)

    def _wait_for_loop(self, cycles: int = 2, timeout: float = 2.0) -> None:
        loop = self.loop
        if loop is None or not loop.is_running():
            return
        import time
        target = loop.stats().cycles + cycles
        end = time.monotonic() + timeout
        while loop.stats().cycles < target and time.monotonic() < end:
            time.sleep(0.002)
