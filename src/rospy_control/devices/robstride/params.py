"""RobStride / CyberGear parameters (communication types 17 read and 18 write; [CG] 4.1.10-4.1.11 and
the parameter table 0x7005-0x7020, [RS] 0x7021-0x702B): index u16 little-endian in bytes 0-1, bytes 2-3
zero, value in bytes 4-7 little-endian (u8 values in byte 4).  Writes go to RAM (lost at power-off).
Sources as in :mod:`.codec`."""
from __future__ import annotations

import math
import struct
from typing import Dict, NamedTuple, Optional, Tuple, Union

from rospy_control.devices.frame import Frame

from rospy_control.devices.robstride.ids import (
    DEFAULT_HOST_ID, PARAM_READ, PARAM_WRITE, RobStrideFrameError, RobStrideLimits, RobStrideRangeError,
    _check_id, _expect, _frame, check_range, split_id,
)


# -- types 17/18: parameters ----------------------------------------------------------------------------
class ParamSpec(NamedTuple):
    """One parameter of the 0x70xx table: ``fmt`` is a struct code (``B`` u8, ``H`` u16, ``h`` i16,
    ``I`` u32, ``f`` float32), ``writable`` False for read-only values, ``unit`` for the docs; ``limit``
    names the :class:`RobStrideLimits` check applied on write (``velocity``, ``speed_limit``,
    ``torque_limit``, ``current``, ``current_limit``, ``run_mode``) or None."""

    index: int  # type: ignore[assignment]  # the field, not tuple.index
    name: str
    fmt: str
    writable: bool
    unit: str
    limit: Optional[str] = None
    source: str = "CG"


#: The parameters of types 17/18: 0x7005-0x7020 from [CG 4.1.12] (same indices in RobStride's sample
#: ``Robstrite.h``), 0x7021-0x702B RobStride firmware only [RS].
PARAMETERS: Dict[int, ParamSpec] = {p.index: p for p in (
    ParamSpec(0x7005, "run_mode", "B", True, "0 operation control, 1 position, 2 speed, 3 current, 5 CSP",
              "run_mode"),
    ParamSpec(0x7006, "iq_ref", "f", True, "A", "current"),
    ParamSpec(0x700A, "spd_ref", "f", True, "rad/s", "velocity"),
    ParamSpec(0x700B, "limit_torque", "f", True, "N m", "torque_limit"),
    ParamSpec(0x7010, "cur_kp", "f", True, ""),
    ParamSpec(0x7011, "cur_ki", "f", True, ""),
    ParamSpec(0x7014, "cur_filt_gain", "f", True, "0..1"),
    ParamSpec(0x7016, "loc_ref", "f", True, "rad", "finite"),
    ParamSpec(0x7017, "limit_spd", "f", True, "rad/s", "speed_limit"),
    ParamSpec(0x7018, "limit_cur", "f", True, "A", "current_limit"),
    ParamSpec(0x7019, "mechPos", "f", False, "rad"),
    ParamSpec(0x701A, "iqf", "f", False, "A"),
    ParamSpec(0x701B, "mechVel", "f", False, "rad/s"),
    ParamSpec(0x701C, "VBUS", "f", False, "V"),
    ParamSpec(0x701D, "rotation", "h", True, "turns"),
    ParamSpec(0x701E, "loc_kp", "f", True, ""),
    ParamSpec(0x701F, "spd_kp", "f", True, ""),
    ParamSpec(0x7020, "spd_ki", "f", True, ""),
    ParamSpec(0x7021, "spd_filt_gain", "f", True, "0..1", None, "RS"),
    ParamSpec(0x7022, "acc_rad", "f", True, "rad/s^2", None, "RS"),
    ParamSpec(0x7024, "vel_max", "f", True, "rad/s", "speed_limit", "RS"),
    ParamSpec(0x7025, "acc_set", "f", True, "rad/s^2", None, "RS"),
    ParamSpec(0x7026, "EPScan_time", "H", True, "report interval 5*(n+1) ms", None, "RS"),
    ParamSpec(0x7028, "canTimeout", "I", True, "firmware CAN timeout (0 = off)", None, "RS"),
    ParamSpec(0x7029, "zero_sta", "B", True, "0: 0..2pi, 1: -pi..pi", None, "RS"),
    ParamSpec(0x702A, "damper", "B", True, "", None, "RS"),
    ParamSpec(0x702B, "add_offset", "f", True, "rad", None, "RS"),
)}
PARAMETERS_BY_NAME: Dict[str, ParamSpec] = {p.name: p for p in PARAMETERS.values()}

