"""Sensors speaking :mod:`rospy_control.devices.sensors.codec`: :class:`CanSensor` and the
:class:`Encoder`, :class:`ImuSensor`, :class:`ContactSensor` and :class:`ForceTorqueSensor` with their
state records."""
from __future__ import annotations

from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_config.document import (
    AttributeReader, UnitInfo, non_negative, positive, to_float, to_int, to_str,
)
from rospy_control.devices.sensors import codec as sensors
from rospy_control.devices.unit import CanUnit, frame_bits

__all__ = [
    "CanSensor", "Encoder", "ImuSensor", "ContactSensor", "ForceTorqueSensor", "EncoderState", "ImuState",
    "ContactState", "ForceTorqueState",
]


class EncoderState(NamedTuple):
    name: str
    position: float
    velocity: float
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


class ImuState(NamedTuple):
    name: str
    frame_id: str
    orientation: Tuple[float, float, float, float]   #: x, y, z, w
    orientation_covariance: Tuple[float, ...]         #: 9 values, row major
    angular_velocity: Tuple[float, float, float]     #: rad/s
    angular_velocity_covariance: Tuple[float, ...]
    linear_acceleration: Tuple[float, float, float]  #: m/s^2 (gravity included: +9.81 on z at rest)
    linear_acceleration_covariance: Tuple[float, ...]
    temperature: Optional[float]
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


class ContactState(NamedTuple):
    name: str
    frame_id: str
    in_contact: bool
    force: float  #: normal force, N
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


class ForceTorqueState(NamedTuple):
    name: str
    frame_id: str
    force: Tuple[float, float, float]
    torque: Tuple[float, float, float]
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


class SensorAttribute(NamedTuple):
    """An XML attribute of a sensor type, read into the constructor argument of the same name."""

    name: str
    convert: Callable[[str], object]
    default: object
    check: Callable[[object], bool]
    expected: str


class CanSensor(CanUnit):
    """Base of sensors speaking :mod:`rospy_control.devices.sensors.codec`."""

    FRAMES_PER_POLL = 1
    REPLY_DLC = 8
    UNIT_KIND = "sensor"
    #: the sensor type's own XML attributes, read by :meth:`_read_attributes`
    ATTRIBUTES: Tuple[SensorAttribute, ...] = ()

    def __init__(self, name: str, can_id: int, reply_id: Optional[int] = None, frame_id: str = "",
                 fault_timeout: Optional[float] = None) -> None:
        super().__init__(name, can_id, fault_timeout)
        self.reply_id = can_id + sensors.DEFAULT_REPLY_OFFSET if reply_id is None else reply_id
        if not 0 <= self.reply_id <= 0x7FF - (self.FRAMES_PER_POLL - 1):
            raise ConfigError(f"sensor '{name}': reply_id 0x{self.reply_id:X} out of range")
        self.frame_id = frame_id or name
        self._msg = can.Message(arbitration_id=can_id, is_extended_id=False, data=b"", dlc=0)

    @classmethod
    def read_settings(cls, info: UnitInfo) -> Dict[str, Any]:
        r = AttributeReader(info.element, ignore=("name", "type", "channel"))
        kw = cls._can_kwargs(info, r)
        reply_id = r.get("reply_id", to_int, None, check=lambda v: 0 <= v <= 0x7FF,
                         expected="an integer CAN id 0x000..0x7FF")
        # the first reply id, as the sensor answers on it (not None: the simulated sensor reads it too)
        kw["reply_id"] = kw["can_id"] + sensors.DEFAULT_REPLY_OFFSET if reply_id is None else reply_id
        kw["frame_id"] = r.get("frame_id", to_str, "")
        kw.update(cls._read_attributes(r))
        r.finish()
        return kw

    @classmethod
    def _read_attributes(cls, r: AttributeReader) -> dict:
        """The sensor type's own XML attributes (constructor keyword arguments): :attr:`ATTRIBUTES`."""
        return {a.name: r.get(a.name, a.convert, a.default, check=a.check, expected=a.expected)
                for a in cls.ATTRIBUTES}

    def reply_ids(self) -> Tuple[int, ...]:
        return tuple(range(self.reply_id, self.reply_id + self.FRAMES_PER_POLL))

    def bits_per_cycle(self) -> int:
        return frame_bits(0) + self.FRAMES_PER_POLL * frame_bits(self.REPLY_DLC)

    def poll(self, now: float) -> Optional[can.Message]:
        if self._reset_req != self._reset_seen:
            self.begin_poll(now)
        if not self._active or (self._fault and not self._probing):
            return None
        self._awaiting = self.FRAMES_PER_POLL
        self._sent_at = now
        return self._msg

    def on_frame(self, arb_id: int, data, now: float) -> int:
        try:
            self._decode(arb_id - self.reply_id, data)
        except sensors.SensorFrameError:
            self.bad_frames += 1
            return 0
        self.got_reply(now)
        if self._probing:
            self._probe_ok = True
        if self._awaiting:
            self._awaiting -= 1
            return 1
        return 0

    def _decode(self, index: int, data) -> None:
        raise NotImplementedError

    def _end_state(self):
        """The immutable state record published for this cycle."""
        raise NotImplementedError

    def end_cycle(self, now: float, on_time: bool = True):
        if self._awaiting or self._probing:
            self.judge(now, on_time)
        s = self._state = self._end_state()
        return s

    def _flagged(self, what: str) -> None:
        """The sensor's answer carries its error flag."""
        self.report_error(f"{what} reported an error flag", f"{what} still reports an error flag")


