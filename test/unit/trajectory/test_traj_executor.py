"""TrajectoryExecutor: the JTC's behaviour without ROS, driven against a simulated joint.

Scenarios follow ros_controllers' joint_trajectory_controller tests, in our own words,
plus ours: hold on abort, NaN rejection, goal timeout, a MoveIt-shaped goal in closed loop.
"""
from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from rospy_control.exceptions import ConfigError
from rospy_control.trajectory import (
    ABORTED, GOAL_TOLERANCE_VIOLATED, INVALID_GOAL, INVALID_JOINTS, PATH_TOLERANCE_VIOLATED, PREEMPTED,
    SUCCEEDED, SUCCESSFUL, TrajectoryError, TrajectoryExecutor,
)
from traj_testutil import LagJoint, Loop, goal, make_executor, point, tolerance, trajectory

J = ["joint1", "joint2"]


def rest(p, t):
    """A point at rest (velocities and accelerations zero)."""
    return point(p, t, [0.0] * len(p), [0.0] * len(p))


def make_loop(executor=None, x0=(0.0, 0.0), **robot):
    ex = executor or make_executor()
    return Loop(ex, LagJoint(list(x0), **robot))


def desired_positions(loop, since=0):
    return np.array([d[1] for d in loop.desired[since:]])


# ------------------------------------------------------------------------------------------- validation
def test_not_running_rejects_with_invalid_goal():
    ex = make_executor()
    code, text = ex.accept(trajectory(J, [point([1, 1], 1.0)]), goal_key="g")
    assert code == INVALID_GOAL and "not running" in text


INVALID = [
    ("wrong joint count", trajectory(["joint1"], [point([1.0], 1.0)]), INVALID_JOINTS, "missing"),
    ("unknown joint", trajectory(["joint1", "elbow"], [point([1, 1], 1.0)]), INVALID_JOINTS, "'elbow'"),
    ("no positions", trajectory(J, [point([], 1.0, [0, 0])]), INVALID_GOAL, "no positions"),
    ("size mismatch", trajectory(J, [point([1.0], 1.0)]), INVALID_GOAL, "1 position value"),
    ("equal times", trajectory(J, [point([1, 1], 1.0), point([2, 2], 1.0)]), INVALID_GOAL,
     "not strictly increasing"),
    ("empty goal", trajectory([], []), INVALID_JOINTS, "no joint names"),
    ("nan position", trajectory(J, [point([1, float("nan")], 1.0)]), INVALID_GOAL, "joint2' is nan"),
    ("inf acceleration", trajectory(J, [point([1, 1], 1.0, [0, 0], [0, float("inf")])]), INVALID_GOAL,
     "joint2' is inf"),
    ("all in the past", trajectory(J, [point([1, 1], 0.5)], stamp=900.0), INVALID_GOAL, "Dropping all 1"),
    ("duplicate joint", trajectory(["joint1", "joint1"], [point([1, 1], 1.0)]), INVALID_JOINTS,
     "more than once"),
]


@pytest.mark.parametrize("name, msg, code, fragment", INVALID, ids=[c[0] for c in INVALID])
def test_invalid_action_goals_are_rejected_and_leave_the_running_goal_alone(name, msg, code, fragment):
    loop = make_loop()
    assert loop.ex.accept(trajectory(J, [rest([0.5, 0.5], 1.0)]), goal_key="running") == (SUCCESSFUL, "")
    loop.run(0.2)
    before = loop.ex.trajectory
    got_code, text = loop.ex.accept_goal(goal(msg), "bad")
    assert got_code == code, text
    assert fragment in text
    assert loop.ex.trajectory is before
    assert loop.ex.active_goal_key == "running"
    loop.run(2.0)
    assert [(e.goal_key, e.status) for e in loop.events] == [("running", SUCCEEDED)]


@pytest.mark.parametrize("name, msg, code, fragment", [c for c in INVALID if c[0] != "empty goal"],
                         ids=[c[0] for c in INVALID if c[0] != "empty goal"])
