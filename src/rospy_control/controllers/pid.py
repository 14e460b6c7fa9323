"""A PID controller with control_toolbox's ``Pid`` semantics.

``command = p*e + i_term + d*de`` where, per call with ``dt > 0``:

* ``i_error += dt * e`` (integral of the error);
* with ``antiwindup``: ``i_error`` itself is clamped to ``[i_min/|i|, i_max/|i|]`` and
  ``i_term = i * i_error``; without it, ``i_term = clamp(i * i_error, i_min, i_max)`` (the integral
  keeps growing but its contribution is limited -- control_toolbox's behaviour);
* ``de`` is either given (``compute_command(error, error_dot, dt)``) or the finite difference of
  the error since the previous call (``compute_command(error, dt)``).

``dt <= 0`` or a non-finite error returns 0 and leaves the state untouched.

ROS parameters (:meth:`Pid.from_params`, in the ``pid`` sub-namespace of a controller): ``p``
(required), ``i``, ``d`` (default 0), ``i_clamp`` (sets ``i_max = |i_clamp|``, ``i_min = -|i_clamp|``),
``i_clamp_max`` / ``i_clamp_min`` (override), ``antiwindup`` (default False).
"""
from __future__ import annotations

import math
from typing import NamedTuple, Optional, Tuple

from rospy_control.exceptions import ConfigError

__all__ = ["Gains", "Pid"]


class Gains(NamedTuple):
    p: float = 0.0
    i: float = 0.0
    d: float = 0.0
    i_max: float = 0.0
    i_min: float = 0.0
    antiwindup: bool = False


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


class Pid:
    """PID with integral clamping (see the module docstring)."""

    def __init__(self, p: float = 0.0, i: float = 0.0, d: float = 0.0, i_max: float = 0.0,
                 i_min: float = 0.0, antiwindup: bool = False) -> None:
        self.gains = Gains(float(p), float(i), float(d), float(i_max), float(i_min), bool(antiwindup))
        self.reset()

    @classmethod
    def from_params(cls, nh) -> "Pid":
        """Build from parameters under ``nh`` (e.g. ``controller_nh.child('pid')``).

        :raises ConfigError: no ``p`` gain, or a gain that is not a number.
        """
        if not nh.has_param("p"):
            raise ConfigError(f"No p gain specified for pid. Namespace: {nh.namespace}", nh.namespace)

        def number(key: str, default: float) -> float:
            value = nh.get_param(key, default)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ConfigError(f"PID gain '{key}' must be a number, got {value!r}", nh.resolve_name(key))
            return float(value)

        i_clamp = abs(number("i_clamp", 0.0))
        i_max = number("i_clamp_max", i_clamp)
        i_min = number("i_clamp_min", -i_clamp)
        antiwindup = nh.get_param("antiwindup", False)
        return cls(number("p", 0.0), number("i", 0.0), number("d", 0.0), i_max, i_min, bool(antiwindup))

    def set_gains(self, p: float, i: float, d: float, i_max: float, i_min: float,
                  antiwindup: bool = False) -> None:
        self.gains = Gains(float(p), float(i), float(d), float(i_max), float(i_min), bool(antiwindup))

    def get_gains(self) -> Gains:
        return self.gains

    def reset(self) -> None:
        """Forget the error history and the integral."""
        self.p_error_last = 0.0
        self.p_error = 0.0
        self.i_error = 0.0
        self.d_error = 0.0
        self.command = 0.0

    def get_current_pid_errors(self) -> Tuple[float, float, float]:
        """``(p_error, i_error, d_error)`` of the last computation."""
        return self.p_error, self.i_error, self.d_error

    def compute_command(self, error: float, dt: float, error_dot: Optional[float] = None) -> float:
        """Command for ``error`` after ``dt`` seconds; ``error_dot`` defaults to the finite difference."""
        if dt <= 0.0 or not math.isfinite(error):
            return 0.0
        if error_dot is None:
            error_dot = (error - self.p_error_last) / dt
            self.p_error_last = error
        if not math.isfinite(error_dot):
            return 0.0
        g = self.gains
        self.p_error = error
        self.d_error = error_dot
        self.i_error += dt * error
        if g.antiwindup and g.i != 0.0:
            self.i_error = _clamp(self.i_error, g.i_min / abs(g.i), g.i_max / abs(g.i))
        i_term = g.i * self.i_error
        if not g.antiwindup:
            i_term = _clamp(i_term, g.i_min, g.i_max)
        self.command = g.p * error + i_term + g.d * error_dot
        return self.command
