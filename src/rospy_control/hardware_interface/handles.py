"""Handles and the live data objects they refer to.

ros_control handles hold raw ``double*`` pointers into storage owned by the RobotHW.  Python has no
pointer to a float, so the RobotHW owns small mutable data objects (:class:`JointData`,
:class:`ActuatorData`, :class:`ImuSensorData`, ...) and a handle keeps a *reference* to one of them.
Reading through a handle always sees the latest value the RobotHW wrote; a command written through a
handle lands in the data object the RobotHW reads in ``write()``.  Handles never copy.

Construction validates its arguments the way ros_control's handles refuse null pointers: a missing
name, a missing data object or a data object without the required fields raises
:class:`~rospy_control.exceptions.HardwareInterfaceError` naming the handle.

Optional quantities (absolute position, torque sensor; any IMU quantity; force or torque of a
force/torque sensor) are *absent* while the data field is ``None``: ``has_absolute_position()`` is
then false and ``get_absolute_position()`` raises, as ros_control does for a null pointer.

Units: positions in rad (revolute) or m (prismatic), velocities in rad/s or m/s, efforts in N·m or N.
"""
from __future__ import annotations

import enum
from typing import Any, Optional, Sequence, Type

from rospy_control.exceptions import HardwareInterfaceError

__all__ = [
    "JointData",
    "ActuatorData",
    "ImuSensorData",
    "ForceTorqueSensorData",
    "ContactSensorData",
    "JointModeData",
    "JointCommandModes",
    "JointStateHandle",
    "JointHandle",
    "PosVelJointHandle",
    "PosVelAccJointHandle",
    "ActuatorStateHandle",
    "ActuatorHandle",
    "ImuSensorHandle",
    "ForceTorqueSensorHandle",
    "ContactSensorHandle",
    "JointModeHandle",
    "NOT_READY",
    "joint_fault_text",
]

_NAN = float("nan")

#: how a ``fault`` begins that says the hardware has not come up yet (still starting, not broken)
NOT_READY = "not ready: "


def joint_fault_text(joint: str, fault: str) -> str:
    """Why ``joint`` cannot move, for a controller's message: ``fault`` as a data object holds it."""
    if fault.startswith(NOT_READY):
        return f"joint '{joint}' is not ready ({fault[len(NOT_READY):]})"
    return f"joint '{joint}' is in hardware fault ({fault})"


# --------------------------------------------------------------------------------------------------
# Data objects (owned by the RobotHW)
# --------------------------------------------------------------------------------------------------
class _MotionData:
    """State and command storage of one joint or actuator.

    :ivar position: measured position (rad or m).
    :ivar velocity: measured velocity (rad/s or m/s).
    :ivar effort: measured effort (N·m or N).
    :ivar absolute_position: absolute encoder reading, ``None`` when the hardware has none.
    :ivar torque_sensor: torque sensor reading, ``None`` when the hardware has none.
    :ivar command: command of the single-value command interfaces (position, velocity or effort,
        whichever interface the handle was registered in).
    :ivar command_position, command_velocity, command_acceleration: commands of the
        PosVel / PosVelAcc interfaces; ``command_position`` / ``command_velocity`` /
        ``command_effort`` are also where the transmission interface loader keeps a joint's separate
        position, velocity and effort commands (ros_control's ``RawJointData``).
    :ivar fault: ``None`` while the hardware behind this joint/actuator is healthy, else the reason
        it is in fault, or, beginning with :data:`NOT_READY`, why it has not come up yet (set by the
        RobotHW in ``read``; beyond ros_control, so that a controller can abort, or refuse a goal,
        instead of commanding a dead or not yet enabled joint).
    """

    __slots__ = (
        "position",
        "velocity",
        "effort",
        "absolute_position",
        "torque_sensor",
        "command",
        "command_position",
        "command_velocity",
        "command_acceleration",
        "command_effort",
        "fault",
    )

    def __init__(
        self,
        position: float = 0.0,
        velocity: float = 0.0,
        effort: float = 0.0,
        absolute_position: Optional[float] = None,
        torque_sensor: Optional[float] = None,
        command: float = 0.0,
        command_position: float = 0.0,
        command_velocity: float = 0.0,
        command_acceleration: float = 0.0,
        command_effort: float = 0.0,
    ) -> None:
        self.position = position
        self.velocity = velocity
        self.effort = effort
        self.absolute_position = absolute_position
        self.torque_sensor = torque_sensor
        self.command = command
        self.command_position = command_position
        self.command_velocity = command_velocity
        self.command_acceleration = command_acceleration
        self.command_effort = command_effort
        self.fault: Optional[str] = None

    @classmethod
    def nan(cls, absolute_position: bool = False, torque_sensor: bool = False):
        """A data object with every value NaN (ros_control's transmission loader initialises so)."""
        return cls(
            _NAN, _NAN, _NAN,
            _NAN if absolute_position else None,
            _NAN if torque_sensor else None,
            _NAN, _NAN, _NAN, _NAN, _NAN,
        )

    def __repr__(self) -> str:
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in _MotionData.__slots__)
        return f"{type(self).__name__}({fields})"


