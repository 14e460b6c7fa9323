"""The PDOs of a CiA 402 drive: the mapping (from the EDS file or the unit's ``<rpdo>`` / ``<tpdo>``
children; CiA 301 7.2.2, 7.5.2.35-38), the RPDO values of each cycle (the cyclic synchronous targets of
CiA 402-2 clauses 11-13, converted to drive units) and the TPDOs decoded back into the drive's state,
heartbeat and EMCY (CiA 301 7.2.7, with the CiA 301 / 402 text of the error code).
"""
from __future__ import annotations

from typing import Any, ClassVar, Dict, List, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State
from rospy_control.devices.cia402.common import CIA_MODE as _CIA_MODE
from rospy_control.devices.cia402.common import CONFIGURING, RUNNING
from rospy_control.devices.cia402.common import DriveCommand as _Cmd
from rospy_control.devices.cia402.homing import CW_HOMING_START, HOMING_MODE
from rospy_control.devices.actuator import Capabilities, ControlMode

__all__ = ["Cia402PdoMapping", "parse_pdo_map"]

logger = get_logger("rospy_control.devices.cia402.device")


def parse_pdo_map(text: str, where: str) -> List[Tuple[int, int, int]]:
    """``"0x607A:00/32 0x60FF:00/32"`` -> [(index, sub, bits)]."""
    out = []
    for item in text.split():
        try:
            obj, bits = item.split("/")
            index, sub = obj.split(":")
            out.append((int(index, 16), int(sub, 16), int(bits)))
        except ValueError:
            raise ConfigError(f"{where}: PDO map entry '{item}' is not 'index:sub/bits' "
                              "(e.g. 0x607A:00/32)") from None
    if sum(b for _i, _s, b in out) > 64:
        raise ConfigError(f"{where}: PDO map '{text}' needs more than 64 bits")
    return out


