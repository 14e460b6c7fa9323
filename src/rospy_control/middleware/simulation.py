"""Simulated firmware: answers on a python-can ``virtual`` bus exactly like the real devices.

The simulator owns its own :class:`can.interfaces.virtual.VirtualBus` on the channel's (private)
virtual channel and one thread.  For every frame it receives it behaves like the firmware:

* **MIT motors** (:class:`SimulatedMotor`): answer every 8-byte frame to their id (enter / exit /
  zero / command) with a reply of the configured DLC on the master id; commands are applied only in
  motor mode.  The joint model is integrated lazily, at the simulator's ``rate``, up to the arrival
  time of each frame (so an idle simulator costs nothing)::

      tau_motor = clamp(kp (p_des - p) + kd (v_des - v) + t_ff, +-torque_limit)     (0 when disabled)
      J dv/dt   = tau_motor + load_torque - damping v - friction sign(v)
      p clamped to [stop_min, stop_max] (inelastic hard stops)

  Damping terms are integrated implicitly (stable for any gain), Coulomb friction as a velocity
  impulse that can stop the joint (stiction).  Reported values get Gaussian noise and the reply is
  delayed by ``latency``.
* **Sensors** speak :mod:`rospy_control.middleware.protocols.sensors`: the IMU reports gravity on +z
  at rest; a foot contact sensor computes foot depth from its leg's HFE/KFE motors (two-link leg) and
  is in contact when the foot reaches the ground (all feet touch in the standing pose).

**Fault switches** (:meth:`SimulatedFirmware.set_fault`), per unit: ``silent``, ``late`` (extra
delay), ``wrong_dlc`` (4-byte replies), ``garbage`` (adds junk frames), ``error_flag`` (error byte,
DLC 8), ``over_temperature``; per bus: ``bus_errors`` (an error frame after every reply).

**Firmware CAN timeout** (motor ``<simulation firmware_timeout="...">``, default the motor's own
``firmware_timeout`` attribute, 0 = off): when no frame arrived for that long while in motor mode,
the motor leaves motor mode (limp) at that moment, as firmwares with a CAN timeout do; it keeps
answering, ignores commands and needs enter-motor-mode again (``firmware_timeouts`` counts it).

**Command record** (:meth:`SimulatedFirmware.command_stats`): per motor, every *command* frame
received in motor mode (not enter / exit / zero) is counted, with the last ``p_des`` and the largest
``|p_des|`` step between two consecutive command frames that both have ``kp > 0`` (position-like),
in joint units (direction and zero offset applied), when it happened and between which values.  A
frame with ``kp = 0`` and entering or leaving motor mode break the chain.
"""
from __future__ import annotations

import heapq
import itertools
import math
import random
import struct
import threading
import time
from typing import Dict, List, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.middleware.config import (
    AttributeReader, ElementInfo, non_negative, positive, to_bool, to_float, to_int, to_str,
)
from rospy_control.middleware.protocols import mit, sensors
from rospy_control.middleware.units import (
    CanUnit, ContactSensor, Encoder, ForceTorqueSensor, ImuSensor, Motor,
)

__all__ = ["SimulatedFirmware", "SimulatedMotor", "SimulationSettings", "FAULTS"]

logger = get_logger(__name__)

#: Fault switches understood by :meth:`SimulatedFirmware.set_fault`.
FAULTS = ("silent", "late", "wrong_dlc", "garbage", "error_flag", "over_temperature")

GRAVITY = 9.80665
_REPLY8 = struct.Struct(">BHHBBB")


class SimulationSettings:
    """The channel's ``<simulation>`` element: ``enabled``, ``rate`` (Hz), ``latency`` (s), ``seed``."""

    def __init__(self, enabled: bool = True, rate: float = 2000.0, latency: float = 0.0,
                 seed: Optional[int] = None) -> None:
        self.enabled = enabled
        self.rate = rate
        self.latency = latency
        self.seed = seed

    @classmethod
    def from_element(cls, el: Optional[ElementInfo]) -> "SimulationSettings":
        if el is None:
            return cls(enabled=False)
        r = AttributeReader(el)
        s = cls(
            enabled=r.get("enabled", to_bool, True),
            rate=r.get("rate", to_float, 2000.0, check=positive, expected="a positive rate in Hz"),
            latency=r.get("latency", to_float, 0.0, check=non_negative, expected="seconds >= 0"),
            seed=r.get("seed", to_int, None),
        )
        r.finish()
        return s


