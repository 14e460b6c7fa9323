"""The position step a motor receives between two command frames is capped at what the URDF velocity
limits allow over two control periods: per transmission, on the wire, whatever the timing."""
from __future__ import annotations

import os

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.middleware import ControlMode

from robot_hw_testutil import ARM_HW, ARM_URDF, ROOT, load_yaml, wait_until

PERIOD = 0.005  # a 200 Hz control loop


@pytest.fixture
def arm(make_hw):
    return make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))


def test_caps_follow_the_velocity_limits_through_the_transmissions(arm):
    caps = arm.limit_command_steps(PERIOD)
    quantum = 25.0 / 65535  # p range of the arm's motors on 16 bits

    def vmax(joint):  # URDF, or the tighter joint_limits parameter
        return arm.joint_limits(joint)[0].max_velocity

    expected = {
        "shoulder_pan_motor": vmax("shoulder_pan_joint") * 2 * PERIOD,       # 1:1
        "elbow_motor": 2.0 * vmax("elbow_joint") * 2 * PERIOD,               # reduction 2
        "wrist_1_motor": vmax("wrist_1_joint") * 2 * PERIOD,
        # differential: both joints move each motor
        "wrist_a_motor": (vmax("wrist_2_joint") + vmax("wrist_3_joint")) * 2 * PERIOD,
        "wrist_b_motor": (vmax("wrist_2_joint") + vmax("wrist_3_joint")) * 2 * PERIOD,
        "gripper_motor": 100.0 * vmax("gripper_finger_joint") * 2 * PERIOD,  # lead screw
    }
    assert vmax("shoulder_pan_joint") == 2.5  # config/arm_joint_limits.yaml tightens the URDF's 3.0
    for motor, cap in expected.items():
        assert cap - quantum <= caps[motor] <= cap, motor
    with pytest.raises(ValueError):
        arm.limit_command_steps(0.0)


def test_a_jump_in_the_commands_reaches_the_motor_as_a_ramp(arm):
    # a command 0.4 rad away, handed to the motor directly (as two control cycles between two bus frames,
    # or a controller bug, could produce): the wire carries a ramp of capped steps
    mw = arm.middleware
    caps = arm.limit_command_steps(PERIOD)
    motor = mw.motor("shoulder_pan_motor")
    start = mw.snapshot()["shoulder_pan_motor"].position
    motor.set_command(ControlMode.POSITION, start)
    assert wait_until(lambda: mw.snapshot()["shoulder_pan_motor"].mode == ControlMode.POSITION)
    sim_of(mw).reset_command_stats()
    target = start + 0.4
    motor.set_command(ControlMode.POSITION, target)
    assert wait_until(lambda: abs(mw.snapshot()["shoulder_pan_motor"].position - target) < 0.02, 5.0)
    stats = sim_of(mw).command_stats("shoulder_pan_motor")
    assert 0.0 < stats["max_step"] <= caps["shoulder_pan_motor"] + 1e-9
    assert motor.limited_frames >= int(0.4 / caps["shoulder_pan_motor"]) - 1


@pytest.mark.parametrize("protocol", ["damiao", "cubemars", "odrive", "robstride", "cia402"])
def test_every_protocol_ramps_a_jump(make_hw, protocol):
    # the cap is the device contract's, whatever the frames: on every protocol's example arm a
    # 0.4 rad jump reaches the device as a ramp of capped steps
    hw = make_hw(os.path.join(ROOT, "config", f"arm_hardware_{protocol}.xml"), ARM_URDF,
                 load_yaml("arm_joint_limits.yaml"))
    caps = hw.limit_command_steps(PERIOD)
    mw = hw.middleware
    motor = mw.motor("shoulder_pan_motor")
    start = mw.snapshot()["shoulder_pan_motor"].position
    before = motor.limited_frames
    motor.set_command(ControlMode.POSITION, start + 0.4)
    assert wait_until(lambda: abs(mw.snapshot()["shoulder_pan_motor"].position - start - 0.4) < 0.02, 5.0)
    assert motor.limited_frames - before >= int(0.4 / caps["shoulder_pan_motor"]) - 1
