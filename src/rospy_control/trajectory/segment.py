"""Spline segments: linear, cubic and quintic polynomials between two states (numpy, multi-DOF).

A segment joins a start state at ``start_time`` to an end state at ``end_time``.  Its type follows
ros_controllers' ``QuinticSplineSegment``: the **lowest common specification of both endpoints**

* positions only (on either end)                 -> linear  (velocity jumps at the knots),
* positions + velocities on both ends            -> cubic   (continuous velocity),
* positions + velocities + accelerations on both -> quintic (continuous acceleration).

Accelerations without velocities give a linear segment, as upstream.

Sampling outside ``[start_time, end_time]`` returns the start (before) or end (after) position
with **zero velocity and acceleration**.  A zero-duration segment degenerates gracefully: its
coefficients are the start position (and start velocity/half start acceleration for cubic/quintic,
as upstream), so it never divides by zero.

Coefficients are stored in ascending powers of the local time ``tau = t - start_time``, shape
``(dof, 6)`` whatever the order (unused high powers are zero), so every segment type is evaluated
by the same vectorised code.  The helper functions work on arrays of any leading shape and are
reused by :mod:`rospy_control.trajectory.trajectory` to precompute whole trajectories at once.
"""
from __future__ import annotations

import math
from typing import Optional, Sequence, Tuple

import numpy as np

from rospy_control.exceptions import RospyControlError

#: Polynomial degree of each segment type.
LINEAR = 1
CUBIC = 3
QUINTIC = 5

ORDER_NAMES = {LINEAR: "linear", CUBIC: "cubic", QUINTIC: "quintic"}

#: ``coefs @ _D1`` gives the coefficients of the first derivative, ``coefs @ _D2`` the second.
_D1 = np.zeros((6, 6))
_D2 = np.zeros((6, 6))
for _k in range(1, 6):
    _D1[_k, _k - 1] = _k
for _k in range(2, 6):
    _D2[_k, _k - 2] = _k * (_k - 1)
_BINOMIAL = np.array([[float(math.comb(i, m)) for m in range(6)] for i in range(6)])


class TrajectoryError(RospyControlError, ValueError):
    """A segment, trajectory or sample request is malformed (sizes, times, non-finite values)."""


class PointState:
    """Positions and optional velocities/accelerations of all DOFs at one instant.

    ``velocities``/``accelerations`` are ``None`` when unspecified (not zero: an unspecified field
    lowers the segment order, see the module docstring).

    :param positions: one value per DOF (rad or m).
    :param velocities: one value per DOF (rad/s or m/s) or None.
    :param accelerations: one value per DOF (rad/s^2 or m/s^2) or None.
    :raises TrajectoryError: on inconsistent sizes or non-finite values.
    """

    __slots__ = ("positions", "velocities", "accelerations")

    def __init__(self, positions: Sequence[float], velocities: Optional[Sequence[float]] = None,
                 accelerations: Optional[Sequence[float]] = None) -> None:
        self.positions = _vector(positions, "positions", None)
        dof = self.positions.shape[0]
        if dof == 0:
            raise TrajectoryError("A trajectory state needs at least one position")
        self.velocities = _optional_vector(velocities, "velocities", dof)
        self.accelerations = _optional_vector(accelerations, "accelerations", dof)

    @property
    def dof(self) -> int:
        """Number of degrees of freedom."""
        return int(self.positions.shape[0])

    def __repr__(self) -> str:
        return (f"PointState(positions={self.positions.tolist()}, "
                f"velocities={None if self.velocities is None else self.velocities.tolist()}, "
                f"accelerations={None if self.accelerations is None else self.accelerations.tolist()})")


def _optional_vector(values: Optional[Sequence[float]], what: str, dof: int) -> Optional[np.ndarray]:
    """None for an unspecified (None or empty) field, else :func:`_vector`."""
    return None if values is None or len(values) == 0 else _vector(values, what, dof)


