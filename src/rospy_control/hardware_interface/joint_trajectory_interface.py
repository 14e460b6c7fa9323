"""``hardware_interface::JointTrajectoryInterface``: whole trajectories for hardware that executes them.

Some hardware is not commanded set-point by set-point: a controller board, a robot controller or a
drive takes a whole trajectory, interpolates it on its own clock and reports back (UR's
pass-through controllers, the original board program).  This interface is what such a RobotHW exposes; the
``pass_through_controllers/JointTrajectoryController`` uses it to serve ``follow_joint_trajectory``.

Design (in the spirit of UR's ``TrajectoryInterface``, for a device that executes *remotely*):

* **No per-joint command values.**  The RobotHW registers one :class:`TrajectoryJointHandle` per
  joint: the joint's state handle plus the :class:`TrajectoryDevice` that executes it.  The
  interface is *claiming* (``CLAIMS = True``): a controller that takes the handles claims the joints,
  so the controller manager refuses to run it together with a joint_trajectory_controller (or any
  other controller) on the same joints.
* **The device is the small contract a RobotHW implements** -- subclass :class:`TrajectoryDevice`
  and implement two methods:

  - :meth:`TrajectoryDevice.send_trajectory` ``(request)``: execute a :class:`TrajectoryRequest`
    (goal id, joint names in the claimed order, points in that order with times relative to
    ``start_time``, ``start_time`` in ROS seconds from ``header.stamp`` or "now", and the goal id it
    replaces, which the device splices at the request's first point).  Return None when it was sent
    (the device acknowledges later with :meth:`~TrajectoryDevice.report_accepted`, possibly from
    inside this call), or a reason string to refuse at once.  Called from a non-real-time thread; it
    may do I/O, but briefly.  An empty ``points`` list means "stop": decelerate to rest, then report
    succeeded.
  - :meth:`TrajectoryDevice.cancel` ``(goal_id)``: decelerate within the device's limits, then report
    :meth:`~TrajectoryDevice.report_preempted`.  **Must never block**: it may be called from the
    control loop (controller stopping, tolerance violation), so queue the request to the device's
    I/O thread.

  and report from any thread (its receive thread, usually):

  - :meth:`~TrajectoryDevice.report_accepted`, :meth:`~TrajectoryDevice.report_refused` (reason),
    :meth:`~TrajectoryDevice.report_succeeded`, :meth:`~TrajectoryDevice.report_aborted` (code,
    message, joint: the message names the cause, and the controller adds the joint and the device
    name), :meth:`~TrajectoryDevice.report_preempted`;
  - :meth:`~TrajectoryDevice.publish_feedback` with a :class:`TrajectoryFeedback`: stamp (ROS time
    of the sample, the device's clock mapped to the host's), actual positions and velocities of the
    device's joints, and for the goal being executed its id, the time along the trajectory, the
    device's own desired positions and a free-form device state ("executing", "decelerating",
    buffer fill...).

* **Hand-offs never block the control loop.**  Reports go through a ``collections.deque`` (append
  and popleft are atomic; the controller's loop is the only consumer) and the latest feedback is one
  reference replaced as a whole (a single-writer cell: the reader gets either the old or the new
  object, never a mix).  No lock is taken on the controller's side.

The joint order of a device is the order of :attr:`TrajectoryDevice.joint_names`; feedback values
follow it.  Requests carry the controller's order (the claimed order) and name every joint.
"""
from __future__ import annotations

import enum
import threading
from collections import deque
from typing import Any, Deque, List, NamedTuple, Optional, Sequence

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface.handles import JointStateHandle
from rospy_control.hardware_interface.resource_manager import ResourceManager

__all__ = [
    "ExecutionState", "ExecutionReport", "TrajectoryPointData", "TrajectoryRequest", "TrajectoryFeedback",
    "TrajectoryDevice", "TrajectoryJointHandle", "JointTrajectoryInterface", "PATH_TOLERANCE_VIOLATED",
]

#: ``control_msgs/FollowJointTrajectoryResult`` code used when a device aborts without its own code
#: (the code our joint_trajectory_controller uses for hardware faults).
PATH_TOLERANCE_VIOLATED = -4


