"""Joint limits from URDF (``joint_limits_interface/joint_limits_urdf.h``).

* :func:`get_joint_limits`: False if the joint has no ``<limit>``.  Revolute and prismatic joints get
  position limits (``lower``/``upper``); continuous joints get ``angle_wraparound``; velocity and
  effort limits are always taken from ``<limit>``; no acceleration limits.
* :func:`get_soft_joint_limits`: from ``<safety_controller soft_lower_limit soft_upper_limit
  k_position k_velocity>``; False if absent.

``joint`` may be an lxml ``<joint>`` element, or use :func:`find_joint` on URDF text first.
"""
from __future__ import annotations

from typing import Optional, Union

from rospy_control.exceptions import ConfigError, JointLimitsError
from rospy_control.joint_limits.limits import JointLimits, SoftJointLimits
from rospy_control.urdf import parse_urdf

__all__ = ["find_joint", "get_joint_limits", "get_soft_joint_limits"]


def find_joint(urdf_xml: Union[str, bytes], joint_name: str):
    """The ``<joint name=joint_name>`` element of a URDF, or None.

    :raises JointLimitsError: the text is not well-formed XML.
    """
    try:
        root = parse_urdf(urdf_xml, "URDF")
    except ConfigError as err:
        raise JointLimitsError(str(err)) from err
    for joint in root.findall("joint"):
        if joint.get("name") == joint_name:
            return joint
    return None


def _float(element, attribute: str, default: Optional[float] = 0.0) -> float:
    text = element.get(attribute)
    if text is None:
        if default is None:
            raise JointLimitsError(
                f"line {element.sourceline}: <{element.tag}> of joint "
                f"'{element.getparent().get('name')}' has no '{attribute}' attribute.")
        return default
    try:
        return float(text)
    except ValueError:
        raise JointLimitsError(
            f"line {element.sourceline}: <{element.tag}> of joint '{element.getparent().get('name')}' has "
            f"a non-numeric '{attribute}' attribute '{text}'.") from None


def _child(joint, tag: str):
    """The URDF joint element's ``<tag>`` child (None: no joint, or no such child)."""
    return None if joint is None else joint.find(tag)


def get_joint_limits(joint, limits: JointLimits) -> bool:
    """Fill ``limits`` from the joint's ``<limit>``; False (``limits`` untouched) without one."""
    limit = _child(joint, "limit")
    if limit is None:
        return False
    joint_type = joint.get("type", "")
    limits.has_position_limits = joint_type in ("revolute", "prismatic")
    if limits.has_position_limits:
        limits.min_position = _float(limit, "lower")
        limits.max_position = _float(limit, "upper")
    elif joint_type == "continuous":
        limits.angle_wraparound = True
    limits.has_velocity_limits = True
    # urdfdom requires both attributes; a silent 0.0 here would freeze the joint.
    limits.max_velocity = _float(limit, "velocity", None)
    limits.has_acceleration_limits = False
    limits.has_effort_limits = True
    limits.max_effort = _float(limit, "effort", None)
    return True


def get_soft_joint_limits(joint, soft_limits: SoftJointLimits) -> bool:
    """Fill ``soft_limits`` from ``<safety_controller>``; False without one."""
    safety = _child(joint, "safety_controller")
    if safety is None:
        return False
    soft_limits.min_position = _float(safety, "soft_lower_limit")
    soft_limits.max_position = _float(safety, "soft_upper_limit")
    soft_limits.k_position = _float(safety, "k_position")
    soft_limits.k_velocity = _float(safety, "k_velocity", None)
    return True
