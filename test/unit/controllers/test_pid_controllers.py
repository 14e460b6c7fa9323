"""PID joint controllers: effort/velocity JointPositionController, effort JointVelocityController,
effort JointGroupPositionController."""
from __future__ import annotations

import math

import pytest
from std_msgs.msg import Float64, Float64MultiArray

control_msgs = pytest.importorskip("control_msgs.msg")   # present once the workspace is built

PID = {"p": 10.0, "i": 0.0, "d": 0.0}


def test_effort_position_controller_revolute_clamps_to_urdf_limits(rig):
    ctrl = rig.load("c", "effort_controllers/JointPositionController", joint="j1", pid=PID)
    data = rig.robot.joints["j1"]
    data.position = 0.2
    ctrl.start_request(1.0)
    ctrl.update_request(1.0, 0.01)
    assert data.command_effort == pytest.approx(0.0)            # set point = current position
    rig.publish("c/command", Float64(data=5.0))                  # beyond upper limit 1.0
    ctrl.update_request(1.01, 0.01)
    assert data.command_effort == pytest.approx(10.0 * (1.0 - 0.2))
    ctrl.stop_request(1.02)
    assert data.command_effort == 0.0


def test_continuous_joint_uses_shortest_angular_distance(rig):
    ctrl = rig.load("c", "effort_controllers/JointPositionController", joint="j2", pid=PID)
    data = rig.robot.joints["j2"]
    data.position = 3.0
    ctrl.start_request(1.0)
    ctrl.set_command(-3.0)
    ctrl.update_request(1.0, 0.01)
    assert data.command_effort == pytest.approx(10.0 * (2 * math.pi - 6.0))


def test_prismatic_joint_plain_difference_and_limits(rig):
    ctrl = rig.load("c", "effort_controllers/JointPositionController", joint="j3", pid=PID)
    data = rig.robot.joints["j3"]
    data.position = 0.1
    ctrl.start_request(1.0)
    ctrl.set_command(0.3)
    ctrl.update_request(1.0, 0.01)
    assert data.command_effort == pytest.approx(2.0)
    ctrl.set_command(-1.0)                                       # below lower limit 0.0
    ctrl.update_request(1.01, 0.01)
    assert data.command_effort == pytest.approx(-1.0)


def test_velocity_set_point_drives_the_derivative_term(rig):
    ctrl = rig.load("c", "effort_controllers/JointPositionController", joint="j3",
                    pid={"p": 0.0, "d": 2.0})
    data = rig.robot.joints["j3"]
    data.position, data.velocity = 0.1, 0.05
    ctrl.start_request(1.0)
    ctrl.set_command(0.1, velocity=0.3)
    ctrl.update_request(1.0, 0.01)
    assert data.command_effort == pytest.approx(2.0 * (0.3 - 0.05))


def test_state_published_every_tenth_cycle(rig):
    states = rig.record("c/state", control_msgs.JointControllerState)
    ctrl = rig.load("c", "effort_controllers/JointPositionController", joint="j3",
                    pid={"p": 10.0, "i": 1.0, "d": 0.5, "i_clamp": 2.0, "antiwindup": True})
    data = rig.robot.joints["j3"]
    data.position, data.velocity = 0.1, 0.02
    ctrl.start_request(1.0)
    ctrl.set_command(0.2)
    for k in range(25):
        ctrl.update_request(1.0 + 0.01 * k, 0.01)
    assert len(states) == 3
    first = states[0]
    assert first.header.stamp.to_sec() == pytest.approx(1.0)
    assert (first.set_point, first.process_value, first.process_value_dot) == pytest.approx((0.2, 0.1, 0.02))
    assert first.error == pytest.approx(0.1) and first.time_step == pytest.approx(0.01)
    assert first.command == pytest.approx(10.0 * 0.1 + 1.0 * 0.001 + 0.5 * 0.1 / 0.01)
    assert (first.p, first.i, first.d, first.i_clamp, first.antiwindup) == (10.0, 1.0, 0.5, 2.0, True)
    assert states[1].header.stamp.to_sec() == pytest.approx(1.1)


