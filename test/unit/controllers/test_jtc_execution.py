"""JointTrajectoryController executing trajectories against the simulated robot.

The scenarios of ros_controllers' joint_trajectory_controller tests, in our own words.

rrbot-like setup: two continuous joints, goal_time 0.5, goal tolerance 0.01, path tolerance 0.05,
a position-controlled robot with a 10 ms lag, 100 Hz control loop, ROS time injected.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R
from control_msgs.srv import QueryTrajectoryStateRequest
import genpy

from rospy_control.controller_interface.node_handle import NodeHandleError
from rospy_control.testing import GoalStatus
from test_jtc_sim import J, JtcRig, angle_diff, fjt_goal, jtc_type, pt, rrbot_params, start_jtc, traj

HOME = [0.0, 0.0]
TARGET = [0.6, -0.4]


@pytest.fixture
def arm():
    rig, ctrl = start_jtc()
    rig.run(0.05)
    yield rig, ctrl
    rig.close()


def moving(target=TARGET, duration=1.0, names=J):
    return traj(names, [pt(target, duration)])


def query(rig, t):
    request = QueryTrajectoryStateRequest(time=genpy.Time.from_sec(t))
    return rig.root_nh.call_service("arm/query_state", request)


# --------------------------------------------------------------------------------- single trajectories
def test_topic_single_trajectory(arm):
    rig, _ = arm
    states = rig.record_state()
    rig.publish(traj(J, [pt([0.3, 0.1], 0.5), pt(TARGET, 1.0)]))
    rig.run(1.5)
    assert rig.robot.positions() == pytest.approx(TARGET, abs=1e-3)
    last = states[-1]
    assert list(last.desired.positions) == pytest.approx(TARGET)
    assert list(last.error.positions) == pytest.approx([0.0, 0.0], abs=1e-3)


def test_action_single_trajectory_and_query_state(arm):
    rig, _ = arm
    states = rig.record_state()
    goal = rig.client().send_goal(fjt_goal(moving()))
    rig.run(3.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    result = goal.get_result()
    assert result.error_code == R.SUCCESSFUL and result.error_string == ""
    assert rig.robot.positions() == pytest.approx(TARGET, abs=0.01)
    assert len(goal.feedback) > 5
    fb = goal.feedback[-1]
    assert list(fb.joint_names) == J and len(fb.desired.positions) == 2
    rig.cycle()
    response = query(rig, rig.t)
    assert list(response.name) == J
    assert list(response.position) == pytest.approx(list(states[-1].desired.positions), abs=1e-9)
    assert list(response.velocity) == pytest.approx([0.0, 0.0], abs=1e-9)


def test_query_state_mid_trajectory_matches_the_state_topic(arm):
    rig, _ = arm
    states = rig.record_state()
    rig.publish(traj(J, [pt(TARGET, 1.0, [0, 0], [0, 0])]))
    rig.run(0.4)
    state = states[-1]
    response = query(rig, state.header.stamp.to_sec())
    # (the stamp is rounded to nanoseconds)
    assert list(response.position) == pytest.approx(list(state.desired.positions), abs=1e-7)
    assert list(response.velocity) == pytest.approx(list(state.desired.velocities), abs=1e-6)
    assert list(response.acceleration) == pytest.approx(list(state.desired.accelerations), abs=1e-5)
    ahead = query(rig, rig.t + 10.0)  # beyond the end: the last point
    assert list(ahead.position) == pytest.approx(TARGET)


def test_query_state_fails_before_the_trajectory_and_when_stopped(arm):
    rig, _ = arm
    with pytest.raises(NodeHandleError, match="precedes"):
        query(rig, rig.t - 60.0)
    rig.switch(stop=["arm"])
    with pytest.raises(NodeHandleError, match="not running"):
        query(rig, rig.t)


def test_state_topic_consistency_and_rate():
    rig, _ = start_jtc(state_publish_rate=20.0)
    try:
        states = rig.record_state()
        rig.run(1.0)
        assert 18 <= len(states) <= 21
        for s in states:
            assert list(s.joint_names) == J
            for field in (s.desired.positions, s.desired.velocities, s.desired.accelerations,
                          s.actual.positions, s.actual.velocities, s.error.positions, s.error.velocities):
                assert len(field) == 2
            assert len(s.actual.accelerations) == 0 and len(s.error.accelerations) == 0
        stamps = [s.header.stamp.to_sec() for s in states]
        assert all(b > a for a, b in zip(stamps, stamps[1:]))
    finally:
        rig.close()


def test_joint_reordering(arm):
    rig, _ = arm
    goal = rig.client().send_goal(fjt_goal(traj(["joint2", "joint1"], [pt([TARGET[1], TARGET[0]], 0.5)])))
    rig.run(2.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    assert rig.robot.positions() == pytest.approx(TARGET, abs=0.01)


# --------------------------------------------------------------------------------- wraparound
def test_continuous_joints_wrap_the_short_way(arm):
    rig, _ = arm
    far = [4 * math.pi + math.pi / 4, -6 * math.pi - math.pi / 4]
    states = rig.record_state()
    goal = rig.client().send_goal(fjt_goal(traj(J, [pt(far, 1.0)])))
    rig.run(3.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    assert rig.robot.positions() == pytest.approx([math.pi / 4, -math.pi / 4], abs=0.01)
    travelled = np.max(np.abs([s.desired.positions for s in states]), axis=0)
    assert np.all(travelled <= math.pi / 4 + 1e-6)


def test_wraparound_pi_singularity_keeps_the_commanded_direction(arm):
    rig, _ = arm
    goal = rig.client().send_goal(fjt_goal(traj(J, [pt([math.pi, -math.pi], 1.0)])))
    rig.run(3.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    assert rig.robot.positions() == pytest.approx([math.pi, -math.pi], abs=0.01)


def test_non_continuous_joints_do_not_wrap():
    rig, _ = start_jtc(joints={"joint1": "revolute", "joint2": "revolute"})
    try:
        rig.publish(traj(J, [pt([2 * math.pi + 0.2, -0.2], 1.0)]))
        rig.run(1.5)
        assert rig.robot.positions() == pytest.approx([2 * math.pi + 0.2, -0.2], abs=1e-3)
    finally:
        rig.close()


# --------------------------------------------------------------------------------- replacement
@pytest.mark.parametrize("first,second", [("topic", "topic"), ("action", "action"), ("topic", "action"),
                                          ("action", "topic")])
def test_replacement_combinations(arm, first, second):
    rig, _ = arm
    client = rig.client()
    handles = {}

    def send(kind, msg):
        if kind == "topic":
            rig.publish(msg)
            return None
        return client.send_goal(fjt_goal(msg))

    handles["first"] = send(first, moving([1.0, 1.0], 2.0))
    rig.run(0.5)
    assert 0.05 < rig.robot.positions()[0] < 0.5
    handles["second"] = send(second, moving(HOME, 1.0))
    if handles["first"] is not None:
        assert handles["first"].get_goal_status() == GoalStatus.PREEMPTED
    rig.run(2.0)
    assert rig.robot.positions() == pytest.approx(HOME, abs=0.01)
    if handles["second"] is not None:
        assert handles["second"].get_goal_status() == GoalStatus.SUCCEEDED


def test_replacement_is_smooth_with_velocities(arm):
    rig, _ = arm
    states = rig.record_state()
    rig.publish(traj(J, [pt([1.0, 1.0], 2.0, [0, 0], [0, 0])]))
    rig.run(0.8)
    rig.publish(traj(J, [pt([0.2, 0.2], 1.5, [0, 0], [0, 0])]))
    rig.run(2.0)
    v = np.array([s.desired.velocities[0] for s in states])
    assert np.max(np.abs(np.diff(v))) < 0.05  # no velocity jump at the bridge


# --------------------------------------------------------------------------------- empty / cancel
def test_empty_topic_cancels_topic_trajectory(arm):
    rig, _ = arm
    rig.publish(moving([1.0, 1.0], 2.0))
    rig.run(0.5)
    rig.publish(traj(J, []))
    stop = rig.robot.positions()
    rig.run(1.0)
    assert rig.robot.positions() == pytest.approx(stop, abs=0.02)
    assert rig.robot.positions()[0] < 0.5


def test_empty_topic_cancels_action_goal_and_holds_the_measured_position(arm):
    rig, ctrl = arm
    goal = rig.client().send_goal(fjt_goal(moving([1.0, 1.0], 2.0)))
    rig.run(0.5)
    measured = ctrl.executor.feedback().actual_positions.tolist()  # read by the last update
    rig.publish(traj(J, []))
    assert goal.get_goal_status() == GoalStatus.PREEMPTED
    rig.cycle()
    desired = ctrl.executor.feedback().desired_positions
    assert desired.tolist() == pytest.approx(measured)  # stop duration 0: hold the measured position


def test_empty_topic_with_stop_ramp_decelerates_without_reversing():
    rig, ctrl = start_jtc(stop_trajectory_duration=0.3)
    try:
        states = rig.record_state()
        goal = rig.client().send_goal(fjt_goal(moving([2.0, 2.0], 2.0)))
        rig.run(0.7)
        n = len(states)
        rig.publish(traj(J, []))
        assert goal.get_goal_status() == GoalStatus.PREEMPTED
        rig.run(1.0)
        v = np.array([s.desired.velocities[0] for s in states[n - 1:]])
        assert v[0] > 0.5
        assert np.all(v >= -1e-9)  # never reverses
        assert np.max(np.abs(np.diff(v))) < 0.2  # continuous
        assert v[-1] == pytest.approx(0.0, abs=1e-9)
    finally:
        rig.close()


@pytest.mark.parametrize("previous", ["topic", "action"])
def test_empty_action_goal_stops_and_succeeds(arm, previous):
    rig, _ = arm
    client = rig.client()
    old = None
    if previous == "topic":
        rig.publish(moving([1.0, 1.0], 2.0))
    else:
        old = client.send_goal(fjt_goal(moving([1.0, 1.0], 2.0)))
    rig.run(0.5)
    empty = client.send_goal(fjt_goal(traj(J, [])))
    if old is not None:
        assert old.get_goal_status() == GoalStatus.PREEMPTED
    rig.run(1.0, until=empty.is_done)
    assert empty.get_goal_status() == GoalStatus.SUCCEEDED
    rig.run(0.5)
    stopped = rig.robot.positions()[0]
    assert 0.05 < stopped < 0.5


def test_cancel_preempts_and_stops(arm):
    rig, _ = arm
    goal = rig.client().send_goal(fjt_goal(moving([1.0, 1.0], 2.0)))
    rig.run(0.5)
    goal.cancel()
    assert goal.get_goal_status() == GoalStatus.PREEMPTED
    here = rig.robot.positions()
    rig.run(1.0)
    assert rig.robot.positions() == pytest.approx(here, abs=0.02)


# --------------------------------------------------------------------------------- old trajectories
def test_old_topic_trajectory_is_ignored(arm):
    rig, _ = arm
    rig.publish(moving(TARGET, 1.0))
    rig.run(0.3)
    rig.publish(traj(J, [pt(HOME, 0.2)], stamp=rig.t - 1.0))
    rig.run(1.5)
    assert rig.robot.positions() == pytest.approx(TARGET, abs=0.01)


def test_old_action_trajectory_is_rejected_and_the_running_goal_finishes(arm):
    rig, _ = arm
    client = rig.client()
    running = client.send_goal(fjt_goal(moving(TARGET, 1.0)))
    rig.run(0.3)
    old = client.send_goal(fjt_goal(traj(J, [pt(HOME, 0.1), pt(HOME, 0.2)], stamp=rig.t - 1.0)))
    assert old.get_goal_status() == GoalStatus.REJECTED
    assert old.get_result().error_code == R.INVALID_GOAL
    rig.run(2.0, until=running.is_done)
    assert running.get_goal_status() == GoalStatus.SUCCEEDED


def test_partially_old_action_trajectory_executes_its_future_points(arm):
    rig, _ = arm
    client = rig.client()
    first = client.send_goal(fjt_goal(moving([1.0, 1.0], 2.0)))
    rig.run(0.3)
    msg = traj(J, [pt([5.0, 5.0], 0.2), pt([0.3, 0.3], 1.0), pt([0.1, -0.1], 1.5)], stamp=rig.t - 0.5)
    second = client.send_goal(fjt_goal(msg))
    assert first.get_goal_status() == GoalStatus.PREEMPTED
    rig.run(3.0, until=second.is_done)
    assert second.get_goal_status() == GoalStatus.SUCCEEDED
    assert rig.robot.positions() == pytest.approx([0.1, -0.1], abs=0.01)


def test_future_trajectory_waits_for_its_stamp(arm):
    rig, _ = arm
    rig.publish(traj(J, [pt(TARGET, 0.5)], stamp=rig.t + 1.0))
    rig.run(0.9)
    assert rig.robot.positions() == pytest.approx(HOME, abs=1e-6)
    rig.run(1.0)
    assert rig.robot.positions() == pytest.approx(TARGET, abs=0.01)


# --------------------------------------------------------------------------------- tolerances
@pytest.mark.parametrize("hold_on_abort", [True, False])
def test_path_tolerance_violation_aborts(hold_on_abort):
    rig, ctrl = start_jtc(hold_on_abort=hold_on_abort)
    try:
        rig.robot.speed = 0.05  # a robot far too slow for the trajectory
        goal = rig.client().send_goal(fjt_goal(moving([1.0, 1.0], 1.0)))
        rig.run(2.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.ABORTED
        result = goal.get_result()
        assert result.error_code == R.PATH_TOLERANCE_VIOLATED
        assert "path error" in result.error_string and "joint" in result.error_string
        at_abort = ctrl.executor.feedback().desired_positions.copy()
        rig.run(0.5)
        later = ctrl.executor.feedback().desired_positions
        if hold_on_abort:
            assert later.tolist() == pytest.approx(at_abort.tolist(), abs=0.02)  # stopped
        else:
            assert later[0] > at_abort[0] + 0.2  # upstream: the trajectory keeps going
    finally:
        rig.close()


def test_path_tolerance_violation_of_a_single_joint_names_it(arm):
    rig, _ = arm
    rig.robot.stuck["joint2"] = True
    goal = rig.client().send_goal(fjt_goal(moving([0.5, 0.5], 1.0)))
    rig.run(2.0, until=goal.is_done)
    result = goal.get_result()
    assert result.error_code == R.PATH_TOLERANCE_VIOLATED
    assert result.error_string.startswith("joint2 path error")


def test_goal_tolerance_violation(arm):
    rig, _ = arm
    rig.robot.stuck["joint1"] = True
    start = rig.t
    g = fjt_goal(moving([0.5, 0.5], 1.0), path={"joint1": -1.0, "joint2": -1.0})
    goal = rig.client().send_goal(g)
    rig.run(3.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    result = goal.get_result()
    assert result.error_code == R.GOAL_TOLERANCE_VIOLATED
    assert result.error_string.startswith("joint1 goal error")
    assert rig.t - start == pytest.approx(1.0 + 0.5, abs=0.1)  # end + goal_time (+ monitor period)


def test_goal_tolerance_from_the_goal_overrides_the_parameter(arm):
    rig, _ = arm
    rig.robot.speed = 0.3
    g = fjt_goal(moving([0.5, 0.5], 0.5), path={"joint1": -1, "joint2": -1},
                 goal={"joint1": 0.5, "joint2": 0.5}, goal_time=0.0)
    goal = rig.client().send_goal(g)
    rig.run(3.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED


def test_goal_times_out_without_an_explicit_goal_time():
    rig, _ = start_jtc(constraints={"goal_time": 0.0})
    try:
        rig.robot.stuck["joint1"] = True
        start = rig.t
        goal = rig.client().send_goal(fjt_goal(moving([0.5, 0.5], 1.0), path={"joint1": -1, "joint2": -1}))
        rig.run(5.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.ABORTED
        assert goal.get_result().error_code == R.GOAL_TOLERANCE_VIOLATED
        assert rig.t - start < 1.2  # right after the end: never hangs
    finally:
        rig.close()


def test_goal_with_a_long_goal_time_still_ends(arm):
    rig, ctrl = arm
    assert ctrl.executor._timeout_margin == 1.0
    rig.robot.stuck["joint1"] = True
    g = fjt_goal(moving([0.5, 0.5], 0.5), path={"joint1": -1, "joint2": -1}, goal_time=2.0)
    start = rig.t
    goal = rig.client().send_goal(g)
    rig.run(10.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    assert rig.t - start < 0.5 + 2.0 + 1.0 + 0.2


# --------------------------------------------------------------------------------- partial goals
def test_partial_goal_moves_only_its_joints():
    rig, _ = start_jtc(allow_partial_joints_goal=True)
    try:
        client = rig.client()
        goal = client.send_goal(fjt_goal(traj(["joint2"], [pt([0.4], 0.5)])))
        rig.run(2.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED
        assert rig.robot.positions() == pytest.approx([0.0, 0.4], abs=0.01)
    finally:
        rig.close()


@pytest.mark.parametrize("first,second", [("topic", "topic"), ("action", "action"), ("topic", "action"),
                                          ("action", "topic")])
def test_partial_replacement_keeps_the_other_joint_on_its_trajectory(first, second):
    rig, _ = start_jtc(allow_partial_joints_goal=True)
    try:
        client = rig.client()
        full = moving([0.8, 0.8], 1.5)
        partial = traj(["joint2"], [pt([-0.3], 1.0)])
        g1 = client.send_goal(fjt_goal(full)) if first == "action" else rig.publish(full)
        rig.run(0.3)
        g2 = client.send_goal(fjt_goal(partial)) if second == "action" else rig.publish(partial)
        if g1 is not None:
            assert g1.get_goal_status() == GoalStatus.PREEMPTED
        rig.run(2.5)
        assert rig.robot.positions() == pytest.approx([0.8, -0.3], abs=0.01)
        if g2 is not None:
            assert g2.get_goal_status() == GoalStatus.SUCCEEDED
    finally:
        rig.close()


def test_partial_trajectory_in_the_future_runs_after_the_old_one():
    rig, _ = start_jtc(allow_partial_joints_goal=True)
    try:
        rig.publish(moving([0.5, 0.5], 1.0))
        rig.run(0.2)
        later = traj(["joint1"], [pt([-0.5], 0.5)], stamp=rig.t + 1.5)
        goal = rig.client().send_goal(fjt_goal(later))
        rig.run(1.2)
        assert rig.robot.positions() == pytest.approx([0.5, 0.5], abs=0.01)
        rig.run(2.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED
        assert rig.robot.positions() == pytest.approx([-0.5, 0.5], abs=0.01)
    finally:
        rig.close()


# --------------------------------------------------------------------------------- MoveIt
def moveit_goal(rig, names, targets, duration=1.5, n=30):
    """What MoveIt sends: stamp 0, group order, first point = current state at t=0, vel+acc filled."""
    start = np.array([rig.robot.state[name].position for name in names])
    goal_pos = np.array(targets)
    points = []
    for t in np.linspace(0.0, duration, n):
        u = t / duration
        s = 10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5
        ds = (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / duration
        dds = (60 * u - 180 * u ** 2 + 120 * u ** 3) / duration ** 2
        d = goal_pos - start
        points.append(pt(start + s * d, t, d * ds, d * dds))
    return fjt_goal(traj(names, points, stamp=0.0),
                    goal={name: 0.01 for name in names}, path={name: 0.05 for name in names})


@pytest.mark.parametrize("variant", ["position", "velocity", "pos_vel_acc"])
def test_moveit_shaped_goal_succeeds_within_the_goal_tolerance(variant):
    joints = {f"j{i}": ("continuous" if i % 2 else "revolute") for i in range(6)}
    rig, _ = start_jtc(variant, joints=joints, positions=[0.1 * i for i in range(6)])
    try:
        rig.run(0.1)
        group_order = ["j3", "j1", "j5", "j0", "j4", "j2"]
        targets = [0.5, -1.0, 2.5, 0.3, -0.7, 1.2]
        goal = rig.client().send_goal(moveit_goal(rig, group_order, targets))
        assert goal.get_goal_status() == GoalStatus.ACTIVE
        rig.run(4.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_result()
        for name, target in zip(group_order, targets):
            assert abs(angle_diff(rig.robot.state[name].position, target)) < 0.01
    finally:
        rig.close()


def test_restart_holds_the_current_position():
    rig = JtcRig({"joint1": "continuous", "joint2": "continuous"}, positions=[0.2, -0.2])
    try:
        ctrl = rig.start("arm", jtc_type(), rrbot_params(J))
        rig.run(0.2)
        assert rig.robot.positions() == pytest.approx([0.2, -0.2])
        rig.publish(moving(TARGET, 0.5))
        rig.run(0.2)
        rig.switch(stop=["arm"])
        here = rig.robot.positions()
        rig.switch(start=["arm"])
        rig.run(0.5)
        assert rig.robot.positions() == pytest.approx(here, abs=0.01)
        assert ctrl.executor.uptime < 0.6
    finally:
        rig.close()