def test_invalid_topic_commands_are_rejected(name, msg, code, fragment):
    loop = make_loop()
    loop.run(0.1)
    got_code, text = loop.ex.accept(msg)
    assert got_code == code and fragment in text


def test_partial_joint_goal_accepted_only_when_allowed():
    loop = make_loop()
    code, _ = loop.ex.accept(trajectory(["joint2"], [rest([1.0], 1.0)]), goal_key="p")
    assert code == INVALID_JOINTS
    loop = make_loop(make_executor(allow_partial_joints_goal=True))
    assert loop.ex.accept(trajectory(["joint2"], [rest([1.0], 1.0)]), goal_key="p")[0] == SUCCESSFUL
    loop.run(2.0)
    assert loop.events_for("p")[0].status == SUCCEEDED
    np.testing.assert_allclose(loop.robot.x, [0.0, 1.0], atol=0.01)


# ------------------------------------------------------------------------------------------- single
def test_action_single_trajectory_succeeds_and_query_state_matches_feedback():
    loop = make_loop()
    msg = trajectory(J, [rest([0.0, 0.0], 0.0), rest([1.0, -0.5], 1.0), rest([0.5, 0.5], 2.0)])
    assert loop.ex.accept(msg, goal_key="g") == (SUCCESSFUL, "")
    loop.run(1.0)
    fb = loop.ex.feedback()
    q = loop.ex.query_state(fb.time)
    np.testing.assert_allclose(q.positions, fb.desired_positions, atol=1e-12)
    np.testing.assert_allclose(q.velocities, fb.desired_velocities, atol=1e-12)
    assert q.joint_names == J
    loop.run(3.0)
    (event,) = loop.events
    assert (event.goal_key, event.status, event.error_code) == ("g", SUCCEEDED, SUCCESSFUL)
    np.testing.assert_allclose(loop.robot.x, [0.5, 0.5], atol=0.01)
    assert loop.ex.active_goal_key is None


def test_topic_single_trajectory_reaches_the_last_point_without_events():
    loop = make_loop()
    assert loop.ex.accept(trajectory(J, [point([0.3, -0.3], 0.5), point([1.0, 1.0], 1.0)]))[0] == SUCCESSFUL
    loop.run(2.0)
    assert loop.events == []
    np.testing.assert_allclose(loop.robot.x, [1.0, 1.0], atol=1e-3)


def test_joint_reordering():
    loop = make_loop()
    loop.ex.accept_goal(goal(trajectory(["joint2", "joint1"], [rest([2.0, -1.0], 1.0)])), "g")
    loop.run(2.0)
    np.testing.assert_allclose(loop.robot.x, [-1.0, 2.0], atol=0.01)
    assert loop.events[0].status == SUCCEEDED


# ------------------------------------------------------------------------------------------- time base
def test_uptime_and_stamp_zero_start_at_the_next_update():
    loop = make_loop()
    loop.run(0.05)
    assert loop.ex.uptime == pytest.approx(0.05)
    loop.ex.accept(trajectory(J, [point([1.0, 1.0], 1.0)]))
    next_time = loop.t + loop.dt
    np.testing.assert_allclose(loop.ex.query_state(next_time).positions, [0.0, 0.0], atol=1e-12)
    np.testing.assert_allclose(loop.ex.query_state(next_time + 0.5).positions, [0.5, 0.5], atol=1e-12)
    np.testing.assert_allclose(loop.ex.query_state(next_time + 1.0).positions, [1.0, 1.0], atol=1e-12)
    with pytest.raises(TrajectoryError, match="precedes"):
        loop.ex.query_state(loop.t - 10.0)


def test_future_stamp_starts_later():
    loop = make_loop()
    loop.run(0.1)
    loop.ex.accept(trajectory(J, [point([1.0, 1.0], 0.5)], stamp=loop.t + 1.0))
    loop.run(0.9)
    np.testing.assert_allclose(loop.desired[-1][1], [0.0, 0.0])
    loop.run(0.6)
    np.testing.assert_allclose(loop.desired[-1][1], [1.0, 1.0], atol=1e-9)


