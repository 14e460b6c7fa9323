"""TrajectoryExecutor with joint limits: absurd goals, holds from a usable state, prompt cancels.

Reliability suite item 1: one goal with a finite but absurd value (elbow at 1e6 rad, 1.79769e308)
used to be accepted; the stop ramp then started from the absurd desired state and every later goal
aborted, or the state turned NaN and cancels were never answered.
"""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from rospy_control.trajectory import (
    ABORTED, INVALID_GOAL, PATH_TOLERANCE_VIOLATED, PREEMPTED, SUCCEEDED, PointState, Trajectory,
    TrajectoryExecutor, TrajectoryLimits,
)
from rospy_control.trajectory import executor as executor_module
from traj_testutil import LagJoint, Loop, goal, point, rrbot_params, tolerance, trajectory

J = ["elbow", "wrist"]  # elbow: revolute +-2.5 rad, 3 rad/s; wrist: continuous
LOGGER = "rosout.rospy_control.trajectory.executor"
HUGE = [1e6, 1e154, 1e300, 1.79769e308]


def arm_limits() -> TrajectoryLimits:
    return TrajectoryLimits(J, lower=[-2.5, -math.inf], upper=[2.5, math.inf], max_velocity=[3.0, math.inf])


def make_loop(stop=0.2, x0=(0.0, 0.0), **params) -> Loop:
    ex = TrajectoryExecutor.from_params(J, rrbot_params(J, stop_trajectory_duration=stop, **params),
                                        continuous=[False, True], limits=arm_limits())
    return Loop(ex, LagJoint(list(x0)))


def rest(p, t):
    return point(p, t, [0.0] * len(p), [0.0] * len(p))


def assert_desired_sane(loop, since=0):
    for _, p, v, a in loop.desired[since:]:
        assert np.isfinite(p).all() and np.isfinite(v).all() and np.isfinite(a).all(), (p, v, a)
        assert -2.5 <= p[0] <= 2.5, p


def run_until_done(loop, key, seconds=3.0):
    for _ in range(int(round(seconds / loop.dt))):
        loop.step()
        if loop.events_for(key):
            return loop.events_for(key)
    return []


def garbage_plan(ex, traj, goal_key):
    """Swap in a plan executing ``traj`` for ``goal_key`` (no tolerances), bypassing validation:
    the state an earlier version could be left in."""
    goal = executor_module._Goal(goal_key, len(J))
    plan = executor_module._Plan(traj, ex._plan.tolerances.none(len(J)), goal, None)
    with ex._state_lock:
        ex._plan = plan
    return plan


def against_the_hard_stop(loop):
    """The elbow cannot follow the absurd command (it sits at its hard stop)."""
    loop.robot.stuck = np.array([True, False])


# ------------------------------------------------------------------------------------------- the repro
@pytest.mark.parametrize("value", HUGE)
def test_absurd_goal_is_rejected_and_later_valid_goals_succeed(value):
    loop = make_loop()
    loop.run(0.5)
    code, text = loop.ex.accept(trajectory(J, [point([value, 0.0], 0.5)]), goal_key="absurd")
    assert code == INVALID_GOAL
    assert "joint 'elbow'" in text and "point 0" in text and repr(value) in text and "[-2.5, 2.5]" in text
    for k, target in enumerate(([0.5, 0.3], [-0.4, -0.2], [0.0, 0.0])):  # 5, 10 and 15 s later
        loop.run(5.0)
        code, _ = loop.ex.accept(trajectory(J, [rest(target, 1.0)]), goal_key=k)
        assert code == 0
        assert [(e.goal_key, e.status) for e in run_until_done(loop, k)] == [(k, SUCCEEDED)]
        assert loop.robot.x.tolist() == pytest.approx(target, abs=0.01)
    assert loop.events_for("absurd") == []
    assert_desired_sane(loop)


