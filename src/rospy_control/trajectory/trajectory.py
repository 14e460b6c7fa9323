"""Multi-joint trajectory: ordered 1-DOF spline pieces per joint, compiled for fast sampling.

Model (as ros_controllers): every joint has its own ordered list of segments ("pieces"); the piece
used at time ``t`` is the last one whose start is ``<= t`` (``find_segment``); sampling before a
joint's first piece or from the piece's end on returns the boundary position with zero velocity and
acceleration.  (At exactly the end time of a joint's *last* segment this gives zero velocity where
upstream would still return the segment's end velocity; a zero-length segment is likewise "ended"
at its own instant.  Everywhere else the semantics are upstream's.)  Joints may have different
knots (partial-joint goals, replacement merges).

Speed: the control loop samples at up to 1 kHz, so the constructor (called off the loop) compiles
the pieces onto the **union of all knots** of all joints.  Within one grid interval every joint is
described by one polynomial re-expressed relative to the interval's start knot (constant rows for
"before first piece" and "after piece end").  A sample is then one ``bisect`` on a Python list, a
6-element power vector and one ``(3n x 6) @ 6`` mat-vec giving positions, velocities and
accelerations of all joints at once.  Per interval and joint the grid also records whether the
joint is inside a piece (path tolerances apply) or past the end of its last piece (goal tolerances
apply), so the tolerance checks need no search either.
"""
from __future__ import annotations

from bisect import bisect_right
from typing import List, Optional, Sequence, Tuple

import numpy as np

from rospy_control.trajectory._typing import FloatSeq
from rospy_control.trajectory.segment import (
    QUINTIC, PointState, SplineSegment, TrajectoryError, derivative, evaluate, shift, spline_coefficients,
)

Sample = Tuple[np.ndarray, np.ndarray, np.ndarray]


class JointPieces:
    """The pieces of one joint: arrays ``starts (k,)``, ``ends (k,)``, ``coefficients (k, 6)``.

    Pieces are sorted by start time; coefficients are in ascending powers of ``t - start``.
    """

    __slots__ = ("starts", "ends", "coefficients")

    def __init__(self, starts, ends, coefficients) -> None:
        self.starts = np.asarray(starts, dtype=float).reshape(-1)
        self.ends = np.asarray(ends, dtype=float).reshape(-1)
        self.coefficients = np.asarray(coefficients, dtype=float).reshape(-1, 6)
        k = self.starts.shape[0]
        if k == 0:
            raise TrajectoryError("A joint trajectory needs at least one segment")
        if self.ends.shape[0] != k or self.coefficients.shape[0] != k:
            raise TrajectoryError("Segment starts, ends and coefficients have different lengths")
        if not (np.isfinite(self.starts).all() and np.isfinite(self.ends).all()):
            raise TrajectoryError("Segment times must be finite")
        if np.any(self.ends < self.starts):
            raise TrajectoryError("A segment ends before it starts")
        if k > 1 and np.any(np.diff(self.starts) < 0.0):
            raise TrajectoryError("Segments are not sorted by start time")

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def find(self, time: float) -> int:
        """Index of the last piece starting at or before ``time``; -1 if ``time`` precedes all."""
        return int(np.searchsorted(self.starts, time, side="right")) - 1

    def sample(self, time: float) -> Tuple[float, float, float]:
        """Position, velocity, acceleration of this joint at ``time`` (same rules as the grid)."""
        i = self.find(time)
        if i < 0:
            return float(self.coefficients[0, 0]), 0.0, 0.0
        tau = time - self.starts[i]
        duration = self.ends[i] - self.starts[i]
        if tau >= duration:
            p, _, _ = evaluate(self.coefficients[i], duration)
            return float(p), 0.0, 0.0
        p, v, a = evaluate(self.coefficients[i], tau)
        return float(p), float(v), float(a)

    def slice(self, first: int, stop: Optional[int] = None) -> "JointPieces":
        """Pieces ``[first:stop]`` (a new object sharing no memory with this one)."""
        return JointPieces(self.starts[first:stop].copy(), self.ends[first:stop].copy(),
                           self.coefficients[first:stop].copy())

    def segments(self) -> List[SplineSegment]:
        """The pieces as 1-DOF :class:`SplineSegment` objects (for inspection and tests)."""
        return [SplineSegment.from_coefficients(s, e, c[None, :], QUINTIC)
                for s, e, c in zip(self.starts, self.ends, self.coefficients)]


