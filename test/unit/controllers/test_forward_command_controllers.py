"""position/velocity/effort forward command controllers, single joint and group."""
from __future__ import annotations

import logging

import pytest
from std_msgs.msg import Float64, Float64MultiArray

FIELD = {"position": "command_position", "velocity": "command_velocity", "effort": "command_effort"}


def single(kind: str) -> str:
    return f"{kind}_controllers/Joint{kind.capitalize()}Controller"


def group(kind: str) -> str:
    return f"{kind}_controllers/JointGroup{kind.capitalize()}Controller"


@pytest.mark.parametrize("kind", ["position", "velocity", "effort"])
def test_single_joint_forwards_the_latest_command(rig, kind):
    ctrl = rig.load("c", single(kind), joint="j2")
    data = rig.robot.joints["j2"]
    data.position = 0.7
    ctrl.start_request(1.0)
    ctrl.update_request(1.0, 0.01)
    expected_start = 0.7 if kind == "position" else 0.0
    assert getattr(data, FIELD[kind]) == expected_start
    rig.publish("c/command", Float64(data=1.5))
    rig.publish("c/command", Float64(data=2.5))
    assert getattr(data, FIELD[kind]) == expected_start          # written by update, not the callback
    ctrl.update_request(1.01, 0.01)
    assert getattr(data, FIELD[kind]) == 2.5


@pytest.mark.parametrize("kind", ["position", "velocity", "effort"])
def test_claims_the_joint_in_its_interface(rig, kind):
    rig.load("c", single(kind), joint="j1")
    [entry] = rig.cm.list_controllers()[0].claimed_resources
    assert entry.hardware_interface == f"hardware_interface::{kind.capitalize()}JointInterface"
    assert entry.resources == ["j1"]


@pytest.mark.parametrize("kind", ["velocity", "effort"])
def test_stale_command_is_not_replayed_and_stop_writes_zero(rig, kind):
    ctrl = rig.load("c", single(kind), joint="j1")
    data = rig.robot.joints["j1"]
    ctrl.start_request(1.0)
    rig.publish("c/command", Float64(data=3.0))
    ctrl.update_request(1.0, 0.01)
    assert getattr(data, FIELD[kind]) == 3.0
    ctrl.stop_request(1.01)
    assert getattr(data, FIELD[kind]) == 0.0
    ctrl.start_request(2.0)
    ctrl.update_request(2.0, 0.01)
    assert getattr(data, FIELD[kind]) == 0.0
    rig.publish("c/command", Float64(data=4.0))
    ctrl.update_request(2.01, 0.01)
    ctrl.abort_request(2.02)
    assert getattr(data, FIELD[kind]) == 0.0


def test_position_controller_holds_last_command_on_stop(rig):
    ctrl = rig.load("c", single("position"), joint="j1")
    ctrl.start_request(1.0)
    rig.publish("c/command", Float64(data=0.4))
    ctrl.update_request(1.0, 0.01)
    ctrl.stop_request(1.01)
    assert rig.robot.joints["j1"].command_position == 0.4


@pytest.mark.parametrize("params,message", [({}, "Parameter 'joint' not set"),
                                            ({"joint": "nope"}, "Could not find resource 'nope'"),
                                            ({"joint": 3}, "must be a str")])
def test_bad_joint_param_fails_the_load(rig, params, message):
    rig.root_nh.set_param("c", dict(params, type=single("velocity")))
    result = rig.cm.load_controller("c")
    assert not result.ok and message in result.message


@pytest.mark.parametrize("kind", ["position", "velocity", "effort"])
def test_group_forwards_and_rejects_wrong_length(rig, kind, caplog):
    ctrl = rig.load("g", group(kind), joints=["j3", "j1"])
    rig.robot.joints["j3"].position = 0.25
    rig.robot.joints["j1"].position = -0.5
    ctrl.start_request(1.0)
    ctrl.update_request(1.0, 0.01)
    field = FIELD[kind]
    start = [0.25, -0.5] if kind == "position" else [0.0, 0.0]
    assert [getattr(rig.robot.joints[j], field) for j in ("j3", "j1")] == start
    rig.publish("g/command", Float64MultiArray(data=[1.0, 2.0]))
    ctrl.update_request(1.01, 0.01)
    assert [getattr(rig.robot.joints[j], field) for j in ("j3", "j1")] == [1.0, 2.0]
    with caplog.at_level(logging.ERROR):
        rig.publish("g/command", Float64MultiArray(data=[9.0, 9.0, 9.0]))
    ctrl.update_request(1.02, 0.01)
    assert [getattr(rig.robot.joints[j], field) for j in ("j3", "j1")] == [1.0, 2.0]
    assert "Dimension of command (3) does not match number of joints (2)! Not executing!" in caplog.text
    [entry] = rig.cm.list_controllers()[0].claimed_resources
    assert entry.resources == ["j1", "j3"]


@pytest.mark.parametrize("joints", [[], "j1", None, ["j1", 2]])
def test_group_needs_a_non_empty_joint_list(rig, joints):
    params = {"type": group("effort")}
    if joints is not None:
        params["joints"] = joints
    rig.root_nh.set_param("g", params)
    assert not rig.cm.load_controller("g").ok


def test_group_velocity_stop_writes_zero(rig):
    ctrl = rig.load("g", group("velocity"), joints=["j1", "j2"])
    ctrl.start_request(1.0)
    rig.publish("g/command", Float64MultiArray(data=[1.0, 2.0]))
    ctrl.update_request(1.0, 0.01)
    ctrl.stop_request(1.01)
    assert [rig.robot.joints[j].command_velocity for j in ("j1", "j2")] == [0.0, 0.0]


def test_forward_controller_moves_a_joint_through_the_manager(rig):
    rig.load("v", single("velocity"), joint="j1")
    rig.switch(start=["v"])
    rig.publish("v/command", Float64(data=0.3))
    rig.cycle()
    assert rig.robot.joints["j1"].command_velocity == 0.3
    rig.switch(stop=["v"])
    assert rig.robot.joints["j1"].command_velocity == 0.0
    assert rig.cm.unload_controller("v").ok
    assert rig.graph.num_subscribers("/v/command") == 0