@pytest.mark.parametrize("field", ["positions", "velocities", "accelerations"])
@pytest.mark.parametrize("value", HUGE)
def test_huge_values_in_any_field_are_rejected_and_the_state_stays_finite(field, value):
    loop = make_loop()
    loop.run(0.2)
    before = loop.ex.trajectory
    values = {"positions": [0.1, 0.1], "velocities": [0.0, 0.0], "accelerations": [0.0, 0.0]}
    values[field] = [value, 0.1] if field == "positions" else [value, 0.0]
    msg = trajectory(J, [point(values["positions"], 0.5, values["velocities"], values["accelerations"])])
    code, text = loop.ex.accept(msg, goal_key="g")
    assert code == INVALID_GOAL and "Trajectory point 0" in text and repr(value) in text
    assert loop.ex.trajectory is before
    loop.run(0.5)
    fb = loop.ex.feedback()
    for arr in (fb.desired_positions, fb.desired_velocities, fb.desired_accelerations, fb.error_positions):
        assert np.isfinite(arr).all()
    assert_desired_sane(loop)


def test_absurd_topic_command_is_rejected_with_an_error_and_nothing_executes(caplog):
    loop = make_loop()
    loop.run(0.2)
    before = loop.ex.trajectory
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        code, _ = loop.ex.accept(trajectory(J, [point([1e6, 0.0], 0.5)]))
    assert code == INVALID_GOAL
    assert loop.ex.trajectory is before
    (record,) = [r for r in caplog.records if "Rejected trajectory command" in r.getMessage()]
    assert record.levelno == logging.ERROR
    assert "elbow" in record.getMessage() and "nothing executed" in record.getMessage()
    loop.run(0.5)
    assert loop.robot.x.tolist() == pytest.approx([0.0, 0.0], abs=1e-9)


def test_rejected_goal_is_logged_as_a_warning(caplog):
    loop = make_loop()
    loop.run(0.1)
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        loop.ex.accept(trajectory(J, [point([1e6, 0.0], 0.5)]), goal_key="g")
    (record,) = [r for r in caplog.records if "Rejected trajectory goal" in r.getMessage()]
    assert record.levelno == logging.WARNING


# ------------------------------------------------------------------------------------------- holds
@pytest.mark.parametrize("stop", [0.0, 0.2])
@pytest.mark.parametrize("desired", [(math.nan, 0.0), (1e297, 0.0), (math.inf, 0.0), (2.6, 0.0),
                                     (1.0, math.nan), (1.0, 1e300), (1.0, 20.0)])
def test_hold_never_starts_from_an_unusable_desired_state(stop, desired):
    loop = make_loop(stop=stop)
    loop.run(0.1)
    measured = np.array([0.3, 0.2])
    plan = loop.ex._hold_plan_from(1.0, measured, np.array([desired[0], 0.25]), np.array([desired[1], 0.0]),
                                   None)
    for t in np.linspace(1.0, 1.5, 11):
        p, v, a = plan.trajectory.sample(t)
        assert p[0] == 0.3 and v[0] == 0.0 and a[0] == 0.0  # the measured position, at rest
    # the usable joint keeps upstream's rule: measured without a ramp, desired with one
    assert plan.trajectory.sample(1.5)[0][1] == pytest.approx(0.2 if stop == 0.0 else 0.25)


def test_hold_without_a_measurement_uses_the_desired_position():
    loop = make_loop(stop=0.0)
    loop.run(0.1)
    plan = loop.ex._hold_plan_from(1.0, np.array([math.nan, 0.2]), np.array([0.4, 0.1]), np.zeros(2), None)
    assert plan.trajectory.sample(1.0)[0].tolist() == [0.4, 0.2]


