"""JointTrajectoryController: goals and commands are checked against the joints' limits.

Reliability suite item 1 through the controller's ROS API (in-memory graph): an absurd goal is
rejected with INVALID_GOAL naming the joint, a later valid goal succeeds, ``state`` never carries
NaN or a desired state outside the limits, cancels are answered at once, and points longer than
``joint_names`` are accepted as upstream does.
"""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R

from rospy_control.testing import GoalStatus
from rospy_control.trajectory import PointState, Trajectory
from rospy_control.trajectory import executor as executor_module
from test_jtc_sim import JtcRig, fjt_goal, jtc_type, pt, rrbot_params, traj

J = ["elbow_joint", "wrist_joint"]
URDF = """<?xml version="1.0"?>
<robot name="limited">
  <link name="l0"/><link name="l1"/><link name="l2"/>
  <joint name="elbow_joint" type="revolute"><parent link="l0"/><child link="l1"/>
    <limit lower="-2.5" upper="2.5" velocity="3.0" effort="18"/></joint>
  <joint name="wrist_joint" type="continuous"><parent link="l1"/><child link="l2"/>
    <limit velocity="4.0" effort="9"/></joint>
</robot>
"""
HUGE = [1e6, 1e154, 1e300, 1.79769e308]
LOGGER = "rosout.rospy_control.trajectory.executor"


def limited_rig(joint_limits=None, **params):
    rig = JtcRig({name: "revolute" for name in J})
    rig.root_nh.set_param("robot_description", URDF)
    if joint_limits is not None:
        rig.root_nh.set_param("joint_limits", joint_limits)
    p = rrbot_params(J)
    p.update(params)
    ctrl = rig.start("arm", jtc_type(), p)
    rig.run(0.05)
    return rig, ctrl


@pytest.fixture
def arm():
    rig, ctrl = limited_rig()
    yield rig, ctrl
    rig.close()


def rest(positions, t):
    n = len(positions)
    return pt(positions, t, [0.0] * n, [0.0] * n)


def assert_states_sane(states):
    assert states, "no state message"
    for m in states:
        for field in (m.desired.positions, m.desired.velocities, m.desired.accelerations, m.error.positions):
            assert all(math.isfinite(v) for v in field), m
        assert -2.5 <= m.desired.positions[0] <= 2.5, m.desired.positions


def run_goal(rig, goal, seconds=4.0):
    handle = rig.client().send_goal(goal)
    rig.run(seconds, until=handle.is_done)
    return handle


def assert_succeeds(rig, target, seconds=4.0):
    handle = run_goal(rig, fjt_goal(traj(J, [rest(target, 1.0)])), seconds)
    assert handle.get_goal_status() == GoalStatus.SUCCEEDED, handle.get_result()
    assert rig.robot.positions() == pytest.approx(target, abs=0.02)


# ------------------------------------------------------------------------------------------ limits in use
def test_limits_come_from_the_urdf(arm):
    rig, ctrl = arm
    lim = ctrl.executor.limits
    assert lim.lower.tolist() == [-2.5, -math.inf] and lim.upper.tolist() == [2.5, math.inf]
    assert lim.max_velocity.tolist() == [3.0, 4.0]
    assert lim.max_acceleration.tolist() == [math.inf, math.inf]


# ------------------------------------------------------------------------------------------ the repro
def test_absurd_goal_is_rejected_naming_the_joint_then_valid_goals_succeed(arm):
    rig, ctrl = arm
    states = rig.record_state()
    handle = rig.client().send_goal(fjt_goal(traj(J, [rest([1e6, 0.0], 0.5)])))
    assert handle.get_goal_status() == GoalStatus.REJECTED
    result = handle.get_result()
    assert result.error_code == R.INVALID_GOAL
    assert result.error_string == ("Trajectory point 0: position 1000000.0 of joint 'elbow_joint' is outside "
                                   "its position limits [-2.5, 2.5]")
    assert handle.get_goal_status_text() == result.error_string
    for target in ([0.5, 0.3], [-0.4, 1.0], [0.0, 0.0]):
        rig.run(1.0)
        assert_succeeds(rig, target)
    assert_states_sane(states)


