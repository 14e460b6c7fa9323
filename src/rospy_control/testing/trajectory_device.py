"""A device that executes whole trajectories itself: the reference implementation of the device side
of :class:`~rospy_control.hardware_interface.JointTrajectoryInterface`, for tests and as the example.

:class:`FakeTrajectoryDevice` implements the two methods of the
:class:`~rospy_control.hardware_interface.TrajectoryDevice` contract the way a remote device would:
``send_trajectory`` and ``cancel`` only queue the request (they never block), and the device works
through its queue when it runs (:meth:`FakeTrajectoryDevice.advance`, called by its RobotHW's
``read()`` with the ROS time, so tests stay deterministic).  It executes with our own trajectory
code (:func:`~rospy_control.trajectory.init_joint_trajectory`: the same interpolation and the same
splice of a replacement as the joint_trajectory_controller), decelerates on cancel with a stop ramp,
and reports accepted / succeeded / preempted / aborted and feedback every cycle.

Injectable behaviour (attributes, change them at any time):

* ``ack_delay`` (s of ROS time, 0): time before a request is acknowledged (0: inside ``send_trajectory``);
* ``refuse_reason``: refuse every request at once with this reason;
* ``refuse_later_reason``: refuse after ``ack_delay`` (the asynchronous refusal of a remote device);
* ``silent``: send no report and no feedback at all (keeps executing);
* ``ignore_cancel``: never act on (nor confirm) a cancel;
* ``hold_done_report``: finish a trajectory but keep its "succeeded" report back until cleared (a
  slow link);
* ``feedback_delay`` (0.0 s): feedback describes the device as it was this long ago (link latency);
* ``speed`` (1.0): rate of the device's execution clock (< 1: it runs behind the plan, overruns);
* ``offsets``: joint -> position error added to the actual position (tracking error);
* :meth:`FakeTrajectoryDevice.inject_fault`: abort the goal ``after`` seconds into it, naming a joint.

:class:`TrajectoryExecutingRobotHW` is the RobotHW around it: the joints in the JointStateInterface
(state from the device's feedback) and in the JointTrajectoryInterface, and optionally in the
PositionJointInterface too (a robot that also takes set-points, for resource-conflict tests).
"""
from __future__ import annotations

import types
from collections import deque
from typing import Deque, Dict, List, Optional, Sequence, Tuple, Type

from rospy_control.hardware_interface import (
    JointTrajectoryInterface, PositionJointInterface, ResourceManager, TrajectoryDevice, TrajectoryFeedback,
    TrajectoryRequest,
)
from rospy_control.hardware_interface.joint_trajectory_interface import PATH_TOLERANCE_VIOLATED
from rospy_control.testing.robot_hw import JointsRobotHW
from rospy_control.trajectory import Trajectory, TrajectoryError, init_joint_trajectory

__all__ = ["FakeTrajectoryDevice", "TrajectoryExecutingRobotHW"]