class Cia402PdoMapping:
    """The PDO side of :class:`.device.Cia402Drive` (channel thread, and its constructor)."""

    # the drive's (declared for the type checker)
    CAPABILITIES: ClassVar[Capabilities]
    EVENT_REFRESH: ClassVar[float]
    name: str
    node_id: int
    eds: str
    net: Any
    node: Any
    scale: co.UnitScale
    direction: int
    zero_offset: float
    max_torque: int
    bad_frames: int
    _canopen_net: Any
    _cmd_buf: Any
    _event_sent: Dict[int, Tuple[bytes, float]]
    _phase: str
    _awaiting: int
    _tpdos_heard: int
    _vals: Dict[Tuple[int, int], int]
    _watchdog: Any
    _heartbeat: Any
    _home_mode: bool
    _home_start: bool
    _measured: Any
    _pos: float
    got_reply: Any
    report_error: Any

    def _configure_maps(self, rpdos, tpdos, who: str) -> Capabilities:
        """Map the PDOs; the drive's capabilities: what its RPDOs carry."""
        node = self.node
        node.rpdo.read(from_od=True)
        node.tpdo.read(from_od=True)
        for maps, given, kind in ((node.rpdo.map, rpdos, "rpdo"), (node.tpdo.map, tpdos, "tpdo")):
            for n, (entries, trans) in given.items():
                if n not in maps:
                    raise ConfigError(f"{who}: <{kind} number=\"{n}\">: the object dictionary "
                                      f"'{self.eds}' has "
                                      f"no {kind.upper()}{n}")
                m = maps[n]
                m.clear()
                for index, sub, bits in entries:
                    try:
                        self.node.object_dictionary[index]
                    except KeyError:
                        raise ConfigError(f"{who}: <{kind} number=\"{n}\">: object 0x{index:04X} is not in "
                                          f"'{self.eds}'") from None
                    m.add_variable(index, sub, bits)
                m.trans_type = trans
                m.enabled = bool(entries)
                if m.cob_id is None or m.cob_id == 0:
                    m.cob_id = (co.rpdo_cob_id if kind == "rpdo" else co.tpdo_cob_id)(n, self.node_id)
        self._rmaps = [m for m in node.rpdo.map.values() if m.enabled]
        self._tmaps = {m.cob_id: m for m in node.tpdo.map.values() if m.enabled}
        mapped_r = {(v.index, v.subindex) for m in self._rmaps for v in m.map}
        mapped_t = {(v.index, v.subindex) for m in self._tmaps.values() for v in m.map}
        for key, what in (((co.STATUSWORD, 0), "the statusword 0x6041"),
                          ((co.POSITION_ACTUAL, 0), "the position actual value 0x6064")):
            if key not in mapped_t:
                raise ConfigError(f"{who}: no TPDO maps {what}: map it (<tpdo map=...>) or use an EDS "
                                  "that does")
        for key, what in (((co.CONTROLWORD, 0), "the controlword 0x6040"),
                          ((co.MODES_OF_OPERATION, 0), "the modes of operation 0x6060")):
            if key not in mapped_r:
                raise ConfigError(f"{who}: no RPDO maps {what}: map it (<rpdo map=...>) or use an EDS "
                                  "that does")
        modes = {ControlMode.NONE} if (co.TARGET_TORQUE, 0) in mapped_r else set()
        for mode, obj in ((ControlMode.POSITION, co.TARGET_POSITION),
                          (ControlMode.VELOCITY, co.TARGET_VELOCITY),
                          (ControlMode.EFFORT, co.TARGET_TORQUE)):
            if (obj, 0) in mapped_r:
                modes.add(mode)
        if ControlMode.POSITION not in modes:
            raise ConfigError(f"{who}: no RPDO maps the target position 0x607A (cyclic synchronous position)")
        if ControlMode.NONE not in modes:
            modes.add(ControlMode.NONE)   # limp as CSV at 0 rad/s where no torque target is mapped
        caps = Capabilities(
            modes=frozenset(modes), position_velocity_ff=(co.VELOCITY_OFFSET, 0) in mapped_r,
            position_effort_ff=(co.TORQUE_OFFSET, 0) in mapped_r,
            velocity_effort_ff=(co.TORQUE_OFFSET, 0) in mapped_r)
        self._rvars = [(m, [((v.index, v.subindex), v) for v in m.map]) for m in self._rmaps]
        self._tvars = {cob: [((v.index, v.subindex), v) for v in m.map] for cob, m in self._tmaps.items()}
        self._sync_tpdos = {cob for cob, m in self._tmaps.items() if m.trans_type == 1}
        self._has_mode_display = (co.MODES_OF_OPERATION_DISPLAY, 0) in mapped_t
        return caps

    def _rpdos(self, now: float, quick_stop: bool = False) -> List[can.Message]:
        """The RPDO frames of this cycle: the synchronous ones always, event-driven ones on change."""
        seq, cmd = self._cmd_buf.read_with_sequence()
        if quick_stop:
            cmd = _Cmd(ControlMode.POSITION, self.direction * self._pos + self.zero_offset)
        else:
            self._inflight = cmd.mode
            cmd = self._watchdog(now, seq, cmd)
        values = self._wire_values(cmd, quick_stop)
        out = []
        for m, entries in self._rvars:
            for key, var in entries:
                v = values.get(key)
                if v is not None:
                    var.raw = v
            data = bytes(m.data)
            if m.trans_type is not None and m.trans_type >= 254:
                prev = self._event_sent.get(m.cob_id)
                if not quick_stop and prev is not None and prev[0] == data \
                        and now - prev[1] < self.EVENT_REFRESH:
                    continue
                self._event_sent[m.cob_id] = (data, now)
            elif quick_stop:
                continue
            out.append(can.Message(arbitration_id=m.cob_id, is_extended_id=False, data=data))
        return out

    def _wire_values(self, cmd: _Cmd, quick_stop: bool = False) -> Dict[Tuple[int, int], int]:
        s = self.scale
        mode = _CIA_MODE[cmd.mode]
        if cmd.mode == ControlMode.NONE and ControlMode.EFFORT not in self.CAPABILITIES.modes:
            mode = co.CSV
        actual = self._vals.get((co.POSITION_ACTUAL, 0), 0)
        v: Dict[Tuple[int, int], int] = {
            (co.CONTROLWORD, 0): co.CONTROLWORDS[co.Command.QUICK_STOP if quick_stop else
                                                 co.Command.ENABLE_OPERATION],
            (co.MODES_OF_OPERATION, 0): mode,
            (co.TARGET_POSITION, 0): actual, (co.TARGET_VELOCITY, 0): 0, (co.TARGET_TORQUE, 0): 0,
            (co.VELOCITY_OFFSET, 0): 0, (co.TORQUE_OFFSET, 0): 0,
        }
        try:
            if cmd.mode == ControlMode.POSITION:
                v[(co.TARGET_POSITION, 0)] = s.rad_to_counts(cmd.position)
                v[(co.VELOCITY_OFFSET, 0)] = s.rad_per_s_to_counts_per_s(cmd.velocity)
                v[(co.TORQUE_OFFSET, 0)] = self._permille(cmd.effort)
            elif cmd.mode == ControlMode.VELOCITY:
                v[(co.TARGET_VELOCITY, 0)] = s.rad_per_s_to_counts_per_s(cmd.velocity)
                v[(co.TORQUE_OFFSET, 0)] = self._permille(cmd.effort)
            elif cmd.mode == ControlMode.EFFORT:
                v[(co.TARGET_TORQUE, 0)] = self._permille(cmd.effort)
        except ValueError:
            pass   # outside INTEGER32: keep the safe values (hold where it is)
        if self._home_mode and not quick_stop:
            # homing (.homing): mode 6, bit 4 high to run it; the targets hold where the drive is, for
            # the cycle it returns to cyclic synchronous position
            v[(co.CONTROLWORD, 0)] |= CW_HOMING_START if self._home_start else 0
            v[(co.MODES_OF_OPERATION, 0)] = HOMING_MODE
            v[(co.TARGET_POSITION, 0)] = actual
            v[(co.VELOCITY_OFFSET, 0)] = v[(co.TORQUE_OFFSET, 0)] = 0
            v[(co.TARGET_VELOCITY, 0)] = v[(co.TARGET_TORQUE, 0)] = 0
        return v

    def _permille(self, nm: float) -> int:
        lim = self.max_torque
        try:
            return max(-lim, min(lim, self.scale.nm_to_permille(nm)))
        except ValueError:
            return lim if nm > 0 else -lim

    def on_frame(self, arb_id: int, data, now: float) -> int:
        try:
            self.net.network.notify(arb_id, bytes(data), now)
        except Exception as err:  # noqa: BLE001 - a library callback must not end the channel thread
            self.bad_frames += 1
            logger.error("drive '%s': canopen failed on 0x%03X: %s: %s", self.name, arb_id,
                         type(err).__name__, err)
            return 0
        n = self.node_id
        if arb_id == co.HEARTBEAT_BASE + n and len(data) >= 1:
            self._heartbeat.heard(now)
            self._hb_state = data[0]
            if data[0] == co.NMT_BOOTUP and self._phase != CONFIGURING:
                self._rebooted = True
            if data[0] == co.NMT_BOOTUP and self._phase == RUNNING:
                self.report_error(f"CANopen node {n} rebooted (boot-up message 0x{0x700 + n:03X}: 00)",
                                  f"CANopen node {n} rebooted")
            if self._phase != RUNNING:
                self.got_reply(now, state=False)   # alive; the position comes with the TPDOs
            return 0
        entries = self._tvars.get(arb_id)
        if entries is None:
            if self._phase != RUNNING and arb_id == co.SDO_TX_BASE + n:
                self.got_reply(now, state=False)
            return 0
        vals = self._vals
        for key, var in entries:
            try:
                vals[key] = int(var.raw)
            except (TypeError, ValueError):
                self.bad_frames += 1
                return 0
        self._tpdos_heard += 1
        self._decode_state(now)
        # every TPDO shows the drive alive, also one that came after its cycle's reply window (a
        # late simulator or host): it ends the miss streak; only the awaited ones count for the cycle.
        # The values are the drive's once the position actual value has come (a TPDO without it
        # leaves the default 0 in place).
        self.got_reply(now, state=(co.POSITION_ACTUAL, 0) in vals)
        if arb_id in self._sync_tpdos and self._awaiting:
            self._awaiting -= 1
            return 1
        return 0

    def _decode_state(self, now: float) -> None:
        s, vals = self.scale, self._vals
        self._measured(s.counts_to_rad(vals.get((co.POSITION_ACTUAL, 0), 0)),
                       s.counts_per_s_to_rad_per_s(vals.get((co.VELOCITY_ACTUAL, 0), 0)),
                       s.permille_to_nm(vals.get((co.TORQUE_ACTUAL, 0), 0)))
        self._err = vals.get((co.ERROR_CODE, 0), 0)
        sw = vals.get((co.STATUSWORD, 0))
        if sw is None or self._phase != RUNNING:
            return
        try:
            state = co.decode_statusword(sw)
        except co.Cia402Error:
            return
        if state in (State.FAULT, State.FAULT_REACTION_ACTIVE):
            what = self._error_text()
            self.report_error(f"drive in {state}: {what}", f"drive still in {state}: {what}")
        elif state != State.OPERATION_ENABLED:
            self.report_error(f"drive left OPERATION ENABLED: it is in {state} (statusword 0x{sw:04X})",
                              f"drive in {state}")
        elif self._has_mode_display:
            shown = vals.get((co.MODES_OF_OPERATION_DISPLAY, 0))
            for mode, cia in _CIA_MODE.items():
                if cia == shown and self._inflight == mode:
                    self._mode = mode
        else:
            self._mode = self._inflight

    def _error_text(self) -> str:
        e = self._emcy
        if e is not None and e.code:
            return f"EMCY 0x{e.code:04X} {e.text} (error register 0x{e.register:02X})"
        code = self._vals.get((co.ERROR_CODE, 0), 0)
        if code:
            return f"error code 0x603F = 0x{code:04X} {co.emcy_text(code)}"
        return "no error code reported"

    def _on_emcy(self, err: Any) -> None:
        e = self._canopen_net.emcy_of(self.node_id, err)
        if e.code == 0:
            self._emcy = None
            return
        self._emcy = e
        logger.error("drive '%s': %s", self.name, e)
        if self._phase == RUNNING:
            self.report_error(f"drive reported EMCY 0x{e.code:04X} {e.text} (error register "
                              f"0x{e.register:02X}, CANopen node {self.node_id})",
                              f"drive still reports EMCY 0x{e.code:04X} {e.text}")