@pytest.mark.parametrize("field", ["positions", "velocities", "accelerations"])
@pytest.mark.parametrize("value", HUGE + [-1.79769e308])
def test_huge_values_are_rejected_with_invalid_goal(arm, field, value):
    rig, ctrl = arm
    states = rig.record_state()
    values = {"positions": [0.2, 0.2], "velocities": [0.0, 0.0], "accelerations": [0.0, 0.0]}
    values[field] = [value, 0.0]
    last = pt(values["positions"], 1.0, values["velocities"], values["accelerations"])
    msg = traj(J, [rest([0.1, 0.1], 0.5), last])
    handle = rig.client().send_goal(fjt_goal(msg))
    assert handle.get_goal_status() == GoalStatus.REJECTED
    text = handle.get_result().error_string
    assert handle.get_result().error_code == R.INVALID_GOAL
    assert "Trajectory point 1" in text and "'elbow_joint'" in text and repr(value) in text
    rig.run(0.3)
    assert_succeeds(rig, [0.3, -0.3])
    assert_states_sane(states)


@pytest.mark.parametrize("value", [2.0e6, 1.79769e308])
def test_continuous_joint_is_exempt_from_position_limits_but_bounded(arm, value):
    rig, ctrl = arm
    # beyond +-pi on the continuous joint: accepted, and wrapped to the short way (4 - 2 pi)
    handle = run_goal(rig, fjt_goal(traj(J, [rest([0.0, 4.0], 1.0)])))
    assert handle.get_goal_status() == GoalStatus.SUCCEEDED, handle.get_result()
    assert rig.robot.positions() == pytest.approx([0.0, 4.0 - 2 * math.pi], abs=0.02)
    handle = rig.client().send_goal(fjt_goal(traj(J, [rest([0.0, value], 0.5)])))
    assert handle.get_goal_status() == GoalStatus.REJECTED
    assert handle.get_result().error_code == R.INVALID_GOAL
    assert "'wrist_joint'" in handle.get_result().error_string


def test_velocity_beyond_four_times_the_limit_is_rejected(arm):
    rig, ctrl = arm
    handle = rig.client().send_goal(fjt_goal(traj(J, [pt([0.5, 0.0], 1.0, [12.0, 16.0])])))
    assert handle.get_goal_status() == GoalStatus.ACTIVE  # exactly 4x: accepted
    handle = rig.client().send_goal(fjt_goal(traj(J, [pt([0.5, 0.0], 1.0, [0.0, -16.5])])))
    assert handle.get_goal_status() == GoalStatus.REJECTED
    assert handle.get_result().error_string == (
        "Trajectory point 0: velocity -16.5 of joint 'wrist_joint' is beyond 4 times its velocity limit 4.0 "
        "(|velocity| <= 16.0)")


def test_absurd_topic_command_logs_an_error_and_the_controller_keeps_holding(arm, caplog):
    rig, ctrl = arm
    states = rig.record_state()
    before = ctrl.executor.trajectory
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        rig.publish(traj(J, [rest([1e6, 0.0], 0.5)]))
    assert ctrl.executor.trajectory is before
    errors = [r for r in caplog.records if r.levelno == logging.ERROR and "elbow_joint" in r.getMessage()]
    assert errors and "Rejected trajectory command" in errors[0].getMessage()
    rig.run(0.5)
    assert rig.robot.positions() == pytest.approx([0.0, 0.0], abs=1e-9)
    rig.publish(traj(J, [rest([0.3, 0.2], 0.5)]))
    rig.run(1.5)
    assert rig.robot.positions() == pytest.approx([0.3, 0.2], abs=0.02)
    assert_states_sane(states)


