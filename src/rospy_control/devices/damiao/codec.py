"""DaMiao DM-J series (DM4310, DM4340, DM6006, DM8006, DM8009, DM10010 ...) CAN protocol.

Pure functions, no I/O, SI units at the boundary (rad, rad/s, N·m, s, deg C).

Documents followed: the DaMiao DM-J motor instruction manual (communication protocol chapter: MIT,
position-velocity and velocity frames, special frames, feedback frame and its ERR codes, register
access through 0x7FF) as implemented by DaMiao's own Python reference ``cmjang/DM_Control_Python``
(``DM_CAN.py``: frame layouts, register ids and which registers are uint32), cross-checked with
``damiao-motor`` 1.0.6 and LeRobot ``motors/damiao`` (register read/write vectors agree).

**Ids** (CAN 2.0A): commands go to the motor's slave id (ESC_ID, register 8); the motor answers on
its master id (MST_ID, register 7)::

    slave_id            MIT command (8 bytes, MIT packing) and the special frames
    0x100 + slave_id    position-velocity: <f position rad, <f velocity limit rad/s  (8 bytes)
    0x200 + slave_id    velocity: <f velocity rad/s  (4 bytes; the simulated motor also accepts 8)
    0x300 + slave_id    force-position: <f position, <H velocity x100, <H current ratio x10000
    0x7FF               registers: [id_lo, id_hi, cmd, rid, d0..d3] (all motors share this id)

**MIT packing** is the Mini-Cheetah layout of :mod:`.mit` (p 16 bit, v/kp/kd/t 12 bit, truncating)
with KP 0..500 and KD 0..5 fixed by the firmware and the ranges PMAX/VMAX/TMAX held in registers
21/22/23 (p in [-PMAX, PMAX] etc.): read them from the motor, a per-model table is only a default.

**Special frames** to the slave id (8 bytes): ``FF*7 FC`` enable, ``FD`` disable, ``FE`` save the
current position as zero, ``FB`` clear error.  ``FB`` is from the manual and damiao-motor 1.0.6.

**Feedback** on the master id, 8 bytes::

    byte 0    state << 4 | (slave_id & 0xF)
    byte 1-2  position 16 bit;  byte 3 + high nibble of 4: velocity 12 bit;  low nibble of 4 + 5: torque
    byte 6    MOS temperature (deg C);  byte 7 rotor (coil) temperature (deg C)

State (the manual's ERR field): 0 disabled, 1 enabled, 8 over-voltage, 9 under-voltage,
0xA over-current, 0xB MOS over-temperature, 0xC coil over-temperature, 0xD communication loss,
0xE overload (:data:`FAULTS`, named as the manual names them; the manual's PDF was not at hand, the
codes and names are those several implementations of it agree on).  A fault disables the output; it is
cleared with the ``FB`` frame.

**Registers** through id 0x7FF: ``0x33`` read, ``0x55`` write (value little-endian, float32 or uint32
by register, :data:`UINT32_REGISTERS`), ``0xAA`` store all to flash (disable first; flash wears, so
runtime writes stay in RAM), ``0xCC`` request a feedback frame.  The motor answers a read or write on
its master id with ``[id_lo, id_hi, 0x33|0x55, rid, value]``.  Register replies and feedback frames
share the master id: :func:`parse_register_reply` only accepts a frame as a register reply when it
matches the request it answers (slave id, command, register).

**CAN timeout** (register 9 TIMEOUT) counts in 50 us units, 0 = off: when no frame arrives for that
long while enabled, the motor leaves enabled mode with state 0xD (communication loss).

Unverified, from the third-party sources only: the CAN bitrate codes of register 35, whether a
velocity frame must have DLC 4 (DM_Control_Python sends 8 through its serial adapter), whether a
command for a mode other than CTRL_MODE is answered, the reply to the flash-store command.
"""
from __future__ import annotations

import struct
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

