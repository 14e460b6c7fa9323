"""Xiaomi CyberGear / RobStride private CAN protocol (pure codec, no I/O; one surface over its parts
:mod:`.ids` -- types, ranges, the id -- and :mod:`.params` -- types 17/18).

Sources, in order of authority (what each fact below rests on):

* **[CG]** CyberGear instruction manual, chapter 4 "Driver communication protocol" (English
  translation in belovictor/cybergear-docs, ``instructionmanual.md``): id layout, communication types
  0-4, 6, 7, 17, 18, 21, 22, the feedback fault/mode bits, the type-21 fault and warning bits, the
  parameter table 0x7005-0x7020 and the CyberGear ranges (P +-4 pi, V +-30 rad/s, T +-12 N m,
  KP 0-500, KD 0-5).
* **[RS]** RobStride's own sample program (RobStride/SampleProgram ``Robstrite.h``) and RobStride
  user manuals: the same types, run modes 0-3, and the RobStride additions: type 22 "save all
  parameters", type 23 baud rate, type 24 active reporting (payload ``01 02 03 04 05 06 F 00``),
  type 25 protocol switch, parameters 0x7021-0x702B (EPScan_time 0x7026: report interval
  ``5 * (value + 1)`` ms; canTimeout 0x7028).  Per-model P/V/T/KP/KD ranges as RobStride publishes
  them (RS00 ... RS06, cross-checked with two independent drivers' tables).
* The spec's test vectors R1-R4 (``device_protocols.md`` section 8) are tested byte for byte.

**Id** (29-bit extended, 1 Mbit/s)::

    bits 28-24  communication type
    bits 23-8   "data area 2": host id in bits 15-8 for host -> motor frames; for type 1 the torque
                (u16); for motor -> host frames the motor id in bits 15-8 and status bits above
    bits 7-0    destination id (motor id for commands, host id for replies; 0xFE for the type-0 reply)

**Type 1 operation control** (MIT-like): torque u16 in id bits 23-8, data = position, velocity, Kp,
Kd as big-endian u16, each linearly mapped onto the model's range with the firmware's truncating
``float_to_uint`` (so 0 over a symmetric range packs to 0x7FFF, vector R3).

**Type 2 feedback** (also the type-24 active report): id bits 15-8 motor id, bits 21-16 faults
(:data:`FEEDBACK_FAULTS`), bits 23-22 mode (0 reset, 1 calibration, 2 run); data = position,
velocity, torque u16 BE and temperature u16 BE in 0.1 deg C.

**Parameters** (types 17/18): index u16 little-endian in bytes 0-1, bytes 2-3 zero, value in bytes
4-7 little-endian (u8 values in byte 4); see :data:`PARAMETERS`.  Writes go to RAM (lost at power-off).

Values are in the motor's own frame (output shaft of its built-in gearbox): rad, rad/s, N m, A.
"""
from __future__ import annotations

import struct
from typing import Dict, List, NamedTuple, Optional, Tuple, Union

from rospy_control.devices.frame import Frame

__all__ = [
    "Frame", "RobStrideLimits", "RobStrideRangeError", "RobStrideFrameError", "MODELS", "limits_for",
    "check_range", "make_id", "split_id", "Feedback", "FaultReport", "ParamReply", "ParamSpec",
    "PARAMETERS", "PARAMETERS_BY_NAME", "FEEDBACK_FAULTS", "FAULT_BITS", "WARNING_BITS", "MODE_NAMES",
    "RUN_MODES", "encode_save_parameters",
    "encode_get_id", "decode_get_id_reply", "encode_get_id_reply", "encode_operation_control",
    "decode_operation_control", "encode_enable", "encode_stop", "encode_set_zero", "encode_set_can_id",
    "encode_param_read", "encode_param_write", "decode_param_request", "encode_param_reply",
    "decode_param_reply", "encode_feedback", "decode_feedback", "encode_fault_frame", "decode_fault_frame",
    "encode_active_report", "decode_active_report", "fault_names", "feedback_fault_names",
    "param_spec", "run_mode_value", "report_interval_s", "report_interval_value", "encode_switch_run_mode",
    "encode_position_target", "encode_velocity_target", "encode_current_target",
]

