"""Joint limits of the MiddlewareRobotHW: sources, checks and the enforcement handles per interface.

Sources, in order (ros_control's usual RobotHW recipe): the URDF ``<limit>`` and
``<safety_controller>`` of the joint, then ``params['joint_limits'][<joint>]`` (schema of
:mod:`rospy_control.joint_limits.params`), which overrides only what it specifies; soft limits from
the params replace the URDF's when complete.

Checks (ConfigError naming the joint and both sources): ``min_position <= max_position``,
``max_velocity``, ``max_acceleration`` and ``max_effort`` > 0 where flagged, soft limits with
``soft_lower_limit <= soft_upper_limit`` and non-negative gains.

Handles per command interface of a joint (each wraps a JointHandle on the joint data's command field
of that interface, never registered in an interface, so nothing is claimed):

============  =====================================================================================
position      PositionJointSoftLimitsHandle with soft limits (and a velocity limit), else
              PositionJointSaturationHandle (always: hard position + velocity limits)
velocity      VelocityJointSoftLimitsHandle with soft limits, else VelocityJointSaturationHandle if
              velocity-limited, else none
effort        EffortJointSoftLimitsHandle with soft limits, else EffortJointSaturationHandle, both only
              with velocity *and* effort limits (their preconditions), else a plain +-max_effort clamp
              when effort-limited, else none
posvel        the position handle on ``command_position`` + the velocity handle on ``command_velocity``
============  =====================================================================================
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from rospy_control.exceptions import ConfigError, JointLimitsError
from rospy_control.hardware_interface import JointHandle, JointStateHandle
from rospy_control.joint_limits import (
    EffortJointSaturationHandle,
    EffortJointSoftLimitsHandle,
    JointLimits,
    PositionJointSaturationHandle,
    PositionJointSoftLimitsHandle,
    SoftJointLimits,
    VelocityJointSaturationHandle,
    VelocityJointSoftLimitsHandle,
    params as limit_params,
    urdf as limit_urdf,
)

__all__ = ["load_limits", "make_handles", "EffortClampHandle"]


class EffortClampHandle:
    """``clamp(command, -max_effort, max_effort)`` for joints with an effort but no velocity limit
    (ros_control's effort handles refuse to work without a velocity limit)."""

    def __init__(self, joint_handle: JointHandle, limits: JointLimits) -> None:
        self._jh = joint_handle
        self._max = limits.max_effort

    def get_name(self) -> str:
        return self._jh.get_name()

    def enforce_limits(self, period: float) -> None:
        cmd = self._jh.get_command()
        self._jh.set_command(min(max(cmd, -self._max), self._max))


def load_limits(name: str, joint_el, params: Dict, urdf_source: str,
                params_source: str) -> Tuple[JointLimits, Optional[SoftJointLimits]]:
    """Hard and soft limits of joint ``name`` (see the module docstring).

    :raises ConfigError: a non-numeric or inconsistent value (names the joint and the source).
    """
    line = getattr(joint_el, "sourceline", None)
    limits = JointLimits()
    from_urdf = SoftJointLimits()
    soft: Optional[SoftJointLimits] = from_urdf
    try:
        limit_urdf.get_joint_limits(joint_el, limits)
        if not limit_urdf.get_soft_joint_limits(joint_el, from_urdf):
            soft = None
    except JointLimitsError as err:
        raise ConfigError(f"joint '{name}': bad limits in the URDF: {err}", source=urdf_source,
                          line=line) from err
    ns = f"{params_source}/joint_limits/{name}"
    try:
        limit_params.get_joint_limits(name, params, limits)
        from_params = SoftJointLimits()
        if limit_params.get_soft_joint_limits(name, params, from_params):
            soft = from_params
    except JointLimitsError as err:
        raise ConfigError(f"joint '{name}': {err}", source=params_source) from err
    problems: List[str] = []
    if limits.has_position_limits and not limits.min_position <= limits.max_position:
        problems.append(f"min_position {limits.min_position} > max_position {limits.max_position}")
    for flag, field in (("has_velocity_limits", "max_velocity"),
                        ("has_acceleration_limits", "max_acceleration"),
                        ("has_effort_limits", "max_effort")):
        value = getattr(limits, field)
        if getattr(limits, flag) and not value > 0.0:
            problems.append(f"{field} must be > 0, got {value}")
    if soft is not None:
        if not soft.min_position <= soft.max_position:
            problems.append(f"soft lower limit {soft.min_position} > soft upper limit {soft.max_position}")
        if soft.k_position < 0.0 or soft.k_velocity < 0.0:
            problems.append(f"soft-limit gains must be >= 0 (k_position {soft.k_position}, "
                            f"k_velocity {soft.k_velocity})")
    if problems:
        raise ConfigError(f"joint '{name}': bad joint limits: {'; '.join(problems)} (from the URDF <limit>/"
                          f"<safety_controller> at {urdf_source}:{line} and the parameters {ns})",
                          source=urdf_source, line=line)
    return limits, soft


def _position(jh: JointHandle, limits: JointLimits, soft: Optional[SoftJointLimits]):
    if soft is not None and limits.has_velocity_limits:
        return PositionJointSoftLimitsHandle(jh, limits, soft)
    return PositionJointSaturationHandle(jh, limits)


def _velocity(jh: JointHandle, limits: JointLimits, soft: Optional[SoftJointLimits]):
    if soft is not None:
        return VelocityJointSoftLimitsHandle(jh, limits, soft)
    if limits.has_velocity_limits:
        return VelocityJointSaturationHandle(jh, limits)
    return None


def _effort(jh: JointHandle, limits: JointLimits, soft: Optional[SoftJointLimits]):
    if limits.has_velocity_limits and limits.has_effort_limits:
        if soft is not None:
            return EffortJointSoftLimitsHandle(jh, limits, soft)
        return EffortJointSaturationHandle(jh, limits)
    if limits.has_effort_limits:
        return EffortClampHandle(jh, limits)
    return None


def make_handles(state: JointStateHandle, data, kind: str, limits: JointLimits,
                 soft: Optional[SoftJointLimits]) -> List:
    """Limit handles enforcing ``limits`` on the command(s) of interface ``kind`` of one joint."""
    if kind == "position":
        handles = [_position(JointHandle(state, data, "command_position"), limits, soft)]
    elif kind == "velocity":
        handles = [_velocity(JointHandle(state, data, "command_velocity"), limits, soft)]
    elif kind == "effort":
        handles = [_effort(JointHandle(state, data, "command_effort"), limits, soft)]
    elif kind == "posvel":
        handles = [_position(JointHandle(state, data, "command_position"), limits, soft),
                   _velocity(JointHandle(state, data, "command_velocity"), limits, soft)]
    else:  # pragma: no cover - kinds are fixed by the RobotHW
        raise ValueError(kind)
    return [h for h in handles if h is not None]