from rospy_control.devices.mit import codec as mit
from rospy_control.devices.encodable import (
    EncodableRangeError, check_encodable, check_mit_gains,
)
from rospy_control.devices.mit.codec import MitLimits
from rospy_control.devices.wire import Traffic

__all__ = [
    "DamiaoRanges", "DamiaoReply", "RegisterReply", "DamiaoFrameError", "RangesMismatchError",
    "MODEL_RANGES", "MIT_KP_RANGE", "MIT_KD_RANGE", "MODE_MIT", "MODE_POS_VEL", "MODE_VEL",
    "MODE_FORCE_POS", "MODE_OFFSETS", "MODE_NAMES", "REGISTER_ID", "ENABLE", "DISABLE", "SET_ZERO",
    "CLEAR_ERROR", "STATE_DISABLED", "STATE_ENABLED", "FAULTS", "fault_name", "fault_code",
    "REG_READ", "REG_WRITE", "REG_SAVE", "REG_REFRESH", "RID_MST_ID", "RID_ESC_ID", "RID_TIMEOUT",
    "RID_CTRL_MODE", "RID_PMAX", "RID_VMAX", "RID_TMAX", "RID_CAN_BR", "REGISTER_NAMES", "UINT32_REGISTERS",
    "TIMEOUT_UNIT", "command_id", "pack_mit", "unpack_mit", "pack_pos_vel", "unpack_pos_vel", "pack_vel",
    "unpack_vel", "pack_force_pos", "unpack_force_pos", "pack_reply", "unpack_reply",
    "pack_register_read", "pack_register_write", "pack_register_save", "pack_refresh",
    "unpack_register_request", "pack_register_reply", "parse_register_reply", "encode_register_value",
    "decode_register_value", "timeout_to_register", "register_to_timeout", "check_mit_gains_encodable",
    "check_ranges_encodable", "check_timeout_encodable", "check_force_pos_encodable",
    "FORCE_POS_VELOCITY_RANGE", "FORCE_POS_CURRENT_RANGE", "OTHER_STATES", "check_ranges_match",
    "split_command_id", "traffic", "reply_key",
]

# -- modes and ids ---------------------------------------------------------------------------------
MODE_MIT = 1
MODE_POS_VEL = 2
MODE_VEL = 3
MODE_FORCE_POS = 4
#: CAN-id offset of each mode's command frame (added to the slave id)
MODE_OFFSETS: Dict[int, int] = {MODE_MIT: 0x000, MODE_POS_VEL: 0x100, MODE_VEL: 0x200, MODE_FORCE_POS: 0x300}
MODE_NAMES: Dict[int, str] = {MODE_MIT: "MIT", MODE_POS_VEL: "position-velocity", MODE_VEL: "velocity",
                              MODE_FORCE_POS: "force-position"}
#: the register-access id shared by every DaMiao motor of a bus
REGISTER_ID = 0x7FF

#: MIT gain ranges fixed by the firmware (N·m/rad, N·m·s/rad)
MIT_KP_RANGE: Tuple[float, float] = (0.0, 500.0)
MIT_KD_RANGE: Tuple[float, float] = (0.0, 5.0)

# -- special frames --------------------------------------------------------------------------------
ENABLE = bytes((0xFF,) * 7 + (0xFC,))
DISABLE = bytes((0xFF,) * 7 + (0xFD,))
SET_ZERO = bytes((0xFF,) * 7 + (0xFE,))
CLEAR_ERROR = bytes((0xFF,) * 7 + (0xFB,))

# -- feedback states -------------------------------------------------------------------------------
STATE_DISABLED = 0
STATE_ENABLED = 1
#: error states of the feedback's state nibble, named as the manual names them
FAULTS: Dict[int, str] = {
    0x8: "over-voltage",
    0x9: "under-voltage",
    0xA: "over-current",
    0xB: "MOS over-temperature",
    0xC: "coil over-temperature",
    0xD: "communication loss",
    0xE: "overload",
}
_FAULT_CODES = {v: k for k, v in FAULTS.items()}
#: further states one third-party library (DAMIAO_Control_Arduino) decodes on newer firmware; not in
#: the manual followed here, so not faults the simulated motor raises
OTHER_STATES: Dict[int, str] = {0x5: "sensor error", 0x6: "parameter error"}

