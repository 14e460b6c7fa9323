"""Trajectory limits: bounds of executed points, usable start states, no overflow into NaN/inf."""
from __future__ import annotations

import logging
import math
import warnings

import numpy as np
import pytest

from rospy_control.trajectory import (
    INVALID_GOAL, PointState, Trajectory, TrajectoryError, TrajectoryLimits, TrajectoryRejected,
    init_joint_trajectory,
)
from rospy_control.trajectory import limits as L
from traj_testutil import point, trajectory

J = ["elbow", "wrist"]  # elbow: revolute +-2.5 rad, 3 rad/s; wrist: continuous, no limits
LOGGER = "rosout.rospy_control.trajectory.message"
HUGE = [1e6, 1e154, 1e300, 1.79769e308]


def arm_limits(**overrides) -> TrajectoryLimits:
    values = dict(lower=[-2.5, -math.inf], upper=[2.5, math.inf], max_velocity=[3.0, math.inf],
                  max_acceleration=None)
    values.update(overrides)
    return TrajectoryLimits(J, **values)


def build(points, limits=None, names=J, current=None, **kwargs):
    return init_joint_trajectory(trajectory(names, points), J, now=100.0, uptime=0.0,
                                 current=Trajectory.hold(0.0, [0.0, 0.0]) if current is None else current,
                                 continuous=[False, True], limits=arm_limits() if limits is None else limits,
                                 **kwargs)


def rejected(points, **kwargs) -> str:
    with pytest.raises(TrajectoryRejected) as info:
        build(points, **kwargs)
    assert info.value.code == INVALID_GOAL
    return info.value.message


# ------------------------------------------------------------------------------------------ the bounds
def test_bounds_follow_the_documented_factors_and_caps():
    lim = TrajectoryLimits(["a", "b", "c"], lower=[-1.0, -1e300, -math.inf], upper=[1.0, 1e300, math.inf],
                           max_velocity=[2.0, 1e300, 0.0], max_acceleration=[5.0, math.inf, -1.0])
    assert L.VELOCITY_LIMIT_FACTOR == 4.0 and L.ACCELERATION_LIMIT_FACTOR == 10.0
    np.testing.assert_allclose(lim.velocity_bound, [8.0, L.MAX_VELOCITY, L.MAX_VELOCITY])  # <= 0: no limit
    np.testing.assert_allclose(lim.acceleration_bound, [50.0, L.MAX_ACCELERATION, L.MAX_ACCELERATION])
    assert lim.position_low[0] == pytest.approx(-1.0) and lim.position_high[0] == pytest.approx(1.0)
    assert lim.position_low[1] == pytest.approx(-L.MAX_POSITION)  # a URDF's 1e300 is capped
    assert lim.position_high[2] == pytest.approx(L.MAX_POSITION)


