"""The motion every simulated joint shares: what follows the velocity update in one integration step.

Every simulated device (the MIT :class:`~.motor.SimulatedMotor`, the protocol devices' shared
:class:`~.joint.JointModel`, the RobStride and CiA 402 devices' own models) updates its velocity
under its own torque law, then calls :func:`move`: Coulomb friction as a velocity impulse that can
stop the joint (stiction), semi-implicit Euler for the position, inelastic end stops.  The models are
integrated lazily, up to the time of each frame; :func:`steps_due` says how many steps that is.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

__all__ = ["move", "steps_due", "MAX_STEPS"]

#: steps integrated at most per call (a long silence is not caught up over seconds)
MAX_STEPS = 2000


def steps_due(t: Optional[float], now: float, dt: float, max_steps: int = MAX_STEPS) -> Tuple[int, float]:
    """The steps of ``dt`` to integrate from ``t`` (the model's time, None: never integrated) up to
    ``now``, at most ``max_steps`` (then the last ones before ``now``), and the model's time after them.
    :returns: ``(n, t)``; ``n`` is 0 for a model never integrated (its time starts at ``now``) or when
    less than a step has passed (its time stays)."""
    if t is None:
        return 0, now
    n = int((now - t) / dt)
    if n <= 0:
        return 0, t
    if n > max_steps:
        n = max_steps
        t = now - n * dt
    return n, t + n * dt


def move(p: float, v: float, dt: float, f_imp: float, stop_min: float = -math.inf,
         stop_max: float = math.inf) -> Tuple[float, float]:
    """One step's motion from position ``p`` at the updated velocity ``v``: friction takes ``f_imp``
    (its velocity change over the step) off ``|v|``, stopping the joint rather than reversing it; the
    position moves by ``v dt``; an end stop ``stop_min``/``stop_max`` (none by default) holds it and
    keeps only a velocity that leaves the stop.  :returns: the new ``(p, v)``."""
    if v > f_imp:
        v -= f_imp
    elif v < -f_imp:
        v += f_imp
    else:
        v = 0.0
    p += v * dt
    if p < stop_min:
        return stop_min, max(v, 0.0)
    if p > stop_max:
        return stop_max, min(v, 0.0)
    return p, v
