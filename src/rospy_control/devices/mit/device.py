"""MIT-mode motors: :class:`Motor`, the MIT protocol behind the device contract
(:class:`~.actuator.ActuatorUnit`, which also defines :class:`ControlMode` and :class:`MotorState`)."""
from __future__ import annotations

import struct
from typing import Dict, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.hardware_config.document import (
    AttributeReader, ElementInfo, positive, to_float, to_int, to_str,
)
from rospy_control.devices.cubemars import codec as cm
from rospy_control.devices.mit import codec as mit
from rospy_control.devices.actuator import WATCHDOG_MODES, Capabilities, ControlMode, MotorState, check_choice
from rospy_control.devices.unit import SharedReply, frame_bits
from rospy_control.devices.request_reply import Command, Reply, RequestReplyActuator

_D = RequestReplyActuator   # the defaults every actuator shares

logger = get_logger(__name__)

_U64 = struct.Struct(">Q")

__all__ = ["ControlMode", "Motor", "MotorState", "WATCHDOG_MODES", "FIRMWARES"]

#: values of the ``firmware`` attribute: ``mit`` (MIT mode on 11-bit ids, the default) and
#: ``cubemars_v3`` (CubeMars AK "V3" firmware: MIT mode over 29-bit ids, :mod:`.protocols.cubemars`)
FIRMWARES = ("mit", "cubemars_v3")
_V3_ATTRIBUTES = ("frame_layout", "pole_pairs", "gear_ratio", "torque_constant")


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