class _CommandStats:
    """What one simulated motor received (written by the simulator thread, replaced on reset)."""

    __slots__ = ("count", "last_p_des", "prev", "max_step", "max_step_time", "max_step_from", "max_step_to")

    def __init__(self) -> None:
        self.count = 0
        self.last_p_des: Optional[float] = None
        self.prev: Optional[float] = None   # p_des of the previous position-like frame of the chain
        self.max_step = 0.0
        self.max_step_time: Optional[float] = None
        self.max_step_from: Optional[float] = None
        self.max_step_to: Optional[float] = None

    def as_dict(self) -> dict:
        return {"count": self.count, "last_p_des": self.last_p_des, "max_step": self.max_step,
                "max_step_time": self.max_step_time, "max_step_from": self.max_step_from,
                "max_step_to": self.max_step_to}


class _SimUnit:
    def __init__(self, unit: CanUnit, el: Optional[ElementInfo]) -> None:
        self.unit = unit
        self.name = unit.name
        self.fault: Optional[str] = None
        self.fault_value: Optional[float] = None
        self.latency: Optional[float] = None
        self.seq = 0
        #: frames received for this unit (including ignored ones while silent)
        self.frames = 0
        self._reader = AttributeReader(el if el is not None else ElementInfo("simulation", {}, "", None, ()))

    def _finish(self) -> None:
        r = self._reader
        self.latency = r.get("latency", to_float, None, check=non_negative, expected="seconds >= 0")
        fault = r.get("fault", to_str, None, check=lambda v: v in FAULTS,
                      expected="one of " + ", ".join(FAULTS))
        r.finish()
        if fault:
            self.fault = fault