class Encoder(CanSensor):
    """A stand-alone position encoder (state only)."""

    TYPE_NAME = "rospy_control/Encoder"
    _state: EncoderState

    DEFAULT_COUNTS_PER_REV = 16384
    DEFAULT_VELOCITY_RANGE = 100.0
    ATTRIBUTES = (
        SensorAttribute("counts_per_rev", to_int, DEFAULT_COUNTS_PER_REV, positive, "a positive integer"),
        SensorAttribute("velocity_range", to_float, DEFAULT_VELOCITY_RANGE, positive,
                        "a positive number (rad/s)"),
    )

    def __init__(self, name: str, can_id: int, counts_per_rev: int = DEFAULT_COUNTS_PER_REV,
                 velocity_range: float = DEFAULT_VELOCITY_RANGE, **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.counts_per_rev = counts_per_rev
        self.velocity_range = velocity_range
        self._pos = 0.0
        self._vel = 0.0
        self._state = self._end_state()

    def _decode(self, index: int, data) -> None:
        self._pos, self._vel, flags = sensors.decode_encoder(data, self.counts_per_rev, self.velocity_range)
        if flags & sensors.FLAG_ERROR:
            self._flagged("encoder")

    def _end_state(self) -> EncoderState:
        return EncoderState(self.name, self._pos, self._vel, self._fault, self._fault_reason,
                            self._last_reply if self._received else 0.0, self._received, self._fault_time)


def _diag(v: float) -> Tuple[float, ...]:
    return (v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v)


class ImuSensor(CanSensor):
    """An IMU: orientation (quaternion x, y, z, w), angular velocity and linear acceleration."""

    TYPE_NAME = "rospy_control/ImuSensor"
    _state: ImuState
    FRAMES_PER_POLL = sensors.IMU_FRAMES

    DEFAULT_GYRO_RANGE = 34.9
    DEFAULT_ACCEL_RANGE = 156.9
    DEFAULT_ORIENTATION_VARIANCE = 1e-4
    DEFAULT_ANGULAR_VELOCITY_VARIANCE = 1e-5
    DEFAULT_LINEAR_ACCELERATION_VARIANCE = 1e-3
    ATTRIBUTES = (
        SensorAttribute("gyro_range", to_float, DEFAULT_GYRO_RANGE, positive, "a positive number"),
        SensorAttribute("accel_range", to_float, DEFAULT_ACCEL_RANGE, positive, "a positive number"),
        SensorAttribute("orientation_variance", to_float, DEFAULT_ORIENTATION_VARIANCE, non_negative,
                        "a number >= 0"),
        SensorAttribute("angular_velocity_variance", to_float, DEFAULT_ANGULAR_VELOCITY_VARIANCE,
                        non_negative, "a number >= 0"),
        SensorAttribute("linear_acceleration_variance", to_float, DEFAULT_LINEAR_ACCELERATION_VARIANCE,
                        non_negative, "a number >= 0"),
    )

    def __init__(self, name: str, can_id: int, gyro_range: float = DEFAULT_GYRO_RANGE,
                 accel_range: float = DEFAULT_ACCEL_RANGE,
                 orientation_variance: float = DEFAULT_ORIENTATION_VARIANCE,
                 angular_velocity_variance: float = DEFAULT_ANGULAR_VELOCITY_VARIANCE,
                 linear_acceleration_variance: float = DEFAULT_LINEAR_ACCELERATION_VARIANCE, **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.gyro_range = gyro_range
        self.accel_range = accel_range
        self.orientation_covariance = _diag(orientation_variance)
        self.angular_velocity_covariance = _diag(angular_velocity_variance)
        self.linear_acceleration_covariance = _diag(linear_acceleration_variance)
        self._q = (0.0, 0.0, 0.0, 1.0)
        self._w = (0.0, 0.0, 0.0)
        self._a = (0.0, 0.0, 0.0)
        self._temp: Optional[float] = None
        self._state = self._end_state()

    def _decode(self, index: int, data) -> None:
        if index == 0:
            self._q = sensors.decode_quaternion(data)
        elif index == 1:
            x, y, z, flags, _ = sensors.decode_vec3(data, self.gyro_range)
            self._w = (x, y, z)
            if flags & sensors.FLAG_ERROR:
                self._flagged("IMU")
        else:
            x, y, z, temp, _ = sensors.decode_vec3(data, self.accel_range)
            self._a = (x, y, z)
            self._temp = float(temp - 256 if temp > 127 else temp)

    def _end_state(self) -> ImuState:
        return ImuState(self.name, self.frame_id, self._q, self.orientation_covariance, self._w,
                        self.angular_velocity_covariance, self._a, self.linear_acceleration_covariance,
                        self._temp, self._fault, self._fault_reason,
                        self._last_reply if self._received else 0.0, self._received, self._fault_time)


class ContactSensor(CanSensor):
    """A foot contact switch / load cell: in contact + normal force (N)."""

    TYPE_NAME = "rospy_control/ContactSensor"
    _state: ContactState
    REPLY_DLC = 4

    DEFAULT_FORCE_RANGE = 1000.0
    ATTRIBUTES = (
        SensorAttribute("force_range", to_float, DEFAULT_FORCE_RANGE, positive, "a positive number (N)"),
    )

    def __init__(self, name: str, can_id: int, force_range: float = DEFAULT_FORCE_RANGE, **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.force_range = force_range
        self._contact = False
        self._force = 0.0
        self._state = self._end_state()

    def _decode(self, index: int, data) -> None:
        self._contact, self._force, err = sensors.decode_contact(data, self.force_range)
        if err:
            self._flagged("contact sensor")

    def _end_state(self) -> ContactState:
        return ContactState(self.name, self.frame_id, self._contact, self._force, self._fault,
                            self._fault_reason, self._last_reply if self._received else 0.0, self._received,
                            self._fault_time)


class ForceTorqueSensor(CanSensor):
    """A 6-axis force/torque sensor."""

    TYPE_NAME = "rospy_control/ForceTorqueSensor"
    _state: ForceTorqueState
    FRAMES_PER_POLL = sensors.FT_FRAMES

    DEFAULT_FORCE_RANGE = 500.0
    DEFAULT_TORQUE_RANGE = 50.0
    ATTRIBUTES = (
        SensorAttribute("force_range", to_float, DEFAULT_FORCE_RANGE, positive, "a positive number"),
        SensorAttribute("torque_range", to_float, DEFAULT_TORQUE_RANGE, positive, "a positive number"),
    )

    def __init__(self, name: str, can_id: int, force_range: float = DEFAULT_FORCE_RANGE,
                 torque_range: float = DEFAULT_TORQUE_RANGE, **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.force_range = force_range
        self.torque_range = torque_range
        self._f = (0.0, 0.0, 0.0)
        self._t = (0.0, 0.0, 0.0)
        self._state = self._end_state()

    def _decode(self, index: int, data) -> None:
        if index == 0:
            x, y, z, flags, _ = sensors.decode_vec3(data, self.force_range)
            self._f = (x, y, z)
        else:
            x, y, z, flags, _ = sensors.decode_vec3(data, self.torque_range)
            self._t = (x, y, z)
        if flags & sensors.FLAG_ERROR:
            self._flagged("force/torque sensor")

    def _end_state(self) -> ForceTorqueState:
        return ForceTorqueState(self.name, self.frame_id, self._f, self._t, self._fault, self._fault_reason,
                                self._last_reply if self._received else 0.0, self._received,
                                self._fault_time)
