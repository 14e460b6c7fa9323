"""Transmission handles and TransmissionInterfaceLoader over a RobotHW with actuator interfaces."""
from __future__ import annotations

import logging
import math

import pytest

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface import (
    ActuatorData,
    ActuatorHandle,
    ActuatorStateHandle,
    ActuatorStateInterface,
    EffortActuatorInterface,
    EffortJointInterface,
    JointData,
    JointStateHandle,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    RobotHW,
    VelocityActuatorInterface,
    VelocityJointInterface,
)
from rospy_control.transmission_interface import (
    ActuatorToJointStateHandle,
    ActuatorToJointStateInterface,
    JointToActuatorPositionHandle,
    RobotTransmissions,
    SimpleTransmission,
    TransmissionInterfaceError,
    TransmissionInterfaceLoader,
    TransmissionParser,
)

ACTUATORS = ("foo_actuator", "bar_actuator", "baz_actuator")


class ActuatorHW(RobotHW):
    """RobotHW with actuators: separate position/velocity/effort commands per actuator."""

    def __init__(self, actuators=ACTUATORS, command_interfaces=True):
        super().__init__()
        self.act = {name: ActuatorData() for name in actuators}
        state = ActuatorStateInterface()
        ifaces = {PositionActuatorInterface: "command_position",
                  VelocityActuatorInterface: "command_velocity",
                  EffortActuatorInterface: "command_effort"}
        cmd = {cls: cls() for cls in ifaces}
        for name, data in self.act.items():
            sh = ActuatorStateHandle(name, data)
            state.register_handle(sh)
            for cls, field in ifaces.items():
                cmd[cls].register_handle(ActuatorHandle(sh, data, field))
        self.register_interface(state)
        if command_interfaces:
            for iface in cmd.values():
                self.register_interface(iface)


def test_handle_preconditions():
    tr = SimpleTransmission(10.0)
    with pytest.raises(TransmissionInterfaceError, match="'t': no transmission given"):
        ActuatorToJointStateHandle("t", None, [ActuatorData()], [JointData()])  # type: ignore[arg-type]
    with pytest.raises(TransmissionInterfaceError, match="all data vectors are empty"):
        ActuatorToJointStateHandle("t", tr, [], [])
    with pytest.raises(TransmissionInterfaceError, match="actuator data has 2 element"):
        ActuatorToJointStateHandle("t", tr, [ActuatorData(), ActuatorData()], [JointData()])
    with pytest.raises(TransmissionInterfaceError, match="joint data element 0 is None"):
        ActuatorToJointStateHandle("t", tr, [ActuatorData()], [None])
    with pytest.raises(TransmissionInterfaceError, match="has no 'position' field"):
        ActuatorToJointStateHandle("t", tr, [ActuatorData()], [object()])
    with pytest.raises(TransmissionInterfaceError, match="has no 'cmd' field"):
        JointToActuatorPositionHandle("t", tr, [ActuatorData()], [JointData()], "cmd")


def test_state_handle_propagates_optional_quantities_only_when_present():
    tr = SimpleTransmission(10.0, 1.0)
    act, joint = ActuatorData(position=10.0, velocity=10.0, effort=1.0), JointData()
    ActuatorToJointStateHandle("t", tr, [act], [joint]).propagate()
    assert (joint.position, joint.velocity, joint.effort) == (2.0, 1.0, 10.0)
    assert joint.absolute_position is None and joint.torque_sensor is None
    act.absolute_position, act.torque_sensor = 20.0, 2.0
    ActuatorToJointStateHandle("t", tr, [act], [joint]).propagate()
    assert (joint.absolute_position, joint.torque_sensor) == (3.0, 20.0)


def make_loader(urdf_text, hw=None):
    hw = hw or ActuatorHW()
    loader = TransmissionInterfaceLoader(hw)
    return hw, loader, loader.load(urdf_text)


