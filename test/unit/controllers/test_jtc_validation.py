"""JointTrajectoryController: loading, parameters and the validation of commands and goals."""
from __future__ import annotations

import math

import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R

from rospy_control.controller_manager import ControllerManager
from rospy_control.testing import GoalStatus, InMemoryGraph, InMemoryNodeHandle
from test_jtc_sim import J, JtcRig, SimRobot, fjt_goal, jtc_type, make_urdf, pt, start_jtc, traj


@pytest.fixture
def arm():
    rig, ctrl = start_jtc()
    rig.run(0.05)
    yield rig, ctrl
    rig.close()


INVALID_GOALS = [
    ("wrong joint count", traj(["joint1"], [pt([1.0], 1.0)]), R.INVALID_JOINTS, "missing"),
    ("unknown joint", traj(["joint1", "elbow"], [pt([1, 1], 1.0)]), R.INVALID_JOINTS, "elbow"),
    ("duplicated joint", traj(["joint1", "joint1"], [pt([1, 1], 1.0)]), R.INVALID_JOINTS, "more than once"),
    ("empty goal", traj([], []), R.INVALID_JOINTS, "no joint names"),
    ("no positions", traj(J, [pt([], 1.0, [0, 0])]), R.INVALID_GOAL, "no positions"),
    ("size mismatch", traj(J, [pt([1.0], 1.0)]), R.INVALID_GOAL, "1 position value"),
    ("velocity size mismatch", traj(J, [pt([1, 1], 1.0, [0.0])]), R.INVALID_GOAL, "velocity"),
    ("equal times", traj(J, [pt([1, 1], 1.0), pt([2, 2], 1.0)]), R.INVALID_GOAL, "strictly increasing"),
    ("decreasing times", traj(J, [pt([1, 1], 1.0), pt([2, 2], 0.5)]), R.INVALID_GOAL, "strictly increasing"),
    ("nan position", traj(J, [pt([1, math.nan], 1.0)]), R.INVALID_GOAL, "joint2' is nan"),
    ("inf velocity", traj(J, [pt([1, 1], 1.0, [math.inf, 0])]), R.INVALID_GOAL, "joint1' is inf"),
    ("nan acceleration", traj(J, [pt([1, 1], 1.0, [0, 0], [0, math.nan])]), R.INVALID_GOAL, "acceleration"),
]


@pytest.mark.parametrize("name,msg,code,fragment", INVALID_GOALS, ids=[c[0] for c in INVALID_GOALS])
def test_invalid_goal_is_rejected_with_code_and_text(arm, name, msg, code, fragment):
    rig, ctrl = arm
    goal = rig.client().send_goal(fjt_goal(msg))
    assert goal.get_goal_status() == GoalStatus.REJECTED
    result = goal.get_result()
    assert result.error_code == code
    assert fragment in result.error_string
    assert goal.get_goal_status_text() == result.error_string


def test_rejected_goal_leaves_the_running_goal_alone(arm):
    rig, ctrl = arm
    client = rig.client()
    good = client.send_goal(fjt_goal(traj(J, [pt([0.3, 0.3], 0.5)])))
    rig.run(0.1)
    bad = client.send_goal(fjt_goal(traj(J, [pt([1, math.nan], 1.0)])))
    assert bad.get_goal_status() == GoalStatus.REJECTED
    assert good.get_goal_status() == GoalStatus.ACTIVE
    rig.run(2.0, until=good.is_done)
    assert good.get_goal_status() == GoalStatus.SUCCEEDED


INVALID_TOPIC = [c for c in INVALID_GOALS if c[0] != "empty goal"]  # empty points on the topic = hold


@pytest.mark.parametrize("name,msg,code,fragment", INVALID_TOPIC, ids=[c[0] for c in INVALID_TOPIC])
def test_invalid_topic_command_changes_nothing(arm, name, msg, code, fragment, caplog):
    rig, ctrl = arm
    before = ctrl.executor.trajectory
    rig.publish(msg)
    assert ctrl.executor.trajectory is before
    rig.run(0.5)
    assert rig.robot.positions() == pytest.approx([0.0, 0.0], abs=1e-9)