# -- registers -------------------------------------------------------------------------------------
REG_READ = 0x33
REG_WRITE = 0x55
REG_SAVE = 0xAA
REG_REFRESH = 0xCC

RID_MST_ID = 7
RID_ESC_ID = 8
RID_TIMEOUT = 9
RID_CTRL_MODE = 10
RID_PMAX = 21
RID_VMAX = 22
RID_TMAX = 23
RID_CAN_BR = 35
#: register names as DM_Control_Python names them (DM_variable)
REGISTER_NAMES: Dict[int, str] = {
    0: "UV_Value", 1: "KT_Value", 2: "OT_Value", 3: "OC_Value", 4: "ACC", 5: "DEC", 6: "MAX_SPD",
    7: "MST_ID", 8: "ESC_ID", 9: "TIMEOUT", 10: "CTRL_MODE", 11: "Damp", 12: "Inertia", 13: "hw_ver",
    14: "sw_ver", 15: "SN", 16: "NPP", 17: "Rs", 18: "LS", 19: "Flux", 20: "Gr", 21: "PMAX", 22: "VMAX",
    23: "TMAX", 24: "I_BW", 25: "KP_ASR", 26: "KI_ASR", 27: "KP_APR", 28: "KI_APR", 29: "OV_Value",
    30: "GREF", 31: "Deta", 32: "V_BW", 33: "IQ_c1", 34: "VL_c1", 35: "can_br", 36: "sub_ver",
}
#: registers whose value is a uint32 (the others are float32)
UINT32_REGISTERS = frozenset((7, 8, 9, 10, 13, 14, 15, 16, 35, 36))
#: unit of the TIMEOUT register (s)
TIMEOUT_UNIT = 50e-6
_U32_MAX = 0xFFFFFFFF

_F = struct.Struct("<f")
_FF = struct.Struct("<ff")
_FHH = struct.Struct("<fHH")
_U32 = struct.Struct("<I")
_REG = struct.Struct("<BBBB")
_FEEDBACK = struct.Struct(">BHHBBB")


class DamiaoFrameError(ValueError):
    """A frame does not have the layout of a DaMiao frame."""


class RangesMismatchError(ValueError):
    """The ranges read from a motor's registers differ from the configured ones."""

    def __init__(self, message: str, mismatches: List[Tuple[str, float, float]]) -> None:
        super().__init__(message)
        #: (register name, configured, read) for every register that differs
        self.mismatches = mismatches


class DamiaoRanges(NamedTuple):
    """The MIT mapping ranges of one motor: registers PMAX (rad), VMAX (rad/s), TMAX (N·m)."""

    pmax: float = 12.5
    vmax: float = 30.0
    tmax: float = 10.0

    def mit_limits(self) -> MitLimits:
        """The :class:`MitLimits` these ranges mean (symmetric, with the fixed KP/KD ranges)."""
        return MitLimits(-self.pmax, self.pmax, -self.vmax, self.vmax, MIT_KP_RANGE[0], MIT_KP_RANGE[1],
                         MIT_KD_RANGE[0], MIT_KD_RANGE[1], -self.tmax, self.tmax)


#: factory defaults per model (PMAX, VMAX, TMAX) from DM_Control_Python's table; a motor's registers
#: may differ (the sources disagree on DM4340's VMAX: 8 there, 10 in damiao-motor), so read them
MODEL_RANGES: Dict[str, DamiaoRanges] = {
    "DM4310": DamiaoRanges(12.5, 30.0, 10.0),
    "DM4310_48V": DamiaoRanges(12.5, 50.0, 10.0),
    "DM4340": DamiaoRanges(12.5, 8.0, 28.0),
    "DM4340_48V": DamiaoRanges(12.5, 10.0, 28.0),
    "DM6006": DamiaoRanges(12.5, 45.0, 20.0),
    "DM8006": DamiaoRanges(12.5, 45.0, 40.0),
    "DM8009": DamiaoRanges(12.5, 45.0, 54.0),
    "DM10010L": DamiaoRanges(12.5, 25.0, 200.0),
    "DM10010": DamiaoRanges(12.5, 20.0, 200.0),
}