def test_constructor_rejects_non_robot_hw():
    with pytest.raises(TransmissionInterfaceError, match="is not a RobotHW"):
        TransmissionInterfaceLoader(None)  # type: ignore[arg-type]
    with pytest.raises(TransmissionInterfaceError, match="is not a RobotTransmissions"):
        TransmissionInterfaceLoader(RobotHW(), object())  # type: ignore[arg-type]


def test_valid_urdf_loads_and_propagates(urdf):
    hw, loader, ok = make_loader(urdf("transmission_interface_loader_valid.urdf"))
    assert ok
    data = loader.get_data()
    assert sorted(data.joint_data) == ["bar_joint", "baz_joint", "foo_joint"]
    assert len(data.transmission_data) == 6
    assert isinstance(data.robot_transmissions, RobotTransmissions)
    for cls in (JointStateInterface, PositionJointInterface, VelocityJointInterface, EffortJointInterface):
        assert hw.get(cls).get_names() == ["bar_joint", "baz_joint", "foo_joint"]
    assert math.isnan(data.joint_data["foo_joint"].position)  # NaN until the first propagation

    # actuator -> joint state
    hw.act["foo_actuator"].position = 50.0
    hw.act["foo_actuator"].velocity = -50.0
    hw.act["foo_actuator"].effort = 1.0
    hw.act["bar_actuator"].position = 50.0
    hw.act["baz_actuator"].position = 50.0
    hw.act["bar_actuator"].effort = hw.act["baz_actuator"].effort = 1.0
    hw.act["bar_actuator"].velocity = hw.act["baz_actuator"].velocity = 0.0
    loader.propagate_state()
    state = hw.get(JointStateInterface)
    assert state.get_handle("foo_joint").get_position() == pytest.approx(1.5)
    assert state.get_handle("foo_joint").get_velocity() == pytest.approx(-1.0)
    assert state.get_handle("foo_joint").get_effort() == pytest.approx(50.0)
    assert state.get_handle("bar_joint").get_position() == pytest.approx(1.5)
    assert state.get_handle("baz_joint").get_position() == pytest.approx(0.5)
    assert state.get_handle("bar_joint").get_effort() == pytest.approx(100.0)

    # joint -> actuator commands, one per interface
    pos, vel = hw.get(PositionJointInterface), hw.get(VelocityJointInterface)
    eff = hw.get(EffortJointInterface)
    pos.get_handle("foo_joint").set_command(1.5)
    vel.get_handle("foo_joint").set_command(-1.0)
    eff.get_handle("foo_joint").set_command(50.0)
    for name in ("bar_joint", "baz_joint"):
        pos.get_handle(name).set_command(1.5 if name == "bar_joint" else 0.5)
        vel.get_handle(name).set_command(0.0)
        eff.get_handle(name).set_command(100.0 if name == "bar_joint" else 0.0)
    loader.propagate_commands()
    foo = hw.act["foo_actuator"]
    assert (foo.command_position, foo.command_velocity, foo.command_effort) \
        == pytest.approx((50.0, -50.0, 1.0))
    assert hw.act["bar_actuator"].command_position == pytest.approx(50.0)
    assert hw.act["baz_actuator"].command_position == pytest.approx(50.0)
    assert hw.act["bar_actuator"].command_effort == pytest.approx(1.0)
    assert pos.get_claims() == {"foo_joint", "bar_joint", "baz_joint"}  # the test claimed, not the loader


