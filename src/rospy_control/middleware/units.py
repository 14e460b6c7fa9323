"""Hardware units: a name, a state and (for actuators) a command; composable into groups.

Threading model
---------------
A unit belongs to one channel.  The channel's read/write thread is the only writer of a unit's
*measured* state: it calls the hooks of :class:`CanUnit` (``_poll`` frame to send this cycle,
``_on_frame`` decode a received frame, ``_end_cycle`` judge timeouts and publish an immutable state
record, ...) -- these underscore methods are the channel contract and must stay cheap (they run per
frame at up to kHz rates).

Any other thread may call the public command methods (:meth:`Motor.set_command`, ...).  They encode
the frame immediately and publish it with one atomic attribute store, so they never block and the
channel thread only copies ready bytes.  Fault resets and zeroing are *requests* carried out by the
channel thread at its next cycle.

States are immutable ``NamedTuple`` records (:class:`MotorState`, :class:`ImuState`, ...) replaced
once per cycle, so a reader always sees values from one cycle.

Faults
------
A unit is blamed only for its own silence: it goes to FAULT when ``N`` consecutive requests that went
out stayed unanswered, ``N = max(3, ceil(fault_timeout / period))``, *and* ``fault_timeout`` elapsed
since the first of them.  Any reply (also a late one, drained at the start of a later cycle) ends the
streak.  Cycles the channel judges not on time (the host ran the thread late, see
:mod:`.timing`) neither count nor end a streak.  A device reporting an error (error byte, error flag,
over-temperature) faults at once.

A fault latches.  :meth:`CanUnit.reset_fault` asks for a *probe*: the channel thread re-enables the
unit (enter-motor-mode for a motor, a poll for a sensor) and the unit recovers only on a valid reply;
silence (the same N-misses rule) or a reply still reporting the error fails the reset.  While the
probe runs, the published state keeps ``fault=True``, so the layers above never see it flicker.
"""
from __future__ import annotations

import itertools
import math
import struct
import threading
import time
from enum import IntEnum
from typing import Callable, Dict, Iterator, List, NamedTuple, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware.config import (
    AttributeReader, ElementInfo, UnitInfo, non_negative, positive, to_float, to_int, to_str,
)
from rospy_control.middleware.events import EventLog
from rospy_control.middleware.protocols import mit, sensors

logger = get_logger(__name__)

__all__ = [
    "ControlMode", "HardwareUnit", "UnitGroup", "CanUnit", "Motor", "Encoder", "ImuSensor",
    "ContactSensor", "ForceTorqueSensor", "MotorState", "EncoderState", "ImuState", "ContactState",
    "ForceTorqueState", "SharedReply", "WATCHDOG_MODES", "miss_limit",
]

#: values of :attr:`Motor.watchdog_mode`
WATCHDOG_MODES = ("position", "damping", "none")


def miss_limit(fault_timeout: float, period: Optional[float]) -> int:
    """``N``: consecutive unanswered requests before FAULT, ``max(3, ceil(fault_timeout / period))``."""
    if not period or period <= 0:
        return 3
    return max(3, int(math.ceil(fault_timeout / period - 1e-9)))


class ControlMode(IntEnum):
    """Command mode of a :class:`Motor`, realised in MIT mode.

    * ``NONE``: zero gains and torque (the motor is enabled but limp; the frame still polls state).
    * ``POSITION``: ``p_des`` = command, ``kp``/``kd`` = the motor's position gains.
    * ``VELOCITY``: ``kp = 0``, ``kd`` = velocity gain, ``v_des`` = command.
    * ``EFFORT``: ``kp = kd = 0``, ``t_ff`` = command.
    * ``MIT``: p, v, kp, kd, t given explicitly.
    """

    NONE = 0
    POSITION = 1
    VELOCITY = 2
    EFFORT = 3
    MIT = 4


class MotorState(NamedTuple):
    """One cycle's view of a motor, in joint-side units (direction and zero offset applied)."""

    name: str
    position: float        #: rad (m for linear motors)
    velocity: float        #: rad/s
    effort: float          #: N·m
    temperature: Optional[float]  #: deg C (DLC 8 replies) or None
    error_code: int        #: firmware error byte (DLC 8), 0 = none
    enabled: bool          #: in motor mode (enter frame acknowledged)
    mode: ControlMode      #: confirmed mode: a reply arrived after a frame in this mode was sent
    requested_mode: ControlMode
    fault: bool            #: stays True while a reset is being probed, until recovery is confirmed
    fault_reason: str
    stamp: float           #: time.perf_counter() of the last reply, 0.0 if none yet
    received: bool         #: at least one reply decoded
    fault_time: float = 0.0   #: time.time() when the fault happened, 0.0 when not in FAULT
    watchdog: bool = False    #: the command watchdog holds the motor (no new command for command_timeout)


class EncoderState(NamedTuple):
    name: str
    position: float
    velocity: float
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


class ImuState(NamedTuple):
    name: str
    frame_id: str
    orientation: Tuple[float, float, float, float]   #: x, y, z, w
    orientation_covariance: Tuple[float, ...]         #: 9 values, row major
    angular_velocity: Tuple[float, float, float]     #: rad/s
    angular_velocity_covariance: Tuple[float, ...]
    linear_acceleration: Tuple[float, float, float]  #: m/s^2 (gravity included: +9.81 on z at rest)
    linear_acceleration_covariance: Tuple[float, ...]
    temperature: Optional[float]
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


class ContactState(NamedTuple):
    name: str
    frame_id: str
    in_contact: bool
    force: float  #: normal force, N
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


