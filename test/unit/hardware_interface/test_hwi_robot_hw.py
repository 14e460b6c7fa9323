"""RobotHW / InterfaceManager: registration, get(), combined interfaces, conflicts, switching."""
from __future__ import annotations

import logging

import pytest

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface import (
    ControllerInfo,
    EffortJointInterface,
    HardwareInterface,
    InterfaceResources,
    JointData,
    JointHandle,
    JointStateHandle,
    JointStateInterface,
    PositionJointInterface,
    RobotHW,
    SwitchState,
    VelocityJointInterface,
)
from rospy_control.testing.robot_hw import JointsRobotHW


def make_hw(joints=("j1", "j2")):
    """A RobotHW (nothing overridden) with ``joints`` in the JointState and PositionJoint interfaces."""
    return JointsRobotHW(joints, {PositionJointInterface: "command"})


def info(name, *claims):
    return ControllerInfo(name, "t", [InterfaceResources(iface, set(res)) for iface, res in claims])


POS = PositionJointInterface.TYPE_NAME
VEL = VelocityJointInterface.TYPE_NAME
EFF = EffortJointInterface.TYPE_NAME


def test_get_by_class_and_by_type_name():
    hw = make_hw()
    assert isinstance(hw.get(PositionJointInterface), PositionJointInterface)
    assert hw.get("hardware_interface::JointStateInterface") is hw.get(JointStateInterface)
    assert hw.get(VelocityJointInterface) is None


def test_get_names_and_resources():
    hw = make_hw(("b", "a"))
    assert hw.get_names() == ["hardware_interface::JointStateInterface", POS]
    assert hw.get_interface_resources(POS) == ["a", "b"]
    assert hw.get_interface_resources(VEL) == []


def test_resources_registered_after_the_interface_are_listed():
    hw = RobotHW()
    iface = JointStateInterface()
    hw.register_interface(iface)
    iface.register_handle(JointStateHandle("late", JointData()))
    assert hw.get_interface_resources(JointStateInterface) == ["late"]


def test_reregister_interface_replaces_with_warning(caplog):
    hw = make_hw()
    new = JointStateInterface()
    with caplog.at_level(logging.WARNING):
        hw.register_interface(new)
    assert "Replacing previously registered interface 'hardware_interface::JointStateInterface'" \
        in caplog.text
    assert hw.get(JointStateInterface) is new


def test_register_non_interface_raises():
    with pytest.raises(HardwareInterfaceError, match="is not a hardware_interface.HardwareInterface"):
        RobotHW().register_interface(object())  # type: ignore[arg-type]


def test_sub_managers_are_combined():
    a, b = make_hw(("a1",)), make_hw(("b1", "b2"))
    top = RobotHW()
    top.register_interface_manager(a)
    top.register_interface_manager(b)
    combined = top.get(PositionJointInterface)
    assert combined.get_names() == ["a1", "b1", "b2"]
    assert top.get(PositionJointInterface) is combined  # cached
    combined.get_handle("b2").set_command(4.0)
    assert b.data["b2"].command == 4.0  # handles still refer to the live data
    assert combined.get_claims() == {"b2"}
    assert top.get_names() == ["hardware_interface::JointStateInterface", POS]
    assert top.get_interface_resources(POS) == ["a1", "b1", "b2"]
    # a new handle in a part invalidates the cache
    b.get(PositionJointInterface).register_handle(JointHandle(JointStateHandle("b3", JointData())))
    assert "b3" in top.get(PositionJointInterface).get_names()


def test_single_sub_manager_interface_is_returned_as_is():
    a = make_hw(("a1",))
    top = RobotHW()
    top.register_interface_manager(a)
    assert top.get(PositionJointInterface) is a.get(PositionJointInterface)


def test_non_resource_manager_interfaces_cannot_be_combined(caplog):
    class Cool(HardwareInterface):
        pass

    a, b = RobotHW(), RobotHW()
    a.register_interface(Cool())
    b.register_interface(Cool())
    top = RobotHW()
    top.register_interface_manager(a)
    top.register_interface_manager(b)
    with caplog.at_level(logging.ERROR):
        assert top.get(Cool) is None
    assert "Cannot combine" in caplog.text


def test_robot_hw_registering_itself_as_custom_interface():
    class MyRobot(RobotHW, HardwareInterface):
        TYPE_NAME = "my_robot::MyRobot"

        def __init__(self):
            RobotHW.__init__(self)
            HardwareInterface.__init__(self)
            self.register_interface(self)

        def some_cool_function(self):
            return "cool"

    robot = MyRobot()
    assert robot.get(MyRobot).some_cool_function() == "cool"
    assert "my_robot::MyRobot" in robot.get_names()


def test_defaults():
    hw = RobotHW()
    assert hw.init(None, None) is True
    hw.read(0.0, 0.01)
    hw.write(0.0, 0.01)
    assert hw.prepare_switch([], []) is True
    assert hw.do_switch([], []) is None
    assert hw.switch_result() is SwitchState.DONE
    assert hw.switch_result(info("c")) is SwitchState.DONE


def test_no_conflict_for_disjoint_resources_and_empty_claims():
    hw = make_hw()
    assert not hw.check_for_conflict([info("a", (POS, {"j1"})), info("b", (POS, {"j2"})), info("jsc")])
    assert not hw.check_for_conflict([info("jsc", ("hardware_interface::JointStateInterface", set()))])


def test_two_controllers_on_one_joint_conflict_and_are_logged(caplog):
    hw = make_hw()
    with caplog.at_level(logging.WARNING):
        assert hw.check_for_conflict([info("a", (POS, {"j1"})), info("b", (POS, {"j1", "j2"}))])
    assert "Resource conflict on [j1]. Controllers = [a, b]" in caplog.text
    assert "[j2]" not in caplog.text


def test_conflict_across_interface_types():
    hw = make_hw()
    assert hw.check_for_conflict([info("a", (POS, {"j1"})), info("b", (EFF, {"j1"}))])


def test_one_controller_claiming_a_joint_through_two_interfaces_conflicts_with_itself(caplog):
    hw = make_hw()
    with caplog.at_level(logging.WARNING):
        assert hw.check_for_conflict([info("veleff", (VEL, {"j1"}), (EFF, {"j1"}))])
    assert "Controllers = [veleff, veleff]" in caplog.text


def test_controller_info_all_resources():
    assert info("a", (VEL, {"j1"}), (EFF, {"j3"})).all_resources() == {"j1", "j3"}
