"""The unit base classes: :class:`HardwareUnit`, :class:`UnitGroup` and :class:`CanUnit`, whose hooks
are the contract between a unit and its channel's read/write thread, and whose helpers give every
unit type the same fault detection and reset probes (see :mod:`rospy_control.devices`).
"""
from __future__ import annotations

import math
import threading
import time
from typing import Any, Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_config.document import (
    AttributeReader, UnitInfo, to_int,
)
from rospy_control.hardware_config.records import UnitConfig, constructor_settings
from rospy_control.bus.events import EventLog
from rospy_control.realtime import RealtimeBuffer

__all__ = ["HardwareUnit", "UnitGroup", "CanUnit", "SharedReply", "frame_bits", "miss_limit"]


def miss_limit(fault_timeout: float, period: Optional[float]) -> int:
    """``N``: consecutive unanswered requests before FAULT, ``max(3, ceil(fault_timeout / period))``."""
    if not period or period <= 0:
        return 3
    return max(3, int(math.ceil(fault_timeout / period - 1e-9)))


class SharedReply(NamedTuple):
    """A reply id several units of a bus answer on, told apart by a key computed from the payload.

    ``demux(data)`` returns the key of a frame (None: the frame is malformed); the channel delivers the
    frame to the unit that declared that key.  Units answering on the same id must use the same
    ``demux`` function.
    """

    arbitration_id: int
    key: object
    demux: Callable[[bytes], object]


