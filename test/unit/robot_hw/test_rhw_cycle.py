"""read()/write() with the real middleware threads and the simulated firmware."""
from __future__ import annotations

import math

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.hardware_interface import (
    EffortActuatorInterface,
    EffortJointInterface,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    PosVelJointInterface,
    SwitchState,
)
from rospy_control.middleware import ControlMode

from robot_hw_testutil import (
    ARM_HW, ARM_URDF, DT, differential, hardware, info, joint, load_yaml, motor, position, simple, spin,
    switch, urdf,
)


def test_read_propagates_motor_state_through_belt_and_differential(make_hw):
    xml = hardware(motor("me", 1, sim='initial_position="1.2"'),
                   motor("ma", 2, sim='initial_position="0.4"'),
                   motor("mb", 3, 'direction="-1"', sim='initial_position="0.2"'))
    text = urdf(joint("elbow"), joint("a"), joint("b"),
                simple("belt", "elbow", "me", reduction=2, offset=0.1),
                differential("diff", "a", "b", "ma", "mb"))
    hw = make_hw(xml, text, {"hold_mode": "none"})
    spin(hw, 0.03)
    state = hw.get(JointStateInterface)
    assert state.get_handle("elbow").get_position() == pytest.approx(1.2 / 2 + 0.1, abs=2e-3)
    assert state.get_handle("a").get_position() == pytest.approx((0.4 + 0.2) / 2, abs=2e-3)
    assert state.get_handle("b").get_position() == pytest.approx((0.4 - 0.2) / 2, abs=2e-3)
    # efforts go the other way round: tau_j = n * tau_a
    assert abs(state.get_handle("elbow").get_velocity()) < 0.05
    assert hw.get(EffortActuatorInterface).get_handle("mb").get_position() == pytest.approx(0.2, abs=2e-3)