class JointData(_MotionData):
    """Live state and command storage of one joint (see :class:`_MotionData` for the fields)."""

    __slots__ = ()


class ActuatorData(_MotionData):
    """Live state and command storage of one actuator (same fields as :class:`JointData`)."""

    __slots__ = ()


class ImuSensorData:
    """Live storage of one IMU.  Any quantity may be ``None`` (not provided by the sensor).

    :ivar orientation: quaternion ``[x, y, z, w]``.
    :ivar orientation_covariance: 9 values, 3×3 row-major, about x, y, z.
    :ivar angular_velocity: ``[x, y, z]`` in rad/s.
    :ivar angular_velocity_covariance: 9 values, row-major.
    :ivar linear_acceleration: ``[x, y, z]`` in m/s².
    :ivar linear_acceleration_covariance: 9 values, row-major.
    """

    __slots__ = (
        "orientation",
        "orientation_covariance",
        "angular_velocity",
        "angular_velocity_covariance",
        "linear_acceleration",
        "linear_acceleration_covariance",
    )

    def __init__(
        self,
        orientation: Optional[Sequence[float]] = None,
        orientation_covariance: Optional[Sequence[float]] = None,
        angular_velocity: Optional[Sequence[float]] = None,
        angular_velocity_covariance: Optional[Sequence[float]] = None,
        linear_acceleration: Optional[Sequence[float]] = None,
        linear_acceleration_covariance: Optional[Sequence[float]] = None,
    ) -> None:
        self.orientation = orientation
        self.orientation_covariance = orientation_covariance
        self.angular_velocity = angular_velocity
        self.angular_velocity_covariance = angular_velocity_covariance
        self.linear_acceleration = linear_acceleration
        self.linear_acceleration_covariance = linear_acceleration_covariance


class ForceTorqueSensorData:
    """Live storage of one force/torque sensor: ``force`` [x, y, z] (N), ``torque`` [x, y, z] (N·m).

    Either may be ``None`` when the sensor does not measure it.
    """

    __slots__ = ("force", "torque")

    def __init__(
        self, force: Optional[Sequence[float]] = None, torque: Optional[Sequence[float]] = None
    ) -> None:
        self.force = force
        self.torque = torque


class ContactSensorData:
    """Live storage of one foot contact sensor.

    :ivar in_contact: True while the foot touches the ground.
    :ivar force: measured normal force (N).
    """

    __slots__ = ("in_contact", "force")

    def __init__(self, in_contact: bool = False, force: float = 0.0) -> None:
        self.in_contact = in_contact
        self.force = force


class JointCommandModes(enum.IntEnum):
    """Joint command modes of ``hardware_interface::JointCommandModes``."""

    BEGIN = -1
    MODE_POSITION = 0
    MODE_VELOCITY = 1
    MODE_EFFORT = 2
    NOMODE = 3
    EMERGENCY_STOP = 4
    SWITCHING = 5
    ERROR = 6