#: run_mode values [CG 4.1.12]; 5 (cyclic synchronous position) exists on RobStride firmware only [RS]
RUN_MODES: Dict[str, int] = {"operation": 0, "position": 1, "velocity": 2, "current": 3, "csp": 5}
RUN_MODE_NAMES: Dict[int, str] = {v: k for k, v in RUN_MODES.items()}


def run_mode_value(mode: Union[str, int]) -> int:
    """The run_mode number of ``mode`` (a name of :data:`RUN_MODES` or the number itself)."""
    if isinstance(mode, str):
        try:
            return RUN_MODES[mode.lower()]
        except KeyError:
            raise ValueError(f"unknown run mode '{mode}'; known: {', '.join(RUN_MODES)}") from None
    if mode not in RUN_MODE_NAMES:
        raise ValueError(f"run_mode={mode!r} is not one of {sorted(RUN_MODE_NAMES)}")
    return mode


def param_spec(param: Union[int, str]) -> ParamSpec:
    """The :class:`ParamSpec` of an index or name.

    :raises ValueError: unknown parameter (hex index or name).
    """
    spec = PARAMETERS.get(param) if isinstance(param, int) else PARAMETERS_BY_NAME.get(param)
    if spec is None:
        what = f"0x{param:04X}" if isinstance(param, int) else f"'{param}'"
        raise ValueError(f"unknown RobStride/CyberGear parameter {what}; known: "
                         + ", ".join(f"{p.name} (0x{p.index:04X})" for p in PARAMETERS.values()))
    return spec


def _check_param_value(spec: ParamSpec, value: float, limits: Optional[RobStrideLimits], model: str) -> None:
    kind = spec.limit
    if kind == "run_mode":
        run_mode_value(int(value))
        return
    if spec.fmt == "f" and not math.isfinite(value):
        raise RobStrideRangeError(spec.name, value, -math.inf, math.inf, model)
    if limits is None or kind is None:
        return
    lim = limits
    if kind == "velocity":
        check_range(spec.name, value, lim.v_min, lim.v_max, model)
    elif kind == "speed_limit":
        check_range(spec.name, value, 0.0, lim.v_max, model)
    elif kind == "torque_limit":
        check_range(spec.name, value, 0.0, lim.t_max, model)
    elif kind == "current" and lim.i_max is not None:
        check_range(spec.name, value, -lim.i_max, lim.i_max, model)
    elif kind == "current_limit" and lim.i_max is not None:
        check_range(spec.name, value, 0.0, lim.i_max, model)


def _pack_value(spec: ParamSpec, value: float) -> bytes:
    fmt = "<" + spec.fmt
    try:
        raw = struct.pack(fmt, value if spec.fmt == "f" else int(value))
    except struct.error as err:
        raise RobStrideRangeError(spec.name, value, *_int_range(spec.fmt)) from err
    return raw + bytes(4 - len(raw))


def _int_range(fmt: str) -> Tuple[float, float]:
    bits = struct.calcsize(fmt) * 8
    if fmt.islower():
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return 0, (1 << bits) - 1


def encode_param_read(motor_id: int, param: Union[int, str], host_id: int = DEFAULT_HOST_ID) -> Frame:
    """Read one parameter (type 17); the motor answers with :func:`decode_param_reply`."""
    spec = param_spec(param)
    return _frame(PARAM_READ, _check_id("host_id", host_id), _check_id("motor_id", motor_id),
                  struct.pack("<HHI", spec.index, 0, 0))


