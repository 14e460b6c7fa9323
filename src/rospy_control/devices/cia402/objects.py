"""The CiA 301 / 402 objects this package knows (index, type, access, mappable, unit), their integer
encodings, and the unit conversions drive <-> joint (increments, increments/s and per mille of the rated
torque 0x6076 <-> rad, rad/s, N m through the encoder resolution and a gear)."""
from __future__ import annotations

import math
from typing import Dict, NamedTuple, Optional

from rospy_control.devices.cia402.nmt import Cia402Error


# -- objects -------------------------------------------------------------------------------------------------
class ObjectInfo(NamedTuple):
    """What the driver and the simulated drive need to know about an object."""

    index: int  # type: ignore[assignment]  # the field, not tuple.index
    name: str
    dtype: str          # CiA 301 type name: UNSIGNED8/16/32, INTEGER8/16/32, VISIBLE_STRING, RECORD
    access: str         # ro, rw, wo, const
    pdo: bool = False   # mappable
    unit: str = ""


_STRUCT_OF_TYPE = {"UNSIGNED8": "B", "UNSIGNED16": "H", "UNSIGNED32": "I", "INTEGER8": "b", "INTEGER16": "h",
                   "INTEGER32": "i"}

OBJECTS: Dict[int, ObjectInfo] = {o.index: o for o in (
    ObjectInfo(0x1000, "Device type", "UNSIGNED32", "ro"),
    ObjectInfo(0x1001, "Error register", "UNSIGNED8", "ro", True),
    ObjectInfo(0x1008, "Manufacturer device name", "VISIBLE_STRING", "const"),
    ObjectInfo(0x1017, "Producer heartbeat time", "UNSIGNED16", "rw", False, "ms"),
    ObjectInfo(0x1018, "Identity object", "RECORD", "ro"),
    ObjectInfo(0x1400, "RPDO1 communication parameter", "RECORD", "rw"),
    ObjectInfo(0x1600, "RPDO1 mapping parameter", "RECORD", "rw"),
    ObjectInfo(0x1800, "TPDO1 communication parameter", "RECORD", "rw"),
    ObjectInfo(0x1A00, "TPDO1 mapping parameter", "RECORD", "rw"),
    ObjectInfo(0x603F, "Error code", "UNSIGNED16", "ro", True),
    ObjectInfo(0x6040, "Controlword", "UNSIGNED16", "rw", True),
    ObjectInfo(0x6041, "Statusword", "UNSIGNED16", "ro", True),
    ObjectInfo(0x6060, "Modes of operation", "INTEGER8", "rw", True),
    ObjectInfo(0x6061, "Modes of operation display", "INTEGER8", "ro", True),
    ObjectInfo(0x6064, "Position actual value", "INTEGER32", "ro", True, "inc"),
    ObjectInfo(0x606C, "Velocity actual value", "INTEGER32", "ro", True, "inc/s"),
    ObjectInfo(0x6071, "Target torque", "INTEGER16", "rw", True, "per mille of rated torque"),
    ObjectInfo(0x6072, "Max torque", "UNSIGNED16", "rw", True, "per mille of rated torque"),
    ObjectInfo(0x6076, "Motor rated torque", "UNSIGNED32", "rw", False, "mN m"),
    ObjectInfo(0x6077, "Torque actual value", "INTEGER16", "ro", True, "per mille of rated torque"),
    ObjectInfo(0x607A, "Target position", "INTEGER32", "rw", True, "inc"),
    ObjectInfo(0x6081, "Profile velocity", "UNSIGNED32", "rw", True, "inc/s"),
    ObjectInfo(0x60B1, "Velocity offset", "INTEGER32", "rw", True, "inc/s"),
    ObjectInfo(0x60B2, "Torque offset", "INTEGER16", "rw", True, "per mille of rated torque"),
    ObjectInfo(0x60C2, "Interpolation time period", "RECORD", "rw"),
    ObjectInfo(0x60FF, "Target velocity", "INTEGER32", "rw", True, "inc/s"),
    ObjectInfo(0x6502, "Supported drive modes", "UNSIGNED32", "ro"),
)}
for _n in range(1, 4):
    for _base, _kind in ((0x1400, "RPDO%d communication parameter"), (0x1600, "RPDO%d mapping parameter"),
                         (0x1800, "TPDO%d communication parameter"), (0x1A00, "TPDO%d mapping parameter")):
        OBJECTS[_base + _n] = ObjectInfo(_base + _n, _kind % (_n + 1), "RECORD", "rw")

CONTROLWORD, STATUSWORD = 0x6040, 0x6041
MODES_OF_OPERATION, MODES_OF_OPERATION_DISPLAY = 0x6060, 0x6061
POSITION_ACTUAL, VELOCITY_ACTUAL, TORQUE_ACTUAL = 0x6064, 0x606C, 0x6077
TARGET_POSITION, TARGET_VELOCITY, TARGET_TORQUE = 0x607A, 0x60FF, 0x6071
VELOCITY_OFFSET, TORQUE_OFFSET = 0x60B1, 0x60B2
ERROR_CODE, ERROR_REGISTER = 0x603F, 0x1001
HEARTBEAT_PRODUCER = 0x1017
RATED_TORQUE = 0x6076
INTERPOLATION_PERIOD = 0x60C2