# ------------------------------------------------------------------------------------------- replacement
def test_action_replaces_action():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="first")
    loop.run(0.5)
    loop.ex.accept(trajectory(J, [rest([0.0, 0.0], 1.0)]), goal_key="second")
    loop.run(2.0)
    assert [(e.goal_key, e.status) for e in loop.events] == [("first", PREEMPTED), ("second", SUCCEEDED)]
    np.testing.assert_allclose(loop.robot.x, [0.0, 0.0], atol=0.01)
    # the replacement is smooth: no jump in the desired position
    d = desired_positions(loop)
    assert np.max(np.abs(np.diff(d, axis=0))) < 0.03


def test_topic_replaces_action_and_action_replaces_topic():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.3)
    loop.ex.accept(trajectory(J, [rest([0.0, 0.0], 1.0)]))
    loop.run(0.3)
    assert [(e.goal_key, e.status) for e in loop.events] == [("g", PREEMPTED)]
    loop.ex.accept(trajectory(J, [rest([0.2, 0.2], 1.0)]), goal_key="h")
    loop.run(2.0)
    assert loop.events[-1][:2] == ("h", SUCCEEDED)
    np.testing.assert_allclose(loop.robot.x, [0.2, 0.2], atol=0.01)


def test_old_action_trajectory_does_not_preempt():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.3)
    code, text = loop.ex.accept(trajectory(J, [rest([0.0, 0.0], 0.1)], stamp=loop.t - 1.0), goal_key="old")
    assert code == INVALID_GOAL and "Dropping all 1 trajectory point(s)" in text
    loop.run(2.0)
    assert [(e.goal_key, e.status) for e in loop.events] == [("g", SUCCEEDED)]


def test_partially_old_action_trajectory_executes_the_future_points():
    loop = make_loop()
    loop.run(0.2)
    msg = trajectory(J, [rest([5.0, 5.0], 0.5), rest([0.4, 0.4], 2.0)], stamp=loop.t - 1.0)
    assert loop.ex.accept(msg, goal_key="g")[0] == SUCCESSFUL
    loop.run(2.0)
    assert loop.events[0][:2] == ("g", SUCCEEDED)
    assert np.max(desired_positions(loop)) < 0.41  # the past point at 5.0 was never commanded


# ------------------------------------------------------------------------------------------- empty / cancel
def test_empty_topic_cancels_action_and_holds_the_measured_position():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.5)
    measured = loop.ex.feedback().actual_positions  # what the last update measured
    assert loop.ex.accept(trajectory(J, []))[0] == SUCCESSFUL
    n = len(loop.desired)
    loop.run(0.5)
    assert [(e.goal_key, e.status) for e in loop.events] == [("g", PREEMPTED)]
    d = desired_positions(loop, n)
    np.testing.assert_allclose(d, np.tile(measured, (len(d), 1)))
    assert 0.2 < loop.robot.x[0] < 0.9


def test_empty_action_goal_preempts_and_succeeds_once_the_hold_ended():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.5)
    assert loop.ex.accept(trajectory(J, []), goal_key="stop") == (SUCCESSFUL, "")
    loop.step()
    assert [(e.goal_key, e.status) for e in loop.events] == [("g", PREEMPTED), ("stop", SUCCEEDED)]


def test_empty_action_goal_with_stop_ramp_succeeds_after_the_ramp():
    loop = make_loop(make_executor(stop_trajectory_duration=0.3))
    loop.ex.accept(trajectory(J, [point([2.0, 2.0], 2.0)]), goal_key="g")
    loop.run(1.0)
    loop.ex.accept(trajectory(J, []), goal_key="stop")
    loop.run(0.25)
    assert [(e.goal_key, e.status) for e in loop.events] == [("g", PREEMPTED)]
    loop.run(0.1)
    assert loop.events[-1][:2] == ("stop", SUCCEEDED)


def test_empty_action_goal_with_bad_joints_is_rejected():
    loop = make_loop()
    assert loop.ex.accept(trajectory(["nope"], []), goal_key="stop")[0] == INVALID_JOINTS


