"""A simulated CiA 402 servo drive: what a CANopen drive sends for every frame it receives.

Shaped like :class:`rospy_control.simulator.motor.SimulatedMotor` (``advance``,
``handle``, ``joint_position``, the ``fault`` / ``fault_value`` / ``frames`` / ``latency``
attributes): ``handle(msg, now, dt)`` takes a received ``can.Message`` and returns the frames the
drive sends; :meth:`tick` returns what it sends unasked (boot-up, heartbeat, EMCY, event-driven
TPDOs) and is called at least every heartbeat period.

This module holds the drive's 402 state machine and its physics; the object dictionary is
:mod:`.cia402_od`, the SDO server and the PDOs :mod:`.cia402_comm`, the homing mode
:mod:`.cia402_homing`, the simulator's peer :mod:`.cia402_peer`.

What it does, after CiA 301 and CiA 402-2 (the codec is :mod:`..protocols.cia402`):

* **boot**: the first :meth:`tick` (or frame) powers it on: boot-up message ``0x700+node: 00``, then
  PRE-OPERATIONAL; the 402 state goes NOT READY TO SWITCH ON -> SWITCH ON DISABLED by itself.
  ``never_boots = True``: it sends nothing and answers nothing, ever (a drive stuck in its start-up,
  or the wrong node id).
* **NMT** (``0x000``, own node or 0): start, stop, pre-operational, reset node (every object back to
  its default, boot-up again), reset communication (0x1000-0x1FFF back to default, boot-up again).
  STOPPED answers NMT only (no SDO, PDO, EMCY; heartbeat goes on); PRE-OPERATIONAL answers SDO and
  sends EMCY but no PDO.
* **SDO** server (expedited and segmented, upload and download) over the object dictionary of
  :mod:`.cia402_od` (device type, identity, heartbeat producer, four RPDO/TPDO communication and
  mapping records, 0x603F-0x6502); aborts with the CiA 301 codes for an unknown object or
  sub-index, a write to a read-only object, a wrong length, a bad value, a toggle error, a mapping
  that is not mappable or too long, and a mapping entry written while the mapping is active.
* **PDO**: RPDOs are taken from their COB-ID: transmission types 0-240 are applied at the next SYNC,
  254/255 at once; a too-short RPDO is dropped with EMCY 0x8210.  TPDOs of types 1-240 are sent every
  n-th SYNC, 254/255 when a mapped value changed (and every event-timer ms if set).  Default mapping
  (the one in ``config/cia402_drive.eds``): RPDO1 controlword + modes of operation (type 255), RPDO2
  target position + target velocity (type 1), RPDO3 target torque + torque offset (type 1); TPDO1
  statusword + modes display (type 255, on change and every 100 ms), TPDO2 position + velocity
  actual (type 1), TPDO3 torque actual + error code (type 1); PDO 4 disabled.
* **402 state machine** on every controlword (SDO or RPDO): the transitions of CiA 402-2 figure
  33, including "enable operation" straight from READY TO SWITCH ON (3+4) and back from QUICK STOP
  ACTIVE (16).  Quick stop brakes to standstill and stays in QUICK STOP ACTIVE (option code 6).  The
  fault reset acts on the rising edge of bit 7 only.
* **faults** (:meth:`inject_fault`): FAULT REACTION ACTIVE for :attr:`FAULT_REACTION_TIME`, then
  FAULT; an EMCY with the error code, error register (0x1001) and manufacturer bytes; 0x603F holds
  the code.  The fault reset sends EMCY 0x0000 and goes to SWITCH ON DISABLED, unless the fault is
  ``persistent`` (its cause still there), then it stays in FAULT.
* **motion** in OPERATION ENABLED by the mode shown in 0x6061 (it follows 0x6060 at once; only the
  modes of 0x6502 are accepted): CSP follows 0x607A (plus offsets 0x60B1/0x60B2) with a stiff
  position loop, CSV 0x60FF, CST 0x6071 + 0x60B2, PV 0x60FF, PP moves to the set-point taken on the
  rising edge of controlword bit 4 at 0x6081.  Torque is limited by 0x6072.  Targets are not reset
  on enable: a stale target moves the motor at once, as on a real drive (the driver must write
  safe targets first).  Units: increments through ``counts_per_rev`` and ``gear_ratio``, torque
  in per mille of the rated torque 0x6076.
* ``fault = "silent"``: answers nothing after having booted (cable pulled).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import can

from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State
from rospy_control.simulator.cia402_comm import Cia402Communication
from rospy_control.simulator.cia402_homing import HOMING_MODE, SimulatedHoming, add_homing_objects
from rospy_control.simulator.cia402_od import DEFAULT_RPDOS, DEFAULT_TPDOS, Key, OdEntry
from rospy_control.simulator.physics import move, steps_due

__all__ = ["SimulatedCia402Drive", "DEFAULT_RPDOS", "DEFAULT_TPDOS"]


#: statusword bits 0-6 per state (bit 4 voltage enabled where the power stage is on)
_STATUS_BITS = {
    State.NOT_READY_TO_SWITCH_ON: 0x0000, State.SWITCH_ON_DISABLED: 0x0040,
    State.READY_TO_SWITCH_ON: 0x0031, State.SWITCHED_ON: 0x0033, State.OPERATION_ENABLED: 0x0037,
    State.QUICK_STOP_ACTIVE: 0x0017, State.FAULT_REACTION_ACTIVE: 0x001F, State.FAULT: 0x0008,
}
_POWERED = (State.READY_TO_SWITCH_ON, State.SWITCHED_ON, State.OPERATION_ENABLED, State.QUICK_STOP_ACTIVE)


class SimulatedCia402Drive(Cia402Communication):
    """One CiA 402 drive on node ``node_id`` with its joint model.

    :param counts_per_rev: encoder increments per motor revolution.
    :param gear_ratio: motor revolutions per joint revolution.
    :param rated_torque: motor rated torque in N m (0x6076 holds it in mN m).
    :param heartbeat_ms: initial producer heartbeat time 0x1017 (0 = off).
    """

    #: how long FAULT REACTION ACTIVE lasts before FAULT (s)
    FAULT_REACTION_TIME = 0.005
    #: natural frequency of the simulated position loop (rad/s) and velocity-loop bandwidth (1/s)
    POSITION_BANDWIDTH = 60.0
    VELOCITY_BANDWIDTH = 100.0
    #: supported modes (0x6502 bits: PP 0, PV 2, CSP 7, CSV 8, CST 9)
    SUPPORTED_MODES = (co.PP, co.PV, HOMING_MODE, co.CSP, co.CSV, co.CST)

    def __init__(self, name: str, node_id: int, counts_per_rev: int = 4096, gear_ratio: float = 1.0,
                 rated_torque: float = 1.0, heartbeat_ms: int = 0, inertia: float = 0.01,
                 damping: float = 0.05, friction: float = 0.0, initial_position: float = 0.0,
                 device_name: str = "rospy_control simulated CiA 402 drive") -> None:
        if not 1 <= node_id <= 127:
            raise ValueError(f"CiA 402 drive '{name}': node id {node_id} is not in 1..127")
        self.name = name
        self.node_id = node_id
        self.scale = co.UnitScale(counts_per_rev, gear_ratio, rated_torque)
        self.inertia, self.damping, self.friction = inertia, damping, friction
        self.device_name = device_name
        self._heartbeat_default = heartbeat_ms
        # the simulation framework's switches and bookkeeping
        self.fault: Optional[str] = None
        self.fault_value: Optional[float] = None
        self.latency: Optional[float] = None
        self.frames = 0
        #: a drive that never finishes booting: sends and answers nothing
        self.never_boots = False
        # physics (joint side)
        self.q = initial_position
        self.v = 0.0
        self.tau = 0.0
        self.t: Optional[float] = None
        # protocol state
        self.booted = False
        #: s a drive stays NOT READY TO SWITCH ON after boot-up, initialising (controlwords are ignored)
        self.ready_delay = 0.0
        self._ready_at: Optional[float] = None
        self.nmt_state = co.NMT_BOOTUP
        self.state = State.NOT_READY_TO_SWITCH_ON
        self.od: Dict[Key, OdEntry] = {}
        #: the homing mode (:mod:`.cia402_homing`)
        self.homing = SimulatedHoming(self.scale)
        self._build_od()
        add_homing_objects(self._add)
        modes = self.od[(0x6502, 0)]
        modes.value = modes.default = self._val(0x6502) | 1 << 5      # homing mode supported
        self._tpdo_cache: Optional[List[Tuple[int, int, int, int, List[Tuple[Key, int]]]]] = None
        self._outbox: List[can.Message] = []
        self._sdo: Optional[dict] = None
        self._pending_rpdos: Dict[int, bytes] = {}
        self._sync_count: Dict[int, int] = {}
        self._tpdo_last: Dict[int, bytes] = {}
        self._tpdo_timer: Dict[int, float] = {}
        self._next_heartbeat: Optional[float] = None
        self._fault_persistent = False
        self._fault_reaction_until: Optional[float] = None
        self._pp_target: Optional[float] = None
        self._pp_ack = False
        #: counters a test can read: SYNCs seen, EMCYs sent, boot-ups sent
        self.syncs = 0
        self.emcys_sent = 0
        self.bootups = 0

    # -- lifecycle ------------------------------------------------------------------------------------------
    def _boot(self, now: float) -> None:
        self.booted = True
        # a drive another tool stopped right after its boot (the mismatch switch nmt="stopped")
        self.nmt_state = co.NMT_STOPPED if getattr(self, "stopped_after_boot", False) else co.NMT_PRE_OP
        self.bootups += 1
        self._send(co.bootup_frame(self.node_id))
        if self.state == State.NOT_READY_TO_SWITCH_ON:
            if self.ready_delay > 0.0:
                self._ready_at = now + self.ready_delay
            else:
                self.state = State.SWITCH_ON_DISABLED
        hb = self._val(0x1017)
        self._next_heartbeat = now + hb / 1000.0 if hb else None
        self._sync_count.clear()
        self._tpdo_last.clear()
        self._pending_rpdos.clear()
        self._sdo = None

    def _send(self, frame: co.Frame) -> None:
        self._outbox.append(can.Message(arbitration_id=frame.arbitration_id, is_extended_id=False,
                                        data=frame.data))

    def _drain(self) -> List[can.Message]:
        out, self._outbox = self._outbox, []
        return out

    def _dead(self) -> bool:
        return self.never_boots or self.fault == "silent"

    # -- fault injection ------------------------------------------------------------------------------------
    def inject_fault(self, code: int = 0x2310, register: int = 0x02, manufacturer: bytes = b"",
                     persistent: bool = False, now: Optional[float] = None) -> None:
        """A drive fault: FAULT REACTION ACTIVE, then FAULT; EMCY ``code`` (error register ``register``
        plus the generic bit) with ``manufacturer`` bytes, sent with the next frames out.
        ``persistent``: a fault reset does not clear it until :meth:`remove_fault`."""
        self._fault_persistent = persistent
        reg = (register | 0x01) & 0xFF
        self.od[(0x603F, 0)].value = code
        self.od[(0x1001, 0)].value = reg
        if self.state != State.FAULT:
            self.state = State.FAULT_REACTION_ACTIVE
            t = now if now is not None else (self.t or 0.0)
            self._fault_reaction_until = t + self.FAULT_REACTION_TIME
        if self.booted and self.nmt_state != co.NMT_STOPPED:
            self._send(co.emcy_frame(self.node_id, code, reg, manufacturer))
            self.emcys_sent += 1

    def remove_fault(self) -> None:
        """The cause of a persistent fault is gone (the next fault reset clears it)."""
        self._fault_persistent = False

    # -- physics --------------------------------------------------------------------------------------------
    def joint_position(self) -> float:
        return self.q

    def _torque(self) -> float:
        st, s = self.state, self.scale
        J = self.inertia
        q, v = self.q, self.v
        if st == State.QUICK_STOP_ACTIVE or st == State.FAULT_REACTION_ACTIVE:
            tau = -J * self.VELOCITY_BANDWIDTH * v
        elif st != State.OPERATION_ENABLED:
            return 0.0
        else:
            mode = self._val(0x6061)
            toff = s.permille_to_nm(self._val(0x60B2))
            if mode == co.CSP:
                wn = self.POSITION_BANDWIDTH
                target = s.counts_to_rad(self._val(0x607A)) - self.homing.shift
                vff = s.counts_per_s_to_rad_per_s(self._val(0x60B1))
                tau = J * wn * wn * (target - q) + 2.0 * J * wn * (vff - v) + toff
            elif mode in (co.CSV, co.PV):
                offset = self._val(0x60B1) if mode == co.CSV else 0
                vd = s.counts_per_s_to_rad_per_s(self._val(0x60FF) + offset)
                # P loop plus the friction feed-forward a tuned drive's integral part amounts to
                tau = J * self.VELOCITY_BANDWIDTH * (vd - v) + self.damping * vd + toff
            elif mode == co.CST:
                tau = s.permille_to_nm(self._val(0x6071)) + toff
            elif mode == HOMING_MODE:
                search = self.homing.velocity()
                if search is None:
                    wn = self.POSITION_BANDWIDTH
                    tau = J * wn * wn * (self.homing.hold(q) - q) - 2.0 * J * wn * v
                else:
                    tau = J * self.VELOCITY_BANDWIDTH * (search - v) + self.damping * search
            elif mode == co.PP and self._pp_target is not None:
                vmax = abs(s.counts_per_s_to_rad_per_s(self._val(0x6081)))
                vd = max(-vmax, min(vmax, self.POSITION_BANDWIDTH / 4.0 * (self._pp_target - q)))
                tau = J * self.VELOCITY_BANDWIDTH * (vd - v)
            else:
                tau = -J * self.VELOCITY_BANDWIDTH * v  # hold still
        tmax = abs(s.permille_to_nm(self._val(0x6072)))
        return max(-tmax, min(tmax, tau))

    def advance(self, now: float, dt: float) -> None:
        """Integrate the joint model up to ``now`` in steps of ``dt``; time-driven state changes."""
        if self.t is None:
            self.t = now
            return
        n, self.t = steps_due(self.t, now, dt)
        if n > 0:
            h = dt / self.inertia
            f_imp = self.friction * h
            for _ in range(n):
                self.tau = self._torque()
                v = (self.v + h * self.tau) / (1.0 + h * self.damping)
                self.q, self.v = move(self.q, v, dt, f_imp)
            self.homing_step()
        if (self.state == State.FAULT_REACTION_ACTIVE and self._fault_reaction_until is not None
                and now >= self._fault_reaction_until):
            self.state = State.FAULT
            self.tau = 0.0

    def homing_step(self) -> None:
        """The homing's switch and index events at the joint's present position."""
        if self.state == State.OPERATION_ENABLED and self._val(0x6061) == HOMING_MODE:
            self.homing.update(self.q, self._val(0x607C))

    def _statusword(self) -> int:
        sw = _STATUS_BITS[self.state] | co.SW_REMOTE
        if self.state == State.OPERATION_ENABLED:
            mode = self._val(0x6061)
            if mode == HOMING_MODE:
                sw |= self.homing.statusword_bits(self.v)
            elif mode in (co.CSP, co.CSV, co.CST):
                sw |= co.SW_OP_MODE_12   # drive follows the command value
            elif mode == co.PP:
                if self._pp_ack:
                    sw |= co.SW_OP_MODE_12
                if self._pp_target is None or abs(self._pp_target - self.q) < 1e-3 and abs(self.v) < 1e-2:
                    sw |= co.SW_TARGET_REACHED
            elif mode == co.PV and abs(self.scale.counts_per_s_to_rad_per_s(self._val(0x60FF)) - self.v) \
                    < 1e-2:
                sw |= co.SW_TARGET_REACHED
        return sw

    def _refresh_actuals(self) -> None:
        s = self.scale
        od = self.od
        od[(0x6041, 0)].value = self._statusword()
        od[(0x6064, 0)].value = _clamp_int((self.q + self.homing.shift) / s.counts_to_rad(1.0), 32)
        od[(0x606C, 0)].value = _clamp_int(self.v / s.counts_to_rad(1.0), 32)
        od[(0x6077, 0)].value = _clamp_int(self.tau / s.permille_to_nm(1.0), 16)

    # -- 402 state machine ----------------------------------------------------------------------------------
    def _controlword(self, cw: int, previous: int) -> None:
        st = self.state
        if cw & co.CW_FAULT_RESET and not previous & co.CW_FAULT_RESET:
            if st == State.FAULT and not self._fault_persistent:
                self.state = State.SWITCH_ON_DISABLED
                self.od[(0x603F, 0)].value = 0
                self.od[(0x1001, 0)].value = 0
                if self.nmt_state != co.NMT_STOPPED:
                    self._send(co.emcy_frame(self.node_id, 0x0000, 0))
                    self.emcys_sent += 1
            return
        if cw & co.CW_FAULT_RESET:
            return  # bit 7 held high: no command (CiA 402 table 29 lists the commands with bit 7 = 0)
        cmd = co.decode_controlword(cw, st)
        S, C = State, co.Command
        nxt = {
            (S.SWITCH_ON_DISABLED, C.SHUTDOWN): S.READY_TO_SWITCH_ON,
            (S.READY_TO_SWITCH_ON, C.SWITCH_ON): S.SWITCHED_ON,
            (S.READY_TO_SWITCH_ON, C.ENABLE_OPERATION): S.OPERATION_ENABLED,
            (S.READY_TO_SWITCH_ON, C.DISABLE_VOLTAGE): S.SWITCH_ON_DISABLED,
            (S.READY_TO_SWITCH_ON, C.QUICK_STOP): S.SWITCH_ON_DISABLED,
            (S.SWITCHED_ON, C.ENABLE_OPERATION): S.OPERATION_ENABLED,
            (S.SWITCHED_ON, C.SHUTDOWN): S.READY_TO_SWITCH_ON,
            (S.SWITCHED_ON, C.DISABLE_VOLTAGE): S.SWITCH_ON_DISABLED,
            (S.SWITCHED_ON, C.QUICK_STOP): S.SWITCH_ON_DISABLED,
            (S.OPERATION_ENABLED, C.DISABLE_OPERATION): S.SWITCHED_ON,
            (S.OPERATION_ENABLED, C.SHUTDOWN): S.READY_TO_SWITCH_ON,
            (S.OPERATION_ENABLED, C.DISABLE_VOLTAGE): S.SWITCH_ON_DISABLED,
            (S.OPERATION_ENABLED, C.QUICK_STOP): S.QUICK_STOP_ACTIVE,
            (S.QUICK_STOP_ACTIVE, C.DISABLE_VOLTAGE): S.SWITCH_ON_DISABLED,
            (S.QUICK_STOP_ACTIVE, C.ENABLE_OPERATION): S.OPERATION_ENABLED,
        }.get((st, cmd)) if cmd is not None else None
        if nxt is not None:
            self.state = nxt
            if nxt != S.OPERATION_ENABLED:
                self._pp_target = None
                self._pp_ack = False
                self.homing.leave()
        if self.state == S.OPERATION_ENABLED and self._val(0x6061) == HOMING_MODE:
            start = co.CW_NEW_SET_POINT     # bit 4: "homing operation start" in homing mode
            if cw & start and not previous & start:
                self.homing.start(self._val(0x6098), self._val(0x6099, 1), self._val(0x6099, 2),
                                  self._val(0x607C), self.q)
            elif previous & start and not cw & start:
                self.homing.halt(self.q)
        if self.state == S.OPERATION_ENABLED and self._val(0x6061) == co.PP:
            if cw & co.CW_NEW_SET_POINT and not previous & co.CW_NEW_SET_POINT:
                self._pp_target = self.scale.counts_to_rad(self._val(0x607A)) - self.homing.shift
                self._pp_ack = True
            elif not cw & co.CW_NEW_SET_POINT:
                self._pp_ack = False

    # -- frames ---------------------------------------------------------------------------------------------
    def handle(self, msg: can.Message, now: float, dt: float) -> List[can.Message]:
        """Process one received frame; return every frame the drive sends by then."""
        if msg.is_extended_id or msg.is_error_frame or msg.is_remote_frame or self._dead():
            return []
        if not self.booted:
            self.advance(now, dt)
            self._boot(now)
            return self._drain()   # a frame that arrives while the drive starts is lost
        aid = msg.arbitration_id
        data = bytes(msg.data)
        self.advance(now, dt)
        if aid == co.NMT_ID:
            if len(data) == 2 and data[1] in (0, self.node_id):
                self.frames += 1
                self._nmt(data[0], now)
        elif self.nmt_state == co.NMT_STOPPED:
            pass
        elif aid == co.SYNC_ID:
            self.syncs += 1
            if self.nmt_state == co.NMT_OPERATIONAL:
                self._on_sync()
            return self._drain()   # a SYNC changes no event-driven TPDO's values (tick sends timed ones)
        elif aid == co.SDO_RX_BASE + self.node_id:
            self.frames += 1
            self._on_sdo(data)
        elif self.nmt_state == co.NMT_OPERATIONAL:
            for i in range(4):
                cob = self._val(0x1400 + i, 1)
                if not cob & co.PDO_INVALID and (cob & 0x7FF) == aid:
                    self.frames += 1
                    self._on_rpdo(i, data)
                    if self._val(0x1400 + i, 2) <= 240:
                        return self._drain()   # applied at the next SYNC: nothing changed yet
                    break
        self._event_tpdos(now)
        return self._drain()

    def tick(self, now: float, dt: Optional[float] = None) -> List[can.Message]:
        """What the drive sends by ``now`` unasked: boot-up (first call), heartbeat, EMCY, event TPDOs."""
        if self._dead():
            return []
        if dt is not None:
            self.advance(now, dt)
        if not self.booted:
            self._boot(now)
        if self._ready_at is not None and now >= self._ready_at:
            self._ready_at = None
            if self.state == State.NOT_READY_TO_SWITCH_ON:
                self.state = State.SWITCH_ON_DISABLED
        if self._next_heartbeat is not None and now >= self._next_heartbeat:
            self._send(co.heartbeat_frame(self.node_id, self.nmt_state))
            period = self._val(0x1017) / 1000.0
            self._next_heartbeat = max(self._next_heartbeat + period, now) if period else None
        self._event_tpdos(now)
        return self._drain()

    def _nmt(self, cmd: int, now: float) -> None:
        if cmd == co.NMT_START:
            self.nmt_state = co.NMT_OPERATIONAL
        elif cmd == co.NMT_STOP:
            self.nmt_state = co.NMT_STOPPED
            self._sdo = None
        elif cmd == co.NMT_PRE_OPERATIONAL:
            self.nmt_state = co.NMT_PRE_OP
        elif cmd in (co.NMT_RESET_NODE, co.NMT_RESET_COMMUNICATION):
            for (index, _sub), e in self.od.items():
                if cmd == co.NMT_RESET_NODE or 0x1000 <= index <= 0x1FFF:
                    e.value = e.default
            self._tpdo_cache = None
            if cmd == co.NMT_RESET_NODE:
                self.state = State.NOT_READY_TO_SWITCH_ON
                self._fault_persistent = False
                self._pp_target = None
            self._boot(now)


def _clamp_int(x: float, bits: int) -> int:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    if x != x:
        return 0
    return max(lo, min(hi, int(round(x))))