class ForceTorqueState(NamedTuple):
    name: str
    frame_id: str
    force: Tuple[float, float, float]
    torque: Tuple[float, float, float]
    fault: bool
    fault_reason: str
    stamp: float
    received: bool
    fault_time: float = 0.0


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
    """Base of every unit.  Subclasses set ``TYPE_NAME`` and implement :meth:`from_info`."""

    TYPE_NAME = ""

    def __init__(self, name: str) -> None:
        self.name = name
        #: enclosing :class:`UnitGroup`, if any
        self.group: Optional[UnitGroup] = None
        #: name of the channel the unit talks through (None for pure groups)
        self.channel_name: Optional[str] = None
        #: ``<simulation>`` element (plain data) read by the simulated firmware, if any
        self.simulation: Optional[ElementInfo] = None
        #: where the unit was configured ("file:line"), for messages
        self.where = ""

    @classmethod
    def from_info(cls, info: UnitInfo) -> "HardwareUnit":
        """Build the unit from its XML element (phase 2). Raise ConfigError on any bad attribute."""
        raise NotImplementedError

    def state(self):
        """Latest published state record (None for groups)."""
        return None

    def __repr__(self) -> str:
        return f"{type(self).__name__}('{self.name}')"


class UnitGroup(HardwareUnit):
    """A named composite of units (e.g. a leg with its motors and foot contact)."""

    TYPE_NAME = "rospy_control/UnitGroup"

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._children: Dict[str, HardwareUnit] = {}

    @classmethod
    def from_info(cls, info: UnitInfo) -> "UnitGroup":
        r = AttributeReader(info.element, ignore=("name", "type", "channel"))
        r.finish()
        g = cls(info.name)
        g.where = f"{info.element.source}:{info.element.line}"
        return g

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


def frame_bits(dlc: int, extended: bool = False) -> int:
    """Worst-case bits on the wire of one classic CAN data frame incl. stuffing and interframe space."""
    if extended:
        return 67 + 8 * dlc + (54 + 8 * dlc - 1) // 4
    return 47 + 8 * dlc + (34 + 8 * dlc - 1) // 4