class JointModeData:
    """Live storage of one joint's command mode (:class:`JointCommandModes`)."""

    __slots__ = ("mode",)

    def __init__(self, mode: int = JointCommandModes.NOMODE) -> None:
        self.mode = mode


# --------------------------------------------------------------------------------------------------
# Validation helpers
# --------------------------------------------------------------------------------------------------
def _check_name(name: Any, kind: str) -> str:
    if not isinstance(name, str) or not name:
        raise HardwareInterfaceError(
            f"Cannot create {kind}: the name must be a non-empty string, got {name!r}."
        )
    return name


def _check_fields(name: str, data: Any, fields: Sequence[str], what: str) -> None:
    if data is None:
        raise HardwareInterfaceError(f"Cannot create handle '{name}'. {what} data object is None.")
    for field in fields:
        if not hasattr(data, field):
            raise HardwareInterfaceError(
                f"Cannot create handle '{name}'. {what} data object {type(data).__name__} has no "
                f"'{field}' field."
            )


# --------------------------------------------------------------------------------------------------
# Joint and actuator handles
# --------------------------------------------------------------------------------------------------
class _StateHandle:
    """Common state getters of joint and actuator state handles."""

    _KIND = "state handle"
    _REQUIRED = ("position", "velocity", "effort")

    def __init__(self, name: str, data: Any) -> None:
        self._name = _check_name(name, self._KIND)
        _check_fields(name, data, self._REQUIRED, "State")
        self._data = data

    def get_name(self) -> str:
        return self._name

    def get_data(self) -> Any:
        """The live data object this handle refers to."""
        return self._data

    def get_position(self) -> float:
        return self._data.position

    def get_velocity(self) -> float:
        return self._data.velocity

    def get_effort(self) -> float:
        return self._data.effort

    def get_fault(self) -> Optional[str]:
        """``None`` while the hardware behind this handle is healthy, else why it is in fault
        (data objects without a ``fault`` field are always healthy)."""
        return getattr(self._data, "fault", None)

    def has_absolute_position(self) -> bool:
        return getattr(self._data, "absolute_position", None) is not None

    def get_absolute_position(self) -> float:
        value = getattr(self._data, "absolute_position", None)
        if value is None:
            raise HardwareInterfaceError(f"Handle '{self._name}' has no absolute position data.")
        return value

    def has_torque_sensor(self) -> bool:
        return getattr(self._data, "torque_sensor", None) is not None

    def get_torque_sensor(self) -> float:
        value = getattr(self._data, "torque_sensor", None)
        if value is None:
            raise HardwareInterfaceError(f"Handle '{self._name}' has no torque sensor data.")
        return value

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r})"


class JointStateHandle(_StateHandle):
    """Read-only access to one joint's state (``hardware_interface::JointStateHandle``).

    :param name: joint name (non-empty).
    :param data: the live data object (usually a :class:`JointData`) with ``position``,
        ``velocity``, ``effort`` and optionally ``absolute_position`` / ``torque_sensor``.
    :raises HardwareInterfaceError: empty name, ``data`` is None or lacks a field.
    """

    _KIND = "joint state handle"


class ActuatorStateHandle(_StateHandle):
    """Read-only access to one actuator's state (``hardware_interface::ActuatorStateHandle``).

    :param name: actuator name.  :param data: usually an :class:`ActuatorData`.
    """

    _KIND = "actuator state handle"


def _init_from_state(handle: _StateHandle, state_handle: Any, expected: Type[Any], command_data: Any,
                     fields: Sequence[str]) -> Any:
    if not isinstance(state_handle, expected):
        raise HardwareInterfaceError(
            f"Cannot create {type(handle).__name__}: expected an instance of {expected.__name__}, "
            f"got {state_handle!r}."
        )
    _StateHandle.__init__(handle, state_handle.get_name(), state_handle.get_data())
    if command_data is None:
        command_data = state_handle.get_data()
    _check_fields(handle.get_name(), command_data, fields, "Command")
    return command_data