def test_position_commands_move_the_simulated_joints_through_the_transmissions(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    joints = ("elbow_joint", "wrist_2_joint", "wrist_3_joint")
    assert switch(hw, [info("pos", PositionJointInterface, *joints)]) == [SwitchState.DONE]  # same mode
    iface = hw.get(PositionJointInterface)
    handles = [iface.get_handle(j) for j in joints]
    target = (0.5, 0.3, -0.2)

    def command():
        for h, value in zip(handles, target):
            h.set_command(value)

    def reached():
        return all(abs(position(hw, j) - t) < 0.02 for j, t in zip(joints, target))

    assert spin(hw, 2.0, command, until=reached)
    sim = sim_of(hw).firmware("can0")
    # differential: a1 = j1 + j2, a2 = j1 - j2; belt: a = 2 (j - 0.1)
    assert sim.by_name["wrist_a_motor"].joint_position() == pytest.approx(0.1, abs=0.03)
    assert sim.by_name["wrist_b_motor"].joint_position() == pytest.approx(0.5, abs=0.03)
    assert sim.by_name["elbow_motor"].joint_position() == pytest.approx(0.8, abs=0.04)
    assert hw.get(PositionActuatorInterface).get_handle("elbow_motor").get_command() == pytest.approx(0.8)
    assert hw.middleware.snapshot()["wrist_a_motor"].mode == ControlMode.POSITION


def test_position_limits_clamp_and_rate_limit(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    switch(hw, [info("pos", PositionJointInterface, "shoulder_pan_joint")])
    handle = hw.get(PositionJointInterface).get_handle("shoulder_pan_joint")
    hw.read(0.0, 0.01)
    start = position(hw, "shoulder_pan_joint")
    handle.set_command(10.0)
    hw.write(0.0, 0.01)
    # soft limits from <safety_controller>, max_velocity 2.5 from the params: at most 2.5 * 0.01 per cycle
    assert start < handle.get_command() <= start + 0.025 + 1e-9
    # the joint follows the rate-limited command (how many cycles that takes depends on the host)
    assert spin(hw, 10.0, lambda: handle.set_command(10.0),
                until=lambda: position(hw, "shoulder_pan_joint") > 1.0)
    assert handle.get_command() <= 2.9 + 1e-9  # never beyond the soft upper limit


def test_effort_limits_clamp_and_map_through_the_reduction(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    results = switch(hw, [info("eff", EffortJointInterface, "gripper_finger_joint")])
    assert results[0] == SwitchState.ONGOING and results[-1] == SwitchState.DONE
    handle = hw.get(EffortJointInterface).get_handle("gripper_finger_joint")
    hw.read(0.0, DT)
    handle.set_command(100.0)
    hw.write(0.0, DT)
    assert handle.get_command() == pytest.approx(30.0)  # max_effort from joint_limits params
    # actuator effort = joint effort / reduction 100
    assert hw.get(EffortActuatorInterface).get_handle("gripper_motor").get_command() == pytest.approx(0.3)


def test_nan_commands_are_never_sent(make_hw, caplog):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    switch(hw, [info("pos", PositionJointInterface, "wrist_1_joint")])
    handle = hw.get(PositionJointInterface).get_handle("wrist_1_joint")
    spin(hw, 0.05, lambda: handle.set_command(0.2))
    sent = []
    m = hw.middleware.motor("wrist_1_motor")
    original = m.set_command
    m.set_command = lambda mode, value=0.0, effort=0.0: (sent.append((mode, value)),
                                                         original(mode, value, effort))
    # a position command with gravity feed-forward (t_ff) goes through set_position
    original_pos = m.set_position
    m.set_position = lambda p, v=0.0, e=0.0: (sent.append((ControlMode.POSITION, p)), original_pos(p, v, e))
    spin(hw, 0.1, lambda: handle.set_command(float("nan")))
    assert sent and all(mode == ControlMode.POSITION and math.isfinite(v) for mode, v in sent)
    held = sent[-1][1]
    assert abs(held - sent[0][1]) < 0.01  # held where it was
    assert "non-finite position command replaced by the hold value" in caplog.text


def test_posvel_sends_position_with_velocity_feed_forward(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, {"posvel_interface": True})
    switch(hw, [info("jtc", PosVelJointInterface, "wrist_1_joint")])
    handle = hw.get(PosVelJointInterface).get_handle("wrist_1_joint")
    calls = []
    m = hw.middleware.motor("wrist_1_motor")
    original = m.set_position
    m.set_position = lambda p, v=0.0, e=0.0: (calls.append((p, v)), original(p, v, e))
    hw.read(0.0, DT)
    p0 = position(hw, "wrist_1_joint")
    handle.set_command(p0 + 0.001, 0.4)
    hw.write(0.0, DT)
    assert calls == [(pytest.approx(p0 + 0.001), pytest.approx(0.4))]
    assert hw.joint_mode("wrist_1_joint") == ControlMode.POSITION


@pytest.mark.parametrize("hold_mode, mode", [("damping", ControlMode.DAMPING), ("none", ControlMode.NONE),
                                             ("position", ControlMode.POSITION)])
def test_unclaimed_joints_hold_in_the_configured_mode(make_hw, hold_mode, mode):
    hw = make_hw(hardware(motor("m1", 1, 'joint="j1"', sim='initial_position="0.3"')), urdf(joint("j1")),
                 {"hold_mode": hold_mode})
    spin(hw, 0.05)
    assert hw.middleware.snapshot()["m1"].mode == mode
    assert hw.joint_mode("j1") == mode
    assert position(hw, "j1") == pytest.approx(0.3, abs=0.01)


def test_start_holds_gravity_loaded_joints_before_any_control_cycle(make_hw):
    # The node needs a moment between starting the RobotHW and running its control loop. Motors are
    # enabled limp; start() must send the hold at once or the shoulder (URDF gravity load) falls to its stop.
    import time
    arm = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))   # started, no read/write after
    found = arm.middleware.snapshot()["shoulder_lift_motor"].position
    time.sleep(0.3)
    now = arm.middleware.snapshot()["shoulder_lift_motor"].position
    assert abs(now - found) < 0.05, f"shoulder sagged from {found:.3f} to {now:.3f} before the first cycle"