def test_bidirectional_also_propagates_inverse(urdf):
    hw, loader, ok = make_loader(urdf("transmission_interface_loader_bidirectional_valid.urdf"))
    assert ok
    trs = loader.robot_transmissions
    names = [n for n in trs.get_names()]
    assert "transmission_interface::JointToActuatorStateInterface" in names
    assert "transmission_interface::ActuatorToJointPositionInterface" in names
    # inverse state: joint -> actuator
    joints = loader.get_data().joint_data
    joints["foo_joint"].position, joints["foo_joint"].velocity, joints["foo_joint"].effort = 1.5, -1.0, 50.0
    for name in ("bar_joint", "baz_joint"):
        joints[name].position, joints[name].velocity, joints[name].effort = 0.5, 0.0, 0.0
    from rospy_control.transmission_interface import (
        ActuatorToJointEffortInterface,
        ActuatorToJointPositionInterface,
        JointToActuatorStateInterface,
    )
    trs.get(JointToActuatorStateInterface).propagate()
    assert (hw.act["foo_actuator"].position, hw.act["foo_actuator"].velocity,
            hw.act["foo_actuator"].effort) == pytest.approx((50.0, -50.0, 1.0))
    assert hw.act["bar_actuator"].position == pytest.approx(0.0)
    # inverse commands: actuator -> joint
    hw.act["foo_actuator"].command_position = 100.0
    hw.act["foo_actuator"].command_effort = 2.0
    trs.get(ActuatorToJointPositionInterface).propagate()
    trs.get(ActuatorToJointEffortInterface).propagate()
    assert joints["foo_joint"].command_position == pytest.approx(2.5)
    assert joints["foo_joint"].command_effort == pytest.approx(100.0)
    # forward still works
    hw.get(PositionJointInterface).get_handle("foo_joint").set_command(0.5)
    loader.propagate_commands()
    assert hw.act["foo_actuator"].command_position == pytest.approx(0.0)


def test_duplicate_transmission_overwrites_with_warning(urdf, caplog):
    with caplog.at_level(logging.WARNING):
        hw, loader, ok = make_loader(urdf("transmission_interface_loader_duplicate.urdf"))
    assert ok
    assert "Replacing previously registered handle 'foo_trans'" in caplog.text
    assert list(loader.get_data().joint_data) == ["foo_joint"]


def test_interface_permutation_is_accepted(urdf):
    assert make_loader(urdf("transmission_interface_loader_hw_iface_permutation.urdf"))[2]


def test_joints_with_different_interfaces_fail(urdf):
    infos = TransmissionParser.parse(urdf("transmission_interface_loader_unsupported.urdf"))
    assert len(infos) == 2
    for info in infos:
        loader = TransmissionInterfaceLoader(ActuatorHW())
        with pytest.raises(TransmissionInterfaceError, match="has joints with different hardware interfaces"):
            loader.load(info, raise_errors=True)
        assert loader.load(info) is False


def _simple(ifaces):
    tags = "".join(f"<hardwareInterface>{i}</hardwareInterface>" for i in ifaces)
    return (f"<robot name='r'><transmission name='t'><type>transmission_interface/SimpleTransmission</type>"
            f"<joint name='foo_joint'>{tags}</joint><actuator name='foo_actuator'>"
            f"<mechanicalReduction>10</mechanicalReduction></actuator></transmission></robot>")


def test_only_unknown_interface_fails_and_one_unknown_among_valid_is_skipped(caplog):
    loader = TransmissionInterfaceLoader(ActuatorHW())
    with pytest.raises(TransmissionInterfaceError, match="contains no valid hardware interfaces"):
        loader.load(_simple(["hardware_interface/MagicJointInterface"]), raise_errors=True)
    with caplog.at_level(logging.WARNING):
        hw, loader, ok = make_loader(_simple(["hardware_interface/MagicJointInterface",
                                              "hardware_interface/EffortJointInterface"]))
    assert ok and "skipping hardware interface 'hardware_interface/MagicJointInterface'" in caplog.text
    assert hw.get(EffortJointInterface).get_names() == ["foo_joint"]


def test_bare_interface_name_is_deprecated_but_loaded(caplog):
    with caplog.at_level(logging.WARNING):
        hw, _, ok = make_loader(_simple(["PositionJointInterface"]))
    assert ok and "deprecated syntax, please prepend 'hardware_interface/'" in caplog.text
    assert hw.get(PositionJointInterface).get_names() == ["foo_joint"]


