"""``<package>/JointTrajectoryController``: ros_controllers' joint trajectory controller in Python.

Variants (registered in :data:`~rospy_control.controller_manager.CONTROLLER_TYPES`):

===================================================  ==========================  ===========================
type                                                 class                       writes
===================================================  ==========================  ===========================
``position_controllers/JointTrajectoryController``   PositionJoint...Controller  desired position
``velocity_controllers/JointTrajectoryController``   VelocityJoint...Controller  ``ff*v_d + PID(e_p, e_v)``
``effort_controllers/JointTrajectoryController``     EffortJoint...Controller    ``ff*v_d + PID(e_p, e_v)``
``pos_vel_controllers/JointTrajectoryController``    PosVelJoint...Controller    desired (position, velocity)
``pos_vel_acc_controllers/JointTrajectoryController``  PosVelAccJoint...Controller  desired (pos, vel, acc)
===================================================  ==========================  ===========================

Everything trajectory-related (time base, validation, replacement merge, wraparound, tolerances,
hold/stop ramp, goal bookkeeping) is :class:`~rospy_control.trajectory.TrajectoryExecutor`; this module
adds the hardware adapters and the ROS API (:class:`TrajectoryRosApi`, reusable without a
controller manager, see "Standalone use" below).

ROS API
-------
Parameters (controller namespace; upstream names and defaults):

* ``joints`` (list, required) -- each must be in the URDF and in the hardware interface;
* ``robot_description`` -- read from the controller manager's namespace, else ``/robot_description``
  (required, as upstream); ``continuous`` joints get angle wraparound; its ``<limit>`` elements
  bound the accepted points (below);
* ours: ``joint_limits/<joint>/...`` (ros_control's schema, searched from the controller manager's
  namespace up -- the same parameters the RobotHW enforces) overrides what it specifies of the
  URDF limits for that check; ``has_acceleration_limits``/``max_acceleration`` only come from here;
* ``constraints/goal_time`` (0.0 s), ``constraints/stopped_velocity_tolerance`` (0.01, the goal
  velocity tolerance of every joint), ``constraints/<joint>/trajectory`` (0.0 = path position
  tolerance not enforced), ``constraints/<joint>/goal`` (0.0 = not enforced);
* ``state_publish_rate`` (50 Hz), ``action_monitor_rate`` (20 Hz);
* ``stop_trajectory_duration`` (0.0: hold at the measured position; > 0: stop ramp of that duration);
* ``allow_partial_joints_goal`` (false);
* velocity/effort variants: ``gains/<joint>/{p, i, d, i_clamp, i_clamp_min, i_clamp_max, antiwindup}``
  and ``velocity_ff/<joint>`` (0.0).

Beyond upstream (each documented; the default is the safe choice):

* ``hold_on_abort`` (**true**): a goal aborted for a path/goal tolerance violation stops the robot
  (hold at the measured position, or the stop ramp).  Upstream keeps executing the aborted
  trajectory (ros_controllers#48): set false for that.
* ``goal_timeout_margin`` (**1.0 s**; negative disables): a goal still active this long after the
  latest ``end + goal_time`` of its joints is aborted with GOAL_TOLERANCE_VIOLATED ("goal timed
  out ...") even when no ``goal_time`` was configured -- a goal can never hang.
* Joint limits (always on; :mod:`rospy_control.trajectory.limits` has the rules and why): an
  executed point is rejected with INVALID_GOAL, and an error_string naming the point index, the
  joint, the value and the bound, when

  - a position lies outside the joint's position limits (URDF ``lower``/``upper``, or
    ``joint_limits``); continuous joints are exempt, but their raw values must stay within
    +-1e6 rad;
  - ``|velocity|`` exceeds **4x** the joint's velocity limit (1e4 without one);
  - ``|acceleration|`` exceeds **10x** ``joint_limits``' ``max_acceleration`` (1e5 without one);
  - ``|time_from_start|`` or ``|stamp - now|`` exceeds 1e9 s.

  Upstream accepts anything finite.  Then an absurd goal (an elbow sent to 1e6 rad) aborted, and
  the hold that followed started from the absurd desired state; every later goal bridged from that
  state and aborted, or the values overflowed into NaN.  Topic commands get the same checks: a
  rejected command is logged as an error, nothing is executed, and the controller keeps its
  trajectory (or keeps holding).  As a second line of defence, a hold, stop ramp or bridge never
  starts from a desired state that is not finite or that the limits would refuse as a point.  Such
  joints start from their measured position at rest, so a cancel or preemption is answered at
  once, and no goal inherits an earlier goal's broken state.  A trajectory whose spline arithmetic
  would still overflow (e.g. segments of 1e-300 s from float inputs) is rejected, never executed
  as NaN.
* Points with more values than ``joint_names`` are accepted.  The first ``len(joint_names)`` values
  are used and the rest ignored, with a throttled warning; velocities and accelerations, when
  present, must have as many values as the point's positions.  This is upstream's behaviour (its
  partial-trajectory tests rely on it).  Points with fewer values are rejected.
* Always on (no parameter -- there is no unsafe alternative worth offering): NaN/inf in any executed
  point is rejected with INVALID_GOAL naming the point and joint (duplicated joint names with
  INVALID_JOINTS), and past points produce **one** throttled, explicit warning ("Trajectory starts in
  the past: skipping its first N of M point(s) ...") instead of upstream's "Dropping ..." stream; the
  all-in-the-past rejection text says how to fix the stamp.  The MoveIt case (first point at
  ``time_from_start`` 0, stamp 0) is skipped silently.
* ``stopping()`` leaves the joints safe: velocity/effort commands are zeroed, position-type
  commands hold the measured position (upstream leaves the last command in place).
* Missing ``gains/<joint>/p`` fails the load of the velocity/effort variants (upstream only warns
  and runs with zero gains).
* Hardware faults (always on): when the RobotHW reports one of the controller's joints in fault
  (``JointStateHandle.get_fault()``, set by :mod:`rospy_control.robot_hw` when a motor goes to
  FAULT), the active goal is aborted at once with PATH_TOLERANCE_VIOLATED and an error_string naming
  the joint and the motor's reason, and the other joints hold; while the fault lasts, new goals are
  rejected with INVALID_GOAL and topic commands are ignored (logged).

Topics, services, action (controller namespace):

* subscribes ``command`` (``trajectory_msgs/JointTrajectory``): replaces the trajectory, preempts the
  active goal; no tolerances are checked;
* publishes ``state`` (``control_msgs/JointTrajectoryControllerState``) at ``state_publish_rate``:
  desired (positions, velocities, accelerations), actual and error (positions, velocities);
  accelerations of actual/error empty, as upstream;
* service ``query_state`` (``control_msgs/QueryTrajectoryState``): desired state at the requested time;
  fails (exception -> the call returns false) when the controller is not running or the time precedes
  the trajectory;
* action ``follow_joint_trajectory`` (``control_msgs/FollowJointTrajectoryAction``): upstream's
  validation and result codes (:meth:`TrajectoryExecutor.accept
  <rospy_control.trajectory.executor.TrajectoryExecutor.accept>`; rejected goals carry
  ``error_code`` and ``error_string``); a new goal preempts the
  previous one; feedback (desired/actual/error) at ``action_monitor_rate``; results with codes and
  ``error_string``; cancel -> hold and PREEMPTED.

Threading: ``update()`` (loop) reads the joints, calls ``TrajectoryExecutor.update`` (one sample and
one vectorised tolerance check for all joints), writes the commands and, when a ``state`` message is
due, only *requests* it from a publisher thread that builds it.  Goal results and feedback are
relayed by an action-monitor thread at ``action_monitor_rate`` draining the executor's event queue.
With in-memory node handles (unit tests) both run synchronously from ``update()`` at the same rates
in ROS time (set :attr:`JointTrajectoryController.SYNCHRONOUS` to force either mode).

Standalone use (no controller manager, e.g. the driver's ``use_ros_control:=false`` branch)
-------------------------------------------------------------------------------------------
Either reuse a controller over a minimal RobotHW (same code path as under the controller manager)::

    hw = RobotHW(); iface = PositionJointInterface()
    for name, data in joint_data.items():           # JointData objects the driver reads/writes
        iface.register_handle(JointHandle(JointStateHandle(name, data), data, "command_position"))
    hw.register_interface(iface)
    jtc = PositionJointTrajectoryController()
    jtc.init_request(hw, root_nh, root_nh.child("arm_controller"))   # params as in controllers.yaml
    jtc.start_request(t)
    ... every cycle: read hardware -> jtc.update_request(t, dt) -> write hardware
    jtc.stop_request(t); root_nh.child(...).shutdown() when done

or drive the engine directly and reuse only the ROS API::

    types, limits = trajectory_joint_facts(root_nh, joints)        # from controllers._jtc_common
    continuous = [types[j] == "continuous" for j in joints]
    executor = TrajectoryExecutor.from_params(joints, nh, continuous, nh.namespace, limits)
    api = TrajectoryRosApi(executor, nh)             # command, state, query_state, follow_joint_trajectory
    executor.start(t, positions, velocities); api.on_start(t)
    ... every cycle: p, v, a = executor.update(t, dt, positions, velocities); write p/v/a; api.on_update(t)

Both give the same action, topics, service, validation and result codes as the controller.
"""
from __future__ import annotations

