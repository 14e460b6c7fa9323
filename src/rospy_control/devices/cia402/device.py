"""A CANopen CiA 402 servo drive behind the actuator contract: ``<unit type="rospy_control/Cia402Drive">``.

The drive is driven through the ``canopen`` library (PyPI, MIT licence; optional: imported when a
unit of this type is built, with one clear :class:`ConfigError` saying what to install when it is
missing).  Which document each part follows:

* **one reader on the bus** (:mod:`..protocols.canopen_net`): the library's ``Network`` is built on the
  channel's own python-can bus (the channel hands it over through :meth:`Cia402Drive.bind_bus`), never
  ``connect()``-ed or ``disconnect()``-ed; the channel routes the node's COB-IDs (EMCY 0x080+n, TPDOs,
  SDO response 0x580+n, heartbeat 0x700+n) to :meth:`Cia402Drive.on_frame`, which feeds the network.
* **NMT start-up** (CiA 301 7.2.8): reset node, wait for the boot-up message ``0x700+n: 00`` (an error
  naming the node if it never comes), configure in PRE-OPERATIONAL, then start remote node, sent
  again every ``NMT_RETRY`` until a TPDO shows the drive OPERATIONAL (NMT is not acknowledged: a lost
  frame would leave it PRE-OPERATIONAL, answering SDO but sending no PDO).
* **SDO configuration** (CiA 301 7.2.4) through the library's SDO client: producer heartbeat time
  0x1017, interpolation time period 0x60C2 (the SYNC period, CiA 402-2 6.3.5; a drive that refuses it
  must already agree, or start-up stops with both periods named), max torque 0x6072, the PDO mapping
  (0x1400-0x1A03, from the EDS file, or from ``<rpdo>`` / ``<tpdo>`` children of the unit), and the
  targets 0x607A / 0x60FF / 0x6071 set to the measured position and zero **before** the drive is
  enabled, so a stale target cannot make it jump (ros_canopen's start-up jerk).
* **the 402 state machine** (CiA 402-2 figure 33, controlword 0x6040, statusword 0x6041): to OPERATION
  ENABLED and back, in a worker thread of the unit (its transitions block on SDO round trips: never in
  the channel's cycle); the fault reset (rising edge of controlword bit 7) is the reset probe of
  ``~reset_faults``.
* **cyclic synchronous modes** (CiA 402-2 clauses 11-13): POSITION is CSP (0x607A, velocity offset
  0x60B1 and torque offset 0x60B2 as feed-forwards where mapped), VELOCITY is CSV (0x60FF), EFFORT and
  NONE (limp: 0 N m) are CST (0x6071); the mode 0x6060 goes in an RPDO and is confirmed by 0x6061.
* **cycles** (CiA 301 7.2.5): each channel cycle the unit sends its RPDOs and one unit of the bus (the
  last one) the SYNC; the synchronous TPDOs (statusword, position, velocity, torque, error code)
  arrive as the replies of the cycle.
* **liveness**: the synchronous TPDOs are the awaited replies (silence faults the drive after the
  channel's ``fault_timeout``); the drive's heartbeat is consumed too, counted only over cycles in
  which the host ran on time, so a late host never looks like a dead drive.
* **EMCY** (CiA 301 7.2.7): decoded by the library, reported with the drive's error code and the
  CiA 301 / 402 text of it ("drive reported EMCY 0x2310 Continuous over current ...").
* **units**: positions through ``counts_per_rev`` (increments per motor revolution) and ``gear_ratio``
  (motor revolutions per output revolution) to radians of the output, torque through ``rated_torque``
  (0x6076, N m at the motor) and the gear to N m of the output (:class:`..protocols.cia402.UnitScale`).
"""
from __future__ import annotations

import logging
import math
import os
import threading
import time
from typing import Any, Dict, List, NamedTuple, Optional, Tuple

import can

from rospy_control.exceptions import CommunicationTimeout, ConfigError
from rospy_control.log import get_logger
from rospy_control.hardware_config.document import (
    AttributeReader, UnitInfo, positive, to_float, to_int, to_str,
)
from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State
from rospy_control.devices.actuator import (
    WATCHDOG_MODES, ActuatorUnit, Capabilities, ControlMode, MotorState, UnsupportedCommand,
)
from rospy_control.devices.unit import frame_bits
from rospy_control.realtime import RealtimeBuffer
from rospy_control.realtime.threads import join_thread, start_thread

__all__ = ["Cia402Drive", "DEFAULT_EDS"]

logger = get_logger(__name__)

#: the generic CiA 402 object dictionary shipped with the package (config/cia402_drive.eds)
DEFAULT_EDS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                                            "..", "config", "cia402_drive.eds"))

_CIA_MODE = {ControlMode.POSITION: co.CSP, ControlMode.VELOCITY: co.CSV, ControlMode.EFFORT: co.CST,
             ControlMode.NONE: co.CST}
_TARGET_OF = {co.CSP: co.TARGET_POSITION, co.CSV: co.TARGET_VELOCITY, co.CST: co.TARGET_TORQUE}

# the unit's phases (channel thread's view)
_IDLE, _CONFIGURING, _RUNNING = "idle", "configuring", "running"

#: one synchronous-PDO group per bus: its last unit sends the SYNC (one SYNC per cycle per bus)
_SYNC_GROUPS: Dict[int, List["Cia402Drive"]] = {}
_SYNC_LOCK = threading.Lock()