class CanUnit(HardwareUnit):
    """A unit that is polled over a CAN channel.

    **Channel contract.**  The channel calls these methods, and only from its read/write thread
    (except :meth:`_exit_message` / :meth:`_deactivate`, called once at shutdown after the thread
    stopped).  The base implementations are complete for a unit that sends nothing; a subclass
    overrides :meth:`_poll`, :meth:`_on_frame`, :meth:`_end_cycle` and :meth:`bits_per_cycle`, and
    uses the helpers :meth:`_begin_poll`, :meth:`_got_reply`, :meth:`_report_error` and
    :meth:`_judge` so that fault detection and reset probes behave the same for every unit type.

    * ``request_ids()`` / ``reply_ids()``: arbitration ids this unit sends to / receives on alone;
    * ``shared_reply(master_id)``: a :class:`SharedReply` if the unit answers on an id shared with
      other units (MIT motors on the channel's master id), else None;
    * ``bits_per_cycle()``: for the bus-load estimate;
    * ``_activate(now, enable, fault_timeout, period, command_timeout)``: the thread is about to
      start;
    * ``_poll(now) -> can.Message | None``: the frame to send this cycle (``now`` = cycle start);
      the unit then awaits its replies -- a frame that fails to send stays unanswered;
    * ``_awaited_replies() -> int``: reply frames the channel should wait for after that send;
    * ``_on_frame(arb_id, data, now) -> int``: decode a received frame, return how many awaited
      frames it satisfied;
    * ``_on_receive_error()``: the receive path failed this cycle; the unit counts its request as
      unanswered even if nothing was awaited (a broken bus must lead to timeouts, not silence);
    * ``_end_cycle(now, on_time) -> state``: judge the cycle and return this cycle's immutable state;
      ``on_time`` False (host stall) means unanswered requests of this cycle neither count as misses
      nor end the miss streak;
    * ``_exit_message()``: the frame to send at shutdown (None: nothing), then ``_deactivate()``.
    """

    FRAMES_PER_POLL = 1
    #: what a reset probe sends, for messages ("reset failed: no reply to <PROBE_REQUEST> ...")
    PROBE_REQUEST = "poll"

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
        self._timeout = 0.1
        self._period = 0.0
        self._state = None
        # reset requests: callers bump _reset_req (under _reset_lock); the channel thread takes it,
        # probes, then publishes _reset_result and _reset_done (in this order)
        self._reset_lock = threading.Lock()
        self._reset_req = 0
        self._reset_seen = 0
        self._reset_done = 0
        self._reset_result: Tuple[bool, str] = (True, "")
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
            self._emit("reset_requested", f"reset requested (fault: {self._fault_reason})")
        return ticket

    def reset_outcome(self, ticket: int) -> Optional[Tuple[bool, str]]:
        """``(recovered, reason)`` once the reset of ``ticket`` finished, None while pending."""
        if self._reset_done >= ticket:
            return self._reset_result
        return None

    def request_ids(self) -> Tuple[int, ...]:
        return (self.can_id,)

    def reply_ids(self) -> Tuple[int, ...]:
        return ()

    def shared_reply(self, master_id: int) -> Optional[SharedReply]:
        """The shared reply id this unit answers on (with its demux key), None if it has its own ids."""
        return None

    def bits_per_cycle(self) -> int:
        raise NotImplementedError

    # -- channel contract ---------------------------------------------------------------------------
    def _attach(self, channel_name: str, events: Optional[EventLog]) -> None:
        """Called when the unit is added to a channel (and when the event log is replaced)."""
        self.channel_name = channel_name
        self._events = events

    def _activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
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

    def _deactivate(self) -> None:
        """The channel stopped (after :meth:`_exit_message` was sent)."""
        self._active = False
        self._awaiting = 0

    def _poll(self, now: float) -> Optional[can.Message]:
        """The frame to send this cycle (None: nothing).  Base: handles reset requests, sends nothing."""
        self._begin_poll(now)
        return None

    def _awaited_replies(self) -> int:
        """Reply frames awaited for the frame :meth:`_poll` just returned."""
        return self._awaiting

    def _on_frame(self, arb_id: int, data, now: float) -> int:
        """Decode one frame routed to this unit; return the number of awaited frames it satisfied."""
        return 0

    def _on_receive_error(self) -> None:
        """The receive path failed this cycle: count this cycle's request as unanswered."""
        if self._awaiting == 0 and self._active and (self._probing or not self._fault):
            self._awaiting = 1

    def _end_cycle(self, now: float, on_time: bool = True):
        """Judge this cycle (timeouts, reset probe) and return the state record to publish."""
        if self._awaiting or self._probing:
            self._judge(now, on_time)
        return self._state

    def _exit_message(self) -> Optional[can.Message]:
        """Frame to send at shutdown (exit-motor-mode), None for nothing."""
        return None

    # -- helpers for subclasses (channel thread) ------------------------------------------------------
    def _emit(self, kind: str, message: str) -> None:
        ev = self._events
        if ev is not None:
            ev.append(self.name, self.channel_name or "", kind, message)

    def _set_fault(self, reason: str) -> None:
        if not self._fault:
            self._fault_reason = reason
            self._fault_time = time.time()
            self._fault = True
            self._streak = 0
            self._on_fault()
            self._emit("fault", reason)

    def _report_error(self, reason: str, still: str) -> None:
        """The device reports an error: FAULT with ``reason``; during a reset probe the probe fails with
        ``"reset failed: " + still``."""
        if self._probing:
            if self._probe_error is None:
                self._probe_error = "reset failed: " + still
        else:
            self._set_fault(reason)

    def _got_reply(self, now: float) -> None:
        """A frame from the device was decoded: it is alive (ends the miss streak)."""
        self._last_reply = now
        self._received = True
        if not self._probing:
            self._streak = 0

    def _begin_poll(self, now: float) -> None:
        """Call first in :meth:`_poll`: takes a pending reset request."""
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
            self._emit("recovered", "fault cleared (listen-only: nothing was probed)")
            self._finish_reset(True, "")
            return
        self._probing = True
        self._probe_ok = False
        self._probe_error = None
        self._streak = 0
        self._on_probe_start(now)

    def _judge(self, now: float, on_time: bool) -> None:
        """Timeouts and reset-probe outcome of one cycle (call from :meth:`_end_cycle`)."""
        awaiting = self._awaiting
        self._awaiting = 0
        if self._probing:
            if self._probe_error is not None:
                self._probe_failed(self._probe_error)
            elif self._probe_ok and not awaiting:
                old = self._fault_reason
                self._clear_fault()
                self._on_recovered(now)
                self._emit("recovered", f"recovered after reset (fault was: {old})")
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
            self._set_fault(f"no reply for {1000.0 * elapsed:.1f} ms (fault_timeout "
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
        self._on_probe_failed()
        self._emit("reset_failed", reason)
        self._finish_reset(False, reason)

    def _clear_fault(self) -> None:
        self._probing = False
        self._fault = False
        self._fault_reason = ""
        self._fault_time = 0.0
        self._streak = 0

    def _finish_reset(self, recovered: bool, reason: str) -> None:
        self._reset_result = (recovered, reason)
        self._reset_done = self._reset_seen

    # hooks of the fault life cycle (channel thread)
    def _on_fault(self) -> None:
        """Just went to FAULT."""

    def _on_probe_start(self, now: float) -> None:
        """A reset probe starts; the next :meth:`_poll` sends the probe request."""

    def _on_probe_failed(self) -> None:
        """The probe failed; the unit stays in FAULT."""

    def _on_recovered(self, now: float) -> None:
        """The probe succeeded; the fault is cleared."""


def _read_limits(el: Optional[ElementInfo], default: mit.MitLimits, owner: ElementInfo) -> mit.MitLimits:
    if el is None:
        return default
    r = AttributeReader(el)
    values = [r.get(f, to_float, getattr(default, f)) for f in mit.MitLimits._fields]
    r.finish()
    limits = mit.MitLimits(*values)
    for lo_name in ("p_min", "v_min", "kp_min", "kd_min", "t_min"):
        hi_name = lo_name[:-3] + "max"
        lo, hi = getattr(limits, lo_name), getattr(limits, hi_name)
        if not lo < hi:
            raise ConfigError(
                f"<limits> of {owner.describe()}: attribute '{lo_name}'={lo!r} must be smaller than "
                f"'{hi_name}'={hi!r} (expected min < max)", el.source, el.line)
    return limits


_REPLY = struct.Struct(">BHHB")


class Motor(CanUnit):
    """An MIT-mode motor (CubeMars AK, Mini-Cheetah firmware, DaMiao in MIT mode).

    Joint-side values (what :class:`MotorState` reports and commands take) relate to the motor's
    own values by ``motor = direction * joint + zero_offset`` for positions and
    ``motor = direction * joint`` for velocities and torques; gains are unchanged.  Commands are
    clamped to the motor's :class:`~rospy_control.middleware.protocols.mit.MitLimits`.

    **Command watchdog.**  Every call of :meth:`set_command`, :meth:`set_position`,
    :meth:`set_mit_command` or :meth:`request_mode` is a new command (a counter, not a value
    comparison: a controller re-sending the same value is alive).  When no new command came for the
    channel's ``command_timeout``, the channel thread stops sending the stale command and holds the
    motor (``watchdog_mode``): ``"position"`` holds the commanded position of a stale POSITION command
    (velocity feed-forward zeroed, everything else bit for bit the same) and the measured position
    with the position gains after any other mode; ``"damping"`` sends ``kp = 0, kd = velocity_kd``;
    ``"none"`` keeps sending the stale command.  Staleness is counted in channel cycles, each
    contributing at most two nominal periods, so a process that was descheduled as a whole (the
    channel thread frozen too) does not trip it.  The next new command is sent at once.  A motor that
    was never commanded (counter 0, e.g. in ``hw_check`` without ``--hold``) is not watched.  While
    holding, ``state.watchdog`` is True; ``state.mode`` stays the mode of the stale command.

    **Firmware CAN timeout.**  ``firmware_timeout`` (s, 0 = the firmware has none) tells the driver
    that the firmware leaves motor mode when no frame arrives for that long.  MIT replies carry no
    "enabled" bit, so the driver cannot see it happen; instead, when it sent nothing to the motor for
    at least half that time (the whole process was frozen, the bus thread stopped), it sends
    enter-motor-mode again before the next command.

    :param can_id: the motor's CAN id (also byte 0 of its replies).
    :param direction: +1 or -1.
    :param zero_offset: motor position (rad) that is joint position 0.
    :param joint: optional URDF joint driven 1:1 by this motor (for robot_hw).
    :param position_kp, position_kd: gains used in POSITION mode.
    :param velocity_kd: gain used in VELOCITY mode.
    :param reply_dlc: DLC the firmware answers with (6, 7 or 8); used for the bus-load estimate.
    :param max_temperature: FAULT above this temperature (deg C, DLC 8 replies only).
    :param watchdog_mode: ``"position"``, ``"damping"`` or ``"none"`` (see above).
    :param firmware_timeout: the firmware's own CAN timeout (s), 0 = none.
    """

    TYPE_NAME = "rospy_control/Motor"
    PROBE_REQUEST = "enter-motor-mode"
    #: seconds between two watchdog warnings of one motor
    WATCHDOG_LOG_PERIOD = 5.0

    def __init__(self, name: str, can_id: int, limits: mit.MitLimits = mit.MitLimits(),
                 direction: int = 1, zero_offset: float = 0.0, joint: Optional[str] = None,
                 position_kp: float = 20.0, position_kd: float = 0.5, velocity_kd: float = 1.0,
                 reply_dlc: int = 8, max_temperature: float = 90.0,
                 fault_timeout: Optional[float] = None, watchdog_mode: Optional[str] = None,
                 firmware_timeout: float = 0.0) -> None:
        super().__init__(name, can_id, fault_timeout)
        if direction not in (1, -1):
            raise ConfigError(f"motor '{name}': direction must be 1 or -1, got {direction}")
        #: True when the configuration chose the watchdog mode (the RobotHW's hold_mode then leaves it)
        self.watchdog_mode_explicit = watchdog_mode is not None
        if watchdog_mode is None:
            watchdog_mode = "position"
        if watchdog_mode not in WATCHDOG_MODES:
            raise ConfigError(f"motor '{name}': watchdog_mode must be one of {', '.join(WATCHDOG_MODES)}, "
                              f"got {watchdog_mode!r}")
        if not firmware_timeout >= 0:
            raise ConfigError(f"motor '{name}': firmware_timeout must be >= 0, got {firmware_timeout}")
        limits.validate()
        self.limits = limits
        self.direction = direction
        self.zero_offset = zero_offset
        self.joint = joint
        self.position_kp = position_kp
        self.position_kd = position_kd
        self.velocity_kd = velocity_kd
        self.reply_dlc = reply_dlc
        self.max_temperature = max_temperature
        self.firmware_timeout = float(firmware_timeout)
        self.watchdog_mode = watchdog_mode
        self._msg = can.Message(arbitration_id=can_id, is_extended_id=False, data=bytearray(8))
        # precomputed decode factors (motor frame)
        p_min, p_max, v_min, v_max = limits.p_min, limits.p_max, limits.v_min, limits.v_max
        self._pk, self._p0 = (p_max - p_min) / 65535.0, p_min
        self._vk, self._v0 = (v_max - v_min) / 4095.0, v_min
        self._tk, self._t0 = (limits.t_max - limits.t_min) / 4095.0, limits.t_min
        self._limp = mit.pack_command(0, 0, 0, 0, 0, limits)
        self._cmd: Tuple[ControlMode, bytes] = (ControlMode.NONE, self._limp)
        # every public command method stores _cmd, then the next value of this counter in _cmd_seq
        self._cmd_counter = itertools.count(1)
        self._cmd_seq = 0
        self._zero_requested = False
        #: commands dropped because a value was NaN or infinite
        self.rejected_commands = 0
        self._non_finite_log = Throttle(5.0)
        self._enabled = False
        self._exit_sent = False
        self._reenter = False
        self._last_tx = 0.0
        self._inflight = ControlMode.NONE
        self._inflight_enter = False
        self._mode = ControlMode.NONE
        self._pos = 0.0
        self._vel = 0.0
        self._eff = 0.0
        self._temp: Optional[float] = None
        self._err = 0
        # command watchdog (channel thread)
        self._cmd_timeout = 0.0
        self._wd_cap = 0.02
        self._wd_seen = 0
        self._wd_stale = 0.0
        self._wd_last = 0.0
        self._wd_active = False
        self._wd_hold = self._limp
        self._wd_applied = ""
        self._wd_log = Throttle(self.WATCHDOG_LOG_PERIOD)
        self._state = self._make_state()

    # -- configuration ------------------------------------------------------------------------------
    @classmethod
    def from_info(cls, info: UnitInfo) -> "Motor":
        el = info.element
        r = AttributeReader(el, ignore=("name", "type", "channel"))
        if info.channel is None:
            raise el.error("a motor needs a channel: set attribute 'channel' here or on an enclosing <group>")
        kw = dict(
            can_id=r.get("can_id", to_int, check=lambda v: 0 <= v <= 0x7FF,
                         expected="an integer CAN id 0x000..0x7FF"),
            direction=r.get("direction", to_int, 1, check=lambda v: v in (1, -1), expected="1 or -1"),
            zero_offset=r.get("zero_offset", to_float, 0.0),
            joint=r.get("joint", to_str, None),
            reply_dlc=r.get("reply_dlc", to_int, 8, check=lambda v: v in (6, 7, 8), expected="6, 7 or 8"),
            max_temperature=r.get("max_temperature", to_float, 90.0),
            fault_timeout=r.get("fault_timeout", to_float, None, check=positive,
                                expected="a positive number of seconds"),
            watchdog_mode=r.get("watchdog_mode", to_str, None, check=lambda v: v in WATCHDOG_MODES,
                                expected="one of " + ", ".join(WATCHDOG_MODES)),
            firmware_timeout=r.get("firmware_timeout", to_float, 0.0, check=non_negative,
                                   expected="a number of seconds >= 0 (0 = the firmware has none)"),
        )
        r.finish()
        gains = el.child("gains")
        if gains is not None:
            g = AttributeReader(gains)
            kw["position_kp"] = g.get("position_kp", to_float, 20.0, check=non_negative,
                                      expected="a number >= 0")
            kw["position_kd"] = g.get("position_kd", to_float, 0.5, check=non_negative,
                                      expected="a number >= 0")
            kw["velocity_kd"] = g.get("velocity_kd", to_float, 1.0, check=non_negative,
                                      expected="a number >= 0")
            g.finish()
        kw["limits"] = _read_limits(el.child("limits"), mit.MitLimits(), el)
        m = cls(info.name, **kw)
        m.where = f"{el.source}:{el.line}"
        return m

    # -- commands (any thread, non-blocking) ----------------------------------------------------------
    def _reject_non_finite(self, *values: float) -> bool:
        """True (and the command is dropped, the previous one kept) if a value is NaN or infinite.

        The MIT codec maps NaN to the bottom of the range, which would drive a motor to ``p_min``:
        a non-finite command is never sent, whichever layer produced it.
        """
        for value in values:
            if not math.isfinite(value):
                self.rejected_commands += 1
                if self._non_finite_log.ready():
                    logger.warning("motor '%s': ignoring a non-finite command %r (keeping the previous "
                                   "command; %d rejected so far)", self.name, values, self.rejected_commands)
                return True
        return False

    def set_command(self, mode: ControlMode, value: float = 0.0) -> None:
        """Command ``value`` in ``mode`` (POSITION rad, VELOCITY rad/s, EFFORT N·m; NONE ignores it).

        Takes effect at the channel's next cycle; the mode counts as confirmed (see
        :meth:`mode_confirmed`) once a reply arrives after the first frame in that mode was sent.
        A NaN or infinite value is ignored (the previous command stays) and counted in
        :attr:`rejected_commands`.  Every call is a new command for the watchdog.
        """
        if self._reject_non_finite(value):
            return
        d = self.direction
        if mode == ControlMode.POSITION:
            data = mit.pack_command(d * value + self.zero_offset, 0.0, self.position_kp, self.position_kd,
                                    0.0, self.limits)
        elif mode == ControlMode.VELOCITY:
            data = mit.pack_command(0.0, d * value, 0.0, self.velocity_kd, 0.0, self.limits)
        elif mode == ControlMode.EFFORT:
            data = mit.pack_command(0.0, 0.0, 0.0, 0.0, d * value, self.limits)
        elif mode == ControlMode.NONE:
            data = self._limp
        elif mode == ControlMode.MIT:
            raise ValueError(f"motor '{self.name}': use set_mit_command() for MIT mode")
        else:
            raise ValueError(f"motor '{self.name}': unknown control mode {mode!r}")
        self._cmd = (mode, data)
        self._cmd_seq = next(self._cmd_counter)

    def set_position(self, position: float, velocity: float = 0.0, effort: float = 0.0) -> None:
        """POSITION mode with velocity and torque feed-forward (for pos/vel handles)."""
        if self._reject_non_finite(position, velocity, effort):
            return
        d = self.direction
        self._cmd = (ControlMode.POSITION, mit.pack_command(
            d * position + self.zero_offset, d * velocity, self.position_kp, self.position_kd, d * effort,
            self.limits))
        self._cmd_seq = next(self._cmd_counter)

    def set_mit_command(self, position: float, velocity: float, kp: float, kd: float, effort: float) -> None:
        """MIT impedance command: ``tau = kp (p - pos) + kd (v - vel) + effort`` (joint side)."""
        if self._reject_non_finite(position, velocity, kp, kd, effort):
            return
        d = self.direction
        self._cmd = (ControlMode.MIT, mit.pack_command(
            d * position + self.zero_offset, d * velocity, kp, kd, d * effort, self.limits))
        self._cmd_seq = next(self._cmd_counter)

    def request_mode(self, mode: ControlMode) -> None:
        """Switch to ``mode`` with a safe value: POSITION holds the last measured position,
        VELOCITY 0 rad/s, EFFORT 0 N·m, MIT holds position with the position gains."""
        if mode == ControlMode.MIT:
            self.set_mit_command(self._pos, 0.0, self.position_kp, self.position_kd, 0.0)
        elif mode == ControlMode.POSITION:
            self.set_command(mode, self._pos)
        else:
            self.set_command(mode, 0.0)

    def set_watchdog_mode(self, mode: str) -> None:
        """What the command watchdog does when commands stop: ``"position"`` (hold), ``"damping"``
        (kp 0, kd ``velocity_kd``) or ``"none"`` (keep sending the stale command).  Any thread; a hold
        in progress switches to the new mode at the next cycle.

        :raises ValueError: unknown mode.
        """
        if mode not in WATCHDOG_MODES:
            raise ValueError(f"motor '{self.name}': unknown watchdog_mode {mode!r}; expected one of "
                             f"{', '.join(WATCHDOG_MODES)}")
        self.watchdog_mode = mode

    @property
    def watchdog_active(self) -> bool:
        """The watchdog currently holds the motor instead of sending the stale command."""
        return self._wd_active

    @property
    def command_count(self) -> int:
        """How many commands the callers gave (the watchdog's counter)."""
        return self._cmd_seq

    @property
    def command_mode(self) -> ControlMode:
        """The mode of the latest command (requested, not necessarily confirmed)."""
        return self._cmd[0]

    def mode_confirmed(self, mode: ControlMode) -> bool:
        """True once a reply arrived after a frame in ``mode`` was sent."""
        return self._mode == mode and self._cmd[0] == mode

    def request_zero(self) -> None:
        """Send the set-zero frame once (the motor's current position becomes its zero)."""
        self._zero_requested = True

    def request_ids(self) -> Tuple[int, ...]:
        return (self.can_id,)

    def shared_reply(self, master_id: int) -> Optional[SharedReply]:
        """MIT motors answer on the channel's master id with their id in byte 0."""
        if self.can_id > mit.MAX_MOTOR_ID:
            raise ConfigError(f"motor '{self.name}' ({self.where}): can_id 0x{self.can_id:X} does not "
                              "fit reply byte 0 (MIT replies carry the id in one byte)")
        return SharedReply(master_id, self.can_id, mit.reply_key)

    def bits_per_cycle(self) -> int:
        return frame_bits(8) + frame_bits(self.reply_dlc)

    # -- channel contract ---------------------------------------------------------------------------
    def _activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                  command_timeout: float = 0.0) -> None:
        super()._activate(now, enable, fault_timeout, period, command_timeout)
        self._enabled = False
        self._exit_sent = False
        self._reenter = False
        self._last_tx = now
        self._cmd_timeout = command_timeout
        self._wd_cap = 2.0 * (period if period else 0.01)
        self._wd_reset(now)

    def _deactivate(self) -> None:
        super()._deactivate()
        self._enabled = False

    def _poll(self, now: float) -> Optional[can.Message]:
        if self._reset_req != self._reset_seen:
            self._begin_poll(now)
        msg = self._msg
        if self._fault and not self._probing:
            if not self._exit_sent:
                self._exit_sent = True
                msg.data = mit.EXIT_MOTOR_MODE
                self._last_tx = now
                return msg
            return None
        if not self._active:
            return None
        # command watchdog: staleness in cycles, each counting at most two nominal periods
        seq = self._cmd_seq
        if seq != self._wd_seen:
            self._wd_seen = seq
            self._wd_stale = 0.0
            if self._wd_active:
                self._wd_release()
        else:
            dt = now - self._wd_last
            self._wd_stale += dt if dt < self._wd_cap else self._wd_cap
        self._wd_last = now
        fw = self.firmware_timeout
        if fw and now - self._last_tx >= 0.5 * fw and self._enabled:
            self._reenter = True  # the firmware may have left motor mode while nothing was sent
        self._last_tx = now
        if not self._enabled or self._reenter:
            self._reenter = False
            msg.data = mit.ENTER_MOTOR_MODE
            self._inflight_enter = True
        elif self._zero_requested:
            self._zero_requested = False
            msg.data = mit.SET_ZERO
        else:
            mode, data = self._cmd
            if self._wd_active:
                if self._wd_applied != self.watchdog_mode:
                    self._wd_trip(mode, data, False)
                if self._wd_active:
                    data = self._wd_hold
            elif seq and self._cmd_timeout > 0.0 and self._wd_stale >= self._cmd_timeout \
                    and self.watchdog_mode != "none":
                self._wd_trip(mode, data, True)
                data = self._wd_hold
            self._inflight = mode
            msg.data = data
        self._awaiting = 1
        self._sent_at = now
        return msg

    def _wd_reset(self, now: float) -> None:
        self._wd_seen = self._cmd_seq
        self._wd_stale = 0.0
        self._wd_last = now
        self._wd_active = False

    def _wd_trip(self, mode: ControlMode, data: bytes, first: bool) -> None:
        """Compute the hold frame for the current ``watchdog_mode`` (channel thread)."""
        wm = self.watchdog_mode
        self._wd_applied = wm
        if wm == "none":
            self._wd_release()
            return
        d = self.direction
        if wm == "damping":
            hold = mit.pack_command(0.0, 0.0, 0.0, self.velocity_kd, 0.0, self.limits)
            what = f"damping (kp 0, kd {self.velocity_kd:g})"
        elif mode == ControlMode.POSITION:
            hold = mit.replace_velocity(data, 0.0, self.limits)
            p = mit.unpack_command(hold, self.limits)[0]
            what = f"the commanded position {d * (p - self.zero_offset):.4f}"
        else:
            hold = mit.pack_command(d * self._pos + self.zero_offset, 0.0, self.position_kp,
                                    self.position_kd, 0.0, self.limits)
            what = f"the measured position {self._pos:.4f}"
        self._wd_hold = hold
        if not first:
            return
        self._wd_active = True
        self.watchdog_trips += 1
        stale_ms = 1000.0 * self._wd_stale
        self._emit("watchdog_hold", f"no new command for {stale_ms:.0f} ms (command_timeout "
                                    f"{1000.0 * self._cmd_timeout:.0f} ms, last mode {mode.name}): "
                                    f"holding {what}")
        if self._wd_log.ready("trip"):
            logger.warning("motor '%s': no new command for %.0f ms (command_timeout %.0f ms, last mode %s); "
                           "the watchdog holds %s (watchdog_mode %s; %d trips so far)", self.name, stale_ms,
                           1000.0 * self._cmd_timeout, mode.name, what, wm, self.watchdog_trips)

    def _wd_release(self) -> None:
        if not self._wd_active:
            return
        self._wd_active = False
        self._wd_applied = ""
        self._emit("watchdog_released", "new command: the watchdog hold ended")
        if self._wd_log.ready("release"):
            logger.info("motor '%s': commands resumed, watchdog hold ended", self.name)

    def _on_frame(self, arb_id: int, data, now: float) -> int:
        n = len(data)
        if n < 6:
            self.bad_frames += 1
            return 0
        _id, pi, x, tl = _REPLY.unpack_from(data)
        d = self.direction
        self._pos = d * (pi * self._pk + self._p0 - self.zero_offset)
        self._vel = d * ((x >> 4) * self._vk + self._v0)
        self._eff = d * ((((x & 0xF) << 8) | tl) * self._tk + self._t0)
        if n >= 8:
            temp = self._temp = float(data[6])
            err = self._err = data[7]
            if err:
                self._report_error(f"motor reported error code 0x{err:02X}",
                                   f"motor still reports error code 0x{err:02X}")
            elif temp > self.max_temperature:
                what = f"over-temperature: {temp:.0f} C > max_temperature {self.max_temperature:.0f} C"
                self._report_error(what, "motor still reports " + what)
        self._got_reply(now)
        if self._inflight_enter:
            self._inflight_enter = False
            self._enabled = True
            if self._probing:
                self._probe_ok = True
        else:
            self._mode = self._inflight
        if self._awaiting:
            self._awaiting = 0
            return 1
        return 0

    def _end_cycle(self, now: float, on_time: bool = True) -> MotorState:
        if self._awaiting or self._probing:
            self._judge(now, on_time)
        fault = self._fault
        s = self._state = MotorState(
            self.name, self._pos, self._vel, self._eff, self._temp, self._err,
            self._enabled and not fault, self._mode, self._cmd[0], fault, self._fault_reason,
            self._last_reply if self._received else 0.0, self._received, self._fault_time,
            self._wd_active)
        return s

    def _make_state(self) -> MotorState:
        return MotorState(self.name, 0.0, 0.0, 0.0, None, 0, False, ControlMode.NONE, ControlMode.NONE,
                          False, "", 0.0, False, 0.0, False)

    def _exit_message(self) -> Optional[can.Message]:
        return can.Message(arbitration_id=self.can_id, is_extended_id=False, data=mit.EXIT_MOTOR_MODE)

    # -- fault life cycle -------------------------------------------------------------------------------
    def _on_fault(self) -> None:
        self._exit_sent = False   # one exit-motor-mode frame, then nothing
        self._wd_active = False

    def _on_probe_start(self, now: float) -> None:
        self._enabled = False     # the next poll sends enter-motor-mode
        self._inflight_enter = False
        self._err = 0

    def _on_probe_failed(self) -> None:
        self._enabled = False
        self._exit_sent = False   # leave motor mode again (once)

    def _on_recovered(self, now: float) -> None:
        # start limp (ControlMode.NONE) like after start-up; not a caller's command, so the watchdog
        # counter is untouched and the staleness starts from zero
        self._cmd = (ControlMode.NONE, self._limp)
        self._mode = ControlMode.NONE
        self._exit_sent = False
        self._wd_reset(now)