def test_abort_with_a_stop_ramp_does_not_continue_an_unusable_desired_velocity():
    # positions only: 0 -> 2.4 rad in 0.05 s is a linear segment at 48 rad/s (the point is valid, the
    # implied velocity is not checked).  A stop ramp from 48 rad/s would run 4.8 rad on, far past the
    # 2.5 rad limit; the hold must start from the measured position instead.
    loop = make_loop(stop=0.2)
    loop.robot.speed_scale = 0.2  # a slow robot: the path tolerance aborts the goal mid-segment
    loop.run(0.1)
    msg = trajectory(J, [point([2.4, 0.0], 0.05), point([2.45, 0.0], 0.5)])
    assert loop.ex.accept_goal(goal(msg, path_tolerance=[tolerance("elbow", position=0.05)]), "g") == (0, "")
    loop.run(1.0, until_event=True)
    (event,) = loop.events
    assert (event.status, event.error_code) == (ABORTED, PATH_TOLERANCE_VIOLATED)
    at_abort = loop.robot.x[0]
    n = len(loop.desired)
    loop.run(0.5)
    assert_desired_sane(loop, n)
    held = [d[1][0] for d in loop.desired[n:]]
    assert max(held) - min(held) == 0.0  # a hold at the measured position of the abort cycle, no ramp on
    assert abs(held[0] - at_abort) < 0.2


def test_start_with_an_absurd_measured_velocity_starts_at_rest():
    ex = TrajectoryExecutor.from_params(J, rrbot_params(J, stop_trajectory_duration=0.2), [False, True],
                                        limits=arm_limits())
    ex.start(10.0, [1.0, 0.0], [1e300, 0.5])
    p, v, _ = ex.update(10.01, 0.01, [1.0, 0.0], [0.0, 0.0])
    assert p[0] == 1.0 and v[0] == 0.0 and 0.0 < v[1] < 0.5


# ------------------------------------------------------------------------------------------- cancel, preempt
def broken_trajectory(t0: float) -> Trajectory:
    """Finite but absurd: what a stop ramp from an absurd desired state looked like (1e297 rad)."""
    return Trajectory.from_states([t0, t0 + 5.0], [PointState([1e297, 0.1], [1e300, 0.0]),
                                                   PointState([1e297, 0.1], [0.0, 0.0])])


@pytest.mark.parametrize("stop", [0.0, 0.2])
def test_cancel_is_answered_at_once_whatever_the_goal_held(stop):
    loop = make_loop(stop=stop)
    loop.run(0.2)
    garbage_plan(loop.ex, broken_trajectory(loop.ex.uptime), "g")
    against_the_hard_stop(loop)
    loop.run(0.1)
    measured = loop.robot.x.copy()
    assert loop.ex.cancel("g") is True
    assert [(e.goal_key, e.status) for e in loop.ex.poll_events()] == [("g", PREEMPTED)]  # no cycle needed
    n = len(loop.desired)
    loop.run(0.3)
    assert_desired_sane(loop, n)
    assert loop.desired[n][1][0] == pytest.approx(measured[0], abs=0.05)


def test_preemption_over_a_broken_plan_is_immediate_and_the_new_goal_inherits_nothing():
    loop = make_loop(stop=0.2)
    loop.run(0.2)
    garbage_plan(loop.ex, broken_trajectory(loop.ex.uptime), "old")
    against_the_hard_stop(loop)
    loop.run(0.1)
    code, _ = loop.ex.accept(trajectory(J, [rest([0.5, 0.3], 1.0)]), goal_key="new")
    assert code == 0
    loop.robot.stuck[:] = False
    assert [(e.goal_key, e.status) for e in loop.ex.poll_events()] == [("old", PREEMPTED)]
    n = len(loop.desired)
    assert [(e.goal_key, e.status) for e in run_until_done(loop, "new")] == [("new", SUCCEEDED)]
    assert_desired_sane(loop, n)
    assert loop.robot.x.tolist() == pytest.approx([0.5, 0.3], abs=0.01)