class _Cmd(NamedTuple):
    """The latest command, drive side (direction and zero offset applied)."""

    mode: ControlMode
    position: float = 0.0
    velocity: float = 0.0
    effort: float = 0.0


_LIMP = _Cmd(ControlMode.NONE)


class _Failed(Exception):
    """A start-up or reset step failed (the message is the fault reason)."""


def _parse_map(text: str, where: str) -> List[Tuple[int, int, int]]:
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


class Cia402Drive(ActuatorUnit):
    """A CiA 402 drive on a CANopen node (see the module docstring for the documents followed)."""

    TYPE_NAME = "rospy_control/Cia402Drive"
    PROTOCOL = "CANopen CiA 402"
    PROBE_REQUEST = "the CiA 402 fault reset"
    CAPABILITIES = Capabilities(modes=frozenset((ControlMode.NONE, ControlMode.POSITION, ControlMode.VELOCITY,
                                                 ControlMode.EFFORT)))

    DEFAULT_COUNTS_PER_REV = 4096
    DEFAULT_GEAR_RATIO = 1.0
    DEFAULT_RATED_TORQUE = 1.0
    DEFAULT_MAX_TORQUE = 1000
    DEFAULT_HEARTBEAT = 0.1
    DEFAULT_BOOT_TIMEOUT = 2.0
    DEFAULT_SDO_TIMEOUT = 1.0
    #: SDO requests sent at most (the first and the repetitions after a timeout)
    SDO_TRIES = 2
    DEFAULT_TRANSITION_TIMEOUT = 0.5
    DEFAULT_MAX_TEMPERATURE = 90.0
    #: an event-driven RPDO (type 254/255) is sent on change and at least this often (s)
    EVENT_REFRESH = 0.1
    #: NMT commands are not acknowledged: "start remote node" is sent again this often (s) until a
    #: TPDO shows the drive OPERATIONAL (a lost frame must not leave it PRE-OPERATIONAL,
    #: answering SDO but sending no PDO), for at most ``boot_timeout``
    NMT_RETRY = 0.1
    #: how long deactivate waits for a start-up or reset in progress to end (s)
    WORKER_JOIN_TIMEOUT = 3.0

    def __init__(self, name: str, node_id: int, eds: str = DEFAULT_EDS,
                 counts_per_rev: float = DEFAULT_COUNTS_PER_REV, gear_ratio: float = DEFAULT_GEAR_RATIO,
                 rated_torque: float = DEFAULT_RATED_TORQUE, max_torque: int = DEFAULT_MAX_TORQUE,
                 heartbeat: float = DEFAULT_HEARTBEAT, heartbeat_timeout: Optional[float] = None,
                 boot_timeout: float = DEFAULT_BOOT_TIMEOUT, sdo_timeout: float = DEFAULT_SDO_TIMEOUT,
                 direction: int = 1, zero_offset: float = 0.0, joint: Optional[str] = None,
                 max_temperature: float = DEFAULT_MAX_TEMPERATURE, fault_timeout: Optional[float] = None,
                 watchdog_mode: Optional[str] = None,
                 rpdos: Optional[Dict[int, Tuple[List[Tuple[int, int, int]], int]]] = None,
                 tpdos: Optional[Dict[int, Tuple[List[Tuple[int, int, int]], int]]] = None,
                 where: str = "") -> None:
        super().__init__(name, node_id, fault_timeout)
        self.where = where
        who = f"CiA 402 drive '{name}'" + (f" ({where})" if where else "")
        if not 1 <= node_id <= 127:
            raise ConfigError(f"{who}: node_id {node_id} is not in 1..127")
        if direction not in (1, -1):
            raise ConfigError(f"{who}: direction must be 1 or -1, got {direction}")
        if not 0 < max_torque <= 65535:
            raise ConfigError(f"{who}: max_torque {max_torque} is outside what 0x6072 (UNSIGNED16, per mille "
                              "of the rated torque) can carry: 1..65535")
        try:
            self.scale = co.UnitScale(counts_per_rev, gear_ratio, rated_torque)
        except ValueError as err:
            raise ConfigError(f"{who}: {err}") from None
        self.node_id = node_id
        self.eds = eds
        self.counts_per_rev, self.gear_ratio, self.rated_torque = counts_per_rev, gear_ratio, rated_torque
        self.max_torque = int(max_torque)
        self.heartbeat = heartbeat
        self.heartbeat_timeout = heartbeat_timeout if heartbeat_timeout is not None else 3.0 * heartbeat
        self.boot_timeout = boot_timeout
        self.sdo_timeout = sdo_timeout
        self.transition_timeout = self.DEFAULT_TRANSITION_TIMEOUT
        self.direction = direction
        self.zero_offset = zero_offset
        self.joint = joint
        self.max_temperature = max_temperature
        self.watchdog_mode_explicit = watchdog_mode is not None
        self.watchdog_mode = watchdog_mode or "position"
        if self.watchdog_mode not in ("position", "none"):
            raise ConfigError(f"{who}: watchdog_mode must be 'position' or 'none' (a CiA 402 drive has no "
                              f"damping command), got {self.watchdog_mode!r}")
        # the canopen side: a network without a bus until the channel hands its own over
        from rospy_control.devices.cia402 import canopen_net
        self._canopen_net = canopen_net
        self.net = canopen_net.CanopenNetwork(None, what=f"unit '{name}' (type {self.TYPE_NAME}) at {where}")
        self.node = self.net.add_node(node_id, eds, where=where)
        self.node.sdo.RESPONSE_TIMEOUT = sdo_timeout
        self.node.sdo.MAX_RETRIES = self.SDO_TRIES
        for lib in ("canopen.pdo", "canopen.sdo", "canopen.nmt", "canopen.emcy", "canopen.objectdictionary"):
            lg = logging.getLogger(lib)
            if lg.level == logging.NOTSET:
                lg.setLevel(logging.WARNING)   # the library narrates every PDO entry at INFO
        self.node.emcy.add_callback(self._on_emcy)
        self._configure_maps(rpdos or {}, tpdos or {}, who)
        # command (any thread -> channel thread)
        self._cmd_buf: RealtimeBuffer[_Cmd] = RealtimeBuffer(_LIMP, name=f"drive {name} command")
        self.rejected_commands = 0
        # worker thread <-> channel thread
        self._lock = threading.Lock()
        self._worker: Optional[threading.Thread] = None
        #: set to end the worker's waits (deactivate)
        self._stopping = threading.Event()
        #: the channel's send lock (bind_bus); a lock of its own until the drive is on a channel
        self._send_lock = threading.Lock()
        self._result: Optional[Tuple[bool, str]] = None
        self._phase = _IDLE
        #: the drive booted again since it was configured: the next reset configures it from scratch
        self._rebooted = False
        self._doing = "the start-up"
        #: TPDOs decoded (channel thread; the worker reads it to see the drive OPERATIONAL)
        self._tpdos_heard = 0
        #: the NMT state of the drive's latest heartbeat, None before one came
        self._hb_state: Optional[int] = None
        self._bus: Optional[can.BusABC] = None
        self._group: Optional[List[Cia402Drive]] = None
        self._sync_msg = can.Message(arbitration_id=co.SYNC_ID, is_extended_id=False, data=b"")
        # channel-thread state
        self._vals: Dict[Tuple[int, int], int] = {}
        self._emcy: Optional[co.Emcy] = None
        self._last_hb = 0.0
        self._hb_silence = 0.0
        self._last_end = 0.0
        self._exit_sent = False
        self._inflight = ControlMode.NONE
        self._mode = ControlMode.NONE
        self._published_mode = ControlMode.NONE
        self._event_sent: Dict[int, Tuple[bytes, float]] = {}
        self._pos = self._vel = self._eff = 0.0
        self._err = 0
        self._step: Optional[float] = None
        self._step_last: Optional[float] = None
        self._limited = 0
        self._cmd_timeout = 0.0
        self._wd_seen = 0
        self._wd_since = 0.0
        self._wd_active = False
        self._wd_hold: Optional[_Cmd] = None
        self._state = MotorState(name, 0.0, 0.0, 0.0, None, 0, False, ControlMode.NONE, ControlMode.NONE,
                                 False, "", 0.0, False, 0.0, False)

    # -- configuration ------------------------------------------------------------------------------------
    def _configure_maps(self, rpdos, tpdos, who: str) -> None:
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
        self.CAPABILITIES = Capabilities(  # type: ignore[misc]  # per drive: what its RPDOs carry
            modes=frozenset(modes), position_velocity_ff=(co.VELOCITY_OFFSET, 0) in mapped_r,
            position_effort_ff=(co.TORQUE_OFFSET, 0) in mapped_r,
            velocity_effort_ff=(co.TORQUE_OFFSET, 0) in mapped_r)
        self._rvars = [(m, [((v.index, v.subindex), v) for v in m.map]) for m in self._rmaps]
        self._tvars = {cob: [((v.index, v.subindex), v) for v in m.map] for cob, m in self._tmaps.items()}
        self._sync_tpdos = {cob for cob, m in self._tmaps.items() if m.trans_type == 1}
        self._has_mode_display = (co.MODES_OF_OPERATION_DISPLAY, 0) in mapped_t

    @classmethod
    def from_info(cls, info: UnitInfo) -> "Cia402Drive":
        el = info.element
        where = f"{el.source}:{el.line}"
        if info.channel is None:
            raise el.error("a CiA 402 drive needs a channel: set attribute 'channel' here or on an enclosing "
                           "<group>")
        r = AttributeReader(el, ignore=("name", "type", "channel"))
        eds = r.get("eds", to_str, None)
        if eds is None:
            eds = DEFAULT_EDS
        elif not os.path.isabs(eds):
            eds = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(el.source)), eds))
        kw: Dict[str, Any] = dict(
            node_id=r.get("node_id", to_int, check=lambda v: 1 <= v <= 127,
                          expected="a CANopen node id 1..127"),
            eds=eds,
            counts_per_rev=r.get("counts_per_rev", to_float, cls.DEFAULT_COUNTS_PER_REV, check=positive,
                                 expected="a positive number of encoder increments per motor revolution"),
            gear_ratio=r.get("gear_ratio", to_float, cls.DEFAULT_GEAR_RATIO,
                             check=lambda v: math.isfinite(v) and v != 0,
                             expected="a non-zero number (motor revolutions per output revolution)"),
            rated_torque=r.get("rated_torque", to_float, cls.DEFAULT_RATED_TORQUE, check=positive,
                               expected="the motor's rated torque 0x6076 in N m (> 0)"),
            max_torque=r.get("max_torque", to_int, cls.DEFAULT_MAX_TORQUE, check=lambda v: 1 <= v <= 65535,
                             expected="0x6072 in per mille of the rated torque, 1..65535"),
            heartbeat=r.get("heartbeat", to_float, cls.DEFAULT_HEARTBEAT,
                            check=lambda v: v == 0 or 0.001 <= v <= 65.535,
                            expected="the producer heartbeat time in s, 0.001..65.535 (0 = off)"),
            heartbeat_timeout=r.get("heartbeat_timeout", to_float, None, check=positive,
                                    expected="a positive number of seconds"),
            boot_timeout=r.get("boot_timeout", to_float, cls.DEFAULT_BOOT_TIMEOUT, check=positive,
                               expected="a positive number of seconds"),
            sdo_timeout=r.get("sdo_timeout", to_float, cls.DEFAULT_SDO_TIMEOUT, check=positive,
                              expected="a positive number of seconds"),
            direction=r.get("direction", to_int, 1, check=lambda v: v in (1, -1), expected="1 or -1"),
            zero_offset=r.get("zero_offset", to_float, 0.0),
            joint=r.get("joint", to_str, None),
            max_temperature=r.get("max_temperature", to_float, cls.DEFAULT_MAX_TEMPERATURE),
            fault_timeout=r.get("fault_timeout", to_float, None, check=positive,
                                expected="a positive number of seconds"),
            watchdog_mode=r.get("watchdog_mode", to_str, None, check=lambda v: v in ("position", "none"),
                                expected="'position' or 'none' (a CiA 402 drive has no damping command)"),
        )
        r.finish()
        for kind in ("rpdo", "tpdo"):
            maps: Dict[int, Tuple[List[Tuple[int, int, int]], int]] = {}
            for child in el.children:
                if child.tag != kind:
                    continue
                c = AttributeReader(child)
                n = c.get("number", to_int, check=lambda v: 1 <= v <= 4, expected="a PDO number 1..4")
                trans = c.get("transmission", to_int, 1, check=lambda v: 0 <= v <= 240 or v in (254, 255),
                              expected="a transmission type 0..240, 254 or 255")
                text = c.get("map", to_str, "")
                c.finish()
                maps[n] = (_parse_map(text, f"{child.source}:{child.line}"), trans)
            kw[kind + "s"] = maps
        unit = cls(info.name, where=where, **kw)
        return unit

    @property
    def startup_timeout(self) -> float:
        """Boot-up, one SDO transfer that needs its repetition, the 402 state machine's transitions
        and the first PDO after NMT start: the bound after which a drive that has not come up has
        faulted naming why."""
        return 2 * self.boot_timeout + self.SDO_TRIES * self.sdo_timeout + 4 * self.transition_timeout

    @property
    def effort_range(self) -> Tuple[float, float]:
        t = self.scale.permille_to_nm(self.max_torque)
        return (-abs(t), abs(t))

    def encodable_ranges(self) -> Dict[str, Tuple[float, float]]:
        return {}

    def request_ids(self) -> Tuple[int, ...]:
        return tuple(m.cob_id for m in self._rmaps) + (co.SDO_RX_BASE + self.node_id,)

    def reply_ids(self) -> Tuple[int, ...]:
        n = self.node_id
        return (co.EMCY_BASE + n,) + tuple(self._tmaps) + (co.SDO_TX_BASE + n, co.HEARTBEAT_BASE + n)

    def bits_per_cycle(self) -> int:
        bits = frame_bits(0)   # this unit's share of the SYNC, counted once per unit (an upper bound)
        for m in self._rmaps:
            if m.trans_type is not None and m.trans_type <= 240:
                bits += frame_bits(len(m.data))
        for m in self._tmaps.values():
            if m.trans_type == 1:
                bits += frame_bits(len(m.data))
        return bits

    # -- commands (any thread) --------------------------------------------------------------------------
    def _rejected(self, *values: float) -> bool:
        if all(math.isfinite(v) for v in values):
            return False
        self.rejected_commands += 1
        return True

    def set_command(self, mode: ControlMode, value: float = 0.0, effort: float = 0.0) -> None:
        if self._rejected(value, effort):
            return
        if mode not in self.CAPABILITIES.modes:
            raise UnsupportedCommand(f"CiA 402 drive '{self.name}' has no {mode!r} command (its RPDOs map "
                                     "no target for it)")
        d = self.direction
        if mode == ControlMode.POSITION:
            cmd = _Cmd(mode, d * value + self.zero_offset)
        elif mode == ControlMode.VELOCITY:
            ff = d * effort if self.CAPABILITIES.velocity_effort_ff else 0.0
            cmd = _Cmd(mode, velocity=d * value, effort=ff)
        elif mode == ControlMode.EFFORT:
            cmd = _Cmd(mode, effort=d * value)
        else:
            cmd = _LIMP
        self._cmd_buf.write_from_non_rt(cmd)

    def set_position(self, position: float, velocity: float = 0.0, effort: float = 0.0) -> None:
        if self._rejected(position, velocity, effort):
            return
        d, caps = self.direction, self.CAPABILITIES
        self._cmd_buf.write_from_non_rt(_Cmd(ControlMode.POSITION, d * position + self.zero_offset,
                                             d * velocity if caps.position_velocity_ff else 0.0,
                                             d * effort if caps.position_effort_ff else 0.0))

    def set_damping(self) -> None:
        raise UnsupportedCommand(f"CiA 402 drive '{self.name}' has no damping command")

    def request_mode(self, mode: ControlMode) -> None:
        if mode == ControlMode.POSITION:
            self.set_command(mode, self._pos)
        else:
            self.set_command(mode, 0.0)

    def mode_confirmed(self, mode: ControlMode) -> bool:
        return (self._mode == mode and self._cmd_buf.read_from_rt().mode == mode
                and self._published_mode == mode)

    @property
    def command_mode(self) -> ControlMode:
        return self._cmd_buf.read_from_rt().mode

    def set_watchdog_mode(self, mode: str) -> None:
        """:raises ConfigError: an unknown mode, or ``damping`` (as ``hold_mode: none`` asks for), naming
            the drive's file:line."""
        if mode not in WATCHDOG_MODES:
            raise self._config_error(f"drive '{self.name}': unknown watchdog_mode {mode!r}")
        if mode == "damping":
            raise self._config_error(f"CiA 402 drive '{self.name}' has no damping command: watchdog_mode "
                                     "'damping' is not available (use 'position' or 'none')")
        self.watchdog_mode = mode

    def _config_error(self, message: str) -> ConfigError:
        source, _, line = self.where.rpartition(":")
        if source and line.isdigit():
            return ConfigError(message, source=source, line=int(line))
        return ConfigError(message, source=self.where or None)

    @property
    def watchdog_active(self) -> bool:
        return self._wd_active

    @property
    def command_count(self) -> int:
        return self._cmd_buf.sequence()

    def set_max_position_step(self, step: Optional[float]) -> None:
        if not step:
            self._step = None
            return
        if not step > 0.0:
            raise ValueError(f"drive '{self.name}': max position step must be > 0, got {step!r}")
        self._step = float(step)

    @property
    def max_position_step(self) -> Optional[float]:
        return self._step

    @property
    def limited_frames(self) -> int:
        return self._limited

    # -- the bus -------------------------------------------------------------------------------------------
    def bind_bus(self, bus: can.BusABC, send_lock: Optional[threading.Lock] = None) -> None:
        """The channel's open bus and its send lock: the canopen network (the SDO worker) sends through
        that bus under that lock, the one the channel's own thread holds for its sends, so a bus has one
        send path (never a second bus handle, never two unsynchronised senders)."""
        self._bus = bus
        self.net.bus = bus
        self.net.network.bus = bus
        if send_lock is not None:
            self._send_lock = send_lock
            self.net.network.send_lock = send_lock
        with _SYNC_LOCK:
            group = _SYNC_GROUPS.setdefault(id(bus), [])
            if self not in group:
                group.append(self)
            self._group = group

    # -- channel contract (channel thread) ---------------------------------------------------------------
    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        super().activate(now, enable, fault_timeout, period, command_timeout)
        self._cmd_timeout = command_timeout
        self._last_hb = now
        self._hb_silence = 0.0
        self._last_end = now
        self._exit_sent = False
        self._wd_seen = self._cmd_buf.sequence()
        self._wd_since = now
        if enable and self._bus is not None:
            self._start_worker(first=True)

    def deactivate(self) -> None:
        super().deactivate()
        self._stop_worker()
        self._phase = _IDLE
        with _SYNC_LOCK:
            if self._group is not None and self in self._group:
                self._group.remove(self)
                if not self._group and self._bus is not None:
                    _SYNC_GROUPS.pop(id(self._bus), None)
        self.net.close()

    def _start_worker(self, first: bool) -> None:
        self._phase = _CONFIGURING
        with self._lock:
            self._result = None
        cmd = self._cmd_buf.read_from_rt()
        self._stopping.clear()
        self._worker = start_thread(self._work, f"cia402.{self.name}", args=(first, cmd))

    def _stop_worker(self) -> bool:
        """End a start-up or reset still running (its waits end at once) and join its thread."""
        worker = self._worker
        if worker is None:
            return True
        self._stopping.set()
        self.net.cancel_waits()
        if not join_thread(worker, self.WORKER_JOIN_TIMEOUT, owner=f"drive '{self.name}'"):
            return False
        self._worker = None
        return True

    def poll(self, now: float) -> Optional[can.Message]:
        self._published_mode = self._state.mode  # type: ignore[union-attr]
        if self._reset_req != self._reset_seen:
            self.begin_poll(now)       # -> on_probe_start starts the worker when a probe begins
        self._take_result()
        group = self._group
        producer = bool(group) and group[-1] is self and self._active  # type: ignore[index]
        self._awaiting = 0
        out: List[can.Message] = []
        if self._active and self._bus is not None:
            if self._fault and not self._probing:
                if not self._exit_sent:
                    self._exit_sent = True
                    out = self._rpdos(now, quick_stop=True)
            elif self._phase == _RUNNING:
                out = self._rpdos(now)
        # the RPDOs go out before the SYNC that applies them; the channel sends the returned frame and
        # then awaits this unit's synchronous TPDOs
        last = self._sync_msg if producer else (out.pop() if out else None)
        for msg in out:
            try:
                with self._send_lock:
                    self._bus.send(msg, 0.001)  # type: ignore[union-attr]
            except (can.CanError, OSError) as err:
                logger.warning("drive '%s': could not send RPDO 0x%03X: %s", self.name, msg.arbitration_id,
                               err)
        if last is not None and self._phase == _RUNNING and not self._fault:
            self._awaiting = len(self._sync_tpdos)
            self._sent_at = now
        return last

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

    def _watchdog(self, now: float, seq: int, cmd: _Cmd) -> _Cmd:
        if seq != self._wd_seen:
            self._wd_seen = seq
            self._wd_since = now
            if self._wd_active:
                self._wd_active = False
                self.emit("watchdog_released", "new command: the watchdog hold ended")
            return self._cap(cmd)
        if self._wd_active:
            return self._cap(self._wd_hold or cmd)
        if seq and self._cmd_timeout > 0.0 and now - self._wd_since >= self._cmd_timeout \
                and self.watchdog_mode != "none":
            if cmd.mode == ControlMode.POSITION:
                hold = cmd._replace(velocity=0.0)
            else:
                hold = _Cmd(ControlMode.POSITION, self.direction * self._pos + self.zero_offset)
            self._wd_hold = hold
            self._wd_active = True
            self.watchdog_trips += 1
            stale = 1000.0 * (now - self._wd_since)
            self.emit("watchdog_hold", f"no new command for {stale:.0f} ms: holding "
                                       f"position {self.direction * (hold.position - self.zero_offset):.4f}")
            return self._cap(hold)
        return self._cap(cmd)

    def _cap(self, cmd: _Cmd) -> _Cmd:
        if cmd.mode != ControlMode.POSITION or self._step is None:
            self._step_last = cmd.position if cmd.mode == ControlMode.POSITION else None
            return cmd
        last = self._step_last
        if last is None and self._received:
            # the first position target after none (enable, fault, another mode): from where the
            # drive measures the joint
            last = self.direction * self._pos + self.zero_offset
        p = cmd.position
        if last is not None:
            p = min(max(p, last - self._step), last + self._step)
            if p != cmd.position:
                self._limited += 1
                cmd = cmd._replace(position=p)
        self._step_last = p
        return cmd

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
        return v

    def _permille(self, nm: float) -> int:
        lim = self.max_torque
        try:
            return max(-lim, min(lim, self.scale.nm_to_permille(nm)))
        except ValueError:
            return lim if nm > 0 else -lim

    # -- receive path ---------------------------------------------------------------------------------------
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
            self._last_hb = now
            self._hb_silence = 0.0
            self._hb_state = data[0]
            if data[0] == co.NMT_BOOTUP and self._phase != _CONFIGURING:
                self._rebooted = True
            if data[0] == co.NMT_BOOTUP and self._phase == _RUNNING:
                self.report_error(f"CANopen node {n} rebooted (boot-up message 0x{0x700 + n:03X}: 00)",
                                  f"CANopen node {n} rebooted")
            if self._phase != _RUNNING:
                self.got_reply(now, state=False)   # alive; the position comes with the TPDOs
            return 0
        entries = self._tvars.get(arb_id)
        if entries is None:
            if self._phase != _RUNNING and arb_id == co.SDO_TX_BASE + n:
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
        s, d, vals = self.scale, self.direction, self._vals
        self._pos = d * (s.counts_to_rad(vals.get((co.POSITION_ACTUAL, 0), 0)) - self.zero_offset)
        self._vel = d * s.counts_per_s_to_rad_per_s(vals.get((co.VELOCITY_ACTUAL, 0), 0))
        self._eff = d * s.permille_to_nm(vals.get((co.TORQUE_ACTUAL, 0), 0))
        self._err = vals.get((co.ERROR_CODE, 0), 0)
        sw = vals.get((co.STATUSWORD, 0))
        if sw is None or self._phase != _RUNNING:
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
        if self._phase == _RUNNING:
            self.report_error(f"drive reported EMCY 0x{e.code:04X} {e.text} (error register "
                              f"0x{e.register:02X}, CANopen node {self.node_id})",
                              f"drive still reports EMCY 0x{e.code:04X} {e.text}")

    def end_cycle(self, now: float, on_time: bool = True) -> MotorState:
        self._take_result()
        if self._awaiting or self._probing:
            self.judge(now, on_time)
        # heartbeat consumer: silence counted only over cycles in which the host ran on time
        if on_time:
            self._hb_silence += now - self._last_end
        self._last_end = now
        if (self.heartbeat > 0 and self._phase == _RUNNING and not self._fault
                and self._hb_silence > self.heartbeat_timeout):
            silence = 1000.0 * self._hb_silence
            self.set_fault(f"CANopen node {self.node_id}: no heartbeat for {silence:.0f} ms "
                           f"(heartbeat_timeout {1000.0 * self.heartbeat_timeout:.0f} ms)")
        fault = self._fault
        self._state = MotorState(
            self.name, self._pos, self._vel, self._eff, None, self._err,
            self._phase == _RUNNING and not fault, self._mode, self._cmd_buf.read_from_rt().mode, fault,
            self._fault_reason, self._last_reply if self._received else 0.0, self._received, self._fault_time,
            self._wd_active)
        return self._state

    def exit_message(self) -> Optional[can.Message]:
        """Shutdown (controlword 0x06: OPERATION ENABLED -> READY TO SWITCH ON, power stage off) in the
        RPDO that carries the controlword."""
        for m, entries in self._rvars:
            for key, var in entries:
                if key == (co.CONTROLWORD, 0):
                    var.raw = co.CONTROLWORDS[co.Command.SHUTDOWN]
                    return can.Message(arbitration_id=m.cob_id, is_extended_id=False, data=bytes(m.data))
        return None

    # -- fault life cycle ------------------------------------------------------------------------------------
    def on_fault(self) -> None:
        self._exit_sent = False
        self._wd_active = False
        self._phase = _CONFIGURING if self._worker is not None and self._worker.is_alive() else _IDLE

    def on_probe_start(self, now: float) -> None:
        if self._worker is not None and self._worker.is_alive():
            return   # a start-up or reset still runs: this probe takes its outcome
        if self.heartbeat > 0 and self._hb_silence > self.heartbeat_timeout:
            # silence counted over on-time cycles only: a late host is not a dead drive
            self._probe_error = (f"reset failed: CANopen node {self.node_id} sends no heartbeat (none for "
                                 f"{1000.0 * self._hb_silence:.0f} ms)")
            return
        rebooted, self._rebooted = self._rebooted, False
        self._start_worker(first=rebooted)

    def on_probe_failed(self) -> None:
        self._exit_sent = False
        self._phase = _IDLE

    def on_recovered(self, now: float) -> None:
        # the caller's last command is stale (a trajectory that was aborted): hold the measured
        # position, where the drive was enabled, until the caller commands again
        self._cmd_buf.write_from_rt(_Cmd(ControlMode.POSITION, self.direction * self._pos + self.zero_offset))
        self._mode = ControlMode.NONE
        self._exit_sent = False
        self._hb_silence = 0.0
        self._wd_seen = self._cmd_buf.sequence()
        self._wd_since = now
        self._wd_active = False

    def _take_result(self) -> None:
        with self._lock:
            result, self._result = self._result, None
        if result is None:
            return
        ok, why = result
        if ok:
            self._phase = _RUNNING
            self._hb_silence = 0.0
            self._event_sent.clear()
            self._step_last = None
            if self._probing:
                self._probe_ok = True
            else:
                self.emit("enabled", f"CANopen node {self.node_id} in OPERATION ENABLED")
            return
        self._phase = _IDLE
        logger.error("drive '%s': %s", self.name, why)
        if self._probing:
            if self._probe_error is None:
                self._probe_error = "reset failed: " + why
        else:
            self.set_fault(why)

    # -- the worker thread: NMT, SDO configuration, the 402 state machine -----------------------------
    def _work(self, first: bool, cmd: _Cmd) -> None:
        try:
            self._bring_up(first, cmd)
            result = (True, "")
        except _Failed as err:
            result = (False, str(err))
        except Exception as err:  # noqa: BLE001 - any library error ends this attempt with its text
            result = (False, self._describe(err))
        with self._lock:
            self._result = result

    def _describe(self, err: BaseException) -> str:
        if isinstance(err, CommunicationTimeout):
            return str(err)      # no boot-up: canopen_net's message names the node and what to check
        text = f"{type(err).__name__}: {err}"
        code = getattr(err, "code", None)
        if isinstance(code, int) and code > 0xFFFF:
            text = f"SDO aborted with 0x{code:08X} {co.sdo_abort_text(code)} ({err})"
        if "timeout" in type(err).__name__.lower() or "No SDO response" in str(err):
            text = (f"CANopen node {self.node_id} does not answer SDO requests (no response to "
                    f"{self._doing} within {self.SDO_TRIES} x {self.sdo_timeout:g} s)")
        elif code is not None:
            text += f" in {self._doing}"
        return f"CANopen node {self.node_id}: {text}" if not text.startswith("CANopen node") else text

    def _sdo(self, sdo: Any, fn: Any) -> Any:
        """Run one SDO transfer; a response that belongs to an earlier, repeated request (it came
        after its timeout: a late host or simulator) is dropped and the transfer done again."""
        for attempt in range(5):
            try:
                return fn()
            except Exception as err:  # noqa: BLE001 - canopen's SdoCommunicationError, by its text
                if "Unexpected response" not in str(err) or attempt == 4:
                    raise
                time.sleep(0.2)   # let the late responses come, then drop them
                while not sdo.responses.empty():
                    try:
                        sdo.responses.get_nowait()
                    except Exception:  # noqa: BLE001 - emptied meanwhile
                        break
        return None

    def _w(self, sdo: Any, index: int, value: int, sub: Optional[int] = None) -> None:
        self._doing = f"the SDO write of 0x{index:04X}:{sub or 0:02X} = {value}"
        var = sdo[index] if sub is None else sdo[index][sub]

        def write() -> None:
            var.raw = value
        self._sdo(sdo, write)

    def _r(self, sdo: Any, index: int, sub: Optional[int] = None) -> int:
        self._doing = f"the SDO read of 0x{index:04X}:{sub or 0:02X}"
        var = sdo[index] if sub is None else sdo[index][sub]
        return int(self._sdo(sdo, lambda: var.raw))

    def _bring_up(self, first: bool, cmd: _Cmd) -> None:
        net, node, n = self.net, self.node, self.node_id
        sdo = node.sdo
        if first:
            # NMT reset, boot-up, then the whole configuration in PRE-OPERATIONAL; a reset of a drive
            # that did not reboot keeps it and only re-enables (a few SDOs, well within ~reset_faults)
            net.reset_and_wait_for_bootup(n, self.boot_timeout, stop=self._stopping)
            self._check_stopping()
            if self.heartbeat > 0:
                self._w(sdo, co.HEARTBEAT_PRODUCER, int(round(self.heartbeat * 1000.0)))
            self._interpolation_period(sdo)
            if 0x6072 in node.object_dictionary:
                self._w(sdo, 0x6072, self.max_torque)
            for m in list(node.rpdo.map.values()) + list(node.tpdo.map.values()):
                if m.cob_id:
                    self._doing = f"the PDO mapping of {m.name}"
                    m.save()
        # safe targets before the drive is enabled: the measured position, zero velocity and torque
        actual = self._r(sdo, co.POSITION_ACTUAL)
        self._vals[(co.POSITION_ACTUAL, 0)] = actual
        for index, value in ((co.TARGET_POSITION, actual), (co.TARGET_VELOCITY, 0), (co.TARGET_TORQUE, 0),
                             (co.VELOCITY_OFFSET, 0), (co.TORQUE_OFFSET, 0)):
            if index in node.object_dictionary:
                self._w(sdo, index, value)
        mode = _CIA_MODE[cmd.mode]
        if cmd.mode == ControlMode.POSITION:
            mode = co.CSP
        self._w(sdo, co.MODES_OF_OPERATION, mode)
        heard = self._tpdos_heard
        node.nmt.send_command(co.NMT_START)
        self._to_operation_enabled(sdo)
        self._confirm_operational(node, heard)

    def _confirm_operational(self, node: Any, heard: int) -> None:
        """Until a TPDO came after "start remote node" (each SYNC brings them from an OPERATIONAL
        drive), send the command again every :attr:`NMT_RETRY`, for at most ``boot_timeout``."""
        if not self._tvars:
            return            # no TPDO mapped: nothing would show it
        n = self.node_id
        start = time.monotonic()
        again = start + self.NMT_RETRY
        sent = 1
        while self._tpdos_heard == heard:
            self._check_stopping()
            now = time.monotonic()
            if now - start > self.boot_timeout:
                state = self._hb_state
                shown = "no heartbeat" if state is None else \
                    f"its heartbeat shows {co.NMT_STATES.get(state, f'0x{state:02X}')}"
                raise _Failed(f"CANopen node {n}: no PDO within {self.boot_timeout:g} s of NMT 'start remote "
                              f"node' (sent {sent} times; {shown})")
            if now >= again:
                if sent == 1:
                    logger.warning("drive '%s': no PDO %.0f ms after NMT 'start remote node': sending it "
                                   "again (a lost frame?)", self.name, 1000.0 * (now - start))
                node.nmt.send_command(co.NMT_START)
                sent += 1
                again = now + self.NMT_RETRY
            time.sleep(0.005)

    def _interpolation_period(self, sdo: Any) -> None:
        period = self._period
        if not period or 0x60C2 not in self.node.object_dictionary:
            return
        index = -3
        value = period / 10.0 ** index
        while abs(value - round(value)) > 1e-6 * value and index > -6:
            index -= 1
            value = period / 10.0 ** index
        try:
            self._w(sdo, 0x60C2, int(round(value)), 1)
            self._w(sdo, 0x60C2, index, 2)
        except Exception as err:  # noqa: BLE001 - a drive with a fixed period: it must agree
            if getattr(err, "code", None) is None:
                raise          # no answer at all: not a refusal
            v, i = self._r(sdo, 0x60C2, 1), self._r(sdo, 0x60C2, 2)
            try:
                co.check_sync_period(period, v, i, self.node_id)
            except ValueError as err:
                raise _Failed(f"{err}: set the channel's rate to match, or a period the drive "
                              "accepts") from None

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise _Failed(f"CANopen node {self.node_id}: the start-up was stopped (the drive was "
                          "deactivated)")

    def _statusword(self, sdo: Any) -> Tuple[int, str]:
        self._check_stopping()
        sw = self._r(sdo, co.STATUSWORD)
        return sw, co.decode_statusword(sw)

    def _to_operation_enabled(self, sdo: Any) -> None:
        n = self.node_id
        sw, state = self._statusword(sdo)
        # a drive still initialising leaves NOT READY TO SWITCH ON by itself (within its boot time); a
        # controlword written before that may be ignored, so the path starts from where it goes
        deadline = time.monotonic() + max(self.boot_timeout, self.transition_timeout)
        while state == State.NOT_READY_TO_SWITCH_ON and time.monotonic() < deadline:
            time.sleep(0.005)
            sw, state = self._statusword(sdo)
        path = co.path_to_operation_enabled(state)
        for cw, expected in path:
            self._w(sdo, co.CONTROLWORD, cw)
            deadline = time.monotonic() + self.transition_timeout
            while True:
                sw, state = self._statusword(sdo)
                if state == expected:
                    break
                if time.monotonic() > deadline:
                    if state in (State.FAULT, State.FAULT_REACTION_ACTIVE):
                        raise _Failed(f"drive (CANopen node {n}) still in {state}: {self._error_text()}")
                    raise _Failed(f"CANopen node {n}: controlword 0x{cw:04X} did not bring the drive to "
                                  f"{expected} within {self.transition_timeout:g} s: it is in {state} "
                                  f"(statusword 0x{sw:04X})")
                time.sleep(0.005)
        if state != State.OPERATION_ENABLED:
            raise _Failed(f"CANopen node {n}: the drive is in {state}, not OPERATION ENABLED")
