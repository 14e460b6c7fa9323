"""RobStride / CyberGear ids, ranges and frame helpers shared by its codec modules: the communication
types ([CG] 4.1, [RS]), the per-model ranges, the 29-bit id layout, the linear u16 mapping of the
firmware (``float_to_uint`` truncating).  Sources as in :mod:`.codec`."""
from __future__ import annotations

import math
import struct
from typing import Dict, NamedTuple, Optional, Tuple

from rospy_control.devices.encodable import check_ordered
from rospy_control.devices.frame import Frame


# -- communication types [CG] 4.1, [RS] ---------------------------------------------------------------
GET_ID = 0
OPERATION_CONTROL = 1
FEEDBACK = 2
ENABLE = 3
STOP = 4
SET_ZERO = 6
SET_CAN_ID = 7
PARAM_READ = 17
PARAM_WRITE = 18
FAULT_FEEDBACK = 21
#: CyberGear: type 22 changes the baud rate [CG 4.1.11]; RobStride: type 22 saves all parameters and the
#: baud rate is type 23 [RS] -- the two lines differ here, so neither is sent by this package unasked
CYBERGEAR_SET_BAUD = 22
ROBSTRIDE_SAVE_PARAMETERS = 22
ROBSTRIDE_SET_BAUD = 23
ACTIVE_REPORT = 24
SWITCH_PROTOCOL = 25

TYPE_NAMES = {
    GET_ID: "get device id", OPERATION_CONTROL: "operation control", FEEDBACK: "feedback", ENABLE: "enable",
    STOP: "stop", SET_ZERO: "set mechanical zero", SET_CAN_ID: "set CAN id", PARAM_READ: "read parameter",
    PARAM_WRITE: "write parameter", FAULT_FEEDBACK: "fault feedback", 22: "save parameters / baud (model)",
    23: "set baud rate (RobStride)", ACTIVE_REPORT: "active report", SWITCH_PROTOCOL: "switch protocol",
}

#: host id the vendor tools use by default (R2, R4 of the spec; any 0-0xFF works)
DEFAULT_HOST_ID = 0xFD
#: destination byte of the type-0 reply [CG 4.1.1]
GET_ID_REPLY_DEST = 0xFE
#: factory motor id
DEFAULT_MOTOR_ID = 0x7F

_U16_MAX = 0xFFFF
_BE4 = struct.Struct(">HHHH")


class RobStrideFrameError(ValueError):
    """A frame is not a RobStride/CyberGear frame of the expected type or length."""


class RobStrideRangeError(ValueError):
    """A value cannot be encoded: it lies outside the range the model's protocol can represent.

    ``attribute``, ``value`` and ``low``/``high`` are kept for callers that rephrase the message.
    """

    def __init__(self, attribute: str, value: float, low: float, high: float, model: str = "") -> None:
        self.attribute, self.value, self.low, self.high, self.model = attribute, value, low, high, model
        where = f" of {model}" if model else ""
        super().__init__(f"{attribute}={value!r} is outside the encodable range{where} [{low:g}, {high:g}]")


# -- ranges per model ----------------------------------------------------------------------------------
class RobStrideLimits(NamedTuple):
    """The ranges the 16-bit fields are mapped onto (rad, rad/s, N m/rad, N m s/rad, N m), plus the
    q-axis current range of ``iq_ref``/``limit_cur`` (A; None where no document gives it)."""

    p_min: float
    p_max: float
    v_min: float
    v_max: float
    kp_min: float
    kp_max: float
    kd_min: float
    kd_max: float
    t_min: float
    t_max: float
    i_max: Optional[float] = None

    def validate(self) -> None:
        """Raise ValueError naming the first pair with min >= max."""
        check_ordered(self)


_FOUR_PI = 4.0 * math.pi


def _sym(p: float, v: float, kp: float, kd: float, t: float, i: Optional[float]) -> RobStrideLimits:
    return RobStrideLimits(-p, p, -v, v, 0.0, kp, 0.0, kd, -t, t, i)


