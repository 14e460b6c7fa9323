"""Every configuration problem is a ConfigError naming its source; nothing is left running."""
from __future__ import annotations

import pytest

from rospy_control.exceptions import ConfigError, HardwareInterfaceError
from rospy_control.hardware_interface import PositionJointInterface
from rospy_control.middleware import Middleware
from rospy_control.robot_hw import MiddlewareRobotHW

from robot_hw_testutil import ARM_HW, ARM_URDF, differential, hardware, joint, motor, simple, urdf

TWO = hardware(motor("m1", 1), motor("m2", 2))


def build(xml, text, params=None):
    return MiddlewareRobotHW.from_config(xml, text, params, start=False)


def error_of(xml, text, params=None) -> str:
    with pytest.raises(ConfigError) as info:
        hw = build(xml, text, params)
        hw.shutdown()
    return str(info.value)


def test_unknown_actuator_in_a_transmission():
    text = urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"), simple("t2", "j2", "motor_x"))
    msg = error_of(TWO, text)
    assert "robot_description:" in msg and "URDF transmission 't2'" in msg
    assert "actuator 'motor_x' is not a motor of hardware 't'" in msg and "motors there: m1, m2" in msg


def test_unknown_actuators_can_be_skipped_for_a_shared_urdf():
    text = urdf(joint("j1"), joint("j2"), joint("j3"), simple("t1", "j1", "m1"), simple("t2", "j2", "m2"),
                simple("t3", "j3", "other_hw_motor"))
    hw = build(TWO, text, {"skip_unknown_actuators": True})
    assert hw.get(PositionJointInterface).get_names() == ["j1", "j2"]


