"""``pass_through_controllers/JointTrajectoryController``: trajectories executed by the hardware itself.

For hardware that takes a whole trajectory and executes it on its own clock (a controller board, a
robot controller), exposed through :class:`~rospy_control.hardware_interface.JointTrajectoryInterface`.
It offers what our joint_trajectory_controller offers, with the same code for validation,
replacement, tolerances and messages (:class:`~rospy_control.trajectory.TrajectoryExecutor` and
:class:`~rospy_control.controllers.joint_trajectory_controller.TrajectoryRosApi`), but commands
nothing per cycle: accepted trajectories go to the device, and the device's feedback is the actual
state.  docs/pass_through_trajectories.md has the full semantics and the comparison with UR's
pass_through_controllers.

ROS API
-------
Parameters: those of the joint_trajectory_controller (``joints``, ``constraints/...``,
``stop_trajectory_duration``, ``allow_partial_joints_goal``, ``state_publish_rate``,
``action_monitor_rate``, ``hold_on_abort``, ``goal_timeout_margin``, ``joint_limits``), plus:

* ``device_ack_timeout`` (1.0 s): a trajectory the device has neither accepted nor refused by then
  aborts the goal;
* ``device_feedback_timeout`` (1.0 s): while a trajectory executes, a device silent this long aborts
  the goal;
* ``device_done_timeout`` (0.25 s): how long after ``end + goal_time_tolerance`` the device's "done"
  report may take to arrive (link latency) before the goal aborts with GOAL_TOLERANCE_VIOLATED;
* ``device_cancel_timeout`` (2.0 s): a cancel the device has not confirmed (at rest) by then
  aborts the goal, saying the device may still be moving.

Topics, service, action (controller namespace): ``command``, ``state``, ``query_state``,
``follow_joint_trajectory``, as the joint_trajectory_controller.  ``state`` and the action feedback:
desired = the plan (the trajectory as the controller merged it, sampled at the current time), actual
= the device's latest feedback moved on by its velocities for its age (at most
:attr:`JointTrajectoryController.MAX_EXTRAPOLATION`), error = desired - actual.

Semantics (differences from the joint_trajectory_controller in **bold**)
------------------------------------------------------------------------
* validation: the JTC's, same codes and strings; then the device's own check: a device that refuses
  at once gets the goal REJECTED (INVALID_GOAL, "device '<name>' refused the trajectory: <reason>");
  **a device that refuses later aborts the goal with INVALID_GOAL and that text**;
* the goal's points (past ones dropped, joints in the controller's order, absent joints of a partial
  goal filled from the plan, continuous joints shifted by the same whole turns as the plan) go to the
  device with the start time (``header.stamp``, or "now" for 0) and the goal they replace;
* path and goal tolerances: checked every cycle against the device's feedback, for **every** joint;
  a violation aborts the goal (PATH_/GOAL_TOLERANCE_VIOLATED naming the joint) **and cancels the
  trajectory on the device**;
* success needs the plan's end with every joint within its goal tolerance **and the device's
  "succeeded" report**; a device still executing after ``end + goal_time_tolerance`` (plus
  ``device_done_timeout``) aborts the goal with GOAL_TOLERANCE_VIOLATED;
* cancel: the device is asked to decelerate; **the goal is PREEMPTED once the device confirms**;
* a new goal (or ``command``) replaces the running one: the previous goal is PREEMPTED and the
  device splices;
* a device fault aborts the goal with the device's code and "device '<name>' aborted the trajectory
  on joint '<joint>': <cause>";
* **stopping the controller mid-goal cancels the trajectory on the device and aborts the goal**;
* **no acknowledgement within device_ack_timeout, or no feedback within device_feedback_timeout, aborts
  the goal** (and cancels it on the device).

Threading: actionlib/topic callbacks validate, send to the device and hand a record to the control
loop through a deque; the loop (``update()``) is the only reader of the device's reports and
feedback (a deque and a single reference, no lock) and the only one that decides a goal's outcome;
outcomes go to the action monitor through another deque.  Nothing in ``update()`` blocks; the only
device call it makes is ``cancel()``, which the device contract forbids to block.
"""
from __future__ import annotations

import math
from collections import deque
from typing import Any, Deque, List, Optional, Sequence, Tuple

import numpy as np

