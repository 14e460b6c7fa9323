"""Simulated sensors: IMU, foot contact, force/torque and encoder models answering polls with
:mod:`rospy_control.devices.sensors.codec` frames."""
from __future__ import annotations

import math
import random
from typing import Any, List, Optional, Protocol, Tuple

from rospy_control.hardware_config.document import non_negative, positive, to_bool, to_float, to_str
from rospy_control.devices.sensors import codec as sensors
from rospy_control.hardware_config.records import UnitConfig
from rospy_control.simulator.base import SimUnit


__all__ = ["SENSOR_MODELS", "SimSensor", "GRAVITY"]

GRAVITY = 9.80665


class MotorLookup(Protocol):
    """What a sensor model asks of the firmware it runs in (:class:`~.firmware.SimulatedFirmware`):
    the simulated motor it follows, by name (this module does not import the firmware)."""

    def motor_model(self, name: str, referrer: Optional[Any] = None) -> Any:
        ...  # pragma: no cover


class SimSensor(SimUnit):
    """A sensor model: :meth:`answer` gives the reply frames to one poll."""

    def __init__(self, unit, el) -> None:
        super().__init__(unit, el)
        self.reply_id = unit.reply_id

    def answer(self, sim: MotorLookup) -> List[Tuple[int, bytes]]:
        raise NotImplementedError


class _SimImu(SimSensor):
    def __init__(self, unit: UnitConfig, el) -> None:
        super().__init__(unit, el)
        r = self._reader
        self.roll = r.get("roll", to_float, 0.0)
        self.pitch = r.get("pitch", to_float, 0.0)
        self.gyro_noise = r.get("gyro_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self.accel_noise = r.get("accel_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self._finish()
        cr, sr, cp, sp = math.cos(self.roll / 2), math.sin(self.roll / 2), math.cos(self.pitch / 2), \
            math.sin(self.pitch / 2)
        self.q = (sr * cp, cr * sp, -sr * sp, cr * cp)
        # gravity reaction expressed in the sensor frame (world z up)
        self.acc = (-GRAVITY * math.sin(self.pitch), GRAVITY * math.sin(self.roll) * math.cos(self.pitch),
                    GRAVITY * math.cos(self.roll) * math.cos(self.pitch))

    def answer(self, sim):
        u = self.unit
        g, a = self.gyro_noise, self.accel_noise
        w = (random.gauss(0, g), random.gauss(0, g), random.gauss(0, g)) if g else (0.0, 0.0, 0.0)
        acc = self.acc
        if a:
            acc = (acc[0] + random.gauss(0, a), acc[1] + random.gauss(0, a), acc[2] + random.gauss(0, a))
        flags = sensors.FLAG_ERROR if self.fault == "error_flag" else 0
        self.seq = (self.seq + 1) & 0xFF
        return [(self.reply_id, sensors.encode_quaternion(self.q)),
                (self.reply_id + 1, sensors.encode_vec3(w, u.gyro_range, flags, self.seq)),
                (self.reply_id + 2, sensors.encode_vec3(acc, u.accel_range, 30, self.seq))]


class _SimContact(SimSensor):
    def __init__(self, unit: UnitConfig, el) -> None:
        super().__init__(unit, el)
        r = self._reader
        self.hfe_motor = r.get("hfe_motor", to_str, None)
        self.kfe_motor = r.get("kfe_motor", to_str, None)
        self.thigh = r.get("thigh", to_float, 0.25, check=positive, expected="a positive length (m)")
        self.shank = r.get("shank", to_float, 0.25, check=positive, expected="a positive length (m)")
        self.ground = r.get("ground", to_float, 0.38, check=positive, expected="a positive height (m)")
        self.stiffness = r.get("stiffness", to_float, 20000.0, check=non_negative, expected="N/m >= 0")
        self.weight = r.get("weight", to_float, 30.0, check=non_negative, expected="N >= 0")
        self.in_contact = r.get("in_contact", to_bool, True)
        self._finish()
        if (self.hfe_motor is None) != (self.kfe_motor is None):
            raise self._reader.element.error("give both 'hfe_motor' and 'kfe_motor' or neither")

    def answer(self, sim):
        contact, force = self.in_contact, self.weight if self.in_contact else 0.0
        if self.hfe_motor is not None:
            hfe = sim.motor_model(self.hfe_motor, self)
            kfe = sim.motor_model(self.kfe_motor, self)
            qh, qk = hfe.joint_position(), kfe.joint_position()
            depth = self.thigh * math.cos(qh) + self.shank * math.cos(qh + qk)
            pen = depth - self.ground
            contact = pen >= 0.0
            force = self.weight + self.stiffness * pen if contact else 0.0
        self.seq = (self.seq + 1) & 0xFF
        payload = sensors.encode_contact(contact, force, self.unit.force_range, self.fault == "error_flag",
                                         self.seq)
        return [(self.reply_id, payload)]


class _SimForceTorque(SimSensor):
    def __init__(self, unit: UnitConfig, el) -> None:
        super().__init__(unit, el)
        r = self._reader
        self.force = tuple(r.get(k, to_float, 0.0) for k in ("fx", "fy", "fz"))
        self.torque = tuple(r.get(k, to_float, 0.0) for k in ("tx", "ty", "tz"))
        self.noise = r.get("noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self._finish()

    def answer(self, sim):
        n = self.noise
        f = tuple(x + random.gauss(0, n) for x in self.force) if n else self.force
        t = tuple(x + random.gauss(0, n) for x in self.torque) if n else self.torque
        flags = sensors.FLAG_ERROR if self.fault == "error_flag" else 0
        self.seq = (self.seq + 1) & 0xFF
        u = self.unit
        return [(self.reply_id, sensors.encode_vec3(f, u.force_range, flags, self.seq)),
                (self.reply_id + 1, sensors.encode_vec3(t, u.torque_range, flags, self.seq))]


class _SimEncoder(SimSensor):
    def __init__(self, unit: UnitConfig, el) -> None:
        super().__init__(unit, el)
        r = self._reader
        self.follows = r.get("follows", to_str, None)
        self.ratio = r.get("ratio", to_float, 1.0)
        self.position = r.get("position", to_float, 0.0)
        self._finish()

    def answer(self, sim):
        p, v = self.position, 0.0
        if self.follows is not None:
            m = sim.motor_model(self.follows, self)
            p = self.ratio * m.joint_position()
            v = self.ratio * m.unit.direction * m.v
        flags = sensors.FLAG_ERROR if self.fault == "error_flag" else 0
        self.seq = (self.seq + 1) & 0xFF
        u = self.unit
        payload = sensors.encode_encoder(p, v, u.counts_per_rev, u.velocity_range, flags, self.seq)
        return [(self.reply_id, payload)]


#: name of the configuring unit class (or of a base of it) -> its model, in the order they are tried
SENSOR_MODELS = (("ImuSensor", _SimImu), ("ContactSensor", _SimContact),
                 ("ForceTorqueSensor", _SimForceTorque), ("Encoder", _SimEncoder))