def test_nan_in_a_topic_command_is_rejected_with_a_warning(arm, caplog):
    rig, ctrl = arm
    rig.publish(traj(J, [pt([1, math.nan], 1.0)]))
    assert any("INVALID_GOAL" in r.getMessage() and "nan" in r.getMessage() for r in caplog.records)
    rig.run(0.5)
    assert rig.robot.positions() == pytest.approx([0.0, 0.0], abs=1e-9)


def test_goal_rejected_while_not_running():
    rig, ctrl = start_jtc()
    try:
        rig.switch(stop=["arm"])
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt([1, 1], 1.0)])))
        assert goal.get_goal_status() == GoalStatus.REJECTED
        assert goal.get_result().error_code == R.INVALID_GOAL
        assert "not running" in goal.get_result().error_string
    finally:
        rig.close()


def test_all_points_in_the_past_are_rejected_with_invalid_goal_and_a_clear_text(arm):
    rig, ctrl = arm
    goal = rig.client().send_goal(fjt_goal(traj(J, [pt([1, 1], 0.5)], stamp=rig.t - 2.0)))
    assert goal.get_goal_status() == GoalStatus.REJECTED
    result = goal.get_result()
    assert result.error_code == R.INVALID_GOAL  # never OLD_HEADER_TIMESTAMP, as the ROS 1 JTC
    assert "Dropping all 1 trajectory point(s)" in result.error_string
    assert "Stamp the trajectory 0" in result.error_string


def test_partially_old_trajectory_warns_once(arm, caplog, monkeypatch):
    import rospy_control.trajectory.message as message
    from rospy_control.log import Throttle
    monkeypatch.setattr(message, "_drop_throttle", Throttle(2.0))  # the engine's throttle is module-wide
    rig, ctrl = arm
    msg = traj(J, [pt([0.1, 0.1], 0.1), pt([0.2, 0.2], 0.2), pt([0.3, 0.3], 1.5)], stamp=rig.t - 0.5)
    rig.publish(msg)
    rig.publish(msg)
    drops = [r for r in caplog.records if "skipping its first" in r.getMessage()]
    assert len(drops) == 1  # throttled, and no "Dropping ..." spam
    assert not any("Dropping" in r.getMessage() for r in caplog.records)


def test_partial_joints_need_allow_partial_joints_goal():
    for allow, status in ((False, GoalStatus.REJECTED), (True, GoalStatus.ACTIVE)):
        rig, ctrl = start_jtc(allow_partial_joints_goal=allow)
        try:
            goal = rig.client().send_goal(fjt_goal(traj(["joint2"], [pt([0.2], 0.5)])))
            assert goal.get_goal_status() == status
            if not allow:
                assert goal.get_result().error_code == R.INVALID_JOINTS
        finally:
            rig.close()


# --------------------------------------------------------------------------------------- parameters
def test_parameters_reach_the_engine():
    rig, ctrl = start_jtc(constraints={"goal_time": 1.5, "stopped_velocity_tolerance": 0.02,
                                       "joint1": {"goal": 0.03, "trajectory": 0.2}, "nope": {"goal": 9.0}},
                          stop_trajectory_duration=0.25, hold_on_abort=False, goal_timeout_margin=2.0,
                          state_publish_rate=25, action_monitor_rate=10)
    try:
        ex = ctrl.executor
        tol = ex.default_tolerances
        assert tol.goal_time.tolist() == [1.5, 1.5]
        assert tol.goal.velocity.tolist() == [0.02, 0.02]
        assert tol.goal.position.tolist() == [0.03, 0.01]
        assert tol.path.position.tolist() == [0.2, 0.05]
        assert ex.hold_on_abort is False
        assert ex._stop_duration == 0.25 and ex._timeout_margin == 2.0
        assert ctrl.ros.state_rate.rate == 25.0 and ctrl.ros.monitor_worker.rate == 10.0
        assert ex._continuous.tolist() == [True, True]
    finally:
        rig.close()