def test_robot_hw_without_actuator_interfaces_fails():
    loader = TransmissionInterfaceLoader(RobotHW())
    expected = "does not expose 'hardware_interface::ActuatorStateInterface'"
    with pytest.raises(TransmissionInterfaceError, match=expected):
        loader.load(_simple(["hardware_interface/PositionJointInterface"]), raise_errors=True)
    hw = ActuatorHW(command_interfaces=False)
    loader = TransmissionInterfaceLoader(hw)
    assert loader.load(_simple(["hardware_interface/PositionJointInterface"])) is False
    assert hw.get(PositionJointInterface) is None  # nothing half-registered


def test_unknown_actuator_fails():
    loader = TransmissionInterfaceLoader(ActuatorHW(actuators=("other",)))
    with pytest.raises(TransmissionInterfaceError, match="contains no valid hardware interfaces"):
        loader.load(_simple(["hardware_interface/PositionJointInterface"]), raise_errors=True)


def test_urdf_without_transmissions_fails():
    assert TransmissionInterfaceLoader(ActuatorHW()).load("<robot name='r'/>") is False


def test_list_load_stops_at_first_failure(urdf):
    infos = list(TransmissionParser.parse(urdf("transmission_interface_loader_unsupported.urdf")))
    good = TransmissionParser.parse(_simple(["hardware_interface/EffortJointInterface"]))[0]
    hw = ActuatorHW()
    loader = TransmissionInterfaceLoader(hw)
    assert loader.load([infos[0], good]) is False
    assert hw.get(EffortJointInterface) is None


def test_existing_joint_state_interface_is_reused_ros_control_260():
    hw = ActuatorHW()
    own = JointStateInterface()
    mine = JointData(position=7.0)
    own.register_handle(JointStateHandle("foo_joint", mine))
    hw.register_interface(own)
    loader = TransmissionInterfaceLoader(hw)
    assert loader.load(_simple(["hardware_interface/PositionJointInterface"]), raise_errors=True)
    assert hw.get(JointStateInterface) is own
    assert loader.require_joint("foo_joint") is mine
    hw.act["foo_actuator"].position = 30.0
    loader.propagate_state()
    assert own.get_handle("foo_joint").get_position() == pytest.approx(3.0)
    hw.get(PositionJointInterface).get_handle("foo_joint").set_command(1.0)
    loader.propagate_commands()
    assert hw.act["foo_actuator"].command_position == pytest.approx(10.0)


def test_skipped_transmission_joint_fails_later_with_reason(urdf):
    hw = ActuatorHW(actuators=("shoulder_pan_motor", "bh_j32"))
    loader = TransmissionInterfaceLoader(hw)
    assert loader.load(urdf("seed000_ur5bh_transmissions.urdf"), raise_errors=True)
    assert hw.get(PositionJointInterface).get_names() == ["shoulder_pan_joint"]
    with pytest.raises(HardwareInterfaceError) as err:
        hw.get(PositionJointInterface).get_handle("bh_j32_joint")
    assert str(err.value).startswith(
        "Could not find resource 'bh_j32_joint' in 'hardware_interface::PositionJointInterface'. "
        "Its URDF transmission was skipped: transmission 'bh_j32_transmission'")
    assert 'inside <joint name="bh_j32_joint">' in str(err.value)
    with pytest.raises(TransmissionInterfaceError, match="Joint 'bh_j32_joint' has no usable transmission"):
        loader.require_joint("bh_j32_joint")
    with pytest.raises(TransmissionInterfaceError, match="Joint 'nope' was not loaded"):
        loader.require_joint("nope")


def test_transmission_interfaces_are_keyed_by_transmission_name(urdf):
    _, loader, _ = make_loader(urdf("transmission_interface_loader_valid.urdf"))
    names = loader.robot_transmissions.get(ActuatorToJointStateInterface).get_names()
    assert names == ["bar_baz_trans", "foo_trans"]
