"""Hardware units: a name, a state and (for actuators) a command; composable into groups.

Threading model
---------------
A unit belongs to one channel.  The channel's read/write thread is the only writer of a unit's
*measured* state: it calls ``_poll`` (frame to send this cycle), ``_on_frame`` (decode a received
frame) and ``_end_cycle`` (timeouts, publish an immutable state record) -- these underscore methods
are the channel contract and must stay cheap (they run per frame at up to kHz rates).

Any other thread may call the public command methods (:meth:`Motor.set_command`, ...).  They encode
the frame immediately and publish it with one atomic attribute store, so they never block and the
channel thread only copies ready bytes.  Fault resets and zeroing are *requests* carried out by the
channel thread at its next cycle.

States are immutable ``NamedTuple`` records (:class:`MotorState`, :class:`ImuState`, ...) replaced
once per cycle, so a reader always sees values from one cycle.
"""
from __future__ import annotations

import math
import struct
from enum import IntEnum
from typing import Dict, Iterator, List, NamedTuple, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware.config import (
    AttributeReader, ElementInfo, UnitInfo, non_negative, positive, to_float, to_int, to_str,
)
from rospy_control.middleware.protocols import mit, sensors

logger = get_logger(__name__)

__all__ = [
    "ControlMode", "HardwareUnit", "UnitGroup", "CanUnit", "Motor", "Encoder", "ImuSensor",
    "ContactSensor", "ForceTorqueSensor", "MotorState", "EncoderState", "ImuState", "ContactState",
    "ForceTorqueState",
]


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
    fault: bool
    fault_reason: str
    stamp: float           #: time.perf_counter() of the last reply, 0.0 if none yet
    received: bool         #: at least one reply decoded


class EncoderState(NamedTuple):
    name: str
    position: float
    velocity: float
    fault: bool
    fault_reason: str
    stamp: float
    received: bool


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


class ContactState(NamedTuple):
    name: str
    frame_id: str
    in_contact: bool
    force: float  #: normal force, N
    fault: bool
    fault_reason: str
    stamp: float
    received: bool


