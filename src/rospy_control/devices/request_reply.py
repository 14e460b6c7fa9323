"""The protocol-free machinery of an actuator that answers every frame it is sent with one reply:
:class:`RequestReplyActuator`, with the decoded :class:`Command` and :class:`Reply` (:mod:`.command`) a
protocol translates to and from its frames.

A new protocol subclasses it and writes only its codec -- :meth:`~RequestReplyActuator.encode_command`,
:meth:`~RequestReplyActuator.decode_reply`, the enable / disable (/ set-zero) frames -- its error table
(``ERRORS``) and what its frames can carry (``CAPABILITIES``, ``GAIN_RANGES``, ``EFFORT_LIMIT``).
Everything else is here, the same for every such device:

* one command frame per channel cycle, its reply awaited; silence faults the device after ``N``
  misses and ``fault_timeout`` (:class:`~rospy_control.devices.CanUnit`);
* enable at start-up (and again as the reset probe), disable once on a fault and at shutdown;
* the device's error code (``Reply.error_code``) and over-temperature fault it at once, named by
  ``ERRORS``; a reset re-enables it and succeeds only on a reply without error;
* the command watchdog (:mod:`.watchdog`) and the position-step cap (:mod:`.step_cap`), shared with
  every protocol, on decoded values (:class:`Command`) before the codec sees them;
* commands are joint side; the codec sees the device's side (``direction`` and ``zero_offset``
  applied); replies likewise.

See ``docs/writing_a_device.md`` for a complete device built on it (:mod:`.example.device`).
"""
from __future__ import annotations

import abc
import math
from typing import Any, ClassVar, Dict, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.hardware_config.document import (
    AttributeReader, ElementInfo, UnitInfo, non_negative, to_float,
)
from rospy_control.devices.actuator import (
    ControlMode, MotorState, UnsupportedCommand,
)
from rospy_control.devices.command import Command, Reply
from rospy_control.devices.commanded import CommandedActuator
from rospy_control.devices.unit import frame_bits

__all__ = ["Command", "Reply", "RequestReplyActuator"]

logger = get_logger(__name__)


_LIMP = Command(ControlMode.NONE)
_D = CommandedActuator     # the defaults every actuator shares


