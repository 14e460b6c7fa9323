"""The one actuator <-> joint binding (transmission_interface.actuator_binding): strict for the RobotHW,
lenient for the simulator's gravity; and the gravity options read from the description the middleware
already parsed."""
from __future__ import annotations

import os
import sys

import pytest

from rospy_control.dynamics import GravityModel, configuration_root
from rospy_control.dynamics import options as options_module
from rospy_control.dynamics.actuation import bind_actuators
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import Middleware
from rospy_control.transmission_interface.actuator_binding import bind_actuators_to_joints

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robot_hw"))
from robot_hw_testutil import ARM_HW, ARM_URDF  # noqa: E402

URDF = """<?xml version="1.0"?><robot name="r"><link name="base"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><axis xyz="0 1 0"/>
  <limit lower="-3" upper="3" velocity="5" effort="100"/></joint>
<link name="l1"><inertial><origin xyz="0 0 0.3"/><mass value="1.0"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.5"/>
  <axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="5" effort="100"/></joint>
<link name="l2"><inertial><origin xyz="0 0 0.2"/><mass value="0.5"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
  <joint name="j1"><hardwareInterface>hardware_interface/PositionJointInterface</hardwareInterface></joint>
  <actuator name="m1"><mechanicalReduction>2</mechanicalReduction></actuator></transmission>
<transmission name="t_other"><type>transmission_interface/SimpleTransmission</type>
  <joint name="j2"><hardwareInterface>hardware_interface/PositionJointInterface</hardwareInterface></joint>
  <actuator name="elsewhere"><mechanicalReduction>1</mechanicalReduction></actuator></transmission>
</robot>"""


class Unit:
    def __init__(self, name, joint=None):
        self.name, self.joint, self.where = name, joint, "test:1"


def test_strict_and_lenient_forms_of_the_same_binding():
    units = [Unit("m1"), Unit("m2", joint="j2")]
    # the RobotHW's form refuses a transmission whose actuator it does not have
    with pytest.raises(ConfigError, match="actuator 'elsewhere' is not a motor of"):
        bind_actuators_to_joints(URDF, units)
    # the simulator's form keeps what it can: t1, and m2 1:1 is refused because t_other drives j2
    lenient = bind_actuators_to_joints(URDF, units, strict=False)
    assert [i.name for i in lenient.infos] == ["t1", "m2_direct_transmission"]
    assert lenient.direct == {"m2": "j2"}
    # a robot with both transmissions' actuators: the strict form accepts it, the 1:1 m2 conflicts
    with pytest.raises(ConfigError, match="already drives that joint"):
        bind_actuators_to_joints(URDF, units + [Unit("elsewhere")])
    both = bind_actuators_to_joints(URDF, units[:1] + [Unit("elsewhere")])
    assert [i.name for i in both.infos] == ["t1", "t_other"] and both.direct == {}


def test_the_gravity_binding_maps_through_the_shared_one():
    model = GravityModel.from_urdf(URDF)
    bindings = bind_actuators(model, URDF, [Unit("m1"), Unit("m2", joint="j2")])
    assert [(b.actuators, b.joints) for b in bindings] == [
        (("m1",), (model.index["j1"],)), (("m2",), (model.index["j2"],))]
    assert bindings[0].transmission.joint_to_actuator_effort([3.0]) == pytest.approx([1.5])
    assert bindings[1].transmission.joint_to_actuator_effort([3.0]) == pytest.approx([3.0])


def test_the_robot_hw_binding_on_the_arm_is_the_shared_one_plus_posvel():
    from rospy_control.robot_hw._binding import bind
    with open(ARM_URDF) as f:
        urdf = f.read()
    mw = Middleware.from_xml(ARM_HW)
    rhw = bind(mw, urdf)
    shared = bind_actuators_to_joints(urdf, mw.motors())
    assert [i.name for i in rhw.infos] == [i.name for i in shared.infos]
    assert rhw.direct == shared.direct


def test_gravity_options_come_from_the_description_the_middleware_parsed(monkeypatch):
    mw = Middleware.from_xml(ARM_HW)
    text_mw = Middleware.from_xml('<hardware name="t"><gravity_compensation enabled="true"/>'
                                  '<channel name="a" interface="socketcan" channel="x0"/></hardware>')

    def no_parsing(source):
        raise AssertionError("parsed again")

    monkeypatch.setattr(options_module, "parse_hardware_xml", no_parsing)
    assert configuration_root(mw) is mw.info.element
    assert configuration_root(mw, ARM_HW) is mw.info.element          # the same file: no second parse
    assert options_module.compensation_options(configuration_root(text_mw)).enabled   # text too
    monkeypatch.undo()
    other = configuration_root(mw, '<hardware name="x"><simulation enabled="false"/></hardware>')
    assert other is not None and not options_module.simulation_options(other).enabled