from rospy_control.devices.robstride.ids import (  # noqa: F401 - this module's surface
    GET_ID, OPERATION_CONTROL, FEEDBACK, ENABLE, STOP, SET_ZERO, SET_CAN_ID, PARAM_READ, PARAM_WRITE,
    FAULT_FEEDBACK, CYBERGEAR_SET_BAUD, ROBSTRIDE_SAVE_PARAMETERS, ROBSTRIDE_SET_BAUD, ACTIVE_REPORT,
    SWITCH_PROTOCOL, TYPE_NAMES, DEFAULT_HOST_ID, GET_ID_REPLY_DEST, DEFAULT_MOTOR_ID, _U16_MAX, _BE4,
    RobStrideFrameError, RobStrideRangeError, RobStrideLimits, MODELS, limits_for, check_range, _to_u16,
    _from_u16, make_id, split_id, _frame, _check_id, _expect, encode_save_parameters,
)
from rospy_control.devices.robstride.params import (  # noqa: F401 - this module's surface
    ParamSpec, PARAMETERS, PARAMETERS_BY_NAME, RUN_MODES, RUN_MODE_NAMES, run_mode_value, param_spec,
    encode_param_read, encode_param_write, decode_param_request, unpack_param_value, ParamReply,
    encode_param_reply, decode_param_reply,
)


# -- type 0: get device id ----------------------------------------------------------------------------
def encode_get_id(motor_id: int, host_id: int = DEFAULT_HOST_ID) -> Frame:
    """Ask ``motor_id`` for its 64-bit MCU unique id (reply: :func:`decode_get_id_reply`)."""
    return _frame(GET_ID, _check_id("host_id", host_id), _check_id("motor_id", motor_id))


def encode_get_id_reply(motor_id: int, uid: bytes) -> Frame:
    """The motor's type-0 reply: motor id in id bits 15-8, destination 0xFE, the 8-byte UID [CG 4.1.1]."""
    if len(uid) != 8:
        raise ValueError(f"the MCU unique id has 8 bytes, got {len(uid)}")
    return _frame(GET_ID, _check_id("motor_id", motor_id), GET_ID_REPLY_DEST, uid)


def decode_get_id_reply(arbitration_id: int, data: bytes) -> Tuple[int, bytes]:
    """``(motor id, 8-byte UID)`` of a type-0 reply."""
    d2, _dest = _expect(arbitration_id, data, GET_ID)
    return d2 & 0xFF, bytes(data[:8])


# -- type 1: operation control --------------------------------------------------------------------------
def encode_operation_control(motor_id: int, position: float, velocity: float, kp: float, kd: float,
                             torque: float, limits: RobStrideLimits, strict: bool = False,
                             model: str = "") -> Frame:
    """``torque_motor = kp (position - p) + kd (velocity - v) + torque`` [CG 4.1.2].

    With ``strict`` a value outside the model's range raises :class:`RobStrideRangeError` naming it;
    otherwise it is clamped as the firmware's own ``float_to_uint`` does (NaN: range minimum).
    """
    lim = limits
    if strict:
        for name, val, lo, hi in (("position", position, lim.p_min, lim.p_max),
                                  ("velocity", velocity, lim.v_min, lim.v_max),
                                  ("kp", kp, lim.kp_min, lim.kp_max), ("kd", kd, lim.kd_min, lim.kd_max),
                                  ("torque", torque, lim.t_min, lim.t_max)):
            check_range(name, val, lo, hi, model)
    data = _BE4.pack(_to_u16(position, lim.p_min, lim.p_max), _to_u16(velocity, lim.v_min, lim.v_max),
                     _to_u16(kp, lim.kp_min, lim.kp_max), _to_u16(kd, lim.kd_min, lim.kd_max))
    return _frame(OPERATION_CONTROL, _to_u16(torque, lim.t_min, lim.t_max), _check_id("motor_id", motor_id),
                  data)


def decode_operation_control(arbitration_id: int, data: bytes,
                             limits: RobStrideLimits) -> Tuple[int, float, float, float, float, float]:
    """``(motor id, position, velocity, kp, kd, torque)`` of a type-1 frame (the simulator's side)."""
    d2, dest = _expect(arbitration_id, data, OPERATION_CONTROL)
    p, v, kp, kd = _BE4.unpack_from(bytes(data))
    lim = limits
    return (dest, _from_u16(p, lim.p_min, lim.p_max), _from_u16(v, lim.v_min, lim.v_max),
            _from_u16(kp, lim.kp_min, lim.kp_max), _from_u16(kd, lim.kd_min, lim.kd_max),
            _from_u16(d2, lim.t_min, lim.t_max))


