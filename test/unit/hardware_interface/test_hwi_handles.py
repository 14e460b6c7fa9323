"""Handles: live data (never copies), constructor validation, optional quantities."""
from __future__ import annotations

import pytest

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface import (
    ActuatorData,
    ActuatorHandle,
    ActuatorStateHandle,
    ContactSensorData,
    ContactSensorHandle,
    ForceTorqueSensorData,
    ForceTorqueSensorHandle,
    ImuSensorData,
    ImuSensorHandle,
    JointCommandModes,
    JointData,
    JointHandle,
    JointModeData,
    JointModeHandle,
    JointStateHandle,
    PosVelAccJointHandle,
    PosVelJointHandle,
)


def test_data_objects_use_slots():
    data = JointData()
    with pytest.raises(AttributeError):
        data.not_a_field = 1.0  # type: ignore[attr-defined]
    assert not hasattr(ActuatorData(), "__dict__")


def test_joint_state_handle_reads_live_data():
    data = JointData(position=1.0, velocity=2.0, effort=3.0)
    handle = JointStateHandle("j1", data)
    data.position, data.velocity, data.effort = 4.0, 5.0, 6.0
    assert (handle.get_position(), handle.get_velocity(), handle.get_effort()) == (4.0, 5.0, 6.0)
    assert handle.get_name() == "j1"
    assert handle.get_data() is data


def test_optional_quantities_absent_raise_and_present_read():
    data = JointData()
    handle = JointStateHandle("j1", data)
    assert not handle.has_absolute_position() and not handle.has_torque_sensor()
    with pytest.raises(HardwareInterfaceError, match="'j1' has no absolute position"):
        handle.get_absolute_position()
    with pytest.raises(HardwareInterfaceError, match="'j1' has no torque sensor"):
        handle.get_torque_sensor()
    data.absolute_position, data.torque_sensor = 0.25, 1.5
    assert handle.has_absolute_position() and handle.get_absolute_position() == 0.25
    assert handle.has_torque_sensor() and handle.get_torque_sensor() == 1.5


@pytest.mark.parametrize("name", ["", None, 3])
def test_state_handle_rejects_bad_name(name):
    with pytest.raises(HardwareInterfaceError, match="non-empty string"):
        JointStateHandle(name, JointData())


def test_state_handle_rejects_missing_data():
    with pytest.raises(HardwareInterfaceError, match="Cannot create handle 'j1'. State data object is None"):
        JointStateHandle("j1", None)


def test_state_handle_rejects_data_without_fields():
    with pytest.raises(HardwareInterfaceError, match="has no 'position' field"):
        JointStateHandle("j1", object())


def test_joint_handle_writes_command_into_data():
    data = JointData()
    handle = JointHandle(JointStateHandle("j1", data))
    handle.set_command(0.5)
    assert data.command == 0.5 and handle.get_command() == 0.5
    data.command = -1.0
    assert handle.get_command() == -1.0


def test_joint_handle_with_separate_command_field():
    data = JointData()
    state = JointStateHandle("j1", data)
    vel = JointHandle(state, data, "command_velocity")
    vel.set_command(2.0)
    assert data.command_velocity == 2.0 and data.command == 0.0


def test_joint_handle_rejects_non_state_handle_and_bad_field():
    with pytest.raises(HardwareInterfaceError, match="expected an instance of JointStateHandle"):
        JointHandle("j1")  # type: ignore[arg-type]
    with pytest.raises(HardwareInterfaceError, match="Command data object JointData has no 'cmd' field"):
        JointHandle(JointStateHandle("j1", JointData()), None, "cmd")
    with pytest.raises(HardwareInterfaceError, match="expected an instance of JointStateHandle"):
        JointHandle(ActuatorStateHandle("a1", ActuatorData()))


