"""The standalone branch (``use_ros_control:=false``): controllers run directly, no controller manager.

Seed 003's second branch: a thread publishing ``/joint_states`` and FollowJointTrajectory action
servers MoveIt can drive.  To make the action servers behave *exactly* like the ros_control branch
(validation, error codes, tolerances, replacement, cancel, hold on abort, ``state`` / ``command`` /
``query_state``), they are the :class:`JointTrajectoryController` class itself -- only the way it is
driven differs:

* :class:`ControllerRunner` constructs a fixed list of controllers from their parameter namespaces
  (same ``type``/``joints``/``constraints`` keys as the controller YAML), calls ``init_request``
  over the RobotHW with a rospy node handle, checks resource conflicts, asks the RobotHW to prepare
  the switch (motor modes), and in the control loop does what the controller manager's ``update``
  does for them: ``do_switch`` once, ``start_request`` once the hardware reports DONE
  (``wait_request`` while ONGOING), then ``update_request`` every cycle.  It has the controller
  manager's ``update(time, period, reset_controllers=False)`` signature so that
  :class:`~rospy_control.adapter.control_loop.ControlLoop` runs it unchanged.  No
  ``controller_manager/*`` services exist in this branch.
* :class:`JointStatesThread` publishes ``sensor_msgs/JointState`` for every joint of the RobotHW's
  JointStateInterface at its own rate, also when idle, from the latest values the runner copied in
  the control loop (one consistent cycle), with strictly increasing stamps (MoveIt's
  CurrentStateMonitor resets on an equal or older stamp).

Nothing here blocks the control loop: the runner's only hand-off to the publishing thread is one
tuple reference swapped per cycle.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from rospy_control.controller_interface.controller_base import ControllerBase
from rospy_control.controller_manager.controller_types import CONTROLLER_TYPES
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import ControllerInfo, JointStateInterface, SwitchState
from rospy_control.log import Throttle, get_logger
from rospy_control.plugins import Registry

logger = get_logger(__name__)

__all__ = ["ControllerRunner", "JointStatesThread", "JointStateSample"]

#: ``(names, positions, velocities, efforts)`` of one control cycle.
JointStateSample = Tuple[Tuple[str, ...], Tuple[float, ...], Tuple[float, ...], Tuple[float, ...]]

_EPS_NS = 1e-9


class ControllerRunner:
    """Runs ``names`` directly over ``robot_hw`` (see the module docstring).

    :param robot_hw: the RobotHW (``get``, ``check_for_conflict``, ``prepare_switch``, ``do_switch``,
        ``switch_result``).
    :param root_nh: node handle of the controllers' "root" namespace (their topics' base).
    :param names: controller names; each reads its params from ``<root_nh>/<name>``.
    :param registry: controller type registry (default the controller manager's).
    :param switch_timeout: seconds (ROS time) the motors may take to confirm their mode before the
        controllers are aborted.
    """

    #: Default of ``switch_timeout``.
    SWITCH_TIMEOUT = 2.0

    def __init__(self, robot_hw: Any, root_nh: Any, names: Sequence[str], registry: Optional[Registry] = None,
                 switch_timeout: Optional[float] = None) -> None:
        self.robot_hw = robot_hw
        self.root_nh = root_nh
        self.names = list(names)
        self.registry = registry if registry is not None else CONTROLLER_TYPES
        self.switch_timeout = self.SWITCH_TIMEOUT if switch_timeout is None else float(switch_timeout)
        self.controllers: Dict[str, ControllerBase] = {}
        self.infos: List[ControllerInfo] = []
        self._nhs: List[Any] = []
        self._switch_started = False
        self._switch_done = False
        self._switch_time: Optional[float] = None
        self._throttle = Throttle(5.0)
        js = robot_hw.get(JointStateInterface)
        self._js_handles = [js.get_handle(n) for n in js.get_names()] if js is not None else []
        self._js_names = tuple(h.get_name() for h in self._js_handles)
        #: latest joint state copied in the control loop (read by :class:`JointStatesThread`)
        self.latest: Optional[JointStateSample] = None
        self.update_count = 0

    # -- non-real-time ----------------------------------------------------------------------------
    def load(self) -> None:
        """Construct and initialise every controller, check conflicts and prepare the switch.

        :raises ConfigError: unknown or missing type, bad parameters, conflicting resources, or the
            RobotHW refusing the modes (everything initialised so far is shut down again).
        """
        try:
            for name in self.names:
                self._load_one(name)
            if self.infos and self.robot_hw.check_for_conflict(self.infos):
                raise ConfigError("controllers " + ", ".join(repr(i.name) for i in self.infos)
                                  + " claim the same joint resources; list non-conflicting ones in "
                                    "~trajectory_controllers")
            if self.infos and not self.robot_hw.prepare_switch(self.infos, []):
                raise ConfigError("the RobotHW refused the control modes of controllers "
                                  + ", ".join(repr(i.name) for i in self.infos))
        except BaseException:
            self.shutdown_ros()
            raise

    def _load_one(self, name: str) -> None:
        controller_nh = self.root_nh.child(name)
        where = controller_nh.namespace
        type_name = controller_nh.get_param("type", None)
        if not isinstance(type_name, str) or not type_name:
            raise ConfigError(f"controller '{name}' has no 'type' parameter (did you load the controller "
                              f"YAML into the driver's namespace?)", where)
        cls = self.registry.resolve(type_name, where=where)
        controller = cls()
        root_view = self.root_nh.child("")
        self._nhs.extend([controller_nh, root_view])
        try:
            claimed = controller.init_request(self.robot_hw, root_view, controller_nh)
        except ConfigError:
            raise
        except Exception as err:  # noqa: BLE001 - any init failure is a configuration error here
            raise ConfigError(f"initializing controller '{name}' ({type_name}) failed: {err}", where) from err
        self.controllers[name] = controller
        self.infos.append(ControllerInfo(name, type_name, list(claimed)))
        logger.info("standalone: loaded '%s' (%s)", name, type_name)

    def shutdown_ros(self) -> None:
        """Close every topic/service/action the controllers created (idempotent)."""
        for nh in reversed(self._nhs):
            try:
                nh.shutdown()
            except Exception as err:  # noqa: BLE001
                logger.warning("closing %s failed: %s", nh, err)
        self._nhs = []

    def stop(self, time: float) -> None:
        """``stop_request`` on every running controller (call after the loop has stopped)."""
        for name, controller in self.controllers.items():
            if controller.is_running():
                try:
                    controller.stop_request(time)
                except Exception as err:  # noqa: BLE001
                    logger.error("stopping controller '%s' raised: %s", name, err)

    def controller(self, name: str) -> ControllerBase:
        return self.controllers[name]

    def states(self) -> Dict[str, str]:
        """``{name: state label}``."""
        return {n: c.state.label for n, c in self.controllers.items()}

    # -- real-time (ControlLoop calls this between read and write) ---------------------------------
    def update(self, time: float, period: float, reset_controllers: bool = False) -> None:
        self.update_count += 1
        h = self._js_handles
        if h:
            self.latest = (self._js_names, tuple(x.get_position() for x in h),
                           tuple(x.get_velocity() for x in h), tuple(x.get_effort() for x in h))
        if not self._switch_done:
            self._manage_switch(time)
        if reset_controllers:
            for c in self.controllers.values():
                if c.is_running():
                    c.stop_request(time)
                    c.start_request(time)
        for name, controller in self.controllers.items():
            if not controller.is_running():
                continue
            try:
                controller.update_request(time, period)
            except Exception as err:  # noqa: BLE001 - as the controller manager: abort, keep looping
                if self._throttle.ready(name):
                    logger.error("Controller '%s' raised in update(): %r; aborting it", name, err)
                try:
                    controller.abort_request(time)
                except Exception:  # noqa: BLE001
                    pass

    def _manage_switch(self, time: float) -> None:
        if not self.infos:
            self._switch_done = True
            return
        if not self._switch_started:
            self._switch_started = True
            self._switch_time = time
            self.robot_hw.do_switch(self.infos, [])
        result = self.robot_hw.switch_result()
        if result == SwitchState.DONE:
            for name, c in self.controllers.items():
                c.start_request(time)
            self._switch_done = True
            logger.info("standalone: started %s", ", ".join(self.controllers))
        elif result == SwitchState.ERROR or (time - (self._switch_time or time)) > self.switch_timeout:
            for c in self.controllers.values():
                c.abort_request(time)
            self._switch_done = True
            logger.error("standalone: the motors did not switch to the controllers' modes (%s); "
                         "controllers aborted", "error" if result == SwitchState.ERROR else "timeout")
        else:
            for c in self.controllers.values():
                c.wait_request(time)


class JointStatesThread:
    """Publishes the runner's latest joint state at ``rate`` Hz (see the module docstring).

    :param source: callable returning the latest :data:`JointStateSample` (or None before the first
        cycle).
    :param publish: callable taking a ``sensor_msgs/JointState``.
    :param now: ROS time in float seconds.
    :param rate: Hz (> 0).
    :param msg_class: ``sensor_msgs.msg.JointState`` (injected so this module stays import-light).
    :param stamp: float seconds -> message stamp (``genpy.Time.from_sec``).
    :param monotonic: the schedule's clock.
    """

    def __init__(self, source: Callable[[], Optional[JointStateSample]], publish: Callable[[Any], None],
                 now: Callable[[], float], rate: float, msg_class: Any, stamp: Callable[[float], Any],
                 monotonic: Optional[Callable[[], float]] = None) -> None:
        rate = float(rate)
        if not rate > 0.0:
            raise ConfigError(f"~publish_rate must be > 0 Hz, got {rate}")
        import time as _time
        self.rate = rate
        self._source = source
        self._publish = publish
        self._now = now
        self._msg_class = msg_class
        self._stamp = stamp
        self._mono = monotonic or _time.monotonic
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._last_stamp = -1.0
        self._throttle = Throttle(10.0)
        self.published = 0

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="joint_states", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(2.0)

    def publish_once(self) -> bool:
        """Publish the latest sample now; False if there is none yet."""
        sample = self._source()
        if sample is None:
            return False
        t = float(self._now())
        if t <= self._last_stamp:  # strictly increasing, even with a coarse or frozen clock
            t = self._last_stamp + _EPS_NS
        self._last_stamp = t
        names, pos, vel, eff = sample
        msg = self._msg_class()
        msg.header.stamp = self._stamp(t)
        msg.name = list(names)
        msg.position = list(pos)
        msg.velocity = list(vel)
        msg.effort = list(eff)
        self._publish(msg)
        self.published += 1
        return True

    def _run(self) -> None:
        period = 1.0 / self.rate
        deadline = self._mono()
        while not self._stop.is_set():
            try:
                self.publish_once()
            except Exception as err:  # noqa: BLE001 - keep publishing
                if self._throttle.ready():
                    logger.warning("publishing /joint_states failed: %s", err)
            deadline += period
            now = self._mono()
            if now > deadline + period:  # far behind (suspended): re-anchor instead of bursting
                deadline = now
            self._stop.wait(max(0.0, deadline - now))