class CanSensor(CanUnit):
    """Base of sensors speaking :mod:`rospy_control.middleware.protocols.sensors`."""

    FRAMES_PER_POLL = 1
    REPLY_DLC = 8

    def __init__(self, name: str, can_id: int, reply_id: Optional[int] = None, frame_id: str = "",
                 fault_timeout: Optional[float] = None) -> None:
        super().__init__(name, can_id, fault_timeout)
        self.reply_id = can_id + sensors.DEFAULT_REPLY_OFFSET if reply_id is None else reply_id
        if not 0 <= self.reply_id <= 0x7FF - (self.FRAMES_PER_POLL - 1):
            raise ConfigError(f"sensor '{name}': reply_id 0x{self.reply_id:X} out of range")
        self.frame_id = frame_id or name
        self._msg = can.Message(arbitration_id=can_id, is_extended_id=False, data=b"", dlc=0)

    @classmethod
    def _common_kwargs(cls, info: UnitInfo, r: AttributeReader) -> dict:
        if info.channel is None:
            raise info.element.error("a sensor needs a channel: set attribute 'channel' here or on a <group>")
        return dict(
            can_id=r.get("can_id", to_int, check=lambda v: 0 <= v <= 0x7FF,
                         expected="an integer CAN id 0x000..0x7FF"),
            reply_id=r.get("reply_id", to_int, None, check=lambda v: 0 <= v <= 0x7FF,
                           expected="an integer CAN id 0x000..0x7FF"),
            frame_id=r.get("frame_id", to_str, ""),
            fault_timeout=r.get("fault_timeout", to_float, None, check=positive,
                                expected="a positive number of seconds"),
        )

    @classmethod
    def from_info(cls, info: UnitInfo) -> "CanSensor":
        r = AttributeReader(info.element, ignore=("name", "type", "channel"))
        kw = cls._common_kwargs(info, r)
        kw.update(cls._read_attributes(r))
        r.finish()
        unit = cls(info.name, **kw)
        unit.where = f"{info.element.source}:{info.element.line}"
        return unit

    @classmethod
    def _read_attributes(cls, r: AttributeReader) -> dict:
        """The sensor type's own XML attributes (constructor keyword arguments)."""
        return {}

    def reply_ids(self) -> Tuple[int, ...]:
        return tuple(range(self.reply_id, self.reply_id + self.FRAMES_PER_POLL))

    def bits_per_cycle(self) -> int:
        return frame_bits(0) + self.FRAMES_PER_POLL * frame_bits(self.REPLY_DLC)

    def _poll(self, now: float) -> Optional[can.Message]:
        if self._reset_req != self._reset_seen:
            self._begin_poll(now)
        if not self._active or (self._fault and not self._probing):
            return None
        self._awaiting = self.FRAMES_PER_POLL
        self._sent_at = now
        return self._msg

    def _on_frame(self, arb_id: int, data, now: float) -> int:
        try:
            self._decode(arb_id - self.reply_id, data)
        except sensors.SensorFrameError:
            self.bad_frames += 1
            return 0
        self._got_reply(now)
        if self._probing:
            self._probe_ok = True
        if self._awaiting:
            self._awaiting -= 1
            return 1
        return 0

    def _decode(self, index: int, data) -> None:
        raise NotImplementedError

    def _end_state(self):
        """The immutable state record published for this cycle."""
        raise NotImplementedError

    def _end_cycle(self, now: float, on_time: bool = True):
        if self._awaiting or self._probing:
            self._judge(now, on_time)
        s = self._state = self._end_state()
        return s

    def _flagged(self, what: str) -> None:
        """The sensor's answer carries its error flag."""
        self._report_error(f"{what} reported an error flag", f"{what} still reports an error flag")