def test_posvel_and_posvelacc_handles():
    data = JointData()
    state = JointStateHandle("j1", data)
    pv = PosVelJointHandle(state)
    pv.set_command(1.0, 2.0)
    assert (data.command_position, data.command_velocity) == (1.0, 2.0)
    pv.set_command_position(3.0)
    pv.set_command_velocity(4.0)
    assert (pv.get_command_position(), pv.get_command_velocity()) == (3.0, 4.0)
    pva = PosVelAccJointHandle(state)
    pva.set_command(5.0, 6.0, 7.0)
    assert (data.command_position, data.command_velocity, data.command_acceleration) == (5.0, 6.0, 7.0)
    pva.set_command_acceleration(8.0)
    assert pva.get_command_acceleration() == 8.0
    assert pva.get_position() == data.position


def test_actuator_handles():
    data = ActuatorData(position=1.0)
    state = ActuatorStateHandle("m1", data)
    cmd = ActuatorHandle(state)
    cmd.set_command(9.0)
    assert data.command == 9.0 and cmd.get_position() == 1.0 and cmd.get_name() == "m1"
    with pytest.raises(HardwareInterfaceError, match="expected an instance of ActuatorStateHandle"):
        ActuatorHandle(JointStateHandle("j", JointData()))


def test_imu_handle_returns_live_sequences_or_none():
    data = ImuSensorData(orientation=[0.0, 0.0, 0.0, 1.0])
    imu = ImuSensorHandle("imu", "imu_link", data)
    assert imu.get_frame_id() == "imu_link"
    assert imu.get_orientation() == [0.0, 0.0, 0.0, 1.0]
    assert imu.get_angular_velocity() is None and imu.get_orientation_covariance() is None
    data.angular_velocity = [1.0, 2.0, 3.0]
    data.linear_acceleration = [0.0, 0.0, 9.81]
    data.linear_acceleration_covariance = [0.0] * 9
    data.angular_velocity_covariance = [1.0] * 9
    assert imu.get_angular_velocity() == [1.0, 2.0, 3.0]
    assert imu.get_linear_acceleration()[2] == 9.81
    assert len(imu.get_linear_acceleration_covariance()) == 9
    assert imu.get_angular_velocity_covariance()[0] == 1.0
    with pytest.raises(HardwareInterfaceError, match="Sensor data object is None"):
        ImuSensorHandle("imu", "imu_link", None)
    with pytest.raises(HardwareInterfaceError, match="frame_id must be a string"):
        ImuSensorHandle("imu", None, data)  # type: ignore[arg-type]


def test_force_torque_and_contact_handles():
    ft = ForceTorqueSensorData(force=[1.0, 2.0, 3.0], torque=[0.1, 0.2, 0.3])
    handle = ForceTorqueSensorHandle("wrist_ft", "wrist", ft)
    assert handle.get_force() == [1.0, 2.0, 3.0] and handle.get_torque() == [0.1, 0.2, 0.3]
    contact = ContactSensorData()
    foot = ContactSensorHandle("lf_foot", "lf_foot_link", contact)
    assert not foot.is_in_contact() and foot.get_force() == 0.0
    contact.in_contact, contact.force = True, 120.0
    assert foot.is_in_contact() and foot.get_force() == 120.0 and foot.get_frame_id() == "lf_foot_link"
    with pytest.raises(HardwareInterfaceError, match="has no 'in_contact' field"):
        ContactSensorHandle("lf_foot", "x", ft)


def test_joint_mode_handle():
    data = JointModeData()
    handle = JointModeHandle("j1_mode", data)
    assert handle.get_mode() == JointCommandModes.NOMODE
    handle.set_mode(JointCommandModes.MODE_VELOCITY)
    assert data.mode == 1 and handle.get_mode_name() == "mode_velocity"
    assert handle.get_mode_name(42) == "unknown"
    assert [m.value for m in JointCommandModes] == [-1, 0, 1, 2, 3, 4, 5, 6]
    with pytest.raises(ValueError):
        handle.set_mode(42)
