"""TransmissionParser: ros_control's per-transmission rules, skip summary, and the transmission shapes of a
UR5 arm with a Barrett hand (interfaces on the joint: kept; only on the actuator: skipped with the fix)."""
from __future__ import annotations

import logging

import pytest

from rospy_control.exceptions import ConfigError, TransmissionInterfaceError
from rospy_control.transmission_interface import TransmissionParseError, TransmissionParser


def test_valid_urdf_keeps_names_types_interfaces_roles_and_xml(urdf):
    infos = TransmissionParser.parse(urdf("parser_test_valid.urdf"))
    assert [i.name for i in infos] == ["differential_trans", "simple_trans"]
    diff, simple = infos
    assert diff.type == "transmission_interface/DifferentialTransmission"
    assert [j.name for j in diff.joints] == ["foo_joint", "bar_joint"]
    assert diff.joints[0].hardware_interfaces == [
        "hardware_interface/PositionJointInterface", "hardware_interface/VelocityJointInterface"]
    assert diff.joints[1].hardware_interfaces == ["hardware_interface/EffortJointInterface"]
    assert [j.role for j in diff.joints] == ["joint1", "joint2"]
    assert [a.name for a in diff.actuators] == ["foo_actuator", "bar_actuator"]
    assert diff.actuators[0].hardware_interfaces == []
    assert simple.actuators[0].hardware_interfaces == ["hardware_interface/PositionActuatorInterface"]
    for item in diff.joints + diff.actuators + simple.joints + simple.actuators:
        assert item.xml.startswith(f'<{"joint" if item in diff.joints + simple.joints else "actuator"} ')
        assert item.line is not None and item.xml_element is not None
    assert "<mechanicalReduction>50</mechanicalReduction>" in simple.actuators[0].xml
    assert infos.skipped == []


def test_invalid_urdf_skips_all_ten_and_reports_each_in_one_summary(urdf, caplog):
    with caplog.at_level(logging.ERROR):
        infos = TransmissionParser.parse(urdf("parser_test_invalid.urdf"), source="parser_test_invalid.urdf")
    assert list(infos) == []
    assert len(infos.skipped) == 10
    reasons = [s.reason for s in infos.skipped]
    assert reasons[0] == reasons[1] == "no 'name' attribute"
    assert reasons[2] == "no <type> element"
    assert reasons[3] == "empty <type> element"
    assert "joint 'j' has no non-empty <hardwareInterface>" in reasons[4]
    assert "(1 empty one(s) ignored)" in reasons[5]
    assert "has no 'name' attribute" in reasons[6] and "<actuator>" in reasons[6]
    assert "no valid <actuator>" in reasons[7] and "empty 'name'" in reasons[7]
    assert "<joint>" in reasons[8] and "has no 'name' attribute" in reasons[8]
    assert "no valid <joint>" in reasons[9] and "empty 'name'" in reasons[9]
    error_records = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert len(error_records) == 1
    message = error_records[0].getMessage()
    assert "skipped 10 of 10 URDF transmission(s)" in message
    for name in ("no_type", "empty_type", "no_iface", "empty_iface", "act_no_name", "joint_empty_name"):
        assert f"transmission '{name}' at parser_test_invalid.urdf:" in message


def test_unparseable_xml_raises_clear_error():
    with pytest.raises(TransmissionParseError, match=r"my.urdf:1: cannot parse the URDF") as err:
        TransmissionParser.parse("invalid urdf", source="my.urdf")
    assert isinstance(err.value, TransmissionInterfaceError) and isinstance(err.value, ConfigError)


def test_robot_without_transmissions_gives_empty_list(caplog):
    with caplog.at_level(logging.ERROR):
        assert list(TransmissionParser.parse("<robot name='r'/>")) == []
    assert not caplog.records


def test_only_direct_children_of_root_are_parsed():
    text = ("<robot name='r'><gazebo><transmission name='t'><type>x</type>"
            "<joint name='j'><hardwareInterface>h</hardwareInterface></joint><actuator name='a'/>"
            "</transmission></gazebo></robot>")
    assert list(TransmissionParser.parse(text)) == []


def test_joint_without_interface_dropped_but_transmission_kept(caplog):
    text = """<robot name='r'><transmission name='t'><type>x</type>
      <joint name='good'>
        <hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
      <joint name='bad'/><actuator name='a'/></transmission></robot>"""
    with caplog.at_level(logging.WARNING):
        infos = TransmissionParser.parse(text)
    assert [j.name for j in infos[0].joints] == ["good"]
    assert "joint 'bad' has no non-empty <hardwareInterface>" in infos.skip_reason("bad")
    assert "bad" in infos.summary()


def test_ur5_shape_loads_and_barrett_hand_shape_is_actionable(urdf, caplog):
    with caplog.at_level(logging.ERROR):
        infos = TransmissionParser.parse(urdf("seed000_ur5bh_transmissions.urdf"), source="ur5bh.urdf")
    assert [i.name for i in infos] == ["shoulder_pan_trans"]
    ur = infos[0]
    assert ur.joints[0].hardware_interfaces == ["PositionJointInterface"]
    assert ur.actuators[0].hardware_interfaces == []
    (skipped,) = infos.skipped
    assert skipped.name == "bh_j32_transmission" and skipped.joints == ["bh_j32_joint"]
    expected_fix = ('add <hardwareInterface>PositionJointInterface</hardwareInterface> inside '
                    '<joint name="bh_j32_joint">')
    assert "actuator 'bh_j32' declares PositionJointInterface" in skipped.reason
    assert expected_fix in skipped.reason
    assert expected_fix in caplog.text and "ur5bh.urdf:" in caplog.text
    with pytest.raises(TransmissionInterfaceError, match="Joint 'bh_j32_joint' has no usable transmission: "
                                                         "transmission 'bh_j32_transmission' at ur5bh.urdf:"):
        infos.require_joint("bh_j32_joint")
    assert infos.require_joint("shoulder_pan_joint") is ur
    with pytest.raises(TransmissionInterfaceError, match="No URDF transmission names joint 'elbow'"):
        infos.require_joint("elbow")


def test_parse_file(tmp_path):
    path = tmp_path / "r.urdf"
    path.write_text("<robot name='r'><transmission/></robot>")
    infos = TransmissionParser.parse_file(str(path))
    assert infos.skipped[0].source == str(path) and infos.skipped[0].line == 1
