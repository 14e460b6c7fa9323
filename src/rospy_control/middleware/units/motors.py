"""MIT-mode motors: :class:`Motor`, the MIT protocol behind the device contract
(:class:`~.actuator.ActuatorUnit`, which also defines :class:`ControlMode` and :class:`MotorState`)."""
from __future__ import annotations

import itertools
import math
import struct
from typing import Dict, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware.config import (
    AttributeReader, ElementInfo, UnitInfo, non_negative, to_float, to_int, to_str,
)
from rospy_control.middleware.protocols import mit
from rospy_control.middleware.units.actuator import (
    WATCHDOG_MODES, ActuatorUnit, Capabilities, ControlMode, MotorState,
)
from rospy_control.middleware.units.base import SharedReply, frame_bits
from rospy_control.middleware.units.step_limit import PositionStepLimiter

logger = get_logger(__name__)

_U64 = struct.Struct(">Q")

__all__ = ["ControlMode", "Motor", "MotorState", "WATCHDOG_MODES"]


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


class Motor(ActuatorUnit):
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
    _state: MotorState
    PROBE_REQUEST = "enter-motor-mode"
    CAPABILITIES = Capabilities(modes=frozenset(ControlMode), position_velocity_ff=True,
                                position_effort_ff=True, velocity_effort_ff=True, gains=True, set_zero=True)
    #: seconds between two watchdog warnings of one motor
    WATCHDOG_LOG_PERIOD = 5.0
    UNIT_KIND = "motor"
    # Defaults of the constructor's arguments, which are also the hardware XML's (docs/hardware_xml.md).
    DEFAULT_LIMITS = mit.MitLimits()
    DEFAULT_DIRECTION = 1
    DEFAULT_ZERO_OFFSET = 0.0
    DEFAULT_POSITION_KP = 20.0
    DEFAULT_POSITION_KD = 0.5
    DEFAULT_VELOCITY_KD = 1.0
    DEFAULT_REPLY_DLC = 8
    DEFAULT_MAX_TEMPERATURE = 90.0
    #: used when neither the configuration nor :meth:`set_watchdog_mode` chose one
    DEFAULT_WATCHDOG_MODE = "position"
    DEFAULT_FIRMWARE_TIMEOUT = 0.0

    def __init__(self, name: str, can_id: int, limits: mit.MitLimits = DEFAULT_LIMITS,
                 direction: int = DEFAULT_DIRECTION, zero_offset: float = DEFAULT_ZERO_OFFSET,
                 joint: Optional[str] = None, position_kp: float = DEFAULT_POSITION_KP,
                 position_kd: float = DEFAULT_POSITION_KD, velocity_kd: float = DEFAULT_VELOCITY_KD,
                 reply_dlc: int = DEFAULT_REPLY_DLC, max_temperature: float = DEFAULT_MAX_TEMPERATURE,
                 fault_timeout: Optional[float] = None, watchdog_mode: Optional[str] = None,
                 firmware_timeout: float = DEFAULT_FIRMWARE_TIMEOUT) -> None:
        super().__init__(name, can_id, fault_timeout)
        if direction not in (1, -1):
            raise ConfigError(f"motor '{name}': direction must be 1 or -1, got {direction}")
        #: True when the configuration chose the watchdog mode (the RobotHW's hold_mode then leaves it)
        self.watchdog_mode_explicit = watchdog_mode is not None
        if watchdog_mode is None:
            watchdog_mode = self.DEFAULT_WATCHDOG_MODE
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
        # POSITION commands differ only in p: the other 48 bits are cached (see _position_frame)
        self._pos_key: Optional[tuple] = None
        self._pos_low = 0
        self._cmd: Tuple[ControlMode, bytes] = (ControlMode.NONE, self._limp)
        self._step = PositionStepLimiter(limits)  # position-step cap on the wire
        self._published_mode = ControlMode.NONE      # mode of the last cycle whose snapshot is out
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
        kw = cls._can_kwargs(info, r)
        kw.update(
            direction=r.get("direction", to_int, cls.DEFAULT_DIRECTION, check=lambda v: v in (1, -1),
                            expected="1 or -1"),
            zero_offset=r.get("zero_offset", to_float, cls.DEFAULT_ZERO_OFFSET),
            joint=r.get("joint", to_str, None),
            reply_dlc=r.get("reply_dlc", to_int, cls.DEFAULT_REPLY_DLC, check=lambda v: v in (6, 7, 8),
                            expected="6, 7 or 8"),
            max_temperature=r.get("max_temperature", to_float, cls.DEFAULT_MAX_TEMPERATURE),
            watchdog_mode=r.get("watchdog_mode", to_str, None, check=lambda v: v in WATCHDOG_MODES,
                                expected="one of " + ", ".join(WATCHDOG_MODES)),
            firmware_timeout=r.get("firmware_timeout", to_float, cls.DEFAULT_FIRMWARE_TIMEOUT,
                                   check=non_negative,
                                   expected="a number of seconds >= 0 (0 = the firmware has none)"),
        )
        r.finish()
        gains = el.child("gains")
        if gains is not None:
            g = AttributeReader(gains)
            for gain, default in (("position_kp", cls.DEFAULT_POSITION_KP),
                                  ("position_kd", cls.DEFAULT_POSITION_KD),
                                  ("velocity_kd", cls.DEFAULT_VELOCITY_KD)):
                kw[gain] = g.get(gain, to_float, default, check=non_negative, expected="a number >= 0")
            g.finish()
        kw["limits"] = _read_limits(el.child("limits"), cls.DEFAULT_LIMITS, el)
        m = cls(info.name, **kw)
        m.where = f"{el.source}:{el.line}"
        m.check_encodable()
        return m

    # -- contract: ranges -----------------------------------------------------------------------------
    @property
    def effort_range(self) -> Tuple[float, float]:
        lo, hi = self.limits.t_min, self.limits.t_max
        return (lo, hi) if self.direction > 0 else (-hi, -lo)

    def encodable_ranges(self) -> Dict[str, Tuple[float, float]]:
        """The gains against the kp and kd fields' ranges of the motor's ``<limits>``."""
        L = self.limits
        return {"position_kp": (L.kp_min, L.kp_max), "position_kd": (L.kd_min, L.kd_max),
                "velocity_kd": (L.kd_min, L.kd_max)}

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

    def set_command(self, mode: ControlMode, value: float = 0.0, effort: float = 0.0) -> None:
        """Command ``value`` in ``mode`` (POSITION rad, VELOCITY rad/s, EFFORT N·m; NONE ignores it);
        ``effort``: torque feed-forward (N·m) of a VELOCITY command (e.g. gravity).

        Takes effect at the channel's next cycle; the mode counts as confirmed (see
        :meth:`mode_confirmed`) once a reply arrives after the first frame in that mode was sent.
        A NaN or infinite value is ignored (the previous command stays) and counted in
        :attr:`rejected_commands`.  Every call is a new command for the watchdog.
        """
        if self._reject_non_finite(value, effort):
            return
        d = self.direction
        if mode == ControlMode.POSITION:
            data = self._position_frame(d * value + self.zero_offset)
        elif mode == ControlMode.VELOCITY:
            data = mit.pack_command(0.0, d * value, 0.0, self.velocity_kd, d * effort, self.limits)
        elif mode == ControlMode.EFFORT:
            data = mit.pack_command(0.0, 0.0, 0.0, 0.0, d * value, self.limits)
        elif mode == ControlMode.NONE:
            data = self._limp
        elif mode == ControlMode.DAMPING:
            data = mit.pack_command(0.0, 0.0, 0.0, self.velocity_kd, 0.0, self.limits)
        elif mode == ControlMode.MIT:
            raise ValueError(f"motor '{self.name}': use set_mit_command() for MIT mode")
        else:
            raise ValueError(f"motor '{self.name}': unknown control mode {mode!r}")
        self._cmd = (mode, data)
        self._cmd_seq = next(self._cmd_counter)

    def _position_frame(self, p: float) -> bytes:
        """``mit.pack_command(p, 0, position_kp, position_kd, 0, limits)``, bit for bit, with the fields
        other than ``p`` packed once per (gains, limits) instead of at every command."""
        limits = self.limits
        key = (self.position_kp, self.position_kd, limits)
        if key != self._pos_key:
            self._pos_low = _U64.unpack(mit.pack_command(limits.p_min, 0.0, key[0], key[1], 0.0, limits))[0] \
                & 0xFFFFFFFFFFFF
            self._pos_key = key
        lo = limits.p_min
        hi = limits.p_max
        if p < lo:  # mit.float_to_uint(p, lo, hi, 16)
            p = lo
        elif p > hi:
            p = hi
        elif p != p:
            p = lo
        return _U64.pack((int((p - lo) * 65535 / (hi - lo)) << 48) | self._pos_low)

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

    set_impedance = set_mit_command

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
        """True once a reply arrived after a frame in ``mode`` was sent and the channel published the
        snapshot of the cycle that received it (so a snapshot taken after this returns True shows
        ``mode``)."""
        return self._mode == mode and self._cmd[0] == mode and self._published_mode == mode

    def request_zero(self) -> None:
        """Send the set-zero frame once (the motor's current position becomes its zero)."""
        self._zero_requested = True

    def shared_reply(self, master_id: int) -> Optional[SharedReply]:
        """MIT motors answer on the channel's master id with their id in byte 0."""
        if self.can_id > mit.MAX_MOTOR_ID:
            raise ConfigError(f"motor '{self.name}' ({self.where}): can_id 0x{self.can_id:X} does not "
                              "fit reply byte 0 (MIT replies carry the id in one byte)")
        return SharedReply(master_id, self.can_id, mit.reply_key)

    def bits_per_cycle(self) -> int:
        return frame_bits(8) + frame_bits(self.reply_dlc)

    # -- channel contract ---------------------------------------------------------------------------
    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        super().activate(now, enable, fault_timeout, period, command_timeout)
        self._enabled = False
        self._exit_sent = False
        self._reenter = False
        self._last_tx = now
        self._cmd_timeout = command_timeout
        self._wd_cap = 2.0 * (period if period else 0.01)
        self._wd_reset(now)

    def deactivate(self) -> None:
        super().deactivate()
        self._enabled = False

    def poll(self, now: float) -> Optional[can.Message]:
        # the previous cycle's snapshot is published by now (same thread): its mode may count as confirmed
        self._published_mode = self._state.mode
        if self._reset_req != self._reset_seen:
            self.begin_poll(now)
        msg = self._msg
        if self._fault and not self._probing:
            if not self._exit_sent:
                self._exit_sent = True
                # python-can types Message.data as bytearray but sends any bytes-like: the immutable
                # frame constants and packed commands are sent as they are, not copied every cycle
                msg.data = mit.EXIT_MOTOR_MODE  # type: ignore[assignment]
                self._last_tx = now
                self._step.restart()
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
            msg.data = mit.ENTER_MOTOR_MODE  # type: ignore[assignment]  # bytes (see above)
            self._inflight_enter = True
            self._step.restart()
        elif self._zero_requested:
            self._zero_requested = False
            msg.data = mit.SET_ZERO  # type: ignore[assignment]  # bytes (see above)
            self._step.restart()
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
            if self._step.active:
                data = self._step.apply(data)
            msg.data = data  # type: ignore[assignment]  # bytes (see above)
        self._awaiting = 1
        self._sent_at = now
        return msg

    def set_max_position_step(self, step: Optional[float]) -> None:
        """Cap the position step between two command frames on the wire (rad; None/0 = off; see
        :class:`~.step_limit.PositionStepLimiter`; set by ``MiddlewareRobotHW.limit_command_steps``)."""
        self._step.set(step, self.name)

    max_position_step = property(lambda self: self._step.step, doc="The cap in rad (quantised), None = off.")
    limited_frames = property(lambda self: self._step.limited_frames, doc="Frames whose step was capped.")

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
        self.emit("watchdog_hold", f"no new command for {stale_ms:.0f} ms (command_timeout "
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
        self.emit("watchdog_released", "new command: the watchdog hold ended")
        if self._wd_log.ready("release"):
            logger.info("motor '%s': commands resumed, watchdog hold ended", self.name)

    def on_frame(self, arb_id: int, data, now: float) -> int:
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
                self.report_error(f"motor reported error code 0x{err:02X}",
                                  f"motor still reports error code 0x{err:02X}")
            elif temp > self.max_temperature:
                what = f"over-temperature: {temp:.0f} C > max_temperature {self.max_temperature:.0f} C"
                self.report_error(what, "motor still reports " + what)
        self.got_reply(now)
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

    def end_cycle(self, now: float, on_time: bool = True) -> MotorState:
        if self._awaiting or self._probing:
            self.judge(now, on_time)
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

    def exit_message(self) -> Optional[can.Message]:
        return can.Message(arbitration_id=self.can_id, is_extended_id=False, data=mit.EXIT_MOTOR_MODE)

    # -- fault life cycle -------------------------------------------------------------------------------
    def on_fault(self) -> None:
        self._exit_sent = False   # one exit-motor-mode frame, then nothing
        self._wd_active = False

    def on_probe_start(self, now: float) -> None:
        self._enabled = False     # the next poll sends enter-motor-mode
        self._inflight_enter = False
        self._err = 0

    def on_probe_failed(self) -> None:
        self._enabled = False
        self._exit_sent = False   # leave motor mode again (once)

    def on_recovered(self, now: float) -> None:
        # start limp (ControlMode.NONE) like after start-up; not a caller's command, so the watchdog
        # counter is untouched and the staleness starts from zero
        self._cmd = (ControlMode.NONE, self._limp)
        self._mode = ControlMode.NONE
        self._exit_sent = False
        self._wd_reset(now)
