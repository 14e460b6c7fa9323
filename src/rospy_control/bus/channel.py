"""CAN channels: a python-can bus plus one read/write thread that, every cycle, sends the units'
latest commands and publishes the states their replies carry.

Cycle (``rate`` Hz, absolute deadlines on ``time.perf_counter``)::

    sleep until the cycle's start time
    drain frames that arrived since the last cycle (late replies, unsolicited frames)
    send one frame per unit (motor command / enter / zero, sensor poll)      -- pipelined
    receive until every awaited reply arrived or ``reply_window * period`` elapsed
    judge the cycle: did the host run this thread on time? (:class:`~.timing.CycleTiming`)
    per unit: count a missed reply (on-time cycles only), FAULT after N misses and fault_timeout
    publish the immutable per-unit states of this cycle (a consistent snapshot)

Host lateness is measured on its own (:mod:`.timing`): a cycle that starts more than
``max(period / 2, 2 ms)`` after its scheduled time is *late*, one whose collect phase ran more than
``max(period, 5 ms)`` past its reply window is *stretched*; in either the units are not blamed for
missing replies.  A cycle held up by 20 ms or more is a *stall*, counted and logged (throttled) as a
host problem.  A cycle whose work ends after the next cycle's start is an *overrun* (the schedule is
then re-anchored, never bursts).

The channel knows no device protocol: it talks to units only through the hooks declared on
:class:`~.units.CanUnit` (``poll``, ``on_frame``, ``end_cycle``, ...), and routes a frame by its
arbitration id, or, on a reply id several units share (MIT motors on the master id), by the key the
units' own demultiplexer computes from the payload (:meth:`~.units.CanUnit.shared_reply`).

Errors on the thread (python-can send/receive errors, a bug in a decoder) never kill the thread
and are never lost: they are counted, logged with throttling, kept, and re-raised in the caller's
thread by :meth:`CanChannel.check` as :class:`~rospy_control.exceptions.CommunicationError`.
"""
from __future__ import annotations

import threading
import time
from array import array
from typing import Any, Callable, Dict, List, Optional, Tuple

import can

from rospy_control.exceptions import CommunicationError, ConfigError
from rospy_control.log import TRACE, Throttle, get_logger
from rospy_control.bus.adapter import (  # noqa: F401 - part of this module's surface
    CAN_ERR_BUSOFF, CAN_ERR_RESTARTED, VALID_BITRATES, _says_bus_off, open_bus,
)
from rospy_control.bus.channel_config import ChannelConfiguration
from rospy_control.bus.events import EventLog
from rospy_control.bus.liveness import LivenessPolicy
from rospy_control.bus.routing import UnitRouting
from rospy_control.bus.timing import CycleTiming
from rospy_control.devices import CanUnit
from rospy_control.realtime import RealtimeBuffer, join_thread, start_thread

__all__ = ["CanChannel", "VALID_BITRATES", "open_bus", "CAN_ERR_BUSOFF", "CAN_ERR_RESTARTED"]

logger = get_logger(__name__)

_RING = 1 << 16


