"""What every actuator does with its callers' commands, the same for all six protocols:
:class:`CommandedActuator`.

Both device bases build on it -- the request/reply one (:mod:`.request_reply`: MIT, DaMiao, RobStride,
CubeMars, and ODrive on its cyclic messages) and CiA 402's PDO drive (:mod:`.cia402.device`):

* the latest command travels from the caller's thread to the channel thread in one hand-off buffer
  (:class:`~rospy_control.realtime.RealtimeBuffer`), its sequence number with it;
* a mode is confirmed when the device reported it and the channel published the snapshot of that cycle;
* one command watchdog (:mod:`.watchdog`), configured by ``watchdog_mode`` (the modes a protocol can
  hold with: ``HOLD_MODES``), and one position-step cap (:mod:`.step_cap`), with their counters;
* the direction, zero offset, joint and temperature limit every actuator has, checked once.

A protocol base keeps only what differs: how a command becomes frames and how replies or streamed
frames become state.
"""
from __future__ import annotations

import math
from typing import Any, Callable, ClassVar, Optional, Tuple

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_config.document import AttributeReader, to_float, to_int, to_str
from rospy_control.log import Throttle, get_logger
from rospy_control.devices.actuator import WATCHDOG_MODES, ActuatorUnit, ControlMode, UnsupportedCommand
from rospy_control.devices.command import Command
from rospy_control.devices.step_cap import PositionStepCap
from rospy_control.devices.watchdog import CommandWatchdog
from rospy_control.realtime import RealtimeBuffer

__all__ = ["CommandedActuator"]

logger = get_logger(__name__)

_LIMP = Command(ControlMode.NONE)
_POSITION = ControlMode.POSITION
_isfinite = math.isfinite