from rospy_control.controller_interface import Controller
from rospy_control.controllers._jtc_common import (
    joints_fault, number_param, trajectory_joint_facts, trajectory_joint_names,
)
from rospy_control.controllers.joint_trajectory_controller import (
    DEFAULT_ACTION_MONITOR_RATE, DEFAULT_STATE_PUBLISH_RATE, TrajectoryRosApi,
)
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface.joint_trajectory_interface import (
    ExecutionReport, ExecutionState, JointTrajectoryInterface, TrajectoryDevice, TrajectoryPointData,
    TrajectoryRequest,
)
from rospy_control.log import Throttle, get_logger
from rospy_control.trajectory import (
    ABORTED, GOAL_TOLERANCE_VIOLATED, INVALID_GOAL, PATH_TOLERANCE_VIOLATED, PREEMPTED, SUCCEEDED, GoalEvent,
    PreparedTrajectory, TrajectoryExecutor, map_joints, to_sec,
)

logger = get_logger(__name__)

__all__ = ["JointTrajectoryController", "PassThroughRosApi"]

_TWO_PI = 2.0 * math.pi


class _DeviceGoal:
    """One trajectory sent (or being sent) to the device; the executor's goal key for it.

    Written by the callback thread until it is handed to the loop, then by the loop only, except
    the single flags ``cancel_requested`` / ``superseded`` (one assignment each).
    """

    __slots__ = ("goal_id", "key", "sent", "end_time", "goal_time", "replaces", "acked", "device_terminal",
                 "device_succeeded", "plan_done", "done_deadline", "cancel_requested", "awaiting_cancel",
                 "cancel_deadline", "finished", "superseded")

    def __init__(self, goal_id: int, key: Any) -> None:
        self.goal_id = goal_id
        self.key = key                      # action goal handle, None for a topic command
        self.sent = 0.0                     # ROS time it was sent
        self.end_time = 0.0                 # ROS time the plan ends
        self.goal_time = 0.0                # goal_time_tolerance (s)
        self.replaces: Optional["_DeviceGoal"] = None
        self.acked = False
        self.device_terminal = False        # the device reported an end state
        self.device_succeeded = False
        self.plan_done = False              # the plan ended with every joint in its goal tolerance
        self.done_deadline = math.inf
        self.cancel_requested = False
        self.awaiting_cancel = False
        self.cancel_deadline = math.inf
        self.finished = False               # the client has its result (topic command: no longer followed)
        self.superseded = False             # a newer trajectory was sent to replace it

    def __repr__(self) -> str:
        return f"_DeviceGoal({self.goal_id})"


class PassThroughRosApi(TrajectoryRosApi):
    """The joint_trajectory_controller's ROS API with the device in the loop (see the module)."""

    _logger = logger

    def __init__(self, controller: "JointTrajectoryController", executor: TrajectoryExecutor, nh,
                 state_publish_rate: float, action_monitor_rate: float, synchronous: Optional[bool]) -> None:
        self.controller = controller
        super().__init__(executor, nh, state_publish_rate, action_monitor_rate, synchronous,
                         fault_check=controller.hardware_fault)

    def _monitor_pending(self) -> bool:
        return isinstance(self.executor.active_goal_key, _DeviceGoal) or self.controller.has_outcomes()

    def _poll_goals(self) -> Tuple[Sequence[Any], Any, Any]:
        """Goal outcomes decided by the loop; the active goal's handle and feedback (monitor thread,
        ``_goal_lock`` held: see TrajectoryRosApi.monitor for the lock order)."""
        events = self.controller.drain_outcomes()
        rec = self.executor.active_goal_key
        gh = rec.key if isinstance(rec, _DeviceGoal) else None
        fb = self.executor.feedback() if gh is not None else None
        return events, gh, fb

    def _on_command(self, msg: Any) -> None:
        if self._command_refused():
            return
        code, text = self.controller.submit(msg, None, None)
        if code != 0 and self._throttle.ready("command_refused"):
            logger.error("%s: trajectory command not executed: %s", self.nh.namespace, text)

    def _submit_goal(self, goal: Any, gh: Any) -> Tuple[int, str]:
        return self.controller.submit(getattr(goal, "trajectory", None), gh, goal)

    def _goal_accepted(self) -> None:
        """Nothing to relay: the loop decides every outcome, the monitor relays it."""

    def _on_cancel(self, gh: Any) -> None:
        with self._goal_lock:
            self.controller.cancel_goal(gh)


