"""The device contract of an actuator: :class:`ActuatorUnit`, its :class:`ControlMode`, its state record
:class:`MotorState` and its :class:`Capabilities`.

Everything above the middleware -- the RobotHW, the control loop, fault reset, gravity feed-forward,
``/diagnostics``, ``hw_check`` -- talks to an actuator only through :class:`ActuatorUnit`, in SI units
and joint-side values, never through a protocol.  A protocol is one subclass.  A device that answers
each command frame with one reply is written on
:class:`~rospy_control.devices.RequestReplyActuator` (MIT mode,
:class:`~rospy_control.devices.Motor`, is one), which carries the protocol-free machinery
(command watchdog, position-step cap, fault life cycle, reset probes), so that the device itself only
encodes and decodes frames (``docs/writing_a_device.md``).

What an actuator offers (all methods any thread, non-blocking, unless noted)

* **state**: :meth:`state` -> :class:`MotorState` (position, velocity, effort, temperature, error
  code, enabled, confirmed and requested mode, fault and its reason, liveness: ``received`` and
  ``stamp``, the watchdog flag), replaced once per channel cycle;
* **commands** per :class:`ControlMode`: :meth:`set_command` (POSITION, VELOCITY with effort
  feed-forward, EFFORT, NONE = limp, DAMPING), :meth:`set_position` (position with velocity and
  effort feed-forward), :meth:`set_damping`, :meth:`set_impedance` (position, velocity, gains and
  effort in one command, where ``CAPABILITIES.gains``);
* **mode switch with confirmation**: :meth:`request_mode` (switch with a safe value: hold the
  measured position, zero velocity/effort), :meth:`mode_confirmed`, :attr:`command_mode`;
* **enable / disable / reset**: the channel enables every actuator when it starts (listen-only
  channels do not) and disables it at shutdown; :meth:`reset_fault` / :meth:`reset_outcome` re-enable
  a faulted one (a probe: recovered only on a valid reply); :meth:`request_zero` where
  ``CAPABILITIES.set_zero``;
* **liveness and faults**: :attr:`fault`, :attr:`fault_reason`, :attr:`fault_time`,
  :attr:`detection_time`, :attr:`resetting` (see :class:`~rospy_control.devices.CanUnit`);
* **command watchdog**: :meth:`set_watchdog_mode` (``position``, ``damping``, ``none``),
  :attr:`watchdog_active`, :attr:`command_count`, ``watchdog_trips``;
* **position-step cap** on what goes to the device: :meth:`set_max_position_step`,
  :attr:`max_position_step`, :attr:`limited_frames`;
* **configuration** the upper layers read: ``joint`` (1:1 binding, or None), ``direction``,
  ``zero_offset``, ``max_temperature``, ``watchdog_mode`` / ``watchdog_mode_explicit``,
  :attr:`effort_range` (joint side), :meth:`encodable_ranges` (what the protocol can carry).
"""
from __future__ import annotations

import abc
import math
import functools
from enum import IntEnum
from typing import Callable, ClassVar, Dict, FrozenSet, NamedTuple, Optional, Sequence, Tuple

from rospy_control.exceptions import ConfigError
from rospy_control.devices.encodable import encodable_error
from rospy_control.devices.unit import CanUnit

__all__ = ["ControlMode", "MotorState", "ActuatorState", "Capabilities", "HomingState", "ActuatorUnit",
           "WATCHDOG_MODES", "check_choice", "UnsupportedCommand"]

#: values of :attr:`ActuatorUnit.watchdog_mode`
WATCHDOG_MODES = ("position", "damping", "none")


class ControlMode(IntEnum):
    """What an actuator is commanded to do (protocol-free; each device says how it realises them).

    * ``NONE``: limp (enabled, no torque; the device is still polled).
    * ``POSITION``: track a position (rad) with the device's position gains, optionally with velocity
      and effort feed-forward.
    * ``VELOCITY``: track a velocity (rad/s), optionally with effort feed-forward.
    * ``EFFORT``: apply a torque (N·m).
    * ``MIT``: impedance command: position, velocity, gains and effort given per command
      (:meth:`ActuatorUnit.set_impedance`, devices with ``CAPABILITIES.gains``).
    * ``DAMPING``: no position or velocity target, only the damping gain (the joint can be pushed by
      hand, but does not fall freely): the RobotHW's ``hold_mode`` ``damping``.
    """

    NONE = 0
    POSITION = 1
    VELOCITY = 2
    EFFORT = 3
    MIT = 4
    DAMPING = 5