# -- types 3, 4, 6, 7 -----------------------------------------------------------------------------------
def encode_enable(motor_id: int, host_id: int = DEFAULT_HOST_ID) -> Frame:
    """Enable (enter run mode in the present run_mode); answered by a feedback frame (vector R2)."""
    return _frame(ENABLE, _check_id("host_id", host_id), _check_id("motor_id", motor_id))


def encode_stop(motor_id: int, host_id: int = DEFAULT_HOST_ID, clear_fault: bool = False) -> Frame:
    """Stop (reset mode, limp); ``clear_fault`` sets byte 0 = 1, which also clears latched faults."""
    data = bytes((1 if clear_fault else 0,)) + bytes(7)
    return _frame(STOP, _check_id("host_id", host_id), _check_id("motor_id", motor_id), data)


def encode_set_zero(motor_id: int, host_id: int = DEFAULT_HOST_ID) -> Frame:
    """Make the present position the mechanical zero (byte 0 = 1; lost at power-off [CG 4.1.6])."""
    return _frame(SET_ZERO, _check_id("host_id", host_id), _check_id("motor_id", motor_id),
                  b"\x01" + bytes(7))


def encode_set_can_id(motor_id: int, new_id: int, host_id: int = DEFAULT_HOST_ID) -> Frame:
    """Give ``motor_id`` the id ``new_id`` (id bits 23-16; byte 0 = 1 as in [CG 4.1.7]).  Takes effect at
    once; the motor answers with a type-0 frame from its new id."""
    d2 = (_check_id("new_id", new_id) << 8) | _check_id("host_id", host_id)
    return _frame(SET_CAN_ID, d2, _check_id("motor_id", motor_id), b"\x01" + bytes(7))


# -- type 2 / 24: feedback --------------------------------------------------------------------------------
#: fault bits of the feedback id (bit number in the 29-bit id) [CG 4.1.3]; RobStride manuals name
#: bit 20 "stall overload" where CyberGear says "HALL encoder fault"
FEEDBACK_FAULTS: Dict[int, str] = {
    16: "undervoltage", 17: "overcurrent", 18: "over temperature", 19: "magnetic encoder fault",
    20: "HALL encoder fault / stall overload", 21: "not calibrated",
}
#: mode state in id bits 23-22 [CG 4.1.3]
MODE_NAMES: Dict[int, str] = {0: "reset", 1: "calibration", 2: "run"}
MODE_RESET, MODE_CALIBRATION, MODE_RUN = 0, 1, 2


class Feedback(NamedTuple):
    """A decoded type-2 (or type-24 active report) frame.  ``faults`` is the 6-bit field (bit 0 =
    undervoltage ... bit 5 = not calibrated), ``fault_names`` its names, ``mode`` 0 reset / 1
    calibration / 2 run.  ``temperature`` in deg C."""

    motor_id: int
    host_id: int
    position: float
    velocity: float
    torque: float
    temperature: float
    faults: int
    mode: int
    comm_type: int = FEEDBACK

    @property
    def fault_names(self) -> List[str]:
        return feedback_fault_names(self.faults)

    @property
    def mode_name(self) -> str:
        return MODE_NAMES.get(self.mode, f"mode {self.mode}")


def feedback_fault_names(faults: int) -> List[str]:
    """Names of the set bits of the 6-bit feedback fault field."""
    return [name for bit, name in FEEDBACK_FAULTS.items() if faults & (1 << (bit - 16))]


def encode_feedback(motor_id: int, host_id: int, position: float, velocity: float, torque: float,
                    temperature: float, limits: RobStrideLimits, faults: int = 0, mode: int = MODE_RUN,
                    comm_type: int = FEEDBACK) -> Frame:
    """The motor's feedback frame (type 2, or type 24 for an active report)."""
    lim = limits
    d2 = ((mode & 0x3) << 14) | ((faults & 0x3F) << 8) | _check_id("motor_id", motor_id)
    temp = max(0, min(_U16_MAX, int(round(temperature * 10.0))))
    data = _BE4.pack(_to_u16(position, lim.p_min, lim.p_max), _to_u16(velocity, lim.v_min, lim.v_max),
                     _to_u16(torque, lim.t_min, lim.t_max), temp)
    return _frame(comm_type, d2, _check_id("host_id", host_id), data)


