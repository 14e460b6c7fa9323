"""prepare_switch / do_switch / switch_result over the simulated arm: real motor mode changes."""
from __future__ import annotations

import logging

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.hardware_interface import (
    EffortJointInterface,
    JointStateInterface,
    PositionJointInterface,
    SwitchState,
    VelocityJointInterface,
)
from rospy_control.middleware import ControlMode

from robot_hw_testutil import (
    ARM_HW, ARM_URDF, info, load_yaml, position, spin, switch, wait_until,
)

WRIST = ("wrist_2_joint", "wrist_3_joint")


@pytest.fixture
def arm(make_hw):
    return make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))


def rejected(hw, caplog, start, stop=()) -> str:
    caplog.clear()
    with caplog.at_level(logging.ERROR):
        assert hw.prepare_switch(list(start), list(stop)) is False
    return caplog.text


def test_prepare_rejects_double_commanding_after_the_stops(arm, caplog):
    pos = info("pos", PositionJointInterface, "elbow_joint", "wrist_1_joint")
    switch(arm, [pos])
    vel = info("vel", VelocityJointInterface, "elbow_joint")
    text = rejected(arm, caplog, [vel])
    assert "joint 'elbow_joint' would be commanded through 2 interfaces at once" in text
    assert "'pos' via 'hardware_interface::PositionJointInterface'" in text
    assert "'vel' via 'hardware_interface::VelocityJointInterface'" in text
    assert arm.prepare_switch([vel], [pos]) is True  # fine once 'pos' stops
    both = info("both", PositionJointInterface, "shoulder_pan_joint")
    both.claimed_resources += info("x", EffortJointInterface, "shoulder_pan_joint").claimed_resources
    text = rejected(arm, caplog, [both])
    assert "joint 'shoulder_pan_joint' would be commanded through 2 interfaces" in text


def test_prepare_rejects_interfaces_the_transmission_does_not_list(arm, caplog):
    text = rejected(arm, caplog, [info("vel", VelocityJointInterface, "gripper_finger_joint")])
    assert "controller 'vel' needs 'hardware_interface::VelocityJointInterface' for joint " \
           "'gripper_finger_joint', which its transmission 'gripper_trans' does not offer" in text
    assert "offered: hardware_interface::PositionJointInterface, " \
           "hardware_interface::EffortJointInterface" in text


def test_prepare_rejects_two_modes_in_one_differential(arm, caplog):
    text = rejected(arm, caplog, [info("p", PositionJointInterface, "wrist_2_joint"),
                                  info("v", VelocityJointInterface, "wrist_3_joint")])
    assert "share transmission 'wrist_differential_trans'" in text
    assert "(wrist_a_motor, wrist_b_motor) run one control mode at a time" in text


def test_a_faulted_motor_does_not_veto_a_controller_start(arm, caplog):
    # A dead motor at start-up must not keep the controllers of the healthy joints from starting:
    # the switch is accepted (with a warning), the faulted joint gets nothing until a reset.
    sim_of(arm).firmware_of("wrist_1_motor").set_fault("wrist_1_motor", "silent")
    assert wait_until(lambda: arm.middleware.snapshot()["wrist_1_motor"].fault)
    ctrl = info("p", PositionJointInterface, "wrist_1_joint", "elbow_joint")
    with caplog.at_level(logging.WARNING):
        assert arm.prepare_switch([ctrl], []) is True
    assert "starts with joint 'wrist_1_joint' in FAULT (motor 'wrist_1_motor'" in caplog.text


def test_do_switch_changes_both_differential_motors_without_a_jump(arm):
    spin(arm, 0.1)
    before = {j: position(arm, j) for j in WRIST}
    mw = arm.middleware
    vel = info("vel", VelocityJointInterface, *WRIST)
    assert arm.prepare_switch([vel], [])
    arm.do_switch([vel], [])
    # both motors requested in the new mode at once; not confirmed before a reply
    assert mw.motor("wrist_a_motor").command_mode == ControlMode.VELOCITY
    assert mw.motor("wrist_b_motor").command_mode == ControlMode.VELOCITY
    assert arm.switch_result() == SwitchState.ONGOING
    assert arm.switch_result(vel) == SwitchState.ONGOING
    assert arm.joint_mode("wrist_3_joint") == ControlMode.VELOCITY
    results = []
    spin(arm, 1.0, until=lambda: results.append(arm.switch_result()) or results[-1] != SwitchState.ONGOING)
    assert results[-1] == SwitchState.DONE and arm.switch_result(vel) == SwitchState.DONE
    assert mw.snapshot()["wrist_a_motor"].mode == ControlMode.VELOCITY
    assert mw.snapshot()["wrist_b_motor"].mode == ControlMode.VELOCITY
    assert mw.mode_confirmed("wrist_b_motor", ControlMode.VELOCITY)
    # first command after the switch is 0 rad/s: nothing moved
    assert arm.get(VelocityJointInterface).get_handle("wrist_2_joint").get_command() == 0.0
    spin(arm, 0.1)
    for j in WRIST:
        assert abs(position(arm, j) - before[j]) < 0.01