def test_stop_ramp_keeps_velocity_continuous_and_never_reverses():
    loop = make_loop(make_executor(stop_trajectory_duration=0.2))
    loop.ex.accept(trajectory(J, [point([2.0, -2.0], 2.0)]), goal_key="g")  # 1 rad/s, linear
    loop.run(1.0)
    v_before = loop.desired[-1][2].copy()
    n = len(loop.desired)
    loop.ex.accept(trajectory(J, []))
    loop.run(0.5)
    v = np.array([d[2] for d in loop.desired[n:]])
    assert np.max(np.abs(v[0] - v_before)) < 0.2  # continuous (one 10 ms step of deceleration)
    assert np.all(v[:, 0] >= -1e-12) and np.all(v[:, 1] <= 1e-12)  # never reverses
    np.testing.assert_allclose(v[-1], [0.0, 0.0], atol=1e-12)
    p_stop = loop.desired[-1][1]
    # ramp from the desired state: stops 5 v d / 8 beyond the desired position at the hold
    assert p_stop[0] == pytest.approx(loop.desired[n - 1][1][0] + 5 * 1.0 * 0.2 / 8, abs=0.02)


def test_cancel_holds_and_preempts_only_the_active_goal():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.5)
    assert loop.ex.cancel("other") is False
    assert loop.ex.cancel("g") is True
    assert loop.ex.cancel("g") is False
    n = len(loop.desired)
    loop.run(0.5)
    assert [(e.goal_key, e.status, e.error_string) for e in loop.events] == [("g", PREEMPTED, "canceled")]
    d = desired_positions(loop, n)
    assert np.ptp(d, axis=0).max() == 0.0


# ------------------------------------------------------------------------------------------- tolerances
@pytest.mark.parametrize("hold_on_abort", [True, False])
def test_path_tolerance_violation_aborts_and_holds_unless_disabled(hold_on_abort):
    loop = make_loop(make_executor(hold_on_abort=hold_on_abort), stuck=[False, True])
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(1.0, until_event=True)
    (event,) = loop.events
    assert (event.status, event.error_code) == (ABORTED, PATH_TOLERANCE_VIOLATED)
    assert event.error_string.startswith("joint2 path error -0.05") or event.error_string.startswith(
        "joint2 path error 0.05")
    n = len(loop.desired)
    loop.run(0.3)
    d = desired_positions(loop, n)
    if hold_on_abort:
        assert np.ptp(d, axis=0).max() == 0.0  # stopped
    else:
        assert np.ptp(d, axis=0).max() > 0.1  # upstream: keeps executing the trajectory


def test_velocity_path_tolerance_names_the_velocity():
    loop = make_loop(stuck=[True, False])
    msg = trajectory(J, [rest([0.02, 0.0], 1.0)])
    loop.ex.accept_goal(goal(msg, path_tolerance=[tolerance("joint1", position=-1, velocity=0.01)]), "g")
    loop.run(1.0, until_event=True)
    assert loop.events[0].error_code == PATH_TOLERANCE_VIOLATED
    text = loop.events[0].error_string
    assert "joint1 path error" in text and "velocity error" in text


def test_goal_tolerance_violation_after_goal_time():
    loop = make_loop(stuck=[False, True])
    msg = trajectory(J, [rest([0.5, 0.5], 1.0)])
    start = loop.t + loop.dt
    gl = goal(msg, path_tolerance=[tolerance("joint1", position=-1), tolerance("joint2", position=-1)])
    loop.ex.accept_goal(gl, "g")
    loop.run(3.0, until_event=True)
    (event,) = loop.events
    assert (event.status, event.error_code) == (ABORTED, GOAL_TOLERANCE_VIOLATED)
    assert event.error_string.startswith("joint2 goal error 0.5")
    assert event.time == pytest.approx(start + 1.0 + 0.5, abs=1.5 * loop.dt)  # end + goal_time


def test_goal_time_tolerance_from_the_goal_overrides_the_parameter():
    loop = make_loop(stuck=[False, True])
    msg = trajectory(J, [rest([0.5, 0.5], 1.0)])
    start = loop.t + loop.dt
    gl = goal(msg, path_tolerance=[tolerance("joint2", position=-1)], goal_time_tolerance=1.0)
    loop.ex.accept_goal(gl, "g")
    loop.run(3.0, until_event=True)
    assert loop.events[0].time == pytest.approx(start + 2.0, abs=1.5 * loop.dt)