def test_empty_goal_and_hold_over_a_broken_plan():
    loop = make_loop(stop=0.2)
    loop.run(0.2)
    garbage_plan(loop.ex, broken_trajectory(loop.ex.uptime), "old")
    against_the_hard_stop(loop)
    loop.run(0.05)
    assert loop.ex.accept(trajectory(J, []), goal_key="empty") == (0, "")
    n = len(loop.desired)
    loop.run(1.0)
    assert_desired_sane(loop, n)
    assert [(e.goal_key, e.status) for e in loop.events] == [("old", PREEMPTED), ("empty", SUCCEEDED)]
    garbage_plan(loop.ex, broken_trajectory(loop.ex.uptime), "again")
    assert loop.ex.hold("test") is True
    n = len(loop.desired)
    loop.run(0.3)
    assert_desired_sane(loop, n)


# ------------------------------------------------------------------------------------------ stop ramps
# Found by fuzzing: a goal the arm could not follow aborted while its desired state
# raced towards a limit at a usable speed (below 4x the velocity limit); the stop ramp from that state
# travels 0.625 * duration * v before it rests, and so commanded the joint past its limit (shoulder_lift
# to 2.24 rad against 2.0).  The ramp's start velocity is now scaled so that it rests on the limit.
@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_stop_ramp_from_the_desired_state_never_crosses_a_position_limit(sign):
    loop = make_loop(stop=0.5)
    loop.run(0.1)
    measured = np.array([sign * 2.3, 0.0])
    plan = loop.ex._hold_plan_from(1.0, measured, np.array([sign * 2.3, 0.0]), np.array([sign * 8.0, 8.0]),
                                   None)
    for k in range(60):
        p, v, _ = plan.trajectory.sample(1.0 + 0.01 * k)
        assert -2.5 <= p[0] <= 2.5, (k, p)
    p_end, v_end, _ = plan.trajectory.sample(1.6)
    assert p_end[0] == pytest.approx(sign * 2.5) and v_end.tolist() == [0.0, 0.0]
    assert p_end[1] == pytest.approx(0.625 * 0.5 * 8.0)  # continuous joint: no limit, the ramp unchanged


def test_stop_ramp_at_the_limit_holds_there():
    loop = make_loop(stop=0.5)
    plan = loop.ex._hold_plan_from(1.0, np.array([2.5, 0.0]), np.array([2.5, 0.0]), np.array([3.0, 0.0]),
                                   None)
    assert plan.trajectory.sample(1.6)[0][0] == pytest.approx(2.5)


def test_start_ramp_from_a_fast_measured_state_stops_inside_the_limits():
    ex = TrajectoryExecutor.from_params(J, rrbot_params(J, stop_trajectory_duration=0.5),
                                        continuous=[False, True],
                                        limits=arm_limits())
    ex.start(10.0, [-2.4, 0.0], [-6.0, 0.0])
    for k in range(60):
        p, _, _ = ex.trajectory.sample(0.01 * k)
        assert p[0] >= -2.5, (k, p)


def test_stop_ramp_after_an_abort_near_a_limit_keeps_commands_inside(caplog):
    """End to end: a goal racing to 2.4 rad aborts (the joint is stuck); the hold ramps to rest <= 2.5."""
    loop = make_loop(stop=0.5, x0=(2.0, 0.0))
    loop.run(0.1)
    loop.robot.stuck = np.array([True, False])
    code, _ = loop.ex.accept(trajectory(J, [point([2.4, 0.0], 0.06, [9.0, 0.0])]), goal_key="fast")
    assert code == 0
    since = len(loop.desired)
    assert run_until_done(loop, "fast")[0].status == "aborted"
    loop.run(1.0)
    assert max(p[0] for _, p, _, _ in loop.desired[since:]) <= 2.5


