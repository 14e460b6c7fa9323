"""Interfaces and resources a MiddlewareRobotHW registers, as the URDF and the hardware XML say."""
from __future__ import annotations

import pytest

from rospy_control.hardware_interface import (
    ROBOT_HW,
    ActuatorStateInterface,
    CombinedRobotHW,
    ContactSensorInterface,
    EffortActuatorInterface,
    EffortJointInterface,
    ForceTorqueSensorInterface,
    ImuSensorInterface,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    PosVelJointInterface,
    VelocityActuatorInterface,
    VelocityJointInterface,
)
from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.middleware import ControlMode
from rospy_control.robot_hw import MiddlewareRobotHW

from robot_hw_testutil import (
    ARM_HW, ARM_URDF, QUAD_HW, QUAD_URDF, differential, hardware, joint, load_yaml, motor, simple, spin, urdf,
)

ARM_JOINTS = ["elbow_joint", "gripper_finger_joint", "shoulder_lift_joint", "shoulder_pan_joint",
              "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]
ARM_MOTORS = ["elbow_motor", "gripper_motor", "shoulder_lift_motor", "shoulder_pan_motor", "wrist_1_motor",
              "wrist_a_motor", "wrist_b_motor"]


def test_arm_interfaces_follow_the_urdf_transmissions(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"), start=False)
    assert hw.get_names() == sorted([
        "hardware_interface::ActuatorStateInterface", "hardware_interface::PositionActuatorInterface",
        "hardware_interface::VelocityActuatorInterface", "hardware_interface::EffortActuatorInterface",
        "hardware_interface::JointStateInterface", "hardware_interface::PositionJointInterface",
        "hardware_interface::VelocityJointInterface", "hardware_interface::EffortJointInterface"])
    for cls in (ActuatorStateInterface, PositionActuatorInterface, VelocityActuatorInterface,
                EffortActuatorInterface):
        assert hw.get(cls).get_names() == ARM_MOTORS
    assert hw.get(JointStateInterface).get_names() == ARM_JOINTS
    assert hw.get(PositionJointInterface).get_names() == ARM_JOINTS
    assert hw.get(EffortJointInterface).get_names() == ARM_JOINTS
    # the gripper transmission lists Position and Effort only
    no_gripper = [j for j in ARM_JOINTS if j != "gripper_finger_joint"]
    assert hw.get(VelocityJointInterface).get_names() == no_gripper
    assert hw.joint_interfaces("gripper_finger_joint") == [
        "hardware_interface::PositionJointInterface", "hardware_interface::EffortJointInterface"]
    assert hw.get(PosVelJointInterface) is None
    assert hw.get(ImuSensorInterface) is None
    # handles refer to live data, unclaimed joints hold in position mode
    for j in ARM_JOINTS:
        assert hw.joint_mode(j) == ControlMode.POSITION and hw.active_interface(j) is None
    with pytest.raises(HardwareInterfaceError, match="Could not find resource 'nope' in "
                                                     "'hardware_interface::PositionJointInterface'"):
        hw.get(PositionJointInterface).get_handle("nope")


def test_limits_merge_urdf_and_params(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"), start=False)
    lim, soft = hw.joint_limits("shoulder_pan_joint")
    # URDF: position, velocity 3.0, effort; the YAML overrides velocity and sets no acceleration
    assert (lim.min_position, lim.max_position, lim.max_velocity, lim.max_effort) == (-3.0, 3.0, 2.5, 12.0)
    assert not lim.has_acceleration_limits
    assert (soft.min_position, soft.max_position, soft.k_position) == (-2.9, 2.9, 20.0)
    lim, soft = hw.joint_limits("wrist_3_joint")  # continuous
    assert lim.angle_wraparound and not lim.has_position_limits and lim.max_velocity == 3.5 and soft is None


def test_quadruped_binds_motors_with_agreeing_joint_attributes_and_sensors(make_hw):
    hw = make_hw(QUAD_HW, QUAD_URDF, load_yaml("quadruped_joint_limits.yaml"))
    legs = [f"{leg}_{j}_joint" for leg in ("lf", "lh", "rf", "rh") for j in ("haa", "hfe", "kfe")]
    assert hw.get(PositionJointInterface).get_names() == sorted(legs)
    assert hw.get(ImuSensorInterface).get_names() == ["imu"]
    contacts = hw.get(ContactSensorInterface)
    assert contacts.get_names() == [f"{leg}_foot_contact" for leg in ("lf", "lh", "rf", "rh")]
    imu = hw.get(ImuSensorInterface).get_handle("imu")
    assert imu.get_frame_id() == "imu_link"
    assert contacts.get_handle("rf_foot_contact").get_frame_id() == "rf_foot"
    spin(hw, 0.05)
    assert abs(imu.get_linear_acceleration()[2] - 9.81) < 0.3
    assert imu.get_orientation() == pytest.approx((0.0, 0.0, 0.0, 1.0), abs=1e-3)
    assert len(imu.get_orientation_covariance()) == 9
    # standing pose: every foot on the ground, carrying its weight
    for name in contacts.get_names():
        assert contacts.get_handle(name).is_in_contact() and contacts.get_handle(name).get_force() > 20.0
    state = hw.get(JointStateInterface)
    assert state.get_handle("lf_hfe_joint").get_position() == pytest.approx(0.7, abs=0.01)
    assert state.get_handle("rh_kfe_joint").get_position() == pytest.approx(-1.4, abs=0.01)


def test_motor_joint_attribute_binds_one_to_one_without_transmissions(make_hw):
    xml = hardware(motor("m1", 1, 'joint="j1"', 'initial_position="0.25"'),
                   motor("m2", 2, 'joint="j2" direction="-1" zero_offset="0.5"', 'initial_position="-0.4"'))
    hw = make_hw(xml, urdf(joint("j1"), joint("j2", "continuous", 'velocity="3" effort="5"')))
    for cls in (JointStateInterface, PositionJointInterface, VelocityJointInterface, EffortJointInterface):
        assert hw.get(cls).get_names() == ["j1", "j2"]
    spin(hw, 0.03)
    state = hw.get(JointStateInterface)
    assert state.get_handle("j1").get_position() == pytest.approx(0.25, abs=0.01)
    assert state.get_handle("j2").get_position() == pytest.approx(-0.4, abs=0.01)


def test_force_torque_sensor_handle(make_hw):
    ft = ('<unit name="wrist_ft" type="rospy_control/ForceTorqueSensor" channel="bus" can_id="0x40" '
          'frame_id="ft_link"><simulation fx="1.5" fy="-2.0" fz="30.0" tz="0.25"/></unit>')
    hw = make_hw(hardware(motor("m1", 1, 'joint="j1"'), ft), urdf(joint("j1")))
    handle = hw.get(ForceTorqueSensorInterface).get_handle("wrist_ft")
    assert handle.get_frame_id() == "ft_link"
    spin(hw, 0.03)
    assert handle.get_force() == pytest.approx((1.5, -2.0, 30.0), abs=0.05)
    assert handle.get_torque() == pytest.approx((0.0, 0.0, 0.25), abs=0.01)


def test_posvel_interface_from_the_urdf_or_the_option(make_hw):
    ifaces = ("PositionJointInterface", "VelocityJointInterface", "PosVelJointInterface")
    text = urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1", ifaces=ifaces), simple("t2", "j2", "m2"))
    xml = hardware(motor("m1", 1), motor("m2", 2))
    hw = make_hw(xml, text, start=False)
    assert hw.get(PosVelJointInterface).get_names() == ["j1"]
    assert hw.joint_interfaces("j1") == ["hardware_interface::PositionJointInterface",
                                         "hardware_interface::VelocityJointInterface",
                                         "hardware_interface::PosVelJointInterface"]
    hw2 = make_hw(xml, text, {"posvel_interface": True}, start=False)
    assert hw2.get(PosVelJointInterface).get_names() == ["j1", "j2"]


@pytest.mark.parametrize("param", ["hardware_config", "hardware_xml"])
def test_differential_group_and_registry_and_combined_robot_hw(make_hw, param, caplog):
    """``hardware_config`` names the hardware XML; its former name ``hardware_xml`` still works and warns."""
    text = urdf(joint("a"), joint("b"), differential("diff", "a", "b", "ma", "mb"))
    xml = hardware(motor("ma", 1), motor("mb", 2))
    assert ROBOT_HW.resolve("rospy_control/MiddlewareRobotHW") is MiddlewareRobotHW
    combined = CombinedRobotHW.from_params({
        "robot_hardware": ["wrist"],
        "wrist": {"type": "rospy_control/MiddlewareRobotHW", param: xml, "robot_description": text,
                  "hold_mode": "damping", "start": False}})
    renamed = [r for r in caplog.records if "former name" in r.getMessage()]
    assert len(renamed) == (1 if param == "hardware_xml" else 0)
    part = combined.robot_hws[0]
    try:
        assert isinstance(part, MiddlewareRobotHW)
        assert combined.get(PositionJointInterface).get_names() == ["a", "b"]
        assert part.joint_mode("a") == ControlMode.DAMPING
        assert part.status()["joints"]["b"]["motors"] == ["ma", "mb"]
    finally:
        part.shutdown()