def test_motor_in_a_skipped_transmission_reports_the_parser_reason():
    broken = ('<transmission name="t2"><type>transmission_interface/SimpleTransmission</type>'
              '<joint name="j2"/><actuator name="m2"><mechanicalReduction>1</mechanicalReduction></actuator>'
              '</transmission>')
    msg = error_of(TWO, urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"), broken))
    assert "motor 'm2'" in msg and "is driven by a URDF transmission that was skipped" in msg
    assert "transmission 't2' at robot_description:" in msg and "has no non-empty <hardwareInterface>" in msg


def test_joint_attribute_naming_a_skipped_joint_reports_the_reason():
    broken = ('<transmission name="t2"><joint name="j2"><hardwareInterface>hardware_interface/'
              'PositionJointInterface</hardwareInterface></joint><actuator name="mx"/></transmission>')
    xml = hardware(motor("m1", 1, 'joint="j1"'), motor("m2", 2, 'joint="j2"'))
    msg = error_of(xml, urdf(joint("j1"), joint("j2"), broken))
    assert "motor 'm2'" in msg and "drives joint 'j2', whose URDF transmission was skipped" in msg
    assert "no <type> element" in msg


def test_motor_driving_no_joint():
    msg = error_of(TWO, urdf(joint("j1"), simple("t1", "j1", "m1")))
    assert "motor 'm2'" in msg and "drives no joint" in msg and 'joint="<urdf joint>"' in msg


def test_joint_attribute_must_agree_with_the_transmission():
    xml = hardware(motor("m1", 1, 'joint="j2"'), motor("m2", 2))
    msg = error_of(xml, urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"), simple("t2", "j2", "m2")))
    assert "motor 'm1'" in msg and "has joint=\"j2\" but URDF transmission 't1'" in msg
    assert "drives it into joint(s) j1" in msg
    # inside a differential, naming either joint agrees
    xml = hardware(motor("m1", 1, 'joint="b"'), motor("m2", 2, 'joint="a"'))
    hw = build(xml, urdf(joint("a"), joint("b"), differential("d", "a", "b", "m1", "m2")))
    assert hw.get(PositionJointInterface).get_names() == ["a", "b"]


def test_joint_attribute_on_a_joint_another_transmission_drives():
    xml = hardware(motor("m1", 1), motor("m2", 2, 'joint="j1"'))
    msg = error_of(xml, urdf(joint("j1"), simple("t1", "j1", "m1")))
    assert "motor 'm2'" in msg and "URDF transmission 't1'" in msg and "already drives that joint" in msg


def test_joints_must_exist_and_move():
    xml = hardware(motor("m1", 1, 'joint="nope"'))
    assert "has joint=\"nope\", which is not a <joint> of the URDF" in error_of(xml, urdf(joint("j1")))
    msg = error_of(hardware(motor("m1", 1)), urdf(joint("j1", "fixed", ""), simple("t1", "j1", "m1")))
    assert "joint 'j1' is of type 'fixed'" in msg
    msg = error_of(hardware(motor("m1", 1)), urdf(simple("t1", "ghost", "m1")))
    assert "joint 'ghost' is not a <joint> of the URDF" in msg


def test_a_motor_in_two_transmissions():
    msg = error_of(TWO, urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"), simple("t2", "j2", "m1")))
    assert "actuator 'm1' is already driven by transmission 't1'" in msg


def test_bad_transmission_values_name_the_transmission():
    text = urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"), simple("t2", "j2", "m2", reduction=0))
    msg = error_of(TWO, text)
    assert "t2" in msg and "zero" in msg.lower()


@pytest.mark.parametrize("limits, expected", [
    ({"j1": {"has_position_limits": True, "min_position": 1.0, "max_position": -1.0}},
     "min_position 1.0 > max_position -1.0"),
    ({"j1": {"has_velocity_limits": True, "max_velocity": -2.0}}, "max_velocity must be > 0, got -2.0"),
    ({"j1": {"has_effort_limits": True, "max_effort": "lots"}},
     "joint_limits/j1/max_effort: expected a number"),
    ({"j1": {"has_soft_limits": True, "k_position": 1.0, "k_velocity": 1.0, "soft_lower_limit": 2.0,
             "soft_upper_limit": 1.0}}, "soft lower limit 2.0 > soft upper limit 1.0"),
])
def test_bad_limits_from_params(limits, expected):
    text = urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"), simple("t2", "j2", "m2"))
    msg = error_of(TWO, text, {"joint_limits": limits})
    assert expected in msg and "joint 'j1'" in msg


def test_bad_limits_from_the_urdf():
    text = urdf(joint("j1", limit='lower="-1" upper="1" velocity="fast" effort="3"'), joint("j2"),
                simple("t1", "j1", "m1"), simple("t2", "j2", "m2"))
    msg = error_of(TWO, text)
    assert msg.startswith("robot_description:") and "joint 'j1'" in msg and "'velocity'" in msg


@pytest.mark.parametrize("params, expected", [
    ({"hold_mode": "float"}, "hold_mode: expected one of position, damping, none, got 'float'"),
    ({"posvel_interface": "yes"}, "posvel_interface: expected true or false"),
    ({"joint_limits": [1, 2]}, "joint_limits: expected a mapping"),
])
def test_bad_options(params, expected):
    text = urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"), simple("t2", "j2", "m2"))
    assert expected in error_of(TWO, text, params)


def test_posvel_needs_position_and_velocity_and_posvelacc_is_refused():
    text = urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"),
                simple("t2", "j2", "m2", ifaces=("PositionJointInterface", "PosVelJointInterface")))
    assert "lists hardware_interface/PosVelJointInterface but not both" in error_of(TWO, text)
    text = urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1"),
                simple("t2", "j2", "m2", ifaces=("PositionJointInterface", "PosVelAccJointInterface")))
    assert "MIT motors take no acceleration" in error_of(TWO, text)


def test_unparsable_urdf_and_missing_file():
    assert "cannot parse the URDF" in error_of(TWO, "<robot><joint></robot>")
    assert "neither XML text nor an existing file" in error_of(TWO, "/no/such/robot.urdf")


def test_nothing_half_starts_on_a_config_error():
    # started middleware + bad URDF: from_config shuts the middleware down (leak check would fail)
    with pytest.raises(ConfigError):
        MiddlewareRobotHW.from_config(ARM_HW, urdf(joint("j1")), start=True)
    mw = Middleware.from_xml(ARM_HW)
    hw = MiddlewareRobotHW()
    with pytest.raises(ConfigError):
        hw.configure(mw, ARM_URDF, {"joint_limits": {"elbow_joint": {"has_velocity_limits": True,
                                                                     "max_velocity": 0.0}}})
    assert hw.get_names() == []  # no partial registration
    assert hw.joint_names() == [] and hw.actuator_names() == []
    with pytest.raises(HardwareInterfaceError, match="not configured"):
        hw.transmission_loader
    hw.configure(mw, ARM_URDF)   # and it can be configured again
    assert len(hw.joint_names()) == 7
    assert hw.transmission_loader.get_data().robot_hw is hw  # built on the side, then adopted whole
    mw.shutdown()
