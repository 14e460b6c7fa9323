"""Joint limit enforcement handles and interfaces (``joint_limits_interface.h``).

Each handle wraps a :class:`~rospy_control.hardware_interface.JointHandle` and rewrites its command
in :meth:`enforce_limits` (``period`` in seconds).  ``clamp(x, lo, hi) = min(max(x, lo), hi)``;
vmax/amax/emax are the hard velocity/acceleration/effort limits, soft_min/soft_max and k_position /
k_velocity the soft limits.  Typical call site: ``RobotHW.write()`` before the commands go out.

* :class:`PositionJointSaturationHandle` -- window = hard position limits (±∞ without), intersected
  with [prev − vmax·dt, prev + vmax·dt] when velocity-limited; prev starts at the measured position;
  :meth:`reset` forgets it (after a mode switch or e-stop).
* :class:`PositionJointSoftLimitsHandle` -- needs a velocity limit.  p = previous command (first: measured
  position).  With position limits v_lo = clamp(−k_position·(p − soft_min), ±vmax), v_hi =
  clamp(−k_position·(p − soft_max), ±vmax), else ±vmax; window [p + v_lo·dt, p + v_hi·dt], each end
  clamped into the hard limits when position-limited.  Has :meth:`reset`.
* :class:`EffortJointSaturationHandle` -- needs velocity and effort limits.  ±emax; measured position
  below min → lower bound 0, above max → upper bound 0; measured velocity below −vmax → lower bound 0,
  above vmax → upper bound 0.
* :class:`EffortJointSoftLimitsHandle` -- same preconditions; v_lo/v_hi as above from the *measured*
  position; effort window [clamp(−k_velocity·(v − v_lo), ±emax), clamp(−k_velocity·(v − v_hi), ±emax)]
  with measured velocity v.
* :class:`VelocityJointSaturationHandle` -- needs a velocity limit.  ±vmax, intersected with
  [prev − amax·dt, prev + amax·dt] when acceleration-limited; prev starts at 0.0.
* :class:`VelocityJointSoftLimitsHandle` -- no precondition (vmax = ∞ without a velocity limit).  Soft
  window from the measured position when position-limited, else ±vmax; intersected with
  [v_meas − amax·dt, v_meas + amax·dt] when acceleration-limited.

Jerk limits are never enforced, and velocity saturation does not enforce position (as ros_control).
"""
from __future__ import annotations

import math
from typing import Optional

from rospy_control.exceptions import JointLimitsError
from rospy_control.hardware_interface import ResourceManager
from rospy_control.joint_limits.limits import JointLimits, SoftJointLimits

__all__ = [
    "PositionJointSaturationHandle", "PositionJointSoftLimitsHandle", "EffortJointSaturationHandle",
    "EffortJointSoftLimitsHandle", "VelocityJointSaturationHandle", "VelocityJointSoftLimitsHandle",
    "PositionJointSaturationInterface", "PositionJointSoftLimitsInterface",
    "EffortJointSaturationInterface", "EffortJointSoftLimitsInterface",
    "VelocityJointSaturationInterface", "VelocityJointSoftLimitsInterface",
]

_INF = float("inf")


def clamp(value: float, lo: float, hi: float) -> float:
    return min(max(value, lo), hi)


class _LimitsHandle:
    _NEEDS_SOFT = False

    def __init__(self, joint_handle, limits: JointLimits,
                 soft_limits: Optional[SoftJointLimits] = None) -> None:
        kind = type(self).__name__
        if joint_handle is None or not all(hasattr(joint_handle, m) for m in (
                "get_name", "get_position", "get_velocity", "get_command", "set_command")):
            raise JointLimitsError(f"Cannot create {kind}: {joint_handle!r} is not a JointHandle.")
        if not isinstance(limits, JointLimits):
            raise JointLimitsError(f"Cannot create {kind} for joint '{joint_handle.get_name()}': "
                                   f"limits must be a JointLimits, got {limits!r}.")
        if self._NEEDS_SOFT and not isinstance(soft_limits, SoftJointLimits):
            raise JointLimitsError(f"Cannot create {kind} for joint '{joint_handle.get_name()}': "
                                   f"soft limits must be a SoftJointLimits, got {soft_limits!r}.")
        self._jh = joint_handle
        self._limits = limits
        # Checked above for the soft-limits handles; the others never read it.
        self._soft = soft_limits if soft_limits is not None else SoftJointLimits()

    def _require(self, flag: str, what: str) -> None:
        if not getattr(self._limits, flag):
            raise JointLimitsError(
                f"Cannot enforce limits for joint '{self.get_name()}'. "
                f"It has no {what} limits specification.")

    def get_name(self) -> str:
        return self._jh.get_name()

    def enforce_limits(self, period: float) -> None:
        raise NotImplementedError

    def _soft_velocity_bounds(self, position: float, max_vel: float):
        lim, soft = self._limits, self._soft
        if lim.has_position_limits:
            return (clamp(-soft.k_position * (position - soft.min_position), -max_vel, max_vel),
                    clamp(-soft.k_position * (position - soft.max_position), -max_vel, max_vel))
        return -max_vel, max_vel


