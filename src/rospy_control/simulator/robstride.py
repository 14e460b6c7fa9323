"""A simulated CyberGear / RobStride motor: what the real one sends for every frame it receives.

Shaped like :class:`rospy_control.simulator.motor.SimulatedMotor` (``advance``,
``handle``, ``joint_position``, the ``fault`` / ``fault_value`` / ``frames`` / ``latency`` attributes),
so a simulated channel registers it next to the MIT motors.  ``handle(msg, now, dt)`` takes the
received ``can.Message`` and returns the frames the motor sends (a list: this protocol answers some
requests with one frame and sends fault frames on its own); :meth:`tick` returns what it sends
unasked (active reports, fault frames) and should be called at least every report interval.

Firmware behaviour modelled after the CyberGear manual chapter 4 and RobStride's sample program
(see :mod:`rospy_control.devices.robstride.codec`):

* every command addressed to the motor id is answered with a type-2 feedback frame to the sender's
  host id (type 0 and type 7 with a type-0 frame, type 17 with a type-17 reply, type 24 not at all);
* enable (3) enters run mode in the present ``run_mode``; stop (4) goes to reset mode, and with
  byte 0 = 1 clears the latched faults; set zero (6) shifts the reported position; set CAN id (7)
  changes the id at once;
* ``run_mode`` 0 (operation control): type-1 frames set the impedance command; 1 (position) and 5
  (CSP): ``loc_ref`` followed at most at ``limit_spd`` (RobStride position mode 1: ``vel_max``);
  2 (velocity): ``spd_ref`` with current limit ``limit_cur``; 3 (current): ``iq_ref`` times the
  torque constant.  Type-1 frames outside run_mode 0, or while not enabled, are answered but ignored;
* ``run_mode`` can only be changed while in reset mode (the manual: "send a stop command before
  switching"); a write in run mode is answered but not applied;
* faults (:meth:`inject_fault`): the motor leaves run mode, feedback carries the fault bits, a
  type-21 frame goes out at once and every :attr:`FAULT_REPEAT` s while the fault lasts; enable is
  refused (the reply stays in reset mode) until a stop with clear-fault;
* active reporting (type 24 on): type-24 feedback frames every ``5 * (EPScan_time + 1)`` ms;
* a firmware CAN timeout (``canTimeout`` 0x7028 in units of 50 us, "20000 = 1 s" in RobStride's
  manuals [U: not checked against a device]) drops the motor out of run mode when no frame arrived
  for that long;
* ``fault = "silent"``: nothing is answered (a powered-off or disconnected motor).

:func:`peer_for_unit` puts one on a simulated joint for the simulated firmware
(:class:`RobStridePeer`: the joint is a :class:`~.joint.JointModel` from the unit's ``<simulation>``
element, driven by the firmware's torque law in impedance form, :meth:`SimulatedRobStride.impedance`).
"""
from __future__ import annotations

import math
import struct
from typing import Any, Dict, List, Optional, Tuple

import can

from rospy_control.devices.robstride import codec as rs
from rospy_control.simulator.device import Impedance
from rospy_control.simulator.joint import DevicePeer, JointModel
from rospy_control.simulator.physics import move, steps_due

__all__ = ["SimulatedRobStride", "RobStridePeer", "peer_for_unit", "FAULT_SWITCHES"]

#: the motor's own fault switches, named as the type-21 fault bits are in the manual [CG 4.1.10]
FAULT_SWITCHES: Dict[str, int] = {name: 1 << bit for bit, name in rs.FAULT_BITS.items()}


