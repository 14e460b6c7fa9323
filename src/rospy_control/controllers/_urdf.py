"""Just enough URDF for the PID controllers: a joint's type and limits from ``robot_description``.

(``urdf_parser_py`` is not a dependency; the joint element is read with ElementTree.)
"""
from __future__ import annotations

import math
import xml.etree.ElementTree as ET
from typing import NamedTuple, Optional

from rospy_control.exceptions import ConfigError

__all__ = ["UrdfJoint", "load_urdf_joint", "shortest_angular_distance",
           "shortest_angular_distance_with_large_limits"]


class UrdfJoint(NamedTuple):
    """A URDF joint: ``type`` is revolute, continuous, prismatic, fixed, floating or planar."""

    name: str
    type: str
    lower: float = -math.inf
    upper: float = math.inf
    velocity: float = math.inf
    effort: float = math.inf
    has_limits: bool = False


def load_urdf_joint(nh, joint_name: str, param: str = "robot_description") -> UrdfJoint:
    """Find ``param`` from ``nh`` upwards (``searchParam``), parse it, return ``joint_name``.

    :raises ConfigError: no description, unparsable XML, or no such joint.
    """
    where = nh.search_param(param)
    if where is None:
        raise ConfigError(f"Could not find parameter '{param}' on the parameter server "
                          f"(searched from '{nh.namespace}' up)", nh.namespace)
    text = nh.get_param(where)
    try:
        root = ET.fromstring(text)
    except (ET.ParseError, TypeError) as err:
        raise ConfigError(f"Failed to parse urdf file: {err}", where) from err
    for element in root.iter("joint"):
        if element.get("name") != joint_name or element.get("type") is None:
            continue
        limit = element.find("limit")
        if limit is None:
            return UrdfJoint(joint_name, element.get("type"))

        def attr(key: str, default: float) -> float:
            try:
                return float(limit.get(key, default))
            except ValueError as err:
                raise ConfigError(f"joint '{joint_name}': <limit {key}=...> is not a number", where) from err

        return UrdfJoint(joint_name, element.get("type"), attr("lower", 0.0), attr("upper", 0.0),
                         attr("velocity", math.inf), attr("effort", math.inf), True)
    raise ConfigError(f"Could not find joint '{joint_name}' in urdf", where)


def _normalize_angle_positive(angle: float) -> float:
    return math.fmod(math.fmod(angle, 2.0 * math.pi) + 2.0 * math.pi, 2.0 * math.pi)


def _normalize_angle(angle: float) -> float:
    angle = _normalize_angle_positive(angle)
    return angle - 2.0 * math.pi if angle > math.pi else angle


def shortest_angular_distance(from_angle: float, to_angle: float) -> float:
    """Signed shortest rotation from ``from_angle`` to ``to_angle``, in (-pi, pi]."""
    return _normalize_angle(to_angle - from_angle)


def _two_pi_complement(angle: float) -> float:
    if angle > 2.0 * math.pi or angle < -2.0 * math.pi:
        angle = math.fmod(angle, 2.0 * math.pi)
    if angle < 0.0:
        return 2.0 * math.pi + angle
    if angle > 0.0:
        return -2.0 * math.pi + angle
    return 2.0 * math.pi


def shortest_angular_distance_with_large_limits(from_angle: float, to_angle: float, left_limit: float,
                                                right_limit: float) -> float:
    """Shortest rotation to ``to_angle`` that stays inside ``[left_limit, right_limit]`` (which may
    span more than 2 pi): the shorter of the two directions if it stays within the limits, else the
    other one, else (nothing works) the plain shortest distance -- the angles package's rule."""
    delta = shortest_angular_distance(from_angle, to_angle)
    other = _two_pi_complement(delta)
    if abs(delta) > abs(other):
        delta, other = other, delta
    if left_limit > right_limit:
        return delta
    for candidate in (delta, other):
        if left_limit <= from_angle + candidate <= right_limit:
            return candidate
    return delta


def clamp_to_limits(joint: Optional[UrdfJoint], value: float) -> float:
    """Clamp a position command to the joint's limits (revolute and prismatic joints only)."""
    if joint is None or joint.type not in ("revolute", "prismatic") or not joint.has_limits:
        return value
    return max(joint.lower, min(joint.upper, value))