class MotorState(NamedTuple):
    """One cycle's view of an actuator, in joint-side units (direction and zero offset applied)."""

    name: str
    position: float        #: rad (m for linear actuators)
    velocity: float        #: rad/s
    effort: float          #: N·m
    temperature: Optional[float]  #: deg C, None when the device does not report it
    error_code: int        #: the device's own error code, 0 = none
    enabled: bool          #: the device confirmed it is enabled
    mode: ControlMode      #: confirmed mode: a reply arrived after a frame in this mode was sent
    requested_mode: ControlMode
    fault: bool            #: stays True while a reset is being probed, until recovery is confirmed
    fault_reason: str
    stamp: float           #: time.perf_counter() of the last reply, 0.0 if none yet
    received: bool         #: the device's position was decoded at least once (its values are real)
    fault_time: float = 0.0   #: time.time() when the fault happened, 0.0 when not in FAULT
    watchdog: bool = False    #: the command watchdog holds the actuator (no new command for command_timeout)
    bus_voltage: Optional[float] = None  #: V, None when the device does not report it
    current: Optional[float] = None      #: A (the motor's torque-producing current), None when not reported


#: the contract's name for the state record (``MotorState`` is kept for the existing API)
ActuatorState = MotorState


class Capabilities(NamedTuple):
    """What a device type can be commanded to do (class attribute ``CAPABILITIES`` of each type).

    The RobotHW offers a joint command interface only where every actuator of its transmission has
    the mode; a command the device cannot carry raises :class:`UnsupportedCommand`.
    """

    #: the :class:`ControlMode` values :meth:`ActuatorUnit.set_command` accepts
    modes: FrozenSet[ControlMode] = frozenset((ControlMode.NONE, ControlMode.POSITION, ControlMode.VELOCITY,
                                               ControlMode.EFFORT, ControlMode.DAMPING))
    #: :meth:`ActuatorUnit.set_position` sends its velocity feed-forward (else it is dropped)
    position_velocity_ff: bool = False
    #: :meth:`ActuatorUnit.set_position` sends its effort feed-forward (else it is dropped)
    position_effort_ff: bool = False
    #: ``set_command(VELOCITY, v, effort)`` sends the effort feed-forward (else it is dropped)
    velocity_effort_ff: bool = False
    #: gains per command (:meth:`ActuatorUnit.set_impedance`, ControlMode.MIT)
    gains: bool = False
    #: :meth:`ActuatorUnit.request_zero` (the device can make its current position its zero)
    set_zero: bool = False
    #: :meth:`ActuatorUnit.request_home` (the device homes itself, as its configuration says)
    home: bool = False


class HomingState(NamedTuple):
    """What an actuator says of its homing (:meth:`ActuatorUnit.homing_state`): ``active`` while it
    runs; ``ok`` True or False once it ended (None before any); ``message`` says how; ``number`` the
    homings requested so far (a caller waits for the one it started to end)."""

    active: bool = False
    ok: Optional[bool] = None
    message: str = "never homed"
    number: int = 0


class UnsupportedCommand(ValueError):
    """The device cannot carry this command (see :class:`Capabilities`)."""