class ForceTorqueState(NamedTuple):
    name: str
    frame_id: str
    force: Tuple[float, float, float]
    torque: Tuple[float, float, float]
    fault: bool
    fault_reason: str
    stamp: float
    received: bool


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

    Channel contract (all called from the channel thread only):

    * ``request_ids()`` / ``reply_ids()``: arbitration ids this unit sends to / receives on
      (motors answering on the channel's master id return ``()`` from ``reply_ids`` and are routed
      by ``motor_id``).
    * ``_activate(now, enable)``, ``_poll(now) -> can.Message | None``, ``_on_frame(arb_id, data, now)
      -> number of awaited frames it satisfied``, ``_end_cycle(now) -> state``, ``_exit_message()``.
    * ``bits_per_cycle()`` for the bus-load estimate.
    """

    FRAMES_PER_POLL = 1

    def __init__(self, name: str, can_id: int, fault_timeout: Optional[float] = None) -> None:
        super().__init__(name)
        if not 0 <= can_id <= 0x7FF:
            raise ConfigError(f"unit '{name}': can_id 0x{can_id:X} outside 0x000..0x7FF")
        self.can_id = can_id
        #: seconds without a reply before FAULT; None = the channel's default
        self.fault_timeout = fault_timeout
        self.reply_timeouts = 0   #: cycles in which an awaited reply did not arrive in time
        self.bad_frames = 0       #: frames for this unit that could not be decoded
        self._fault = False
        self._fault_reason = ""
        self._reset_requested = False
        self._active = False
        self._awaiting = 0
        self._last_reply = 0.0
        self._received = False
        self._timeout = 0.1
        self._state = None

    # -- public -------------------------------------------------------------------------------------
    def state(self):
        return self._state

    @property
    def fault(self) -> bool:
        return self._fault

    @property
    def fault_reason(self) -> str:
        return self._fault_reason

    def reset_fault(self) -> None:
        """Request a fault reset; carried out by the channel thread at its next cycle."""
        self._reset_requested = True

    def request_ids(self) -> Tuple[int, ...]:
        return (self.can_id,)

    def reply_ids(self) -> Tuple[int, ...]:
        return ()

    def bits_per_cycle(self) -> int:
        raise NotImplementedError

    # -- channel contract -----------------------------------------------------------------------
    def _activate(self, now: float, enable: bool, fault_timeout: float) -> None:
        self._active = enable
        self._last_reply = now
        if self.fault_timeout is None:
            self._timeout = fault_timeout
        else:
            self._timeout = self.fault_timeout

    def _set_fault(self, reason: str) -> None:
        if not self._fault:
            self._fault_reason = reason
            self._fault = True

    def _check_timeout(self, now: float) -> None:
        if self._awaiting:
            self._awaiting = 0
            self.reply_timeouts += 1
            if not self._fault and now - self._last_reply > self._timeout:
                self._set_fault(
                    f"no reply for {1000.0 * (now - self._last_reply):.1f} ms "
                    f"(fault_timeout {1000.0 * self._timeout:.1f} ms)")

    def _exit_message(self) -> Optional[can.Message]:
        return None


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

    :param can_id: the motor's CAN id (also byte 0 of its replies).
    :param direction: +1 or -1.
    :param zero_offset: motor position (rad) that is joint position 0.
    :param joint: optional URDF joint driven 1:1 by this motor (for robot_hw).
    :param position_kp, position_kd: gains used in POSITION mode.
    :param velocity_kd: gain used in VELOCITY mode.
    :param reply_dlc: DLC the firmware answers with (6, 7 or 8); used for the bus-load estimate.
    :param max_temperature: FAULT above this temperature (deg C, DLC 8 replies only).
    """

    TYPE_NAME = "rospy_control/Motor"

    def __init__(self, name: str, can_id: int, limits: mit.MitLimits = mit.MitLimits(),
                 direction: int = 1, zero_offset: float = 0.0, joint: Optional[str] = None,
                 position_kp: float = 20.0, position_kd: float = 0.5, velocity_kd: float = 1.0,
                 reply_dlc: int = 8, max_temperature: float = 90.0,
                 fault_timeout: Optional[float] = None) -> None:
        super().__init__(name, can_id, fault_timeout)
        if direction not in (1, -1):
            raise ConfigError(f"motor '{name}': direction must be 1 or -1, got {direction}")
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
        self._msg = can.Message(arbitration_id=can_id, is_extended_id=False, data=bytearray(8))
        # precomputed decode factors (motor frame)
        p_min, p_max, v_min, v_max = limits.p_min, limits.p_max, limits.v_min, limits.v_max
        self._pk, self._p0 = (p_max - p_min) / 65535.0, p_min
        self._vk, self._v0 = (v_max - v_min) / 4095.0, v_min
        self._tk, self._t0 = (limits.t_max - limits.t_min) / 4095.0, limits.t_min
        self._cmd: Tuple[ControlMode, bytes] = (ControlMode.NONE, mit.pack_command(0, 0, 0, 0, 0, limits))
        self._zero_requested = False
        #: commands dropped because a value was NaN or infinite
        self.rejected_commands = 0
        self._non_finite_log = Throttle(5.0)
        self._enabled = False
        self._exit_sent = False
        self._inflight = ControlMode.NONE
        self._inflight_enter = False
        self._mode = ControlMode.NONE
        self._pos = 0.0
        self._vel = 0.0
        self._eff = 0.0
        self._temp: Optional[float] = None
        self._err = 0
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
        :attr:`rejected_commands`.
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
            data = mit.pack_command(0.0, 0.0, 0.0, 0.0, 0.0, self.limits)
        elif mode == ControlMode.MIT:
            raise ValueError(f"motor '{self.name}': use set_mit_command() for MIT mode")
        else:
            raise ValueError(f"motor '{self.name}': unknown control mode {mode!r}")
        self._cmd = (mode, data)

    def set_position(self, position: float, velocity: float = 0.0, effort: float = 0.0) -> None:
        """POSITION mode with velocity and torque feed-forward (for pos/vel handles)."""
        if self._reject_non_finite(position, velocity, effort):
            return
        d = self.direction
        self._cmd = (ControlMode.POSITION, mit.pack_command(
            d * position + self.zero_offset, d * velocity, self.position_kp, self.position_kd, d * effort,
            self.limits))

    def set_mit_command(self, position: float, velocity: float, kp: float, kd: float, effort: float) -> None:
        """MIT impedance command: ``tau = kp (p - pos) + kd (v - vel) + effort`` (joint side)."""
        if self._reject_non_finite(position, velocity, kp, kd, effort):
            return
        d = self.direction
        self._cmd = (ControlMode.MIT, mit.pack_command(
            d * position + self.zero_offset, d * velocity, kp, kd, d * effort, self.limits))

    def request_mode(self, mode: ControlMode) -> None:
        """Switch to ``mode`` with a safe value: POSITION holds the last measured position,
        VELOCITY 0 rad/s, EFFORT 0 N·m, MIT holds position with the position gains."""
        if mode == ControlMode.MIT:
            self.set_mit_command(self._pos, 0.0, self.position_kp, self.position_kd, 0.0)
        elif mode == ControlMode.POSITION:
            self.set_command(mode, self._pos)
        else:
            self.set_command(mode, 0.0)

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

    def bits_per_cycle(self) -> int:
        return frame_bits(8) + frame_bits(self.reply_dlc)

    # -- channel contract ---------------------------------------------------------------------------
    def _activate(self, now: float, enable: bool, fault_timeout: float) -> None:
        super()._activate(now, enable, fault_timeout)
        self._enabled = False
        self._exit_sent = False

    def _poll(self, now: float) -> Optional[can.Message]:
        if self._reset_requested:
            self._reset_requested = False
            if self._fault:
                self._fault = False
                self._fault_reason = ""
                self._enabled = False
                self._exit_sent = False
                self._last_reply = now
                self.set_command(ControlMode.NONE)
        msg = self._msg
        if self._fault:
            if not self._exit_sent:
                self._exit_sent = True
                msg.data = mit.EXIT_MOTOR_MODE
                return msg
            return None
        if not self._active:
            return None
        if not self._enabled:
            msg.data = mit.ENTER_MOTOR_MODE
            self._inflight_enter = True
        elif self._zero_requested:
            self._zero_requested = False
            msg.data = mit.SET_ZERO
        else:
            self._inflight, msg.data = self._cmd
        self._awaiting = 1
        return msg

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
                self._set_fault(f"motor reported error code 0x{err:02X}")
            elif temp > self.max_temperature:
                self._set_fault(
                    f"over-temperature: {temp:.0f} C > max_temperature {self.max_temperature:.0f} C")
        self._last_reply = now
        self._received = True
        if self._inflight_enter:
            self._inflight_enter = False
            self._enabled = True
        else:
            self._mode = self._inflight
        if self._awaiting:
            self._awaiting = 0
            return 1
        return 0

    def _end_cycle(self, now: float) -> MotorState:
        if self._awaiting:
            self._check_timeout(now)
        s = self._state = MotorState(
            self.name, self._pos, self._vel, self._eff, self._temp, self._err,
            self._enabled and not self._fault, self._mode, self._cmd[0], self._fault, self._fault_reason,
            self._last_reply if self._received else 0.0, self._received)
        return s

    def _make_state(self) -> MotorState:
        return MotorState(self.name, 0.0, 0.0, 0.0, None, 0, False, ControlMode.NONE, ControlMode.NONE,
                          False, "", 0.0, False)

    def _exit_message(self) -> Optional[can.Message]:
        return can.Message(arbitration_id=self.can_id, is_extended_id=False, data=mit.EXIT_MOTOR_MODE)

    def _deactivate(self) -> None:
        self._enabled = False


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
        if self._reset_requested:
            self._reset_requested = False
            self._fault = False
            self._fault_reason = ""
            self._last_reply = now
        if not self._active or self._fault:
            return None
        self._awaiting = self.FRAMES_PER_POLL
        return self._msg

    def _on_frame(self, arb_id: int, data, now: float) -> int:
        try:
            self._decode(arb_id - self.reply_id, data)
        except sensors.SensorFrameError:
            self.bad_frames += 1
            return 0
        self._last_reply = now
        self._received = True
        if self._awaiting:
            self._awaiting -= 1
            return 1
        return 0

    def _decode(self, index: int, data) -> None:
        raise NotImplementedError

    def _end_state(self):
        """The immutable state record published for this cycle."""
        raise NotImplementedError

    def _end_cycle(self, now: float):
        if self._awaiting:
            self._check_timeout(now)
        s = self._state = self._end_state()
        return s


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
            self._set_fault("encoder reported an error flag")

    def _end_state(self) -> EncoderState:
        return EncoderState(self.name, self._pos, self._vel, self._fault, self._fault_reason,
                            self._last_reply if self._received else 0.0, self._received)


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
                self._set_fault("IMU reported an error flag")
        else:
            x, y, z, temp, _ = sensors.decode_vec3(data, self.accel_range)
            self._a = (x, y, z)
            self._temp = float(temp - 256 if temp > 127 else temp)

    def _end_state(self) -> ImuState:
        return ImuState(self.name, self.frame_id, self._q, self.orientation_covariance, self._w,
                        self.angular_velocity_covariance, self._a, self.linear_acceleration_covariance,
                        self._temp, self._fault, self._fault_reason,
                        self._last_reply if self._received else 0.0, self._received)


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
            self._set_fault("contact sensor reported an error flag")

    def _end_state(self) -> ContactState:
        return ContactState(self.name, self.frame_id, self._contact, self._force, self._fault,
                            self._fault_reason, self._last_reply if self._received else 0.0, self._received)


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
            self._set_fault("force/torque sensor reported an error flag")

    def _end_state(self) -> ForceTorqueState:
        return ForceTorqueState(self.name, self.frame_id, self._f, self._t, self._fault, self._fault_reason,
                                self._last_reply if self._received else 0.0, self._received)