def test_goal_times_out_without_an_explicit_goal_time():
    loop = make_loop(make_executor(goal_time=0.0), stuck=[True, False])
    start = loop.t + loop.dt
    msg = trajectory(J, [rest([0.3, 0.3], 1.0)])
    loop.ex.accept_goal(goal(msg, path_tolerance=[tolerance("joint1", position=-1)]), "g")
    loop.run(3.0, until_event=True)
    (event,) = loop.events
    assert (event.status, event.error_code) == (ABORTED, GOAL_TOLERANCE_VIOLATED)
    assert event.time == pytest.approx(start + 1.0, abs=1.5 * loop.dt)  # first cycle after the end


def test_goal_watchdog_aborts_a_goal_whose_joint_checks_never_conclude():
    loop = make_loop(make_executor(goal_time=0.2, goal_timeout_margin=0.5))
    start = loop.t + loop.dt
    loop.ex.accept(trajectory(J, [rest([0.3, 0.3], 1.0)]), goal_key="g")
    plan = loop.ex._plan
    plan.goal_deadlines[:] = np.inf  # per-joint deadlines never reached ...
    plan.goal_vel[:] = -1.0  # ... and never inside: only the watchdog can end this goal
    loop.run(3.0, until_event=True)
    (event,) = loop.events
    assert (event.status, event.error_code) == (ABORTED, GOAL_TOLERANCE_VIOLATED)
    assert "timed out" in event.error_string
    assert event.time == pytest.approx(start + 1.0 + 0.2 + 0.5, abs=1.5 * loop.dt)


def test_success_needs_the_stopped_velocity():
    # no velocity feed-forward: the robot lags 0.04 rad behind at 2 rad/s, then settles (tau 0.02 s)
    loop = make_loop(make_executor(stopped=0.01), feed_forward=0.0)
    end = loop.t + 0.5
    loop.ex.accept(trajectory(J, [point([1.0, 1.0], 0.5)]), goal_key="g")  # linear: ends at 2 rad/s
    loop.run(2.0)
    assert loop.events[0].status == SUCCEEDED
    # position is within 0.01 about 0.03 s after the end, velocity below 0.01 only after ~0.1 s
    assert loop.events[0].time > end + 0.08


# ------------------------------------------------------------------------------------------- partial goals
def test_partial_replacement_keeps_the_other_joint_on_its_trajectory():
    loop = make_loop(make_executor(allow_partial_joints_goal=True))
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 2.0)]), goal_key="full")
    loop.run(0.5)
    old = loop.ex.trajectory
    loop.ex.accept(trajectory(["joint1"], [rest([-0.5], 1.0)]), goal_key="partial")
    n = len(loop.desired)
    loop.run(3.0)
    assert [(e.goal_key, e.status) for e in loop.events] == [("full", PREEMPTED), ("partial", SUCCEEDED)]
    for (t, p, _, _), up in zip(loop.desired[n:], np.arange(1, 301) * loop.dt + 0.5):
        assert p[1] == pytest.approx(old.sample(up)[0][1], abs=1e-9)
    np.testing.assert_allclose(loop.robot.x, [-0.5, 1.0], atol=0.01)
    # the partial goal only succeeded when the untouched joint finished too (at uptime 2.0)
    assert loop.events[-1].time >= loop.desired[0][0] + 2.0 - 1.5 * loop.dt


def test_partial_trajectory_in_the_future_runs_after_the_old_one():
    loop = make_loop(make_executor(allow_partial_joints_goal=True))
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="full")
    loop.run(0.2)
    loop.ex.accept(trajectory(["joint2"], [rest([0.0], 1.0)], stamp=loop.t + 1.5), goal_key="later")
    loop.run(1.2)
    np.testing.assert_allclose(loop.robot.x, [1.0, 1.0], atol=0.02)
    loop.run(2.0)
    np.testing.assert_allclose(loop.robot.x, [1.0, 0.0], atol=0.01)
    assert loop.events[-1][:2] == ("later", SUCCEEDED)