class DamiaoReply(NamedTuple):
    """A decoded feedback frame (values in the motor's frame: rad, rad/s, N·m, deg C)."""

    motor_id: int        # low nibble of the slave id
    state: int
    position: float
    velocity: float
    torque: float
    mos_temperature: float
    rotor_temperature: float

    @property
    def enabled(self) -> bool:
        return self.state == STATE_ENABLED

    @property
    def fault(self) -> Optional[str]:
        """The manual's name of the error state, None when disabled or enabled."""
        return fault_name(self.state)


class RegisterReply(NamedTuple):
    """A decoded register reply (``cmd`` is :data:`REG_READ` or :data:`REG_WRITE`)."""

    slave_id: int
    cmd: int
    rid: int
    value: Union[int, float]


def fault_name(state: int) -> Optional[str]:
    """The manual's name of a feedback state, None for disabled/enabled, ``unknown state 0x..`` else."""
    if state in (STATE_DISABLED, STATE_ENABLED):
        return None
    name = FAULTS.get(state) or OTHER_STATES.get(state)
    return name if name is not None else f"unknown state 0x{state:X}"


def fault_code(name: str) -> int:
    """The state code of a fault named as in :data:`FAULTS` (ValueError naming the known ones)."""
    try:
        return _FAULT_CODES[name]
    except KeyError:
        raise ValueError(f"unknown DaMiao fault '{name}'; known: {', '.join(FAULTS.values())}") from None


# -- command frames --------------------------------------------------------------------------------
def command_id(slave_id: int, mode: int) -> int:
    """The CAN id of a command frame in ``mode`` (MODE_MIT, MODE_POS_VEL, MODE_VEL, MODE_FORCE_POS)."""
    try:
        return MODE_OFFSETS[mode] + slave_id
    except KeyError:
        raise ValueError(f"unknown DaMiao mode {mode!r}; known: {sorted(MODE_OFFSETS)}") from None


def split_command_id(arbitration_id: int) -> Tuple[int, int]:
    """``(mode, slave_id)`` of a command id (inverse of :func:`command_id`; slave ids 1..0xFF)."""
    offset = arbitration_id & 0x700
    for mode, off in MODE_OFFSETS.items():
        if off == offset:
            return mode, arbitration_id & 0xFF
    raise DamiaoFrameError(f"id 0x{arbitration_id:03X} is not a DaMiao command id")


def pack_mit(p: float, v: float, kp: float, kd: float, t: float, ranges: DamiaoRanges) -> bytes:
    """MIT command (8 bytes).  Fields are clamped into their ranges like :func:`mit.pack_command`;
    check configured gains at start-up with :func:`check_mit_gains_encodable`."""
    return mit.pack_command(p, v, kp, kd, t, ranges.mit_limits())


def unpack_mit(data: bytes, ranges: DamiaoRanges) -> Tuple[float, float, float, float, float]:
    """Decode an MIT command into ``(p, v, kp, kd, t)``."""
    try:
        return mit.unpack_command(data, ranges.mit_limits())
    except mit.MitFrameError as err:
        raise DamiaoFrameError(str(err)) from None


def pack_pos_vel(position: float, velocity: float) -> bytes:
    """Position-velocity command: target position (rad) reached at most at ``velocity`` (rad/s)."""
    return _FF.pack(position, velocity)


def unpack_pos_vel(data: bytes) -> Tuple[float, float]:
    if len(data) != 8:
        raise DamiaoFrameError(f"position-velocity command must have 8 bytes, got {len(data)}")
    return _FF.unpack(bytes(data))


