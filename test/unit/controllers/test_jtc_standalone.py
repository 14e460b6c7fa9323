"""Reuse without a controller manager (the driver's ``use_ros_control:=false`` branch): the engine plus
:class:`TrajectoryRosApi`, or a JTC over a minimal RobotHW -- same action, topics, service and codes."""
from __future__ import annotations

import genpy
import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R
from control_msgs.srv import QueryTrajectoryStateRequest

from rospy_control.controllers.joint_trajectory_controller import (
    PositionJointTrajectoryController, TrajectoryRosApi, continuous_joints,
)
from rospy_control.hardware_interface import (
    JointData, JointHandle, JointStateHandle, PositionJointInterface, RobotHW,
)
from rospy_control.testing import GoalStatus, InMemoryActionClient, InMemoryGraph, InMemoryNodeHandle
from rospy_control.trajectory import TrajectoryExecutor
from test_jtc_sim import J, RRBOT, fjt_goal, make_urdf, pt, rrbot_params, traj


def _graph():
    graph = InMemoryGraph(time=5.0)
    root = InMemoryNodeHandle("/", graph)
    root.set_param("robot_description", make_urdf(RRBOT))
    root.set_param("arm", rrbot_params(J))
    return graph, root


def test_engine_plus_ros_api_serves_the_same_interface():
    graph, root = _graph()
    nh = root.child("arm")
    executor = TrajectoryExecutor.from_params(J, nh, continuous_joints(root, J), nh.namespace)
    api = TrajectoryRosApi(executor, nh)
    x = [0.0, 0.0]
    t = 5.0
    executor.start(t, x)
    api.on_start(t)
    client = InMemoryActionClient(root, "arm/follow_joint_trajectory")
    bad = client.send_goal(fjt_goal(traj(["joint1"], [pt([1.0], 1.0)])))
    assert bad.get_result().error_code == R.INVALID_JOINTS
    goal = client.send_goal(fjt_goal(traj(J, [pt([0.5, -0.5], 1.0)])))
    for _ in range(300):
        t += 0.01
        graph.set_time(t)
        desired, _, _ = executor.update(t, 0.01, x)
        x = desired.tolist()  # a perfect position-controlled robot
        api.on_update(t)
        if goal.is_done():
            break
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    request = QueryTrajectoryStateRequest(time=genpy.Time.from_sec(t))
    response = root.call_service("arm/query_state", request)
    assert list(response.position) == pytest.approx([0.5, -0.5])
    assert list(response.name) == J
    assert "/arm/state" in graph.topic_names() and "/arm/command" in graph.topic_names()
    nh.shutdown()
    assert graph.action_server("/arm/follow_joint_trajectory") is None


def test_controller_over_a_minimal_robot_hw_without_controller_manager():
    graph, root = _graph()
    data = {name: JointData() for name in J}
    iface = PositionJointInterface()
    for name, d in data.items():
        iface.register_handle(JointHandle(JointStateHandle(name, d), d, "command_position"))
    hw = RobotHW()
    hw.register_interface(iface)
    nh = root.child("arm")
    jtc = PositionJointTrajectoryController()
    jtc.init_request(hw, root, nh)
    t = 5.0
    jtc.start_request(t)
    root.advertise("arm/command", type(traj(J, [])), 1).publish(traj(J, [pt([0.2, 0.3], 0.5)]))
    for _ in range(100):
        t += 0.01
        graph.set_time(t)
        jtc.update_request(t, 0.01)
        for d in data.values():
            d.position = d.command_position
    assert [data[n].position for n in J] == pytest.approx([0.2, 0.3])
    jtc.stop_request(t)
    nh.shutdown()