class JointHandle(JointStateHandle):
    """State plus one command value (``hardware_interface::JointHandle``).

    :param state_handle: the joint's :class:`JointStateHandle` (name and state data are shared).
    :param command_data: object holding the command; defaults to the state handle's data object.
    :param command_field: attribute of ``command_data`` that holds the command (default
        ``"command"``).  A RobotHW that keeps separate position and velocity commands per joint
        registers e.g. ``JointHandle(state, data, "command_velocity")`` in the velocity interface.
    :raises HardwareInterfaceError: bad state handle, or no such command field.
    """

    _STATE_TYPE: type = JointStateHandle

    def __init__(self, state_handle: JointStateHandle, command_data: Any = None,
                 command_field: str = "command") -> None:
        self._cmd_data = _init_from_state(
            self, state_handle, self._STATE_TYPE, command_data, (command_field,)
        )
        self._cmd_field = command_field

    def set_command(self, command: float) -> None:
        setattr(self._cmd_data, self._cmd_field, command)

    def get_command(self) -> float:
        return getattr(self._cmd_data, self._cmd_field)


class ActuatorHandle(ActuatorStateHandle):
    """Actuator state plus one command value (``hardware_interface::ActuatorHandle``).

    Same arguments as :class:`JointHandle`, with an :class:`ActuatorStateHandle`.
    """

    def __init__(self, state_handle: ActuatorStateHandle, command_data: Any = None,
                 command_field: str = "command") -> None:
        self._cmd_data = _init_from_state(
            self, state_handle, ActuatorStateHandle, command_data, (command_field,)
        )
        self._cmd_field = command_field

    set_command = JointHandle.set_command
    get_command = JointHandle.get_command


class PosVelJointHandle(JointStateHandle):
    """State plus position and velocity commands (``hardware_interface::PosVelJointHandle``).

    :param state_handle: the joint's state handle.
    :param command_data: object with ``command_position`` and ``command_velocity``; defaults to
        the state handle's data object.
    """

    _COMMAND_FIELDS: Sequence[str] = ("command_position", "command_velocity")

    def __init__(self, state_handle: JointStateHandle, command_data: Any = None) -> None:
        self._cmd_data = _init_from_state(self, state_handle, JointStateHandle, command_data,
                                          self._COMMAND_FIELDS)

    def set_command(self, cmd_pos: float, cmd_vel: float) -> None:
        self._cmd_data.command_position = cmd_pos
        self._cmd_data.command_velocity = cmd_vel

    def set_command_position(self, cmd_pos: float) -> None:
        self._cmd_data.command_position = cmd_pos

    def set_command_velocity(self, cmd_vel: float) -> None:
        self._cmd_data.command_velocity = cmd_vel

    def get_command_position(self) -> float:
        return self._cmd_data.command_position

    def get_command_velocity(self) -> float:
        return self._cmd_data.command_velocity


class PosVelAccJointHandle(PosVelJointHandle):
    """State plus position, velocity and acceleration commands
    (``hardware_interface::PosVelAccJointHandle``).

    :param command_data: object with ``command_position``, ``command_velocity`` and
        ``command_acceleration``; defaults to the state handle's data object.
    """

    _COMMAND_FIELDS = ("command_position", "command_velocity", "command_acceleration")

    def set_command(self, cmd_pos: float, cmd_vel: float, cmd_acc: float) -> None:  # type: ignore[override]
        self._cmd_data.command_position = cmd_pos
        self._cmd_data.command_velocity = cmd_vel
        self._cmd_data.command_acceleration = cmd_acc

    def set_command_acceleration(self, cmd_acc: float) -> None:
        self._cmd_data.command_acceleration = cmd_acc

    def get_command_acceleration(self) -> float:
        return self._cmd_data.command_acceleration