def _position_bounds(pos: np.ndarray, knots: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """Per grid interval and joint, bounds ``(low, high)`` (each ``(k+1, n)``) of every position
    :meth:`Trajectory.sample_interval` can return in that interval.

    A polynomial ``sum c_m tau^m`` with ``0 <= tau <= h`` stays within ``c_0 +- sum_{m>=1} |c_m| h^m``;
    the bounds are widened by a margin far above the rounding of the sampling mat-vec.  The first
    and last intervals are unbounded in time: there the joints rest (only ``c_0``), else the bound
    is infinite.
    """
    k = knots.shape[0]
    h = np.zeros(k + 1)
    h[1:k] = np.diff(knots)
    higher = np.abs(pos[:, :, 1:])  # (k+1, n, 5)
    reach = np.einsum("ijm,im->ij", higher, h[:, None] ** np.arange(1, 6))
    for i in (0, k):
        reach[i] = np.where(np.any(higher[i] != 0.0, axis=1), np.inf, 0.0)
    start = pos[:, :, 0]
    margin = 1e-9 * (np.abs(start) + reach) + 1e-12
    return start - reach - margin, start + reach + margin


class Trajectory:
    """Multi-joint trajectory (see the module docstring).  Immutable once built.

    :param joints: one :class:`JointPieces` per joint, in controller joint order.
    :raises TrajectoryError: no joints, a malformed joint, or coefficients that are not finite (a
        trajectory that samples to NaN/inf is never built).
    """

    __slots__ = ("joints", "n_joints", "knots", "matrices", "in_path", "at_end", "any_path", "any_end",
                 "end_times", "start_time", "end_time", "position_bounds")

    def __init__(self, joints: Sequence[JointPieces]) -> None:
        self.joints: List[JointPieces] = list(joints)
        n = len(self.joints)
        if n == 0:
            raise TrajectoryError("A trajectory needs at least one joint")
        self.n_joints = n
        self.end_times = np.array([jp.ends[-1] for jp in self.joints])
        self.start_time = float(min(jp.starts[0] for jp in self.joints))
        self.end_time = float(np.max(self.end_times))
        self._compile()

    # -------------------------------------------------------------------------------- builders
    @classmethod
    def from_segments(cls, segments: Sequence[SplineSegment]) -> "Trajectory":
        """Trajectory whose joints all follow the same ordered multi-DOF segments."""
        if not segments:
            raise TrajectoryError("A trajectory needs at least one segment")
        dof = segments[0].dof
        if any(s.dof != dof for s in segments):
            raise TrajectoryError("All segments of a trajectory must have the same number of DOFs")
        starts = np.array([s.start_time for s in segments])
        ends = np.array([s.end_time for s in segments])
        coefs = np.stack([s.coefficients for s in segments])  # (k, dof, 6)
        return cls([JointPieces(starts, ends, coefs[:, j, :]) for j in range(dof)])

    @classmethod
    def hold(cls, time: float, positions: FloatSeq) -> "Trajectory":
        """Hold: one zero-length segment at ``positions`` with zero velocity and acceleration.

        This is upstream's hold trajectory for ``stop_trajectory_duration == 0`` (called with the
        *measured* positions).
        """
        pos = np.asarray(positions, dtype=float).reshape(-1)
        if not np.all(np.isfinite(pos)):
            raise TrajectoryError(f"Cannot hold at non-finite positions {pos.tolist()}")
        coefs = np.zeros((pos.shape[0], 6))
        coefs[:, 0] = pos
        t = np.array([float(time)])
        return cls([JointPieces(t, t, coefs[j:j + 1]) for j in range(pos.shape[0])])

    @classmethod
    def stop_ramp(cls, time: float, positions: FloatSeq, velocities: FloatSeq,
                  duration: float) -> "Trajectory":
        """Decelerate from ``(positions, velocities)`` to zero velocity in ``duration`` seconds.

        As upstream's stop trajectory builder: the quintic from ``(p, v, 0)`` to ``(p, -v, 0)`` over
        ``2 * duration`` is symmetric, so at its midpoint the velocity is zero; the ramp is the
        quintic from the start state to that midpoint state.  Its velocity decreases monotonically
        to zero (it never reverses).  ``duration <= 0`` gives :meth:`hold`.
        """
        duration = float(duration)
        if duration <= 0.0:
            return cls.hold(time, positions)
        p = np.asarray(positions, dtype=float).reshape(-1)
        v = np.asarray(velocities, dtype=float).reshape(-1)
        if v.shape != p.shape:
            raise TrajectoryError(f"Stop ramp: {p.shape[0]} position(s) but {v.shape[0]} velocity(ies)")
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(v))):
            raise TrajectoryError("Stop ramp: non-finite start state")
        zeros = np.zeros_like(p)
        twice = spline_coefficients(QUINTIC, 2.0 * duration, p, p, v, -v, zeros, zeros)
        p_mid, _, a_mid = evaluate(twice, duration)
        ramp = spline_coefficients(QUINTIC, duration, p, p_mid, v, zeros, zeros, a_mid)
        t0 = np.array([float(time)])
        t1 = np.array([float(time) + duration])
        return cls([JointPieces(t0, t1, ramp[j:j + 1]) for j in range(p.shape[0])])

    @classmethod
    def from_states(cls, times: Sequence[float], states: Sequence[PointState]) -> "Trajectory":
        """Trajectory through ``states`` at ``times`` (consecutive pairs become segments)."""
        if len(times) != len(states) or not states:
            raise TrajectoryError("from_states needs as many times as states (at least one)")
        if len(states) == 1:
            return cls.from_segments([SplineSegment(times[0], states[0], times[0], states[0])])
        return cls.from_segments([SplineSegment(times[i], states[i], times[i + 1], states[i + 1])
                                  for i in range(len(states) - 1)])

    # -------------------------------------------------------------------------------- compile
    def _compile(self) -> None:
        with np.errstate(over="ignore", invalid="ignore"):  # non-finite results are refused below
            self._compile_grid()

    def _compile_grid(self) -> None:
        n = self.n_joints
        knots = np.unique(np.concatenate([np.concatenate((jp.starts, jp.ends)) for jp in self.joints]))
        k = knots.shape[0]
        # Interval 0 is (-inf, knots[0]); interval i >= 1 is [knots[i-1], knots[i]) (last: to +inf).
        pos = np.zeros((k + 1, n, 6))
        in_path = np.zeros((k + 1, n), dtype=bool)
        at_end = np.zeros((k + 1, n), dtype=bool)
        for j, jp in enumerate(self.joints):
            idx = np.searchsorted(jp.starts, knots, side="right") - 1
            before = idx < 0
            p_idx = np.maximum(idx, 0)
            starts = jp.starts[p_idx]
            ends = jp.ends[p_idx]
            coefs = jp.coefficients[p_idx]
            after = ~before & (knots >= ends)
            inside = ~before & ~after
            shifted = shift(coefs, np.where(inside, knots - starts, 0.0))
            end_pos, _, _ = evaluate(coefs, ends - starts)
            rows = np.where(inside[:, None], shifted, 0.0)
            rows[after, 0] = end_pos[after]
            rows[before, 0] = jp.coefficients[0, 0]
            pos[1:, j, :] = rows
            pos[0, j, 0] = jp.coefficients[0, 0]
            in_path[1:, j] = inside
            at_end[1:, j] = after & (p_idx == len(jp) - 1)
        mats = np.concatenate((pos, derivative(pos, 1), derivative(pos, 2)), axis=1)  # (k+1, 3n, 6)
        if not np.isfinite(mats).all():
            # Sampling would give NaN/inf desired states: refuse (spline arithmetic overflowed, e.g.
            # a huge change over a vanishingly short segment).
            raise TrajectoryError("The trajectory's spline coefficients are not finite (values too large "
                                  "for the segment durations)")
        self.knots: List[float] = knots.tolist()
        self.matrices = np.ascontiguousarray(mats)
        self.position_bounds = _position_bounds(pos, knots)
        self.in_path = in_path
        self.at_end = at_end
        self.any_path: List[bool] = in_path.any(axis=1).tolist()
        self.any_end: List[bool] = at_end.any(axis=1).tolist()

    # -------------------------------------------------------------------------------- queries
    def interval(self, time: float) -> int:
        """Index of the compiled grid interval containing ``time`` (0 = before every segment)."""
        return bisect_right(self.knots, time)

    def sample_interval(self, time: float, power: Optional[np.ndarray] = None) -> Tuple[int, np.ndarray]:
        """Grid interval and the stacked ``[positions, velocities, accelerations]`` (3n,) at ``time``.

        One bisect and one mat-vec (``np.matmul``: ``ndarray.dot`` calls BLAS, which releases the
        GIL, so a thread calling it waits for the other Python threads to give the GIL back -- up
        to the interpreter's switch interval).  ``power`` is a scratch
        6-vector whose first element is 1; a caller that samples from one thread only (the
        control loop) passes a preallocated one, other callers leave it None.
        """
        i = bisect_right(self.knots, time)
        tau = time - self.knots[i - 1] if i else 0.0
        pw = np.ones(6) if power is None else power
        t2 = tau * tau
        pw[1] = tau
        pw[2] = t2
        pw[3] = t2 * tau
        pw[4] = t2 * t2
        pw[5] = t2 * t2 * tau
        return i, np.matmul(self.matrices[i], pw)

    def sample(self, time: float) -> Sample:
        """Positions, velocities and accelerations of all joints at ``time`` (new arrays)."""
        n = self.n_joints
        _, r = self.sample_interval(float(time))
        return r[:n], r[n:2 * n], r[2 * n:]

    def find_segment(self, joint: int, time: float) -> int:
        """Index of joint ``joint``'s segment active at ``time`` (-1 before the first one)."""
        return self.joints[joint].find(time)

    def segments(self, joint: int) -> List[SplineSegment]:
        """The segments of one joint (1-DOF, for inspection)."""
        return self.joints[joint].segments()

    def __repr__(self) -> str:
        counts = [len(jp) for jp in self.joints]
        return (f"Trajectory({self.n_joints} joints, segments per joint {counts}, "
                f"{self.start_time:.6f}..{self.end_time:.6f})")
