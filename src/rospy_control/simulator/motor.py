"""The simulated MIT motor: joint model and firmware (see :mod:`rospy_control.simulator`)."""
from __future__ import annotations

import math
import random
import struct
import time
from typing import Any, Optional

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_config.document import ElementInfo, non_negative, positive, to_float, to_int
from rospy_control.devices.mit import codec as mit
from rospy_control.simulator.base import SimUnit
from rospy_control.simulator.physics import move, steps_due
from rospy_control.hardware_config.records import UnitConfig

__all__ = ["SimulatedMotor", "CommandStats"]

_REPLY8 = struct.Struct(">BHHBBB")


class CommandStats:
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


class SimulatedMotor(SimUnit):
    """Joint model + MIT firmware of one motor (values in the motor's own frame)."""

    unit: UnitConfig

    def __init__(self, motor: UnitConfig, el: Optional[ElementInfo]) -> None:
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
        #: pose-dependent gravity load (motor frame, N m), kept up to date by ``gravity`` (a
        #: :class:`rospy_control.simulator.gravity.SimulatedGravity` shared by the robot's motors, None:
        #: no URDF model); it adds to the constant ``load_torque``
        self.gravity: Optional[Any] = None
        self.gravity_load = 0.0
        stop_min = r.get("stop_min", to_float, None)
        stop_max = r.get("stop_max", to_float, None)
        init = r.get("initial_position", to_float, 0.0)
        self.position_noise = r.get("position_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self.velocity_noise = r.get("velocity_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self.torque_noise = r.get("torque_noise", to_float, 0.0, check=non_negative, expected="std >= 0")
        self.temperature = r.get("temperature", to_float, 35.0)
        # whole turns the motor's reading is off after power-on (a motor that counts turns only while
        # powered, switched on a turn away from where it was switched off)
        turns = r.get("turn_offset", to_int, 0, check=lambda v: abs(v) <= 100,
                      expected="an integer number of turns")
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
        self.zero_shift = -2.0 * math.pi * turns
        self._last_rx: Optional[float] = None
        #: times the firmware CAN timeout took the motor out of motor mode
        self.firmware_timeouts = 0
        self.cstats = CommandStats()
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

    @property
    def joint(self) -> "SimulatedMotor":
        """The joint the simulator's gravity loads (:meth:`SimulatedFirmware.gravity_joints`): an MIT
        motor model is its own joint model."""
        return self

    def joint_position(self) -> float:
        m = self.unit
        return m.direction * (self.p - self.zero_shift - m.zero_offset)

    def advance(self, now: float, dt: float) -> None:
        """Integrate the joint model up to ``now`` in steps of ``dt``."""
        n, self.t = steps_due(self.t, now, dt)
        if n == 0:
            return
        gravity = self.gravity
        if gravity is not None:
            gravity.refresh(now)
        p, v = self.p, self.v
        J, b, lim = self.inertia, self.damping, self.torque_limit
        load = self.load_torque + self.gravity_load
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
            p, v = move(p, v, dt, f_imp, smin, smax)
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
