"""The values :class:`~rospy_control.trajectory.executor.TrajectoryExecutor` hands out and keeps.

* :class:`GoalEvent` (status :data:`SUCCEEDED`, :data:`ABORTED` or :data:`PREEMPTED`),
  :class:`FeedbackSnapshot` and :class:`QueryStateResult` -- what the ROS wrapper reads;
* :class:`Plan` -- the immutable trajectory + tolerances + owning :class:`Goal` that the executor
  swaps as a whole (see "Threading and lock order" in :mod:`.executor`), with the tolerance
  thresholds precomputed for the control loop.
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, Optional

import numpy as np

from rospy_control.trajectory.limits import TrajectoryLimits
from rospy_control.trajectory.tolerances import Tolerances, enforced
from rospy_control.trajectory.trajectory import Trajectory

__all__ = ["SUCCEEDED", "ABORTED", "PREEMPTED", "GoalEvent", "FeedbackSnapshot", "QueryStateResult", "Goal",
           "Plan"]

#: Goal event statuses.
SUCCEEDED = "succeeded"
ABORTED = "aborted"
PREEMPTED = "preempted"


class GoalEvent(NamedTuple):
    """A goal finished: ``status`` is :data:`SUCCEEDED`, :data:`ABORTED` or :data:`PREEMPTED`.

    ``error_code`` is a FollowJointTrajectoryResult code (0 for succeeded and preempted),
    ``time`` the ROS time (s) at which it happened.
    """

    goal_key: Any
    status: str
    error_code: int
    error_string: str
    time: float


class FeedbackSnapshot(NamedTuple):
    """Desired/actual/error state of the last update (for the ``state`` topic and action feedback).

    Accelerations are desired only (actual/error accelerations are empty upstream).  Position
    errors are shortest angular distances ``desired - actual``; velocity errors ``desired - actual``.
    """

    joint_names: List[str]
    time: float
    uptime: float
    desired_positions: np.ndarray
    desired_velocities: np.ndarray
    desired_accelerations: np.ndarray
    actual_positions: np.ndarray
    actual_velocities: np.ndarray
    error_positions: np.ndarray
    error_velocities: np.ndarray


class QueryStateResult(NamedTuple):
    """Desired state sampled by :meth:`TrajectoryExecutor.query_state`."""

    joint_names: List[str]
    positions: np.ndarray
    velocities: np.ndarray
    accelerations: np.ndarray


class Goal:
    """The executor's record of one action goal: still active, and which joints reached it."""

    __slots__ = ("key", "active", "done")

    def __init__(self, key: Any, n: int) -> None:
        self.key = key
        self.active = True
        self.done = np.zeros(n, dtype=bool)


class Plan:
    """Trajectory + tolerances + owning goal, with the tolerance thresholds precomputed.

    With ``limits``, :attr:`inside` says per grid interval of the trajectory whether every sample
    of it is certainly within the position limits (then the control loop skips the per-cycle limit
    check there); without, None (the loop checks every cycle).
    """

    __slots__ = ("trajectory", "tolerances", "goal", "path_pos", "path_vel", "check_path", "check_path_vel",
                 "goal_pos", "goal_vel", "goal_deadlines", "deadline", "loop_cache", "inside", "path_limits")

    def __init__(self, trajectory: Trajectory, tolerances: Tolerances, goal: Optional[Goal],
                 timeout_margin: Optional[float], limits: Optional[TrajectoryLimits] = None) -> None:
        self.trajectory = trajectory
        self.tolerances = tolerances
        self.goal = goal
        self.path_pos = enforced(tolerances.path.position)
        self.path_vel = enforced(tolerances.path.velocity)
        self.check_path_vel = bool(np.isfinite(self.path_vel).any())
        self.check_path = self.check_path_vel or bool(np.isfinite(self.path_pos).any())
        self.goal_pos = enforced(tolerances.goal.position)
        self.goal_vel = enforced(tolerances.goal.velocity)
        self.goal_deadlines = trajectory.end_times + tolerances.goal_time
        margin = np.inf if timeout_margin is None else float(timeout_margin)
        self.deadline = float(np.max(self.goal_deadlines)) + margin
        #: the control loop's facts about the grid interval it samples (written and read by the
        #: loop thread only; see ``TrajectoryExecutor._loop_facts``)
        self.loop_cache: Optional[tuple] = None
        #: path position then velocity thresholds as Python floats (+inf: not enforced)
        self.path_limits: List[float] = self.path_pos.tolist() + self.path_vel.tolist()
        self.inside: Optional[List[bool]] = None
        if limits is not None:
            low, high = trajectory.position_bounds
            self.inside = np.all((low >= limits.lower) & (high <= limits.upper), axis=1).tolist()