def _vector(values: Sequence[float], what: str, dof: Optional[int]) -> np.ndarray:
    arr = np.array(values, dtype=float).reshape(-1)
    if dof is not None and arr.shape[0] != dof:
        raise TrajectoryError(f"{what} has {arr.shape[0]} value(s), expected {dof}")
    if not np.all(np.isfinite(arr)):
        raise TrajectoryError(f"{what} contains non-finite values: {arr.tolist()}")
    return arr


def segment_order(has_velocities: bool, has_accelerations: bool) -> int:
    """Order of a segment whose *both* endpoints carry the given fields."""
    if not has_velocities:
        return LINEAR
    return QUINTIC if has_accelerations else CUBIC


def spline_coefficients(order: int, duration, p0, p1, v0=None, v1=None, a0=None, a1=None) -> np.ndarray:
    """Coefficients (ascending powers, last axis of size 6) of the spline joining two states.

    Vectorised: ``duration`` and the states broadcast against each other (e.g. shape ``(m, n)`` for
    ``m`` segments of ``n`` joints).  Where ``duration == 0`` the segment degenerates to its start
    state as upstream.  ``v0``/``v1`` are needed for cubic, and ``a0``/``a1`` too for quintic.

    Values too large for a duration (e.g. a change over 1e-300 s) give non-finite coefficients
    silently; :class:`~rospy_control.trajectory.trajectory.Trajectory` refuses those.
    """
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return _spline_coefficients(order, duration, p0, p1, v0, v1, a0, a1)


def _spline_coefficients(order: int, duration, p0, p1, v0, v1, a0, a1) -> np.ndarray:
    p0 = np.asarray(p0, dtype=float)
    p1 = np.asarray(p1, dtype=float)
    T = np.asarray(duration, dtype=float)
    shape = np.broadcast(p0, p1, T).shape
    out = np.zeros(shape + (6,))
    zero = T <= 0.0
    Ts = np.where(zero, 1.0, T)
    dp = p1 - p0
    out[..., 0] = p0
    if order == LINEAR:
        out[..., 1] = np.where(zero, 0.0, dp / Ts)
        return out
    v0 = np.asarray(v0, dtype=float)
    v1 = np.asarray(v1, dtype=float)
    out[..., 1] = v0
    if order == CUBIC:
        T2 = Ts * Ts
        out[..., 2] = np.where(zero, 0.0, (3.0 * dp - (2.0 * v0 + v1) * Ts) / T2)
        out[..., 3] = np.where(zero, 0.0, (-2.0 * dp + (v0 + v1) * Ts) / (T2 * Ts))
        return out
    if order != QUINTIC:
        raise TrajectoryError(f"Unknown spline order {order} (expected 1, 3 or 5)")
    a0 = np.asarray(a0, dtype=float)
    a1 = np.asarray(a1, dtype=float)
    out[..., 2] = 0.5 * a0
    T2 = Ts * Ts
    T3 = T2 * Ts
    out[..., 3] = np.where(zero, 0.0,
                           (20.0 * dp - (3.0 * a0 - a1) * T2 - (12.0 * v0 + 8.0 * v1) * Ts) / (2.0 * T3))
    out[..., 4] = np.where(zero, 0.0, (-30.0 * dp + (3.0 * a0 - 2.0 * a1) * T2 + (16.0 * v0 + 14.0 * v1) * Ts)
                           / (2.0 * T3 * Ts))
    out[..., 5] = np.where(zero, 0.0, (12.0 * dp - (a0 - a1) * T2 - 6.0 * (v0 + v1) * Ts) / (2.0 * T3 * T2))
    return out


