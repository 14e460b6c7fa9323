"""A simulated DaMiao DM-J motor's firmware (protocol: :mod:`rospy_control.devices.damiao.codec`).

Follows the DaMiao DM-J instruction manual as implemented by DaMiao's ``DM_Control_Python`` (see the
codec's docstring).  What it does, frame for frame:

* **Special frames** to the slave id: enable (refused while an error is latched: the reply carries
  the error state), disable, set zero (the current position becomes 0), clear error (back to
  disabled, unless the error condition still lasts).  Each is answered with a feedback frame.
* **Commands** on the id of the register-10 mode (slave id, 0x100+, 0x200+, 0x300+) are answered with
  a feedback frame and applied only while enabled.  A command for another mode than CTRL_MODE is
  ignored without an answer (unverified: the documents do not say).
* **Registers** on 0x7FF for this slave id: read (0x33) and write (0x55, RAM) answered with
  ``[id_lo, id_hi, cmd, rid, value]`` on the master id (unknown registers: no answer), 0xCC answered
  with a feedback frame, 0xAA (flash) stores every register without an answer.  Writes to
  PMAX/VMAX/TMAX change the packing at once, CTRL_MODE the mode, TIMEOUT the CAN timeout, ESC_ID the
  id the motor listens on (the answer to that write still names the old id), MST_ID the id it answers
  on.  Values the motor refuses (CTRL_MODE outside 1..4, a range register <= 0, a read-only register)
  are not answered.  Writes live in RAM: :meth:`power_cycle` brings back what was last stored.
  (When the real firmware applies an id write -- at once or after store and power cycle -- the
  documents at hand do not say; this model applies it at once.)
* **CAN timeout** (TIMEOUT register, 50 us units, 0 = off): while enabled, no frame for that long
  latches state 0xD (communication loss) and the output goes off.
* **Errors**: :meth:`set_fault` with a name of :data:`~rospy_control.devices.damiao.codec.FAULTS`
  (e.g. ``"MOS over-temperature"``) trips that error: the output goes off and every feedback frame
  carries the state until the condition is gone (:meth:`clear_fault`) *and* the host sent clear error.
  ``silent`` makes the motor stop transmitting.

The torque law (:meth:`impedance`): MIT as commanded; position-velocity as a position loop (gain
register 27 KP_APR, 1/s) whose speed is limited to the commanded velocity, inside a speed loop (gain
register 25 KP_ASR, N·m/(rad/s)); velocity mode as that speed loop; force-position as
position-velocity with the torque limited to the commanded fraction of TMAX.  These inner loops are
a model, not the firmware's exact controllers.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Set, Tuple, Union, cast

import can

from rospy_control.hardware_config.document import non_negative, positive, to_bool, to_float, to_int
from rospy_control.devices.damiao import codec as dm
from rospy_control.simulator import peers
from rospy_control.simulator.device import Impedance, PhysicalState, SimulatedDevice
from rospy_control.simulator.joint import SimulatedProtocolMotor

__all__ = ["SimulatedDamiao", "DamiaoPeer", "peer_for_unit", "READ_ONLY"]

#: registers the motor does not let be written (its model data: damping, inertia, versions, serial
#: number, pole pairs, electrical constants, gear ratio)
READ_ONLY = frozenset(range(11, 21)) | {36}


class SimulatedDamiao(SimulatedDevice):
    """The firmware of one DaMiao motor (see the module docstring)."""

    DEVICE_FAULTS = tuple(dm.FAULTS.values())

    def __init__(self, name: str, slave_id: int, master_id: int,
                 ranges: dm.DamiaoRanges = dm.DamiaoRanges(), mode: int = dm.MODE_MIT,
                 can_timeout: float = 0.0, speed_gain: float = 0.5, position_gain: float = 20.0,
                 can_br: int = 4) -> None:
        super().__init__(name)
        if mode not in dm.MODE_OFFSETS:
            raise ValueError(f"device '{name}': unknown DaMiao mode {mode!r}")
        self.slave_id = slave_id
        self.master_id = master_id
        #: RAM registers (rid -> value)
        self.registers: Dict[int, Union[int, float]] = {
            dm.RID_MST_ID: master_id, dm.RID_ESC_ID: slave_id,
            dm.RID_TIMEOUT: dm.timeout_to_register(can_timeout), dm.RID_CTRL_MODE: mode,
            dm.RID_PMAX: float(ranges.pmax), dm.RID_VMAX: float(ranges.vmax), dm.RID_TMAX: float(ranges.tmax),
            25: float(speed_gain), 26: 0.0, 27: float(position_gain), 28: 0.0,
            13: 1, 14: 1, 15: 0, 16: 14, dm.RID_CAN_BR: can_br, 36: 0,
        }
        # the other registers of the manual's table, with plausible factory values
        for rid, value in ((0, 10.0), (1, 0.1), (2, 80.0), (3, 0.98), (4, 20.0), (5, -20.0), (6, 30.0),
                           (11, 0.0), (12, 0.0), (17, 0.5), (18, 0.0002), (19, 0.005), (20, 10.0),
                           (24, 1000.0), (29, 52.0), (30, 1.0), (31, 1.0), (32, 0.1), (33, 0.0), (34, 0.0)):
            self.registers.setdefault(rid, value)
        #: the registers as last stored by 0xAA (what a power cycle brings back)
        self.flash: Dict[int, Union[int, float]] = dict(self.registers)
        #: set when ESC_ID or MST_ID changed: the firmware routes frames anew
        self.ids_changed = False
        self.enabled = False
        #: latched error state code (0x8..0xE), None: no error
        self.error: Optional[int] = None
        self.zero = 0.0
        #: last command accepted while enabled: (mode, values)
        self.command: Optional[Tuple[int, Tuple[float, ...]]] = None
        self.last_rx: Optional[float] = None
        #: times the CAN timeout latched communication loss
        self.timeouts = 0
        self.flash_stores = 0
        #: command byte of the answer to a register write: 0x55 echoed as DaMiao's tools expect; 0x33
        #: is the other reading of the protocol notes (a register reply has byte 2 = 0x33)
        self.write_reply_cmd = dm.REG_WRITE
        #: whether clear error (FB) is answered with a feedback frame (the manual documents no answer)
        self.answer_clear = True
        #: the MIT torque law of the current command, built once per command (the joint asks at every
        #: integration step); None: build it (command, zero or registers changed)
        self._imp: Optional[Impedance] = None

    def power_cycle(self) -> None:
        """Switch off and on: the stored registers come back, the motor is disabled, no error, zero kept
        (the manual stores the zero with FE)."""
        self.registers = dict(self.flash)
        self._apply_ids()
        self.enabled = False
        self.error = None
        self.command = None
        self._imp = None

    def _apply_ids(self) -> None:
        sid, mid = int(self.registers[dm.RID_ESC_ID]), int(self.registers[dm.RID_MST_ID])
        if (sid, mid) != (self.slave_id, self.master_id):
            self.slave_id, self.master_id = sid, mid
            self.ids_changed = True

    # -- registers as values -----------------------------------------------------------------------
    @property
    def ranges(self) -> dm.DamiaoRanges:
        r = self.registers
        return dm.DamiaoRanges(float(r[dm.RID_PMAX]), float(r[dm.RID_VMAX]), float(r[dm.RID_TMAX]))

    @property
    def mode(self) -> int:
        return int(self.registers[dm.RID_CTRL_MODE])

    @property
    def can_timeout(self) -> float:
        return dm.register_to_timeout(int(self.registers[dm.RID_TIMEOUT]))

    @property
    def state_code(self) -> int:
        if self.error is not None:
            return self.error
        return dm.STATE_ENABLED if self.enabled else dm.STATE_DISABLED

    # -- SimulatedDevice ---------------------------------------------------------------------------
    def zero_position(self) -> float:
        return self.zero

    def listen_ids(self) -> List[Tuple[int, bool]]:
        return [(off + self.slave_id, False) for off in dm.MODE_OFFSETS.values()] + [(dm.REGISTER_ID, False)]

    def reply_ids(self) -> List[Tuple[int, bool]]:
        return [(self.master_id, False)]

    def shared_ids(self) -> Set[Tuple[int, bool]]:
        return {(dm.REGISTER_ID, False), (self.master_id, False)}

    def expire(self, state: PhysicalState, now: float) -> None:
        t = self.can_timeout
        if t > 0.0 and self.enabled and self.last_rx is not None and now - self.last_rx > t:
            self._trip(0xD)
            self.timeouts += 1

    def impedance(self, position: float, velocity: float) -> Optional[Impedance]:
        if not self.enabled or self.error is not None or self.command is None:
            return None
        mode, c = self.command
        if mode == dm.MODE_MIT and self._imp is not None:
            return self._imp
        r = self.registers
        tmax = float(r[dm.RID_TMAX])
        if mode == dm.MODE_MIT:
            p, v, kp, kd, t = c
            self._imp = Impedance(p + self.zero, v, kp, kd, t, tmax)
            return self._imp
        kv, kpos = float(r[25]), float(r[27])
        if mode == dm.MODE_VEL:
            return Impedance(0.0, c[0], 0.0, kv, 0.0, tmax)
        limit = abs(c[1])
        v_cmd = max(-limit, min(limit, kpos * (c[0] + self.zero - position)))
        if mode == dm.MODE_POS_VEL:
            return Impedance(0.0, v_cmd, 0.0, kv, 0.0, tmax)
        return Impedance(0.0, v_cmd, 0.0, kv, 0.0, c[2] * tmax)   # force-position

    def _fault_changed(self) -> None:
        fault = self.fault
        if fault is not None and fault in dm.FAULTS.values():
            self._trip(dm.fault_code(fault))

    # -- frames ------------------------------------------------------------------------------------
    def feedback(self, state: PhysicalState) -> bytes:
        """The feedback frame for ``state`` (what the motor sends on its master id)."""
        t_mos, t_rotor = state.mos_temperature, state.temperature
        if self.fault == "MOS over-temperature" and self.fault_value is not None:
            t_mos = self.fault_value
        elif self.fault == "coil over-temperature" and self.fault_value is not None:
            t_rotor = self.fault_value
        return dm.pack_reply(self.slave_id, self.state_code, state.position - self.zero, state.velocity,
                             state.torque, self.ranges, t_mos, t_rotor)

    def _reply(self, state: PhysicalState) -> List[can.Message]:
        return [self._message(self.master_id, self.feedback(state))]

    def _trip(self, code: int) -> None:
        self.error = code
        self.enabled = False

    def _handle(self, msg: can.Message, state: PhysicalState, now: float) -> List[can.Message]:
        if msg.is_extended_id or msg.is_error_frame or msg.is_remote_frame:
            return []
        aid, data = msg.arbitration_id, bytes(msg.data)
        if aid == dm.REGISTER_ID:
            return self._register(data, state, now)
        try:
            mode, sid = dm.split_command_id(aid)
        except dm.DamiaoFrameError:
            return []
        if sid != self.slave_id:
            return []
        self.last_rx = now
        if mode == dm.MODE_MIT and len(data) == 8 and data[:7] == b"\xff" * 7 and data[7] in (
                0xFB, 0xFC, 0xFD, 0xFE):
            self._special(data[7], state)
            if data[7] == 0xFB and not self.answer_clear:
                return []
            return self._reply(state)
        if mode != self.mode:
            return []
        try:
            values = self._decode(mode, data)
        except dm.DamiaoFrameError:
            return []
        if self.enabled and self.error is None:
            self.command = (mode, values)
            self._imp = None
        return self._reply(state)

    def _decode(self, mode: int, data: bytes) -> Tuple[float, ...]:
        if mode == dm.MODE_MIT:
            return dm.unpack_mit(data, self.ranges)
        if mode == dm.MODE_POS_VEL:
            return dm.unpack_pos_vel(data)
        if mode == dm.MODE_VEL:
            return (dm.unpack_vel(data),)
        return dm.unpack_force_pos(data)

    def _special(self, code: int, state: PhysicalState) -> None:
        self._imp = None
        if code == 0xFC:       # enable
            if self.error is None:
                self.enabled = True
                self.command = None   # no torque until the first command arrives
        elif code == 0xFD:     # disable
            self.enabled = False
            self.command = None
        elif code == 0xFE:     # the current position becomes zero
            self.zero = state.position
        else:                  # 0xFB clear error
            if self.fault not in dm.FAULTS.values():
                self.error = None
                self.enabled = False
                self.command = None

    def _register(self, data: bytes, state: PhysicalState, now: float) -> List[can.Message]:
        try:
            sid, cmd, rid, raw = dm.unpack_register_request(data)
        except dm.DamiaoFrameError:
            return []
        if sid != self.slave_id:
            return []
        self.last_rx = now
        if cmd == dm.REG_REFRESH:
            return self._reply(state)
        if cmd == dm.REG_SAVE:
            self.flash_stores += 1
            self.flash = dict(self.registers)
            return []
        if rid not in self.registers or cmd not in (dm.REG_READ, dm.REG_WRITE):
            return []
        if cmd == dm.REG_WRITE:
            value = dm.decode_register_value(rid, raw)
            if rid == dm.RID_CTRL_MODE and value not in dm.MODE_OFFSETS:
                return []
            if rid in (dm.RID_PMAX, dm.RID_VMAX, dm.RID_TMAX) and not value > 0.0:
                return []
            if rid in READ_ONLY or (rid in (dm.RID_ESC_ID, dm.RID_MST_ID) and not 0 < value < dm.REGISTER_ID):
                return []
            self.registers[rid] = value
            self._imp = None
            cmd = self.write_reply_cmd
        reply = self._message(self.master_id, dm.pack_register_reply(sid, cmd, rid, self.registers[rid]))
        self._apply_ids()
        return [reply]


class OldFirmwareDamiao(SimulatedDamiao):
    """A DaMiao motor with the old firmware (the mismatch switch ``id_offset="true"``): no register
    access through 0x7FF, and its special frames (enable, disable, zero, clear error) are taken only on
    the command id of its current mode, ``0x100`` / ``0x200`` / ``0x300`` + slave id outside MIT mode,
    as DaMiao's maintainer describes it (DM_Control_Python's issue tracker; its library's
    ``enable_old``); on the slave id itself they are ignored outside MIT mode."""

    def _handle(self, msg: can.Message, state: PhysicalState, now: float) -> List[can.Message]:
        aid, data = msg.arbitration_id, bytes(msg.data)
        if msg.is_extended_id or aid == dm.REGISTER_ID:
            return []
        if len(data) == 8 and data[:7] == b"\xff" * 7:
            try:
                mode, sid = dm.split_command_id(aid)
            except dm.DamiaoFrameError:
                return []
            if mode != self.mode or sid != self.slave_id:
                return []
            msg = self._message(self.slave_id, data)   # taken as the current firmware takes it
        return super()._handle(msg, state, now)


class DamiaoPeer(SimulatedProtocolMotor):
    """A DaMiao motor on its joint, as the firmware drives it.  A DaMiao motor sends nothing on its own:
    the firmware's 1 ms tick only applies its CAN timeout (the joint is integrated up to each received
    frame, so it is not advanced at every tick, which kept a simulator of many motors busy for nothing)."""

    def advance(self, now: float, dt: float) -> None:
        # the device has no controller state of its own to step (SimulatedDevice.step is empty)
        self.joint.advance(now, dt, self.device.impedance)

    def tick(self, now: float, dt: float) -> List[can.Message]:
        device = cast(SimulatedDamiao, self.device)
        if device.enabled and device.can_timeout > 0.0:
            device.expire(self.joint.state(), now)
        return []


def peer_for_unit(unit) -> SimulatedProtocolMotor:
    """The simulated motor answering for a :class:`~rospy_control.devices.damiao.device.DamiaoMotor`
    (:mod:`.peers`): its slave and master ids, registers holding the unit's ranges, on a joint built
    from the unit's ``<simulation>`` element (:func:`.peers.joint_model`, torque limit TMAX).

    The motor's own ``<simulation>`` attributes: ``p_max``, ``v_max``, ``t_max`` (its range registers,
    by default the configured ranges: set one differently to rehearse a mismatch), ``ctrl_mode`` (its
    CTRL_MODE register at power-up, 1..4, default 1), ``can_timeout`` (its TIMEOUT register in s,
    default 0), ``speed_gain`` / ``position_gain`` (its speed and position loops, registers 25 / 27).
    """
    ranges = unit.ranges
    joint = peers.joint_model(unit, {"torque_limit": float(ranges.tmax)})
    r = joint.reader
    values = {"p_max": ranges.pmax, "v_max": ranges.vmax, "t_max": ranges.tmax, "can_timeout": 0.0,
              "speed_gain": 0.5, "position_gain": 20.0}
    mode = dm.MODE_MIT
    if r is not None:
        for key in ("p_max", "v_max", "t_max", "speed_gain", "position_gain"):
            values[key] = r.get(key, to_float, values[key], check=positive, expected="a positive number")
        values["can_timeout"] = r.get("can_timeout", to_float, 0.0, check=non_negative,
                                      expected="a number of seconds >= 0")
        mode = r.get("ctrl_mode", to_int, mode, check=lambda v: v in dm.MODE_OFFSETS,
                     expected="a DaMiao control mode 1..4 (1 MIT, 2 position-velocity, 3 velocity, "
                              "4 force-position)")
        old = r.get("id_offset", to_bool, False)
        r.finish()
    else:
        old = False
    cls = OldFirmwareDamiao if old else SimulatedDamiao
    device = cls(unit.name, unit.can_id, unit.master_id,
                 dm.DamiaoRanges(values["p_max"], values["v_max"], values["t_max"]), mode=mode,
                 can_timeout=values["can_timeout"], speed_gain=values["speed_gain"],
                 position_gain=values["position_gain"])
    return DamiaoPeer(device, joint)