import math
from collections import deque
from operator import attrgetter
from typing import Any, List, Optional, Sequence

import numpy as np

from rospy_control.controller_interface import Controller
from rospy_control.controllers._jtc_common import (
    joints_fault, number_param, trajectory_joint_facts, trajectory_joint_names, urdf_joint_types,
)
from rospy_control.controllers.pid import Pid
from rospy_control.controllers.trajectory_ros_api import (
    DEFAULT_ACTION_MONITOR_RATE, DEFAULT_STATE_PUBLISH_RATE, TrajectoryRosApi,
)
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import (
    EffortJointInterface, JointHandle, PositionJointInterface, PosVelAccJointInterface, PosVelJointInterface,
    VelocityJointInterface,
)
from rospy_control.log import get_logger
from rospy_control.trajectory import PATH_TOLERANCE_VIOLATED, TrajectoryExecutor

logger = get_logger(__name__)

__all__ = [
    "JointTrajectoryController", "PositionJointTrajectoryController", "VelocityJointTrajectoryController",
    "EffortJointTrajectoryController", "PosVelJointTrajectoryController",
    "PosVelAccJointTrajectoryController",
    "TrajectoryRosApi", "continuous_joints", "DEFAULT_STATE_PUBLISH_RATE", "DEFAULT_ACTION_MONITOR_RATE",
]