def pack_vel(velocity: float, dlc: int = 4) -> bytes:
    """Velocity command (rad/s): DLC 4, the payload's length; ``dlc=8`` zero-pads like DM_Control_Python."""
    if dlc not in (4, 8):
        raise ValueError(f"DaMiao velocity command DLC must be 4 or 8, got {dlc}")
    return _F.pack(velocity) + bytes(dlc - 4)


def unpack_vel(data: bytes) -> float:
    if len(data) not in (4, 8):
        raise DamiaoFrameError(f"velocity command must have 4 or 8 bytes, got {len(data)}")
    return _F.unpack_from(bytes(data))[0]


#: force-position mode: the speed limit (rad/s) and current ratio the frame carries
FORCE_POS_VELOCITY_RANGE: Tuple[float, float] = (0.0, 100.0)
FORCE_POS_CURRENT_RANGE: Tuple[float, float] = (0.0, 1.0)


def _clamp_scaled(x: float, hi: float, scale: float) -> int:
    if x != x or x <= 0.0:
        return 0
    return int(round(min(x, hi) * scale))


def pack_force_pos(position: float, velocity: float, current_ratio: float) -> bytes:
    """Force-position command: position (rad), speed limit (rad/s, sent x100 in 0..10000) and the
    current limit as a fraction of the maximum current (sent x10000 in 0..10000).  Both are clamped
    into their range (NaN sends 0); check configured values with :func:`check_force_pos_encodable`."""
    return _FHH.pack(position, _clamp_scaled(velocity, FORCE_POS_VELOCITY_RANGE[1], 100),
                     _clamp_scaled(current_ratio, FORCE_POS_CURRENT_RANGE[1], 10000))


def unpack_force_pos(data: bytes) -> Tuple[float, float, float]:
    if len(data) != 8:
        raise DamiaoFrameError(f"force-position command must have 8 bytes, got {len(data)}")
    p, v, i = _FHH.unpack(bytes(data))
    return p, v / 100.0, i / 10000.0


# -- feedback --------------------------------------------------------------------------------------
def pack_reply(slave_id: int, state: int, position: float, velocity: float, torque: float,
               ranges: DamiaoRanges, mos_temperature: float = 25.0, rotor_temperature: float = 25.0) -> bytes:
    """Encode a feedback frame as the motor does (8 bytes)."""
    lim = ranges.mit_limits()
    pi = mit.float_to_uint(position, lim.p_min, lim.p_max, 16)
    vi = mit.float_to_uint(velocity, lim.v_min, lim.v_max, 12)
    ti = mit.float_to_uint(torque, lim.t_min, lim.t_max, 12)
    return _FEEDBACK.pack(((state & 0xF) << 4) | (slave_id & 0xF), pi, (vi << 4) | (ti >> 8), ti & 0xFF,
                          max(0, min(255, int(mos_temperature))), max(0, min(255, int(rotor_temperature))))


def unpack_reply(data: bytes, ranges: DamiaoRanges) -> DamiaoReply:
    """Decode a feedback frame.

    :raises DamiaoFrameError: not 8 bytes.
    """
    if len(data) != 8:
        raise DamiaoFrameError(f"DaMiao feedback must have 8 bytes, got {len(data)}")
    head, pi, x, tl, t_mos, t_rotor = _FEEDBACK.unpack(bytes(data))
    lim = ranges.mit_limits()
    return DamiaoReply(
        head & 0xF, head >> 4,
        mit.uint_to_float(pi, lim.p_min, lim.p_max, 16),
        mit.uint_to_float(x >> 4, lim.v_min, lim.v_max, 12),
        mit.uint_to_float(((x & 0xF) << 8) | tl, lim.t_min, lim.t_max, 12),
        float(t_mos), float(t_rotor))


def reply_key(data) -> Optional[int]:
    """Which motor a frame on a master id shared by several motors comes from: the low nibble of
    byte 0 (the slave id's low 4 bits, in feedback and register replies alike), None for an empty
    frame.  Motors sharing a master id therefore need slave ids that differ in their low nibble."""
    return data[0] & 0xF if len(data) else None