def test_defaults():
    rig = JtcRig({"a": "revolute", "b": "continuous"})
    try:
        ctrl = rig.start("arm", jtc_type(), {"joints": ["a", "b"]})
        ex = ctrl.executor
        tol = ex.default_tolerances
        assert tol.goal_time.tolist() == [0.0, 0.0]
        assert tol.goal.velocity.tolist() == [0.01, 0.01]
        assert tol.goal.position.tolist() == [0.0, 0.0] and tol.path.position.tolist() == [0.0, 0.0]
        assert ex.hold_on_abort is True and ex._stop_duration == 0.0 and ex._timeout_margin == 1.0
        assert ex._allow_partial is False
        assert ctrl.ros.state_rate.rate == 50.0 and ctrl.ros.monitor_worker.rate == 20.0
        assert ex._continuous.tolist() == [False, True]
    finally:
        rig.close()


def _load_error(rig, params, variant="position"):
    rig.root_nh.set_param("arm", dict(params, type=jtc_type(variant)))
    result = rig.cm.load_controller("arm")
    assert not result.ok
    return result.message


@pytest.mark.parametrize("params,fragment", [
    ({}, "joints"),
    ({"joints": []}, "joints"),
    ({"joints": ["joint1", "joint1"]}, "duplicated"),
    ({"joints": ["joint1", "wrist"]}, "wrist"),
    ({"joints": ["joint1"], "state_publish_rate": "fast"}, "state_publish_rate"),
    ({"joints": ["joint1"], "action_monitor_rate": 0}, "action_monitor_rate"),
    ({"joints": ["joint1"], "hold_on_abort": "yes"}, "hold_on_abort"),
])
def test_bad_configuration_fails_the_load(params, fragment):
    rig = JtcRig({"joint1": "continuous"})
    try:
        _load_error(rig, params)
        assert rig.cm.get_controller_by_name("arm") is None
    finally:
        rig.close()


def test_missing_urdf_fails_the_load():
    rig = JtcRig({"joint1": "continuous"})
    try:
        rig.root_nh.delete_param("robot_description")
        _load_error(rig, {"joints": ["joint1"]})
    finally:
        rig.close()


def test_joint_missing_from_the_urdf_fails_the_load():
    rig = JtcRig({"joint1": "continuous"})
    try:
        rig.root_nh.set_param("robot_description", make_urdf({"other": "revolute"}))
        _load_error(rig, {"joints": ["joint1"]})
    finally:
        rig.close()


@pytest.mark.parametrize("variant", ["velocity", "effort"])
def test_missing_gains_fail_the_load(variant):
    rig = JtcRig({"joint1": "continuous"})
    try:
        _load_error(rig, {"joints": ["joint1"], "gains": {"joint1": {"i": 1.0}}}, variant)
    finally:
        rig.close()


def test_robot_description_found_on_the_root_namespace_then_globally():
    graph = InMemoryGraph()
    root_nh = InMemoryNodeHandle("/robot", graph)
    robot = SimRobot(["joint1"])
    cm = ControllerManager(robot, root_nh)
    try:
        root_nh.set_param("/robot_description", make_urdf({"joint1": "continuous"}))
        root_nh.set_param("arm", {"type": jtc_type(), "joints": ["joint1"]})
        assert cm.load_controller("arm").ok
        assert cm.get_controller_by_name("arm").executor._continuous.tolist() == [True]
        # a description in the controller manager's namespace wins over the global one
        root_nh.set_param("robot_description", make_urdf({"joint1": "revolute"}))
        root_nh.set_param("arm2", {"type": jtc_type(), "joints": ["joint1"]})
        assert cm.unload_controller("arm").ok
        assert cm.load_controller("arm2").ok
        assert cm.get_controller_by_name("arm2").executor._continuous.tolist() == [False]
    finally:
        cm.shutdown()


def test_unload_removes_the_ros_api(arm):
    rig, ctrl = arm
    graph = rig.graph
    assert graph.action_server("/arm/follow_joint_trajectory") is not None
    assert "/arm/query_state" in graph.service_names()
    rig.switch(stop=["arm"])
    assert rig.cm.unload_controller("arm").ok
    assert graph.action_server("/arm/follow_joint_trajectory") is None
    assert "/arm/query_state" not in graph.service_names()
    assert graph.num_subscribers("/arm/command") == 0
    assert graph.num_publishers("/arm/state") == 0