_TWO_PI = 2.0 * math.pi

_POSITION = attrgetter("position")
_VELOCITY = attrgetter("velocity")
_FAULT = attrgetter("fault")
_SINK: "deque[None]" = deque(maxlen=0)  # ``_SINK.extend(iterator)`` runs it to its end, keeping nothing


def _command_targets(handles: Sequence[Any]) -> tuple:
    """``(objects, fields)`` such that ``setattr(objects[j], fields[j], v)`` is exactly what
    ``handles[j].set_command(v)`` does, when every handle is a plain :class:`JointHandle` (one
    C-level ``map`` then writes a cycle's commands); ``()`` otherwise (call ``set_command``)."""
    if not all(type(h).set_command is JointHandle.set_command
               and "set_command" not in getattr(h, "__dict__", ()) for h in handles):
        return ()
    return [h._cmd_data for h in handles], [h._cmd_field for h in handles]


def continuous_joints(root_nh, joint_names: Sequence[str], param: str = "robot_description") -> List[bool]:
    """Per joint, True if the URDF (``param`` on ``root_nh``, else global) declares it continuous.

    :raises ConfigError: no URDF, or a joint missing from it.
    """
    types = urdf_joint_types(root_nh, joint_names, param)
    return [types[name] == "continuous" for name in joint_names]