# ------------------------------------------------------------------------------------------- wraparound
def test_continuous_joints_move_the_short_way():
    ex = make_executor(continuous=[True, True])
    loop = make_loop(ex)
    far = 4 * 2 * math.pi
    loop.ex.accept(trajectory(J, [rest([far + math.pi / 4, far - math.pi / 4], 1.0)]), goal_key="g")
    loop.run(2.0)
    assert loop.events[0][:2] == ("g", SUCCEEDED)
    np.testing.assert_allclose(loop.robot.x, [math.pi / 4, -math.pi / 4], atol=0.01)
    assert np.max(np.abs(desired_positions(loop))) <= math.pi / 4 + 1e-9


def test_pi_singularity_does_not_wrap_the_wrong_way():
    loop = make_loop(make_executor(continuous=[True, True]))
    loop.ex.accept(trajectory(J, [rest([math.pi, -math.pi], 1.0)]), goal_key="g")
    loop.run(2.0)
    np.testing.assert_allclose(loop.robot.x, [math.pi, -math.pi], atol=0.01)
    d = desired_positions(loop)
    assert np.all(d[:, 0] >= -1e-9) and np.all(d[:, 1] <= 1e-9)


# ------------------------------------------------------------------------------------------- MoveIt
def moveit_goal(start, target, duration, n_points=25):
    """What MoveIt sends: stamp 0, point 0 = current state at t=0, velocities/accelerations filled."""
    start = np.asarray(start, dtype=float)
    delta = np.asarray(target, dtype=float) - start
    points = []
    for t in np.linspace(0.0, duration, n_points):
        u = t / duration
        s = 10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5
        ds = (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / duration
        dds = (60 * u - 180 * u ** 2 + 120 * u ** 3) / duration ** 2
        points.append(point(start + s * delta, t, delta * ds, delta * dds))
    names = [f"joint_{i}" for i in range(len(start))]
    return names, goal(trajectory(names, points, stamp=0.0),
                       goal_tolerance=[tolerance(n, position=0.01, velocity=0.05) for n in names],
                       goal_time_tolerance=0.5)


def test_moveit_shaped_goal_succeeds_in_closed_loop():
    start = [0.1, -0.4, 0.8, 0.0, 1.2, -1.0]
    target = [1.0, 0.3, -0.2, 0.5, 0.2, 0.4]
    names, gl = moveit_goal(start, target, 2.0)
    constraints = {"goal_time": 0.0, "stopped_velocity_tolerance": 0.01}
    constraints.update({n: {"trajectory": 0.1} for n in names})
    ex = TrajectoryExecutor.from_params(names, {"constraints": constraints})
    loop = Loop(ex, LagJoint(start, tau=0.03, feed_forward=0.8), dt=0.002)
    loop.run(0.1)
    assert ex.accept_goal(gl, "moveit-goal-1") == (SUCCESSFUL, "")
    loop.run(3.0, until_event=True)
    (event,) = loop.events
    assert (event.goal_key, event.status, event.error_code) == ("moveit-goal-1", SUCCEEDED, SUCCESSFUL)
    fb = ex.feedback()
    assert np.max(np.abs(fb.error_positions)) < 0.01
    np.testing.assert_allclose(loop.robot.x, target, atol=0.01)
    # smooth: the desired acceleration never jumps by more than a few percent of its peak per cycle
    acc = np.array([d[3] for d in loop.desired])
    assert np.max(np.abs(np.diff(acc, axis=0))) < 0.05 * np.max(np.abs(acc)) + 1e-9


# ------------------------------------------------------------------------------------------- feedback etc.
def test_feedback_snapshot_contents():
    loop = make_loop()
    assert make_executor().feedback() is None
    loop.ex.accept(trajectory(J, [point([1.0, 1.0], 1.0)]))
    loop.run(0.5)
    fb = loop.ex.feedback()
    assert fb.joint_names == J
    for arr in fb[3:]:
        assert arr.shape == (2,)
    np.testing.assert_allclose(fb.error_positions, fb.desired_positions - fb.actual_positions, atol=1e-12)
    np.testing.assert_allclose(fb.error_velocities, fb.desired_velocities - fb.actual_velocities, atol=1e-12)
    assert fb.uptime == pytest.approx(0.5)


def test_stopping_preempts_and_query_state_needs_a_running_controller():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.2)
    loop.ex.stopping()
    assert loop.ex.poll_events()[0][:2] == ("g", PREEMPTED)
    assert not loop.ex.running
    with pytest.raises(TrajectoryError, match="not running"):
        loop.ex.query_state(loop.t)
    assert loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]))[0] == INVALID_GOAL
    assert loop.ex.hold() is False


