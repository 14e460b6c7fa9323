"""Spline segments against closed-form values (linear, cubic, quintic; multi-DOF; degenerate)."""
from __future__ import annotations

import numpy as np
import pytest

from rospy_control.exceptions import RospyControlError
from rospy_control.trajectory import CUBIC, LINEAR, QUINTIC, PointState, SplineSegment, TrajectoryError
from rospy_control.trajectory.segment import evaluate, shift, spline_coefficients


def seg(t0, t1, p0, p1, v0=None, v1=None, a0=None, a1=None):
    return SplineSegment(t0, PointState(p0, v0, a0), t1, PointState(p1, v1, a1))


def close(actual, expected):
    np.testing.assert_allclose(np.asarray(actual), np.asarray(expected, dtype=float), rtol=1e-9, atol=1e-12)


# ------------------------------------------------------------------------------------------- linear
def test_linear_segment_closed_form_start_middle_end():
    s = seg(1.0, 3.0, [0.0, 2.0], [1.0, -2.0])
    assert s.order == LINEAR and s.dof == 2 and s.duration == 2.0
    for t, p in ((1.0, [0.0, 2.0]), (2.0, [0.5, 0.0]), (2.5, [0.75, -1.0]), (3.0, [1.0, -2.0])):
        pos, vel, acc = s.sample(t)
        close(pos, p)
        close(vel, [0.5, -2.0])
        close(acc, [0.0, 0.0])


def test_linear_segment_before_and_after_hold_the_ends_with_zero_velocity():
    s = seg(1.0, 3.0, [0.0, 2.0], [1.0, -2.0])
    pos, vel, acc = s.sample(0.0)
    close(pos, [0.0, 2.0])
    close(vel, [0.0, 0.0])
    close(acc, [0.0, 0.0])
    pos, vel, acc = s.sample(10.0)
    close(pos, [1.0, -2.0])
    close(vel, [0.0, 0.0])
    close(acc, [0.0, 0.0])


# ------------------------------------------------------------------------------------------- cubic
def test_cubic_segment_closed_form_rest_to_rest():
    # p = 3 s^2 - 2 s^3 with s = t / T, T = 2: scaled to 0..2 for DOF 0 and 1..-1 for DOF 1.
    s = seg(0.0, 2.0, [0.0, 1.0], [2.0, -1.0], [0.0, 0.0], [0.0, 0.0])
    assert s.order == CUBIC
    T = 2.0
    for t in (0.0, 0.5, 1.0, 1.7, 2.0):
        u = t / T
        shape = 3 * u ** 2 - 2 * u ** 3
        dshape = (6 * u - 6 * u ** 2) / T
        ddshape = (6 - 12 * u) / T ** 2
        pos, vel, acc = s.sample(t)
        close(pos, [2.0 * shape, 1.0 - 2.0 * shape])
        close(vel, [2.0 * dshape, -2.0 * dshape])
        close(acc, [2.0 * ddshape, -2.0 * ddshape])


def test_cubic_segment_matches_boundary_velocities():
    s = seg(0.5, 1.5, [0.3], [-0.2], [1.0], [-2.0])
    pos, vel, _ = s.sample(0.5)
    close(pos, [0.3])
    close(vel, [1.0])
    pos, vel, _ = s.sample(1.5)
    close(pos, [-0.2])
    close(vel, [-2.0])
    # outside: end position, zero velocity and acceleration
    pos, vel, acc = s.sample(1.6)
    close(pos, [-0.2])
    close(vel, [0.0])
    close(acc, [0.0])


