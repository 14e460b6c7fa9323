"""Joint limits from rosparam-shaped dicts (``joint_limits_interface/joint_limits_rosparam.h``).

YAML schema (under the node's namespace; every key optional)::

    joint_limits:
      <joint_name>:
        has_position_limits: true       # false clears; true applies only with both values below
        min_position: -1.57             # rad or m
        max_position: 1.57
        has_velocity_limits: true       # true applies only with max_velocity
        max_velocity: 2.0               # rad/s or m/s
        has_acceleration_limits: false
        max_acceleration: 5.0           # rad/s²
        has_jerk_limits: false
        max_jerk: 100.0                 # rad/s³ (parsed, never enforced)
        has_effort_limits: true
        max_effort: 20.0                # N·m or N
        angle_wraparound: false         # read only when has_position_limits is false
        # soft limits (all five keys needed):
        has_soft_limits: true
        k_position: 100.0
        k_velocity: 20.0
        soft_lower_limit: -1.5
        soft_upper_limit: 1.5

Only what is specified overrides: a value without its ``has_*`` flag is ignored, a ``has_*: true``
without its value(s) changes nothing, ``has_*: false`` clears the flag.  :func:`get_joint_limits`
returns False if ``joint_limits/<joint>`` does not exist (True otherwise, even if nothing changed).
A value of the wrong type raises :class:`~rospy_control.exceptions.JointLimitsError` naming the key.
"""
from __future__ import annotations

from typing import Any, Dict, Optional

from rospy_control.exceptions import JointLimitsError
from rospy_control.joint_limits.limits import JointLimits, SoftJointLimits

__all__ = ["get_joint_limits", "get_soft_joint_limits"]


def _namespace(joint_name: str, params: Dict[str, Any]) -> Optional[Dict[str, Any]]:
    root = params.get("joint_limits") if isinstance(params, dict) else None
    if not isinstance(root, dict):
        return None
    ns = root.get(joint_name)
    return ns if isinstance(ns, dict) else None


def _get(ns: Dict[str, Any], joint: str, key: str, kind: type):
    if key not in ns:
        return None
    value = ns[key]
    if kind is bool:
        if not isinstance(value, bool):
            raise JointLimitsError(f"joint_limits/{joint}/{key}: expected true or false, got {value!r}.")
        return value
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise JointLimitsError(f"joint_limits/{joint}/{key}: expected a number, got {value!r}.")
    return float(value)


def get_joint_limits(joint_name: str, params: Dict[str, Any], limits: JointLimits) -> bool:
    """Override ``limits`` from ``params['joint_limits'][joint_name]`` (see the module docstring)."""
    ns = _namespace(joint_name, params)
    if ns is None:
        return False
    has_pos = _get(ns, joint_name, "has_position_limits", bool)
    if has_pos is not None:
        if not has_pos:
            limits.has_position_limits = False
        lo = _get(ns, joint_name, "min_position", float)
        hi = _get(ns, joint_name, "max_position", float)
        if has_pos and lo is not None and hi is not None:
            limits.has_position_limits = True
            limits.min_position, limits.max_position = lo, hi
        wrap = _get(ns, joint_name, "angle_wraparound", bool)
        if not has_pos and wrap is not None:
            limits.angle_wraparound = wrap
    for quantity, key in (("velocity", "max_velocity"), ("acceleration", "max_acceleration"),
                          ("jerk", "max_jerk"), ("effort", "max_effort")):
        flag = _get(ns, joint_name, f"has_{quantity}_limits", bool)
        if flag is None:
            continue
        if not flag:
            setattr(limits, f"has_{quantity}_limits", False)
        value = _get(ns, joint_name, key, float)
        if flag and value is not None:
            setattr(limits, f"has_{quantity}_limits", True)
            setattr(limits, key, value)
    return True


def get_soft_joint_limits(joint_name: str, params: Dict[str, Any], soft_limits: SoftJointLimits) -> bool:
    """Fill ``soft_limits`` if ``has_soft_limits: true`` and all four values are given."""
    ns = _namespace(joint_name, params)
    if ns is None or not _get(ns, joint_name, "has_soft_limits", bool):
        return False
    values = [_get(ns, joint_name, k, float)
              for k in ("k_position", "k_velocity", "soft_lower_limit", "soft_upper_limit")]
    if any(v is None for v in values):
        return False
    (soft_limits.k_position, soft_limits.k_velocity,
     soft_limits.min_position, soft_limits.max_position) = values
    return True