# ------------------------------------------------------------------------------------------ joint_limits
def test_joint_limits_parameters_override_the_urdf():
    limits = {"elbow_joint": {"has_position_limits": True, "min_position": -1.0, "max_position": 2.5,
                              "has_velocity_limits": True, "max_velocity": 1.0,
                              "has_acceleration_limits": True, "max_acceleration": 2.0}}
    rig, ctrl = limited_rig(joint_limits=limits)
    try:
        client = rig.client()
        h = client.send_goal(fjt_goal(traj(J, [rest([-1.5, 0.0], 1.0)])))
        assert h.get_result().error_code == R.INVALID_GOAL
        assert "position -1.5 of joint 'elbow_joint' is outside its position limits [-1.0, 2.5]" in \
            h.get_result().error_string
        h = client.send_goal(fjt_goal(traj(J, [pt([0.5, 0.0], 1.0, [4.5, 0.0])])))
        assert "beyond 4 times its velocity limit 1.0" in h.get_result().error_string
        h = client.send_goal(fjt_goal(traj(J, [pt([0.5, 0.0], 1.0, [0.0, 0.0], [20.5, 0.0])])))
        assert "acceleration 20.5 of joint 'elbow_joint' is beyond 10 times its acceleration limit 2.0" in \
            h.get_result().error_string
        h = client.send_goal(fjt_goal(traj(J, [pt([-0.9, 0.0], 2.0, [0.0, 0.0], [0.0, 0.0])])))
        rig.run(4.0, until=h.is_done)
        assert h.get_goal_status() == GoalStatus.SUCCEEDED
    finally:
        rig.close()


def test_joint_limits_can_remove_position_limits():
    rig, ctrl = limited_rig(joint_limits={"elbow_joint": {"has_position_limits": False}})
    try:
        assert ctrl.executor.limits.lower.tolist() == [-math.inf, -math.inf]
    finally:
        rig.close()


@pytest.mark.parametrize("joint_limits, fragment", [
    ({"elbow_joint": {"has_velocity_limits": "yes"}}, "has_velocity_limits"),
    ({"elbow_joint": {"has_position_limits": True, "min_position": 2.0, "max_position": 1.0}},
     "lower position"),
    ([1, 2], "mapping"),
])
def test_bad_joint_limits_fail_the_load(joint_limits, fragment):
    rig = JtcRig({name: "revolute" for name in J})
    try:
        rig.root_nh.set_param("robot_description", URDF)
        rig.root_nh.set_param("joint_limits", joint_limits)
        rig.root_nh.set_param("arm", dict(rrbot_params(J), type=jtc_type()))
        result = rig.cm.load_controller("arm")
        assert not result.ok and fragment in result.message
    finally:
        rig.close()


# ------------------------------------------------------------------------------------------ holds, cancel
def broken_plan(ctrl, stop_joint_robot):
    """Replace the running goal's trajectory by an absurd one (1e297 rad, 1e300 rad/s), bypassing the
    validation -- the state an earlier version could be left in; the elbow sits at its hard stop."""
    stop_joint_robot.stuck["elbow_joint"] = True
    ex = ctrl.executor
    t0 = ex.uptime
    broken = Trajectory.from_states([t0, t0 + 5.0], [PointState([1e297, 0.1], [1e300, 0.0]),
                                                     PointState([1e297, 0.1], [0.0, 0.0])])
    plan = ex._plan
    with ex._state_lock:
        ex._plan = executor_module._Plan(broken, plan.tolerances.none(2), plan.goal, None)


@pytest.mark.parametrize("stop", [0.0, 0.25])
def test_cancel_is_answered_at_once_and_holds_the_measured_position(stop):
    rig, ctrl = limited_rig(stop_trajectory_duration=stop)
    try:
        handle = rig.client().send_goal(fjt_goal(traj(J, [rest([0.5, 0.5], 2.0)])))
        rig.run(0.3)
        broken_plan(ctrl, rig.robot)
        rig.run(0.05)
        measured = rig.robot.positions()
        states = rig.record_state()
        handle.cancel()
        rig.run(0.02, until=handle.is_done)  # at most two control periods
        assert handle.get_goal_status() == GoalStatus.PREEMPTED
        rig.run(0.5)
        assert_states_sane(states)
        assert states[-1].desired.positions[0] == pytest.approx(measured[0], abs=1e-9)
        rig.robot.stuck["elbow_joint"] = False
        assert_succeeds(rig, [-0.3, 0.2])  # the next goal inherits nothing
    finally:
        rig.close()


