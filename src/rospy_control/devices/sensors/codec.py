"""rospy_control sensor protocol v1: CAN frames for IMU, foot contact, force/torque and encoder boards.

There is no common standard for these sensors on CAN, so we define a small one.  It uses CAN 2.0A
(11-bit ids), big-endian fields, and the same poll/answer pattern as the MIT motors so a channel
cycle can pipeline sensors and motors alike.

* **Poll**: the host sends a data frame with DLC 0 to the sensor's ``can_id``.
* **Answer**: the sensor answers with one or more frames on consecutive ids starting at its
  ``reply_id`` (default ``can_id + 0x400``).  Byte 7 (byte 3 for contact) is a sample sequence number
  that is the same in all frames of one answer.

=================  =====================================================================  ====
sensor / frame     layout (``i16`` = signed 16 bit, ``u16`` = unsigned)                   DLC
=================  =====================================================================  ====
IMU  reply_id+0    orientation quaternion x, y, z, w: 4 x i16, value = raw / 32767         8
IMU  reply_id+1    angular velocity x, y, z: 3 x i16 over +-gyro_range rad/s;              8
                   byte 6 flags (bit 0 = sensor error); byte 7 sequence
IMU  reply_id+2    linear acceleration x, y, z: 3 x i16 over +-accel_range m/s^2;          8
                   byte 6 temperature (i8, deg C); byte 7 sequence
Contact reply_id   byte 0 flags (bit 0 = in contact, bit 7 = sensor error);                4
                   bytes 1-2 normal force u16 over 0..force_range N; byte 3 sequence
F/T  reply_id+0    force x, y, z: 3 x i16 over +-force_range N; byte 6 flags; byte 7 seq    8
F/T  reply_id+1    torque x, y, z: 3 x i16 over +-torque_range N·m; byte 6 flags; byte 7    8
Encoder reply_id   position i32 counts (counts_per_rev per revolution, rad = 2*pi*c/cpr);  8
                   velocity i16 over +-velocity_range rad/s; byte 6 flags; byte 7 seq
=================  =====================================================================  ====

Scaling: ``raw = round(clamp(x / range, -1, 1) * 32767)``; ``x = raw * range / 32767``.
Flags bit 0 (bit 7 for contact) set means the sensor reports an error; the host faults the unit.
"""
from __future__ import annotations

import math
import struct
from typing import Sequence, Tuple

__all__ = [
    "POLL", "DEFAULT_REPLY_OFFSET", "IMU_FRAMES", "FT_FRAMES", "CONTACT_FRAMES", "ENCODER_FRAMES",
    "encode_vec3", "decode_vec3", "encode_quaternion", "decode_quaternion", "encode_contact",
    "decode_contact", "encode_encoder", "decode_encoder", "SensorFrameError",
]

#: Poll payload (DLC 0).
POLL = b""
#: Default distance between ``can_id`` and ``reply_id``.
DEFAULT_REPLY_OFFSET = 0x400
IMU_FRAMES = 3
FT_FRAMES = 2
CONTACT_FRAMES = 1
ENCODER_FRAMES = 1

FLAG_ERROR = 0x01
CONTACT_IN_CONTACT = 0x01
CONTACT_ERROR = 0x80

_Q = struct.Struct(">hhhh")
_V3 = struct.Struct(">hhhBB")
_CONTACT = struct.Struct(">BHB")
_ENC = struct.Struct(">ihBB")
_FULL = 32767.0


class SensorFrameError(ValueError):
    """A sensor frame has the wrong length."""


def _i16(x: float, scale: float) -> int:
    r = x / scale
    if r > 1.0:
        r = 1.0
    elif r < -1.0:
        r = -1.0
    elif r != r:
        r = 0.0
    return int(round(r * _FULL))


def encode_quaternion(q: Sequence[float]) -> bytes:
    """Quaternion (x, y, z, w) -> IMU frame 0."""
    return _Q.pack(_i16(q[0], 1.0), _i16(q[1], 1.0), _i16(q[2], 1.0), _i16(q[3], 1.0))


def decode_quaternion(data: bytes) -> Tuple[float, float, float, float]:
    """IMU frame 0 -> normalised quaternion (x, y, z, w)."""
    if len(data) != 8:
        raise SensorFrameError(f"IMU orientation frame needs 8 bytes, got {len(data)}")
    x, y, z, w = _Q.unpack(bytes(data))
    n = math.sqrt(x * x + y * y + z * z + w * w) or 1.0
    return (x / n, y / n, z / n, w / n)


def encode_vec3(v: Sequence[float], scale: float, flags: int = 0, extra: int = 0) -> bytes:
    """3-vector over +-scale -> frame with ``extra`` (byte 6: flags or temperature) and sequence (byte 7)."""
    return _V3.pack(_i16(v[0], scale), _i16(v[1], scale), _i16(v[2], scale), flags & 0xFF, extra & 0xFF)


def decode_vec3(data: bytes, scale: float) -> Tuple[float, float, float, int, int]:
    """Frame -> (x, y, z, byte6, byte7)."""
    if len(data) != 8:
        raise SensorFrameError(f"vector frame needs 8 bytes, got {len(data)}")
    a, b, c, f, s = _V3.unpack(bytes(data))
    k = scale / _FULL
    return (a * k, b * k, c * k, f, s)


def encode_contact(in_contact: bool, force: float, force_range: float, error: bool = False,
                   seq: int = 0) -> bytes:
    """Contact state -> 4-byte frame."""
    r = force / force_range
    r = 0.0 if not r > 0.0 else (1.0 if r > 1.0 else r)
    flags = (CONTACT_IN_CONTACT if in_contact else 0) | (CONTACT_ERROR if error else 0)
    return _CONTACT.pack(flags, int(round(r * 65535)), seq & 0xFF)


def decode_contact(data: bytes, force_range: float) -> Tuple[bool, float, bool]:
    """4-byte frame -> (in_contact, normal force N, error)."""
    if len(data) != 4:
        raise SensorFrameError(f"contact frame needs 4 bytes, got {len(data)}")
    flags, f, _seq = _CONTACT.unpack(bytes(data))
    return (bool(flags & CONTACT_IN_CONTACT), f * force_range / 65535.0, bool(flags & CONTACT_ERROR))


def encode_encoder(position: float, velocity: float, counts_per_rev: int, velocity_range: float,
                   flags: int = 0, seq: int = 0) -> bytes:
    """Encoder position (rad) and velocity (rad/s) -> 8-byte frame."""
    counts = int(round(position * counts_per_rev / (2.0 * math.pi)))
    counts = max(-(1 << 31), min((1 << 31) - 1, counts))
    return _ENC.pack(counts, _i16(velocity, velocity_range), flags & 0xFF, seq & 0xFF)


def decode_encoder(data: bytes, counts_per_rev: int, velocity_range: float) -> Tuple[float, float, int]:
    """8-byte frame -> (position rad, velocity rad/s, flags)."""
    if len(data) != 8:
        raise SensorFrameError(f"encoder frame needs 8 bytes, got {len(data)}")
    counts, v, flags, _seq = _ENC.unpack(bytes(data))
    return (counts * 2.0 * math.pi / counts_per_rev, v * velocity_range / _FULL, flags)
