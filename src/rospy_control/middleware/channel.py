"""CAN channels (seed 003's *Propagate*): a python-can bus plus one read/write thread.

Cycle (``rate`` Hz, absolute deadlines on ``time.perf_counter``)::

    sleep until the cycle's start time
    drain frames that arrived since the last cycle (late replies, unsolicited frames)
    send one frame per unit (motor command / enter / zero, sensor poll)      -- pipelined
    receive until every awaited reply arrived or ``reply_window * period`` elapsed
    per unit: count a missed reply, FAULT after ``fault_timeout`` without replies
    publish the immutable per-unit states of this cycle (a consistent snapshot)

A cycle that starts more than half a period after its scheduled time is *late*; a cycle whose work
ends after the next cycle's start is an *overrun* (the schedule is then re-anchored, never bursts).

Errors on the thread (python-can send/receive errors, a bug in a decoder) never kill the thread
and are never lost: they are counted, logged with throttling, kept, and re-raised in the caller's
thread by :meth:`CanChannel.check` as :class:`~rospy_control.exceptions.CommunicationError`.
"""
from __future__ import annotations

import threading
import time
from array import array
from typing import Dict, List, Optional

import can

from rospy_control.exceptions import CommunicationError, ConfigError
from rospy_control.log import TRACE, Throttle, get_logger
from rospy_control.middleware.config import (
    AttributeReader, ChannelInfo, positive, to_float, to_int, to_str,
)
from rospy_control.middleware.units import CanUnit, Motor, frame_bits

__all__ = ["CanChannel", "VALID_BITRATES", "open_bus"]

logger = get_logger(__name__)

#: Classic CAN bitrates adapters accept (pcan silently falls back to 500k for anything else).
VALID_BITRATES = (5000, 10000, 20000, 33000, 47000, 50000, 83000, 95000, 100000, 125000, 250000,
                  500000, 800000, 1000000)

_RING = 1 << 16


def open_bus(interface: str, channel, bitrate: int, where: str = "", **kwargs) -> can.BusABC:
    """Open a python-can bus, turning every "it is not there" error into a clear CommunicationError.

    python-can raises :class:`can.CanError` subclasses, but also plain ``OSError`` (socketcan without
    the device, pcan without its library), ``TimeoutError`` (socketcand) or ``ValueError``.
    """
    try:
        return can.Bus(interface=interface, channel=channel, bitrate=bitrate, **kwargs)
    except (can.CanError, OSError, TimeoutError, ValueError, ImportError) as err:
        hint = {
            "socketcan": "is the interface up? (ip link set <channel> up type can bitrate <bitrate>)",
            "pcan": "is PEAK's PCAN-Basic library installed and the adapter plugged in?",
        }.get(interface, "is the adapter plugged in and the driver installed?")
        raise CommunicationError(
            f"cannot open CAN bus interface='{interface}' channel='{channel}'"
            f"{' (' + where + ')' if where else ''}: {type(err).__name__}: {err}; {hint}") from err