class JointTrajectoryController(Controller):
    """Base of the five variants (see the module docstring).  Subclasses set :attr:`INTERFACE` and
    implement :meth:`_write`, :meth:`_start_commands`, :meth:`_safe_commands`."""

    #: None: follow the node handle (synchronous for in-memory handles); True/False force the mode
    #: of the ``state`` publisher and the action monitor.
    SYNCHRONOUS: Optional[bool] = None

    def init(self, hw, root_nh, controller_nh) -> bool:
        names = trajectory_joint_names(controller_nh)
        self.joint_names: List[str] = names
        types, limits = trajectory_joint_facts(root_nh, names)
        continuous = [types[name] == "continuous" for name in names]
        self.handles = [hw.get_handle(name) for name in names]
        self._data = [h.get_data() for h in self.handles]
        self._command_targets = _command_targets(self.handles)
        self.executor = TrajectoryExecutor.from_params(names, controller_nh, continuous,
                                                       source=controller_nh.namespace, limits=limits)
        state_rate = number_param(controller_nh, "state_publish_rate", DEFAULT_STATE_PUBLISH_RATE)
        monitor_rate = number_param(controller_nh, "action_monitor_rate", DEFAULT_ACTION_MONITOR_RATE)
        if monitor_rate <= 0.0:
            raise ConfigError(f"Parameter 'action_monitor_rate' must be > 0, got {monitor_rate}",
                              controller_nh.resolve_name("action_monitor_rate"))
        self._init_adapter(controller_nh)
        self._fault_seen = False
        self.ros = TrajectoryRosApi(self.executor, controller_nh, state_rate, monitor_rate, self.SYNCHRONOUS,
                                    fault_check=self.hardware_fault)
        logger.debug("Initialized %s with %d joint(s): %s", type(self).__name__, len(names), names)
        return True

    # -------------------------------------------------------------------------------- life cycle
    def _measured(self):
        data = self._data
        return [d.position for d in data], [d.velocity for d in data]

    def starting(self, time: float) -> None:
        pos, vel = self._measured()
        self.executor.start(time, pos, vel)
        self._start_commands(pos)
        self.ros.on_start(time)

    def hardware_fault(self) -> Optional[str]:
        """Why one of this controller's joints cannot move (its hardware is in fault), else None."""
        return joints_fault(self.joint_names, self.handles)

    def update(self, time: float, period: float) -> None:
        data = self._data
        measured = list(map(_POSITION, data))
        measured += map(_VELOCITY, data)
        try:
            healthy = list(map(_FAULT, data)).count(None) == len(data)
        except AttributeError:  # data objects without a ``fault`` field are healthy
            healthy = [getattr(d, "fault", None) for d in data].count(None) == len(data)
        if not healthy:
            if not self._fault_seen:
                # Beyond upstream: a goal is not left running into a dead joint; the others hold.
                self._fault_seen = True
                reason = self.hardware_fault() or "hardware fault"
                if not self.executor.abort(reason, PATH_TOLERANCE_VIOLATED, hold=True):
                    self.executor.hold(reason)
        else:
            self._fault_seen = False
        if self._positions_only:
            self._write_positions(self.executor.update_positions(time, period, measured))
        else:
            desired = self.executor.update_stacked(time, period, measured)
            self._write_desired(desired, measured, period)
        self.ros.on_update(time)

    #: True for a variant that writes the desired positions only, through :meth:`_write_positions`
    #: (the executor then skips the rest of the sample in the common cycle)
    _positions_only = False

    def _write_positions(self, positions: List[float]) -> None:
        """Write the desired positions of one cycle (variants with :attr:`_positions_only`)."""
        raise NotImplementedError

    def _write_desired(self, desired: np.ndarray, measured: List[float], period: float) -> None:
        """Write the commands of one cycle: ``desired`` is ``[positions, velocities, accelerations]``
        (3n,), ``measured`` the positions then velocities (2n).  Calls :meth:`_write`; a variant may
        override this instead to skip the split."""
        n = len(self._data)
        self._write(desired[:n], desired[n:2 * n], desired[2 * n:], measured[:n], measured[n:], period)

    def stopping(self, time: float) -> None:
        self.executor.stopping(time)
        self._safe_commands()
        self.ros.on_stop(time)

    def aborting(self, time: float) -> None:
        self._safe_commands()

    # -------------------------------------------------------------------------------- adapters
    def _init_adapter(self, nh) -> None:
        """Read adapter parameters (velocity/effort: gains)."""

    def _start_commands(self, positions: List[float]) -> None:
        """Commands written by ``starting()``."""
        self._safe_commands()

    def _write(self, dp: np.ndarray, dv: np.ndarray, da: np.ndarray, pos: List[float], vel: List[float],
               period: float) -> None:
        raise NotImplementedError

    def _safe_commands(self) -> None:
        """Commands that keep the joints where they are (``stopping``/``aborting``)."""
        raise NotImplementedError


