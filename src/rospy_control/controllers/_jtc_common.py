"""Private helpers of the joint trajectory and gripper action controllers.

* :func:`trajectory_joint_names` -- the ``joints`` parameter, each name once; :func:`joints_fault` --
  why one of the claimed joints cannot move;
* :func:`urdf_joint_types` -- joint types from ``robot_description`` (searched from ``root_nh`` up,
  as ros_controllers' ``getUrdf``);
* :func:`trajectory_joint_facts` -- the same types plus the
  :class:`~rospy_control.trajectory.TrajectoryLimits` of the joints (URDF ``<limit>`` overridden by
  ``joint_limits/<joint>`` parameters, as ros_control's joint_limits_interface merges them);
* :class:`DeferredPublisher` -- like :class:`~rospy_control.controller_interface.RealtimePublisher`,
  but the control loop only *requests* a publish: the message is **built** in the publisher thread
  from a callable, so the loop never allocates a message;
* :class:`PeriodicWorker` -- the action monitor "timer": a thread at a fixed wall-clock rate, or, in
  synchronous mode (in-memory node handles, unit tests), polled from ``update()`` at the same rate in
  ROS time so tests stay deterministic;
* :func:`control_msgs_module` -- ``control_msgs.msg``/``.srv`` with an actionable error when the
  catkin workspace was not built.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

from rospy_control.controllers._common import PublishRate, joint_list_param
from rospy_control.exceptions import ConfigError, ControllerError, JointLimitsError
from rospy_control.hardware_interface import joint_fault_text
from rospy_control.joint_limits import JointLimits, params as limit_params
from rospy_control.log import Throttle, get_logger
from rospy_control.realtime import join_thread, start_thread
from rospy_control.trajectory import TrajectoryLimits
from rospy_control.urdf import UrdfJoint, load_robot_description

logger = get_logger(__name__)

__all__ = ["urdf_joint_types", "trajectory_joint_facts", "trajectory_joint_names", "joints_fault",
           "number_param", "DeferredPublisher", "PeriodicWorker", "control_msgs_module"]


def control_msgs_module(kind: str = "msg") -> Any:
    """``control_msgs.msg`` (``kind="msg"``) or ``control_msgs.srv``.

    :raises ControllerError: control_msgs is not importable (workspace not built / not sourced).
    """
    try:
        if kind == "srv":
            import control_msgs.srv as module
        else:
            import control_msgs.msg as module
    except ImportError as err:
        raise ControllerError(
            "control_msgs is not importable; build the catkin workspace (make build) and source "
            "tools/env.sh") from err
    return module


def number_param(nh, key: str, default: float) -> float:
    """A finite number parameter (ints accepted). :raises ConfigError: otherwise."""
    value = nh.get_param(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ConfigError(f"Parameter '{key}' must be a finite number, got {value!r}", nh.resolve_name(key))
    return float(value)


def trajectory_joint_names(controller_nh) -> List[str]:
    """The ``joints`` parameter of a trajectory controller.  :raises ConfigError: a name given twice."""
    names = joint_list_param(controller_nh)
    if len(set(names)) != len(names):
        raise ConfigError(f"Parameter 'joints' contains duplicated names: {names}",
                          controller_nh.resolve_name("joints"))
    return names


def joints_fault(joint_names: Sequence[str], handles: Sequence[Any]) -> Optional[str]:
    """Why one of the joints cannot move (its handle reports a fault), else None."""
    for name, handle in zip(joint_names, handles):
        fault = handle.get_fault()
        if fault is not None:
            return joint_fault_text(name, fault)
    return None


def urdf_joint_types(root_nh, joint_names: Sequence[str], param: str = "robot_description") -> Dict[str, str]:
    """URDF type (``revolute``, ``continuous``, ``prismatic``...) of each of ``joint_names``.

    The description is searched from ``root_nh`` (the controller manager's namespace) up to the
    global ``/robot_description`` (ros_controllers' ``getUrdf``).

    :raises ConfigError: no description, unparsable XML, or a joint missing from it.
    """
    _, joints, where = load_robot_description(root_nh, param)
    return _joint_types(joints, joint_names, where)


def _joint_types(joints: Dict[str, UrdfJoint], joint_names: Sequence[str], where: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    for name in joint_names:
        if name not in joints:
            raise ConfigError(f"Could not find joint '{name}' in urdf ('{where}')", where)
        out[name] = joints[name].type
    return out


def _urdf_limits(joint: UrdfJoint) -> JointLimits:
    """ros_control's URDF rule: position limits for revolute/prismatic joints with a ``<limit>``."""
    limits = JointLimits()
    if not joint.has_limits:
        return limits
    if joint.type in ("revolute", "prismatic"):
        limits.has_position_limits = True
        limits.min_position, limits.max_position = joint.lower, joint.upper
    elif joint.type == "continuous":
        limits.angle_wraparound = True
    if joint.velocity < float("inf"):
        limits.has_velocity_limits = True
        limits.max_velocity = joint.velocity
    return limits


def trajectory_joint_facts(root_nh, joint_names: Sequence[str], param: str = "robot_description"):
    """``(types, limits)``: URDF type of each joint and the :class:`TrajectoryLimits` of the list.

    Limits start from each joint's URDF ``<limit>`` (position limits of revolute and prismatic
    joints, velocity limit), then ``joint_limits/<joint>`` (searched from ``root_nh`` up, where the
    driver reads it for the RobotHW) overrides what it specifies, with the rules of
    :mod:`rospy_control.joint_limits.params` -- so a trajectory is checked against what the
    hardware layer enforces.  Acceleration limits can only come from the parameters.

    :raises ConfigError: no URDF, a joint missing from it, malformed or inconsistent ``joint_limits``.
    """
    _, joints, where = load_robot_description(root_nh, param)
    types = _joint_types(joints, joint_names, where)
    limits_where = root_nh.search_param("joint_limits") if hasattr(root_nh, "search_param") else None
    tree = root_nh.get_param(limits_where, None) if limits_where is not None else None
    if tree is not None and not isinstance(tree, dict):
        raise ConfigError(f"'joint_limits' must be a mapping joint -> limits, got {tree!r}", limits_where)
    columns: Dict[str, list] = {"lower": [], "upper": [], "velocity": [], "acceleration": []}
    inf = float("inf")
    for name in joint_names:
        limits = _urdf_limits(joints[name])
        if tree:
            try:
                limit_params.get_joint_limits(name, {"joint_limits": tree}, limits)
            except JointLimitsError as err:
                raise ConfigError(str(err), limits_where) from err
        columns["lower"].append(limits.min_position if limits.has_position_limits else -inf)
        columns["upper"].append(limits.max_position if limits.has_position_limits else inf)
        columns["velocity"].append(limits.max_velocity if limits.has_velocity_limits else inf)
        columns["acceleration"].append(limits.max_acceleration if limits.has_acceleration_limits else inf)
    try:
        bounds = TrajectoryLimits(joint_names, columns["lower"], columns["upper"], columns["velocity"],
                                  columns["acceleration"])
    except ValueError as err:
        raise ConfigError(f"bad joint limits ({where} and joint_limits): {err}", where) from err
    return types, bounds


class DeferredPublisher:
    """Publish a message built by ``build()`` in a background thread, on request from the loop.

    :meth:`request` never blocks: it sets a flag the thread waits on and returns False if the
    previous request has not been picked up yet (skip this cycle, as a realtime publisher's failed
    ``trylock``).  In synchronous mode (``nh.SYNCHRONOUS_REALTIME_PUBLISH``, the in-memory handles)
    :meth:`request` builds and publishes in the caller's thread.  ``build()`` may return None to skip.

    :param nh: handle the topic is advertised through (it tracks this object).
    """

    JOIN_TIMEOUT = 2.0

    def __init__(self, nh, topic: str, msg_class: type, build: Callable[[], Any], queue_size: int = 1,
                 synchronous: Optional[bool] = None) -> None:
        self.publisher = nh.advertise(topic, msg_class, queue_size)
        self.topic = self.publisher.name or nh.resolve_name(topic)
        self.synchronous = nh.SYNCHRONOUS_REALTIME_PUBLISH if synchronous is None else bool(synchronous)
        self._build = build
        self._wake = threading.Event()
        self._pending = False
        self._running = True
        self._throttle = Throttle(5.0)
        self._thread: Optional[threading.Thread] = None
        if not self.synchronous:
            self._thread = start_thread(self._run, f"DeferredPublisher[{self.topic}]")
        nh.track(self)

    def request(self) -> bool:
        """Ask for one publish; False if the previous one is still pending (or shut down)."""
        if not self._running:
            return False
        if self.synchronous:
            self._publish()
            return True
        if self._pending:
            return False
        self._pending = True
        self._wake.set()
        return True

    def _publish(self) -> None:
        try:
            msg = self._build()
            if msg is not None:
                self.publisher.publish(msg)
        except Exception as err:  # noqa: BLE001 - a failed publish must not kill the loop or the thread
            if self._throttle.ready():
                logger.error("Publishing '%s' failed: %s", self.topic, err)

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            if not self._running:
                return
            self._publish()
            self._pending = False

    def shutdown(self) -> None:
        """Stop the thread, then unregister the topic; idempotent."""
        if not self._running:
            return
        self._running = False
        self._wake.set()
        join_thread(self._thread, self.JOIN_TIMEOUT, "DeferredPublisher")  # logs one that did not stop
        self.publisher.unregister()


class PeriodicWorker:
    """Call ``work()`` at ``rate`` Hz, off the control loop.

    Threaded mode: a daemon thread waking every ``1/rate`` wall-clock seconds.  Synchronous mode
    (``nh.SYNCHRONOUS_REALTIME_PUBLISH`` unless ``synchronous`` says otherwise): no thread;
    :meth:`poll` (called from ``update()``) runs ``work()`` when ``1/rate`` seconds of ROS time have
    passed.  Exceptions in ``work()`` are logged (throttled), never raised.

    Idle sleep (threaded mode, with ``pending``): after a ``work()`` that leaves ``pending()`` False
    (no active goal, no event to relay) the thread sleeps without a timeout until :meth:`wake` (a
    goal accepted) -- an idle controller's monitor costs nothing.  While ``pending()`` is True it
    ticks at ``rate`` exactly as without it.  :meth:`poll` in threaded mode wakes a sleeping thread
    when ``pending()`` became True on the loop's side (an event posted by ``update()``), asking it at
    most at ``rate`` (so a wake comes no later than the next tick would have); it only reads one
    attribute while the thread is ticking.

    :param nh: handle that tracks this worker (its shutdown stops the thread).
    :param pending: True while ``work()`` has something to do (None: tick at ``rate`` always).
    """

    JOIN_TIMEOUT = 2.0

    def __init__(self, nh, rate: float, work: Callable[[], None], name: str,
                 synchronous: Optional[bool] = None, pending: Optional[Callable[[], bool]] = None) -> None:
        if not (rate > 0.0 and math.isfinite(rate)):
            raise ConfigError(f"{name}: rate must be a positive number, got {rate!r}", nh.namespace)
        self.rate = float(rate)
        self.synchronous = nh.SYNCHRONOUS_REALTIME_PUBLISH if synchronous is None else bool(synchronous)
        self._work = work
        self._name = name
        self._pending = pending
        self._stop = threading.Event()
        self._wake = threading.Event()
        #: the thread sleeps until :meth:`wake` (read by :meth:`poll` on the loop's side)
        self.idle = False
        #: ROS time from which :meth:`poll` asks ``pending()`` again (threaded mode)
        self._next_check = -math.inf
        self._throttle = Throttle(5.0)
        self._due = PublishRate(rate)
        self._thread: Optional[threading.Thread] = None
        if not self.synchronous:
            self._thread = start_thread(self._run, name)
        nh.track(self)

    def reset(self, time: float) -> None:
        """Synchronous mode: the next :meth:`poll` due one period after ``time``."""
        self._due.reset(time)

    def poll(self, time: float) -> None:
        """Synchronous mode: run ``work()`` if due at ROS time ``time``.  Threaded: wake an idle thread
        when ``pending()`` says there is work again."""
        if self._thread is not None:
            # asked at most at the worker's rate (and at once when the clock went back): an idle
            # controller's update costs a comparison
            period = self._due.period
            if self.idle and self._pending is not None and not 0.0 < self._next_check - time <= period:
                self._next_check = time + period
                if self._pending():
                    self.wake()
            return
        due = self._due
        if due.last is None:
            due.reset(time)
            return
        if due.last + due.period <= time + 1e-9:
            due.last = max(due.last + due.period, time - due.period)
            self.run_once()

    def run_once(self) -> None:
        """Run ``work()`` now in the caller's thread (errors logged)."""
        try:
            self._work()
        except Exception:  # noqa: BLE001 - the monitor must survive a bad goal handle
            if self._throttle.ready():
                logger.exception("%s failed", self._name)

    def wake(self) -> None:
        """Threaded mode: end an idle sleep (the next ``work()`` runs at once); cheap when awake."""
        if self.idle:
            self.idle = False
            self._wake.set()

    def _run(self) -> None:
        period = 1.0 / self.rate
        pending = self._pending
        while not self._stop.wait(period):
            self.run_once()
            if pending is None or self._stop.is_set():
                continue
            self._wake.clear()
            self.idle = True
            try:
                busy = pending()  # after raising ``idle``: a wake() from now on is not lost
            except Exception:  # noqa: BLE001 - treat as busy: tick as without ``pending``
                busy = True
            if busy:
                self.idle = False
                continue
            self._wake.wait()
            self.idle = False

    def shutdown(self) -> None:
        """Stop the thread; idempotent."""
        self._stop.set()
        self.idle = False
        self._wake.set()
        join_thread(self._thread, self.JOIN_TIMEOUT, "PeriodicWorker")  # logs one that did not stop