# -- registers -------------------------------------------------------------------------------------
def encode_register_value(rid: int, value: Union[int, float]) -> bytes:
    """4 little-endian bytes: uint32 for :data:`UINT32_REGISTERS`, float32 otherwise."""
    if rid in UINT32_REGISTERS:
        iv = int(value)
        if iv != value or not 0 <= iv <= _U32_MAX:
            raise ValueError(f"register {REGISTER_NAMES.get(rid, rid)} takes a uint32, got {value!r}")
        return _U32.pack(iv)
    return _F.pack(float(value))


def decode_register_value(rid: int, raw: bytes) -> Union[int, float]:
    if rid in UINT32_REGISTERS:
        return _U32.unpack_from(bytes(raw))[0]
    return _F.unpack_from(bytes(raw))[0]


def _reg_head(slave_id: int, cmd: int, rid: int) -> bytes:
    return _REG.pack(slave_id & 0xFF, (slave_id >> 8) & 0xFF, cmd, rid)


def pack_register_read(slave_id: int, rid: int) -> bytes:
    """Read register ``rid`` (send on :data:`REGISTER_ID`)."""
    return _reg_head(slave_id, REG_READ, rid) + bytes(4)


def pack_register_write(slave_id: int, rid: int, value: Union[int, float]) -> bytes:
    """Write register ``rid`` in RAM (send on :data:`REGISTER_ID`)."""
    return _reg_head(slave_id, REG_WRITE, rid) + encode_register_value(rid, value)


def pack_register_save(slave_id: int) -> bytes:
    """Store every register to flash (disable the motor first; flash wears: not at run time)."""
    return _reg_head(slave_id, REG_SAVE, 0) + bytes(4)


def pack_refresh(slave_id: int) -> bytes:
    """Ask for one feedback frame without commanding anything (send on :data:`REGISTER_ID`)."""
    return _reg_head(slave_id, REG_REFRESH, 0) + bytes(4)


def unpack_register_request(data: bytes) -> Tuple[int, int, int, bytes]:
    """``(slave_id, cmd, rid, value bytes)`` of a frame on :data:`REGISTER_ID` (used by the simulator)."""
    if len(data) != 8:
        raise DamiaoFrameError(f"register frame must have 8 bytes, got {len(data)}")
    d = bytes(data)
    return d[0] | (d[1] << 8), d[2], d[3], d[4:8]


def pack_register_reply(slave_id: int, cmd: int, rid: int, value: Union[int, float]) -> bytes:
    """A register reply as the motor sends it on its master id."""
    return _reg_head(slave_id, cmd, rid) + encode_register_value(rid, value)


def parse_register_reply(data: bytes, slave_id: int, rid: Optional[int] = None,
                         cmd: Optional[int] = None) -> Optional[RegisterReply]:
    """The register reply in ``data`` if it answers a request to ``slave_id`` (for register ``rid``
    and command ``cmd`` when given), else None (for instance a feedback frame on the same id)."""
    if len(data) != 8:
        return None
    d = bytes(data)
    sid, c, r = d[0] | (d[1] << 8), d[2], d[3]
    if sid != slave_id or c not in (REG_READ, REG_WRITE):
        return None
    if (rid is not None and r != rid) or (cmd is not None and c != cmd):
        return None
    return RegisterReply(sid, c, r, decode_register_value(r, d[4:8]))


def timeout_to_register(seconds: float) -> int:
    """The TIMEOUT register value for a CAN timeout of ``seconds`` (0 = off), rounded to 50 us."""
    check_timeout_encodable(seconds)
    return int(round(seconds / TIMEOUT_UNIT))


def register_to_timeout(value: int) -> float:
    return value * TIMEOUT_UNIT