class PositionJointTrajectoryController(JointTrajectoryController):
    """``position_controllers/JointTrajectoryController``: writes the desired position."""

    INTERFACE = PositionJointInterface

    def init(self, hw, root_nh, controller_nh) -> bool:
        ok = super().init(hw, root_nh, controller_nh)
        cls = type(self)
        # a subclass with its own _write or _write_desired gets the whole desired state, as documented
        self._positions_only = (cls._write is PositionJointTrajectoryController._write
                                and cls._write_desired is JointTrajectoryController._write_desired)
        return ok

    def _write(self, dp, dv, da, pos, vel, period) -> None:
        for handle, value in zip(self.handles, dp.tolist()):
            handle.set_command(value)

    def _write_positions(self, positions: List[float]) -> None:
        targets = self._command_targets
        if targets:
            _SINK.extend(map(setattr, targets[0], targets[1], positions))  # stops after the n targets
        else:
            for handle, value in zip(self.handles, positions):
                handle.set_command(value)

    def _safe_commands(self) -> None:
        for handle, data in zip(self.handles, self._data):
            handle.set_command(data.position)


class PosVelJointTrajectoryController(JointTrajectoryController):
    """``pos_vel_controllers/JointTrajectoryController``: writes desired (position, velocity)."""

    INTERFACE = PosVelJointInterface

    def _write(self, dp, dv, da, pos, vel, period) -> None:
        for handle, p, v in zip(self.handles, dp.tolist(), dv.tolist()):
            handle.set_command(p, v)

    def _safe_commands(self) -> None:
        for handle, data in zip(self.handles, self._data):
            handle.set_command(data.position, 0.0)


class PosVelAccJointTrajectoryController(JointTrajectoryController):
    """``pos_vel_acc_controllers/JointTrajectoryController``: writes desired (pos, vel, acc)."""

    INTERFACE = PosVelAccJointInterface

    def _write(self, dp, dv, da, pos, vel, period) -> None:
        for handle, p, v, a in zip(self.handles, dp.tolist(), dv.tolist(), da.tolist()):
            handle.set_command(p, v, a)

    def _safe_commands(self) -> None:
        for handle, data in zip(self.handles, self._data):
            handle.set_command(data.position, 0.0, 0.0)


class _PidTrajectoryController(JointTrajectoryController):
    """Closed-loop adapter: ``command = velocity_ff * v_desired + PID(e_pos, e_vel, period)``.

    ``e_pos`` is the shortest angular distance from the measured to the desired position (every
    joint, as upstream), ``e_vel = v_desired - v_measured``.  One :class:`~rospy_control.controllers.pid.Pid`
    per joint from ``gains/<joint>``.
    """

    def _init_adapter(self, nh) -> None:
        self.pids: List[Pid] = []
        ff = []
        for name in self.joint_names:
            self.pids.append(Pid.from_params(nh.child(f"gains/{name}")))
            ff.append(number_param(nh, f"velocity_ff/{name}", 0.0))
        self.velocity_ff = np.array(ff)
        self._compute = [pid.compute_command for pid in self.pids]

    def _write(self, dp, dv, da, pos, vel, period) -> None:
        p = np.array(pos)
        ep = math.pi - np.remainder(math.pi - (dp - p), _TWO_PI)
        ev = dv - np.array(vel)
        ff = (self.velocity_ff * dv).tolist()
        for handle, compute, f, e, ed in zip(self.handles, self._compute, ff, ep.tolist(), ev.tolist()):
            handle.set_command(f + compute(e, period, ed))

    def _start_commands(self, positions) -> None:
        for pid in self.pids:
            pid.reset()
        self._safe_commands()

    def _safe_commands(self) -> None:
        for handle in self.handles:
            handle.set_command(0.0)


class VelocityJointTrajectoryController(_PidTrajectoryController):
    """``velocity_controllers/JointTrajectoryController`` (PID on the velocity command)."""

    INTERFACE = VelocityJointInterface


class EffortJointTrajectoryController(_PidTrajectoryController):
    """``effort_controllers/JointTrajectoryController`` (PID on the effort command)."""

    INTERFACE = EffortJointInterface