class ExecutionState(enum.Enum):
    """What a device says about one goal."""

    ACCEPTED = "accepted"      #: acknowledged; executing (or waiting for its start time)
    REFUSED = "refused"        #: not executed (reason in the message); nothing changed on the device
    SUCCEEDED = "succeeded"    #: reached the last point and at rest
    ABORTED = "aborted"        #: stopped by a device fault (code, message, joint)
    PREEMPTED = "preempted"    #: canceled and at rest

    @property
    def terminal(self) -> bool:
        """True for states that end the goal on the device."""
        return self is not ExecutionState.ACCEPTED


class ExecutionReport(NamedTuple):
    """One report of a device about goal ``goal_id``.

    ``code`` is a FollowJointTrajectoryResult code (used for ABORTED), ``message`` the cause in the
    device's words, ``joint`` the joint concerned, if any.
    """

    goal_id: int
    state: ExecutionState
    code: int = 0
    message: str = ""
    joint: Optional[str] = None


class TrajectoryPointData(NamedTuple):
    """One point, values in the request's joint order (rad, rad/s, rad/s^2 or m, m/s, m/s^2).

    ``velocities``/``accelerations`` are None when the client did not give them (the device then
    interpolates with a lower order: cubic with velocities only, linear with positions only).
    ``time_from_start`` is seconds after the request's ``start_time``.
    """

    positions: List[float]
    velocities: Optional[List[float]]
    accelerations: Optional[List[float]]
    time_from_start: float


class TrajectoryRequest(NamedTuple):
    """A trajectory for a device (see :meth:`TrajectoryDevice.send_trajectory`).

    :ivar goal_id: unique, increasing per controller.
    :ivar joint_names: every joint of the controller, in the claimed order.
    :ivar points: validated points still in the future (past ones were dropped), in that order;
        empty = decelerate to rest and report succeeded.
    :ivar start_time: ROS time (s) of ``time_from_start`` 0: the goal's ``header.stamp``, or the
        controller's "now" for a stamp of 0.  Never 0.
    :ivar replaces: goal id the device is executing that this one replaces (the device keeps it until
        the splice, then continues from its state into this request's first point), or None.
    """

    goal_id: int
    joint_names: List[str]
    points: List[TrajectoryPointData]
    start_time: float
    replaces: Optional[int] = None


class TrajectoryFeedback(NamedTuple):
    """One feedback sample of a device (values in :attr:`TrajectoryDevice.joint_names` order).

    :ivar stamp: ROS time (s) at which the device sampled it (its clock mapped to the host's).
    :ivar positions: actual positions.  :ivar velocities: actual velocities.
    :ivar goal_id: goal being executed, None when idle.
    :ivar time_from_start: time along that goal's trajectory (s), None when idle.
    :ivar desired_positions: the device's own interpolated target, None if it does not report one.
    :ivar state: free-form device state ("idle", "executing", "decelerating", "fault: ...").
    """

    stamp: float
    positions: List[float]
    velocities: List[float]
    goal_id: Optional[int] = None
    time_from_start: Optional[float] = None
    desired_positions: Optional[List[float]] = None
    state: str = ""


