"""Shared helpers of the trajectory downlink tests (trajectories, plan sampling)."""
from __future__ import annotations

from typing import List

import numpy as np

from rospy_control.board.core import TrajPoint


def min_jerk(p0, p1, duration: float, n: int = 11, t_offset: float = 0.0, derivs: int = 2) -> List[TrajPoint]:
    """Points of a minimum-jerk move (MoveIt-like shape) from p0 to p1, with v and a when asked."""
    p0 = np.asarray(p0, float)
    p1 = np.asarray(p1, float)
    pts = []
    for k in range(n):
        tau = k / (n - 1)
        s = 10 * tau ** 3 - 15 * tau ** 4 + 6 * tau ** 5
        ds = (30 * tau ** 2 - 60 * tau ** 3 + 30 * tau ** 4) / duration
        dds = (60 * tau - 180 * tau ** 2 + 120 * tau ** 3) / duration ** 2
        d = p1 - p0
        pts.append(TrajPoint(t_offset + tau * duration, p0 + s * d,
                             d * ds if derivs >= 1 else None, d * dds if derivs >= 2 else None))
    return pts


def run(core, t_from: float, t_to: float, dt: float = 0.002, heartbeat: bool = True) -> None:
    """Advance a BoardCore in executor-sized steps (board time only), keeping the host alive."""
    t = t_from
    while t < t_to - 1e-12:
        t = min(t_to, t + dt)
        if heartbeat:
            core.host_message(t)
        core.check(t)
        core.advance(t)


def plan_steps(core, axis: int, times) -> np.ndarray:
    """The commanded position in steps at the given board times (from the executed plan)."""
    segs = list(core.history) + list(core.plan)
    out = []
    for t in np.atleast_1d(times):
        seg = [s for s in segs if s.t0 <= t][-1]
        out.append(seg.eval(t)[axis] * core.spu[axis])
    return np.array(out)


def wait_until(predicate, timeout: float = 10.0, period: float = 0.01) -> bool:
    """Poll ``predicate`` until it is true or ``timeout`` (generous: the host is noisy) has passed."""
    import time
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(period)
    return bool(predicate())