def test_preemption_by_a_new_goal_is_answered_at_once_and_the_new_goal_succeeds():
    rig, ctrl = limited_rig(stop_trajectory_duration=0.25)
    try:
        old = rig.client().send_goal(fjt_goal(traj(J, [rest([0.5, 0.5], 2.0)])))
        rig.run(0.3)
        broken_plan(ctrl, rig.robot)
        rig.run(0.05)
        states = rig.record_state()
        new = rig.client().send_goal(fjt_goal(traj(J, [rest([0.2, -0.2], 1.0)])))
        assert old.get_goal_status() == GoalStatus.PREEMPTED
        rig.robot.stuck["elbow_joint"] = False
        rig.run(4.0, until=new.is_done)
        assert new.get_goal_status() == GoalStatus.SUCCEEDED, new.get_result()
        assert_states_sane(states)
    finally:
        rig.close()


def test_abort_with_the_stop_ramp_does_not_run_past_the_limit():
    # a valid positions-only goal whose linear segment moves at 48 rad/s (the implied velocity is not
    # checked); the robot lags, the goal aborts, and the stop ramp must not continue at 48 rad/s
    rig, ctrl = limited_rig(stop_trajectory_duration=0.2)
    try:
        rig.robot.speed = 0.1
        states = rig.record_state()
        g = fjt_goal(traj(J, [pt([2.4, 0.0], 0.05), pt([2.45, 0.0], 0.5)]), path={"elbow_joint": 0.05})
        handle = run_goal(rig, g, 2.0)
        assert handle.get_result().error_code == R.PATH_TOLERANCE_VIOLATED
        rig.run(0.5)
        assert_states_sane(states)
        rig.robot.speed = 1.0
        assert_succeeds(rig, [0.0, 0.0])
    finally:
        rig.close()


# ------------------------------------------------------------------------------------------ longer points
def test_points_longer_than_joint_names_are_accepted_as_upstream():
    rig, ctrl = limited_rig(allow_partial_joints_goal=True)
    try:
        # upstream's partial-trajectory tests: joint_names [joint2] with 2 values per point
        msg = traj(["wrist_joint"], [pt([0.4, 0.9], 0.5, [0.0, 0.0]), pt([0.6, 1.1], 1.0, [0.0, 0.0])])
        handle = run_goal(rig, fjt_goal(msg))
        assert handle.get_goal_status() == GoalStatus.SUCCEEDED, handle.get_result()
        assert rig.robot.positions() == pytest.approx([0.0, 0.6], abs=0.02)
        # velocities must have as many values as the point's positions
        bad = traj(["wrist_joint"], [pt([0.4, 0.9], 0.5, [0.0])])
        handle = rig.client().send_goal(fjt_goal(bad))
        assert handle.get_goal_status() == GoalStatus.REJECTED
        assert "1 velocity value(s) for 2 position value(s)" in handle.get_result().error_string
        # shorter points are still rejected
        handle = rig.client().send_goal(fjt_goal(traj(J, [pt([0.4], 0.5)])))
        assert handle.get_result().error_code == R.INVALID_GOAL
    finally:
        rig.close()


def test_state_desired_stays_finite_through_every_rejection(arm):
    rig, ctrl = arm
    states = rig.record_state()
    for value in HUGE:
        for msg in (traj(J, [rest([value, 0.0], 0.5)]), traj(J, [pt([0.0, 0.0], 0.5, [value, 0.0])]),
                    traj(J, [pt([0.0, 0.0], 0.5, [0.0, 0.0], [0.0, value])])):
            rig.client().send_goal(fjt_goal(msg))
            rig.publish(msg)
            rig.run(0.05)
    rig.run(0.5)
    assert_states_sane(states)
    assert np.ptp([m.desired.positions for m in states], axis=0).max() == 0.0  # never moved
