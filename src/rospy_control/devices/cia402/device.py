"""A CANopen CiA 402 servo drive behind the actuator contract: ``<unit type="rospy_control/Cia402Drive">``.

The drive is driven through the ``canopen`` library (PyPI, MIT licence; optional: imported when a
unit of this type is built, with one clear :class:`ConfigError` saying what to install when it is
missing).  Which document each part follows:

* **one reader on the bus** (:mod:`.canopen_net`): the library's ``Network`` is built on the
  channel's own python-can bus (the channel hands it over through :meth:`Cia402Drive.bind_bus`), never
  ``connect()``-ed or ``disconnect()``-ed; the channel routes the node's COB-IDs (EMCY 0x080+n, TPDOs,
  SDO response 0x580+n, heartbeat 0x700+n) to :meth:`Cia402Drive.on_frame`, which feeds the network.
* **start-up and reset** (:mod:`.bring_up`, in a named worker thread of the unit, joined when the
  drive is deactivated; it sends under the channel's send lock): NMT reset and boot-up, the SDO
  configuration in PRE-OPERATIONAL (0x1017, 0x60C2, 0x6072, the PDO mapping, the targets set to the
  measured position and zero **before** the drive is enabled), NMT start, and the 402 state machine to
  OPERATION ENABLED; the fault reset (rising edge of controlword bit 7) is the reset probe of
  ``~reset_faults``.
* **PDOs** (:mod:`.pdo_mapping`): the mapping from the EDS file or ``<rpdo>`` / ``<tpdo>`` children,
  the RPDO values of each cycle, the TPDOs decoded.
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
  (0x6076, N m at the motor) and the gear to N m of the output (:class:`.objects.UnitScale`).
"""
from __future__ import annotations

import logging
import math
import os
import threading
from typing import Any, Dict, List, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.hardware_config.document import (
    AttributeReader, UnitInfo, positive, to_float, to_int, to_str,
)
from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.bring_up import Cia402BringUp
from rospy_control.devices.cia402.common import CONFIGURING, IDLE, RUNNING
from rospy_control.devices.cia402.common import LIMP as _LIMP
from rospy_control.devices.cia402.common import DriveCommand as _Cmd
from rospy_control.devices.cia402.homing import Cia402HomingRun, HomingSettings, homing_writes, read_homing
from rospy_control.devices.cia402.pdo_mapping import Cia402PdoMapping, parse_pdo_map
from rospy_control.devices.actuator import (
    Capabilities, ControlMode, HomingState, MotorState, UnsupportedCommand,
)
from rospy_control.devices.streamed import StreamedStateActuator, StreamWatch
from rospy_control.devices.unit import frame_bits
from rospy_control.realtime.threads import start_thread

__all__ = ["Cia402Drive", "DEFAULT_EDS"]

logger = get_logger(__name__)


def _shipped_eds() -> str:
    """The generic CiA 402 object dictionary shipped with the package (``config/cia402_drive.eds``):
    beside the source tree, or, installed, in the install space's ``share/rospy_control/config``."""
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.normpath(os.path.join(here, "..", "..", "..", "..", "config", "cia402_drive.eds"))
    # <prefix>/lib/python3/dist-packages/rospy_control/devices/cia402 -> <prefix>/share/rospy_control
    installed = os.path.normpath(os.path.join(here, "..", "..", "..", "..", "..", "..", "share",
                                              "rospy_control", "config", "cia402_drive.eds"))
    return source if os.path.isfile(source) or not os.path.isfile(installed) else installed


#: the generic CiA 402 object dictionary shipped with the package (config/cia402_drive.eds)
DEFAULT_EDS = _shipped_eds()


#: one synchronous-PDO group per bus: its last unit sends the SYNC (one SYNC per cycle per bus)
_SYNC_GROUPS: Dict[int, List["Cia402Drive"]] = {}
_SYNC_LOCK = threading.Lock()