class FakeTrajectoryDevice(TrajectoryDevice):
    """Executes requests in ROS time when :meth:`advance` runs (see the module docstring).

    :param name: device name.  :param joint_names: its joints (its order).
    :param positions: initial positions (default 0).
    :param deceleration_time: duration of the stop ramp on cancel or stop (s).
    """

    def __init__(self, name: str, joint_names: Sequence[str], positions: Optional[Sequence[float]] = None,
                 deceleration_time: float = 0.2) -> None:
        super().__init__(name, joint_names)
        n = len(self.joint_names)
        start = [0.0] * n if positions is None else [float(p) for p in positions]
        self.deceleration_time = float(deceleration_time)
        self.ack_delay = 0.0
        self.refuse_reason: Optional[str] = None
        self.refuse_later_reason: Optional[str] = None
        self.silent = False
        self.ignore_cancel = False
        self.hold_done_report = False
        self._done_pending: Optional[int] = None
        self.speed = 1.0
        self.feedback_delay = 0.0
        self._history: Deque[TrajectoryFeedback] = deque()
        self.offsets: Dict[str, float] = {}
        self.requests: List[TrajectoryRequest] = []   # everything received, in order
        self.cancels: List[int] = []                   # goal ids asked to cancel, in order
        self._fault: Optional[Tuple[float, str, str, int]] = None
        self._inbox: Deque[tuple] = deque()            # callback threads -> advance()
        self._time: Optional[float] = None             # ROS time of the last advance
        self._clock = 0.0                              # the device's execution clock
        self._trajectory = Trajectory.hold(0.0, start)
        self._goal: Optional[int] = None               # goal being executed
        self._goal_start = 0.0                         # its start on the execution clock
        self._ending: Optional[str] = None             # "cancel" or "stop" while decelerating
        self.positions = list(start)
        self.velocities = [0.0] * n

    # ------------------------------------------------------------------ the device contract
    def send_trajectory(self, request: TrajectoryRequest) -> Optional[str]:
        self.requests.append(request)
        if self.refuse_reason is not None:
            return self.refuse_reason
        self._inbox.append(("goal", request, self._time))
        if self.ack_delay <= 0.0 and self.refuse_later_reason is None and not self.silent:
            self.report_accepted(request.goal_id)
        return None

    def cancel(self, goal_id: int) -> None:
        self.cancels.append(goal_id)
        self._inbox.append(("cancel", goal_id, self._time))

    def inject_fault(self, joint: str, message: str, after: float = 0.0,
                     code: int = PATH_TOLERANCE_VIOLATED) -> None:
        """Abort the next (or current) goal ``after`` seconds into it, naming ``joint``."""
        self._fault = (float(after), joint, message, int(code))

    # ------------------------------------------------------------------ execution
    @property
    def executing(self) -> Optional[int]:
        """Goal id being executed (or decelerated), None when idle."""
        return self._goal

    def _say(self, method, *args) -> None:
        if not self.silent:
            method(*args)

    def advance(self, time: float) -> None:
        """Run the device up to ROS time ``time``: take requests, execute, report, publish feedback."""
        if self._time is None:
            self._time = time
            self._clock = time
            self._trajectory = Trajectory.hold(time, self.positions)
        dt = max(0.0, time - self._time)
        self._time = time
        self._clock += dt * self.speed
        self._take_requests(time)
        clock = self._clock
        goal = self._goal
        if goal is not None and self._fault is not None and clock - self._goal_start >= self._fault[0]:
            _, joint, message, code = self._fault
            self._fault = None
            self._hold()
            self._say(self.report_aborted, goal, message, joint, code)
        elif goal is not None and clock >= self._trajectory.end_time:
            ending = self._ending
            self._goal = None
            self._ending = None
            if ending == "cancel":
                self._say(self.report_preempted, goal)
            else:
                self._done_pending = goal
        if self._done_pending is not None and not self.hold_done_report:
            self._say(self.report_succeeded, self._done_pending)
            self._done_pending = None
        p, v, _ = self._trajectory.sample(clock)
        positions = p.tolist()
        for j, name in enumerate(self.joint_names):
            positions[j] += self.offsets.get(name, 0.0)
        self.positions = positions
        self.velocities = v.tolist()
        state = "idle" if self._goal is None else ("decelerating" if self._ending else "executing")
        history = self._history
        along = None if self._goal is None else clock - self._goal_start
        history.append(TrajectoryFeedback(time, list(positions), v.tolist(), self._goal, along, p.tolist(),
                                          state))
        while len(history) > 1 and history[1].stamp <= time - self.feedback_delay + 1e-9:
            history.popleft()
        if not self.silent and history[0].stamp <= time - self.feedback_delay + 1e-9:
            self.publish_feedback(history[0])

    def _take_requests(self, time: float) -> None:
        inbox = self._inbox
        waiting: List[tuple] = []
        while inbox:
            item = inbox.popleft()
            kind, payload, received = item
            if kind == "cancel":
                self._on_cancel(payload, waiting)
                continue
            if self.ack_delay > 0.0 and received is not None and time - received < self.ack_delay - 1e-9:
                waiting.append(item)
                continue
            if self.silent and self.ack_delay <= 0.0 and self.refuse_later_reason is None:
                pass  # accepted silently: execute without ever saying so
            elif self.refuse_later_reason is not None:
                self._say(self.report_refused, payload.goal_id, self.refuse_later_reason)
                continue
            elif self.ack_delay > 0.0:
                self._say(self.report_accepted, payload.goal_id)
            self._start(payload)
        inbox.extendleft(reversed(waiting))

    def _on_cancel(self, goal_id: int, waiting: List[tuple]) -> None:
        if self.ignore_cancel:
            return
        for item in list(waiting):
            if item[0] == "goal" and item[1].goal_id == goal_id:  # not started yet: drop it
                waiting.remove(item)
                self._say(self.report_preempted, goal_id)
                return
        if self._goal == goal_id and self._ending != "cancel":
            self._decelerate("cancel")

    def _start(self, request: TrajectoryRequest) -> None:
        previous = self._goal
        if not request.points:
            self._goal = request.goal_id
            self._goal_start = self._clock
            self._decelerate("stop")
        else:
            start = self._clock + (request.start_time - (self._time or 0.0))
            now = min(self._clock, start)
            msg = types.SimpleNamespace(
                joint_names=list(request.joint_names),
                header=types.SimpleNamespace(stamp=start),
                points=[types.SimpleNamespace(positions=p.positions, velocities=p.velocities or [],
                                              accelerations=p.accelerations or [],
                                              time_from_start=p.time_from_start)
                        for p in request.points])
            try:
                result = init_joint_trajectory(msg, self.joint_names, now, now, self._trajectory)
            except TrajectoryError as err:
                self._say(self.report_refused, request.goal_id, f"cannot interpolate the trajectory: {err}")
                return
            self._trajectory = result.trajectory
            self._goal = request.goal_id
            self._goal_start = start
            self._ending = None
        if previous is not None and previous != request.goal_id:
            self._say(self.report_preempted, previous)  # spliced: the old goal ends here

    def _decelerate(self, why: str) -> None:
        p, v, _ = self._trajectory.sample(self._clock)
        self._trajectory = Trajectory.stop_ramp(self._clock, p, v, self.deceleration_time)
        self._ending = why

    def _hold(self) -> None:
        p, _, _ = self._trajectory.sample(self._clock)
        self._trajectory = Trajectory.hold(self._clock, p)
        self._goal = None
        self._ending = None


