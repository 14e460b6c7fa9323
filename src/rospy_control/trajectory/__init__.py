"""rospy_control.trajectory: the ROS-free trajectory engine (numpy).

Shared by the JointTrajectoryController and the standalone FollowJointTrajectory server:

* :mod:`.segment` -- :class:`SplineSegment` (linear/cubic/quintic by the fields both ends carry),
  :class:`PointState`, vectorised coefficient helpers;
* :mod:`.trajectory` -- :class:`Trajectory` (per-joint segments compiled onto a common time grid
  for one-mat-vec sampling), hold and stop-ramp trajectories;
* :mod:`.message` -- :func:`init_joint_trajectory` (JointTrajectory-shaped input, validation,
  dropping past points, replacement merge with a bridge segment, partial goals, wraparound);
* :mod:`.tolerances` -- parameter parsing, goal overrides, checks;
* :mod:`.limits` -- :class:`TrajectoryLimits`: what a point may ask of a joint (position limits,
  multiples of the velocity/acceleration limits, absolute bounds) and which states a hold may
  start from;
* :mod:`.codes` -- FollowJointTrajectoryResult codes;
* :mod:`.executor` -- :class:`TrajectoryExecutor`, the controller's core (time base, accept,
  cancel, hold, update, tolerance checking, goal events, feedback, query_state).

No rospy or message imports: messages are duck-typed.
"""
from __future__ import annotations

from rospy_control.trajectory.codes import (
    GOAL_TOLERANCE_VIOLATED, INVALID_GOAL, INVALID_JOINTS, OLD_HEADER_TIMESTAMP, PATH_TOLERANCE_VIOLATED,
    SUCCESSFUL, code_name,
)
from rospy_control.trajectory.executor import DEFAULT_GOAL_TIMEOUT_MARGIN, TrajectoryExecutor
from rospy_control.trajectory.plan import (
    ABORTED, PREEMPTED, SUCCEEDED, FeedbackSnapshot, GoalEvent, QueryStateResult,
)
from rospy_control.trajectory.prepared import PreparedTrajectory
from rospy_control.trajectory.limits import TrajectoryLimits
from rospy_control.trajectory.message import (
    InitResult, TrajectoryRejected, init_joint_trajectory, map_joints, to_sec, wraparound_offset,
)
from rospy_control.trajectory.segment import (
    CUBIC, LINEAR, QUINTIC, PointState, SplineSegment, TrajectoryError, spline_coefficients,
)
from rospy_control.trajectory.tolerances import (
    StateTolerances, Tolerances, check_state_tolerance, shortest_angular_distance, tolerances_from_params,
)
from rospy_control.trajectory.trajectory import JointPieces, Trajectory

__all__ = [
    "ABORTED", "CUBIC", "DEFAULT_GOAL_TIMEOUT_MARGIN", "GOAL_TOLERANCE_VIOLATED", "INVALID_GOAL",
    "INVALID_JOINTS", "LINEAR", "OLD_HEADER_TIMESTAMP", "PATH_TOLERANCE_VIOLATED", "PREEMPTED", "QUINTIC",
    "SUCCEEDED", "SUCCESSFUL", "FeedbackSnapshot", "GoalEvent", "InitResult", "JointPieces", "PointState",
    "PreparedTrajectory", "QueryStateResult", "SplineSegment", "StateTolerances", "Tolerances", "Trajectory",
    "TrajectoryError",
    "TrajectoryExecutor", "TrajectoryLimits", "TrajectoryRejected", "check_state_tolerance", "code_name",
    "init_joint_trajectory", "map_joints", "shortest_angular_distance", "spline_coefficients", "to_sec",
    "tolerances_from_params", "wraparound_offset",
]