class CanChannel:
    """One CAN bus and its read/write thread.

    :param name: channel name used by units (``channel="can0"``).
    :param interface: python-can interface name (``socketcan``, ``pcan``, ``kvaser``, ``slcan``,
        ``virtual``, ...).
    :param channel: the interface's channel (``can0``, ``PCAN_USBBUS1``, ...).
    :param bitrate: bit/s of the real bus (also used for the bus-load estimate).
    :param rate: cycles per second of the read/write thread.
    :param master_id: arbitration id motors answer on (MIT ``CAN_MASTER``, default 0).
    :param reply_window: fraction of the period spent waiting for replies.
    :param fault_timeout: seconds without any reply before a unit goes to FAULT (units may override).
    :param max_bus_load: warn at start-up when the estimated load exceeds this fraction.
    """

    TYPE_NAME = "rospy_control/CanChannel"
    #: join timeout for the thread at shutdown (seconds)
    JOIN_TIMEOUT = 2.0
    #: how long shutdown waits for replies to the exit-motor-mode frames (seconds)
    EXIT_REPLY_WAIT = 0.02

    def __init__(self, name: str, interface: str = "socketcan", channel: str = "can0",
                 bitrate: int = 1000000, rate: float = 500.0, master_id: int = 0, reply_window: float = 0.8,
                 fault_timeout: float = 0.1, max_bus_load: float = 0.8, where: str = "") -> None:
        if bitrate not in VALID_BITRATES:
            raise ConfigError(f"channel '{name}': bitrate {bitrate} is not a classic CAN bitrate")
        if not rate > 0:
            raise ConfigError(f"channel '{name}': rate must be > 0")
        self.name = name
        self.interface = interface
        self.channel = channel
        self.bitrate = bitrate
        self.rate = float(rate)
        self.period = 1.0 / self.rate
        self.master_id = master_id
        self.reply_window = reply_window
        self.fault_timeout = fault_timeout
        self.max_bus_load = max_bus_load
        self.where = where
        self.units: List[CanUnit] = []
        self._motors_by_id: Dict[int, CanUnit] = {}
        self._routes: Dict[int, CanUnit] = {}
        self._ids: Dict[int, str] = {master_id: "master_id"}
        self._bus: Optional[can.BusABC] = None
        self._thread: Optional[threading.Thread] = None
        self._running = False
        self._closed = False
        self._lock = threading.Lock()
        self._errors: List[BaseException] = []
        self._throttle = Throttle(5.0)
        self._first_cycle = threading.Event()
        self.states: Dict[str, object] = {}
        self.cycle_stamp = 0.0
        # statistics (written by the thread only)
        self.cycles = 0
        self.late_cycles = 0
        self.overruns = 0
        self.frames_sent = 0
        self.frames_received = 0
        self.unknown_frames = 0
        self.bad_frames = 0
        self.bus_errors = 0
        self.tx_errors = 0
        self.rx_errors = 0
        self.thread_errors = 0
        self._starts = array("d", bytes(8 * _RING))
        self._busy = array("d", bytes(8 * _RING))

    # -- configuration ------------------------------------------------------------------------------
    @classmethod
    def from_info(cls, info: ChannelInfo, rate: Optional[float] = None) -> "CanChannel":
        el = info.element
        r = AttributeReader(el, ignore=("name", "type"))
        kw = dict(
            interface=r.get("interface", to_str),
            channel=r.get("channel", to_str),
            bitrate=r.get("bitrate", to_int, 1000000, check=lambda v: v in VALID_BITRATES,
                          expected="a classic CAN bitrate: " + ", ".join(str(b) for b in VALID_BITRATES)),
            rate=r.get("rate", to_float, rate if rate is not None else 500.0, check=positive,
                       expected="a positive rate in Hz"),
            master_id=r.get("master_id", to_int, 0, check=lambda v: 0 <= v <= 0x7FF,
                            expected="an integer CAN id 0x000..0x7FF"),
            reply_window=r.get("reply_window", to_float, 0.8, check=lambda v: 0 < v <= 1,
                               expected="a fraction of the period in (0, 1]"),
            fault_timeout=r.get("fault_timeout", to_float, 0.1, check=positive,
                                expected="a positive number of seconds"),
            max_bus_load=r.get("max_bus_load", to_float, 0.8, check=positive, expected="a positive fraction"),
        )
        r.finish()
        return cls(info.name, where=f"{el.source}:{el.line}", **kw)

    def add_unit(self, unit: CanUnit) -> None:
        """Register a unit; its request and reply ids must be unique on this bus."""
        ids = list(unit.request_ids()) + list(unit.reply_ids())
        for i in ids:
            if i in self._ids:
                raise ConfigError(
                    f"unit '{unit.name}' ({unit.where}): CAN id 0x{i:03X} is already used by "
                    f"'{self._ids[i]}' on channel '{self.name}'; ids must be unique per bus")
            self._ids[i] = unit.name
        if isinstance(unit, Motor):
            if unit.can_id > 0xFF:
                raise ConfigError(f"motor '{unit.name}' ({unit.where}): can_id 0x{unit.can_id:X} does not "
                                  "fit reply byte 0 (MIT replies carry the id in one byte)")
            self._motors_by_id[unit.can_id] = unit
        for i in unit.reply_ids():
            self._routes[i] = unit
        unit.channel_name = self.name
        self.units.append(unit)
        self.states[unit.name] = unit.state()

    def bus_load(self) -> float:
        """Estimated bus load (0..1+) at ``rate`` with worst-case bit stuffing (11-bit ids)."""
        bits = sum(u.bits_per_cycle() for u in self.units)
        return bits * self.rate / self.bitrate

    def max_rate(self, load: float = 1.0) -> float:
        """Highest cycle rate that keeps the estimated load at ``load``."""
        bits = sum(u.bits_per_cycle() for u in self.units) or frame_bits(8)
        return load * self.bitrate / bits

    # -- lifecycle ----------------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._bus is not None

    def open(self, interface: Optional[str] = None, channel=None) -> None:
        """Open the bus (``interface``/``channel`` override the configured ones, e.g. for simulation).

        :raises CommunicationError: the bus cannot be opened (message names interface and channel).
        """
        if self._bus is not None:
            return
        self._closed = False
        iface = interface or self.interface
        ch = channel if channel is not None else self.channel
        self._bus = open_bus(iface, ch, self.bitrate, where=f"channel '{self.name}' at {self.where}",
                             receive_own_messages=False)
        logger.info("channel '%s': opened %s", self.name, self._bus.channel_info)

    def start(self, enable: bool = True) -> None:
        """Start the read/write thread.  ``enable=False`` only listens (no frames are sent)."""
        if self._bus is None:
            raise CommunicationError(f"channel '{self.name}': start() before open()")
        if self._thread is not None:
            return
        now = time.perf_counter()
        for u in self.units:
            u._activate(now, enable, self.fault_timeout)
        self._running = True
        self._first_cycle.clear()
        self._thread = threading.Thread(target=self._run, name=f"rospy_control.channel.{self.name}",
                                        daemon=True)
        self._thread.start()

    def wait_first_cycle(self, timeout: float = 1.0) -> bool:
        """Block until the thread has published one cycle (for start-up)."""
        return self._first_cycle.wait(timeout)

    def stop(self) -> None:
        """Stop the thread (idempotent)."""
        self._running = False
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(self.JOIN_TIMEOUT)
            if t.is_alive():
                logger.error("channel '%s': read/write thread did not stop within %.1f s",
                             self.name, self.JOIN_TIMEOUT)
        self._thread = None

    def shutdown(self) -> None:
        """Stop the thread, send every motor the exit-motor-mode frame, close the bus. Idempotent."""
        if self._closed:
            return
        self.stop()
        bus = self._bus
        if bus is not None:
            sent = 0
            for u in self.units:
                msg = u._exit_message()
                if msg is None:
                    continue
                try:
                    bus.send(msg, timeout=0.01)
                    sent += 1
                    self.frames_sent += 1
                except (can.CanError, OSError) as err:
                    self.tx_errors += 1
                    logger.warning("channel '%s': could not send exit-motor-mode to '%s': %s",
                                   self.name, u.name, err)
                if hasattr(u, "_deactivate"):
                    u._deactivate()
            deadline = time.perf_counter() + self.EXIT_REPLY_WAIT
            got = 0
            while sent and got < sent:
                remaining = deadline - time.perf_counter()
                if remaining <= 0:
                    break
                try:
                    msg = bus.recv(remaining)
                except (can.CanError, OSError):
                    break
                if msg is None:
                    break
                self.frames_received += 1
                self._dispatch(msg, time.perf_counter())
                if msg.arbitration_id == self.master_id:
                    got += 1
            try:
                bus.shutdown()
            except (can.CanError, OSError) as err:  # pragma: no cover - adapter specific
                logger.warning("channel '%s': error while closing the bus: %s", self.name, err)
            self._bus = None
            logger.info("channel '%s': closed (%d exit-motor-mode frames sent)", self.name, sent)
        self._closed = True

    def check(self) -> None:
        """Re-raise (once) the first error recorded on the thread, as CommunicationError."""
        with self._lock:
            if not self._errors:
                return
            err = self._errors[0]
            self._errors.clear()
        raise CommunicationError(f"channel '{self.name}' ({self.interface}/{self.channel}): "
                                 f"{type(err).__name__}: {err}") from err

    def _record_error(self, kind: str, err: BaseException) -> None:
        with self._lock:
            if len(self._errors) < 16:
                self._errors.append(err)
        if self._throttle.ready(kind):
            logger.error("channel '%s': %s error: %s: %s", self.name, kind, type(err).__name__, err)

    # -- the read/write thread ----------------------------------------------------------------------
    def _dispatch(self, msg: can.Message, now: float) -> int:
        if msg.is_error_frame:
            self.bus_errors += 1
            if self._throttle.ready("bus_error"):
                logger.warning("channel '%s': CAN error frame received (bus errors so far: %d)",
                               self.name, self.bus_errors)
            return 0
        aid = msg.arbitration_id
        data = msg.data
        if msg.is_extended_id:
            self.unknown_frames += 1
            return 0
        if aid == self.master_id:
            if not data:
                self.bad_frames += 1
                return 0
            unit = self._motors_by_id.get(data[0])
        else:
            unit = self._routes.get(aid)
        if unit is None:
            self.unknown_frames += 1
            return 0
        return unit._on_frame(aid, data, now)

    def _run(self) -> None:  # noqa: C901 - the hot loop is kept in one function on purpose
        bus = self._bus
        send = bus.send
        recv = bus.recv
        perf = time.perf_counter
        sleep = time.sleep
        period = self.period
        window = period * self.reply_window
        late_after = 0.5 * period
        units = self.units
        dispatch = self._dispatch
        trace = logger.isEnabledFor(TRACE)
        starts = self._starts
        busy = self._busy
        mask = _RING - 1
        next_t = perf()
        while self._running:
            delay = next_t - perf()
            if delay > 0:
                sleep(delay)
            t0 = perf()
            if t0 - next_t > late_after:
                self.late_cycles += 1
            i = self.cycles & mask
            starts[i] = t0
            try:
                # 1. frames that arrived between cycles
                while True:
                    msg = recv(0.0)
                    if msg is None:
                        break
                    self.frames_received += 1
                    dispatch(msg, t0)
                # 2. send everything (pipelined)
                pending = 0
                for u in units:
                    msg = u._poll(t0)
                    if msg is None:
                        continue
                    try:
                        send(msg, 0.001)
                    except (can.CanError, OSError) as err:
                        # the unit stays "awaiting": it counts a missed reply and faults after
                        # fault_timeout like a silent device, so a dead bus cannot go unnoticed
                        self.tx_errors += 1
                        self._record_error("send", err)
                        continue
                    if trace:
                        logger.log(TRACE, "%s TX %03X %s", self.name, msg.arbitration_id, msg.data.hex())
                    self.frames_sent += 1
                    pending += u._awaiting
                # 3. collect replies until all arrived or the window closes
                deadline = t0 + window
                while pending > 0:
                    remaining = deadline - perf()
                    if remaining <= 0:
                        break
                    msg = recv(remaining)
                    if msg is None:
                        break
                    self.frames_received += 1
                    if trace:
                        logger.log(TRACE, "%s RX %03X %s", self.name, msg.arbitration_id, msg.data.hex())
                    pending -= dispatch(msg, perf())
            except (can.CanError, OSError) as err:
                self.rx_errors += 1
                self._record_error("receive", err)
                for u in units:
                    if u._awaiting == 0 and u._active and not u._fault:
                        u._awaiting = 1  # a broken receive path must lead to timeouts, not silence
            except Exception as err:  # noqa: BLE001 - a decoder bug must not kill the bus thread
                self.thread_errors += 1
                self._record_error("thread", err)
            # 4. timeouts + consistent snapshot
            now = perf()
            try:
                self.states = {u.name: u._end_cycle(now) for u in units}
            except Exception as err:  # noqa: BLE001
                self.thread_errors += 1
                self._record_error("thread", err)
            self.cycle_stamp = now
            self.cycles += 1
            busy[i] = now - t0
            if self.cycles == 1:
                self._first_cycle.set()
            next_t += period
            if now > next_t:
                self.overruns += 1
                next_t = now

    # -- diagnostics --------------------------------------------------------------------------------
    def cycle_starts(self) -> List[float]:
        """Start times (perf_counter) of the most recent cycles, oldest first (at most 65536)."""
        n = self.cycles
        if n <= _RING:
            return list(self._starts[:n])
        i = n & (_RING - 1)
        return list(self._starts[i:]) + list(self._starts[:i])

    def statistics(self) -> dict:
        """Counters of this channel (see the module docstring for late/overrun)."""
        return {
            "interface": self.interface,
            "channel": self.channel,
            "rate": self.rate,
            "bitrate": self.bitrate,
            "bus_load_estimate": self.bus_load(),
            "cycles": self.cycles,
            "late_cycles": self.late_cycles,
            "overruns": self.overruns,
            "frames_sent": self.frames_sent,
            "frames_received": self.frames_received,
            "unknown_frames": self.unknown_frames,
            "bad_frames": self.bad_frames + sum(u.bad_frames for u in self.units),
            "bus_errors": self.bus_errors,
            "tx_errors": self.tx_errors,
            "rx_errors": self.rx_errors,
            "thread_errors": self.thread_errors,
            "reply_timeouts": {u.name: u.reply_timeouts for u in self.units},
        }