#: Ranges per model.  CyberGear from its manual's protocol table [CG 4.1.2] (its sample code's
#: +-12.5 rad differs by 0.5 %: the table is followed); iq +-23 A [CG 4.1.12].  RobStride models from
#: RobStride's manuals (P +-4 pi on every model; V/T/KP/KD below).  Configure the model of each motor:
#: a wrong model scales every value.
MODELS: Dict[str, RobStrideLimits] = {
    "cybergear": _sym(_FOUR_PI, 30.0, 500.0, 5.0, 12.0, 23.0),
    "rs00": _sym(_FOUR_PI, 33.0, 500.0, 5.0, 14.0, None),
    "rs01": _sym(_FOUR_PI, 44.0, 500.0, 5.0, 17.0, None),
    "rs02": _sym(_FOUR_PI, 44.0, 500.0, 5.0, 17.0, None),
    "rs03": _sym(_FOUR_PI, 20.0, 5000.0, 100.0, 60.0, None),
    "rs04": _sym(_FOUR_PI, 15.0, 5000.0, 100.0, 120.0, None),
    "rs05": _sym(_FOUR_PI, 50.0, 500.0, 5.0, 5.5, None),
    "rs06": _sym(_FOUR_PI, 50.0, 5000.0, 100.0, 36.0, None),
}


def limits_for(model: str) -> RobStrideLimits:
    """The ranges of ``model`` (case-insensitive: ``cybergear``, ``rs00`` ... ``rs06``).

    :raises ValueError: unknown model, naming the known ones.
    """
    try:
        return MODELS[model.lower()]
    except KeyError:
        raise ValueError(f"unknown RobStride/CyberGear model '{model}'; known: {', '.join(MODELS)}") from None


def check_range(attribute: str, value: float, low: float, high: float, model: str = "") -> float:
    """``value`` if ``low <= value <= high`` (and not NaN), else :class:`RobStrideRangeError`."""
    if not (low <= value <= high):  # also catches NaN
        raise RobStrideRangeError(attribute, value, low, high, model)
    return value


def _to_u16(x: float, lo: float, hi: float) -> int:
    """Firmware ``float_to_uint(x, lo, hi, 16)``: clamp, then truncate [CG 4.2.1]."""
    if x != x:
        x = lo
    elif x < lo:
        x = lo
    elif x > hi:
        x = hi
    return int((x - lo) * _U16_MAX / (hi - lo))


def _from_u16(u: int, lo: float, hi: float) -> float:
    return u * (hi - lo) / _U16_MAX + lo


# -- id -------------------------------------------------------------------------------------------------
def make_id(comm_type: int, data2: int, dest: int) -> int:
    """The 29-bit id ``type << 24 | data2 << 8 | dest``.

    :raises ValueError: a field does not fit (type 0-31, data2 0-0xFFFF, dest 0-0xFF).
    """
    if not 0 <= comm_type <= 0x1F:
        raise ValueError(f"communication type {comm_type} does not fit 5 bits")
    if not 0 <= data2 <= 0xFFFF:
        raise ValueError(f"data area 2 0x{data2:X} does not fit 16 bits")
    if not 0 <= dest <= 0xFF:
        raise ValueError(f"destination id {dest} does not fit 8 bits")
    return (comm_type << 24) | (data2 << 8) | dest


def split_id(arbitration_id: int) -> Tuple[int, int, int]:
    """``(communication type, data area 2, destination)`` of a 29-bit id."""
    return (arbitration_id >> 24) & 0x1F, (arbitration_id >> 8) & 0xFFFF, arbitration_id & 0xFF


def _frame(comm_type: int, data2: int, dest: int, data: bytes = bytes(8)) -> Frame:
    return Frame(make_id(comm_type, data2, dest), bytes(data), True)


def _check_id(name: str, value: int) -> int:
    if not 0 <= value <= 0xFF:
        raise ValueError(f"{name}={value} is not a CAN id of this protocol (0-255)")
    return value


def _expect(frame_id: int, data: bytes, comm_type: int, min_len: int = 8) -> Tuple[int, int]:
    t, d2, dest = split_id(frame_id)
    if t != comm_type:
        raise RobStrideFrameError(f"expected communication type {comm_type} ({TYPE_NAMES.get(comm_type)}), "
                                  f"got {t} in id 0x{frame_id:08X}")
    if len(data) < min_len:
        raise RobStrideFrameError(f"{TYPE_NAMES.get(comm_type)} frame needs {min_len} bytes, got {len(data)}")
    return d2, dest


def encode_save_parameters(motor_id: int, host_id: int = DEFAULT_HOST_ID) -> Frame:
    """RobStride type 22: store every parameter in flash [RS]; data ``01 02 .. 08`` as RobStride's
    manual gives it; answered by a feedback frame.  Not CyberGear's: its type 22 changes the baud rate."""
    return _frame(ROBSTRIDE_SAVE_PARAMETERS, _check_id("host_id", host_id), _check_id("motor_id", motor_id),
                  bytes(range(1, 9)))