class PositionJointSaturationHandle(_LimitsHandle):
    """Saturate a position command (see module docstring).  Never raises on construction."""

    def __init__(self, joint_handle, limits: JointLimits) -> None:
        super().__init__(joint_handle, limits)
        if limits.has_position_limits:
            self._min, self._max = limits.min_position, limits.max_position
        else:
            self._min, self._max = -_INF, _INF
        self._prev = math.nan

    def reset(self) -> None:
        """Forget the previous command; the next cycle starts from the measured position."""
        self._prev = math.nan

    def enforce_limits(self, period: float) -> None:
        jh = self._jh
        prev = self._prev
        position = jh.get_position() if prev != prev else prev  # read only when it is used
        jh.set_command(self.saturate(jh.get_command(), position, period))

    def saturate(self, command: float, position: float, period: float) -> float:
        """:meth:`enforce_limits` on values: the saturated ``command``, given the joint's measured
        ``position`` (used only on the first cycle, or after :meth:`reset`).  For a RobotHW that holds
        the joint's values itself and saturates many joints per cycle without the handle's getters."""
        prev = self._prev
        if prev != prev:  # NaN: first cycle (or after reset)
            prev = position
        lo, hi = self._min, self._max
        lim = self._limits
        if lim.has_velocity_limits:
            delta = lim.max_velocity * period
            lo, hi = max(prev - delta, lo), min(prev + delta, hi)
        cmd = min(max(command, lo), hi)   # clamp() inlined: called per joint per cycle
        self._prev = cmd
        return cmd


class PositionJointSoftLimitsHandle(_LimitsHandle):
    """Soft-limit a position command.

    :raises JointLimitsError: no velocity limit.
    """

    _NEEDS_SOFT = True

    def __init__(self, joint_handle, limits: JointLimits, soft_limits: SoftJointLimits) -> None:
        super().__init__(joint_handle, limits, soft_limits)
        self._require("has_velocity_limits", "velocity")
        self._prev = math.nan

    def reset(self) -> None:
        self._prev = math.nan

    def enforce_limits(self, period: float) -> None:
        lim = self._limits
        if math.isnan(self._prev):
            self._prev = self._jh.get_position()
        pos = self._prev
        v_lo, v_hi = self._soft_velocity_bounds(pos, lim.max_velocity)
        lo, hi = pos + v_lo * period, pos + v_hi * period
        if lim.has_position_limits:
            lo = clamp(lo, lim.min_position, lim.max_position)
            hi = clamp(hi, lim.min_position, lim.max_position)
        cmd = clamp(self._jh.get_command(), lo, hi)
        self._jh.set_command(cmd)
        self._prev = cmd


class EffortJointSaturationHandle(_LimitsHandle):
    """Saturate an effort command.

    :raises JointLimitsError: no velocity or no effort limit.
    """

    def __init__(self, joint_handle, limits: JointLimits) -> None:
        super().__init__(joint_handle, limits)
        self._require("has_velocity_limits", "velocity")
        self._require("has_effort_limits", "effort")

    def enforce_limits(self, period: float) -> None:
        lim = self._limits
        lo, hi = -lim.max_effort, lim.max_effort
        pos, vel = self._jh.get_position(), self._jh.get_velocity()
        if lim.has_position_limits:
            if pos < lim.min_position:
                lo = 0.0
            elif pos > lim.max_position:
                hi = 0.0
        if vel < -lim.max_velocity:
            lo = 0.0
        elif vel > lim.max_velocity:
            hi = 0.0
        self._jh.set_command(clamp(self._jh.get_command(), lo, hi))


