"""Scalar angle helpers with the semantics of ROS's ``angles`` package.

The trajectory engine has its own vectorised ``shortest_angular_distance`` (numpy, all joints at
once); these are the scalar forms the per-joint PID controllers use in their update.
"""
from __future__ import annotations

import math

__all__ = ["normalize_angle_positive", "normalize_angle", "shortest_angular_distance",
           "shortest_angular_distance_with_large_limits"]

_TWO_PI = 2.0 * math.pi


def normalize_angle_positive(angle: float) -> float:
    """``angle`` mapped to [0, 2 pi)."""
    return math.fmod(math.fmod(angle, _TWO_PI) + _TWO_PI, _TWO_PI)


def normalize_angle(angle: float) -> float:
    """``angle`` mapped to (-pi, pi]."""
    angle = normalize_angle_positive(angle)
    return angle - _TWO_PI if angle > math.pi else angle


def shortest_angular_distance(from_angle: float, to_angle: float) -> float:
    """Signed shortest rotation from ``from_angle`` to ``to_angle``, in (-pi, pi]."""
    return normalize_angle(to_angle - from_angle)


def _two_pi_complement(angle: float) -> float:
    if angle > _TWO_PI or angle < -_TWO_PI:
        angle = math.fmod(angle, _TWO_PI)
    if angle < 0.0:
        return _TWO_PI + angle
    if angle > 0.0:
        return -_TWO_PI + angle
    return _TWO_PI


def shortest_angular_distance_with_large_limits(from_angle: float, to_angle: float, left_limit: float,
                                                right_limit: float) -> float:
    """Shortest rotation to ``to_angle`` that stays inside ``[left_limit, right_limit]`` (which may
    span more than 2 pi): the shorter of the two directions if it stays within the limits, else the
    other one, else (nothing works) the plain shortest distance."""
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