class SimulatedRobStride:
    """Joint model + private-protocol firmware of one CyberGear / RobStride motor.

    :param name: unit name (logs, fault switches).
    :param motor_id: CAN id (factory 0x7F).
    :param model: ``cybergear``, ``rs00`` ... ``rs06`` (the ranges of :data:`robstride.MODELS`).
    :param inertia, damping, friction: joint model (kg m^2, N m s/rad, N m).
    :param torque_constant: N m per A of iq (current mode).
    """

    #: a latched fault is reported by a type-21 frame this often (s)
    FAULT_REPEAT = 0.1
    #: gains of the simulated position / velocity loops (per unit inertia)
    POSITION_GAIN = 30.0
    VELOCITY_GAIN = 2.0

    def __init__(self, name: str, motor_id: int = rs.DEFAULT_MOTOR_ID, model: str = "cybergear",
                 inertia: float = 0.01, damping: float = 0.05, friction: float = 0.02,
                 initial_position: float = 0.0, temperature: float = 30.0, torque_constant: float = 0.87,
                 uid: bytes = b"\x11\x22\x33\x44\x55\x66\x77\x88", bus_voltage: float = 24.0) -> None:
        self.name = name
        self.motor_id = motor_id
        self.model = model
        #: set when the motor took a new id (type 7): the firmware routes frames anew
        self.ids_changed = False
        #: the parameters as last stored by type 22 (RobStride models), and how often
        self.saved: Dict[int, float] = {}
        self.saves = 0
        self.limits = rs.limits_for(model)
        self.inertia, self.damping, self.friction = inertia, damping, friction
        self.temperature = temperature
        self.torque_constant = torque_constant
        self.uid = bytes(uid)
        self.bus_voltage = bus_voltage
        # fault switch of the simulation framework (only "silent" is handled here) and bookkeeping
        self.fault: Optional[str] = None
        self.fault_value: Optional[float] = None
        self.latency: Optional[float] = None
        self.frames = 0
        # physical state (motor frame, before the zero shift)
        self.p = initial_position
        self.v = 0.0
        self.tau = 0.0
        self.t: Optional[float] = None
        self.zero_shift = 0.0
        # firmware state
        self.mode = rs.MODE_RESET
        self.host_id = rs.DEFAULT_HOST_ID
        self.cmd = (0.0, 0.0, 0.0, 0.0, 0.0)  # p, v, kp, kd, t of the latest type-1 frame
        self.params: Dict[int, float] = {
            0x7005: 0, 0x7006: 0.0, 0x700A: 0.0, 0x700B: self.limits.t_max, 0x7010: 0.125, 0x7011: 0.0158,
            0x7014: 0.1, 0x7016: 0.0, 0x7017: 2.0, 0x7018: self.limits.i_max or 23.0, 0x701D: 0,
            0x701E: 30.0, 0x701F: 1.0, 0x7020: 0.002, 0x7021: 0.1, 0x7022: 20.0, 0x7024: 10.0,
            0x7025: 10.0, 0x7026: 1, 0x7028: 0, 0x7029: 1, 0x702A: 0, 0x702B: 0.0,
        }
        self.reporting = False
        self._next_report: Optional[float] = None
        #: latched faults: 6-bit feedback field and the type-21 fault / warning words
        self.feedback_faults = 0
        self.fault_word = 0
        self.warning_word = 0
        self._fault_persistent = False
        self._next_fault_frame: Optional[float] = None
        self._last_rx: Optional[float] = None
        #: times the firmware CAN timeout took the motor out of run mode
        self.firmware_timeouts = 0

    # -- fault injection ------------------------------------------------------------------------------
    def inject_fault(self, fault_word: int = 1, feedback_faults: Optional[int] = None, warning_word: int = 0,
                     persistent: bool = False) -> None:
        """Latch a fault: ``fault_word`` as in the type-21 frame (default bit 0, over-temperature),
        ``feedback_faults`` the 6-bit feedback field (default derived from the word).  ``persistent``:
        clear-fault does not clear it (the cause is still there) until :meth:`remove_fault`."""
        if feedback_faults is None:
            feedback_faults = _feedback_bits_of(fault_word)
        self.fault_word |= fault_word
        self.feedback_faults |= feedback_faults
        self.warning_word |= warning_word
        self._fault_persistent = persistent
        if self.fault_word or self.feedback_faults:
            self.mode = rs.MODE_RESET
            self.tau = 0.0
            self._next_fault_frame = -math.inf  # send one at the next tick / handle

    def remove_fault(self) -> None:
        """The cause of a persistent fault is gone (a later clear-fault clears it)."""
        self._fault_persistent = False

    @property
    def faulted(self) -> bool:
        return bool(self.fault_word or self.feedback_faults)

    # -- model --------------------------------------------------------------------------------------------
    def joint_position(self) -> float:
        """Position as the motor reports it (after set-zero), rad."""
        return self.p - self.zero_shift

    def _torque(self, p: float, v: float) -> float:
        lim = self.limits
        run_mode = int(self.params[0x7005])
        tmax = min(lim.t_max, float(self.params[0x700B]))
        if run_mode == 0:
            pd, vd, kp, kd, tff = self.cmd
            tau = kp * (pd + self.zero_shift - p) + kd * (vd - v) + tff
            tmax = lim.t_max
        elif run_mode in (1, 5):
            target = float(self.params[0x7016]) + self.zero_shift
            # CyberGear's position mode and RobStride's CSP (5) are limited by limit_spd, RobStride's
            # profile position mode (1) by vel_max
            pp = run_mode == 1 and self.model.lower() != "cybergear"
            vmax = abs(float(self.params[0x7024] if pp else self.params[0x7017]))
            vd = max(-vmax, min(vmax, self.POSITION_GAIN * (target - p) / 10.0))
            tau = self.inertia * self.POSITION_GAIN * (vd - v) * 10.0
        elif run_mode == 2:
            vd = float(self.params[0x700A])
            tau = self.inertia * self.VELOCITY_GAIN * 100.0 * (vd - v)
            tmax = min(tmax, self.torque_constant * abs(float(self.params[0x7018])))
        elif run_mode == 3:
            tau = self.torque_constant * float(self.params[0x7006])
        else:
            tau = 0.0
        return max(-tmax, min(tmax, tau))

    def impedance(self, p: float, v: float) -> Optional[Impedance]:
        """The torque law of the present run mode at motor position ``p`` (before the zero shift) as an
        impedance (None: not in run mode, the output is off): run_mode 0 as commanded; position modes
        as a position loop (``loc_kp``, 1/s) whose speed is limited by ``limit_spd`` / ``vel_max``,
        inside a speed loop (``spd_kp`` A/(rad/s) times the torque constant); speed mode as that speed
        loop, its torque limited by ``limit_cur``; current mode as ``iq_ref`` times the torque constant.
        The inner loops are a model, not the firmware's exact controllers."""
        if self.mode != rs.MODE_RUN:
            return None
        lim = self.limits
        run_mode = int(self.params[0x7005])
        tmax = min(lim.t_max, abs(float(self.params[0x700B])))
        kv = abs(float(self.params[0x701F])) * self.torque_constant
        if run_mode == 0:
            pd, vd, kp, kd, tff = self.cmd
            return Impedance(pd + self.zero_shift, vd, kp, kd, tff, lim.t_max)
        if run_mode in (1, 5):
            pp = run_mode == 1 and self.model.lower() != "cybergear"
            vmax = abs(float(self.params[0x7024] if pp else self.params[0x7017]))
            target = float(self.params[0x7016]) + self.zero_shift
            vd = max(-vmax, min(vmax, float(self.params[0x701E]) * (target - p)))
            return Impedance(0.0, vd, 0.0, kv, 0.0, tmax)
        if run_mode == 2:
            limit = min(tmax, self.torque_constant * abs(float(self.params[0x7018])))
            return Impedance(0.0, float(self.params[0x700A]), 0.0, kv, 0.0, limit)
        if run_mode == 3:
            return Impedance(0.0, 0.0, 0.0, 0.0, self.torque_constant * float(self.params[0x7006]), tmax)
        return None

    def advance(self, now: float, dt: float) -> None:
        """Integrate the joint model up to ``now`` in steps of ``dt`` (semi-implicit Euler)."""
        n, self.t = steps_due(self.t, now, dt)
        if n == 0:
            return
        p, v = self.p, self.v
        h = dt / self.inertia
        f_imp = self.friction * h
        tau = 0.0
        running = self.mode == rs.MODE_RUN
        for _ in range(n):
            tau = self._torque(p, v) if running else 0.0
            v = (v + h * tau) / (1.0 + h * self.damping)
            p, v = move(p, v, dt, f_imp)
        self.p, self.v, self.tau = p, v, tau

    # -- frames ----------------------------------------------------------------------------------------------
    def _feedback(self, comm_type: int = rs.FEEDBACK) -> can.Message:
        f = rs.encode_feedback(self.motor_id, self.host_id, self.p - self.zero_shift, self.v, self.tau,
                               self.temperature, self.limits, self.feedback_faults, self.mode, comm_type)
        return _msg(f)

    def _fault_frame(self) -> can.Message:
        return _msg(rs.encode_fault_frame(self.motor_id, self.host_id, self.fault_word, self.warning_word))

    def _check_timeout(self, now: float, dt: float) -> None:
        ticks = int(self.params[0x7028])
        if ticks and self.mode == rs.MODE_RUN and self._last_rx is not None:
            limit = ticks * 50e-6
            if now - self._last_rx > limit:
                self.advance(self._last_rx + limit, dt)
                self.mode = rs.MODE_RESET
                self.tau = 0.0
                self.firmware_timeouts += 1

    def handle(self, msg: can.Message, now: float, dt: float) -> List[can.Message]:
        """Process one received frame; return the frames the motor sends in answer (maybe none)."""
        if not msg.is_extended_id or msg.is_error_frame or msg.is_remote_frame:
            return []
        comm_type, d2, dest = rs.split_id(msg.arbitration_id)
        if dest != self.motor_id:
            return []
        self.frames += 1
        if self.fault == "silent":
            return []
        self._check_timeout(now, dt)
        self._last_rx = now
        self.advance(now, dt)
        data = bytes(msg.data)
        if comm_type != rs.OPERATION_CONTROL:
            self.host_id = d2 & 0xFF
        out: List[can.Message] = []
        if comm_type == rs.GET_ID:
            out.append(_msg(rs.encode_get_id_reply(self.motor_id, self.uid)))
        elif comm_type == rs.OPERATION_CONTROL:
            if len(data) < 8:
                return []
            if self.mode == rs.MODE_RUN and int(self.params[0x7005]) == 0:
                _id, p, v, kp, kd, t = rs.decode_operation_control(msg.arbitration_id, data, self.limits)
                self.cmd = (p, v, kp, kd, t)
            out.append(self._feedback())
        elif comm_type == rs.ENABLE:
            if not self.faulted:
                self.mode = rs.MODE_RUN
            out.append(self._feedback())
        elif comm_type == rs.STOP:
            self.mode = rs.MODE_RESET
            self.tau = 0.0
            self.cmd = (0.0, 0.0, 0.0, 0.0, 0.0)
            if data[:1] == b"\x01" and not self._fault_persistent:
                self.fault_word = self.feedback_faults = self.warning_word = 0
                self._next_fault_frame = None
            out.append(self._feedback())
        elif comm_type == rs.SET_ZERO:
            if data[:1] == b"\x01":
                self.zero_shift = self.p
                self.cmd = (0.0, self.cmd[1], self.cmd[2], self.cmd[3], self.cmd[4])
                self.params[0x7016] = 0.0
            out.append(self._feedback())
        elif comm_type == rs.SET_CAN_ID:
            new_id = (d2 >> 8) & 0xFF
            if not 1 <= new_id <= 0x7F or self.mode == rs.MODE_RUN:
                return []   # ids 1..127, changed in reset mode only
            self.motor_id = new_id
            self.ids_changed = True
            out.append(_msg(rs.encode_get_id_reply(self.motor_id, self.uid)))
        elif comm_type == rs.ROBSTRIDE_SAVE_PARAMETERS:
            if self.model.lower() == "cybergear" or data != bytes(range(1, 9)):
                return []   # CyberGear's type 22 sets the baud rate: not simulated
            self.saved = dict(self.params)
            self.saves += 1
            out.append(self._feedback())
        elif comm_type in (rs.PARAM_READ, rs.PARAM_WRITE):
            if len(data) < 8:
                return []
            out.extend(self._param(comm_type, data))
        elif comm_type == rs.ACTIVE_REPORT:
            on = rs.decode_active_report(msg.arbitration_id, data)
            if on is not None:
                self.reporting = on
                self._next_report = now if on else None
        else:
            return []
        return out

    def _param(self, comm_type: int, data: bytes) -> List[can.Message]:
        (index,) = struct.unpack_from("<H", data)
        spec = rs.PARAMETERS.get(index)
        if comm_type == rs.PARAM_READ:
            if spec is None:
                return [_msg(rs.encode_param_reply(self.motor_id, self.host_id, index, bytes(4), ok=False))]
            value = self._read_param(index)
            raw = struct.pack("<" + spec.fmt, value if spec.fmt == "f" else int(value))
            return [_msg(rs.encode_param_reply(self.motor_id, self.host_id, index, raw))]
        if spec is not None and spec.writable:
            value = rs.unpack_param_value(spec, data[4:8])
            if index == 0x7005:
                # the mode changes only in reset mode; unknown modes are ignored
                if self.mode != rs.MODE_RUN and int(value) in rs.RUN_MODE_NAMES:
                    self.params[index] = int(value)
            elif not (spec.fmt == "f" and not math.isfinite(value)):
                self.params[index] = value
        return [self._feedback()]

    def _read_param(self, index: int) -> float:
        if index == 0x7019:
            return self.p - self.zero_shift
        if index == 0x701A:
            return self.tau / self.torque_constant
        if index == 0x701B:
            return self.v
        if index == 0x701C:
            return self.bus_voltage
        return self.params.get(index, 0)

    def tick(self, now: float, dt: Optional[float] = None) -> List[can.Message]:
        """Frames the motor sends unasked by ``now``: an active report when due, a fault frame when due."""
        if self.fault == "silent":
            return []
        if dt is not None:
            self._check_timeout(now, dt)
            self.advance(now, dt)
        out: List[can.Message] = []
        if self._next_fault_frame is not None and self.faulted and now >= self._next_fault_frame:
            out.append(self._fault_frame())
            self._next_fault_frame = now + self.FAULT_REPEAT
        if self.reporting and self._next_report is not None and now >= self._next_report:
            out.append(self._feedback(rs.ACTIVE_REPORT))
            period = rs.report_interval_s(int(self.params[0x7026]))
            self._next_report = max(self._next_report + period, now - period)
        return out