def test_restart_holds_the_measured_state_and_resets_uptime():
    loop = make_loop()
    loop.run(0.3)
    loop.ex.start(loop.t, [0.2, 0.3])
    assert loop.ex.uptime == 0.0
    p, v, _ = loop.ex.update(loop.t + 0.01, 0.01, [0.2, 0.3], [0.0, 0.0])
    np.testing.assert_allclose(p, [0.2, 0.3])
    np.testing.assert_allclose(v, [0.0, 0.0])


def test_update_before_start_starts_implicitly():
    ex = make_executor()
    p, _, _ = ex.update(5.0, 0.01, [0.4, 0.5])
    np.testing.assert_allclose(p, [0.4, 0.5])
    assert ex.running


def test_abort_api_for_hardware_faults():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.3)
    assert loop.ex.abort("joint2 motor fault: over-temperature") is True
    assert loop.ex.abort("again") is False
    (event,) = loop.ex.poll_events()
    assert (event.status, event.error_code) == (ABORTED, PATH_TOLERANCE_VIOLATED)
    assert "over-temperature" in event.error_string
    n = len(loop.desired)
    loop.run(0.2)
    assert np.ptp(desired_positions(loop, n), axis=0).max() == 0.0


def test_configuration_errors():
    with pytest.raises(ConfigError, match="non-empty"):
        TrajectoryExecutor([])
    with pytest.raises(ConfigError, match="duplicated"):
        TrajectoryExecutor(["a", "a"])
    with pytest.raises(ConfigError, match="continuous"):
        TrajectoryExecutor(["a"], continuous=[True, False])
    with pytest.raises(ConfigError, match="stop_trajectory_duration"):
        TrajectoryExecutor(["a"], stop_trajectory_duration=-1.0)
    with pytest.raises(ConfigError, match="hold_on_abort"):
        TrajectoryExecutor.from_params(["a"], {"hold_on_abort": "yes"})
    ex = TrajectoryExecutor.from_params(["a"], {"goal_timeout_margin": -1.0, "hold_on_abort": False,
                                                "stop_trajectory_duration": 0.25})
    assert ex._timeout_margin is None and ex.hold_on_abort is False and ex._stop_duration == 0.25


# ------------------------------------------------------------------------------------------- threads
def test_commands_from_another_thread_while_the_loop_runs():
    loop = make_loop(make_executor(allow_partial_joints_goal=True))
    accepted = []
    errors = []

    def ros_thread():
        try:
            for k in range(60):
                key = f"g{k}"
                target = [0.1 * (k % 5), -0.1 * (k % 3)]
                if k % 7 == 3:
                    code, _ = loop.ex.accept(trajectory(J, [rest(target, 0.3)]))
                elif k % 5 == 4:
                    loop.ex.cancel(accepted[-1] if accepted else "none")
                    continue
                else:
                    code, _ = loop.ex.accept(trajectory(J, [rest(target, 0.3)]), goal_key=key)
                    if code == SUCCESSFUL:
                        accepted.append(key)
                assert code == SUCCESSFUL
        except Exception as err:  # pragma: no cover - reported below
            errors.append(err)

    thread = threading.Thread(target=ros_thread)
    thread.start()
    while thread.is_alive():
        loop.step()
    thread.join()
    loop.run(2.0)
    assert not errors
    finished = [e.goal_key for e in loop.events]
    assert sorted(finished) == sorted(accepted)  # exactly one terminal event per accepted goal