# ------------------------------------------------------------------------------------------- quintic
def test_quintic_segment_closed_form_minimum_jerk():
    # p = 10 u^3 - 15 u^4 + 6 u^5, u = t / T
    T = 2.0
    s = seg(0.0, T, [0.0, 0.0, 5.0], [1.0, -3.0, 5.0], [0.0] * 3, [0.0] * 3, [0.0] * 3, [0.0] * 3)
    assert s.order == QUINTIC
    scale = np.array([1.0, -3.0, 0.0])
    for t in (0.0, 0.4, 1.0, 1.5, 2.0):
        u = t / T
        shape = 10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5
        d = (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / T
        dd = (60 * u - 180 * u ** 2 + 120 * u ** 3) / T ** 2
        pos, vel, acc = s.sample(t)
        close(pos, np.array([0.0, 0.0, 5.0]) + scale * shape)
        close(vel, scale * d)
        close(acc, scale * dd)
    close(s.sample(1.0)[0], [0.5, -1.5, 5.0])
    close(s.sample(1.0)[1], [0.9375, -2.8125, 0.0])  # 1.875 / T


def test_quintic_segment_matches_all_boundary_conditions_multi_dof():
    rng = np.random.default_rng(3)
    for _ in range(20):
        dof = 4
        p0, p1, v0, v1, a0, a1 = (rng.normal(size=dof) for _ in range(6))
        t0 = rng.uniform(-5, 5)
        t1 = t0 + rng.uniform(0.05, 3.0)
        s = seg(t0, t1, p0, p1, v0, v1, a0, a1)
        pos, vel, acc = s.sample(t0)
        np.testing.assert_allclose(pos, p0, atol=1e-9)
        np.testing.assert_allclose(vel, v0, atol=1e-9)
        np.testing.assert_allclose(acc, a0, atol=1e-9)
        pos, vel, acc = s.sample(t1)
        np.testing.assert_allclose(pos, p1, atol=1e-8)
        np.testing.assert_allclose(vel, v1, atol=1e-8)
        np.testing.assert_allclose(acc, a1, atol=1e-7)


def test_quintic_before_and_after_have_zero_velocity_and_acceleration():
    s = seg(1.0, 2.0, [0.0], [1.0], [0.5], [0.5], [1.0], [1.0])
    pos, vel, acc = s.sample(0.9)
    close(pos, [0.0])
    close(vel, [0.0])
    close(acc, [0.0])
    pos, vel, acc = s.sample(2.1)
    close(pos, [1.0])
    close(vel, [0.0])
    close(acc, [0.0])


# ------------------------------------------------------------------------------------------- order selection
@pytest.mark.parametrize("start, end, order", [
    (({"v": None, "a": None}), ({"v": [0.0], "a": [0.0]}), LINEAR),
    (({"v": [1.0], "a": None}), ({"v": [0.0], "a": None}), CUBIC),
    (({"v": [1.0], "a": [0.0]}), ({"v": [0.0], "a": None}), CUBIC),
    (({"v": None, "a": [1.0]}), ({"v": None, "a": [0.0]}), LINEAR),
    (({"v": [1.0], "a": [1.0]}), ({"v": [0.0], "a": [0.0]}), QUINTIC),
])
def test_order_is_the_lowest_common_specification(start, end, order):
    s = SplineSegment(0.0, PointState([0.0], start["v"], start["a"]), 1.0,
                      PointState([1.0], end["v"], end["a"]))
    assert s.order == order


def test_positions_only_segment_ignores_one_sided_velocity():
    s = SplineSegment(0.0, PointState([0.0], [5.0]), 1.0, PointState([1.0]))
    _, vel, _ = s.sample(0.0)
    close(vel, [1.0])  # linear: the 5.0 is ignored


# ------------------------------------------------------------------------------------------- degenerate
def test_zero_duration_segments_degenerate_gracefully():
    lin = seg(1.0, 1.0, [2.0], [3.0])
    pos, vel, acc = lin.sample(1.0)
    close(pos, [2.0])
    close(vel, [0.0])
    cub = seg(1.0, 1.0, [2.0], [3.0], [0.5], [0.0])
    pos, vel, _ = cub.sample(1.0)
    close(pos, [2.0])
    close(vel, [0.5])  # upstream: start velocity at the (only) instant
    qui = seg(1.0, 1.0, [2.0], [3.0], [0.5], [0.0], [4.0], [0.0])
    pos, vel, acc = qui.sample(1.0)
    close(pos, [2.0])
    close(acc, [4.0])
    for s in (lin, cub, qui):
        for t in (0.0, 2.0):
            pos, vel, acc = s.sample(t)
            assert np.all(np.isfinite(pos))
            close(vel, [0.0])
            close(acc, [0.0])


def test_vectorised_coefficients_handle_zero_durations_in_a_batch():
    c = spline_coefficients(QUINTIC, np.array([[0.0], [1.0]]), np.zeros((2, 3)), np.ones((2, 3)),
                            np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 3)))
    assert c.shape == (2, 3, 6)
    assert np.all(np.isfinite(c))
    close(c[0, :, 1:], np.zeros((3, 5)))
    close(evaluate(c[1], 1.0)[0], np.ones(3))


# ------------------------------------------------------------------------------------------- invalid input
@pytest.mark.parametrize("make, fragment", [
    (lambda: seg(2.0, 1.0, [0.0], [1.0]), "ends before it starts"),
    (lambda: seg(0.0, 1.0, [0.0], [1.0, 2.0]), "different sizes"),
    (lambda: seg(0.0, 1.0, [0.0, 1.0], [1.0, 2.0], [0.0], [0.0, 0.0]), "velocities has 1 value"),
    (lambda: seg(0.0, 1.0, [float("nan")], [1.0]), "non-finite"),
    (lambda: seg(0.0, float("inf"), [0.0], [1.0]), "finite"),
    (lambda: PointState([]), "at least one position"),
])
def test_invalid_segments_raise_trajectory_error(make, fragment):
    with pytest.raises(TrajectoryError, match=fragment) as info:
        make()
    assert isinstance(info.value, RospyControlError) and isinstance(info.value, ValueError)


def test_shift_reexpresses_polynomial_at_an_offset():
    rng = np.random.default_rng(1)
    c = rng.normal(size=(5, 6))
    delta = rng.uniform(0, 2, size=5)
    shifted = shift(c, delta)
    for tau in (0.0, 0.3, 1.1):
        for k in range(3):
            np.testing.assert_allclose(evaluate(shifted, tau)[k], evaluate(c, delta + tau)[k],
                                       rtol=1e-9, atol=1e-9)


def test_repr_names_the_type():
    assert "quintic" in repr(seg(0, 1, [0], [1], [0], [0], [0], [0]))