class TrajectoryDevice:
    """Base of the device side (see the module docstring): subclass it and implement
    :meth:`send_trajectory` and :meth:`cancel`; call the ``report_*`` methods and
    :meth:`publish_feedback` from any thread.

    :param name: device name used in messages ("board 'arm_board'").
    :param joint_names: the joints it executes, in its own order (feedback order).
    """

    def __init__(self, name: str, joint_names: Sequence[str]) -> None:
        if not name:
            raise HardwareInterfaceError("A TrajectoryDevice needs a non-empty name")
        names = [str(j) for j in joint_names]
        if not names or len(set(names)) != len(names):
            raise HardwareInterfaceError(
                f"TrajectoryDevice '{name}': joint_names must be a non-empty list of distinct names, "
                f"got {list(joint_names)!r}")
        self.name = str(name)
        self.joint_names: List[str] = names
        self._reports: Deque[ExecutionReport] = deque()
        self._feedback: Optional[TrajectoryFeedback] = None
        self._id_lock = threading.Lock()
        self._next_id = 1

    # -------------------------------------------------------------- implemented by the device
    def send_trajectory(self, request: TrajectoryRequest) -> Optional[str]:
        """Execute ``request``; None when sent, else the reason it is refused (non-real-time)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement send_trajectory()")

    def cancel(self, goal_id: int) -> None:
        """Decelerate and stop goal ``goal_id`` (ignore unknown ids); must never block."""
        raise NotImplementedError(f"{type(self).__name__} does not implement cancel()")

    # -------------------------------------------------------------- device -> controller
    def report(self, report: ExecutionReport) -> None:
        """Queue a report (any thread; never blocks)."""
        self._reports.append(report)

    def report_accepted(self, goal_id: int) -> None:
        self.report(ExecutionReport(int(goal_id), ExecutionState.ACCEPTED))

    def report_refused(self, goal_id: int, reason: str) -> None:
        self.report(ExecutionReport(int(goal_id), ExecutionState.REFUSED, 0, str(reason)))

    def report_succeeded(self, goal_id: int) -> None:
        self.report(ExecutionReport(int(goal_id), ExecutionState.SUCCEEDED))

    def report_aborted(self, goal_id: int, message: str, joint: Optional[str] = None,
                       code: int = PATH_TOLERANCE_VIOLATED) -> None:
        """The device stopped goal ``goal_id`` on a fault: ``message`` says why, ``joint`` where."""
        self.report(ExecutionReport(int(goal_id), ExecutionState.ABORTED, int(code), str(message), joint))

    def report_preempted(self, goal_id: int) -> None:
        self.report(ExecutionReport(int(goal_id), ExecutionState.PREEMPTED))

    def publish_feedback(self, feedback: TrajectoryFeedback) -> None:
        """Replace the latest feedback (any thread; one reference assignment, never blocks)."""
        n = len(self.joint_names)
        if len(feedback.positions) != n or len(feedback.velocities) != n:
            raise HardwareInterfaceError(
                f"TrajectoryDevice '{self.name}': feedback has {len(feedback.positions)} position(s) and "
                f"{len(feedback.velocities)} velocity(ies) for joints {self.joint_names}")
        self._feedback = feedback

    # -------------------------------------------------------------- controller side
    def new_goal_id(self) -> int:
        """A fresh goal id (thread-safe)."""
        with self._id_lock:
            goal_id = self._next_id
            self._next_id += 1
            return goal_id

    def poll_reports(self) -> List[ExecutionReport]:
        """Reports since the last call, oldest first (one consumer: the controller's loop)."""
        out: List[ExecutionReport] = []
        reports = self._reports
        while True:
            try:
                out.append(reports.popleft())
            except IndexError:
                return out

    def latest_feedback(self) -> Optional[TrajectoryFeedback]:
        """The latest feedback sample, None before the first one."""
        return self._feedback

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, {self.joint_names!r})"


class TrajectoryJointHandle(JointStateHandle):
    """A joint executed by a :class:`TrajectoryDevice`: its state plus the device (no command value).

    :param state_handle: the joint's :class:`JointStateHandle` (name and state data are shared).
    :param device: the device that executes the joint (must list it in ``joint_names``).
    """

    def __init__(self, state_handle: JointStateHandle, device: TrajectoryDevice) -> None:
        if not isinstance(state_handle, JointStateHandle):
            raise HardwareInterfaceError(
                f"Cannot create TrajectoryJointHandle: expected a JointStateHandle, got {state_handle!r}.")
        if not isinstance(device, TrajectoryDevice):
            raise HardwareInterfaceError(
                f"Cannot create TrajectoryJointHandle '{state_handle.get_name()}': expected a "
                f"TrajectoryDevice, got {device!r}.")
        if state_handle.get_name() not in device.joint_names:
            raise HardwareInterfaceError(
                f"Cannot create TrajectoryJointHandle '{state_handle.get_name()}': device '{device.name}' "
                f"does not execute it (its joints: {device.joint_names}).")
        super().__init__(state_handle.get_name(), state_handle.get_data())
        self._device = device

    def get_device(self) -> TrajectoryDevice:
        return self._device


class JointTrajectoryInterface(ResourceManager):
    """Joints whose trajectories a device executes (claiming; see the module docstring)."""

    TYPE_NAME = "hardware_interface::JointTrajectoryInterface"
    LOOKUP_NAME = "hardware_interface/JointTrajectoryInterface"
    CLAIMS = True
    HANDLE_TYPE = TrajectoryJointHandle

    def register_device(self, device: TrajectoryDevice, state_handles: Sequence[Any]) -> None:
        """Register a :class:`TrajectoryJointHandle` for each of ``state_handles`` on ``device``."""
        for state in state_handles:
            self.register_handle(TrajectoryJointHandle(state, device))