def test_accept_rebuilds_when_the_loop_replaced_the_plan_meanwhile():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.3)
    ex = loop.ex
    real_build = ex._build
    calls = []

    def racing_build(*args):
        plan = real_build(*args)
        if not calls:  # the loop aborts "g" (tolerance violation) and holds while we were building
            old = ex._plan
            _, uptime, r, pos, _ = ex._latest
            ex._finish(old, old.goal, ABORTED, PATH_TOLERANCE_VIOLATED, "joint1 path error 1.0", loop.t,
                       uptime, r, pos)
            assert ex._plan is not old
        calls.append(plan)
        return plan

    ex._build = racing_build
    assert ex.accept(trajectory(J, [rest([0.5, 0.5], 1.0)]), goal_key="h") == (SUCCESSFUL, "")
    assert len(calls) == 2  # built twice: the first result was based on a stale plan
    assert ex.trajectory is calls[1].trajectory
    loop.run(2.0)
    assert [(e.goal_key, e.status) for e in loop.events] == [("g", ABORTED), ("h", SUCCEEDED)]


def test_hold_preempts_the_active_goal():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.3)
    assert loop.ex.hold("operator stop") is True
    assert [(e.goal_key, e.status, e.error_string) for e in loop.ex.poll_events()] == [
        ("g", PREEMPTED, "operator stop")]
    n = len(loop.desired)
    loop.run(0.2)
    assert np.ptp(desired_positions(loop, n), axis=0).max() == 0.0


def test_abort_from_the_loop_thread_does_not_wait_for_a_trajectory_being_built():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.3)
    with loop.ex._cmd_lock:  # an accept is busy building in a ROS thread
        assert loop.ex.abort("bus off", hold=True) is True
        assert loop.ex.hold() is True
        assert loop.ex.cancel("g") is False


# ------------------------------------------------------------------------------------------- veto
def test_veto_sees_the_validated_trajectory_and_its_refusal_changes_nothing():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="first")
    loop.run(0.2)
    before = loop.ex.trajectory
    seen = []

    def refuse(prepared):
        seen.append(prepared)
        return -1, "device says no"

    msg = trajectory(J, [point([0.1, 0.1], 0.1), point([0.5, 0.5], 1.0)], stamp=loop.t - 0.2)
    assert loop.ex.accept(msg, goal_key="second", veto=refuse) == (-1, "device says no")
    assert loop.ex.trajectory is before and loop.ex.active_goal_key == "first"
    (prepared,) = seen
    assert prepared.first_point == 1  # point 0 lies in the past
    assert prepared.ros_time(prepared.start_uptime) == pytest.approx(loop.t - 0.2)
    assert prepared.now == pytest.approx(loop.t + loop.dt)
    loop.run(2.0)
    assert [(e.goal_key, e.status) for e in loop.events] == [("first", SUCCEEDED)]


def test_veto_passing_accepts_and_an_invalid_goal_never_reaches_it():
    loop = make_loop()
    loop.run(0.1)
    calls = []
    bad = trajectory(J, [point([1.0, math.nan], 1.0)])
    assert loop.ex.accept(bad, goal_key="bad", veto=calls.append)[0] == -1
    assert calls == []
    assert loop.ex.accept(trajectory(J, []), goal_key="stop", veto=calls.append) == (0, "")
    assert calls[0].first_point == -1  # an empty trajectory: hold
    assert loop.ex.active_goal_key == "stop"


def test_abort_with_a_goal_key_leaves_other_goals_alone():
    loop = make_loop()
    loop.ex.accept(trajectory(J, [rest([1.0, 1.0], 1.0)]), goal_key="g")
    loop.run(0.1)
    assert not loop.ex.abort("late answer", goal_key="older")
    assert loop.ex.active_goal_key == "g"
    assert loop.ex.abort("device fault", goal_key="g")
    loop.run(0.05)
    assert [(e.goal_key, e.status, e.error_string) for e in loop.events] == [("g", ABORTED, "device fault")]