class Cia402Drive(Cia402PdoMapping, Cia402BringUp, StreamedStateActuator):
    """A CiA 402 drive on a CANopen node (see the module docstring for the documents followed)."""

    TYPE_NAME = "rospy_control/Cia402Drive"
    PROTOCOL = "CANopen CiA 402"
    PROBE_REQUEST = "the CiA 402 fault reset"
    HOLD_MODES = ("position", "none")
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
                 max_temperature: float = StreamedStateActuator.DEFAULT_MAX_TEMPERATURE,
                 fault_timeout: Optional[float] = None,
                 watchdog_mode: Optional[str] = None,
                 rpdos: Optional[Dict[int, Tuple[List[Tuple[int, int, int]], int]]] = None,
                 tpdos: Optional[Dict[int, Tuple[List[Tuple[int, int, int]], int]]] = None,
                 where: str = "", wrap: str = "off", homing: Optional[HomingSettings] = None) -> None:
        super().__init__(name, node_id, fault_timeout)
        self.where = where
        who = f"CiA 402 drive '{name}'" + (f" ({where})" if where else "")
        if not 1 <= node_id <= 127:
            raise ConfigError(f"{who}: node_id {node_id} is not in 1..127")
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
        #: one motor revolution (a single-turn encoder's span after a power cycle) at the output
        self.WRAP_PERIOD = 2.0 * math.pi / abs(gear_ratio)
        self.max_torque = int(max_torque)
        self.heartbeat = heartbeat
        self.heartbeat_timeout = heartbeat_timeout if heartbeat_timeout is not None else 3.0 * heartbeat
        self.boot_timeout = boot_timeout
        self.sdo_timeout = sdo_timeout
        self.transition_timeout = self.DEFAULT_TRANSITION_TIMEOUT
        # command (any thread -> channel thread), watchdog and step cap
        self._init_commanded(who, _LIMP, direction, zero_offset, joint, max_temperature, watchdog_mode,
                             "position", f"drive {name} command", wrap=wrap)
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
        # per drive: what its RPDOs carry
        self.CAPABILITIES = self._configure_maps(rpdos or {}, tpdos or {}, who)  # type: ignore[misc]
        #: the ``<homing>`` element (None: the drive is not homed by the driver)
        self.homing = homing
        if homing is not None:
            try:
                self._homing_writes = homing_writes(homing, counts_per_rev * gear_ratio / (2.0 * math.pi))
            except ValueError as err:
                raise ConfigError(f"{who}: <homing>: {err}") from None
            self.CAPABILITIES = self.CAPABILITIES._replace(home=True)  # type: ignore[misc]
        self._home_lock = threading.Lock()
        self._home_state = HomingState()
        self._home_requested = 0
        self._homing_run: Optional[Cia402HomingRun] = None
        #: this cycle's RPDO: homing mode, and controlword bit 4 (channel thread)
        self._home_mode = False
        self._home_start = False
        # worker thread <-> channel thread
        self._lock = threading.Lock()
        self._worker: Optional[threading.Thread] = None
        #: set to end the worker's waits (deactivate)
        self._stopping = threading.Event()
        #: the channel's send lock (bind_bus); a lock of its own until the drive is on a channel
        self._send_lock = threading.Lock()
        self._result: Optional[Tuple[bool, str]] = None
        self._phase = IDLE
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
        #: the drive's heartbeat, consumed as CiA 301 says: lost after heartbeat_timeout of silence
        self._heartbeat = StreamWatch("heartbeat", heartbeat, self.heartbeat_timeout)
        self._exit_sent = False
        self._event_sent: Dict[int, Tuple[bytes, float]] = {}
        self._err = 0
        self._state = MotorState(name, 0.0, 0.0, 0.0, None, 0, False, ControlMode.NONE, ControlMode.NONE,
                                 False, "", 0.0, False, 0.0, False)

    @classmethod
    def read_settings(cls, info: UnitInfo) -> Dict[str, Any]:
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
            heartbeat_timeout=r.seconds("heartbeat_timeout", None),
            boot_timeout=r.seconds("boot_timeout", cls.DEFAULT_BOOT_TIMEOUT),
            sdo_timeout=r.seconds("sdo_timeout", cls.DEFAULT_SDO_TIMEOUT),
            fault_timeout=r.seconds("fault_timeout", None),
            **cls.read_common(r),
        )
        r.finish()
        kw["homing"] = read_homing(el)
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
                maps[n] = (parse_pdo_map(text, f"{child.source}:{child.line}"), trans)
            kw[kind + "s"] = maps
        kw["where"] = where
        return kw

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
        if enable and self._bus is not None:
            self._start_worker(first=True)

    def deactivate(self) -> None:
        super().deactivate()
        self._stop_worker()
        self._phase = IDLE
        with _SYNC_LOCK:
            if self._group is not None and self in self._group:
                self._group.remove(self)
                if not self._group and self._bus is not None:
                    _SYNC_GROUPS.pop(id(self._bus), None)
        self.net.close()

    def poll(self, now: float) -> Optional[can.Message]:
        self._poll_start(now)       # a reset's probe begins here (CiA 402: on_probe_start starts its worker)
        self._take_result()
        if self._home_requested or self._homing_run is not None:
            self._homing_cycle(now)
        group = self._group
        producer = bool(group) and group[-1] is self and self._active  # type: ignore[index]
        self._awaiting = 0
        out: List[can.Message] = []
        if self._active and self._bus is not None:
            exit_due = self._exit_due()
            if exit_due:
                out = self._rpdos(now, quick_stop=True)
            elif exit_due is None and self._phase == RUNNING:
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
        if last is not None and self._phase == RUNNING and not self._fault:
            self._awaiting = len(self._sync_tpdos)
            self._sent_at = now
        return last

    # -- homing on demand (:mod:`.homing`) -------------------------------------------------------------------
    def request_home(self) -> int:
        """Start the drive's homing (its ``<homing>`` method) at the next cycle (any thread); the
        number of this homing, which :meth:`homing_state` shows in ``number``.

        :raises UnsupportedCommand: the XML gives the drive no ``<homing>``."""
        if self.homing is None:
            raise UnsupportedCommand(f"CiA 402 drive '{self.name}' has no <homing> in the hardware XML "
                                     f"({self.where}): add one with the drive's homing method")
        with self._home_lock:
            number = self._home_state.number + 1
            self._home_state = HomingState(True, None, "homing requested", number)
            self._home_requested = number
        return number

    def homing_state(self) -> HomingState:
        """The latest homing's state (any thread)."""
        with self._home_lock:
            return self._home_state

    def _homing_cycle(self, now: float) -> None:
        """Channel thread, every cycle while a homing is requested or runs."""
        run = self._homing_run
        if run is None:
            if self._phase != RUNNING or self._fault or self._bus is None:
                if self._fault:
                    self._homing_done(False, f"not started: the drive is in FAULT ({self._fault_reason})")
                return
            assert self.homing is not None
            with self._home_lock:
                self._home_requested = 0
            run = self._homing_run = Cia402HomingRun(
                self.homing, self._homing_writes, self._download, self._describe_write,
                start_thread, self.name, now)
            logger.info("drive '%s': homing (method %d) started", self.name, self.homing.method)
        if self._fault or self._phase != RUNNING:
            run.abort(f"the drive went to FAULT: {self._fault_reason}" if self._fault else
                      "the drive is no longer running")
        else:
            vals = self._vals
            shown = vals.get((co.MODES_OF_OPERATION_DISPLAY, 0)) if self._has_mode_display else None
            self._home_mode, self._home_start = run.step(now, vals.get((co.STATUSWORD, 0)), shown)
        if run.result is not None:
            self._home_mode = self._home_start = False
            self._homing_run = None
            self._homing_done(*run.result)

    def _homing_done(self, ok: bool, why: str) -> None:
        with self._home_lock:
            self._home_requested = 0
            self._home_state = HomingState(False, ok, why, self._home_state.number)
        # the position the drive measures now (its new zero, after a homing) is the one to hold; the
        # caller restarts its commands from there
        self._cmd_buf.write_from_non_rt(self._recovery_command())
        self._step_cap.forget()
        (logger.info if ok else logger.error)("drive '%s': %s", self.name, why)

    def _download(self, index: int, sub: int, data: bytes) -> None:
        sdo = self.node.sdo
        self._sdo(sdo, lambda: sdo.download(index, sub, data))

    def _describe_write(self, err: BaseException, text: str) -> str:
        self._doing = f"the SDO write of the {text}"
        return f"homing not started: {self._describe(err)}"

    def _watchdog(self, now: float, seq: int, cmd: _Cmd) -> _Cmd:
        """The caller's command after the command watchdog (:mod:`..commanded`, the rule of every
        protocol) and the position-step cap (:mod:`..step_cap`)."""
        if self._wd.observe(now, seq):
            self._wd_release()
        return self._cap(self._held(seq, cmd))

    def _position_hold(self, position: float) -> _Cmd:
        return _Cmd(ControlMode.POSITION, position)

    def _cap(self, cmd: _Cmd) -> _Cmd:
        if cmd.mode != ControlMode.POSITION:
            self._step_cap.forget()
            return cmd
        measured = self.direction * self._pos + self.zero_offset if self._received else None
        p = self._step_cap.apply(cmd.position, measured)
        return cmd if p == cmd.position else cmd._replace(position=p)

    def end_cycle(self, now: float, on_time: bool = True) -> MotorState:
        self._take_result()
        if self._awaiting or self._probing:
            self.judge(now, on_time)
        # heartbeat consumer: silence counted only over cycles in which the host ran on time
        lost = self.lost_stream(now, on_time)
        if self.heartbeat > 0 and self._phase == RUNNING and not self._fault and lost is not None:
            silence = 1000.0 * lost.silence
            self.set_fault(f"CANopen node {self.node_id}: no heartbeat for {silence:.0f} ms "
                           f"(heartbeat_timeout {1000.0 * self.heartbeat_timeout:.0f} ms)")
        fault = self._fault
        self._state = MotorState(
            self.name, self._pos, self._vel, self._eff, None, self._err,
            self._phase == RUNNING and not fault, self._mode, self._cmd_buf.read_from_rt().mode, fault,
            self._fault_reason, self._last_reply if self._received else 0.0, self._received, self._fault_time,
            self._wd.active)
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
        super().on_fault()
        self._phase = CONFIGURING if self._worker is not None and self._worker.is_alive() else IDLE

    def on_probe_start(self, now: float) -> None:
        if self._worker is not None and self._worker.is_alive():
            return   # a start-up or reset still runs: this probe takes its outcome
        if self.heartbeat > 0 and self._heartbeat.silence > self.heartbeat_timeout:
            # silence counted over on-time cycles only: a late host is not a dead drive
            self._probe_error = (f"reset failed: CANopen node {self.node_id} sends no heartbeat (none for "
                                 f"{1000.0 * self._heartbeat.silence:.0f} ms)")
            return
        rebooted, self._rebooted = self._rebooted, False
        self._start_worker(first=rebooted)

    def on_probe_failed(self) -> None:
        super().on_probe_failed()
        self._phase = IDLE

    def streams(self) -> Tuple[StreamWatch, ...]:
        return (self._heartbeat,)

    def on_recovered(self, now: float) -> None:
        super().on_recovered(now)
        self._heartbeat.heard(now)

    def _recovery_command(self) -> _Cmd:
        # hold the measured position, where the drive was enabled, until the caller commands again
        return _Cmd(ControlMode.POSITION, self.direction * self._pos + self.zero_offset)

    def _engage_recovery_hold(self) -> None:
        pass     # the recovery command itself holds (whatever the watchdog_mode)