def test_velocity_controllers_position_pid_outputs_velocity(rig):
    ctrl = rig.load("c", "velocity_controllers/JointPositionController", joint="j3", pid=PID)
    [entry] = rig.cm.list_controllers()[0].claimed_resources
    assert entry.hardware_interface == "hardware_interface::VelocityJointInterface"
    ctrl.start_request(1.0)
    ctrl.set_command(0.2)
    ctrl.update_request(1.0, 0.01)
    assert rig.robot.joints["j3"].command_velocity == pytest.approx(2.0)
    ctrl.abort_request(1.01)
    assert rig.robot.joints["j3"].command_velocity == 0.0


def test_effort_velocity_controller(rig):
    states = rig.record("c/state", control_msgs.JointControllerState)
    ctrl = rig.load("c", "effort_controllers/JointVelocityController", joint="j2", pid={"p": 4.0})
    data = rig.robot.joints["j2"]
    data.velocity = 0.5
    ctrl.start_request(1.0)
    ctrl.update_request(1.0, 0.01)
    assert data.command_effort == pytest.approx(-2.0)            # set point 0 after start
    rig.publish("c/command", Float64(data=1.5))
    ctrl.update_request(1.01, 0.01)
    assert data.command_effort == pytest.approx(4.0)
    assert states[0].set_point == 0.0 and states[0].process_value == 0.5
    ctrl.stop_request(1.02)
    assert data.command_effort == 0.0


def test_group_position_pid(rig):
    ctrl = rig.load("g", "effort_controllers/JointGroupPositionController", joints=["j1", "j3"],
                    j1={"pid": {"p": 1.0}}, j3={"pid": {"p": 100.0}})
    rig.robot.joints["j1"].position = 0.5
    rig.robot.joints["j3"].position = 0.2
    ctrl.start_request(1.0)
    ctrl.update_request(1.0, 0.01)
    assert rig.robot.joints["j1"].command_effort == pytest.approx(0.0)
    rig.publish("g/command", Float64MultiArray(data=[0.0, 0.3]))
    ctrl.update_request(1.01, 0.01)
    assert rig.robot.joints["j1"].command_effort == pytest.approx(-0.5)
    assert rig.robot.joints["j3"].command_effort == pytest.approx(10.0)
    rig.publish("g/command", Float64MultiArray(data=[0.0]))      # wrong length: ignored
    ctrl.update_request(1.02, 0.01)
    assert rig.robot.joints["j3"].command_effort == pytest.approx(10.0)


@pytest.mark.parametrize("params,message", [
    ({"joint": "j1"}, "No p gain specified for pid"),
    ({"joint": "nope", "pid": PID}, "Could not find joint 'nope' in urdf"),
    ({"pid": PID}, "Parameter 'joint' not set"),
])
def test_load_failures(rig, params, message):
    rig.root_nh.set_param("c", dict(params, type="effort_controllers/JointPositionController"))
    result = rig.cm.load_controller("c")
    assert not result.ok and message in result.message


def test_missing_robot_description_fails(rig):
    rig.root_nh.delete_param("robot_description")
    rig.root_nh.set_param("c", {"type": "effort_controllers/JointPositionController", "joint": "j1",
                                "pid": PID})
    result = rig.cm.load_controller("c")
    assert not result.ok and "Could not find parameter 'robot_description'" in result.message


def test_robot_description_found_in_a_parent_namespace(rig):
    rig.root_nh.set_param("arm/c", {"type": "effort_controllers/JointPositionController", "joint": "j1",
                                    "pid": PID})
    from rospy_control.controller_manager import ControllerManager
    cm = ControllerManager(rig.robot, rig.root_nh.child("arm"))
    assert cm.load_controller("c").ok
    cm.shutdown()