class RequestReplyActuator(CommandedActuator):
    """Base of an actuator answering each frame with one reply (see the module docstring).

    Subclasses set ``TYPE_NAME``, ``CAPABILITIES``, ``GAIN_RANGES``, ``EFFORT_LIMIT``, ``ERRORS``,
    ``COMMAND_DLC`` / ``REPLY_DLC`` and implement :meth:`encode_command`, :meth:`decode_reply`,
    :meth:`enable_frame`, :meth:`disable_frame`, :meth:`reply_ids` (or ``shared_reply``), and
    :meth:`zero_frame` where ``CAPABILITIES.set_zero``.  Extra XML attributes: override
    :meth:`read_attributes` (and accept them in ``__init__``).
    """

    _state: MotorState
    # what the protocol can carry
    #: ``{gain attribute: (lo, hi)}`` the frames can encode (checked at start-up)
    GAIN_RANGES: ClassVar[Dict[str, Tuple[float, float]]] = {}
    #: largest torque (N·m) a command can carry
    EFFORT_LIMIT: ClassVar[float] = math.inf
    #: error code -> the name the device's manual gives it
    ERRORS: ClassVar[Dict[int, str]] = {}
    #: data length of a command frame and of a reply (bus-load estimate)
    COMMAND_DLC: ClassVar[int] = 8
    REPLY_DLC: ClassVar[int] = 8
    #: commands and replies use 29-bit ids
    EXTENDED_IDS: ClassVar[bool] = False
    # (the defaults every actuator shares, DEFAULT_DIRECTION ... DEFAULT_MAX_TEMPERATURE, are
    # CommandedActuator's)
    DEFAULT_WATCHDOG_MODE = "position"
    DEFAULT_FIRMWARE_TIMEOUT = 0.0

    def __init__(self, name: str, can_id: int, direction: int = _D.DEFAULT_DIRECTION,
                 zero_offset: float = _D.DEFAULT_ZERO_OFFSET, joint: Optional[str] = None,
                 position_kp: float = _D.DEFAULT_POSITION_KP, position_kd: float = _D.DEFAULT_POSITION_KD,
                 velocity_kd: float = _D.DEFAULT_VELOCITY_KD,
                 max_temperature: float = _D.DEFAULT_MAX_TEMPERATURE,
                 fault_timeout: Optional[float] = None, watchdog_mode: Optional[str] = None,
                 firmware_timeout: float = DEFAULT_FIRMWARE_TIMEOUT, wrap: str = "off") -> None:
        super().__init__(name, can_id, fault_timeout)
        # the latest command: written by the caller's thread, read by the channel thread, as one
        # immutable Command whose sequence number (the watchdog's "a new command came") travels with it
        self._init_commanded(f"motor '{name}'", _LIMP, direction, zero_offset, joint, max_temperature,
                             watchdog_mode, self.DEFAULT_WATCHDOG_MODE, f"motor {name} command",
                             position_kp, position_kd, velocity_kd, wrap)
        if not firmware_timeout >= 0:
            raise ConfigError(f"motor '{name}': firmware_timeout must be >= 0, got {firmware_timeout}")
        #: the device's own CAN timeout (s, 0 = none): it leaves the enabled state when it receives nothing
        #: for that long; after a freeze of at least half of it the next frame re-enables it
        self.firmware_timeout = float(firmware_timeout)
        self._msg = can.Message(arbitration_id=self.command_id(), is_extended_id=self.EXTENDED_IDS,
                                data=bytearray(self.COMMAND_DLC))
        self._zero_requested = False
        self._enabled = False
        # the disable frame sent on FAULT is not answered yet: its reply, late, must not pass for the
        # answer to a reset probe's first frame (see stale_exit_reply)
        self._exit_owed = False
        self._reenter = False
        self._last_tx = 0.0
        self._inflight_before = ControlMode.NONE  # the mode of the command frame before (see on_frame)
        self._inflight_enter = False
        self._temp: Optional[float] = None
        self._volt: Optional[float] = None
        self._amps: Optional[float] = None
        self._err = 0
        # the command watchdog (channel thread) holds limp until it first trips
        self._wd.hold = _LIMP
        self._state = MotorState(name, 0.0, 0.0, 0.0, None, 0, False, ControlMode.NONE,
                                 ControlMode.NONE, False, "", 0.0, False, 0.0, False)

    # == what a protocol writes ==========================================================================
    @abc.abstractmethod
    def encode_command(self, command: Command) -> bytes:
        """The command frame's data for ``command`` (device side; values outside what the frame can
        carry saturate, never wrap)."""

    @abc.abstractmethod
    def decode_reply(self, arb_id: int, data) -> Optional[Reply]:
        """Decode one frame received on :meth:`reply_ids` (``data``: bytes-like, as python-can received
        it); None if it is malformed (counted in ``bad_frames``, the device is not heard)."""

    @abc.abstractmethod
    def enable_frame(self) -> bytes:
        """Data of the frame that enables the device (and clears a latched error, where it does)."""

    @abc.abstractmethod
    def disable_frame(self) -> bytes:
        """Data of the frame that disables the device (limp)."""

    def zero_frame(self) -> bytes:
        """Data of the frame that makes the current position the device's zero."""
        raise UnsupportedCommand(f"{type(self).__name__} '{self.name}' cannot set its zero")

    def command_id(self) -> int:
        """Arbitration id of the frames sent to the device (default: ``can_id``).  Called by the
        constructor: it may use ``can_id`` and class attributes only."""
        return self.can_id

    def error_name(self, code: int) -> str:
        """The device's name of error ``code`` (``ERRORS``), else the code itself."""
        name = self.ERRORS.get(code)
        return f"{name} (error code {code})" if name else f"error code 0x{code:02X}"

    @classmethod
    def read_attributes(cls, r: AttributeReader) -> dict:
        """Constructor arguments of protocol-specific attributes of the ``<unit>`` element."""
        return {}

    @classmethod
    def read_children(cls, el: ElementInfo) -> dict:
        """Constructor arguments of protocol-specific child elements of the ``<unit>`` element."""
        return {}

    # == configuration ===================================================================================
    @classmethod
    def read_settings(cls, info: UnitInfo) -> Dict[str, Any]:
        el = info.element
        r = AttributeReader(el, ignore=("name", "type", "channel"))
        kw = cls._can_kwargs(info, r)
        kw.update(cls.read_common(r))
        kw.update(
            firmware_timeout=r.get("firmware_timeout", to_float, cls.DEFAULT_FIRMWARE_TIMEOUT,
                                   check=non_negative,
                                   expected="a number of seconds >= 0 (0 = the firmware has none)"),
        )
        kw.update(cls.read_attributes(r))
        r.finish()
        gains = el.child("gains")
        if gains is not None:
            g = AttributeReader(gains)
            for gain, default in (("position_kp", cls.DEFAULT_POSITION_KP),
                                  ("position_kd", cls.DEFAULT_POSITION_KD),
                                  ("velocity_kd", cls.DEFAULT_VELOCITY_KD)):
                kw[gain] = g.get(gain, to_float, default, check=non_negative, expected="a number >= 0")
            g.finish()
        kw.update(cls.read_children(el))
        return kw

    def configured(self) -> None:
        self.check_encodable()

    def encodable_ranges(self) -> Dict[str, Tuple[float, float]]:
        return dict(self.GAIN_RANGES)

    @property
    def effort_range(self) -> Tuple[float, float]:
        return (-self.EFFORT_LIMIT, self.EFFORT_LIMIT)

    def bits_per_cycle(self) -> int:
        return frame_bits(self.COMMAND_DLC, self.EXTENDED_IDS) + frame_bits(self.REPLY_DLC, self.EXTENDED_IDS)

    def request_zero(self) -> None:
        if not self.CAPABILITIES.set_zero:
            super().request_zero()
        self._zero_requested = True

    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        super().activate(now, enable, fault_timeout, period, command_timeout)
        self._enabled = False
        self._reenter = False
        self._last_tx = now

    def deactivate(self) -> None:
        super().deactivate()
        self._enabled = False

    def poll(self, now: float) -> Optional[can.Message]:
        self._poll_start(now)
        msg = self._msg
        exit_due = self._exit_due()
        if exit_due is not None:
            if not exit_due:
                return None
            # owed if the device answered the last frame (it reported the fault); one that fell
            # silent will not answer this one either
            self._exit_owed = self._last_reply >= self._sent_at
            msg.data = self.disable_frame()  # type: ignore[assignment]  # any bytes-like is sent
            self._last_tx = now
            self._step_cap.last = None
            return msg
        if not self._active:
            return None
        seq, cmd = self._cmd_buf.read_with_sequence()  # one read: this command and its number
        if self._wd.observe(now, seq) and self._wd.active:
            self._wd_release()
        fw = self.firmware_timeout
        if fw and now - self._last_tx >= 0.5 * fw and self._enabled:
            self._reenter = True  # the device may have left its enabled state while nothing was sent
        self._last_tx = now
        if not self._enabled or self._reenter:
            self._reenter = False
            data = self.enable_frame()
            self._inflight_enter = True
            self._step_cap.last = None
        elif self._zero_requested:
            self._zero_requested = False
            data = self.zero_frame()
            self._step_cap.last = None
        else:
            # the mode confirmed by the reply is the caller's, also while the watchdog holds
            self._inflight_before = self._inflight
            self._inflight = cmd.mode
            cmd = self._cap_step(self._held(seq, cmd))
            data = self._encode(cmd)
        msg.data = data  # type: ignore[assignment]
        self._awaiting = 1
        self._sent_at = now
        return msg

    def stale_exit_reply(self, reply: Reply, now: float) -> bool:
        """Whether ``reply`` answers the disable frame sent on FAULT rather than a reset probe's frame.

        Replies carry no sequence number.  When the host runs the device's side late (a busy laptop,
        a simulator node), the answer to the disable frame can arrive after the probe's first frame
        went out; taken for the probe's answer, its error state (from before the cause was cleared)
        would fail the reset.  So during a probe, the first reply while the disable's answer is still
        owed is taken as that answer: it updates the measured state and proves the device alive, but
        judges nothing.  If it really was the probe's answer, the probe's frame is sent again next
        cycle and its answer judged -- one bus cycle, not a failed reset.  Any reply outside a probe
        ends the debt."""
        if not self._exit_owed:
            return False
        self._exit_owed = False
        if not self._probing:
            return False
        self._measured(reply.position, reply.velocity, reply.effort)
        self._temp = reply.temperature
        self.got_reply(now)
        return True

    def on_frame(self, arb_id: int, data, now: float) -> int:
        reply = self.decode_reply(arb_id, data)
        if reply is None:
            self.bad_frames += 1
            return 0
        if self._exit_owed and self.stale_exit_reply(reply, now):
            return 0
        self._measured(reply.position, reply.velocity, reply.effort)
        temp = self._temp = reply.temperature
        self._volt, self._amps = reply.bus_voltage, reply.current
        err = self._err = reply.error_code
        if err:
            name = self.error_name(err)
            self.report_error(f"motor reported {name}", f"motor still reports {name}")
        elif temp is not None and temp > self.max_temperature:
            what = f"over-temperature: {temp:.0f} C > max_temperature {self.max_temperature:.0f} C"
            self.report_error(what, "motor still reports " + what)
        self.got_reply(now)
        if self._inflight_enter:
            self._inflight_enter = False
            self._enabled = True
            if self._probing:
                self._probe_ok = True
        elif self._inflight_before is self._inflight:
            # A mode is confirmed by a reply only once the frame before the one in flight was in it
            # too: a reply to the last frame of the old mode that arrives late (a simulator or an
            # adapter the host ran late) would otherwise confirm a mode the motor never answered in.
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
            self._enabled and not fault, self._mode, self._cmd_buf.read_from_rt().mode, fault,
            self._fault_reason,
            self._last_reply if self._received else 0.0, self._received, self._fault_time,
            self._wd.active, self._volt, self._amps)
        return s

    def exit_message(self) -> Optional[can.Message]:
        return can.Message(arbitration_id=self.command_id(), is_extended_id=self.EXTENDED_IDS,
                           data=self.disable_frame())

    # -- fault life cycle (the rest is CommandedActuator's) -------------------------------------------------
    def on_probe_start(self, now: float) -> None:
        self._enabled = False
        self._inflight_enter = False
        self._err = 0

    def on_probe_failed(self) -> None:
        super().on_probe_failed()
        self._enabled = False