class EffortJointSoftLimitsHandle(_LimitsHandle):
    """Soft-limit an effort command.

    :raises JointLimitsError: no velocity or no effort limit.
    """

    _NEEDS_SOFT = True

    def __init__(self, joint_handle, limits: JointLimits, soft_limits: SoftJointLimits) -> None:
        super().__init__(joint_handle, limits, soft_limits)
        self._require("has_velocity_limits", "velocity")
        self._require("has_effort_limits", "effort")

    def enforce_limits(self, period: float) -> None:
        lim, soft = self._limits, self._soft
        v_lo, v_hi = self._soft_velocity_bounds(self._jh.get_position(), lim.max_velocity)
        vel = self._jh.get_velocity()
        lo = clamp(-soft.k_velocity * (vel - v_lo), -lim.max_effort, lim.max_effort)
        hi = clamp(-soft.k_velocity * (vel - v_hi), -lim.max_effort, lim.max_effort)
        self._jh.set_command(clamp(self._jh.get_command(), lo, hi))


class VelocityJointSaturationHandle(_LimitsHandle):
    """Saturate a velocity command.

    :raises JointLimitsError: no velocity limit.
    """

    def __init__(self, joint_handle, limits: JointLimits) -> None:
        super().__init__(joint_handle, limits)
        self._require("has_velocity_limits", "velocity")
        self._prev = 0.0

    def reset(self) -> None:
        """Ours (ros_control has none here): restart the acceleration ramp from 0.0."""
        self._prev = 0.0

    def enforce_limits(self, period: float) -> None:
        lim = self._limits
        lo, hi = -lim.max_velocity, lim.max_velocity
        if lim.has_acceleration_limits:
            delta = lim.max_acceleration * period
            lo, hi = max(self._prev - delta, lo), min(self._prev + delta, hi)
        cmd = clamp(self._jh.get_command(), lo, hi)
        self._jh.set_command(cmd)
        self._prev = cmd


class VelocityJointSoftLimitsHandle(_LimitsHandle):
    """Soft-limit a velocity command (never raises on construction)."""

    _NEEDS_SOFT = True

    def __init__(self, joint_handle, limits: JointLimits, soft_limits: SoftJointLimits) -> None:
        super().__init__(joint_handle, limits, soft_limits)
        self._max_vel = limits.max_velocity if limits.has_velocity_limits else _INF

    def enforce_limits(self, period: float) -> None:
        lim = self._limits
        if lim.has_position_limits:
            lo, hi = self._soft_velocity_bounds(self._jh.get_position(), self._max_vel)
        else:
            lo, hi = -self._max_vel, self._max_vel
        if lim.has_acceleration_limits:
            vel, delta = self._jh.get_velocity(), lim.max_acceleration * period
            lo, hi = max(vel - delta, lo), min(vel + delta, hi)
        self._jh.set_command(clamp(self._jh.get_command(), lo, hi))


class _JointLimitsInterface(ResourceManager):
    """Handles keyed by joint name; :meth:`enforce_limits` runs all of them."""

    CLAIMS = False

    def enforce_limits(self, period: float) -> None:
        for handle in self.get_handles():
            handle.enforce_limits(period)  # type: ignore[attr-defined]


class _Resettable(_JointLimitsInterface):
    def reset(self) -> None:
        """Reset every handle (after a mode switch or e-stop)."""
        for handle in self.get_handles():
            handle.reset()  # type: ignore[attr-defined]


def _iface(name: str, handle_type: type, base: type) -> type:
    return type(name, (base,), {
        "TYPE_NAME": f"joint_limits_interface::{name}", "LOOKUP_NAME": f"joint_limits_interface/{name}",
        "HANDLE_TYPE": handle_type, "__module__": __name__,
        "__doc__": f"Enforces every registered :class:`{handle_type.__name__}`.",
    })


PositionJointSaturationInterface = _iface("PositionJointSaturationInterface", PositionJointSaturationHandle,
                                          _Resettable)
PositionJointSoftLimitsInterface = _iface("PositionJointSoftLimitsInterface", PositionJointSoftLimitsHandle,
                                          _Resettable)
EffortJointSaturationInterface = _iface("EffortJointSaturationInterface", EffortJointSaturationHandle,
                                        _JointLimitsInterface)
EffortJointSoftLimitsInterface = _iface("EffortJointSoftLimitsInterface", EffortJointSoftLimitsHandle,
                                        _JointLimitsInterface)
VelocityJointSaturationInterface = _iface("VelocityJointSaturationInterface", VelocityJointSaturationHandle,
                                          _Resettable)
VelocityJointSoftLimitsInterface = _iface("VelocityJointSoftLimitsInterface", VelocityJointSoftLimitsHandle,
                                          _JointLimitsInterface)