class SimulatedMotor(_SimUnit):
    """Joint model + MIT firmware of one motor (values in the motor's own frame)."""

    def __init__(self, motor: Motor, el: Optional[ElementInfo]) -> None:
        super().__init__(motor, el)
        r = self._reader
        lim = motor.limits
        self.limits = lim
        self.motor_id = motor.can_id
        self.dlc = motor.reply_dlc
        self.inertia = r.get("inertia", to_float, 0.01, check=positive,
                             expected="a positive inertia (kg m^2)")
        self.damping = r.get("damping", to_float, 0.05, check=non_negative,
                             expected="a number >= 0 (N m s/rad)")
        self.friction = r.get("friction", to_float, 0.05, check=non_negative, expected="a number >= 0 (N m)")
        self.torque_limit = r.get("torque_limit", to_float, min(abs(lim.t_min), abs(lim.t_max)),
                                  check=positive,
                                  expected="a positive torque (N m)")
        self.load_torque = r.get("load_torque", to_float, 0.0)
        stop_min = r.get("stop_min", to_float, None)
        stop_max = r.get("stop_max", to_float, None)
        init = r.get("initial_position", to_float, 0.0)
        self.position_noise = r.get("position_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self.velocity_noise = r.get("velocity_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self.torque_noise = r.get("torque_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self.temperature = r.get("temperature", to_float, 35.0)
        self.firmware_timeout = r.get("firmware_timeout", to_float, motor.firmware_timeout,
                                      check=non_negative,
                                      expected="seconds >= 0 (0 = no firmware CAN timeout)")
        self._finish()
        d, off = motor.direction, motor.zero_offset
        # joint-side stops and initial position -> motor frame
        if stop_min is None:
            smin, smax = lim.p_min, lim.p_max
        else:
            a = d * stop_min + off
            b = d * (stop_max if stop_max is not None else lim.p_max) + off
            smin, smax = min(a, b), max(a, b)
        if stop_max is not None and stop_min is None:
            b = d * stop_max + off
            smin, smax = (lim.p_min, b) if d > 0 else (b, lim.p_max)
        if not smin < smax:
            raise ConfigError(f"<simulation> of motor '{motor.name}': stop_min must be below stop_max",
                              el.source if el else None, el.line if el else None)
        self.stop_min, self.stop_max = smin, smax
        self.p = min(max(d * init + off, smin), smax)
        self.v = 0.0
        self.tau = 0.0
        self.t = None  # type: Optional[float]
        self.enabled = False
        self.cmd = (0.0, 0.0, 0.0, 0.0, 0.0)
        self._cmd_bytes = b""
        self._cmd_pd = 0.0      # raw p_des (firmware frame, before the zero shift) and kp of _cmd_bytes
        self._cmd_kp = 0.0
        self.zero_shift = 0.0
        self._last_rx: Optional[float] = None
        #: times the firmware CAN timeout took the motor out of motor mode
        self.firmware_timeouts = 0
        self.cstats = _CommandStats()
        # precomputed reply encoding (hot path: one struct pack per reply)
        self._p_lo, self._p_hi, self._p_k = lim.p_min, lim.p_max, 65535.0 / (lim.p_max - lim.p_min)
        self._v_lo, self._v_hi, self._v_k = lim.v_min, lim.v_max, 4095.0 / (lim.v_max - lim.v_min)
        self._t_lo, self._t_hi, self._t_k = lim.t_min, lim.t_max, 4095.0 / (lim.t_max - lim.t_min)

    def _pack_reply(self, p: float, v: float, tau: float, dlc: int, temp: float, err: int) -> bytes:
        """Same bytes as :func:`mit.pack_reply`, without the generic clamping helpers."""
        p = self._p_lo if p < self._p_lo else (self._p_hi if p > self._p_hi else p)
        v = self._v_lo if v < self._v_lo else (self._v_hi if v > self._v_hi else v)
        tau = self._t_lo if tau < self._t_lo else (self._t_hi if tau > self._t_hi else tau)
        ti = int((tau - self._t_lo) * self._t_k)
        if dlc == 8:
            return _REPLY8.pack(self.motor_id, int((p - self._p_lo) * self._p_k),
                                (int((v - self._v_lo) * self._v_k) << 4) | (ti >> 8), ti & 0xFF,
                                max(0, min(255, int(temp))), err & 0xFF)
        return mit.pack_reply(self.motor_id, p, v, tau, self.limits, dlc, temp, err)

    def joint_position(self) -> float:
        m = self.unit
        return m.direction * (self.p - self.zero_shift - m.zero_offset)

    def advance(self, now: float, dt: float) -> None:
        """Integrate the joint model up to ``now`` in steps of ``dt``."""
        t = self.t
        if t is None:
            self.t = now
            return
        n = int((now - t) / dt)
        if n <= 0:
            return
        if n > 2000:  # long silence: do not spend seconds catching up
            n = 2000
            self.t = now - n * dt
        self.t += n * dt
        p, v = self.p, self.v
        J, b, lim = self.inertia, self.damping, self.torque_limit
        load = self.load_torque
        f_imp = self.friction * dt / J
        smin, smax = self.stop_min, self.stop_max
        pd, vd, kp, kd, tff = self.cmd
        enabled = self.enabled
        h = dt / J                          # velocity change per N m over one step
        inv_free = 1.0 / (1.0 + h * b)      # implicit viscous damping only
        inv_mit = 1.0 / (1.0 + h * (kd + b))  # implicit kd + viscous damping
        bias = kd * vd + tff + load
        tau = 0.0
        for _ in range(n):
            if enabled:
                tau = kp * (pd - p) + kd * (vd - v) + tff
                if -lim <= tau <= lim:
                    v = (v + h * (kp * (pd - p) + bias)) * inv_mit
                else:
                    tau = lim if tau > 0 else -lim
                    v = (v + h * (tau + load)) * inv_free
            else:
                v = (v + h * load) * inv_free
            if v > f_imp:
                v -= f_imp
            elif v < -f_imp:
                v += f_imp
            else:
                v = 0.0
            p += v * dt
            if p < smin:
                p = smin
                if v < 0.0:
                    v = 0.0
            elif p > smax:
                p = smax
                if v > 0.0:
                    v = 0.0
        self.p, self.v, self.tau = p, v, tau

    def handle(self, data, now: float, dt: float) -> Optional[bytes]:
        """Process one received frame; return the reply payload (None = no reply)."""
        if len(data) != 8:
            return None
        fw = self.firmware_timeout
        if fw and self.enabled and self._last_rx is not None and now - self._last_rx > fw:
            self.advance(self._last_rx + fw, dt)   # limp from the moment the firmware timed out
            self.enabled = False
            self.tau = 0.0
            self.firmware_timeouts += 1
            self.cstats.prev = None
        self._last_rx = now
        self.advance(now, dt)
        if data == mit.ENTER_MOTOR_MODE:
            self.enabled = True
            self.cstats.prev = None
        elif data == mit.EXIT_MOTOR_MODE:
            self.enabled = False
            self.tau = 0.0
            self.cstats.prev = None
        elif data == mit.SET_ZERO:
            self.zero_shift = self.p - self.unit.zero_offset
        elif self.enabled:
            if data != self._cmd_bytes:
                self._cmd_bytes = bytes(data)
                pd, vd, kp, kd, tff = mit.unpack_command(data, self.limits)
                self._cmd_pd, self._cmd_kp = pd, kp
                self.cmd = (pd + self.zero_shift, vd, kp, kd, tff)
            m = self.unit
            pj = m.direction * (self._cmd_pd - m.zero_offset)
            cs = self.cstats
            cs.count += 1
            cs.last_p_des = pj
            if self._cmd_kp > 0.0:
                prev = cs.prev
                if prev is not None:
                    step = abs(pj - prev)
                    if step > cs.max_step:
                        cs.max_step = step
                        cs.max_step_time = time.time()
                        cs.max_step_from = prev
                        cs.max_step_to = pj
                cs.prev = pj
            else:
                cs.prev = None
        p = self.p - self.zero_shift
        v, tau = self.v, self.tau
        if self.position_noise:
            p += random.gauss(0.0, self.position_noise)
        if self.velocity_noise:
            v += random.gauss(0.0, self.velocity_noise)
        if self.torque_noise:
            tau += random.gauss(0.0, self.torque_noise)
        fault = self.fault
        dlc, temp, err = self.dlc, self.temperature, 0
        if fault is not None:
            if fault == "error_flag":
                dlc, err = 8, int(self.fault_value or 1)
            elif fault == "over_temperature":
                dlc, temp = 8, self.fault_value or 120.0
        payload = self._pack_reply(p, v, tau, dlc, temp, err)
        if fault == "wrong_dlc":
            payload = payload[:4]
        return payload


class _SimSensor(_SimUnit):
    def __init__(self, unit, el) -> None:
        super().__init__(unit, el)
        self.reply_id = unit.reply_id

    def answer(self, sim: "SimulatedFirmware") -> List[Tuple[int, bytes]]:
        raise NotImplementedError


class _SimImu(_SimSensor):
    def __init__(self, unit: ImuSensor, el) -> None:
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


class _SimContact(_SimSensor):
    def __init__(self, unit: ContactSensor, el) -> None:
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


class _SimForceTorque(_SimSensor):
    def __init__(self, unit: ForceTorqueSensor, el) -> None:
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


class _SimEncoder(_SimSensor):
    def __init__(self, unit: Encoder, el) -> None:
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


_SENSOR_MODELS = ((ImuSensor, _SimImu), (ContactSensor, _SimContact), (ForceTorqueSensor, _SimForceTorque),
                  (Encoder, _SimEncoder))


class SimulatedFirmware:
    """All simulated devices of one channel, answering on a virtual bus.

    Build it (this validates every ``<simulation>`` element), then :meth:`start` it on the channel id
    the middleware's channel opens, and :meth:`stop` it after the channel is closed.

    :param units: the channel's units (their ``simulation`` element configures the model).
    :param settings: the channel's :class:`SimulationSettings`.
    :param master_id: id replies are sent to.
    """

    def __init__(self, name: str, units: List[CanUnit], settings: SimulationSettings,
                 master_id: int = 0) -> None:
        self.name = name
        self.settings = settings
        self.master_id = master_id
        self.dt = 1.0 / settings.rate
        self.motors: Dict[int, SimulatedMotor] = {}
        self.sensors: Dict[int, _SimSensor] = {}
        self.by_name: Dict[str, _SimUnit] = {}
        self.bus_errors = False
        self.frames_handled = 0
        for u in units:
            if isinstance(u, Motor):
                m = SimulatedMotor(u, u.simulation)
                self.motors[u.can_id] = m
                self.by_name[u.name] = m
            else:
                for cls, model in _SENSOR_MODELS:
                    if isinstance(u, cls):
                        s = model(u, u.simulation)
                        self.sensors[u.can_id] = s
                        self.by_name[u.name] = s
                        break
                else:
                    logger.warning("simulation '%s': no model for unit '%s' (%s); it will stay silent",
                                   name, u.name, type(u).__name__)
        for s in self.sensors.values():  # validate motor references now, not on the first poll
            for ref in ("hfe_motor", "kfe_motor", "follows"):
                target = getattr(s, ref, None)
                if target is not None:
                    self.motor_model(target, s)
        self._bus: Optional[can.BusABC] = None
        self._thread: Optional[threading.Thread] = None
        self._running = False
        self._heap: List[Tuple[float, int, can.Message]] = []
        self._counter = itertools.count()
        self._reply = can.Message(arbitration_id=master_id, is_extended_id=False, data=bytearray(8))
        self.error: Optional[BaseException] = None

    def motor_model(self, name: str, referrer: Optional[_SimUnit] = None) -> SimulatedMotor:
        """The simulated motor called ``name`` (ConfigError naming the referrer if unknown)."""
        m = self.by_name.get(name)
        if not isinstance(m, SimulatedMotor):
            where = referrer._reader.element if referrer is not None else None
            who = referrer.name if referrer else "?"
            msg = (f"<simulation> of '{who}' refers to motor '{name}', which is "
                   f"not a motor on channel '{self.name}'; motors there: "
                   + ", ".join(sorted(n for n, u in self.by_name.items() if isinstance(u, SimulatedMotor))))
            raise ConfigError(msg, where.source if where else None, where.line if where else None)
        return m

    # -- fault switches -----------------------------------------------------------------------------
    def set_fault(self, unit: Optional[str], fault: str, value: Optional[float] = None) -> None:
        """Switch a fault on.  ``unit=None, fault='bus_errors'`` makes the bus report error frames.

        ``value``: extra delay in s for ``late`` (default 0.05), error code for ``error_flag``
        (default 1), temperature for ``over_temperature`` (default 120).
        """
        if unit is None:
            if fault != "bus_errors":
                raise ValueError("only 'bus_errors' is a bus-wide fault")
            self.bus_errors = True
            return
        if fault not in FAULTS:
            raise ValueError(f"unknown fault '{fault}'; known: {', '.join(FAULTS)}")
        m = self._sim_unit(unit)
        m.fault_value = value
        m.fault = fault

    def clear_fault(self, unit: Optional[str] = None) -> None:
        """Clear the fault of ``unit`` (None: of every unit and the bus)."""
        targets = self.by_name.values() if unit is None else [self._sim_unit(unit)]
        for m in targets:
            m.fault = None
        if unit is None:
            self.bus_errors = False

    def fault_of(self, unit: str) -> Optional[str]:
        """The fault switch currently on for ``unit`` (None: none)."""
        return self._sim_unit(unit).fault

    def _sim_unit(self, unit: str) -> _SimUnit:
        try:
            return self.by_name[unit]
        except KeyError:
            raise ValueError(f"simulation '{self.name}' has no unit '{unit}'; simulated units: "
                             f"{', '.join(self.by_name) or '(none)'}") from None

    # -- command record -------------------------------------------------------------------------------
    def command_stats(self, unit: Optional[str] = None) -> dict:
        """What the simulated motors received in motor mode (see the module docstring).

        For one motor: ``{"count", "last_p_des", "max_step", "max_step_time" (time.time()),
        "max_step_from", "max_step_to", "firmware_timeouts", "enabled"}`` (joint units, None before the
        first frame / step); without ``unit``: ``{motor name: that dict}`` for every simulated motor.

        :raises ValueError: ``unit`` is not a simulated motor here.
        """
        if unit is not None:
            m = self._sim_unit(unit)
            if not isinstance(m, SimulatedMotor):
                raise ValueError(f"simulation '{self.name}': unit '{unit}' is not a motor")
            return self._stats_of(m)
        return {n: self._stats_of(m) for n, m in self.by_name.items() if isinstance(m, SimulatedMotor)}

    @staticmethod
    def _stats_of(m: "SimulatedMotor") -> dict:
        d = m.cstats.as_dict()
        d["firmware_timeouts"] = m.firmware_timeouts
        d["enabled"] = m.enabled
        return d

    def reset_command_stats(self, unit: Optional[str] = None) -> None:
        """Start the command record afresh (of ``unit``, or of every motor).  The chain of consecutive
        frames is kept: a step between the last frame before and the first after the reset counts."""
        targets = self.by_name.values() if unit is None else [self._sim_unit(unit)]
        for m in targets:
            if isinstance(m, SimulatedMotor):
                fresh = _CommandStats()
                fresh.prev = m.cstats.prev
                m.cstats = fresh

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self, virtual_channel: str) -> None:
        """Open a virtual bus on ``virtual_channel`` and start answering."""
        if self._thread is not None:
            return
        if self.settings.seed is not None:
            random.seed(self.settings.seed)
        self._bus = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
        self._running = True
        self._thread = threading.Thread(target=self._run, name=f"rospy_control.sim.{self.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop the thread and close the bus (idempotent)."""
        self._running = False
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        if self._bus is not None:
            self._bus.shutdown()
            self._bus = None

    def _latency(self, unit: _SimUnit) -> float:
        lat = unit.latency if unit.latency is not None else self.settings.latency
        if unit.fault == "late":
            lat += unit.fault_value if unit.fault_value is not None else 0.05
        return lat

    def _run(self) -> None:
        bus = self._bus
        recv, send = bus.recv, bus.send
        perf = time.perf_counter
        heap = self._heap
        motors, sens = self.motors, self.sensors
        dt = self.dt
        reply = self._reply
        master = self.master_id
        while self._running:
            try:
                timeout = 0.02
                if heap:
                    timeout = max(0.0, min(timeout, heap[0][0] - perf()))
                msg = recv(timeout)
                now = perf()
                if msg is not None and not msg.is_error_frame and not msg.is_extended_id:
                    self.frames_handled += 1
                    aid = msg.arbitration_id
                    m = motors.get(aid)
                    if m is not None:
                        m.frames += 1
                        if m.fault != "silent":
                            payload = m.handle(msg.data, now, dt)
                            if payload is not None:
                                lat = self._latency(m) if (m.latency or m.fault or self.settings.latency) \
                                    else 0.0
                                if lat > 0.0:
                                    heapq.heappush(heap, (now + lat, next(self._counter), can.Message(
                                        arbitration_id=master, is_extended_id=False, data=payload)))
                                else:
                                    # bytes, not bytearray: the virtual bus deep-copies every frame
                                    reply.data = payload
                                    reply.dlc = len(payload)
                                    send(reply)
                                self._after_reply(m, send)
                    else:
                        s = sens.get(aid)
                        if s is not None:
                            s.frames += 1
                        if s is not None and s.fault != "silent" and len(msg.data) == 0:
                            lat = self._latency(s)
                            for rid, payload in s.answer(self):
                                if s.fault == "wrong_dlc":
                                    payload = payload[:3]
                                out = can.Message(arbitration_id=rid, is_extended_id=False, data=payload)
                                if lat > 0.0:
                                    heapq.heappush(heap, (now + lat, next(self._counter), out))
                                else:
                                    send(out)
                            self._after_reply(s, send)
                while heap and heap[0][0] <= now:
                    send(heapq.heappop(heap)[2])
            except Exception as err:  # noqa: BLE001 - keep simulating; tests read .error
                if self.error is None:
                    self.error = err
                    logger.error("simulation '%s': %s: %s", self.name, type(err).__name__, err)
                if not self._running:
                    break
                time.sleep(0.001)  # never spin on a persistent error

    def _after_reply(self, unit: _SimUnit, send) -> None:
        if unit.fault == "garbage":
            # a too-short reply carrying the motor's id, and a frame on an id nobody uses
            send(can.Message(arbitration_id=self.master_id, is_extended_id=False,
                             data=bytes((getattr(unit, "motor_id", 0), 0xA5, 0x5A))))
            junk = bytes(random.getrandbits(8) for _ in range(8))
            send(can.Message(arbitration_id=0x7EE, is_extended_id=False, data=junk))
        if self.bus_errors:
            send(can.Message(is_error_frame=True, arbitration_id=0, data=b""))
