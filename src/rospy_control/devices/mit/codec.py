"""MIT-mode motor protocol (Ben Katz Mini-Cheetah firmware, CubeMars AK "MIT mode", DaMiao MIT).

Pure functions, no I/O.  All fields are unsigned, big-endian and linearly mapped onto a per-motor range
(:class:`MitLimits`); the mapping is the firmware's own::

    float_to_uint(x, lo, hi, bits) = int((clamp(x, lo, hi) - lo) * (2**bits - 1) / (hi - lo))   # truncation
    uint_to_float(u, lo, hi, bits) = u * (hi - lo) / (2**bits - 1) + lo

**Command** (host -> motor, ID = motor CAN id, DLC 8)::

    byte 0-1  p_des  16 bit          byte 5    kd[11:4]
    byte 2    v_des[11:4]            byte 6    kd[3:0] << 4 | t_ff[11:8]
    byte 3    v_des[3:0] << 4 | kp[11:8]
    byte 4    kp[7:0]                byte 7    t_ff[7:0]

**Special frames** (DLC 8): ``FF FF FF FF FF FF FF FC`` enter motor mode, ``...FD`` exit motor mode,
``...FE`` set the current position as zero.

**Reply** (motor -> host, ID = master id, default 0), answered to *every* received frame::

    byte 0    motor id
    byte 1-2  position 16 bit
    byte 3    velocity[11:4]
    byte 4    velocity[3:0] << 4 | torque[11:8]
    byte 5    torque[7:0]
    byte 6    DLC 7: bus voltage (V, bgkatz firmware); DLC 8: temperature (deg C, CubeMars)
    byte 7    DLC 8: error code (0 = none)

Replies shorter than 6 bytes raise :class:`MitFrameError`.  Every motor of a bus answers on the same
master id, so a channel tells the replies apart by byte 0: :func:`reply_key` is that demultiplexer
(the channel only knows "shared reply id + key", see ``CanUnit.shared_reply``).  Values are in the
motor's own frame (rotor side of the built-in gearbox, rad, rad/s, N·m); direction and zero offset
are applied by :class:`rospy_control.devices.Motor`.
"""
from __future__ import annotations

import struct
from typing import NamedTuple, Optional

from rospy_control.devices.encodable import check_ordered

__all__ = [
    "MitLimits", "MitReply", "MitFrameError", "pack_command", "unpack_command", "pack_reply",
    "unpack_reply", "ENTER_MOTOR_MODE", "EXIT_MOTOR_MODE", "SET_ZERO", "float_to_uint", "uint_to_float",
    "reply_key", "replace_velocity", "MAX_MOTOR_ID",
]

#: Enter motor mode (enable).
ENTER_MOTOR_MODE = bytes((0xFF,) * 7 + (0xFC,))
#: Exit motor mode (disable; the motor goes limp).
EXIT_MOTOR_MODE = bytes((0xFF,) * 7 + (0xFD,))
#: Make the current position the zero position.
SET_ZERO = bytes((0xFF,) * 7 + (0xFE,))
SPECIAL_FRAMES = (ENTER_MOTOR_MODE, EXIT_MOTOR_MODE, SET_ZERO)

_U64 = struct.Struct(">Q")
_REPLY = struct.Struct(">BHHB")  # id, position, (velocity << 4 | torque high nibble), torque low byte
_REPLY_HEAD = struct.Struct(">BHHBBB")

_MAX12 = 4095
_MAX16 = 65535
_V_MASK = _MAX12 << 36

#: replies carry the motor id in one byte
MAX_MOTOR_ID = 0xFF


class MitFrameError(ValueError):
    """A frame does not have the layout of an MIT reply or command."""


class MitLimits(NamedTuple):
    """Ranges onto which the unsigned fields are mapped (firmware/model specific).

    Units: rad, rad/s, N·m/rad, N·m·s/rad, N·m.  Defaults are the original Mini-Cheetah set.
    """

    p_min: float = -12.5
    p_max: float = 12.5
    v_min: float = -65.0
    v_max: float = 65.0
    kp_min: float = 0.0
    kp_max: float = 500.0
    kd_min: float = 0.0
    kd_max: float = 5.0
    t_min: float = -18.0
    t_max: float = 18.0

    def validate(self) -> None:
        """Raise ValueError naming the first pair with min >= max."""
        check_ordered(self)


class MitReply(NamedTuple):
    """A decoded reply.  ``temperature``/``error`` only with DLC 8, ``voltage`` only with DLC 7."""

    motor_id: int
    position: float
    velocity: float
    torque: float
    temperature: Optional[float] = None
    error: Optional[int] = None
    voltage: Optional[float] = None


def float_to_uint(x: float, lo: float, hi: float, bits: int) -> int:
    """Clamp ``x`` to [lo, hi] and map it onto 0 .. 2**bits-1 (truncating, like the firmware)."""
    if x < lo:
        x = lo
    elif x > hi:
        x = hi
    elif x != x:  # NaN: command the middle of the range is no better than anything; use lo
        x = lo
    return int((x - lo) * ((1 << bits) - 1) / (hi - lo))