def evaluate(coefficients: np.ndarray, tau) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Position, velocity and acceleration of polynomials (last axis 6) at local time(s) ``tau``."""
    c = np.asarray(coefficients, dtype=float)
    t = np.asarray(tau, dtype=float)
    powers = t[..., None] ** np.arange(6)
    return (np.sum(c * powers, axis=-1), np.sum((c @ _D1) * powers, axis=-1),
            np.sum((c @ _D2) * powers, axis=-1))


def derivative(coefficients: np.ndarray, times: int = 1) -> np.ndarray:
    """Coefficients of the first (``times=1``) or second (``times=2``) derivative."""
    return np.asarray(coefficients, dtype=float) @ (_D1 if times == 1 else _D2)


def shift(coefficients: np.ndarray, delta) -> np.ndarray:
    """Re-express polynomials in ``tau' = tau - delta``: ``q(tau') = p(tau' + delta)``.

    Used to precompute every joint's polynomial relative to a common knot, so that sampling needs a
    single local time for all joints.
    """
    c = np.asarray(coefficients, dtype=float)
    d = np.asarray(delta, dtype=float)[..., None]
    # q_m = sum_{i >= m} c_i * C(i, m) * delta^(i - m)
    dpow = d ** np.arange(6)  # (..., 6): delta^k
    out = np.zeros(np.broadcast(c, d).shape)
    for m in range(6):
        k = np.arange(6 - m)
        out[..., m] = np.sum(c[..., m:] * _BINOMIAL[m:, m] * dpow[..., k], axis=-1)
    return out


class SplineSegment:
    """Multi-DOF spline segment between two :class:`PointState` (see the module docstring).

    :param start_time: segment start (s).
    :param start_state: state at ``start_time``.
    :param end_time: segment end (s), ``>= start_time``.
    :param end_state: state at ``end_time``; same DOF count as ``start_state``.
    :raises TrajectoryError: end before start, DOF mismatch, non-finite times.
    """

    __slots__ = ("start_time", "end_time", "order", "coefficients")

    def __init__(self, start_time: float, start_state: PointState, end_time: float,
                 end_state: PointState) -> None:
        start_time = float(start_time)
        end_time = float(end_time)
        if not (np.isfinite(start_time) and np.isfinite(end_time)):
            raise TrajectoryError(f"Segment times must be finite (start {start_time}, end {end_time})")
        if end_time < start_time:
            raise TrajectoryError(f"Segment ends before it starts ({end_time} < {start_time})")
        if start_state.dof != end_state.dof:
            raise TrajectoryError(
                f"Segment start and end states have different sizes ({start_state.dof} vs {end_state.dof})")
        has_vel = start_state.velocities is not None and end_state.velocities is not None
        has_acc = start_state.accelerations is not None and end_state.accelerations is not None
        self.order = segment_order(has_vel, has_acc)
        self.start_time = start_time
        self.end_time = end_time
        self.coefficients = spline_coefficients(
            self.order, end_time - start_time, start_state.positions, end_state.positions,
            start_state.velocities, end_state.velocities, start_state.accelerations, end_state.accelerations)

    @classmethod
    def from_coefficients(cls, start_time: float, end_time: float, coefficients: np.ndarray,
                          order: int = QUINTIC) -> "SplineSegment":
        """Segment with precomputed coefficients (shape ``(dof, 6)``)."""
        seg = cls.__new__(cls)
        seg.start_time = float(start_time)
        seg.end_time = float(end_time)
        seg.order = order
        seg.coefficients = np.array(coefficients, dtype=float).reshape(-1, 6)
        return seg

    @property
    def duration(self) -> float:
        """``end_time - start_time`` (s)."""
        return self.end_time - self.start_time

    @property
    def dof(self) -> int:
        """Number of degrees of freedom."""
        return int(self.coefficients.shape[0])

    def sample(self, time: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Positions, velocities and accelerations of all DOFs at ``time``.

        Before the start: start position, zero velocity/acceleration; after the end: end position,
        zero velocity/acceleration.
        """
        tau = float(time) - self.start_time
        duration = self.duration
        if tau < 0.0:
            p, _, _ = evaluate(self.coefficients, 0.0)
            zeros = np.zeros_like(p)
            return p, zeros, zeros.copy()
        if tau > duration:
            p, _, _ = evaluate(self.coefficients, duration)
            zeros = np.zeros_like(p)
            return p, zeros, zeros.copy()
        return evaluate(self.coefficients, tau)

    def __repr__(self) -> str:
        return (f"SplineSegment({ORDER_NAMES.get(self.order, self.order)}, "
                f"{self.start_time:.6f}..{self.end_time:.6f}, dof={self.dof})")