class HardwareUnit:
    """Base of every unit.  Subclasses set ``TYPE_NAME`` and implement :meth:`read_settings`, the one
    reader of their ``<unit>`` element (or, as before, the whole of :meth:`from_info`)."""

    TYPE_NAME = ""

    def __init__(self, name: str) -> None:
        self.name = name
        #: enclosing :class:`UnitGroup`, if any
        self.group: Optional[UnitGroup] = None
        #: name of the channel the unit talks through (None for pure groups)
        self.channel_name: Optional[str] = None
        #: where the unit was configured ("file:line"), for messages
        self.where = ""

    # -- configuration: element -> record -> unit ----------------------------------------------------
    @classmethod
    def read_settings(cls, info: UnitInfo) -> Dict[str, Any]:
        """Read and check the unit's element: the constructor's keyword arguments, by name.

        The one reader of this type's schema: the driver's device and the simulated device are both
        built from what it returns (:meth:`read_config`).
        :raises ConfigError: naming the file, line, attribute and value.
        """
        raise NotImplementedError

    @classmethod
    def read_config(cls, info: UnitInfo) -> UnitConfig:
        """The unit's configuration record (:mod:`rospy_control.hardware_config.records`)."""
        if cls.read_settings.__func__ is _BASE_READ_SETTINGS:  # type: ignore[attr-defined]
            if cls.from_info.__func__ is _BASE_FROM_INFO:  # type: ignore[attr-defined]
                raise info.element.error(f"unit type {cls.__name__} implements neither read_settings nor "
                                         "from_info")
            settings: Dict[str, Any] = {}   # a type that builds itself in from_info: nothing to share
        else:
            settings = cls.read_settings(info)
        return UnitConfig(info.name, info.type, tuple(k.__name__ for k in cls.__mro__ if k is not object),
                          info.element, constructor_settings(cls, settings), tuple(settings),
                          channel=info.channel, group=info.group, members=info.members,
                          simulation=info.element.child("simulation"), info=info)

    @classmethod
    def from_config(cls, config: UnitConfig) -> "HardwareUnit":
        """Build the unit from its record: the constructor gets the arguments the reader read.

        :raises ConfigError: a combination of values the constructor refuses, naming the element.
        """
        own_builder = cls.from_info.__func__ is not _BASE_FROM_INFO  # type: ignore[attr-defined]
        if not config.arguments and own_builder:
            return cls.from_info(config.info)
        kwargs = {k: config.settings[k] for k in config.arguments}
        try:
            unit = cls(config.name, **kwargs)
        except ConfigError as err:
            if err.source is not None or config.where in str(err):
                raise
            raise ConfigError(f"{err} ({config.where})") from None
        unit.where = config.where
        unit.configured()
        return unit

    @classmethod
    def from_info(cls, info: UnitInfo) -> "HardwareUnit":
        """Build the unit from its XML element (phase 2): :meth:`from_config` of :meth:`read_config`.
        :raises ConfigError: on any bad attribute."""
        return cls.from_config(cls.read_config(info))

    def configured(self) -> None:
        """Called once the unit is built from its configuration (checks that need the whole unit)."""

    def state(self):
        """Latest published state record (None for groups)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}('{self.name}')"


_BASE_READ_SETTINGS = HardwareUnit.read_settings.__func__  # type: ignore[attr-defined]
_BASE_FROM_INFO = HardwareUnit.from_info.__func__  # type: ignore[attr-defined]


class UnitGroup(HardwareUnit):
    """A named composite of units (e.g. a leg with its motors and foot contact)."""

    TYPE_NAME = "rospy_control/UnitGroup"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._children: Dict[str, HardwareUnit] = {}

    @classmethod
    def read_settings(cls, info: UnitInfo) -> Dict[str, Any]:
        AttributeReader(info.element, ignore=("name", "type", "channel")).finish()
        return {}

    def add(self, unit: HardwareUnit) -> None:
        """Add a child unit."""
        self._children[unit.name] = unit
        unit.group = self

    def children(self) -> List[HardwareUnit]:
        """Direct children in configuration order."""
        return list(self._children.values())

    def leaves(self) -> List[HardwareUnit]:
        """All non-group units below this group, depth first."""
        out: List[HardwareUnit] = []
        for c in self._children.values():
            out.extend(c.leaves() if isinstance(c, UnitGroup) else [c])
        return out

    def find(self, name: str) -> HardwareUnit:
        """Find a unit by name among direct children, then recursively."""
        if name in self._children:
            return self._children[name]
        for c in self._children.values():
            if isinstance(c, UnitGroup):
                try:
                    return c.find(name)
                except KeyError:
                    pass
        raise KeyError(f"Could not find unit '{name}' in group '{self.name}'")

    def __iter__(self) -> Iterator[HardwareUnit]:
        return iter(self._children.values())

    def __len__(self) -> int:
        return len(self._children)


#: the channel contract's methods under their former, private names (see ``CanUnit.__init_subclass__``)
_RENAMED_HOOKS = tuple("_" + n for n in (
    "attach", "activate", "deactivate", "poll", "awaited_replies", "on_frame", "on_receive_error",
    "on_bus_off", "bus_off_poll", "end_cycle", "exit_message", "begin_poll", "got_reply", "report_error",
    "judge", "set_fault", "emit", "on_fault", "on_probe_start", "on_probe_failed", "on_recovered"))


def frame_bits(dlc: int, extended: bool = False) -> int:
    """Worst-case bits on the wire of one classic CAN data frame incl. stuffing and interframe space."""
    if extended:
        return 67 + 8 * dlc + (54 + 8 * dlc - 1) // 4
    return 47 + 8 * dlc + (34 + 8 * dlc - 1) // 4


class CanUnit(HardwareUnit):
    """A unit that is polled over a CAN channel.

    **Channel contract.**  The channel calls these methods, and only from its read/write thread
    (except :meth:`exit_message` / :meth:`deactivate`, called once at shutdown after the thread
    stopped).  The base implementations are complete for a unit that sends nothing; a subclass
    overrides :meth:`poll`, :meth:`on_frame`, :meth:`end_cycle` and :meth:`bits_per_cycle`, and
    uses the helpers :meth:`begin_poll`, :meth:`got_reply`, :meth:`report_error` and
    :meth:`judge` so that fault detection and reset probes behave the same for every unit type.

    * ``request_ids()`` / ``reply_ids()``: arbitration ids this unit sends to / receives on alone;
    * ``shared_reply(master_id)``: a :class:`SharedReply` if the unit answers on an id shared with
      other units (MIT motors on the channel's master id), else None;
    * ``bits_per_cycle()``: for the bus-load estimate;
    * ``activate(now, enable, fault_timeout, period, command_timeout)``: the thread is about to
      start;
    * ``poll(now) -> can.Message | None``: the frame to send this cycle (``now`` = cycle start);
      the unit then awaits its replies -- a frame that fails to send stays unanswered;
    * ``awaited_replies() -> int``: reply frames the channel should wait for after that send;
    * ``on_frame(arb_id, data, now) -> int``: decode a received frame, return how many awaited
      frames it satisfied;
    * ``on_receive_error()``: the receive path failed this cycle; the unit counts its request as
      unanswered even if nothing was awaited (a broken bus must lead to timeouts, not silence);
    * ``on_bus_off(reason)``: the controller went bus-off (FAULT now); while it stays off the channel
      calls ``bus_off_poll(reason)`` instead of ``poll`` (sends nothing, fails pending resets);
    * ``end_cycle(now, on_time) -> state``: judge the cycle and return this cycle's immutable state;
      ``on_time`` False (host stall) means unanswered requests of this cycle neither count as misses
      nor end the miss streak.  (A cycle excused because a simulated device's firmware ran late is
      still on time for a unit from which no frame came for twice its :attr:`detection_time` while
      other units of the channel answered: that silence is the unit's own.);
    * ``exit_message()``: the frame to send at shutdown (None: nothing), then ``deactivate()``.
    """

    FRAMES_PER_POLL = 1
    #: what a reset probe sends, for messages ("reset failed: no reply to <PROBE_REQUEST> ...")
    PROBE_REQUEST = "poll"
    #: what the unit is, for messages ("a <UNIT_KIND> needs a channel")
    UNIT_KIND = "unit"
    #: seconds of unanswered requests before FAULT when neither the unit nor its channel sets
    #: ``fault_timeout`` (the channel's default)
    DEFAULT_FAULT_TIMEOUT = 0.1

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        # the channel contract's methods had private names before; a unit written against them would
        # be silently ignored by the channel (it calls the public names), so refuse it loudly
        for old in _RENAMED_HOOKS:
            if old in vars(cls):
                raise TypeError(f"{cls.__qualname__} defines {old}(), which the channel no longer calls: "
                                f"the channel contract's methods are public now, override {old[1:]}()")

    def __init__(self, name: str, can_id: int, fault_timeout: Optional[float] = None) -> None:
        super().__init__(name)
        if not 0 <= can_id <= 0x7FF:
            raise ConfigError(f"unit '{name}': can_id 0x{can_id:X} outside 0x000..0x7FF")
        self.can_id = can_id
        #: seconds without a reply before FAULT; None = the channel's default
        self.fault_timeout = fault_timeout
        self.reply_timeouts = 0   #: on-time cycles in which an awaited reply did not arrive in time
        self.bad_frames = 0       #: frames for this unit that could not be decoded
        self.watchdog_trips = 0   #: times the command watchdog took over (motors)
        #: channel-clock time the channel last routed a frame to this unit, whatever the unit made of
        #: it (0.0: none yet); written by the channel
        self.last_heard = 0.0
        self._fault = False
        self._fault_reason = ""
        self._fault_time = 0.0
        self._active = False
        self._awaiting = 0
        self._sent_at = 0.0       # cycle start of the latest request
        self._streak = 0          # consecutive unanswered requests (on-time cycles only)
        self._streak_since = 0.0  # when the first of them was sent
        self._miss_limit = 3
        self._last_reply = 0.0
        self._received = False
        self._timeout = self.DEFAULT_FAULT_TIMEOUT  # the effective one is known at activate
        self._period = 0.0
        #: latest state record (a NamedTuple of the unit type's own; subclasses narrow the type)
        self._state: Optional[tuple] = None
        # reset requests: callers bump _reset_req (under _reset_lock); the channel thread takes it,
        # probes, then publishes ``(ticket done, recovered, reason)`` as one value in _reset_outcome
        self._reset_lock = threading.Lock()
        self._reset_req = 0
        self._reset_seen = 0
        self._reset_outcome: RealtimeBuffer[Tuple[int, bool, str]] = RealtimeBuffer(
            (0, True, ""), name=f"unit {self.name} reset outcome")
        self._probing = False
        self._probe_ok = False
        self._probe_error: Optional[str] = None
        self._events: Optional[EventLog] = None

    # -- public -------------------------------------------------------------------------------------
    def state(self):
        return self._state

    @property
    def fault(self) -> bool:
        """In FAULT (also while a reset is being probed)."""
        return self._fault

    @property
    def active(self) -> bool:
        """Activated to command the device (False before :meth:`activate`, after :meth:`deactivate`,
        and when listening only)."""
        return self._active

    @property
    def fault_reason(self) -> str:
        return self._fault_reason

    @property
    def fault_time(self) -> float:
        """``time.time()`` of the fault, 0.0 if not in FAULT."""
        return self._fault_time

    @property
    def detection_time(self) -> float:
        """Shortest time (s) of unanswered on-time requests before FAULT (or a failed reset probe):
        ``max(fault_timeout, N * period)``; known once the channel started."""
        return max(self._timeout, self._miss_limit * self._period)

    @property
    def resetting(self) -> bool:
        """A reset probe is in progress (the unit is still in FAULT)."""
        return self._probing

    def reset_fault(self) -> int:
        """Request a fault reset (non-blocking); the channel thread probes the unit at its next cycle.

        Returns a ticket for :meth:`reset_outcome`.  A unit not in FAULT is left alone (the request
        completes at once, as recovered).
        """
        with self._reset_lock:
            self._reset_req += 1
            ticket = self._reset_req
        if self._fault:
            self.emit("reset_requested", f"reset requested (fault: {self._fault_reason})")
        return ticket

    def reset_outcome(self, ticket: int) -> Optional[Tuple[bool, str]]:
        """``(recovered, reason)`` once the reset of ``ticket`` finished, None while pending."""
        done, recovered, reason = self._reset_outcome.read_from_non_rt()
        if done >= ticket:
            return recovered, reason
        return None

    @classmethod
    def _can_kwargs(cls, info: UnitInfo, r: AttributeReader) -> dict:
        """Constructor arguments every CAN unit's element has: ``can_id`` and ``fault_timeout``.

        :raises ConfigError: the unit has no channel, or a bad value.
        """
        if info.channel is None:
            raise info.element.error(f"a {cls.UNIT_KIND} needs a channel: set attribute 'channel' here or on "
                                     "an enclosing <group>")
        return dict(
            can_id=r.get("can_id", to_int, check=lambda v: 0 <= v <= 0x7FF,
                         expected="an integer CAN id 0x000..0x7FF"),
            fault_timeout=r.seconds("fault_timeout", None),
        )

    def request_ids(self) -> Tuple[int, ...]:
        return (self.can_id,)

    def reply_ids(self) -> Tuple[int, ...]:
        return ()

    def extended_routes(self) -> Tuple[Tuple[int, int], ...]:
        """29-bit frames this unit reads, as ``(mask, value)`` pairs: a received extended-id frame
        whose ``arbitration_id & mask == value`` goes to :meth:`on_frame` (protocols that put a
        command type or status bits in the id, as RobStride and CubeMars V3 do).  None by default."""
        return ()

    def shared_reply(self, master_id: int) -> Optional[SharedReply]:
        """The shared reply id this unit answers on (with its demux key), None if it has its own ids."""
        return None

    def bits_per_cycle(self) -> int:
        raise NotImplementedError

    # -- channel contract ---------------------------------------------------------------------------
    def attach(self, channel_name: str, events: Optional[EventLog]) -> None:
        """Called when the unit is added to a channel (and when the event log is replaced)."""
        self.channel_name = channel_name
        self._events = events

    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        """The channel thread is about to start: ``enable`` False = listen only (send nothing).

        :param fault_timeout: the channel's default (the unit's own ``fault_timeout`` wins).
        :param period: the channel's nominal cycle period, for the miss count ``N``.
        :param command_timeout: seconds without a new command before the command watchdog holds an
            actuator (0 = off); ignored by units without commands.
        """
        self._active = enable
        self._last_reply = now
        self._sent_at = now
        self._streak = 0
        self._awaiting = 0
        self._timeout = fault_timeout if self.fault_timeout is None else self.fault_timeout
        self._period = period if period else 0.0
        self._miss_limit = miss_limit(self._timeout, period)

    def deactivate(self) -> None:
        """The channel stopped (after :meth:`exit_message` was sent)."""
        self._active = False
        self._awaiting = 0

    def poll(self, now: float) -> Optional[can.Message]:
        """The frame to send this cycle (None: nothing).  Base: handles reset requests, sends nothing."""
        self.begin_poll(now)
        return None

    def awaited_replies(self) -> int:
        """Reply frames awaited for the frame :meth:`poll` just returned."""
        return self._awaiting

    def on_frame(self, arb_id: int, data, now: float) -> int:
        """Decode one frame routed to this unit; return the number of awaited frames it satisfied."""
        return 0

    def on_receive_error(self) -> None:
        """The receive path failed this cycle: count this cycle's request as unanswered."""
        if self._awaiting == 0 and self._active and (self._probing or not self._fault):
            self._awaiting = 1

    def on_bus_off(self, reason: str) -> None:
        """The channel's controller went bus-off: FAULT with ``reason`` now (a probe in progress fails);
        nothing awaited any more.  Safe state: a motor is sent nothing until its reset, and its one
        exit-motor-mode frame goes out as soon as the bus is back (:meth:`on_fault`)."""
        self._awaiting = 0
        if self._probing:
            self._probe_failed("reset failed: " + reason)
        else:
            self.set_fault(reason)

    def bus_off_poll(self, reason: str) -> Optional[can.Message]:
        """Instead of :meth:`poll` while the channel is bus-off: send nothing, and answer a pending reset
        request at once as failed (``"reset failed: " + reason``)."""
        req = self._reset_req
        if req == self._reset_seen:
            return None
        self._reset_seen = req
        if not self._fault:
            self._finish_reset(True, "")
            return None
        self._fault_reason = why = "reset failed: " + reason
        self.emit("reset_failed", why)
        self._finish_reset(False, why)
        return None

    def end_cycle(self, now: float, on_time: bool = True):
        """Judge this cycle (timeouts, reset probe) and return the state record to publish."""
        if self._awaiting or self._probing:
            self.judge(now, on_time)
        return self._state

    def exit_message(self) -> Optional[can.Message]:
        """Frame to send at shutdown (exit-motor-mode), None for nothing."""
        return None

    # -- helpers for subclasses (channel thread) ------------------------------------------------------
    def emit(self, kind: str, message: str) -> None:
        ev = self._events
        if ev is not None:
            ev.append(self.name, self.channel_name or "", kind, message)

    def set_fault(self, reason: str) -> None:
        if not self._fault:
            self._fault_reason = reason
            self._fault_time = time.time()
            self._fault = True
            self._streak = 0
            self.on_fault()
            self.emit("fault", reason)

    def report_error(self, reason: str, still: str) -> None:
        """The device reports an error: FAULT with ``reason``; during a reset probe the probe fails with
        ``"reset failed: " + still``."""
        if self._probing:
            if self._probe_error is None:
                self._probe_error = "reset failed: " + still
        else:
            self.set_fault(reason)

    def got_reply(self, now: float, state: bool = True) -> None:
        """A frame from the device was decoded: it is alive (ends the miss streak).

        :param state: the device's position has been decoded (from this frame or an earlier one), so
            the snapshot's values are the device's (``received``).  False for answers that carry no
            position (register or parameter replies, SDO answers, heartbeats): they prove the device
            alive, but a RobotHW that took the default position 0 for real would command the joint
            there the moment it holds.
        """
        self._last_reply = now
        if state:
            self._received = True
        if not self._probing:
            self._streak = 0

    def begin_poll(self, now: float) -> None:
        """Call first in :meth:`poll`: takes a pending reset request."""
        req = self._reset_req
        if req == self._reset_seen:
            return
        self._reset_seen = req
        if self._probing:
            return  # joins the probe in progress
        if not self._fault:
            self._finish_reset(True, "")
            return
        if not self._active:
            # listen-only: nothing can be probed; the fault came from a reply, clear it as asked
            self._clear_fault()
            self.emit("recovered", "fault cleared (listen-only: nothing was probed)")
            self._finish_reset(True, "")
            return
        self._probing = True
        self._probe_ok = False
        self._probe_error = None
        self._streak = 0
        self.on_probe_start(now)

    def judge(self, now: float, on_time: bool) -> None:
        """Timeouts and reset-probe outcome of one cycle (call from :meth:`end_cycle`)."""
        awaiting = self._awaiting
        self._awaiting = 0
        if self._probing:
            if self._probe_error is not None:
                self._probe_failed(self._probe_error)
            elif self._probe_ok and not awaiting:
                old = self._fault_reason
                self._clear_fault()
                self.on_recovered(now)
                self.emit("recovered", f"recovered after reset (fault was: {old})")
                self._finish_reset(True, "")
            elif awaiting and on_time:
                elapsed = self._count_miss(now)
                if elapsed is not None:
                    self._probe_failed(f"reset failed: no reply to {self.PROBE_REQUEST} for "
                                       f"{1000.0 * elapsed:.0f} ms")
            return
        if not awaiting or self._fault or not on_time:
            return
        self.reply_timeouts += 1
        elapsed = self._count_miss(now)
        if elapsed is not None:
            self.set_fault(f"no reply for {1000.0 * elapsed:.1f} ms (fault_timeout "
                           f"{1000.0 * self._timeout:.1f} ms), {self._streak} requests unanswered")

    def _count_miss(self, now: float) -> Optional[float]:
        """Count one unanswered request; the streak's duration if it reached FAULT, else None."""
        s = self._streak = self._streak + 1
        if s == 1:
            self._streak_since = self._sent_at
        elapsed = now - self._streak_since
        if s >= self._miss_limit and elapsed >= self._timeout:
            return elapsed
        return None

    def _probe_failed(self, reason: str) -> None:
        self._probing = False
        self._fault_reason = reason
        self._streak = 0
        self.on_probe_failed()
        self.emit("reset_failed", reason)
        self._finish_reset(False, reason)

    def _clear_fault(self) -> None:
        self._probing = False
        self._fault = False
        self._fault_reason = ""
        self._fault_time = 0.0
        self._streak = 0

    def _finish_reset(self, recovered: bool, reason: str) -> None:
        self._reset_outcome.write_from_rt((self._reset_seen, recovered, reason))

    # hooks of the fault life cycle (channel thread)
    def on_fault(self) -> None:
        """Just went to FAULT."""

    def on_probe_start(self, now: float) -> None:
        """A reset probe starts; the next :meth:`poll` sends the probe request."""

    def on_probe_failed(self) -> None:
        """The probe failed; the unit stays in FAULT."""

    def on_recovered(self, now: float) -> None:
        """The probe succeeded; the fault is cleared."""