def uint_to_float(u: int, lo: float, hi: float, bits: int) -> float:
    """Inverse of :func:`float_to_uint`."""
    return u * (hi - lo) / ((1 << bits) - 1) + lo


def pack_command(p: float, v: float, kp: float, kd: float, t: float, limits: MitLimits) -> bytes:
    """Encode an MIT impedance command ``t_motor = kp*(p - pos) + kd*(v - vel) + t`` (8 bytes).

    Every value is clamped to its range first; NaN maps to the range minimum.
    """
    (p_min, p_max, v_min, v_max, kp_min, kp_max, kd_min, kd_max, t_min, t_max) = limits
    pi = float_to_uint(p, p_min, p_max, 16)
    vi = float_to_uint(v, v_min, v_max, 12)
    kpi = float_to_uint(kp, kp_min, kp_max, 12)
    kdi = float_to_uint(kd, kd_min, kd_max, 12)
    ti = float_to_uint(t, t_min, t_max, 12)
    return _U64.pack((pi << 48) | (vi << 36) | (kpi << 24) | (kdi << 12) | ti)


def unpack_command(data: bytes, limits: MitLimits):
    """Decode a command frame into ``(p, v, kp, kd, t)`` (used by the simulated firmware).

    :raises MitFrameError: DLC is not 8.
    """
    if len(data) != 8:
        raise MitFrameError(f"MIT command must have 8 bytes, got {len(data)}")
    (p_min, p_max, v_min, v_max, kp_min, kp_max, kd_min, kd_max, t_min, t_max) = limits
    (w,) = _U64.unpack(bytes(data))
    return (
        (w >> 48) * (p_max - p_min) / _MAX16 + p_min,
        ((w >> 36) & _MAX12) * (v_max - v_min) / _MAX12 + v_min,
        ((w >> 24) & _MAX12) * (kp_max - kp_min) / _MAX12 + kp_min,
        ((w >> 12) & _MAX12) * (kd_max - kd_min) / _MAX12 + kd_min,
        (w & _MAX12) * (t_max - t_min) / _MAX12 + t_min,
    )


def pack_reply(motor_id: int, position: float, velocity: float, torque: float, limits: MitLimits,
               dlc: int = 6, temperature: float = 25.0, error: int = 0, voltage: float = 24.0) -> bytes:
    """Encode a reply as the firmware does (DLC 6, 7 with voltage, or 8 with temperature and error)."""
    (p_min, p_max, v_min, v_max, _a, _b, _c, _d, t_min, t_max) = limits
    pi = float_to_uint(position, p_min, p_max, 16)
    vi = float_to_uint(velocity, v_min, v_max, 12)
    ti = float_to_uint(torque, t_min, t_max, 12)
    head = _REPLY.pack(motor_id & 0xFF, pi, (vi << 4) | (ti >> 8), ti & 0xFF)
    if dlc == 6:
        return head
    if dlc == 7:
        return head + bytes((max(0, min(255, int(voltage))),))
    if dlc == 8:
        return head + bytes((max(0, min(255, int(temperature))), error & 0xFF))
    raise ValueError(f"MIT reply DLC must be 6, 7 or 8, got {dlc}")


def unpack_reply(data: bytes, limits: MitLimits) -> MitReply:
    """Decode a reply of DLC >= 6 (see the module docstring for the optional bytes 6-7).

    :raises MitFrameError: fewer than 6 bytes.
    """
    n = len(data)
    if n < 6:
        raise MitFrameError(f"MIT reply needs at least 6 bytes, got {n}")
    motor_id, pi, x, tl = _REPLY.unpack_from(data)
    (p_min, p_max, v_min, v_max, _a, _b, _c, _d, t_min, t_max) = limits
    position = pi * (p_max - p_min) / _MAX16 + p_min
    velocity = (x >> 4) * (v_max - v_min) / _MAX12 + v_min
    torque = (((x & 0xF) << 8) | tl) * (t_max - t_min) / _MAX12 + t_min
    if n == 6:
        return MitReply(motor_id, position, velocity, torque)
    if n == 7:
        return MitReply(motor_id, position, velocity, torque, None, None, float(data[6]))
    return MitReply(motor_id, position, velocity, torque, float(data[6]), data[7])


def reply_key(data) -> Optional[int]:
    """Which motor a reply on the master id comes from (byte 0), None for an empty frame."""
    return data[0] if len(data) else None


def replace_velocity(data: bytes, velocity: float, limits: MitLimits) -> bytes:
    """The command ``data`` with ``v_des`` replaced, every other field bit for bit unchanged.

    (Decoding and re-encoding would move ``p_des`` by one step now and then: the codec truncates.)

    :raises MitFrameError: DLC is not 8.
    """
    if len(data) != 8:
        raise MitFrameError(f"MIT command must have 8 bytes, got {len(data)}")
    (w,) = _U64.unpack(bytes(data))
    vi = float_to_uint(velocity, limits.v_min, limits.v_max, 12)
    return _U64.pack((w & ~_V_MASK) | (vi << 36))
