"""CubeMars AK series with the "V3" driver firmware: MIT mode over 29-bit (extended) ids.

Pure functions, no I/O.  Reuses the MIT codec's field mapping (:func:`.mit.float_to_uint`, truncating,
and :class:`.mit.MitLimits` for the per-model ranges).

Documents followed: CubeMars' "AK Series Module Product Manual" V3.0.1 (the force-control / MIT
packet 8 and the servo-mode feedback packet) and CubeMars' ``AK-V3.ino`` example, as read through two
independent third-party implementations that agree byte for byte (a python-can port of ``AK-V3.ino``
and a ``cansend`` V3 MIT tool).  The vendor PDF itself was not at hand: everything here is marked
[3P] in docs/protocols.md.

**Ids** (CAN 2.0B, 29 bit): ``packet << 8 | controller_id``::

    packet 8  (0x800 + id)   MIT command, 8 bytes
    packet 5  (0x500 + id)   set origin: 1 byte, 0 = until power-off, 1 = permanent (flash)
    packet 41 (0x2900 + id)  feedback from the motor

**MIT command** -- the V3 layout puts the gains first (unlike the Mini-Cheetah order of :mod:`.mit`)::

    byte 0  kp[11:4]            byte 3  p[15:8]            byte 6  v[3:0] << 4 | t[11:8]
    byte 1  kp[3:0] << 4 | kd[11:8]    byte 4  p[7:0]      byte 7  t[7:0]
    byte 2  kd[7:0]             byte 5  v[11:4]

``LAYOUT_MIT`` packs the classic Mini-Cheetah order instead, over the same extended id, for firmwares
that kept it (the facts file lists the V3 byte layout as unverified; the V3 sources read say
``LAYOUT_V3``, the default).

**Feedback** (big-endian)::

    int16 position x 0.1 deg | int16 speed x 10 ERPM | int16 current x 0.01 A | int8 temperature deg C |
    u8 error code

:class:`CubeMarsV3Scale` turns these into rad, rad/s and N·m with the motor's pole pairs, gear ratio
and torque constant (the position is taken as the output shaft's, the speed as the rotor's
electrical rpm: both [U] until checked on a motor).  Error codes: 0 none, 1 motor over-temperature,
2 over-current, 3 over-voltage, 4 under-voltage, 5 encoder fault, 6 MOSFET over-temperature, 7 motor
stall.

Unverified: enter/exit motor mode frames on V3 (the sources send MIT frames straight away; a limp
motor is an MIT frame with kp = kd = t = 0), whether feedback answers each command or is uploaded
periodically, the position's shaft.
"""
from __future__ import annotations

import math
import struct
from typing import Dict, NamedTuple, Optional, Tuple

from rospy_control.devices.mit import codec as mit
from rospy_control.devices.encodable import check_mit_gains
from rospy_control.devices.mit.codec import MitLimits
from rospy_control.devices.wire import Traffic, frame_bits

__all__ = [
    "PACKET_SET_ORIGIN", "PACKET_SET_MIT", "PACKET_FEEDBACK", "LAYOUT_V3", "LAYOUT_MIT", "ERRORS",
    "CubeMarsV3Scale", "CubeMarsFeedback", "CubeMarsFrameError", "command_id", "feedback_id", "origin_id",
    "split_id", "pack_command", "unpack_command", "pack_set_origin", "pack_feedback", "unpack_feedback",
    "error_name", "check_gains_encodable", "traffic",
]

PACKET_SET_ORIGIN = 5
PACKET_SET_MIT = 8
PACKET_FEEDBACK = 0x29
LAYOUT_V3 = "v3"
LAYOUT_MIT = "mit"

#: the feedback's error byte
ERRORS: Dict[int, str] = {
    1: "motor over-temperature", 2: "over-current", 3: "over-voltage", 4: "under-voltage",
    5: "encoder fault", 6: "MOSFET over-temperature", 7: "motor stall",
}