class JointTrajectoryController(Controller):
    """``pass_through_controllers/JointTrajectoryController`` (see the module docstring)."""

    INTERFACE = JointTrajectoryInterface
    #: None: follow the node handle (synchronous for in-memory handles); True/False force the mode.
    SYNCHRONOUS: Optional[bool] = None

    DEFAULT_ACK_TIMEOUT = 1.0
    DEFAULT_FEEDBACK_TIMEOUT = 1.0
    DEFAULT_DONE_TIMEOUT = 0.25
    DEFAULT_CANCEL_TIMEOUT = 2.0
    #: Longest feedback age (s) bridged by extrapolating with the feedback's velocities.
    MAX_EXTRAPOLATION = 0.1

    # ------------------------------------------------------------------------------ init
    def init(self, hw, root_nh, controller_nh) -> bool:
        names = trajectory_joint_names(controller_nh)
        self.joint_names: List[str] = names
        types, limits = trajectory_joint_facts(root_nh, names)
        self._continuous = np.array([types[n] == "continuous" for n in names], dtype=bool)
        self.handles = [hw.get_handle(name) for name in names]  # claims the joints
        devices = {id(h.get_device()): h.get_device() for h in self.handles}
        if len(devices) != 1:
            by_device = {d.name: [h.get_name() for h in self.handles if h.get_device() is d]
                         for d in devices.values()}
            raise ConfigError(f"The joints of a pass-through trajectory controller must be executed by one "
                              f"device; {names} are split over {by_device}",
                              controller_nh.resolve_name("joints"))
        self.device: TrajectoryDevice = self.handles[0].get_device()
        self._device_index = [self.device.joint_names.index(n) for n in names]
        self.executor = TrajectoryExecutor.from_params(names, controller_nh, self._continuous.tolist(),
                                                       source=controller_nh.namespace, limits=limits)
        self._allow_partial = bool(controller_nh.get_param("allow_partial_joints_goal", False))
        self.ack_timeout = self._positive(controller_nh, "device_ack_timeout", self.DEFAULT_ACK_TIMEOUT)
        self.feedback_timeout = self._positive(controller_nh, "device_feedback_timeout",
                                               self.DEFAULT_FEEDBACK_TIMEOUT)
        self.done_timeout = self._positive(controller_nh, "device_done_timeout", self.DEFAULT_DONE_TIMEOUT)
        self.cancel_timeout = self._positive(controller_nh, "device_cancel_timeout",
                                             self.DEFAULT_CANCEL_TIMEOUT)
        state_rate = number_param(controller_nh, "state_publish_rate", DEFAULT_STATE_PUBLISH_RATE)
        monitor_rate = self._positive(controller_nh, "action_monitor_rate", DEFAULT_ACTION_MONITOR_RATE)
        self._submitted: Deque[_DeviceGoal] = deque()   # callback threads -> loop
        self._outcomes: Deque[GoalEvent] = deque()      # loop -> action monitor
        self._goals: List[_DeviceGoal] = []             # loop-owned: goals still followed
        self._last_sent: Optional[_DeviceGoal] = None   # callback threads (under the executor's accept lock)
        self._feedback_obj: Any = None
        self._feedback_time = 0.0
        self._time = 0.0
        self._throttle = Throttle(5.0)
        self.ros = PassThroughRosApi(self, self.executor, controller_nh, state_rate, monitor_rate,
                                     self.SYNCHRONOUS)
        logger.debug("Initialized pass-through trajectory controller for %s on device '%s'", names,
                     self.device.name)
        return True

    @staticmethod
    def _positive(nh, key: str, default: float) -> float:
        value = number_param(nh, key, default)
        if value <= 0.0:
            raise ConfigError(f"Parameter '{key}' must be > 0, got {value}", nh.resolve_name(key))
        return value

    def hardware_fault(self) -> Optional[str]:
        """Why one of the joints cannot move (its state handle reports a fault), else None."""
        return joints_fault(self.joint_names, self.handles)

    # ------------------------------------------------------------------------------ callbacks side
    def submit(self, trajectory: Any, gh: Any, goal: Any) -> Tuple[int, str]:
        """Validate ``trajectory`` (a goal's when ``gh`` is given, else a ``command``), send it to the
        device and hand it to the loop.  :returns: ``(code, error_string)``, 0 = accepted."""
        rec = _DeviceGoal(self.device.new_goal_id(), gh)
        path: Any = ()
        tolerance: Any = ()
        goal_time: Any = 0.0
        if gh is not None:
            path = getattr(goal, "path_tolerance", ())
            tolerance = getattr(goal, "goal_tolerance", ())
            goal_time = getattr(goal, "goal_time_tolerance", 0.0)
            gt = self.executor.default_tolerances.with_goal(self.joint_names, (), (), goal_time).goal_time
            rec.goal_time = float(np.max(gt))
        return self.executor.accept(trajectory, rec if gh is not None else None, path, tolerance, goal_time,
                                    veto=lambda prepared: self._send(prepared, trajectory, rec))

    def _send(self, prepared: PreparedTrajectory, msg: Any, rec: _DeviceGoal) -> Optional[Tuple[int, str]]:
        """Executor veto: build the request, hand the record to the loop, send (see :meth:`submit`)."""
        previous = self._last_sent
        replaces = previous if previous is not None and not previous.device_terminal else None
        request = TrajectoryRequest(rec.goal_id, list(self.joint_names), self._points(prepared, msg),
                                    prepared.ros_time(prepared.start_uptime) if prepared.first_point >= 0
                                    else prepared.now, None if replaces is None else replaces.goal_id)
        rec.sent = prepared.now
        rec.end_time = prepared.ros_time(prepared.trajectory.end_time)
        rec.replaces = replaces
        if replaces is not None:
            replaces.superseded = True
        self._submitted.append(rec)  # before sending: the device may answer from inside send_trajectory
        try:
            reason = self.device.send_trajectory(request)
        except Exception as err:  # noqa: BLE001 - a device error is a refusal the client must hear about
            logger.exception("Sending the trajectory to device '%s' failed", self.device.name)
            reason = f"sending failed: {err}"
        if reason:
            rec.finished = True
            rec.device_terminal = True
            if replaces is not None:
                replaces.superseded = False
            return INVALID_GOAL, f"device '{self.device.name}' refused the trajectory: {reason}"
        self._last_sent = rec
        return None

    def _points(self, prepared: PreparedTrajectory, msg: Any) -> List[TrajectoryPointData]:
        """The executed points in controller order (see the module docstring)."""
        if prepared.first_point < 0:
            return []
        names = self.joint_names
        n = len(names)
        mapping = map_joints(list(getattr(msg, "joint_names", ()) or ()), names, self._allow_partial)
        present = np.zeros(n, dtype=bool)
        present[mapping] = True
        points = list(msg.points)[prepared.first_point:]
        traj = prepared.trajectory
        offsets = np.zeros(n)
        out: List[TrajectoryPointData] = []
        for k, point in enumerate(points):
            tfs = to_sec(getattr(point, "time_from_start", 0.0))
            sp, sv, sa = traj.sample(prepared.start_uptime + tfs)
            pos = sp.copy()
            pos[mapping] = np.asarray(point.positions, dtype=float)[:len(mapping)]
            if k == 0 and self._continuous.any():  # the plan's whole-turn shift of continuous joints
                turns = np.round((sp - pos) / _TWO_PI) * _TWO_PI
                offsets = np.where(self._continuous & present, turns, 0.0)
            pos = pos + offsets
            vel = acc = None
            if point.velocities:
                vel = sv.copy()
                vel[mapping] = np.asarray(point.velocities, dtype=float)[:len(mapping)]
                if point.accelerations:
                    acc = sa.copy()
                    acc[mapping] = np.asarray(point.accelerations, dtype=float)[:len(mapping)]
            out.append(TrajectoryPointData(pos.tolist(), None if vel is None else vel.tolist(),
                                           None if acc is None else acc.tolist(), tfs))
        return out

    def cancel_goal(self, gh: Any) -> None:
        """Cancel request for goal ``gh`` (ignored unless it is the active goal)."""
        rec = self.executor.active_goal_key
        if not isinstance(rec, _DeviceGoal) or rec.key is None or not (rec.key is gh or rec.key == gh):
            return
        rec.cancel_requested = True
        try:
            self.device.cancel(rec.goal_id)
        except Exception:  # noqa: BLE001 - the loop's cancel timeout reports it to the client
            logger.exception("Device '%s' failed to cancel goal %d", self.device.name, rec.goal_id)
        self.executor.cancel(rec)

    def has_outcomes(self) -> bool:
        """Whether goal outcomes wait for :meth:`drain_outcomes` (thread-safe, cheap)."""
        return bool(self._outcomes)

    def drain_outcomes(self) -> List[GoalEvent]:
        """Goal outcomes decided by the loop, oldest first (action monitor)."""
        out: List[GoalEvent] = []
        while True:
            try:
                out.append(self._outcomes.popleft())
            except IndexError:
                return out

    # ------------------------------------------------------------------------------ life cycle (loop)
    def _actual(self) -> Tuple[List[float], List[float]]:
        """Actual state now: the latest feedback, moved on by its velocities for its age (at most
        :attr:`MAX_EXTRAPOLATION`), so a sample that is a few ms old does not read as a path error."""
        fb = self.device.latest_feedback()
        if fb is None:
            return [h.get_position() for h in self.handles], [h.get_velocity() for h in self.handles]
        vel = [fb.velocities[i] for i in self._device_index]
        age = min(max(self._time - fb.stamp, 0.0), self.MAX_EXTRAPOLATION)
        return [fb.positions[i] + v * age for i, v in zip(self._device_index, vel)], vel

    def starting(self, time: float) -> None:
        self._time = float(time)
        pos, vel = self._actual()
        self.executor.start(time, pos, vel)
        self.executor.poll_events()  # a restart's leftovers concern goals already answered
        self._feedback_obj = self.device.latest_feedback()
        self._feedback_time = float(time)
        self._time = float(time)
        self.ros.on_start(time)

    def update(self, time: float, period: float) -> None:
        # The device executes on its own clock, which keeps pace with ROS time through a host stall;
        # the control loop bounds the period it passes after a stall (right for hardware the loop
        # itself commands), which would leave the plan behind the device and read as a path error.
        # The plan advances by the ROS time elapsed instead.
        elapsed = time - self._time
        if elapsed > period:
            period = elapsed
        self._time = time
        goals = self._goals
        submitted = self._submitted
        while submitted:
            goals.append(submitted.popleft())
        for report in self.device.poll_reports():
            self._on_report(report, time)
        fb = self.device.latest_feedback()
        if fb is not self._feedback_obj:
            self._feedback_obj = fb
            self._feedback_time = time
        pos, vel = self._actual()
        self.executor.update(time, period, pos, vel)
        for event in self.executor.poll_events():
            if isinstance(event.goal_key, _DeviceGoal):
                self._on_plan_event(event.goal_key, event, time)
        if goals:
            self._check_timeouts(time)
            self._goals = [g for g in goals if not (g.finished and (g.device_terminal or g.superseded))]
        self.ros.on_update(time)

    def stopping(self, time: float) -> None:
        for rec in self._goals + list(self._submitted):
            if not rec.finished:
                self._abort(rec, PATH_TOLERANCE_VIOLATED,
                            f"controller stopped while the trajectory was executing; device "
                            f"'{self.device.name}' was asked to stop", time)
        self._goals = []
        self._submitted.clear()
        self.executor.stopping(time)
        self.executor.poll_events()
        self.ros.on_stop(time)

    # ------------------------------------------------------------------------------ outcomes (loop)
    def _emit(self, rec: _DeviceGoal, status: str, code: int, text: str, time: float) -> None:
        if rec.finished:
            return
        rec.finished = True
        if rec.key is not None:
            self._outcomes.append(GoalEvent(rec.key, status, int(code), text, float(time)))
        elif status == ABORTED:
            logger.error("Trajectory command %d failed: %s", rec.goal_id, text)

    def _abort(self, rec: _DeviceGoal, code: int, text: str, time: float, cancel_device: bool = True) -> None:
        """End ``rec`` with ABORTED: the plan holds, the device is asked to stop (unless it already ended)."""
        if rec.finished:
            return
        self._emit(rec, ABORTED, code, text, time)
        if rec.key is not None:
            self.executor.abort(text, code, hold=True, goal_key=rec)
        elif self._last_sent is rec:
            self.executor.hold(text)
        if cancel_device and not rec.device_terminal:
            self._cancel_on_device(rec)
        if rec.replaces is not None and not rec.acked and not rec.replaces.device_terminal:
            self._cancel_on_device(rec.replaces)  # the device may still run what this was to replace

    def _cancel_on_device(self, rec: _DeviceGoal) -> None:
        try:
            self.device.cancel(rec.goal_id)
        except Exception as err:  # noqa: BLE001 - never let a device error kill the control loop
            if self._throttle.ready("cancel"):
                logger.error("Device '%s' failed to cancel goal %d: %s", self.device.name, rec.goal_id, err)

    def _find(self, goal_id: int) -> Optional[_DeviceGoal]:
        for rec in self._goals:
            if rec.goal_id == goal_id:
                return rec
        return None

    def _on_report(self, report: ExecutionReport, time: float) -> None:
        rec = self._find(report.goal_id)
        if rec is None:
            logger.debug("Report %s for goal %d, which is no longer followed", report.state.value,
                         report.goal_id)
            return
        dev = self.device.name
        state = report.state
        if state is ExecutionState.ACCEPTED:
            rec.acked = True
            return
        rec.device_terminal = True
        rec.acked = True
        if state is ExecutionState.REFUSED:
            self._abort(rec, INVALID_GOAL, f"device '{dev}' refused the trajectory: {report.message}", time,
                        cancel_device=False)
            if rec.replaces is not None and not rec.replaces.device_terminal:
                self._cancel_on_device(rec.replaces)
        elif state is ExecutionState.ABORTED:
            where = f" on joint '{report.joint}'" if report.joint else ""
            self._abort(rec, report.code or PATH_TOLERANCE_VIOLATED,
                        f"device '{dev}' aborted the trajectory{where}: {report.message}", time,
                        cancel_device=False)
        elif state is ExecutionState.SUCCEEDED:
            rec.device_succeeded = True
            if rec.awaiting_cancel:
                self._emit(rec, PREEMPTED, 0, "canceled; the device finished the trajectory", time)
            elif rec.plan_done:
                self._emit(rec, SUCCEEDED, 0, "", time)
        elif state is ExecutionState.PREEMPTED:
            if rec.awaiting_cancel:
                self._emit(rec, PREEMPTED, 0, f"canceled; device '{dev}' stopped", time)
            elif not rec.superseded and not rec.cancel_requested:
                self._abort(rec, PATH_TOLERANCE_VIOLATED,
                            f"device '{dev}' stopped the trajectory without being asked to", time,
                            cancel_device=False)

    def _on_plan_event(self, rec: _DeviceGoal, event: GoalEvent, time: float) -> None:
        if rec.finished:
            return
        if event.status == SUCCEEDED:
            if rec.device_succeeded:
                self._emit(rec, SUCCEEDED, 0, "", time)
            else:
                rec.plan_done = True
                rec.done_deadline = max(time, rec.end_time + rec.goal_time) + self.done_timeout
        elif event.status == ABORTED:
            text = event.error_string
            if not rec.device_terminal:
                text += f"; device '{self.device.name}' was asked to stop"
            self._emit(rec, ABORTED, event.error_code, text, time)
            if not rec.device_terminal:
                self._cancel_on_device(rec)
        elif event.status == PREEMPTED:
            if rec.cancel_requested:
                if rec.device_terminal:
                    self._emit(rec, PREEMPTED, 0, f"canceled; device '{self.device.name}' stopped", time)
                else:
                    rec.awaiting_cancel = True
                    rec.cancel_deadline = time + self.cancel_timeout
            else:  # replaced by a newer goal or command, which the device splices
                self._emit(rec, PREEMPTED, 0, event.error_string, time)

    def _check_timeouts(self, time: float) -> None:
        dev = self.device.name
        silent = time - self._feedback_time
        for rec in self._goals:
            if rec.finished:
                continue
            if not rec.acked and time - rec.sent > self.ack_timeout:
                self._abort(rec, PATH_TOLERANCE_VIOLATED,
                            f"device '{dev}' did not acknowledge the trajectory (goal {rec.goal_id}) within "
                            f"{self.ack_timeout:.3f} s (device_ack_timeout)", time)
            elif rec.awaiting_cancel and time > rec.cancel_deadline:
                self._emit(rec, ABORTED, PATH_TOLERANCE_VIOLATED,
                           f"device '{dev}' did not confirm the cancel within {self.cancel_timeout:.3f} s "
                           f"(device_cancel_timeout); it may still be moving", time)
            elif rec.plan_done and time > rec.done_deadline:
                self._abort(rec, GOAL_TOLERANCE_VIOLATED,
                            f"goal_time_tolerance exceeded: device '{dev}' still executing the trajectory "
                            f"{time - rec.end_time:.3f} s after its end (goal_time_tolerance "
                            f"{rec.goal_time:.3f} s, "
                            f"device_done_timeout {self.done_timeout:.3f} s)", time)
            elif not rec.device_terminal and silent > self.feedback_timeout:
                self._abort(rec, PATH_TOLERANCE_VIOLATED,
                            f"no feedback from device '{dev}' for {silent:.3f} s (device_feedback_timeout "
                            f"{self.feedback_timeout:.3f} s)", time)
