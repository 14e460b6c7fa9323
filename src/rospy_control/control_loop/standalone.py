"""The standalone branch (``use_ros_control:=false``): the trajectory controllers without the
controller manager's ROS API.

The branch offers a thread publishing ``/joint_states`` and FollowJointTrajectory action servers
that MoveIt can drive.  So that the action servers behave *exactly* like the ros_control branch's
(validation, error codes, tolerances, replacement, cancel, hold on abort, ``state`` / ``command`` /
``query_state``), they are the :class:`JointTrajectoryController` itself, run by the same
:class:`~rospy_control.controller_manager.ControllerManager` as in the ros_control branch -- only
without :class:`~rospy_control.adapter.controller_manager_ros.ControllerManagerRos`: no
``controller_manager/*`` services and no statistics topic, so the controller set is fixed at
start-up.  The pieces:

* :func:`load_controllers` loads each listed controller into the manager (``type``/``joints``/
  ``constraints`` from the controller YAML, as the spawner would) and :func:`start_controllers`
  switches them on in one STRICT switch, once the control loop runs the manager.  The driver
  starts ``joint_state_controller`` of the ros_control branch the same way.  A controller that is
  wrong (unknown type, bad parameters, resources claimed twice, modes the RobotHW refuses) is a
  :class:`~rospy_control.exceptions.ConfigError`.  A motor in FAULT does not stop the switch (the
  RobotHW starts its joints' controllers; the joints get commands once the fault is reset); a
  controller the switch aborts (the motors did not confirm their modes within the switch timeout,
  or its ``starting()`` raised) is logged and reported, the node keeps running.
* :class:`JointStateSampler` copies every joint's position, velocity and effort once per control
  cycle (the :class:`~rospy_control.control_loop.loop.ControlLoop`'s ``after_read`` hook), so the
  published values come from one consistent cycle.
* :class:`JointStatesThread` publishes that copy as ``sensor_msgs/JointState`` for every joint of
  the RobotHW's JointStateInterface at its own rate, also when idle, with strictly increasing
  stamps (MoveIt's CurrentStateMonitor resets on an equal or older stamp).  Stamps are kept in
  integer nanoseconds: a clock that did not advance gives the previous stamp + 1 ns, which a float
  of epoch seconds (spacing about 2.4e-7 s near 1.7e9 s) could not represent.
* :func:`controller_states` is what ``/diagnostics`` reports about the controllers.

Nothing here blocks the control loop: the sampler's only hand-off to the publishing thread is a
:class:`~rospy_control.realtime.RealtimeBuffer` written once per cycle.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from rospy_control.controller_manager import ControllerManager
from rospy_control.controller_manager.controller_manager import STRICT
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import JointStateInterface, RobotHW
from rospy_control.log import Throttle, get_logger
from rospy_control.realtime import RealtimeBuffer, join_thread, start_thread

logger = get_logger(__name__)

__all__ = ["SWITCH_TIMEOUT", "load_controllers", "start_controllers", "controller_states",
           "JointStateSampler", "JointStatesThread", "JointStateSample", "stamp_from_nsec"]

#: ``(names, positions, velocities, efforts)`` of one control cycle.
JointStateSample = Tuple[Tuple[str, ...], Tuple[float, ...], Tuple[float, ...], Tuple[float, ...]]

#: ROS-time seconds the motors may take to confirm the controllers' modes before the start-up switch
#: aborts the controllers (the ``timeout`` of ``controller_manager_msgs/SwitchController``).
SWITCH_TIMEOUT = 2.0


def _to_nsec(seconds: float) -> int:
    """Float seconds -> integer nanoseconds, the whole seconds exact (``seconds * 1e9`` rounds epoch
    times by up to ~128 ns)."""
    whole = math.floor(seconds)
    return int(whole) * 1_000_000_000 + int(round((seconds - whole) * 1e9))


def stamp_from_nsec(nsec: int) -> Any:
    """Integer nanoseconds -> ``genpy.Time`` (exact; ``Time.from_sec`` of a float is not)."""
    import genpy
    return genpy.Time(nsec // 1_000_000_000, nsec % 1_000_000_000)


def load_controllers(cm: ControllerManager, names: Sequence[str]) -> None:
    """Load ``names`` into ``cm`` (state ``initialized``), in order.

    :raises ConfigError: a controller cannot be loaded (no or unknown ``type``, its ``init`` failed);
        the message is the controller manager's, the source the controller's namespace.  Controllers
        loaded before it stay loaded (``cm.shutdown()`` unloads them).
    """
    for name in names:
        result = cm.load_controller(name)
        if not result:
            raise ConfigError(f"cannot load '{name}': {result.message}", cm.root_nh.resolve_name(name))
        logger.info("loaded controller '%s' (%s)", name, _type_of(cm, name))


def start_controllers(cm: ControllerManager, names: Sequence[str],
                      timeout: float = SWITCH_TIMEOUT) -> List[str]:
    """Start the loaded ``names`` in one STRICT switch (the control loop must be running ``cm``).

    Blocks until the loop applied the switch (the motors confirmed the modes), as the spawner does.

    :param timeout: ROS-time seconds the hardware switch may take; then the controllers still
        waiting are aborted.
    :returns: the names that are not running afterwards (aborted; logged as an error).
    :raises ConfigError: the switch was refused and nothing changed (resources claimed twice, control
        modes the RobotHW refuses, a name not loaded, the loop not running).
    """
    names = list(names)
    if not names:
        return []
    result = cm.switch_controller(names, [], STRICT, False, timeout)
    states = controller_states(cm)
    not_running = [n for n in names if states.get(n) != "running"]
    if not result and all(states.get(n) == "initialized" for n in names):
        where = cm.root_nh.resolve_name(names[0]) if len(names) == 1 else cm.root_nh.namespace
        raise ConfigError(f"cannot start {', '.join(repr(n) for n in names)}: {result.message}", where)
    if not_running:
        logger.error("controller(s) did not start: %s (the motors did not confirm the controllers' modes "
                     "within %.1f s, or starting() raised; see above); the node keeps running",
                     ", ".join(f"'{n}' ({states.get(n)})" for n in not_running), timeout)
    else:
        logger.info("started %s", ", ".join(names))
    return not_running


def controller_states(cm: ControllerManager) -> Dict[str, str]:
    """``{name: state}`` of every loaded controller, load order (``list_controllers``' state strings:
    ``initialized``, ``running``, ``stopped``, ``waiting``, ``aborted``).  Takes no lock."""
    out = {}
    for name in cm.get_controller_names():
        controller = cm.get_controller_by_name(name)
        if controller is not None:
            out[name] = controller.state.label
    return out


def _type_of(cm: ControllerManager, name: str) -> str:
    for desc in cm.list_controllers():
        if desc.name == name:
            return desc.type
    return "?"


class JointStateSampler:
    """Copies the joint states of ``robot_hw``'s JointStateInterface once per control cycle.

    Give :meth:`sample` to the control loop (``ControlLoop(..., after_read=sampler.sample)``) and the
    sampler itself (a callable returning :attr:`latest`) to :class:`JointStatesThread`.

    The hand-off is a :class:`~rospy_control.realtime.RealtimeBuffer`: one immutable tuple per
    cycle, so the publishing thread never sees names of one cycle with positions of another.
    """

    def __init__(self, robot_hw: RobotHW) -> None:
        js = robot_hw.get(JointStateInterface)
        self._handles = [js.get_handle(n) for n in js.get_names()] if js is not None else []
        self._names = tuple(h.get_name() for h in self._handles)
        self._buffer: RealtimeBuffer[Optional[JointStateSample]] = RealtimeBuffer(None, "joint states")

    def sample(self, time: float = 0.0, period: float = 0.0) -> None:
        """Copy the current values (the control thread calls this right after ``robot_hw.read``)."""
        h = self._handles
        if h:
            self._buffer.write_from_rt((self._names, tuple(x.get_position() for x in h),
                                        tuple(x.get_velocity() for x in h), tuple(x.get_effort() for x in h)))

    @property
    def latest(self) -> Optional[JointStateSample]:
        """The last :data:`JointStateSample`, None before the first cycle (or without joints)."""
        return self._buffer.read_from_non_rt()

    def __call__(self) -> Optional[JointStateSample]:
        return self._buffer.read_from_non_rt()


class JointStatesThread:
    """Publishes the latest joint state sample at ``rate`` Hz (see the module docstring).

    :param source: callable returning the latest :data:`JointStateSample` (or None before the first
        cycle).
    :param publish: callable taking a ``sensor_msgs/JointState``.
    :param now: ROS time in float seconds.
    :param rate: Hz (> 0).
    :param msg_class: ``sensor_msgs.msg.JointState`` (injected so this module stays import-light).
    :param stamp: integer nanoseconds -> message stamp (:func:`stamp_from_nsec`).
    :param monotonic: the schedule's clock.
    """

    def __init__(self, source: Callable[[], Optional[JointStateSample]], publish: Callable[[Any], None],
                 now: Callable[[], float], rate: float, msg_class: Any, stamp: Callable[[int], Any],
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
        self._last_stamp = -1  # ns
        self._throttle = Throttle(10.0)
        self.published = 0

    def start(self) -> None:
        self._thread = start_thread(self._run, "joint_states")

    def stop(self) -> bool:
        """Stop and join the thread; False if it did not stop (logged)."""
        self._stop.set()
        return join_thread(self._thread, 2.0, "/joint_states")

    def publish_once(self) -> bool:
        """Publish the latest sample now; False if there is none yet."""
        sample = self._source()
        if sample is None:
            return False
        t = _to_nsec(float(self._now()))
        if t <= self._last_stamp:  # strictly increasing, even with a coarse or frozen clock
            t = self._last_stamp + 1
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