class Encoder(CanSensor):
    """A stand-alone position encoder (state only)."""

    TYPE_NAME = "rospy_control/Encoder"

    def __init__(self, name: str, can_id: int, counts_per_rev: int = 16384, velocity_range: float = 100.0,
                 **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.counts_per_rev = counts_per_rev
        self.velocity_range = velocity_range
        self._pos = 0.0
        self._vel = 0.0
        self._state = self._end_state()

    @classmethod
    def _read_attributes(cls, r: AttributeReader) -> dict:
        kw = {}
        kw["counts_per_rev"] = r.get("counts_per_rev", to_int, 16384, check=positive,
                                     expected="a positive integer")
        kw["velocity_range"] = r.get("velocity_range", to_float, 100.0, check=positive,
                                     expected="a positive number (rad/s)")
        return kw

    def _decode(self, index: int, data) -> None:
        self._pos, self._vel, flags = sensors.decode_encoder(data, self.counts_per_rev, self.velocity_range)
        if flags & sensors.FLAG_ERROR:
            self._flagged("encoder")

    def _end_state(self) -> EncoderState:
        return EncoderState(self.name, self._pos, self._vel, self._fault, self._fault_reason,
                            self._last_reply if self._received else 0.0, self._received, self._fault_time)


def _diag(v: float) -> Tuple[float, ...]:
    return (v, 0.0, 0.0, 0.0, v, 0.0, 0.0, 0.0, v)


class ImuSensor(CanSensor):
    """An IMU: orientation (quaternion x, y, z, w), angular velocity and linear acceleration."""

    TYPE_NAME = "rospy_control/ImuSensor"
    FRAMES_PER_POLL = sensors.IMU_FRAMES

    def __init__(self, name: str, can_id: int, gyro_range: float = 34.9, accel_range: float = 156.9,
                 orientation_variance: float = 1e-4, angular_velocity_variance: float = 1e-5,
                 linear_acceleration_variance: float = 1e-3, **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.gyro_range = gyro_range
        self.accel_range = accel_range
        self.orientation_covariance = _diag(orientation_variance)
        self.angular_velocity_covariance = _diag(angular_velocity_variance)
        self.linear_acceleration_covariance = _diag(linear_acceleration_variance)
        self._q = (0.0, 0.0, 0.0, 1.0)
        self._w = (0.0, 0.0, 0.0)
        self._a = (0.0, 0.0, 0.0)
        self._temp: Optional[float] = None
        self._state = self._end_state()

    @classmethod
    def _read_attributes(cls, r: AttributeReader) -> dict:
        kw = {}
        for attr, default in (("gyro_range", 34.9), ("accel_range", 156.9)):
            kw[attr] = r.get(attr, to_float, default, check=positive, expected="a positive number")
        for attr, default in (("orientation_variance", 1e-4), ("angular_velocity_variance", 1e-5),
                              ("linear_acceleration_variance", 1e-3)):
            kw[attr] = r.get(attr, to_float, default, check=non_negative, expected="a number >= 0")
        return kw

    def _decode(self, index: int, data) -> None:
        if index == 0:
            self._q = sensors.decode_quaternion(data)
        elif index == 1:
            x, y, z, flags, _ = sensors.decode_vec3(data, self.gyro_range)
            self._w = (x, y, z)
            if flags & sensors.FLAG_ERROR:
                self._flagged("IMU")
        else:
            x, y, z, temp, _ = sensors.decode_vec3(data, self.accel_range)
            self._a = (x, y, z)
            self._temp = float(temp - 256 if temp > 127 else temp)

    def _end_state(self) -> ImuState:
        return ImuState(self.name, self.frame_id, self._q, self.orientation_covariance, self._w,
                        self.angular_velocity_covariance, self._a, self.linear_acceleration_covariance,
                        self._temp, self._fault, self._fault_reason,
                        self._last_reply if self._received else 0.0, self._received, self._fault_time)


class ContactSensor(CanSensor):
    """A foot contact switch / load cell: in contact + normal force (N)."""

    TYPE_NAME = "rospy_control/ContactSensor"
    REPLY_DLC = 4

    def __init__(self, name: str, can_id: int, force_range: float = 1000.0, **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.force_range = force_range
        self._contact = False
        self._force = 0.0
        self._state = self._end_state()

    @classmethod
    def _read_attributes(cls, r: AttributeReader) -> dict:
        kw = {}
        kw["force_range"] = r.get("force_range", to_float, 1000.0, check=positive,
                                  expected="a positive number (N)")
        return kw

    def _decode(self, index: int, data) -> None:
        self._contact, self._force, err = sensors.decode_contact(data, self.force_range)
        if err:
            self._flagged("contact sensor")

    def _end_state(self) -> ContactState:
        return ContactState(self.name, self.frame_id, self._contact, self._force, self._fault,
                            self._fault_reason, self._last_reply if self._received else 0.0, self._received,
                            self._fault_time)


class ForceTorqueSensor(CanSensor):
    """A 6-axis force/torque sensor."""

    TYPE_NAME = "rospy_control/ForceTorqueSensor"
    FRAMES_PER_POLL = sensors.FT_FRAMES

    def __init__(self, name: str, can_id: int, force_range: float = 500.0, torque_range: float = 50.0,
                 **kw) -> None:
        super().__init__(name, can_id, **kw)
        self.force_range = force_range
        self.torque_range = torque_range
        self._f = (0.0, 0.0, 0.0)
        self._t = (0.0, 0.0, 0.0)
        self._state = self._end_state()

    @classmethod
    def _read_attributes(cls, r: AttributeReader) -> dict:
        kw = {}
        kw["force_range"] = r.get("force_range", to_float, 500.0, check=positive,
                                  expected="a positive number")
        kw["torque_range"] = r.get("torque_range", to_float, 50.0, check=positive,
                                   expected="a positive number")
        return kw

    def _decode(self, index: int, data) -> None:
        if index == 0:
            x, y, z, flags, _ = sensors.decode_vec3(data, self.force_range)
            self._f = (x, y, z)
        else:
            x, y, z, flags, _ = sensors.decode_vec3(data, self.torque_range)
            self._t = (x, y, z)
        if flags & sensors.FLAG_ERROR:
            self._flagged("force/torque sensor")

    def _end_state(self) -> ForceTorqueState:
        return ForceTorqueState(self.name, self.frame_id, self._f, self._t, self._fault, self._fault_reason,
                                self._last_reply if self._received else 0.0, self._received,
                                self._fault_time)