def decode_feedback(arbitration_id: int, data: bytes, limits: RobStrideLimits) -> Feedback:
    """Decode a type-2 or type-24 frame (the mode is the full 2-bit field 23-22, vector R4).

    :raises RobStrideFrameError: another type, or fewer than 8 bytes.
    """
    t, d2, dest = split_id(arbitration_id)
    if t not in (FEEDBACK, ACTIVE_REPORT):
        raise RobStrideFrameError(f"expected a feedback frame (type 2 or 24), got type {t} in id "
                                  f"0x{arbitration_id:08X}")
    if len(data) < 8:
        raise RobStrideFrameError(f"feedback frame needs 8 bytes, got {len(data)}")
    p, v, tq, temp = _BE4.unpack_from(bytes(data))
    lim = limits
    return Feedback(d2 & 0xFF, dest, _from_u16(p, lim.p_min, lim.p_max), _from_u16(v, lim.v_min, lim.v_max),
                    _from_u16(tq, lim.t_min, lim.t_max), temp / 10.0, (d2 >> 8) & 0x3F, (d2 >> 14) & 0x3, t)


# -- type 21: fault feedback ------------------------------------------------------------------------------
#: bits of the 32-bit fault value (bytes 0-3) [CG 4.1.10]; bits 8-15 together are the overload fault
FAULT_BITS: Dict[int, str] = {
    0: "motor over-temperature", 1: "driver chip fault", 2: "undervoltage", 3: "overvoltage",
    4: "phase B current sampling overcurrent", 5: "phase C current sampling overcurrent",
    7: "encoder not calibrated", 8: "overload", 16: "phase A current sampling overcurrent",
}
_OVERLOAD_MASK = 0xFF00
#: bits of the 32-bit warning value (bytes 4-7) [CG 4.1.10]
WARNING_BITS: Dict[int, str] = {0: "motor over-temperature warning"}


def fault_names(fault: int, table: Optional[Dict[int, str]] = None) -> List[str]:
    """Names of the set bits of a type-21 fault value (overload: any of bits 8-15; unknown bits
    as "bit N")."""
    table = FAULT_BITS if table is None else table
    names = []
    for bit in range(32):
        if not fault & (1 << bit):
            continue
        if table is FAULT_BITS and 8 <= bit <= 15:
            if "overload" not in names:
                names.append("overload")
            continue
        names.append(table.get(bit, f"bit {bit}"))
    return names


class FaultReport(NamedTuple):
    """A decoded type-21 frame: ``fault`` and ``warning`` words with their names."""

    motor_id: int
    host_id: int
    fault: int
    warning: int

    @property
    def fault_names(self) -> List[str]:
        return fault_names(self.fault)

    @property
    def warning_names(self) -> List[str]:
        return fault_names(self.warning, WARNING_BITS)

    @property
    def overload(self) -> int:
        """The overload value of bits 8-15 (0: none)."""
        return (self.fault & _OVERLOAD_MASK) >> 8


def encode_fault_frame(motor_id: int, host_id: int, fault: int, warning: int = 0) -> Frame:
    """The motor's type-21 frame (fault and warning u32 little-endian).  The manual's table writes the
    id as for a request; the motor id is sent in bits 15-8 and the host id as destination, as in every
    other motor -> host frame."""
    return _frame(FAULT_FEEDBACK, _check_id("motor_id", motor_id), _check_id("host_id", host_id),
                  struct.pack("<II", fault & 0xFFFFFFFF, warning & 0xFFFFFFFF))


def decode_fault_frame(arbitration_id: int, data: bytes) -> FaultReport:
    """Decode a type-21 frame."""
    d2, dest = _expect(arbitration_id, data, FAULT_FEEDBACK)
    fault, warning = struct.unpack_from("<II", bytes(data))
    return FaultReport(d2 & 0xFF, dest, fault, warning)


