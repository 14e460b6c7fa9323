"""Piecewise-polynomial position functions of time, one per axis, as the board executes them.

A :class:`Segment` covers ``[t0, t1)`` of absolute board time (seconds) with, per axis, the
coefficients ``c0..c5`` of ``p(t) = sum c_k (t - t0)^k``.  Between two trajectory points it is a
quintic (both points have positions, velocities and accelerations), a cubic (positions and
velocities) or a straight line (positions only), as joint_trajectory_controller interpolates.
"""
from __future__ import annotations

import math
from typing import Any, List

import numpy as np

HOLD_FOREVER = math.inf
_D1 = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
_D2 = np.array([2.0, 6.0, 12.0, 20.0])


class Segment:
    __slots__ = ("t0", "t1", "coef", "kind")

    def __init__(self, t0: float, t1: float, coef: np.ndarray, kind: str) -> None:
        self.t0 = t0
        self.t1 = t1
        self.coef = coef            # shape (n_axes, 6)
        self.kind = kind            # "quintic", "cubic", "linear", "hold", "ramp"

    @property
    def duration(self) -> float:
        return self.t1 - self.t0

    def shifted(self, dt: float) -> "Segment":
        return Segment(self.t0 + dt, self.t1 + dt, self.coef, self.kind)

    def eval(self, t, deriv: int = 0) -> np.ndarray:
        """Positions (deriv 0), velocities (1) or accelerations (2): shape (n_axes,) or (n_axes, len(t))."""
        scalar = np.ndim(t) == 0
        tau = np.atleast_1d(np.asarray(t, dtype=float)) - self.t0
        c = self.coef
        if deriv == 0:
            k = c
        elif deriv == 1:
            k = c[:, 1:] * _D1
        else:
            k = c[:, 2:] * _D2
        out = np.repeat(k[:, -1:], tau.size, axis=1)
        for j in range(k.shape[1] - 2, -1, -1):
            out = out * tau + k[:, j:j + 1]
        return out[:, 0] if scalar else out

    def state(self, t: float):
        return self.eval(t, 0), self.eval(t, 1), self.eval(t, 2)


def hermite(t0: float, t1: float, p0, v0, a0, p1, v1: Any, a1: Any) -> Segment:
    """The segment from state (p0, v0, a0) at t0 to point (p1, v1, a1) at t1.

    Quintic when the target has velocities and accelerations, cubic when it has velocities,
    linear when it has positions only (the start state's derivatives are then ignored).
    """
    T = t1 - t0
    if T <= 0:
        raise ValueError(f"segment duration {T} s is not positive")
    p0 = np.asarray(p0, float)
    p1 = np.asarray(p1, float)
    n = p0.shape[0]
    coef = np.zeros((n, 6))
    coef[:, 0] = p0
    if v1 is None:
        coef[:, 1] = (p1 - p0) / T
        return Segment(t0, t1, coef, "linear")
    v0 = np.asarray(v0, float)
    v1 = np.asarray(v1, float)
    if a1 is None:
        coef[:, 1] = v0
        coef[:, 2] = (3 * (p1 - p0) - (2 * v0 + v1) * T) / T ** 2
        coef[:, 3] = (2 * (p0 - p1) + (v0 + v1) * T) / T ** 3
        return Segment(t0, t1, coef, "cubic")
    a0 = np.asarray(a0, float)
    a1 = np.asarray(a1, float)
    dp = p1 - p0
    coef[:, 1] = v0
    coef[:, 2] = a0 / 2
    coef[:, 3] = (20 * dp - (8 * v1 + 12 * v0) * T - (3 * a0 - a1) * T ** 2) / (2 * T ** 3)
    coef[:, 4] = (-30 * dp + (14 * v1 + 16 * v0) * T + (3 * a0 - 2 * a1) * T ** 2) / (2 * T ** 4)
    coef[:, 5] = (12 * dp - 6 * (v1 + v0) * T - (a0 - a1) * T ** 2) / (2 * T ** 5)
    return Segment(t0, t1, coef, "quintic")


def hold(t0: float, p, t1: float = HOLD_FOREVER) -> Segment:
    p = np.asarray(p, float)
    coef = np.zeros((p.shape[0], 6))
    coef[:, 0] = p
    return Segment(t0, t1, coef, "hold")


def ramp_to_stop(t0: float, p0, v0, max_acceleration) -> List[Segment]:
    """All axes decelerate together from velocity v0 to rest, none beyond its max_acceleration.

    Every axis takes the same time T = max |v_i| / a_i, so the joint-space path direction is kept
    (the arm stops on its path); the returned segments are the ramp and the hold after it.
    """
    p0 = np.asarray(p0, float)
    v0 = np.asarray(v0, float)
    amax = np.asarray(max_acceleration, float)
    T = float(np.max(np.abs(v0) / amax)) if v0.size else 0.0
    if T <= 1e-9:
        return [hold(t0, p0)]
    coef = np.zeros((p0.shape[0], 6))
    coef[:, 0] = p0
    coef[:, 1] = v0
    coef[:, 2] = -v0 / (2 * T)
    ramp = Segment(t0, t0 + T, coef, "ramp")
    return [ramp, hold(t0 + T, ramp.eval(t0 + T))]


def crossings(s: np.ndarray, c: np.ndarray, d: np.ndarray, nz: np.ndarray, tt: np.ndarray):
    """The pulse times and directions where the rounded step count ``c`` of the sampled steps ``s``
    (at times ``tt``) changes: ``d`` its differences, ``nz`` where they are nonzero."""
    single = nz[np.abs(d[nz]) == 1]
    times_list = []
    dirs_list = []
    if single.size:
        up = d[single] > 0
        level = np.where(up, c[single] + 0.5, c[single] - 0.5)
        s0, s1 = s[single], s[single + 1]
        frac = np.clip((level - s0) / np.where(s1 != s0, s1 - s0, 1.0), 0.0, 1.0)
        times_list.append(tt[single] + frac * (tt[single + 1] - tt[single]))
        dirs_list.append(np.where(up, 1, -1).astype(np.int8))
    for j in nz[np.abs(d[nz]) > 1]:          # more than one step in a sample (not within limits)
        k = int(d[j])
        sign = 1 if k > 0 else -1
        levels = c[j] + sign * (0.5 + np.arange(abs(k)))
        frac = np.clip((levels - s[j]) / (s[j + 1] - s[j]), 0.0, 1.0)
        times_list.append(tt[j] + frac * (tt[j + 1] - tt[j]))
        dirs_list.append(np.full(abs(k), sign, dtype=np.int8))
    times = np.concatenate(times_list)
    dirs = np.concatenate(dirs_list)
    order = np.argsort(times, kind="stable")
    return times[order], dirs[order]