def test_unlimited_has_only_the_absolute_bounds():
    lim = TrajectoryLimits.unlimited(J)
    assert lim.violation("position", np.array([[L.MAX_POSITION, -L.MAX_POSITION]]), [0, 1]) is None
    assert "outside [-1000000.0, 1000000.0]" in lim.violation("position", np.array([[0.0, 2e6]]), [0, 1])
    assert lim.violation("velocity", np.array([[L.MAX_VELOCITY, 0.0]]), [0, 1]) is None
    assert lim.violation("acceleration", np.array([[0.0, 2 * L.MAX_ACCELERATION]]), [0, 1]) is not None


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(lower=[1.0, 0.0], upper=[0.0, 1.0]), "lower position limit 1.0 > upper"),
    (dict(lower=[0.0]), "1 value"),
    (dict(max_velocity=[math.nan, 1.0]), "NaN"),
])
def test_inconsistent_limits_are_refused(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        TrajectoryLimits(J, **kwargs)


def test_position_tolerance_accepts_a_limit_after_a_decimal_round_trip():
    lim = arm_limits()
    assert lim.violation("position", np.array([[2.5 + 1e-12, 0.0]]), [0, 1]) is None
    assert lim.violation("position", np.array([[2.5 + 1e-6, 0.0]]), [0, 1]) is not None


# ------------------------------------------------------------------------------------------ rejections
@pytest.mark.parametrize("value", HUGE + [-v for v in HUGE])
def test_absurd_positions_are_rejected_naming_point_joint_value_and_limits(value):
    text = rejected([point([0.1, 0.0], 0.5), point([value, 0.0], 1.0)])
    assert text == (f"Trajectory point 1: position {value!r} of joint 'elbow' is outside its position limits "
                    f"[-2.5, 2.5]")


def test_a_position_just_outside_the_limit_is_rejected():
    assert "position -2.55 of joint 'elbow'" in rejected([point([-2.55, 0.0], 0.5)])


@pytest.mark.parametrize("value", [1.5e6] + HUGE[1:])
def test_continuous_joints_are_exempt_from_limits_but_bounded(value):
    build([point([0.0, 4.0 * math.pi], 0.5)])  # several turns: accepted (wrapped)
    build([point([0.0, -L.MAX_POSITION], 0.5)])
    text = rejected([point([0.0, value], 0.5)])
    assert "joint 'wrist'" in text and "without position limits" in text and "point 0" in text


@pytest.mark.parametrize("value", HUGE)
def test_absurd_velocities_are_rejected(value):
    text = rejected([point([0.0, 0.0], 0.5, [0.0, 0.0]), point([0.1, 0.0], 1.0, [value, 0.0])])
    assert text == (f"Trajectory point 1: velocity {value!r} of joint 'elbow' is beyond 4 times its velocity "
                    f"limit 3.0 (|velocity| <= 12.0)")
    text = rejected([point([0.0, 0.0], 0.5, [0.0, -value])])
    assert "velocity" in text and "joint 'wrist'" in text and "without a velocity limit" in text


def test_velocity_factor_boundary():
    build([point([0.1, 0.0], 0.5, [12.0, L.MAX_VELOCITY])])
    assert "velocity 12.5" in rejected([point([0.1, 0.0], 0.5, [12.5, 0.0])])


@pytest.mark.parametrize("value", HUGE)
def test_absurd_accelerations_are_rejected(value):
    text = rejected([point([0.0, 0.0], 0.5, [0.0, 0.0], [0.0, value])])
    assert text == (f"Trajectory point 0: acceleration {value!r} of joint 'wrist' is beyond 100000.0, the "
                    f"bound for joints without an acceleration limit")


def test_acceleration_limit_from_the_parameters_gets_the_factor():
    lim = arm_limits(max_acceleration=[2.0, math.inf])
    build([point([0.1, 0.0], 0.5, [0.0, 0.0], [20.0, 0.0])], limits=lim)
    text = rejected([point([0.1, 0.0], 0.5, [0.0, 0.0], [-20.5, 0.0])], limits=lim)
    assert "acceleration -20.5 of joint 'elbow' is beyond 10 times its acceleration limit 2.0" in text


def test_point_index_counts_points_without_velocities():
    # velocities only on points 0 and 2: the error must name point 2, not the 2nd row with velocities
    text = rejected([point([0.0, 0.0], 0.5, [0.0, 0.0]), point([0.1, 0.0], 1.0),
                     point([0.2, 0.0], 1.5, [99.0, 0.0])])
    assert text.startswith("Trajectory point 2: velocity 99.0")


def test_reordered_joints_are_checked_against_their_own_limits():
    build([point([3.0, 0.0], 0.5)], names=["wrist", "elbow"])  # 3.0 rad on the continuous wrist: fine
    text = rejected([point([0.0, 3.0], 0.5)], names=["wrist", "elbow"])
    assert "position 3.0 of joint 'elbow'" in text


def test_dropped_points_are_not_limit_checked():
    # the MoveIt case: point 0 (time 0, stamp 0) is the current state, e.g. slightly beyond a limit
    res = build([point([-2.55, 0.0], 0.0), point([-2.4, 0.0], 0.5)])
    assert res.first_point == 1


def test_without_limits_only_finiteness_is_checked():
    init_joint_trajectory(trajectory(J, [point([1e300, 0.0], 0.5)]), J, now=0.0)


# ------------------------------------------------------------------------------------------ times
def test_absurd_times_are_rejected():
    for t in (1e10, 1e300):
        assert "beyond +-1e+09 s" in rejected([point([0.0, 0.0], t)])
    assert "point 0 has a time_from_start of -1e+300" in rejected([point([0.0, 0.0], -1e300),
                                                                   point([0.1, 0.0], 1.0)])
    with pytest.raises(TrajectoryRejected, match="header.stamp .* more than 1e\\+09 s away"):
        init_joint_trajectory(trajectory(J, [point([0.0, 0.0], 1.0)], stamp=1e300), J, now=100.0)


# ------------------------------------------------------------------------------------------ longer points
def test_points_longer_than_joint_names_use_the_first_values(caplog, monkeypatch):
    import rospy_control.trajectory.message as message
    from rospy_control.log import Throttle
    monkeypatch.setattr(message, "_extra_values_throttle", Throttle(10.0))
    msg = trajectory(["wrist"], [point([0.5, 7.0], 1.0, [0.0, 1.0], [0.0, 2.0]), point([0.6, 8.0], 2.0)])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        res = init_joint_trajectory(msg, J, now=0.0, current=Trajectory.hold(0.0, [0.1, 0.2]),
                                    allow_partial_joints_goal=True, limits=arm_limits())
        init_joint_trajectory(msg, J, now=0.0, current=Trajectory.hold(0.0, [0.1, 0.2]),
                              allow_partial_joints_goal=True, limits=arm_limits())
    p, _, _ = res.trajectory.sample(2.0)
    assert p.tolist() == pytest.approx([0.1, 0.6])
    assert res.trajectory.sample(1.0)[0][1] == pytest.approx(0.5)
    warned = [r for r in caplog.records if "ignoring the rest" in r.getMessage()]
    assert len(warned) == 1  # throttled
    assert "2 value(s) per field for 1 joint(s) ['wrist']" in warned[0].getMessage()


def test_extra_values_are_not_validated():
    build([point([0.1, 0.0, math.nan, 1e300], 0.5)])


@pytest.mark.parametrize("velocities, accelerations, fragment", [
    ([0.0, 0.0], [], "2 velocity value(s) for 3 position value(s)"),
    ([0.0, 0.0, 0.0], [0.0, 0.0], "2 acceleration value(s) for 3 position value(s)"),
])
def test_longer_points_need_velocities_and_accelerations_of_their_size(velocities, accelerations, fragment):
    assert fragment in rejected([point([0.1, 0.0, 5.0], 0.5, velocities, accelerations)])


def test_shorter_points_are_still_rejected():
    assert "point 0 has 1 position value(s) for 2 joint(s)" in rejected([point([0.1], 0.5)])


# ------------------------------------------------------------------------------------------ no overflow
def test_extreme_accepted_values_give_finite_coefficients_without_warnings():
    lim = TrajectoryLimits.unlimited(J)
    big_p, big_v, big_a = L.MAX_POSITION, L.MAX_VELOCITY, L.MAX_ACCELERATION
    cases = [
        [point([big_p, -big_p], 1e-9, [big_v, -big_v], [big_a, -big_a]),
         point([-big_p, big_p], 2e-9, [-big_v, big_v], [-big_a, big_a])],
        [point([big_p, -big_p], 1.0, [big_v, -big_v], [big_a, -big_a]),
         point([-big_p, big_p], L.MAX_TIME, [-big_v, big_v], [-big_a, big_a])],
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for points in cases:
            res = init_joint_trajectory(trajectory(J, points), J, now=0.0, uptime=0.0,
                                        current=Trajectory.hold(0.0, [0.0, 0.0]), limits=lim)
            assert np.isfinite(res.trajectory.matrices).all()
            for t in np.linspace(0.0, res.end_time, 50):
                assert all(np.isfinite(x).all() for x in res.trajectory.sample(t))


def test_segments_too_short_for_their_values_are_rejected_not_nan():
    # float times (duck-typed messages) can be closer than any ROS Duration: 1e-300 s apart
    msg = trajectory(J, [point([0.0, 0.0], 1e-300, [0.0, 0.0]), point([1.0, 1.0], 2e-300, [0.0, 0.0])])
    with pytest.raises(TrajectoryRejected, match="cannot be executed.*not finite") as info:
        init_joint_trajectory(msg, J, now=0.0, uptime=0.0, current=Trajectory.hold(-1.0, [0.0, 0.0]))
    assert info.value.code == INVALID_GOAL


def test_trajectory_refuses_non_finite_coefficients():
    from rospy_control.trajectory import JointPieces
    with pytest.raises(TrajectoryError, match="not finite"):
        Trajectory([JointPieces([0.0], [1.0], [[0.0, math.inf, 0, 0, 0, 0]])])
    with pytest.raises(TrajectoryError, match="times must be finite"):
        JointPieces([0.0], [math.nan], [[0.0] * 6])


# ------------------------------------------------------------------------------------------ start states
def test_start_state_keeps_a_usable_desired_state():
    lim = arm_limits()
    p, v, ok = lim.start_state(np.array([1.0, 7.0]), np.array([-2.0, 50.0]), np.array([0.9, 6.9]))
    assert ok.all() and p.tolist() == [1.0, 7.0] and v.tolist() == [-2.0, 50.0]


@pytest.mark.parametrize("desired_p, desired_v", [
    (1e297, 0.0), (math.nan, 0.0), (math.inf, 0.0), (2.6, 0.0), (1.0, 13.0), (1.0, math.nan), (1.0, -1e300),
])
def test_start_state_falls_back_to_the_measured_position_at_rest(desired_p, desired_v):
    lim = arm_limits()
    p, v, ok = lim.start_state(np.array([desired_p, 7.0]), np.array([desired_v, 1.0]), np.array([-2.55, 6.9]))
    assert ok.tolist() == [False, True]
    assert p.tolist() == [-2.55, 7.0]  # measured, even outside the limits: that is where the joint is
    assert v.tolist() == [0.0, 1.0]


def test_start_state_without_a_measurement_clips_into_the_limits():
    lim = arm_limits()
    nan2 = np.array([math.nan, math.nan])
    p, v, _ = lim.start_state(np.array([1e297, math.nan]), np.array([0.0, 0.0]), nan2)
    assert p.tolist() == [2.5, 0.0] and v.tolist() == [0.0, 0.0]
    p, _, _ = lim.start_state(np.array([-3.0, 1.0]), np.array([0.0, 0.0]), None)
    assert p.tolist() == [-2.5, 1.0]


def test_broken_current_state_is_not_inherited_by_the_bridge():
    # the current trajectory holds an absurd desired state (as an earlier version could leave it)
    broken = Trajectory.from_states([0.0], [PointState([1e297, 0.5], [0.0, 0.0])])
    res = build([point([0.2, 0.4], 1.0, [0.0, 0.0])], current=broken, measured=[0.1, 0.45])
    p, v, a = res.trajectory.sample(0.0)
    assert p.tolist() == pytest.approx([0.1, 0.5])  # elbow from the measured position, wrist untouched
    for t in np.linspace(0.0, 1.0, 21):
        p, v, a = res.trajectory.sample(t)
        assert np.isfinite(p).all() and np.isfinite(v).all() and np.isfinite(a).all()
        assert -2.5 <= p[0] <= 2.5
    assert res.trajectory.sample(1.0)[0].tolist() == pytest.approx([0.2, 0.4])