class Motor(RequestReplyActuator):
    """An MIT-mode motor (CubeMars AK, Mini-Cheetah firmware, DaMiao in MIT mode).

    Joint-side values (what :class:`MotorState` reports and commands take) relate to the motor's
    own values by ``motor = direction * joint + zero_offset`` for positions and
    ``motor = direction * joint`` for velocities and torques; gains are unchanged.  Commands are
    clamped to the motor's :class:`~rospy_control.devices.mit.codec.MitLimits`.

    This class is only the MIT codec (:meth:`encode_command`, :meth:`decode_reply`, the special frames,
    the shared reply id); the command cycle, the fault life cycle, the watchdog and the position-step
    cap are :class:`~rospy_control.devices.RequestReplyActuator`'s, on decoded values.

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
    :param firmware: ``"mit"`` or ``"cubemars_v3"``: CubeMars AK motors with the V3 firmware take MIT
        commands on the 29-bit id ``0x800 + can_id`` (gains first in the frame, ``frame_layout="v3"``;
        ``"mit"`` keeps the Mini-Cheetah order) and answer on ``0x2900 + can_id`` with position
        (0.1 deg), speed (10 ERPM) and current (0.01 A), turned into SI units by ``scale``
        (pole pairs, gear ratio, torque constant), temperature and an error code named as
        CubeMars' manual names it (:data:`~rospy_control.devices.cubemars.codec.ERRORS`).
        Its enable / disable frame is a limp MIT frame (the V3 documents read name no enter / exit
        frame), set zero the set-origin frame ``0x500 + can_id`` (until power-off; no answer).
    """

    TYPE_NAME = "rospy_control/Motor"
    _state: MotorState
    PROBE_REQUEST = "enter-motor-mode"
    PROTOCOL = "MIT mode"
    CAPABILITIES = Capabilities(modes=frozenset(ControlMode), position_velocity_ff=True,
                                position_effort_ff=True, velocity_effort_ff=True, gains=True, set_zero=True)
    #: seconds between two watchdog warnings of one motor
    WATCHDOG_LOG_PERIOD = 5.0
    UNIT_KIND = "motor"
    # Defaults of the constructor's arguments, which are also the hardware XML's (docs/hardware_xml.md).
    DEFAULT_LIMITS = mit.MitLimits()
    DEFAULT_REPLY_DLC = 8
    #: used when neither the configuration nor :meth:`set_watchdog_mode` chose one
    DEFAULT_WATCHDOG_MODE = "position"
    DEFAULT_FIRMWARE_TIMEOUT = 0.0

    def __init__(self, name: str, can_id: int, limits: mit.MitLimits = DEFAULT_LIMITS,
                 direction: int = _D.DEFAULT_DIRECTION, zero_offset: float = _D.DEFAULT_ZERO_OFFSET,
                 joint: Optional[str] = None, position_kp: float = _D.DEFAULT_POSITION_KP,
                 position_kd: float = _D.DEFAULT_POSITION_KD, velocity_kd: float = _D.DEFAULT_VELOCITY_KD,
                 reply_dlc: int = DEFAULT_REPLY_DLC, max_temperature: float = _D.DEFAULT_MAX_TEMPERATURE,
                 fault_timeout: Optional[float] = None, watchdog_mode: Optional[str] = None,
                 firmware_timeout: float = DEFAULT_FIRMWARE_TIMEOUT, firmware: str = "mit",
                 frame_layout: str = cm.LAYOUT_V3, scale: cm.CubeMarsV3Scale = cm.CubeMarsV3Scale(),
                 wrap: str = "off") -> None:
        check_choice(name, "firmware", firmware, FIRMWARES)
        self.firmware = firmware
        self.v3 = firmware == "cubemars_v3"
        if self.v3:
            if not 0 <= can_id <= 0xFF:
                raise ConfigError(f"motor '{name}': can_id 0x{can_id:X} outside the CubeMars controller ids "
                                  "0x00..0xFF")
            if frame_layout not in (cm.LAYOUT_V3, cm.LAYOUT_MIT):
                raise ConfigError(f"motor '{name}': frame_layout must be '{cm.LAYOUT_V3}' or "
                                  f"'{cm.LAYOUT_MIT}', got {frame_layout!r}")
            # per instance: the firmware is an attribute of the unit, not of the class
            self.EXTENDED_IDS = True  # type: ignore[misc]
            self.ERRORS = dict(cm.ERRORS)  # type: ignore[misc]
            reply_dlc = 8
        self.frame_layout = frame_layout
        self.scale = scale
        super().__init__(name, can_id, direction=direction, zero_offset=zero_offset, joint=joint,
                         position_kp=position_kp, position_kd=position_kd, velocity_kd=velocity_kd,
                         max_temperature=max_temperature, fault_timeout=fault_timeout,
                         watchdog_mode=watchdog_mode, firmware_timeout=firmware_timeout, wrap=wrap)
        limits.validate()
        self.limits = limits
        self.reply_dlc = reply_dlc
        #: the step of the 16-bit position field (the position-step cap moves in whole steps of it)
        self.POSITION_RESOLUTION = (limits.p_max - limits.p_min) / 65535.0
        # precomputed decode factors (motor frame)
        p_min, p_max, v_min, v_max = limits.p_min, limits.p_max, limits.v_min, limits.v_max
        self._pk, self._p0 = (p_max - p_min) / 65535.0, p_min
        self._vk, self._v0 = (v_max - v_min) / 4095.0, v_min
        self._tk, self._t0 = (limits.t_max - limits.t_min) / 4095.0, limits.t_min
        self._limp = mit.pack_command(0, 0, 0, 0, 0, limits)
        # POSITION commands without feed-forward differ only in p: the other 48 bits are cached
        self._pos_key: Optional[tuple] = None
        self._pos_low = 0
        if self.v3:
            self.PROTOCOL = "CubeMars V3 MIT mode"
            self._limp = cm.pack_command(0, 0, 0, 0, 0, limits, frame_layout)
            self._origin = cm.pack_set_origin(False)

    # -- configuration ------------------------------------------------------------------------------
    @classmethod
    def read_attributes(cls, r: AttributeReader) -> dict:
        """``reply_dlc`` and ``firmware``; with CubeMars V3, its frame layout and scale."""
        el = r.element
        kw = dict(
            reply_dlc=r.get("reply_dlc", to_int, cls.DEFAULT_REPLY_DLC, check=lambda v: v in (6, 7, 8),
                            expected="6, 7 or 8"),
            firmware=r.get("firmware", to_str, "mit", check=lambda v: v in FIRMWARES,
                           expected="one of " + ", ".join(FIRMWARES)),
        )
        if kw["firmware"] == "cubemars_v3":
            d = cm.CubeMarsV3Scale()
            kw["frame_layout"] = r.get("frame_layout", to_str, cm.LAYOUT_V3,
                                       check=lambda v: v in (cm.LAYOUT_V3, cm.LAYOUT_MIT),
                                       expected=f"'{cm.LAYOUT_V3}' (gains first) or '{cm.LAYOUT_MIT}' "
                                                "(Mini-Cheetah order)")
            kw["scale"] = cm.CubeMarsV3Scale(
                r.get("pole_pairs", to_int, d.pole_pairs, check=lambda v: v > 0,
                      expected="a positive integer"),
                r.get("gear_ratio", to_float, d.gear_ratio, check=positive, expected="a positive ratio"),
                r.get("torque_constant", to_float, d.torque_constant, check=positive,
                      expected="a positive torque constant (output N m per A)"))
            if "reply_dlc" in el.attributes and kw["reply_dlc"] != 8:
                raise el.error(f"attribute 'reply_dlc'={kw['reply_dlc']}: CubeMars V3 feedback has 8 bytes")
        else:
            for attr in _V3_ATTRIBUTES:
                if attr in el.attributes:
                    raise el.error(f"attribute '{attr}'='{el.attributes[attr]}' is only used with "
                                   "firmware=\"cubemars_v3\"")
        return kw

    @classmethod
    def read_children(cls, el: ElementInfo) -> dict:
        """The ``<limits>`` child: the ranges the MIT frame's fields encode."""
        return {"limits": _read_limits(el.child("limits"), cls.DEFAULT_LIMITS, el)}

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

    # -- the MIT codec (channel thread) ------------------------------------------------------------------
    def encode_command(self, command: Command) -> bytes:
        mode = command.mode
        if self.v3:
            if mode == ControlMode.NONE:
                return self._limp
            return cm.pack_command(command.position, command.velocity, command.kp, command.kd, command.effort,
                                   self.limits, self.frame_layout)
        if mode == ControlMode.POSITION and not command.velocity and not command.effort:
            return self._position_frame(command.position, command.kp, command.kd)
        if mode == ControlMode.NONE:
            return self._limp
        return mit.pack_command(command.position, command.velocity, command.kp, command.kd, command.effort,
                                self.limits)

    def _position_frame(self, p: float, kp: float, kd: float) -> bytes:
        """``mit.pack_command(p, 0, kp, kd, 0, limits)``, bit for bit, with the fields other than ``p``
        packed once per (gains, limits) instead of at every command."""
        limits = self.limits
        key = (kp, kd, limits)
        if key != self._pos_key:
            self._pos_low = _U64.unpack(mit.pack_command(limits.p_min, 0.0, kp, kd, 0.0, limits))[0] \
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

    def decode_reply(self, arb_id: int, data) -> Optional[Reply]:
        if self.v3:
            try:
                f = cm.unpack_feedback(arb_id, data, self.scale)
            except cm.CubeMarsFrameError:
                return None
            return Reply(f.position, f.velocity, f.torque, f.temperature, f.error,
                         current=f.torque / self.scale.torque_constant)
        n = len(data)
        if n < 6:
            return None
        _id, pi, x, tl = _REPLY.unpack_from(data)
        position = pi * self._pk + self._p0
        velocity = (x >> 4) * self._vk + self._v0
        effort = (((x & 0xF) << 8) | tl) * self._tk + self._t0
        if n >= 8:
            return Reply(position, velocity, effort, float(data[6]), data[7])
        if n == 7:   # the original (bgkatz) firmware's bus voltage
            return Reply(position, velocity, effort, bus_voltage=float(data[6]))
        return Reply(position, velocity, effort)

    def enable_frame(self) -> bytes:
        return self._limp if self.v3 else mit.ENTER_MOTOR_MODE

    def disable_frame(self) -> bytes:
        return self._limp if self.v3 else mit.EXIT_MOTOR_MODE

    def zero_frame(self) -> bytes:
        return self._origin if self.v3 else mit.SET_ZERO

    def command_id(self) -> int:
        return cm.command_id(self.can_id) if self.v3 else self.can_id

    def poll(self, now: float) -> Optional[can.Message]:
        msg = super().poll(now)
        if msg is None or not self.v3:
            return msg
        if msg.data is self._origin:
            # set-origin has its own id and no answer
            msg.arbitration_id = cm.origin_id(self.can_id)
            msg.dlc = len(self._origin)
            self._awaiting = 0
        else:
            msg.arbitration_id = cm.command_id(self.can_id)
            msg.dlc = 8
        return msg

    # -- commands (any thread, non-blocking) ----------------------------------------------------------------
    def set_mit_command(self, position: float, velocity: float, kp: float, kd: float, effort: float) -> None:
        """MIT impedance command: ``tau = kp (p - pos) + kd (v - vel) + effort`` (joint side)."""
        self.set_impedance(position, velocity, kp, kd, effort)

    # -- routing ----------------------------------------------------------------------------------------
    def request_ids(self) -> Tuple[int, ...]:
        return () if self.v3 else (self.can_id,)

    def extended_routes(self) -> Tuple[Tuple[int, int], ...]:
        """CubeMars V3: the feedback on ``0x2900 + can_id``."""
        return ((0x1FFFFFFF, cm.feedback_id(self.can_id)),) if self.v3 else ()

    def shared_reply(self, master_id: int) -> Optional[SharedReply]:
        """MIT motors answer on the channel's master id with their id in byte 0 (V3: None)."""
        if self.v3:
            return None
        if self.can_id > mit.MAX_MOTOR_ID:
            raise ConfigError(f"motor '{self.name}' ({self.where}): can_id 0x{self.can_id:X} does not "
                              "fit reply byte 0 (MIT replies carry the id in one byte)")
        return SharedReply(master_id, self.can_id, mit.reply_key)

    def bits_per_cycle(self) -> int:
        if self.v3:
            return 2 * frame_bits(8, True)
        return frame_bits(8) + frame_bits(self.reply_dlc)