def encode_param_write(motor_id: int, param: Union[int, str], value: float, host_id: int = DEFAULT_HOST_ID,
                       limits: Optional[RobStrideLimits] = None, model: str = "") -> Frame:
    """Write one parameter to RAM (type 18; vector R1); answered by a feedback frame.

    The value is checked against the parameter's type and, with ``limits``, against the model's range
    (``spd_ref`` within +-v_max, ``limit_spd`` within 0..v_max, ``limit_torque`` within 0..t_max ...).

    :raises RobStrideRangeError: the value cannot be encoded or is outside the model's range.
    :raises ValueError: the parameter is unknown or read-only.
    """
    spec = param_spec(param)
    if not spec.writable:
        raise ValueError(f"parameter {spec.name} (0x{spec.index:04X}) is read-only")
    if spec.fmt == "f":
        value = float(value)
    _check_param_value(spec, value, limits, model)
    data = struct.pack("<HH", spec.index, 0) + _pack_value(spec, value)
    return _frame(PARAM_WRITE, _check_id("host_id", host_id), _check_id("motor_id", motor_id), data)


def decode_param_request(arbitration_id: int, data: bytes) -> Tuple[int, int, int, int, bytes]:
    """``(type 17/18, host id, motor id, index, value bytes 4-7)`` of a parameter request (simulator)."""
    t, d2, dest = split_id(arbitration_id)
    if t not in (PARAM_READ, PARAM_WRITE):
        raise RobStrideFrameError(f"expected a parameter read/write (17/18), got type {t}")
    if len(data) < 8:
        raise RobStrideFrameError(f"parameter frame needs 8 bytes, got {len(data)}")
    (index,) = struct.unpack_from("<H", bytes(data))
    return t, d2 & 0xFF, dest, index, bytes(data[4:8])


def unpack_param_value(spec: ParamSpec, raw: bytes) -> float:
    """The value of ``spec`` in the 4 value bytes."""
    n = struct.calcsize(spec.fmt)
    (v,) = struct.unpack("<" + spec.fmt, bytes(raw[:n]))
    return v


class ParamReply(NamedTuple):
    """A type-17 reply: ``ok`` False when the motor flagged the read as failed (id bits 23-16 != 0,
    RobStride; an unknown index), then ``value`` is None."""

    motor_id: int
    host_id: int
    index: int  # type: ignore[assignment]  # the field, not tuple.index
    name: str
    value: Optional[float]
    ok: bool
    raw: bytes


def encode_param_reply(motor_id: int, host_id: int, index: int, raw: bytes, ok: bool = True) -> Frame:
    """The motor's type-17 reply: motor id in bits 15-8, host id as destination, value in bytes 4-7."""
    d2 = ((0 if ok else 1) << 8) | _check_id("motor_id", motor_id)
    return _frame(PARAM_READ, d2, _check_id("host_id", host_id),
                  struct.pack("<HH", index, 0) + bytes(raw[:4]) + bytes(4 - len(raw[:4])))


def decode_param_reply(arbitration_id: int, data: bytes) -> ParamReply:
    """Decode a type-17 reply (value typed by :data:`PARAMETERS`; unknown index: the raw u32)."""
    d2, dest = _expect(arbitration_id, data, PARAM_READ)
    (index,) = struct.unpack_from("<H", bytes(data))
    raw = bytes(data[4:8])
    ok = (d2 >> 8) == 0
    spec = PARAMETERS.get(index)
    value: Optional[float]
    if not ok:
        value = None
    elif spec is None:
        (value,) = struct.unpack("<I", raw)
    else:
        value = unpack_param_value(spec, raw)
    return ParamReply(d2 & 0xFF, dest, index, spec.name if spec else f"0x{index:04X}", value, ok, raw)