_U64 = struct.Struct(">Q")
_FB = struct.Struct(">hhhbB")
_MAX12 = 4095
_MAX16 = 65535


class CubeMarsFrameError(ValueError):
    """A frame does not have the layout of a CubeMars V3 frame."""


def _check_id(controller_id: int) -> None:
    if not 0 <= controller_id <= 0xFF:
        raise ValueError(f"CubeMars controller id must be 0..255, got {controller_id!r}")


def command_id(controller_id: int) -> int:
    """Extended id of an MIT command: ``8 << 8 | id``."""
    _check_id(controller_id)
    return (PACKET_SET_MIT << 8) | controller_id


def origin_id(controller_id: int) -> int:
    """Extended id of set-origin: ``5 << 8 | id``."""
    _check_id(controller_id)
    return (PACKET_SET_ORIGIN << 8) | controller_id


def feedback_id(controller_id: int) -> int:
    """Extended id the motor's feedback arrives on: ``0x29 << 8 | id``."""
    _check_id(controller_id)
    return (PACKET_FEEDBACK << 8) | controller_id


def split_id(arbitration_id: int) -> Tuple[int, int]:
    """``(packet, controller_id)`` of an extended id."""
    return (arbitration_id >> 8) & 0xFF, arbitration_id & 0xFF


def pack_command(p: float, v: float, kp: float, kd: float, t: float, limits: MitLimits,
                 layout: str = LAYOUT_V3) -> bytes:
    """Encode an MIT command (8 bytes); every field clamped into its range like :func:`mit.pack_command`."""
    if layout == LAYOUT_MIT:
        return mit.pack_command(p, v, kp, kd, t, limits)
    if layout != LAYOUT_V3:
        raise ValueError(f"CubeMars MIT layout must be '{LAYOUT_V3}' or '{LAYOUT_MIT}', got {layout!r}")
    (p_min, p_max, v_min, v_max, kp_min, kp_max, kd_min, kd_max, t_min, t_max) = limits
    kpi = mit.float_to_uint(kp, kp_min, kp_max, 12)
    kdi = mit.float_to_uint(kd, kd_min, kd_max, 12)
    pi = mit.float_to_uint(p, p_min, p_max, 16)
    vi = mit.float_to_uint(v, v_min, v_max, 12)
    ti = mit.float_to_uint(t, t_min, t_max, 12)
    return _U64.pack((kpi << 52) | (kdi << 40) | (pi << 24) | (vi << 12) | ti)


def unpack_command(data: bytes, limits: MitLimits,
                   layout: str = LAYOUT_V3) -> Tuple[float, float, float, float, float]:
    """Decode an MIT command into ``(p, v, kp, kd, t)``.

    :raises CubeMarsFrameError: DLC is not 8.
    """
    if len(data) != 8:
        raise CubeMarsFrameError(f"CubeMars MIT command must have 8 bytes, got {len(data)}")
    if layout == LAYOUT_MIT:
        return mit.unpack_command(data, limits)
    (p_min, p_max, v_min, v_max, kp_min, kp_max, kd_min, kd_max, t_min, t_max) = limits
    (w,) = _U64.unpack(bytes(data))
    return (
        ((w >> 24) & _MAX16) * (p_max - p_min) / _MAX16 + p_min,
        ((w >> 12) & _MAX12) * (v_max - v_min) / _MAX12 + v_min,
        (w >> 52) * (kp_max - kp_min) / _MAX12 + kp_min,
        ((w >> 40) & _MAX12) * (kd_max - kd_min) / _MAX12 + kd_min,
        (w & _MAX12) * (t_max - t_min) / _MAX12 + t_min,
    )


def pack_set_origin(permanent: bool = False) -> bytes:
    """Set-origin payload (send on :func:`origin_id`): 0 until power-off, 1 permanent (wears flash)."""
    return bytes((1 if permanent else 0,))