class CommandedActuator(ActuatorUnit):
    """The command side every actuator shares (see the module docstring).

    A subclass calls :meth:`_init_commanded` from its constructor, after ``CanUnit.__init__``.
    """

    #: the watchdog modes the device can hold with (a drive without a damping command has no "damping")
    HOLD_MODES: ClassVar[Tuple[str, ...]] = WATCHDOG_MODES
    #: the smallest position step the command frame resolves (rad), for the step cap (a subclass may
    #: set it per instance when it depends on the configuration)
    POSITION_RESOLUTION: float = 0.0
    WATCHDOG_LOG_PERIOD = 5.0
    DEFAULT_DIRECTION = 1
    DEFAULT_ZERO_OFFSET = 0.0
    DEFAULT_MAX_TEMPERATURE = 90.0
    DEFAULT_POSITION_KP = 20.0
    DEFAULT_POSITION_KD = 0.5
    DEFAULT_VELOCITY_KD = 1.0
    #: values of the ``wrap`` attribute: what the RobotHW does with a joint whose first reading lies
    #: outside its limits while one :attr:`wrap_period` away it would lie inside (see
    #: :mod:`rospy_control.robot_hw._start_check`): ``off`` refuses the joint naming the fix, ``auto``
    #: applies the one in-limit reading when it is the only one
    WRAP_MODES = ("off", "auto")

    _cmd_buf: RealtimeBuffer[Any]
    _step_cap: PositionStepCap
    _wd: CommandWatchdog

    def _init_commanded(self, who: str, limp: Any, direction: int, zero_offset: float, joint: Optional[str],
                        max_temperature: float, watchdog_mode: Optional[str], default_watchdog_mode: str,
                        buffer_name: str, position_kp: float = DEFAULT_POSITION_KP,
                        position_kd: float = DEFAULT_POSITION_KD,
                        velocity_kd: float = DEFAULT_VELOCITY_KD, wrap: str = "off") -> None:
        """Check and keep the configuration every actuator has; make the command buffer, the watchdog
        and the step cap.  ``who`` names the device in messages; ``limp`` is the first command; the
        gains go into the commands :meth:`set_command` makes (a device that makes its own ignores them).

        :raises ConfigError: ``direction`` is not 1 or -1, or the watchdog mode is not in ``HOLD_MODES``.
        """
        if direction not in (1, -1):
            raise ConfigError(f"{who}: direction must be 1 or -1, got {direction}")
        self.watchdog_mode_explicit = watchdog_mode is not None
        mode = watchdog_mode if watchdog_mode is not None else default_watchdog_mode
        if mode not in self.HOLD_MODES:
            raise ConfigError(f"{who}: watchdog_mode must be {self._hold_modes_text()}, got {mode!r}")
        if wrap not in self.WRAP_MODES:
            raise ConfigError(f"{who}: wrap must be one of {', '.join(self.WRAP_MODES)}, got {wrap!r}")
        self.direction, self.zero_offset, self.wrap = direction, zero_offset, wrap
        # requests of another thread, applied by the channel thread at the start of a poll
        self._fault_request: Optional[str] = None
        self._zero_shift = 0.0
        self.joint, self.max_temperature, self.watchdog_mode = joint, max_temperature, mode
        self.position_kp, self.position_kd, self.velocity_kd = position_kp, position_kd, velocity_kd
        self.rejected_commands = self.watchdog_trips = 0
        self._non_finite_log = Throttle(5.0)
        self._exit_sent = False
        # the encoded frame of the last command object (commands are immutable: same object, same bytes)
        self._encoded: Tuple[Any, bytes] = (None, b"")
        self._cmd_buf = RealtimeBuffer(limp, name=buffer_name)
        self._mode = ControlMode.NONE
        self._published_mode = ControlMode.NONE
        self._inflight = ControlMode.NONE
        self._pos = 0.0
        self._vel = 0.0
        self._eff = 0.0
        self._step_cap = PositionStepCap(self.name, self.POSITION_RESOLUTION)
        self._wd = CommandWatchdog()
        self._wd_log = Throttle(self.WATCHDOG_LOG_PERIOD)

    @classmethod
    def read_common(cls, r: AttributeReader) -> dict:
        """The attributes every actuator has, read from its ``<unit>`` element: ``direction``,
        ``zero_offset``, ``joint``, ``max_temperature`` and ``watchdog_mode`` (the class's defaults)."""
        return dict(
            direction=r.get("direction", to_int, cls.DEFAULT_DIRECTION, check=lambda v: v in (1, -1),
                            expected="1 or -1"),
            zero_offset=r.get("zero_offset", to_float, cls.DEFAULT_ZERO_OFFSET),
            joint=r.get("joint", to_str, None),
            max_temperature=r.get("max_temperature", to_float, cls.DEFAULT_MAX_TEMPERATURE),
            watchdog_mode=r.get("watchdog_mode", to_str, None, check=lambda v: v in cls.HOLD_MODES,
                                expected=cls._hold_modes_text()),
            wrap=r.get("wrap", to_str, "off", check=lambda v: v in cls.WRAP_MODES,
                       expected="'off' (a joint read a turn off is refused, naming the fix) or 'auto' "
                                "(the one in-limit reading a turn away is applied)"),
        )

    @classmethod
    def _hold_modes_text(cls) -> str:
        modes = [repr(m) for m in cls.HOLD_MODES]
        text = " or ".join(modes) if len(modes) <= 2 else "one of " + ", ".join(modes)
        if "damping" not in cls.HOLD_MODES:
            text += f" ({cls.PROTOCOL} has no damping command)"
        return text

    def _config_error(self, message: str) -> ConfigError:
        """A ConfigError naming the device's file:line (``where``) when it has one."""
        source, _, line = self.where.rpartition(":")
        if source and line.isdigit():
            return ConfigError(message, source=source, line=int(line))
        return ConfigError(message, source=self.where or None)

    def _poll_start(self, now: float) -> None:
        """The start of every ``poll`` (channel thread): the mode the channel published last cycle (what
        :meth:`mode_confirmed` compares), and the probe of a reset the caller asked for."""
        self._published_mode = self._state.mode  # type: ignore[union-attr]
        if self._zero_shift:
            with self._reset_lock:
                shift, self._zero_shift = self._zero_shift, 0.0
            self.zero_offset += shift
            self._step_cap.forget()
        if self._fault_request is not None:
            reason, self._fault_request = self._fault_request, None
            self.set_fault(reason)
        if self._reset_req != self._reset_seen:
            self.begin_poll(now)

    def request_fault(self, reason: str) -> None:
        """Put the device in FAULT with ``reason`` at its next poll (any thread): a RobotHW that will not
        run the device (a joint read outside its limits at start-up).  ``reset_fault`` clears it."""
        self._fault_request = reason

    def shift_zero(self, delta: float) -> None:
        """Move the device's zero by ``delta`` (rad, the device's side) at its next poll (any thread):
        the reading changes by ``-direction * delta`` (a turn the device lost across a power cycle)."""
        with self._reset_lock:
            self._zero_shift += delta

    # -- commands (any thread): a Command with the device's gains -----------------------------------------
    def _rejected(self, *values: float) -> bool:
        for value in values:
            if not math.isfinite(value):
                self.rejected_commands += 1
                if self._non_finite_log.ready():
                    logger.warning("motor '%s': ignoring a non-finite command %r (keeping the previous "
                                   "command; %d rejected so far)", self.name, values, self.rejected_commands)
                return True
        return False

    def _store(self, command: Command) -> None:
        self._cmd_buf.write_from_non_rt(command)

    def set_command(self, mode: ControlMode, value: float = 0.0, effort: float = 0.0) -> None:
        if (mode is _POSITION and _isfinite(value) and _isfinite(effort)
                and _POSITION in self.CAPABILITIES.modes):
            # the control loop's common case, every cycle per motor: the same Command as below without
            # the general path's calls (a subclass that overrides _store still gets it)
            self._store(Command(_POSITION, self.direction * value + self.zero_offset,
                                kp=self.position_kp, kd=self.position_kd))
            return
        if self._rejected(value, effort):
            return
        if mode == ControlMode.MIT:
            raise UnsupportedCommand(f"motor '{self.name}': use set_mit_command() / set_impedance() for "
                                     "MIT mode")
        if mode not in self.CAPABILITIES.modes:
            raise UnsupportedCommand(f"{type(self).__name__} '{self.name}' has no {mode!r} command")
        d = self.direction
        if mode == ControlMode.POSITION:
            cmd = Command(mode, d * value + self.zero_offset, kp=self.position_kp, kd=self.position_kd)
        elif mode == ControlMode.VELOCITY:
            ff = d * effort if self.CAPABILITIES.velocity_effort_ff else 0.0
            cmd = Command(mode, velocity=d * value, effort=ff, kd=self.velocity_kd)
        elif mode == ControlMode.EFFORT:
            cmd = Command(mode, effort=d * value)
        elif mode == ControlMode.DAMPING:
            cmd = Command(mode, kd=self.velocity_kd)
        else:
            cmd = _LIMP
        self._store(cmd)

    def position_setter(self) -> Callable[[float], None]:
        # set_command's position fast path bound in a closure: one call per motor and cycle
        cls = type(self)
        if (_POSITION not in self.CAPABILITIES.modes or cls._store is not CommandedActuator._store
                or cls.set_command is not CommandedActuator.set_command):
            return super().position_setter()  # a subclass that changes either gets its own
        write = self._cmd_buf.write_from_non_rt
        set_command = self.set_command
        new = tuple.__new__

        def set_position_command(position: float) -> None:
            if _isfinite(position):
                write(new(Command, (_POSITION, self.direction * position + self.zero_offset, 0.0, 0.0,
                                    self.position_kp, self.position_kd)))
            else:
                set_command(_POSITION, position)  # rejected, counted and logged there
        return set_position_command

    def set_position(self, position: float, velocity: float = 0.0, effort: float = 0.0) -> None:
        if self._rejected(position, velocity, effort):
            return
        d = self.direction
        caps = self.CAPABILITIES
        self._store(Command(ControlMode.POSITION, d * position + self.zero_offset,
                            d * velocity if caps.position_velocity_ff else 0.0,
                            d * effort if caps.position_effort_ff else 0.0,
                            self.position_kp, self.position_kd))

    def set_impedance(self, position: float, velocity: float, kp: float, kd: float, effort: float) -> None:
        if not self.CAPABILITIES.gains:
            super().set_impedance(position, velocity, kp, kd, effort)
        if self._rejected(position, velocity, kp, kd, effort):
            return
        d = self.direction
        self._store(Command(ControlMode.MIT, d * position + self.zero_offset, d * velocity, d * effort,
                            kp, kd))

    def _cap_step(self, cmd: Command) -> Command:
        """The position-step cap (:mod:`.step_cap`) on the decoded position of a position-holding
        command (kp > 0)."""
        if cmd.mode not in (ControlMode.POSITION, ControlMode.MIT) or not cmd.kp > 0.0:
            self._step_cap.forget()
            return cmd
        measured = self.direction * self._pos + self.zero_offset if self._received else None
        p = self._step_cap.apply(cmd.position, measured)
        return cmd if p == cmd.position else cmd._replace(position=p)

    def encode_command(self, command: Any) -> bytes:
        """The command frame's data for ``command`` (the protocol's codec)."""
        raise NotImplementedError

    def _encode(self, command: Any) -> bytes:
        """:meth:`encode_command`, encoded once per command object (channel thread)."""
        enc = self._encoded
        if enc[0] is command:
            return enc[1]
        data = self.encode_command(command)
        self._encoded = (command, data)
        return data

    def _measured(self, position: float, velocity: float, effort: float) -> None:
        """Keep a reading of the device (its side: before direction and zero offset) as the joint sees
        it (channel thread)."""
        d = self.direction
        self._pos = d * (position - self.zero_offset)
        self._vel = d * velocity
        self._eff = d * effort

    def _exit_due(self) -> Optional[bool]:
        """In ``poll``: None while the device runs (or a reset probes it); True on the cycle its exit
        (disable) frame is due, once per fault; False while it stays faulted (nothing is sent)."""
        if not self._fault or self._probing:
            return None
        if self._exit_sent:
            return False
        self._exit_sent = True
        return True

    # -- modes ---------------------------------------------------------------------------------------------
    def request_mode(self, mode: ControlMode) -> None:
        if mode == ControlMode.MIT:
            self.set_impedance(self._pos, 0.0, self.position_kp, self.position_kd, 0.0)
        elif mode == ControlMode.POSITION:
            self.set_command(mode, self._pos)
        else:
            self.set_command(mode, 0.0)

    def mode_confirmed(self, mode: ControlMode) -> bool:
        return (self._mode == mode and self._cmd_buf.read_from_rt().mode == mode
                and self._published_mode == mode)

    @property
    def command_mode(self) -> ControlMode:
        return self._cmd_buf.read_from_rt().mode

    @property
    def command(self) -> Any:
        """The latest command as the codec will see it (device side; before the watchdog and the cap)."""
        return self._cmd_buf.read_from_rt()

    # -- command watchdog --------------------------------------------------------------------------------
    def set_watchdog_mode(self, mode: str) -> None:
        """:raises ConfigError: (a ValueError) a mode the device cannot hold with, naming its file:line."""
        if mode not in WATCHDOG_MODES:
            raise self._config_error(f"{self.UNIT_KIND} '{self.name}': unknown watchdog_mode {mode!r}; "
                                     f"expected {self._hold_modes_text()}")
        if mode not in self.HOLD_MODES:
            raise self._config_error(f"{self.PROTOCOL} {self.UNIT_KIND} '{self.name}': watchdog_mode "
                                     f"{mode!r} is not available: expected {self._hold_modes_text()}")
        self.watchdog_mode = mode

    @property
    def watchdog_active(self) -> bool:
        return self._wd.active

    @property
    def command_count(self) -> int:
        return self._cmd_buf.sequence()

    # -- position-step cap -------------------------------------------------------------------------------
    def set_max_position_step(self, step: Optional[float]) -> None:
        self._step_cap.resolution = self.POSITION_RESOLUTION   # a device may set it from its ranges
        self._step_cap.set(step)

    @property
    def max_position_step(self) -> Optional[float]:
        return self._step_cap.step

    @property
    def limited_frames(self) -> int:
        return self._step_cap.limited

    # -- activation and the fault life cycle (channel thread) -----------------------------------------------
    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        super().activate(now, enable, fault_timeout, period, command_timeout)
        self._exit_sent = False
        self._wd.start(now, self._cmd_buf.sequence(), period, command_timeout)

    def on_fault(self) -> None:
        """The device faulted: its exit (disable) frame is due once, and the watchdog lets go."""
        self._exit_sent = False
        self._wd.active = False
        self._wd.engaging = False

    def on_probe_failed(self) -> None:
        self._exit_sent = False

    def on_recovered(self, now: float) -> None:
        """The device is enabled again: no mode is confirmed, and the caller's last command is stale
        (a trajectory that was aborted).  The command becomes :meth:`_recovery_command` -- a second
        writer (channel thread, while the unit was in FAULT): last writer wins, and a caller's command
        written after the recovery is the one that counts -- and :meth:`_engage_recovery_hold` says what
        the device does until the caller commands again."""
        self._cmd_buf.write_from_rt(self._recovery_command())
        self._mode = ControlMode.NONE
        self._exit_sent = False
        self._wd_reset(now)
        self._engage_recovery_hold()

    def _recovery_command(self) -> Any:
        return _LIMP

    def _engage_recovery_hold(self) -> None:
        # Limp, a joint under load falls until the caller commands again -- a control loop the host runs
        # late may take 100 ms or more.  Until then the device holds as the command watchdog holds
        # (watchdog_mode: the position it was re-enabled at, damping, or limp for "none"); the caller's
        # next command ends it.
        self._wd_trip(_LIMP, False)
        if self._wd.applied != "none":
            self._wd.active = True
            self._wd.engaging = True

    # -- command watchdog: the hold (channel thread) -------------------------------------------------------
    def _position_hold(self, position: float) -> Any:
        """The command that holds ``position`` (device side) with the position gains."""
        return Command(ControlMode.POSITION, position, kp=self.position_kp, kd=self.position_kd)

    def _damping_hold(self) -> Tuple[Any, str]:
        """The command that only damps, and its description."""
        return Command(ControlMode.DAMPING, kd=self.velocity_kd), f"damping (kp 0, kd {self.velocity_kd:g})"

    def _held(self, seq: int, cmd: Any) -> Any:
        """What to send for the caller's latest command ``cmd`` (number ``seq``): ``cmd``, or the
        watchdog's hold once ``cmd`` is stale (call after ``self._wd.observe``)."""
        wd = self._wd
        if wd.active:
            if wd.applied != self.watchdog_mode:
                self._wd_trip(cmd, False)       # the mode changed during the hold
            if wd.active:
                return wd.hold
        elif wd.due(seq, self.watchdog_mode):
            self._wd_trip(cmd, True)
            return wd.hold
        return cmd

    def _wd_reset(self, now: float) -> None:
        self._wd.reset(now, self._cmd_buf.sequence())

    def _wd_trip(self, cmd: Any, first: bool) -> None:
        """The watchdog's hold for the stale ``cmd`` in the current ``watchdog_mode``: the commanded
        position (stopped), or the measured one when ``cmd`` held none, or damping; ``first``: the
        trip itself (counted, reported), else only the hold is brought up to date."""
        wm = self.watchdog_mode
        self._wd.applied = wm
        if wm == "none":
            self._wd_release()
            return
        if wm == "damping":
            hold, what = self._damping_hold()
        elif cmd.mode == ControlMode.POSITION:
            hold = cmd._replace(velocity=0.0)
            what = f"the commanded position {self.direction * (cmd.position - self.zero_offset):.4f}"
        else:
            hold = self._position_hold(self.direction * self._pos + self.zero_offset)
            what = f"the measured position {self._pos:.4f}"
        self._wd.hold = hold
        if not first:
            return
        self._wd.active = True
        self.watchdog_trips += 1
        stale_ms = 1000.0 * self._wd.stale
        self.emit("watchdog_hold", f"no new command for {stale_ms:.0f} ms (command_timeout "
                                   f"{1000.0 * self._wd.timeout:.0f} ms, last mode {cmd.mode.name}): "
                                   f"holding {what}")
        if self._wd_log.ready("trip"):
            logger.warning("%s '%s': no new command for %.0f ms (command_timeout %.0f ms, last mode %s); "
                           "the watchdog holds %s (watchdog_mode %s; %d trips so far)", self.UNIT_KIND,
                           self.name, stale_ms, 1000.0 * self._wd.timeout, cmd.mode.name, what, wm,
                           self.watchdog_trips)

    def _wd_release(self) -> None:
        if not self._wd.active:
            return
        self._wd.active = False
        self._wd.applied = ""
        if self._wd.engaging:  # the hold after a recovery: no watchdog trip to report the end of
            self._wd.engaging = False
            return
        self.emit("watchdog_released", "new command: the watchdog hold ended")
        if self._wd_log.ready("release"):
            logger.info("%s '%s': commands resumed, watchdog hold ended", self.UNIT_KIND, self.name)
