"""``control_msgs/FollowJointTrajectoryResult`` error codes (same values; no message import)."""
from __future__ import annotations

SUCCESSFUL = 0
INVALID_GOAL = -1
INVALID_JOINTS = -2
#: Defined for completeness; like the ROS 1 JTC, the engine answers all-in-the-past trajectories
#: with INVALID_GOAL and never uses this code.
OLD_HEADER_TIMESTAMP = -3
PATH_TOLERANCE_VIOLATED = -4
GOAL_TOLERANCE_VIOLATED = -5

CODE_NAMES = {
    SUCCESSFUL: "SUCCESSFUL",
    INVALID_GOAL: "INVALID_GOAL",
    INVALID_JOINTS: "INVALID_JOINTS",
    OLD_HEADER_TIMESTAMP: "OLD_HEADER_TIMESTAMP",
    PATH_TOLERANCE_VIOLATED: "PATH_TOLERANCE_VIOLATED",
    GOAL_TOLERANCE_VIOLATED: "GOAL_TOLERANCE_VIOLATED",
}


def code_name(code: int) -> str:
    """Symbolic name of a result code (``"UNKNOWN(<code>)"`` for other values)."""
    return CODE_NAMES.get(code, f"UNKNOWN({code})")