def test_switch_back_to_position_holds_the_measured_position_and_resets_limits(arm):
    pos_ctrl = info("pos", PositionJointInterface, "wrist_1_joint")
    vel_ctrl = info("vel", VelocityJointInterface, "wrist_1_joint")
    pos_h = arm.get(PositionJointInterface).get_handle("wrist_1_joint")
    vel_h = arm.get(VelocityJointInterface).get_handle("wrist_1_joint")
    switch(arm, [pos_ctrl])
    spin(arm, 2.0, lambda: pos_h.set_command(0.6),
         until=lambda: abs(position(arm, "wrist_1_joint") - 0.6) < 0.02)
    assert switch(arm, [vel_ctrl], [pos_ctrl])[-1] == SwitchState.DONE
    spin(arm, 2.0, lambda: vel_h.set_command(-1.0), until=lambda: position(arm, "wrist_1_joint") < 0.1)
    at_switch = position(arm, "wrist_1_joint")
    results = switch(arm, [pos_ctrl], [vel_ctrl])
    assert results[0] == SwitchState.ONGOING and results[-1] == SwitchState.DONE
    # the seeded command is the measured position; the saturation handle was reset (else it would
    # pull the command back towards its stale previous value 0.6)
    samples = []
    spin(arm, 0.3, lambda: samples.append(position(arm, "wrist_1_joint")))
    assert max(abs(s - at_switch) for s in samples) < 0.05
    assert abs(pos_h.get_command() - at_switch) < 0.05


def test_stopped_joint_holds_its_last_setpoint(arm):
    ctrl = info("pos", PositionJointInterface, "shoulder_pan_joint")
    h = arm.get(PositionJointInterface).get_handle("shoulder_pan_joint")
    switch(arm, [ctrl])
    spin(arm, 2.0, lambda: h.set_command(0.4),
         until=lambda: abs(position(arm, "shoulder_pan_joint") - 0.4) < 0.01)
    assert switch(arm, [], [ctrl]) == [SwitchState.DONE]  # stays in POSITION mode: nothing to confirm
    assert arm.active_interface("shoulder_pan_joint") is None
    spin(arm, 0.2, lambda: h.set_command(-2.0))  # nobody owns it: ignored
    assert position(arm, "shoulder_pan_joint") == pytest.approx(0.4, abs=0.02)
    assert arm.status()["joints"]["shoulder_pan_joint"]["interface"] is None


def test_per_controller_switch_result_for_start_asap(arm):
    same_mode = info("pos", PositionJointInterface, "elbow_joint")
    new_mode = info("eff", EffortJointInterface, "shoulder_pan_joint")
    starts = [same_mode, new_mode]
    assert arm.prepare_switch(starts, [])
    arm.do_switch(starts, [])
    assert arm.switch_result(same_mode) == SwitchState.DONE
    assert arm.switch_result(new_mode) == SwitchState.ONGOING
    assert spin(arm, 1.0, until=lambda: arm.switch_result(new_mode) == SwitchState.DONE)
    assert arm.switch_result() == SwitchState.DONE
    assert arm.middleware.snapshot()["shoulder_pan_motor"].mode == ControlMode.EFFORT


def test_a_motor_faulting_during_the_switch_takes_the_mode_after_its_reset(arm):
    spin(arm, 0.05)
    mw = arm.middleware
    sim = sim_of(mw).firmware_of("wrist_1_motor")
    sim.set_fault("wrist_1_motor", "silent")
    ctrl = info("vel", VelocityJointInterface, "wrist_1_joint", "elbow_joint")
    results = switch(arm, [ctrl])
    # the healthy elbow confirms; the silent wrist is not waited for: the controller starts
    assert results[-1] == SwitchState.DONE
    assert arm.switch_result(ctrl) == SwitchState.DONE
    assert arm.active_interface("wrist_1_joint") == "hardware_interface::VelocityJointInterface"
    assert spin(arm, 2.0, until=lambda: "wrist_1_joint" in arm.faulted_joints())
    assert mw.snapshot()["elbow_motor"].mode == ControlMode.VELOCITY
    assert set(arm.status()["switch"]["deferred"]) == {"wrist_1_motor"}
    # the motor answers again and is reset: it runs in the controller's mode, from a hold
    sim.clear_fault("wrist_1_motor")
    mw.reset_fault("wrist_1_motor")
    assert spin(arm, 2.0, until=lambda: "wrist_1_joint" not in arm.faulted_joints())
    assert arm.consume_reset_request() is True
    assert spin(arm, 2.0, until=lambda: mw.snapshot()["wrist_1_motor"].mode == ControlMode.VELOCITY)


def test_an_abandoned_switch_does_not_block_the_next_one(arm):
    spin(arm, 0.05)
    mw = arm.middleware
    ctrl = info("vel", VelocityJointInterface, "elbow_joint")
    arm.do_switch([ctrl], [])
    assert arm.switch_result() == SwitchState.ONGOING
    # the controller manager timed out and aborted 'vel' (never told the RobotHW); a new switch on the
    # same joint must be possible
    other = info("eff", EffortJointInterface, "elbow_joint")
    assert arm.prepare_switch([other], [])
    arm.do_switch([other], [])
    assert mw.motor("elbow_motor").command_mode == ControlMode.EFFORT
    assert arm.active_interface("elbow_joint") == "hardware_interface::EffortJointInterface"


def test_check_for_conflict_keeps_the_default_rule(arm):
    a = info("a", PositionJointInterface, "elbow_joint")
    b = info("b", JointStateInterface, "elbow_joint")
    assert arm.check_for_conflict([a, b]) is True
    assert arm.check_for_conflict([a, info("c", PositionJointInterface, "wrist_1_joint")]) is False


@pytest.mark.parametrize("joint_name", ["shoulder_pan_joint", "wrist_1_joint"])
def test_example_arm_velocity_commands_break_static_friction(make_hw, joint_name):
    # The example configs together (limits YAML, URDF soft limits, simulated friction): a velocity
    # controller must actually move the joint, not stall under the acceleration bound.
    from rospy_control.hardware_interface import VelocityJointInterface
    arm = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    switch(arm, [info("vel", VelocityJointInterface, joint_name)])
    handle = arm.get(VelocityJointInterface).get_handle(joint_name)
    start = position(arm, joint_name)
    spin(arm, 0.6, lambda: handle.set_command(0.5))
    assert position(arm, joint_name) - start > 0.1