class ActuatorUnit(CanUnit, abc.ABC):
    """An actuator on a CAN channel: the contract every upper layer uses (see the module docstring).

    A protocol subclasses this (or :class:`~rospy_control.devices.RequestReplyActuator`) and
    implements the abstract methods; the channel drives it through the public channel contract of
    :class:`~rospy_control.devices.CanUnit` (``poll``, ``on_frame``, ``end_cycle``, ...).
    """

    UNIT_KIND = "motor"
    PROBE_REQUEST = "enable"
    #: the protocol's name in messages ("... is outside what MIT mode can encode ...")
    PROTOCOL = "its protocol"
    #: what the device type can do
    CAPABILITIES: ClassVar[Capabilities] = Capabilities()

    # configuration every actuator has (set by the subclass's constructor)
    joint: Optional[str] = None
    direction: int = 1
    zero_offset: float = 0.0
    max_temperature: float = 90.0
    watchdog_mode: str = "position"
    watchdog_mode_explicit: bool = False
    #: commands dropped because a value was NaN or infinite
    rejected_commands: int = 0
    #: seconds the device may need from activation until it confirms it is enabled (a protocol
    #: whose start-up takes longer, e.g. CANopen's boot-up and SDO configuration, says so)
    STARTUP_TIMEOUT: ClassVar[float] = 2.0

    @property
    def startup_timeout(self) -> float:
        """How long :meth:`Middleware.start <rospy_control.middleware.Middleware.start>` waits at most
        for this device to confirm it is enabled (``state().enabled``) or to fault; until then its
        joints take no trajectory."""
        return self.STARTUP_TIMEOUT

    #: what the RobotHW does with a joint read a turn off at start-up (``off`` / ``auto``, see
    #: :class:`~rospy_control.devices.commanded.CommandedActuator`)
    wrap: str = "off"
    #: the span (rad, the unit's side) of the position the device keeps across a power cycle: an
    #: actuator that counts turns only while powered boots within one turn of its output
    WRAP_PERIOD: float = 2.0 * math.pi

    def request_fault(self, reason: str) -> None:
        """Put the device in FAULT with ``reason`` (any thread; the shared command side does it at the
        next poll).  A device type without it is left running, and its joint is not commanded."""

    def shift_zero(self, delta: float) -> None:
        """Move the device's zero by ``delta`` (rad, the device's side; any thread)."""
        self.zero_offset += delta

    # -- state ----------------------------------------------------------------------------------------
    def state(self) -> MotorState:
        """The latest state record (replaced once per channel cycle)."""
        return self._state  # type: ignore[return-value]

    @property
    @abc.abstractmethod
    def effort_range(self) -> Tuple[float, float]:
        """``(lo, hi)`` torque (N·m, joint side: direction applied) the device can be commanded."""

    def encodable_ranges(self) -> Dict[str, Tuple[float, float]]:
        """``{attribute: (lo, hi)}``: the range the protocol can carry of each configured gain or limit
        (``position_kp``, ``position_kd``, ``velocity_kd``, ...); see :meth:`check_encodable`."""
        return {}

    def check_encodable(self, where: str = "") -> None:
        """Raise ConfigError naming the unit, the attribute, the value and the range if a configured
        value lies outside what the protocol can carry (called at start-up by ``from_info``; the
        wording is :func:`~rospy_control.devices.encodable.encodable_error`'s).

        A device would otherwise clamp it silently in every frame.
        """
        for attr, (lo, hi) in self.encodable_ranges().items():
            value = getattr(self, attr)
            msg = encodable_error(attr, value, lo, hi, self.PROTOCOL, self.name)
            if msg is not None:
                raise ConfigError(f"{msg}; every frame would carry {min(max(value, lo), hi):g} instead",
                                  *_split_where(where or self.where))

    def supports(self, mode: ControlMode) -> bool:
        """The device can be commanded in ``mode``."""
        return mode in self.CAPABILITIES.modes

    # -- commands -------------------------------------------------------------------------------------
    @abc.abstractmethod
    def set_command(self, mode: ControlMode, value: float = 0.0, effort: float = 0.0) -> None:
        """Command ``value`` in ``mode`` (POSITION rad, VELOCITY rad/s, EFFORT N·m; NONE and DAMPING
        ignore it); ``effort``: torque feed-forward (N·m) of a VELOCITY command.  A NaN or infinite
        value is ignored (the previous command stays) and counted in :attr:`rejected_commands`.  Every
        call is a new command for the watchdog."""

    @abc.abstractmethod
    def set_position(self, position: float, velocity: float = 0.0, effort: float = 0.0) -> None:
        """POSITION mode with velocity (rad/s) and effort (N·m) feed-forward."""

    def position_setter(self) -> Callable[[float], None]:
        """A callable ``f(position)`` that does what ``set_command(ControlMode.POSITION, position)``
        does, bound once by a caller that sends a position every cycle (the RobotHW's write).  This
        default binds :meth:`set_command`; a device may return a faster equivalent."""
        return functools.partial(self.set_command, ControlMode.POSITION)

    def set_damping(self) -> None:
        """DAMPING mode: only the damping gain (``velocity_kd`` where the device has one)."""
        self.set_command(ControlMode.DAMPING)

    def set_impedance(self, position: float, velocity: float, kp: float, kd: float, effort: float) -> None:
        """ControlMode.MIT: ``tau = kp (position - p) + kd (velocity - v) + effort`` (joint side).

        :raises UnsupportedCommand: the device has no gains per command.
        """
        raise UnsupportedCommand(f"{type(self).__name__} '{self.name}' has no impedance (MIT) command")

    @abc.abstractmethod
    def request_mode(self, mode: ControlMode) -> None:
        """Switch to ``mode`` with a safe value: POSITION holds the last measured position, VELOCITY
        0 rad/s, EFFORT 0 N·m, DAMPING and NONE as they are, MIT holds position with the position
        gains."""

    @abc.abstractmethod
    def mode_confirmed(self, mode: ControlMode) -> bool:
        """True once a reply arrived after a frame in ``mode`` was sent and the channel published the
        snapshot of the cycle that received it (so a snapshot taken after this shows ``mode``)."""

    @property
    @abc.abstractmethod
    def command_mode(self) -> ControlMode:
        """The mode of the latest command (requested, not necessarily confirmed)."""

    def request_zero(self) -> None:
        """Make the current position the device's zero (once, at the next cycle).

        :raises UnsupportedCommand: the device cannot.
        """
        raise UnsupportedCommand(f"{type(self).__name__} '{self.name}' cannot set its zero")

    def request_home(self) -> int:
        """Start the device's homing (once, at the next cycle); the number of this homing, which
        :meth:`homing_state` shows in ``number`` (the caller waits for it to end there).

        :raises UnsupportedCommand: the device cannot, or its configuration gives no homing."""
        raise UnsupportedCommand(f"{type(self).__name__} '{self.name}' has no homing")

    def homing_state(self) -> HomingState:
        """The latest homing's state (any thread): never homed, running, ended ok or failed."""
        return HomingState()

    # -- command watchdog -------------------------------------------------------------------------------
    @abc.abstractmethod
    def set_watchdog_mode(self, mode: str) -> None:
        """What the command watchdog does when commands stop: ``"position"`` (hold), ``"damping"``
        or ``"none"`` (keep sending the stale command).  :raises ValueError: unknown mode."""

    @property
    @abc.abstractmethod
    def watchdog_active(self) -> bool:
        """The watchdog currently holds the actuator instead of sending the stale command."""

    @property
    @abc.abstractmethod
    def command_count(self) -> int:
        """How many commands the callers gave (the watchdog's counter)."""

    # -- position-step cap -------------------------------------------------------------------------------
    @abc.abstractmethod
    def set_max_position_step(self, step: Optional[float]) -> None:
        """Cap the position step between two frames sent to the device (rad; None/0 = off)."""

    @property
    @abc.abstractmethod
    def max_position_step(self) -> Optional[float]:
        """The cap in rad as the protocol can carry it (never above the requested one), None = off."""

    @property
    @abc.abstractmethod
    def limited_frames(self) -> int:
        """Frames whose position step was capped."""


def check_choice(name: str, attribute: str, value: object, allowed: Sequence[str]) -> None:
    """:raises ConfigError: ``value`` of motor ``name``'s ``attribute`` is not one of ``allowed``."""
    if value not in allowed:
        raise ConfigError(f"motor '{name}': {attribute} must be one of {', '.join(allowed)}, got {value!r}")


def _split_where(where: str) -> Tuple[Optional[str], Optional[int]]:
    """``"file:line"`` -> ``(file, line)`` for :class:`ConfigError`."""
    if not where:
        return None, None
    path, sep, line = where.rpartition(":")
    if sep and line.isdigit():
        return path, int(line)
    return where, None