def _feedback_bits_of(fault_word: int) -> int:
    """The feedback fault field (bit 0 undervoltage .. bit 5 not calibrated) a type-21 word implies."""
    bits = 0
    if fault_word & (1 << 2):
        bits |= 1 << 0                 # undervoltage
    if fault_word & ((1 << 4) | (1 << 5) | (1 << 16) | 0xFF00):
        bits |= 1 << 1                 # overcurrent / overload
    if fault_word & (1 << 0):
        bits |= 1 << 2                 # over temperature
    if fault_word & (1 << 7):
        bits |= 1 << 5                 # not calibrated
    if fault_word & ((1 << 1) | (1 << 3)) and not bits:
        bits |= 1 << 1
    return bits


def _msg(frame: rs.Frame) -> can.Message:
    return can.Message(arbitration_id=frame.arbitration_id, is_extended_id=True, data=frame.data)


class _JointDriven(SimulatedRobStride):
    """The firmware alone: the joint is integrated by :class:`RobStridePeer`'s :class:`JointModel`,
    which writes ``p``, ``v`` and ``tau`` before every frame."""

    def advance(self, now: float, dt: float) -> None:
        return


class RobStridePeer(DevicePeer):
    """A :class:`SimulatedRobStride` on a :class:`JointModel`: the peer shape the simulated firmware
    drives (:mod:`rospy_control.simulator.peers`).

    Fault switches: ``silent`` and the type-21 fault bits by their manual names (:data:`FAULT_SWITCHES`,
    e.g. ``undervoltage``, ``motor over-temperature``): the motor latches the fault, leaves run mode,
    sends fault frames and refuses to enable; clear-fault does not clear it while the switch is on.
    """

    def __init__(self, device: SimulatedRobStride, joint: JointModel,
                 host_id: int = rs.DEFAULT_HOST_ID) -> None:
        self.device = device
        self.joint = joint
        joint.zero = self._zero
        self.host_id = host_id
        self.fault: Optional[str] = None
        self.fault_value: Optional[float] = None

    @property
    def faults(self) -> Tuple[str, ...]:
        return ("silent",) + tuple(FAULT_SWITCHES)

    def listen_ids(self) -> List[Tuple[int, bool]]:
        mid, host = self.device.motor_id, self.host_id
        types = (rs.GET_ID, rs.ENABLE, rs.STOP, rs.SET_ZERO, rs.PARAM_READ, rs.PARAM_WRITE, rs.ACTIVE_REPORT)
        return [(rs.make_id(t, host, mid), True) for t in types]

    def listen_routes(self) -> List[Tuple[int, int]]:
        """Operation-control frames carry the torque in id bits 23-8, set-CAN-id frames the new id: matched
        on type and motor id (with type 22, RobStride's save)."""
        mid = self.device.motor_id
        return [(0x1F0000FF, (t << 24) | mid)
                for t in (rs.OPERATION_CONTROL, rs.SET_CAN_ID, rs.ROBSTRIDE_SAVE_PARAMETERS)]

    def set_fault(self, fault: str, value: Optional[float] = None) -> None:
        if fault not in self.faults:
            raise ValueError(f"device '{self.name}': unknown fault '{fault}'; "
                             f"known: {', '.join(self.faults)}")
        self.fault, self.fault_value = fault, value
        if fault == "silent":
            self.device.fault = "silent"
        else:
            self.device.inject_fault(FAULT_SWITCHES[fault], persistent=True)

    def clear_fault(self) -> None:
        self.fault = self.fault_value = None
        self.device.fault = None
        self.device.remove_fault()

    def _zero(self) -> float:
        return self.device.zero_shift

    def _advance(self, now: float, dt: float) -> None:
        dev, j = self.device, self.joint
        if dev.mode == rs.MODE_RUN and int(dev.params[0x7005]) in (1, 5):
            law = dev.impedance     # the position loop depends on the position at every step
        else:
            imp = dev.impedance(j.p, j.v)   # constant between two frames

            def law(p: float, v: float) -> Optional[Impedance]:
                return imp
        j.advance(now, dt, law)
        dev.p, dev.v, dev.tau, dev.temperature = j.p, j.v, j.tau, j.temperature

    def handle_frame(self, msg: can.Message, now: float, dt: float) -> List[can.Message]:
        self._advance(now, dt)
        return self.device.handle(msg, now, dt)

    def tick(self, now: float, dt: float) -> List[can.Message]:
        dev = self.device
        # the joint is integrated when the motor has something to send (or a CAN timeout to watch);
        # otherwise the next frame integrates it up to its own time (this runs every millisecond)
        due = ((dev.reporting and dev._next_report is not None and now >= dev._next_report)
               or (dev._next_fault_frame is not None and now >= dev._next_fault_frame)
               or bool(dev.params[0x7028]))
        if not due or dev.fault == "silent":
            return []
        self._advance(now, dt)
        return dev.tick(now, dt)


def peer_for_unit(unit: Any) -> RobStridePeer:
    """The simulated motor of a :class:`~rospy_control.devices.robstride.device.RobStrideMotor`: its
    model, motor id and host id, the joint from its ``<simulation>`` element (torque limited to the
    model's peak torque)."""
    from rospy_control.simulator.peers import joint_model

    limits = rs.limits_for(unit.model)
    joint = joint_model(unit, {"torque_limit": limits.t_max})
    reader = joint.reader
    if reader is not None:
        reader.finish()
    device = _JointDriven(unit.name, unit.can_id, unit.model, inertia=joint.inertia, damping=joint.damping,
                          friction=joint.friction, initial_position=joint.p, temperature=joint.temperature)
    return RobStridePeer(device, joint, unit.host_id)
