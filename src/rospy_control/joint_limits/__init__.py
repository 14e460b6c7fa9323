"""rospy_control.joint_limits: ros_control's joint_limits_interface in Python.

* :class:`JointLimits`, :class:`SoftJointLimits`;
* from URDF (lxml): :func:`urdf.get_joint_limits`, :func:`urdf.get_soft_joint_limits`,
  :func:`urdf.find_joint`;
* from rosparam-shaped dicts (``joint_limits/<joint>/...``, schema in :mod:`.params`):
  :func:`params.get_joint_limits`, :func:`params.get_soft_joint_limits`;
* enforcement handles (wrapping a JointHandle, ``enforce_limits(period)``, ``reset()`` on the
  position ones) and interfaces (``enforce_limits(period)`` over all handles): Position/Effort/
  Velocity × Saturation/SoftLimits;
* :class:`JointLimitsError` (re-exported).
"""
from __future__ import annotations

from rospy_control.exceptions import JointLimitsError
from rospy_control.joint_limits import params, urdf
from rospy_control.joint_limits.handles import (
    EffortJointSaturationHandle,
    EffortJointSaturationInterface,
    EffortJointSoftLimitsHandle,
    EffortJointSoftLimitsInterface,
    PositionJointSaturationHandle,
    PositionJointSaturationInterface,
    PositionJointSoftLimitsHandle,
    PositionJointSoftLimitsInterface,
    VelocityJointSaturationHandle,
    VelocityJointSaturationInterface,
    VelocityJointSoftLimitsHandle,
    VelocityJointSoftLimitsInterface,
)
from rospy_control.joint_limits.limits import JointLimits, SoftJointLimits

__all__ = [
    "EffortJointSaturationHandle", "EffortJointSaturationInterface", "EffortJointSoftLimitsHandle",
    "EffortJointSoftLimitsInterface", "JointLimits", "JointLimitsError", "PositionJointSaturationHandle",
    "PositionJointSaturationInterface", "PositionJointSoftLimitsHandle", "PositionJointSoftLimitsInterface",
    "SoftJointLimits", "VelocityJointSaturationHandle", "VelocityJointSaturationInterface",
    "VelocityJointSoftLimitsHandle", "VelocityJointSoftLimitsInterface", "params", "urdf",
]