def object_info(index: int) -> ObjectInfo:
    """The :class:`ObjectInfo` of a known object (:class:`Cia402Error` naming it in hex otherwise)."""
    try:
        return OBJECTS[index]
    except KeyError:
        raise Cia402Error(f"object 0x{index:04X} is not one this package knows") from None


def struct_code(dtype: str) -> str:
    """struct format letter of an integer CiA 301 type."""
    try:
        return _STRUCT_OF_TYPE[dtype]
    except KeyError:
        raise Cia402Error(f"{dtype} is not an integer data type") from None


# -- units ---------------------------------------------------------------------------------------------------
class UnitScale:
    """Drive units <-> joint units through the encoder resolution, a gear and the rated torque.

    * position: ``rad = counts / counts_per_rev * 2 pi / gear_ratio`` (encoder on the motor, joint
      behind a ``gear_ratio``:1 reduction; ``gear_ratio`` 1 for an encoder on the joint);
    * velocity: the same per second (0x606C / 0x60FF in counts/s);
    * torque: ``N m (joint) = per_mille / 1000 * rated_torque * gear_ratio`` (0x6071 / 0x6077 are
      per mille of the motor's rated torque 0x6076; the gear multiplies it).

    :raises ValueError: counts_per_rev or rated_torque not positive, gear_ratio zero or not finite.
    """

    def __init__(self, counts_per_rev: float, gear_ratio: float = 1.0, rated_torque: float = 1.0) -> None:
        for name, value in (("counts_per_rev", counts_per_rev), ("rated_torque", rated_torque)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}={value!r} must be a positive number")
        if not (math.isfinite(gear_ratio) and gear_ratio != 0):
            raise ValueError(f"gear_ratio={gear_ratio!r} must be a non-zero number")
        self.counts_per_rev = float(counts_per_rev)
        self.gear_ratio = float(gear_ratio)
        self.rated_torque = float(rated_torque)
        self._rad_per_count = 2.0 * math.pi / (self.counts_per_rev * self.gear_ratio)

    def counts_to_rad(self, counts: float) -> float:
        return counts * self._rad_per_count

    def rad_to_counts(self, rad: float, attribute: str = "position") -> int:
        """Rounded to the nearest increment, checked against INTEGER32 (naming ``attribute``)."""
        return _int32(rad / self._rad_per_count, attribute, rad)

    def counts_per_s_to_rad_per_s(self, counts: float) -> float:
        return counts * self._rad_per_count

    def rad_per_s_to_counts_per_s(self, rad_s: float, attribute: str = "velocity") -> int:
        return _int32(rad_s / self._rad_per_count, attribute, rad_s)

    def permille_to_nm(self, permille: float) -> float:
        return permille / 1000.0 * self.rated_torque * self.gear_ratio

    def nm_to_permille(self, nm: float, attribute: str = "torque") -> int:
        """Rounded per mille, checked against INTEGER16 (naming ``attribute``)."""
        if not math.isfinite(nm):
            raise ValueError(f"{attribute}={nm!r} is not a finite torque")
        v = int(round(nm / (self.rated_torque * self.gear_ratio) * 1000.0))
        if not -32768 <= v <= 32767:
            limit = 32.767 * self.rated_torque * abs(self.gear_ratio)
            raise ValueError(f"{attribute}={nm!r} N m is outside what 0x6071 can encode "
                             f"(+-{limit:g} N m at rated torque {self.rated_torque:g} N m)")
        return v


def _int32(x: float, attribute: str, original: float) -> int:
    if not math.isfinite(x):
        raise ValueError(f"{attribute}={original!r} is not a finite number")
    v = int(round(x))
    if not -(1 << 31) <= v < (1 << 31):
        raise ValueError(f"{attribute}={original!r} is {v} increments, outside INTEGER32")
    return v


def interpolation_period_s(value: int, index: int) -> float:
    """The period 0x60C2 encodes: ``value`` (sub 1, u8) times 10 to the ``index`` (sub 2, i8) seconds."""
    return value * 10.0 ** index


def check_sync_period(sync_period: float, value: int, index: int, node: Optional[int] = None) -> None:
    """In CSP/CSV/CST the drive interpolates over 0x60C2; a SYNC period that differs makes it jerk or
    vibrate (ros2_canopen #405).

    :raises ValueError: the periods differ by more than 1 %, naming both.
    """
    period = interpolation_period_s(value, index)
    if period <= 0 or abs(sync_period - period) > 0.01 * period:
        who = f"node {node}: " if node is not None else ""
        raise ValueError(f"{who}SYNC period {sync_period * 1000:g} ms differs from the drive's interpolation "
                         f"time period 0x60C2 = {value} x 10^{index} s = {period * 1000:g} ms")