# -- type 24: active reporting ------------------------------------------------------------------------------
_REPORT_MAGIC = bytes((1, 2, 3, 4, 5, 6))


def encode_active_report(motor_id: int, on: bool, host_id: int = DEFAULT_HOST_ID) -> Frame:
    """Switch the motor's active reporting on/off (type 24, payload ``01 02 03 04 05 06 F 00`` [RS]);
    while on, the motor sends type-24 feedback frames every EPScan_time interval (default 10 ms)."""
    return _frame(ACTIVE_REPORT, _check_id("host_id", host_id), _check_id("motor_id", motor_id),
                  _REPORT_MAGIC + bytes((1 if on else 0, 0)))


def decode_active_report(arbitration_id: int, data: bytes) -> Optional[bool]:
    """For a host -> motor type-24 frame: True (on) / False (off); None if it is not that request
    (a motor's type-24 report has no magic bytes)."""
    t, _d2, _dest = split_id(arbitration_id)
    if t != ACTIVE_REPORT or len(data) < 7 or bytes(data[:6]) != _REPORT_MAGIC:
        return None
    return bool(data[6])


def report_interval_s(epscan_time: int) -> float:
    """Active-report interval of an EPScan_time value: ``5 * (value + 1)`` ms (1 -> 10 ms) [RS]."""
    return 0.005 * (int(epscan_time) + 1)


def report_interval_value(interval_s: float) -> int:
    """The EPScan_time value closest to ``interval_s`` (at least 10 ms, value 1).

    :raises RobStrideRangeError: the interval is not 10 ms .. 327.68 s.
    """
    check_range("report_interval", interval_s, 0.01, 0.005 * 65536)
    return max(1, int(round(interval_s / 0.005)) - 1)


# -- run modes as frame sequences ----------------------------------------------------------------------------
def encode_switch_run_mode(motor_id: int, mode: Union[str, int], host_id: int = DEFAULT_HOST_ID,
                           enable: bool = True) -> List[Frame]:
    """Stop, write ``run_mode``, and (``enable``) enable again: the manual's way to change the mode
    ("the control mode cannot be switched while the joint is running; send a stop first" [CG]).
    Each frame is answered by a feedback frame."""
    frames = [encode_stop(motor_id, host_id), encode_param_write(motor_id, "run_mode", run_mode_value(mode),
                                                                 host_id)]
    if enable:
        frames.append(encode_enable(motor_id, host_id))
    return frames


def encode_position_target(motor_id: int, position: float, speed_limit: Optional[float] = None,
                           host_id: int = DEFAULT_HOST_ID, limits: Optional[RobStrideLimits] = None,
                           model: str = "", csp: bool = False) -> List[Frame]:
    """Position run mode (1; or 5 CSP on RobStride with ``csp``): optionally the speed limit
    (``limit_spd`` for CSP [CG 4.1.12], ``vel_max`` for RobStride's profile position mode [RS]; on
    CyberGear position mode ``limit_spd`` applies), then ``loc_ref`` (rad)."""
    frames = []
    if speed_limit is not None:
        name = "limit_spd" if csp or model.lower() in ("", "cybergear") else "vel_max"
        frames.append(encode_param_write(motor_id, name, speed_limit, host_id, limits, model))
    frames.append(encode_param_write(motor_id, "loc_ref", position, host_id, limits, model))
    return frames


def encode_velocity_target(motor_id: int, velocity: float, current_limit: Optional[float] = None,
                           host_id: int = DEFAULT_HOST_ID, limits: Optional[RobStrideLimits] = None,
                           model: str = "") -> List[Frame]:
    """Speed run mode (2): optionally ``limit_cur`` (A), then ``spd_ref`` (rad/s)."""
    frames = []
    if current_limit is not None:
        frames.append(encode_param_write(motor_id, "limit_cur", current_limit, host_id, limits, model))
    frames.append(encode_param_write(motor_id, "spd_ref", velocity, host_id, limits, model))
    return frames


def encode_current_target(motor_id: int, iq: float, host_id: int = DEFAULT_HOST_ID,
                          limits: Optional[RobStrideLimits] = None, model: str = "") -> List[Frame]:
    """Current run mode (3): ``iq_ref`` (A)."""
    return [encode_param_write(motor_id, "iq_ref", iq, host_id, limits, model)]
