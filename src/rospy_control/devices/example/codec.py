"""The example protocol: a small, complete, fictional actuator protocol that
``docs/writing_a_device.md`` builds a device on
(:class:`~rospy_control.devices.example.device.ExampleMotor`).  No real device speaks it; it is
shaped like the request/reply protocols real ones use.  Pure functions, no I/O.

Every frame the host sends to the device (ID = the device's ``can_id``, DLC 8) is answered with one
reply (ID = ``0x100 + can_id``, DLC 8).  Integers are big-endian and signed unless noted; a value
outside what a field can carry saturates, it never wraps.

**Host -> device**, byte 0 = the operation::

    0x01  command     byte 1 mode (0 limp, 1 position, 2 velocity, 3 effort, 4 damping)
                      byte 2-3  int16: position (mrad, mode 1) or effort (0.01 N·m, mode 3)
                      byte 4-5  int16: velocity (0.01 rad/s; mode 1: feed-forward, mode 2: target)
                      byte 6    uint8: kp (N·m/rad, mode 1)
                      byte 7    uint8: kd (0.02 N·m·s/rad, modes 1, 2, 4)
    0x0E  enable      (bytes 1-7 zero) enable; clears a latched error whose cause is gone
    0x0D  disable     (bytes 1-7 zero) limp
    0x0F  set zero    (bytes 1-7 zero) the current position becomes 0

**Device -> host** (the reply to every frame)::

    byte 0    bit 0 enabled, bits 1-3 mode, bits 4-7 error code (0 = none, see ERRORS)
    byte 1-2  int16 position (mrad)
    byte 3-4  int16 velocity (0.01 rad/s)
    byte 5-6  int16 effort (0.01 N·m)
    byte 7    uint8 temperature (deg C)
"""
from __future__ import annotations

import struct
from typing import NamedTuple

__all__ = [
    "OP_COMMAND", "OP_ENABLE", "OP_DISABLE", "OP_SET_ZERO", "MODE_LIMP", "MODE_POSITION", "MODE_VELOCITY",
    "MODE_EFFORT", "MODE_DAMPING", "ERRORS", "REPLY_ID_BASE", "KP_MAX", "KD_MAX", "EFFORT_MAX",
    "POSITION_RESOLUTION", "ExampleCommand", "ExampleReply", "pack_command", "unpack_command",
    "pack_reply", "unpack_reply", "special_frame", "saturate",
]

OP_COMMAND = 0x01
OP_ENABLE = 0x0E
OP_DISABLE = 0x0D
OP_SET_ZERO = 0x0F

MODE_LIMP, MODE_POSITION, MODE_VELOCITY, MODE_EFFORT, MODE_DAMPING = range(5)

#: error code -> name (as a manual would name them)
ERRORS = {1: "over-voltage", 2: "under-voltage", 3: "over-current", 4: "over-temperature",
          5: "encoder fault"}

#: replies come on this id + can_id
REPLY_ID_BASE = 0x100

POSITION_SCALE = 1000.0   # int16 per rad
VELOCITY_SCALE = 100.0    # int16 per rad/s
EFFORT_SCALE = 100.0      # int16 per N·m
KD_SCALE = 50.0           # uint8 per N·m·s/rad
#: what the fields can carry
KP_MAX = 255.0
KD_MAX = 255 / KD_SCALE
EFFORT_MAX = 32767 / EFFORT_SCALE
POSITION_RESOLUTION = 1.0 / POSITION_SCALE

_CMD = struct.Struct(">BBhhBB")
_REPLY = struct.Struct(">BhhhB")


def saturate(x: float, scale: float, lo: int, hi: int) -> int:
    """``round(x * scale)`` clamped to ``lo..hi`` (NaN -> 0)."""
    if x != x:
        return 0
    v = x * scale
    if v >= hi:
        return hi
    if v <= lo:
        return lo
    return int(round(v))


class ExampleCommand(NamedTuple):
    mode: int
    position: float = 0.0
    velocity: float = 0.0
    effort: float = 0.0
    kp: float = 0.0
    kd: float = 0.0


class ExampleReply(NamedTuple):
    enabled: bool
    mode: int
    error: int
    position: float
    velocity: float
    effort: float
    temperature: float


def special_frame(op: int) -> bytes:
    """The enable / disable / set-zero frame."""
    return bytes((op, 0, 0, 0, 0, 0, 0, 0))


def pack_command(c: ExampleCommand) -> bytes:
    """Encode a command (op 0x01); the fields a mode does not use are sent as 0."""
    m = c.mode
    first = 0
    if m == MODE_POSITION:
        first = saturate(c.position, POSITION_SCALE, -32768, 32767)
    elif m == MODE_EFFORT:
        first = saturate(c.effort, EFFORT_SCALE, -32768, 32767)
    vel = saturate(c.velocity, VELOCITY_SCALE, -32768, 32767) if m in (MODE_POSITION, MODE_VELOCITY) else 0
    kp = saturate(c.kp, 1.0, 0, 255) if m == MODE_POSITION else 0
    kd = saturate(c.kd, KD_SCALE, 0, 255) if m in (MODE_POSITION, MODE_VELOCITY, MODE_DAMPING) else 0
    return _CMD.pack(OP_COMMAND, m, first, vel, kp, kd)


def unpack_command(data: bytes) -> ExampleCommand:
    """Decode a command frame (op 0x01). :raises ValueError: not 8 bytes or another operation."""
    if len(data) != 8 or data[0] != OP_COMMAND:
        raise ValueError(f"not an example command frame: {bytes(data).hex()}")
    _op, m, first, vel, kp, kd = _CMD.unpack(bytes(data))
    pos = first / POSITION_SCALE if m == MODE_POSITION else 0.0
    eff = first / EFFORT_SCALE if m == MODE_EFFORT else 0.0
    return ExampleCommand(m, pos, vel / VELOCITY_SCALE, eff, float(kp), kd / KD_SCALE)


def pack_reply(r: ExampleReply) -> bytes:
    status = (1 if r.enabled else 0) | ((r.mode & 0x7) << 1) | ((r.error & 0xF) << 4)
    return _REPLY.pack(status, saturate(r.position, POSITION_SCALE, -32768, 32767),
                       saturate(r.velocity, VELOCITY_SCALE, -32768, 32767),
                       saturate(r.effort, EFFORT_SCALE, -32768, 32767),
                       saturate(r.temperature, 1.0, 0, 255))


def unpack_reply(data: bytes) -> ExampleReply:
    """Decode a reply. :raises ValueError: not 8 bytes."""
    if len(data) != 8:
        raise ValueError(f"an example reply has 8 bytes, got {len(data)}")
    status, p, v, e, t = _REPLY.unpack(bytes(data))
    return ExampleReply(bool(status & 1), (status >> 1) & 0x7, status >> 4, p / POSITION_SCALE,
                        v / VELOCITY_SCALE, e / EFFORT_SCALE, float(t))
