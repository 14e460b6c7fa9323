"""Interfaces as resource managers: names, lookup errors, claims, replacement, registry."""
from __future__ import annotations

import logging

import pytest

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface import (
    INTERFACES,
    ActuatorData,
    ActuatorHandle,
    ActuatorStateHandle,
    ActuatorStateInterface,
    ContactSensorData,
    ContactSensorHandle,
    ContactSensorInterface,
    EffortActuatorInterface,
    EffortJointInterface,
    ForceTorqueSensorInterface,
    ImuSensorInterface,
    JointData,
    JointHandle,
    JointModeInterface,
    JointStateHandle,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    PosVelAccJointInterface,
    PosVelJointHandle,
    PosVelJointInterface,
    ResourceManager,
    VelocityActuatorInterface,
    VelocityJointInterface,
    resolve_interface,
)


def _state_iface(*names):
    iface = JointStateInterface()
    for name in names:
        iface.register_handle(JointStateHandle(name, JointData()))
    return iface


def test_get_names_is_alphabetical():
    assert _state_iface("c", "a", "b").get_names() == ["a", "b", "c"]


def test_get_handle_unknown_name_raises_with_resource_and_interface():
    iface = _state_iface("a")
    with pytest.raises(HardwareInterfaceError) as err:
        iface.get_handle("wheel_left")
    expected = "Could not find resource 'wheel_left' in 'hardware_interface::JointStateInterface'"
    assert str(err.value) == expected


def test_reregister_replaces_with_warning(caplog):
    iface = JointStateInterface()
    first, second = JointData(position=1.0), JointData(position=2.0)
    iface.register_handle(JointStateHandle("a", first))
    with caplog.at_level(logging.WARNING):
        iface.register_handle(JointStateHandle("a", second))
    assert "Replacing previously registered handle 'a'" in caplog.text
    assert iface.get_handle("a").get_position() == 2.0
    assert iface.get_names() == ["a"]


def test_register_wrong_handle_type_raises():
    with pytest.raises(HardwareInterfaceError, match="expected a JointHandle"):
        PositionJointInterface().register_handle(JointStateHandle("a", JointData()))


def test_command_interfaces_claim_on_get_handle():
    data = JointData()
    iface = PositionJointInterface()
    iface.register_handle(JointHandle(JointStateHandle("j1", data)))
    iface.register_handle(JointHandle(JointStateHandle("j2", JointData())))
    assert iface.get_claims() == set()
    handle = iface.get_handle("j1")
    handle.set_command(1.25)
    assert data.command == 1.25
    assert iface.get_claims() == {"j1"}
    iface.claim("j2")
    assert iface.get_claims() == {"j1", "j2"}
    iface.clear_claims()
    assert iface.get_claims() == set()


def test_non_claiming_interfaces_do_not_claim():
    iface = _state_iface("a")
    iface.get_handle("a")
    assert iface.get_claims() == set()
    act = PositionActuatorInterface()
    act.register_handle(ActuatorHandle(ActuatorStateHandle("m", ActuatorData())))
    act.get_handle("m")
    assert act.get_claims() == set()


@pytest.mark.parametrize(
    "cls, claims",
    [
        (JointStateInterface, False),
        (PositionJointInterface, True),
        (VelocityJointInterface, True),
        (EffortJointInterface, True),
        (PosVelJointInterface, True),
        (PosVelAccJointInterface, True),
        (ActuatorStateInterface, False),
        (PositionActuatorInterface, False),
        (VelocityActuatorInterface, False),
        (EffortActuatorInterface, False),
        (ImuSensorInterface, False),
        (ForceTorqueSensorInterface, False),
        (JointModeInterface, False),
        (ContactSensorInterface, False),
    ],
)
def test_class_attributes(cls, claims):
    assert cls.CLAIMS is claims
    short = cls.__name__
    prefix = "rospy_control" if cls is ContactSensorInterface else "hardware_interface"
    assert cls.TYPE_NAME == f"{prefix}::{short}"
    assert cls.LOOKUP_NAME == f"{prefix}/{short}"
    assert resolve_interface(cls.LOOKUP_NAME) is cls
    assert resolve_interface(cls.TYPE_NAME) is cls


def test_posvel_interface_holds_posvel_handles():
    iface = PosVelJointInterface()
    iface.register_handle(PosVelJointHandle(JointStateHandle("j", JointData())))
    iface.get_handle("j").set_command(1.0, 2.0)
    assert iface.get_claims() == {"j"}


def test_contact_interface_registered_like_a_custom_interface():
    assert "rospy_control/ContactSensorInterface" in INTERFACES.names()
    iface = ContactSensorInterface()
    iface.register_handle(ContactSensorHandle("lf", "lf_link", ContactSensorData(True, 80.0)))
    assert iface.get_handle("lf").is_in_contact()


def test_bare_interface_name_is_deprecated_but_accepted(caplog):
    with caplog.at_level(logging.WARNING):
        assert resolve_interface("EffortJointInterface") is EffortJointInterface
    assert "Deprecated syntax, please prepend 'hardware_interface/'" in caplog.text


def test_unknown_interface_name_lists_known_ones():
    with pytest.raises(HardwareInterfaceError, match="Unknown hardware interface 'Nope'. Known interfaces: "):
        resolve_interface("Nope")


class CoolInterface(ResourceManager):
    """A third-party interface without TYPE_NAME/LOOKUP_NAME."""

    HANDLE_TYPE = JointStateHandle


def test_third_party_interface_gets_own_names_and_registers():
    assert CoolInterface.TYPE_NAME == f"{__name__}.CoolInterface"
    assert CoolInterface.LOOKUP_NAME == f"{__name__}:CoolInterface"
    assert resolve_interface(CoolInterface.LOOKUP_NAME) is CoolInterface
    INTERFACES.register("my_pkg/CoolInterface", CoolInterface)
    assert resolve_interface("my_pkg/CoolInterface") is CoolInterface


def test_derived_interface_does_not_share_parent_type_name():
    class MyPosition(PositionJointInterface):
        pass

    assert MyPosition.TYPE_NAME != PositionJointInterface.TYPE_NAME
    assert MyPosition.CLAIMS is True


def test_missing_resource_hint_is_appended_to_the_lookup_error():
    iface = PositionJointInterface()
    iface.explain_missing("bh_j32_joint", "Its URDF transmission 'bh_j32_transmission' was skipped")
    with pytest.raises(HardwareInterfaceError) as err:
        iface.get_handle("bh_j32_joint")
    assert str(err.value) == (
        "Could not find resource 'bh_j32_joint' in 'hardware_interface::PositionJointInterface'. "
        "Its URDF transmission 'bh_j32_transmission' was skipped"
    )
    combined = PositionJointInterface.combine([iface])
    with pytest.raises(HardwareInterfaceError, match="was skipped"):
        combined.get_handle("bh_j32_joint")