class CanChannel(ChannelConfiguration, UnitRouting):
    """One CAN bus and its read/write thread.

    :param name: channel name used by units (``channel="can0"``).
    :param interface: python-can interface name (``socketcan``, ``pcan``, ``kvaser``, ``slcan``,
        ``virtual``, ...).
    :param channel: the interface's channel (``can0``, ``PCAN_USBBUS1``, ...).
    :param bitrate: bit/s of the real bus (also used for the bus-load estimate).
    :param rate: cycles per second of the read/write thread.
    :param master_id: arbitration id motors answer on (MIT ``CAN_MASTER``, default 0).
    :param reply_window: fraction of the period spent waiting for replies.
    :param fault_timeout: seconds of unanswered requests before a unit goes to FAULT (units may
        override); see :mod:`.units` for the rule.
    :param max_bus_load: warn at start-up when the estimated load exceeds this fraction.
    :param command_timeout: seconds without a new command before the command watchdog holds a motor
        (0 = off).
    :param clock, sleep: the thread's monotonic clock and sleep (``time.perf_counter``, ``time.sleep``);
        injectable so that tests can drive :meth:`_cycle` on a simulated clock.
    """

    TYPE_NAME = "rospy_control/CanChannel"
    #: join timeout for the thread at shutdown (seconds)
    JOIN_TIMEOUT = 2.0
    #: the longest shutdown waits for the replies to the exit-motor-mode frames (seconds); it returns as
    #: soon as every motor answered.  Generous: on a busy host the firmware's answer (or, simulated, the
    #: firmware thread itself) can take a few hundred ms, and a motor left in motor mode is worse.
    EXIT_REPLY_WAIT = 0.5
    #: seconds between two host-stall log records of one channel
    STALL_LOG_PERIOD = 5.0
    # Defaults of the constructor's arguments, which are also the hardware XML's (docs/hardware_xml.md).
    DEFAULT_BITRATE = 1000000
    #: cycles per second, unless ``<hardware rate>`` or ``<channel rate>`` says otherwise
    DEFAULT_RATE = 500.0
    DEFAULT_MASTER_ID = 0
    DEFAULT_REPLY_WINDOW = 0.8
    DEFAULT_FAULT_TIMEOUT = CanUnit.DEFAULT_FAULT_TIMEOUT
    DEFAULT_MAX_BUS_LOAD = 0.8
    #: unless ``<hardware command_timeout>`` or ``<channel command_timeout>`` says otherwise
    DEFAULT_COMMAND_TIMEOUT = 0.05

    def __init__(self, name: str, interface: str = "socketcan", channel: str = "can0",
                 bitrate: int = DEFAULT_BITRATE, rate: float = DEFAULT_RATE,
                 master_id: int = DEFAULT_MASTER_ID, reply_window: float = DEFAULT_REPLY_WINDOW,
                 fault_timeout: float = DEFAULT_FAULT_TIMEOUT, max_bus_load: float = DEFAULT_MAX_BUS_LOAD,
                 where: str = "", command_timeout: float = DEFAULT_COMMAND_TIMEOUT,
                 clock: Optional[Callable[[], float]] = None,
                 sleep: Optional[Callable[[float], None]] = None) -> None:
        if bitrate not in VALID_BITRATES:
            raise ConfigError(f"channel '{name}': bitrate {bitrate} is not a classic CAN bitrate")
        if not rate > 0:
            raise ConfigError(f"channel '{name}': rate must be > 0")
        if not command_timeout >= 0:
            raise ConfigError(f"channel '{name}': command_timeout must be >= 0")
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
        self.command_timeout = command_timeout
        self.where = where
        self.units: List[CanUnit] = []
        self._routes: Dict[int, CanUnit] = {}
        #: (mask, value, unit) of the units' 29-bit ids (CanUnit.extended_routes)
        self._ext_routes: List[Tuple[int, int, CanUnit]] = []
        # shared reply id -> (demux, {key: unit})
        self._shared: Dict[int, Tuple[Callable, Dict[object, CanUnit]]] = {}
        self._ids: Dict[int, str] = {master_id: "master_id"}
        self._bus: Optional[can.BusABC] = None
        self._thread: Optional[threading.Thread] = None
        self._running = False
        self._closed = False
        self._lock = threading.Lock()
        #: held for every frame sent on the bus: the channel thread's, and a unit's protocol library
        #: sending from a thread of its own (CiA 402's SDO worker through canopen, see ``bind_bus``)
        self.send_lock = threading.Lock()
        self._errors: List[BaseException] = []
        self._throttle = Throttle(5.0)
        self._stall_log = Throttle(self.STALL_LOG_PERIOD)
        self._first_cycle = threading.Event()
        #: the peer's liveness policy (:class:`~rospy_control.bus.liveness.LivenessPolicy`), given by
        #: whoever opens the bus against a peer that shares this host (a peer such as the simulator);
        #: None on hardware.  A cycle in which the peer did not run (``liveness.stalled``) is, like a
        #: late bus thread, not blamed on the units; a unit silent only since the peer's latest drop of
        #: frames (``liveness.last_drop``) is not blamed either
        self.liveness: Optional[LivenessPolicy] = None
        #: cycles excused because the peer did not run (:attr:`liveness`)
        self.peer_stalls = 0
        self._clock = clock or time.perf_counter
        self._sleep = sleep or time.sleep
        self._next_t = 0.0
        self.event_log = EventLog()
        self.timing = CycleTiming(self.period, self.period * reply_window)
        # the latest cycle as one ``(stamp, {unit name: state record})`` tuple, published by the channel
        # thread in one write and read by any thread (the two halves can never be read from two cycles)
        self._published: RealtimeBuffer[Tuple[float, Dict[str, Any]]] = RealtimeBuffer(
            (0.0, {}), name=f"channel {self.name} snapshot")
        # statistics (written by the thread only)
        self.cycles = 0
        self.overruns = 0
        self.frames_sent = 0
        self.frames_received = 0
        self.unknown_frames = 0
        self.bad_frames = 0
        self.bus_errors = 0
        self.tx_errors = 0
        self.rx_errors = 0
        self.thread_errors = 0
        #: bus-off (error frame with CAN_ERR_BUSOFF, or a send/receive error saying so) until the
        #: controller restarted (CAN_ERR_RESTARTED) or a unit's reply arrived; nothing is sent meanwhile
        self.bus_off = False
        self.bus_off_count = 0
        self.bus_off_since = 0.0  # time.time() of the latest bus-off
        self._bus_off_reason = ""
        self._starts = array("d", bytes(8 * _RING))
        self._busy = array("d", bytes(8 * _RING))

    @property
    def late_cycles(self) -> int:
        """Cycles that started late (see :mod:`.timing`)."""
        return self.timing.late_cycles

    # -- configuration ------------------------------------------------------------------------------
    # -- lifecycle ----------------------------------------------------------------------------------
    @property
    def is_open(self) -> bool:
        return self._bus is not None

    @property
    def published(self) -> Tuple[float, Dict[str, Any]]:
        """``(cycle stamp, {unit name: state record})`` of the latest cycle, read as one value."""
        return self._published.read_from_non_rt()

    def states_reader(self) -> Callable[[], Tuple[float, Dict[str, Any]]]:
        """A function returning :attr:`published` (for a reader that asks every cycle: one call)."""
        return self._published.read_from_rt

    @property
    def states(self) -> Dict[str, Any]:
        """``{unit name: state record}`` of the latest cycle; each record's type (MotorState, ImuState,
        ...) depends on its unit.  With the stamp, read :attr:`published` (one value)."""
        return self._published.read_from_non_rt()[1]

    @property
    def cycle_stamp(self) -> float:
        """Clock time of the latest cycle's end (0.0 before the first)."""
        return self._published.read_from_non_rt()[0]

    @property
    def thread(self) -> Optional[threading.Thread]:
        """The read/write thread while it runs."""
        return self._thread

    def open(self, interface: Optional[str] = None, channel=None, **bus_kwargs: Any) -> None:
        """Open the bus (``interface``/``channel`` override the configured ones, e.g. for a simulated peer;
        ``bus_kwargs`` go to python-can, e.g. ``port`` of ``udp_multicast``).

        :raises CommunicationError: the bus cannot be opened (message names interface and channel).
        """
        if self._bus is not None:
            return
        self._closed = False
        iface = interface or self.interface
        ch = channel if channel is not None else self.channel
        self._bus = open_bus(iface, ch, self.bitrate, where=f"channel '{self.name}' at {self.where}",
                             receive_own_messages=False, **bus_kwargs)
        logger.info("channel '%s': opened %s", self.name, self._bus.channel_info)

    def start(self, enable: bool = True) -> None:
        """Start the read/write thread.  ``enable=False`` only listens (no frames are sent)."""
        if self._bus is None:
            raise CommunicationError(f"channel '{self.name}': start() before open()")
        if self._thread is not None:
            return
        self._prepare(enable)
        self._running = True
        self._first_cycle.clear()
        self._thread = start_thread(self._run, f"channel.{self.name}")

    def _prepare(self, enable: bool) -> None:
        """Activate the units and anchor the schedule (start of the thread; tests call it directly)."""
        now = self._clock()
        for u in self.units:
            # a unit whose protocol library sends on the bus itself (CiA 402 through canopen) gets it
            bind = getattr(u, "bind_bus", None)
            if bind is not None and self._bus is not None:
                bind(self._bus, self.send_lock)
        for u in self.units:
            u.activate(now, enable, self.fault_timeout, self.period, self.command_timeout)
        self._next_t = now

    def wait_first_cycle(self, timeout: float = 1.0) -> bool:
        """Block until the thread has published one cycle (for start-up)."""
        return self._first_cycle.wait(timeout)

    def stop(self) -> bool:
        """Stop the thread (idempotent).  False when it did not join within :attr:`JOIN_TIMEOUT`: it is
        reported by name and kept (:attr:`thread`), since it may still be using the bus."""
        self._running = False
        if not join_thread(self._thread, self.JOIN_TIMEOUT, owner=f"channel '{self.name}'"):
            return False
        self._thread = None
        return True

    def shutdown(self) -> bool:
        """Stop the thread, send every motor the exit-motor-mode frame, close the bus. Idempotent.

        If the thread does not stop, the bus is left alone (no exit frames, not closed: using it from
        this thread while the bus thread may still be in ``send``/``recv`` is not safe) and False is
        returned; a later call tries again."""
        if self._closed:
            return True
        if not self.stop():
            logger.error("channel '%s': NOT sending exit-motor-mode frames and NOT closing the bus: its "
                         "read/write thread '%s' is still running", self.name,
                         self._thread.name if self._thread is not None else "?")
            return False
        bus = self._bus
        if bus is not None:
            sent = 0
            for u in self.units:
                msg = u.exit_message()
                if msg is None:
                    continue
                try:
                    with self.send_lock:
                        bus.send(msg, timeout=0.01)
                    sent += 1
                    self.frames_sent += 1
                except (can.CanError, OSError) as err:
                    self.tx_errors += 1
                    logger.warning("channel '%s': could not send exit-motor-mode to '%s': %s",
                                   self.name, u.name, err)
                u.deactivate()
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
                if self._route(msg) is not None:
                    got += 1
                    self._dispatch(msg, time.perf_counter())
            try:
                bus.shutdown()
            except (can.CanError, OSError) as err:  # pragma: no cover - adapter specific
                logger.warning("channel '%s': error while closing the bus: %s", self.name, err)
            self._bus = None
            logger.info("channel '%s': closed (%d exit-motor-mode frames sent, %d answered)", self.name,
                        sent, got)
        self._closed = True
        return True

    def check(self) -> None:
        """Re-raise (once) the first error recorded on the thread, as CommunicationError."""
        if not self._errors:  # the control loop asks every cycle: no lock while there is none
            return
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
        if _says_bus_off(err):
            self._enter_bus_off(f"{kind} error: {err}")

    def _enter_bus_off(self, why: str) -> None:
        """The controller is bus-off: every unit goes to FAULT at once (channel thread)."""
        if self.bus_off:
            return
        self.bus_off = True
        self.bus_off_count += 1
        self.bus_off_since = time.time()
        reason = self._bus_off_reason = f"channel '{self.name}' is bus-off ({why})"
        logger.error("channel '%s' (%s/%s): CAN bus-off (%s): the CAN controller left the bus; every unit "
                     "on it goes to FAULT and is sent nothing; after the controller's automatic restart, "
                     "call ~reset_faults to re-enable them", self.name, self.interface, self.channel, why)
        for u in self.units:
            u.on_bus_off(reason)

    def _leave_bus_off(self, why: str) -> None:
        self.bus_off = False
        logger.warning("channel '%s': bus-off ended after %.2f s (%s); its units stay in FAULT until "
                       "~reset_faults", self.name, time.time() - self.bus_off_since, why)

    # -- the read/write thread ----------------------------------------------------------------------

    def _run(self) -> None:
        while self._running:
            self._cycle()

    def _cycle(self) -> None:  # noqa: C901 - the hot loop is kept in one function on purpose
        """One cycle of the read/write thread (see the module docstring)."""
        bus = self._bus
        clock = self._clock
        units = self.units
        dispatch = self._dispatch
        period = self.period
        scheduled = self._next_t
        delay = scheduled - clock()
        if delay > 0:
            self._sleep(delay)
        t0 = clock()
        last_tx: Optional[float] = None
        i = self.cycles & (_RING - 1)
        self._starts[i] = t0
        trace = logger.isEnabledFor(TRACE)
        try:
            assert bus is not None, "the read/write thread runs only while the bus is open"
            # 1. frames that arrived between cycles
            recv = bus.recv
            while True:
                msg = recv(0.0)
                if msg is None:
                    break
                self.frames_received += 1
                dispatch(msg, t0)
            # 2. send everything (pipelined)
            send = bus.send
            send_lock = self.send_lock
            pending = 0
            off = self.bus_off
            track = self.liveness is not None
            ts = t0
            for u in units:
                msg = u.bus_off_poll(self._bus_off_reason) if off else u.poll(t0)
                if msg is None:
                    continue
                if track:
                    ts = clock()
                try:
                    with send_lock:
                        send(msg, 0.001)
                except (can.CanError, OSError) as err:
                    # the request stays unanswered: the unit counts a miss and faults like a silent
                    # device, so a dead bus cannot go unnoticed
                    self.tx_errors += 1
                    self._record_error("send", err)
                    if self.bus_off:
                        break
                    continue
                if trace:
                    logger.log(TRACE, "%s TX %03X %s", self.name, msg.arbitration_id, msg.data.hex())
                self.frames_sent += 1
                n = u.awaited_replies()
                pending += n
                if track and n:
                    last_tx = ts  # the latest request that awaits a reply in this cycle's window
            # 3. collect replies until all arrived or the window closes
            deadline = t0 + self.timing.window
            while pending > 0:
                remaining = deadline - clock()
                if remaining <= 0:
                    break
                msg = recv(remaining)
                if msg is None:
                    break
                self.frames_received += 1
                if trace:
                    logger.log(TRACE, "%s RX %03X %s", self.name, msg.arbitration_id, msg.data.hex())
                pending -= dispatch(msg, clock())
        except (can.CanError, OSError) as err:
            self.rx_errors += 1
            self._record_error("receive", err)
            for u in units:
                u.on_receive_error()  # a broken receive path must lead to timeouts, not silence
        except Exception as err:  # noqa: BLE001 - a decoder bug must not kill the bus thread
            self.thread_errors += 1
            self._record_error("thread", err)
        # 4. judge the host, then the units; publish a consistent snapshot
        now = clock()
        timing = self.timing
        on_time = timing.judge(scheduled, t0, now)
        peer = self.liveness
        # the peer has to have taken the cycle's last awaited request for a missing reply to be the
        # device's
        if on_time and peer is not None and peer.stalled(t0, now, last_tx):
            on_time = False
            self.peer_stalls += 1
            states = self._end_peer_stalled_cycle(t0, now)
        else:
            states = None
        if timing.stalled:
            self._log_stall()
        try:
            if states is None:
                states = {u.name: u.end_cycle(now, on_time) for u in units}
        except Exception as err:  # noqa: BLE001
            self.thread_errors += 1
            self._record_error("thread", err)
            states = self._published.read_from_rt()[1]
        self._published.write_from_rt((now, states))
        self.cycles += 1
        self._busy[i] = now - t0
        if self.cycles == 1:
            self._first_cycle.set()
        scheduled += period
        if now > scheduled:
            self.overruns += 1
            scheduled = now
        self._next_t = scheduled

    def _end_peer_stalled_cycle(self, t0: float, now: float) -> Optional[Dict[str, Any]]:
        """End a cycle excused because the peer ran late (its :attr:`liveness` policy, see
        :mod:`rospy_control.bus.liveness`): ``{unit: state}``, or None if no unit is to be blamed.

        A peer that is merely behind still answers every frame, in order, if late: if frames of
        some unit arrived this cycle, a unit from which nothing at all arrived for twice its detection
        time is silent on its own (a peer that never catches up would otherwise hide a silent
        device for as long as the host is busy), and its unanswered request counts.  Its silence is
        counted from the peer's latest drop of frames (``liveness.last_drop()``) if that is later:
        frames dropped unanswered may have been this unit's.  The others are excused as usual."""
        units = self.units
        if not any(u.last_heard >= t0 for u in units):
            return None  # nothing answered: the peer did not run, nobody is blamed
        policy = self.liveness
        drop = policy.last_drop() if policy is not None else 0.0
        try:
            return {u.name: u.end_cycle(now, now - max(u.last_heard, drop) >= 2.0 * u.detection_time)
                    for u in units}
        except Exception as err:  # noqa: BLE001
            self.thread_errors += 1
            self._record_error("thread", err)
            return self._published.read_from_rt()[1]

    def _log_stall(self) -> None:
        t = self.timing
        if self._stall_log.ready():
            logger.warning(
                "channel '%s': host stall: this process did not run the bus thread for %.0f ms (woke %.0f ms "
                "late, %.0f ms beyond the reply window); a host scheduling problem, not a hardware fault: "
                "no unit is blamed for this cycle (stalls so far %d, longest %.0f ms)", self.name,
                1000.0 * (t.lateness + t.overtime), 1000.0 * t.lateness, 1000.0 * t.overtime, t.stalls,
                1000.0 * t.longest_stall)

    # -- diagnostics --------------------------------------------------------------------------------
    def cycle_starts(self) -> List[float]:
        """Start times (perf_counter) of the most recent cycles, oldest first (at most 65536)."""
        n = self.cycles
        if n <= _RING:
            return list(self._starts[:n])
        i = n & (_RING - 1)
        return list(self._starts[i:]) + list(self._starts[:i])

    def statistics(self) -> dict:
        """Counters of this channel.

        Host lateness (see :mod:`.timing`): ``late_cycles``, ``stretched_cycles``, ``excused_cycles``
        (cycles in which no unit was blamed), ``stalls``, ``longest_stall`` / ``last_stall`` (ms) and
        ``longest_stall_time`` / ``last_stall_time`` (``time.time()``, None before the first stall),
        ``late_threshold`` (ms).  Per unit: ``reply_timeouts`` (on-time cycles with a reply missing),
        ``watchdog_trips``.
        """
        st = {
            "interface": self.interface,
            "channel": self.channel,
            "rate": self.rate,
            "bitrate": self.bitrate,
            "bus_load_estimate": self.bus_load(),
            "cycles": self.cycles,
            "overruns": self.overruns,
            "frames_sent": self.frames_sent,
            "frames_received": self.frames_received,
            "unknown_frames": self.unknown_frames,
            "bad_frames": self.bad_frames + sum(u.bad_frames for u in self.units),
            "bus_errors": self.bus_errors,
            "tx_errors": self.tx_errors,
            "rx_errors": self.rx_errors,
            "thread_errors": self.thread_errors,
            "bus_off": self.bus_off,
            "bus_off_count": self.bus_off_count,
            "bus_off_since": self.bus_off_since if self.bus_off else None,
            "reply_timeouts": {u.name: u.reply_timeouts for u in self.units},
            "watchdog_trips": {u.name: u.watchdog_trips for u in self.units},
            "simulator_stalls": self.peer_stalls,
            "command_timeout": self.command_timeout,
        }
        st.update(self.timing.statistics())
        return st