# Found by fuzzing: a bridge from a desired state with a large acceleration (points
# 50 ms apart asking for tens of rad/s, then a replacement) swung wrist_2 to -3.2 rad against its limit
# of -3.0 before it reached its first point, although every point lay inside the limits.  The executor
# now holds such a joint on the limit (at rest) while its spline is outside.
def test_spline_overshoot_is_clipped_to_the_position_limits(caplog):
    loop = make_loop(stop=0.0)
    loop.run(0.1)
    up = loop.ex.uptime
    overshoot = Trajectory.from_states([up, up + 0.6], [PointState([2.0, 0.0], [20.0, 1.0], [0.0, 0.0]),
                                                        PointState([2.4, 0.6], [0.0, 0.0], [0.0, 0.0])])
    assert max(overshoot.sample(up + 0.01 * k)[0][0] for k in range(60)) > 2.6  # the spline leaves
    garbage_plan(loop.ex, overshoot, "g")
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        clipped = 0
        for _ in range(60):
            p, v, a = loop.step()
            assert p[0] <= 2.5
            if p[0] == 2.5:
                clipped += 1
                assert v[0] == 0.0 and a[0] == 0.0
            assert v[1] != 0.0 or p[1] == pytest.approx(0.6)  # the other joint follows its spline
    assert clipped > 5
    assert "lies beyond the position limits" in caplog.text and "elbow" in caplog.text


def test_a_hold_a_hair_beyond_the_limit_is_clipped_quietly(caplog):
    """A joint resting a hair outside its limits (a gripper at -1e-5 against 0) is held on the limit,
    without a warning every few seconds."""
    loop = make_loop(stop=0.0, x0=(2.5004, 0.0))
    loop.robot.stuck = np.array([True, False])
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        loop.run(0.5)
    assert loop.desired[-1][1][0] == 2.5
    assert "beyond the position limits" not in caplog.text


def test_absurd_stop_trajectory_duration_is_a_config_error():
    """Found by fuzzing the controller YAML: stop_trajectory_duration 1e308 loaded, and its stop ramp
    overflowed into NaN (then fell back to a plain hold)."""
    from rospy_control.exceptions import ConfigError
    with pytest.raises(ConfigError, match="stop_trajectory_duration"):
        TrajectoryExecutor.from_params(J, rrbot_params(J, stop_trajectory_duration=1e308),
                                       limits=arm_limits())


# ------------------------------------------------------------------ a joint resting on its limit
def test_a_joint_resting_a_hair_beyond_its_limit_takes_a_goal_that_returns_where_it_is():
    loop = make_loop(stop=0.0, x0=(-2.5 - 0.002, 0.0))     # on its end stop, a hair past the URDF limit
    loop.step()
    start = float(loop.robot.x[0])
    assert start < -2.5
    msg = trajectory(J, [rest([start, 0.0], 0.2), rest([-1.0, 0.0], 1.5), rest([start, 0.0], 3.0)])
    assert loop.ex.accept(msg, goal_key="back") == (0, "")
    assert [(e.goal_key, e.status) for e in run_until_done(loop, "back", 5.0)] == [("back", SUCCEEDED)]
    assert_desired_sane(loop)                                 # the command itself stays inside the limits


@pytest.mark.parametrize("target, accepted", [(-2.54, True), (-2.56, False), (-2.6, False)])
def test_the_start_state_tolerance_is_bounded_beyond_the_limit_and_from_the_start(target, accepted):
    loop = make_loop(stop=0.0, x0=(-2.5 - 0.002, 0.0))
    loop.step()
    code, text = loop.ex.accept(trajectory(J, [rest([target, 0.0], 0.5)]), goal_key="g")
    if accepted:
        assert (code, text) == (0, "")
    else:
        assert code == INVALID_GOAL and "outside its position limits" in text and repr(target) in text


def test_far_from_the_start_a_point_beyond_the_limit_is_refused_as_before():
    loop = make_loop(stop=0.0, x0=(0.0, 0.0))
    loop.step()
    code, text = loop.ex.accept(trajectory(J, [rest([-2.52, 0.0], 2.0)]), goal_key="g")
    assert code == INVALID_GOAL and "joint 'elbow'" in text and "[-2.5, 2.5]" in text