# --------------------------------------------------------------------------------------------------
# Sensor and mode handles
# --------------------------------------------------------------------------------------------------
class _SensorHandle:
    _KIND = "sensor handle"
    _REQUIRED: Sequence[str] = ()

    def __init__(self, name: str, frame_id: str, data: Any) -> None:
        self._name = _check_name(name, self._KIND)
        if not isinstance(frame_id, str):
            raise HardwareInterfaceError(
                f"Cannot create handle '{name}'. frame_id must be a string, got {frame_id!r}."
            )
        _check_fields(name, data, self._REQUIRED, "Sensor")
        self._frame_id = frame_id
        self._data = data

    def get_name(self) -> str:
        return self._name

    def get_frame_id(self) -> str:
        return self._frame_id

    def get_data(self) -> Any:
        return self._data

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r}, frame_id={self._frame_id!r})"


class ImuSensorHandle(_SensorHandle):
    """Read access to one IMU (``hardware_interface::ImuSensorHandle``).

    :param name: sensor name.  :param frame_id: frame of the measurements.
    :param data: an :class:`ImuSensorData` (or any object with its fields).
    Each getter returns the live sequence, or ``None`` when the quantity is not provided.
    """

    _KIND = "IMU sensor handle"
    _REQUIRED = ImuSensorData.__slots__

    def get_orientation(self) -> Optional[Sequence[float]]:
        return self._data.orientation

    def get_orientation_covariance(self) -> Optional[Sequence[float]]:
        return self._data.orientation_covariance

    def get_angular_velocity(self) -> Optional[Sequence[float]]:
        return self._data.angular_velocity

    def get_angular_velocity_covariance(self) -> Optional[Sequence[float]]:
        return self._data.angular_velocity_covariance

    def get_linear_acceleration(self) -> Optional[Sequence[float]]:
        return self._data.linear_acceleration

    def get_linear_acceleration_covariance(self) -> Optional[Sequence[float]]:
        return self._data.linear_acceleration_covariance


class ForceTorqueSensorHandle(_SensorHandle):
    """Read access to one force/torque sensor (``hardware_interface::ForceTorqueSensorHandle``).

    :param data: a :class:`ForceTorqueSensorData`; ``get_force()`` (N) and ``get_torque()`` (N·m)
        return the live 3-sequences or ``None``.
    """

    _KIND = "force/torque sensor handle"
    _REQUIRED = ForceTorqueSensorData.__slots__

    def get_force(self) -> Optional[Sequence[float]]:
        return self._data.force

    def get_torque(self) -> Optional[Sequence[float]]:
        return self._data.torque


class ContactSensorHandle(_SensorHandle):
    """Read access to one foot contact sensor (ours; no ros_control counterpart).

    :param data: a :class:`ContactSensorData`; ``is_in_contact()`` and ``get_force()``
        (normal force, N).
    """

    _KIND = "contact sensor handle"
    _REQUIRED = ContactSensorData.__slots__

    def is_in_contact(self) -> bool:
        return bool(self._data.in_contact)

    def get_force(self) -> float:
        return self._data.force


class JointModeHandle:
    """Read and command a joint's mode (``hardware_interface::JointModeHandle``).

    :param name: handle name, by convention ``<joint>_mode``.
    :param data: a :class:`JointModeData` (or any object with a ``mode`` field).
    """

    def __init__(self, name: str, data: Any) -> None:
        self._name = _check_name(name, "joint mode handle")
        _check_fields(name, data, ("mode",), "Mode")
        self._data = data

    def get_name(self) -> str:
        return self._name

    def get_data(self) -> Any:
        return self._data

    def set_mode(self, mode: int) -> None:
        self._data.mode = JointCommandModes(mode)

    def get_mode(self) -> int:
        return self._data.mode

    def get_mode_name(self, mode: Optional[int] = None) -> str:
        """Name of ``mode`` (default: the current mode), ``"unknown"`` if it is not a mode."""
        value = self._data.mode if mode is None else mode
        try:
            return JointCommandModes(value).name.lower()
        except ValueError:
            return "unknown"

    def __repr__(self) -> str:
        return f"JointModeHandle({self._name!r})"