class CubeMarsV3Scale(NamedTuple):
    """Feedback units -> SI: ``pole_pairs`` of the motor, ``gear_ratio`` (rotor turns per output
    turn), ``torque_constant`` (output N·m per A of the reported current)."""

    pole_pairs: int = 21
    gear_ratio: float = 9.0
    torque_constant: float = 0.1

    def position(self, raw: int) -> float:
        return math.radians(raw * 0.1)

    def velocity(self, raw: int) -> float:
        rotor_rpm = raw * 10.0 / self.pole_pairs
        return rotor_rpm / self.gear_ratio * (2.0 * math.pi / 60.0)

    def torque(self, raw: int) -> float:
        return raw * 0.01 * self.torque_constant

    def raw(self, position: float, velocity: float, torque: float) -> Tuple[int, int, int]:
        """Inverse (rounded, saturated at the int16 limits): what the motor would report."""
        def i16(x: float) -> int:
            if x != x:
                return 0
            return 32767 if x >= 32767 else (-32768 if x <= -32768 else int(round(x)))
        erpm = velocity * 60.0 / (2.0 * math.pi) * self.gear_ratio * self.pole_pairs
        return (i16(math.degrees(position) / 0.1), i16(erpm / 10.0),
                i16(torque / self.torque_constant / 0.01))


class CubeMarsFeedback(NamedTuple):
    """A decoded feedback frame: SI values, the raw temperature and error code."""

    controller_id: int
    position: float
    velocity: float
    torque: float
    temperature: float
    error: int

    @property
    def fault(self) -> Optional[str]:
        return error_name(self.error)


def error_name(code: int) -> Optional[str]:
    """The manual's name of an error code, None for 0, ``unknown error N`` otherwise."""
    if code == 0:
        return None
    return ERRORS.get(code, f"unknown error {code}")


def pack_feedback(position: float, velocity: float, torque: float, scale: CubeMarsV3Scale,
                  temperature: float = 30.0, error: int = 0) -> bytes:
    """Encode a feedback frame as the motor sends it (8 bytes, on :func:`feedback_id`)."""
    p, v, i = scale.raw(position, velocity, torque)
    return _FB.pack(p, v, i, max(-128, min(127, int(temperature))), error & 0xFF)


def unpack_feedback(arbitration_id: int, data: bytes, scale: CubeMarsV3Scale) -> CubeMarsFeedback:
    """Decode a feedback frame (its id gives the controller id).

    :raises CubeMarsFrameError: not a feedback id, or fewer than 8 bytes.
    """
    packet, cid = split_id(arbitration_id)
    if packet != PACKET_FEEDBACK:
        raise CubeMarsFrameError(f"id 0x{arbitration_id:X} is not a CubeMars feedback id (0x29xx)")
    if len(data) < 8:
        raise CubeMarsFrameError(f"CubeMars feedback needs 8 bytes, got {len(data)}")
    p, v, i, temp, err = _FB.unpack_from(bytes(data))
    return CubeMarsFeedback(cid, scale.position(p), scale.velocity(v), scale.torque(i), float(temp), err)


def check_gains_encodable(kp: float, kd: float, limits: MitLimits, unit_name: Optional[str] = None) -> None:
    """:raises EncodableRangeError: a gain outside the MIT frame's kp/kd range."""
    check_mit_gains(kp, kd, (limits.kp_min, limits.kp_max), (limits.kd_min, limits.kd_max),
                    "CubeMars V3 MIT mode", unit_name)


def traffic(upload_rate: float = 0.0) -> Traffic:
    """One 8-byte MIT command and its 8-byte feedback per control cycle (29-bit ids), plus a periodic
    feedback upload if the motor is configured for one (period in s, 0 = none)."""
    return Traffic(((8, True), (8, True)), frame_bits(8, True) / upload_rate if upload_rate > 0.0 else 0.0)