class TrajectoryExecutingRobotHW(JointsRobotHW):
    """A RobotHW whose joints a :class:`FakeTrajectoryDevice` executes (see the module docstring).

    :param joints: joint names.  :param device_name: the device's name.
    :param positions: initial positions.
    :param position_interface: also register the joints in the PositionJointInterface.
    :param deceleration_time: the device's stop ramp (s).
    """

    def __init__(self, joints: Sequence[str], device_name: str = "fake_board",
                 positions: Optional[Sequence[float]] = None, position_interface: bool = False,
                 deceleration_time: float = 0.2) -> None:
        commands: Dict[Type[ResourceManager], str] = (
            {PositionJointInterface: "command_position"} if position_interface else {})
        super().__init__(joints, commands, positions)
        self.device = FakeTrajectoryDevice(device_name, joints, positions, deceleration_time)
        self.trajectory_interface = JointTrajectoryInterface()
        self.trajectory_interface.register_device(self.device,
                                                  [self.js.get_handle(j) for j in self.joint_names])
        self.register_interface(self.trajectory_interface)

    def read(self, time: float, period: float) -> None:
        """Let the device run up to ``time`` and copy its actual state into the joint data."""
        self.device.advance(time)
        for name, position, velocity in zip(self.joint_names, self.device.positions, self.device.velocities):
            data = self.data[name]
            data.position = position
            data.velocity = velocity