# -- start-up checks -------------------------------------------------------------------------------
def check_mit_gains_encodable(kp: float, kd: float, unit_name: Optional[str] = None,
                              kp_attribute: str = "position_kp", kd_attribute: str = "position_kd") -> None:
    """:raises EncodableRangeError: kp outside 0..500 or kd outside 0..5 (DaMiao MIT mode)."""
    check_mit_gains(kp, kd, MIT_KP_RANGE, MIT_KD_RANGE, "DaMiao MIT mode", unit_name, kp_attribute,
                    kd_attribute)


def check_force_pos_encodable(velocity: float, current_ratio: float, unit_name: Optional[str] = None) -> None:
    """:raises EncodableRangeError: a force-position speed limit outside 0..100 rad/s or a current
    ratio outside 0..1."""
    check_encodable("velocity", velocity, FORCE_POS_VELOCITY_RANGE[0], FORCE_POS_VELOCITY_RANGE[1],
                    "DaMiao force-position mode", unit_name, "rad/s")
    check_encodable("current_ratio", current_ratio, FORCE_POS_CURRENT_RANGE[0], FORCE_POS_CURRENT_RANGE[1],
                    "DaMiao force-position mode", unit_name)


def check_ranges_encodable(ranges: DamiaoRanges, unit_name: Optional[str] = None) -> None:
    """PMAX/VMAX/TMAX must be positive finite float32 values.

    :raises EncodableRangeError: naming the register.
    """
    for name, value, units in (("PMAX", ranges.pmax, "rad"), ("VMAX", ranges.vmax, "rad/s"),
                               ("TMAX", ranges.tmax, "N m")):
        if not (isinstance(value, (int, float)) and 0 < value <= 3.0e38):
            raise EncodableRangeError(
                (f"unit '{unit_name}': " if unit_name else "")
                + f"{name}={value!r} {units} must be a positive number (a DaMiao range register)",
                name, value, 0.0, 3.0e38, "DaMiao", unit_name)


def check_timeout_encodable(seconds: float, unit_name: Optional[str] = None,
                            attribute: str = "firmware_timeout") -> float:
    """:raises EncodableRangeError: a CAN timeout the TIMEOUT register (uint32 x 50 us) cannot hold."""
    return check_encodable(attribute, seconds, 0.0, _U32_MAX * TIMEOUT_UNIT, "the DaMiao TIMEOUT register",
                           unit_name, "s")


def check_ranges_match(motor: str, configured: DamiaoRanges, read: Dict[int, float],
                       rel_tol: float = 1e-4) -> None:
    """Compare the ranges read from registers 21/22/23 (``{rid: value}``) with the configured ones.

    :raises RangesMismatchError: naming the motor, every register that differs and both values, or a
        register that was not read.
    """
    mismatches: List[Tuple[str, float, float]] = []
    missing = []
    for rid, name, want in ((RID_PMAX, "PMAX", configured.pmax), (RID_VMAX, "VMAX", configured.vmax),
                            (RID_TMAX, "TMAX", configured.tmax)):
        got = read.get(rid)
        if got is None:
            missing.append(name)
        elif abs(got - want) > rel_tol * max(abs(want), 1e-9):
            mismatches.append((name, want, float(got)))
    if missing:
        raise RangesMismatchError(f"motor '{motor}': register(s) {', '.join(missing)} were not read", [])
    if mismatches:
        parts = "; ".join(f"register {n} (rid {_RID_OF[n]}) is {g!r} on the motor, {w!r} configured"
                          for n, w, g in mismatches)
        raise RangesMismatchError(f"motor '{motor}': MIT ranges differ from the motor's registers: {parts}",
                                  mismatches)


_RID_OF = {"PMAX": RID_PMAX, "VMAX": RID_VMAX, "TMAX": RID_TMAX}


def traffic(mode: int = MODE_MIT, velocity_dlc: int = 4) -> Traffic:
    """One command and its 8-byte feedback per control cycle (request/reply, 11-bit ids)."""
    command_dlc = velocity_dlc if mode == MODE_VEL else 8
    return Traffic(((command_dlc, False), (8, False)))
