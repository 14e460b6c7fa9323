"""The URDF facts the PID controllers need: a joint's type and limits from ``robot_description``."""
from __future__ import annotations

from typing import Optional

from rospy_control.exceptions import ConfigError
from rospy_control.urdf import UrdfJoint, load_robot_description

__all__ = ["UrdfJoint", "load_urdf_joint", "clamp_to_limits"]


def load_urdf_joint(nh, joint_name: str, param: str = "robot_description") -> UrdfJoint:
    """Find ``param`` from ``nh`` upwards (``searchParam``), parse it, return ``joint_name``.

    :raises ConfigError: no description, unparsable XML, or no such joint.
    """
    _, joints, where = load_robot_description(nh, param)
    joint = joints.get(joint_name)
    if joint is None:
        raise ConfigError(f"Could not find joint '{joint_name}' in urdf", where)
    return joint


def clamp_to_limits(joint: Optional[UrdfJoint], value: float) -> float:
    """Clamp a position command to the joint's limits (revolute and prismatic joints only)."""
    if joint is None or joint.type not in ("revolute", "prismatic") or not joint.has_limits:
        return value
    return max(joint.lower, min(joint.upper, value))
