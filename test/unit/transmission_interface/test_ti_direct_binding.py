"""The 1:1 binding of a motor to its joint (the ``joint`` attribute) is a transmission record built
without XML, and the URDF's own transmissions are read from the one parse of the URDF."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from rospy_control.transmission_interface import SimpleTransmission, load_transmission
from rospy_control.transmission_interface.actuator_binding import (
    DIRECT_INTERFACES,
    bind_actuators_to_joints,
)

URDF = """<robot name="r">
  <link name="a"/><link name="b"/><link name="c"/>
  <joint name="j1" type="revolute"><parent link="a"/><child link="b"/>
    <limit lower="-1" upper="1" velocity="1" effort="1"/></joint>
  <joint name="j2" type="revolute"><parent link="b"/><child link="c"/>
    <limit lower="-1" upper="1" velocity="1" effort="1"/></joint>
  <transmission name="t2">
    <type>transmission_interface/SimpleTransmission</type>
    <joint name="j2"><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface>
      <offset>0.25</offset></joint>
    <actuator name="m2"><mechanicalReduction>-50</mechanicalReduction></actuator>
  </transmission>
</robot>"""


def motor(name, joint=None):
    return SimpleNamespace(name=name, joint=joint, where="hw.xml:7")


def test_a_joint_attribute_binds_through_a_record_made_without_xml():
    binding = bind_actuators_to_joints(URDF, [motor("m1", "j1"), motor("m2")])
    by_name = {i.name: i for i in binding.infos}
    direct = by_name["m1_direct_transmission"]
    assert direct.xml_element is None and direct.actuators[0].xml_element is None
    assert direct.type == "transmission_interface/SimpleTransmission"
    assert [j.name for j in direct.joints] == ["j1"]
    assert direct.joints[0].hardware_interfaces == list(DIRECT_INTERFACES)
    assert "hw.xml:7" in direct.where
    t = load_transmission(direct)
    assert isinstance(t, SimpleTransmission)
    assert t.actuator_to_joint_position([0.5]) == pytest.approx([0.5])
    assert binding.direct == {"m1": "j1"}


def test_the_urdf_transmission_keeps_its_values_and_lines():
    binding = bind_actuators_to_joints(URDF, [motor("m1", "j1"), motor("m2")])
    t2 = next(i for i in binding.infos if i.name == "t2")
    assert t2.actuators[0].values["mechanicalReduction"].text == "-50"
    assert t2.actuators[0].values["mechanicalReduction"].line == 11
    t = load_transmission(t2)
    assert t.actuator_to_joint_position([1.0]) == pytest.approx([1.0 / -50 + 0.25])
