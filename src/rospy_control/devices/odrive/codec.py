"""ODrive "CAN Simple" protocol, firmware 0.5.x (ODrive v3.6) and 0.6.x (ODrive Pro / S1 / Micro).

Pure functions, no I/O.  The wire speaks turns, turn/s and N·m at the motor; :class:`OdriveScale`
converts to radians through the configured ratio.

Documents followed:

* 0.5.x: ODrive's own ``docs/can-protocol.rst`` with ``docs/_static/can-protocol.csv`` and the firmware
  source ``Firmware/communication/can/can_simple.cpp`` (odriverobotics/ODrive, fw-v0.5.6): the command
  table, the heartbeat layout (axis error, state, motor/encoder/controller error flags, trajectory
  done in byte 7 bit 7), "get" requests answered only for RTR or DLC 0, every frame to the axis
  feeding its watchdog, Set_Input_Pos feed-forwards as int16 x 0.001; the axis error bits of
  fw-v0.5.6's ``Axis::Error``.
* 0.6.x: ODrive's generated ``can_simple_messages.hpp`` (odriverobotics/ros_odrive) and its
  ``odrive-cansimple-0.6.10.dbc`` as the project's protocol facts summarise them, ODrive's CAN
  examples (odriverobotics/ODriveResources ``examples/can_simple.py``, ``can_watchdog.py``:
  Set_Axis_State as ``<I``, heartbeat ``<IBBB``, the watchdog fed by re-sending the setpoint), and the
  ``ODriveError`` bits, ``ProcedureResult`` and ``AxisState`` values of ``odrive_enums.h`` as
  several projects copy them (consistently).

**Ids**: ``node_id << 5 | cmd_id`` (11 bit, node 0..0x3F, cmd 0..0x1F); every *axis* is a node; all
payloads little-endian.  Commands whose meaning differs between the lines are in :data:`COMMANDS`.

**Heartbeat** (cmd 0x01, cyclic, default every 100 ms; DLC 8)::

    0.5.x:  u32 axis_error | u8 axis_state | u8 motor_error_flag | u8 encoder_error_flag |
            u8 (bit 0 controller_error_flag, bit 7 trajectory_done)
    0.6.x:  u32 axis_error (ODriveError bits) | u8 axis_state | u8 procedure_result |
            u8 (bit 0 trajectory_done) | u8 reserved

The heartbeat carries no sequence number: after Set_Axis_State, wait until two consecutive
heartbeats show the state (and, on 0.6, a procedure result other than BUSY).

**Encoder estimates** (cmd 0x09, cyclic, default every 10 ms): f32 position (turn), f32 velocity
(turn/s).

**Set_Input_Pos** (0x0C): f32 position (turn), i16 velocity feed-forward x 0.001 turn/s, i16 torque
feed-forward x 0.001 N·m: the feed-forwards are *saturated* at the int16 limits (+-32.767), never
wrapped.  (0.6's DBC marks the 0.001 factor as configurable on the device; 0.001 is the default and
what this codec sends.)

**Clear_Errors** (0x18): DLC 0 on 0.5, DLC 1 (u8 identify) on 0.6.  **Estop** (0x02): DLC 0.

**Set_Axis_Node_ID** (0.5 only, 0x06): u32 node id, no answer; the axis listens on the new id at once,
in RAM (0.5 CAN Simple has no save: ``save_configuration()`` is an endpoint reached over USB).  0.6
replaced it by Address (0x06, node id with the 48-bit serial number); not provided.

Unverified: the 0.6 default bitrate; whether on 0.6 every frame or only control frames feed the
watchdog (send setpoints continuously, as ODrive's examples do, and both hold); the Reboot action
values.
"""
from __future__ import annotations

import math
import struct
from typing import Dict, List, NamedTuple, Optional, Tuple

from rospy_control.devices.encodable import check_encodable
from rospy_control.devices.wire import Traffic, frame_bits

__all__ = [
    "V05", "V06", "VERSIONS", "parse_version", "COMMANDS", "COMMON_COMMANDS", "command_ids",
    "CMD_HEARTBEAT", "CMD_ESTOP", "CMD_SET_AXIS_STATE", "CMD_GET_ENCODER_ESTIMATES",
    "CMD_SET_CONTROLLER_MODE",
    "CMD_SET_INPUT_POS", "CMD_SET_INPUT_VEL", "CMD_SET_INPUT_TORQUE", "CMD_SET_LIMITS", "CMD_GET_IQ",
    "CMD_GET_BUS_VOLTAGE_CURRENT", "CMD_CLEAR_ERRORS", "CMD_SET_POS_GAIN", "CMD_SET_VEL_GAINS",
    "AXIS_STATE_IDLE", "AXIS_STATE_CLOSED_LOOP_CONTROL", "AXIS_STATE_FULL_CALIBRATION_SEQUENCE",
    "AXIS_STATES", "CONTROL_MODE_VOLTAGE", "CONTROL_MODE_TORQUE", "CONTROL_MODE_VELOCITY",
    "CONTROL_MODE_POSITION", "CONTROL_MODES", "INPUT_MODE_INACTIVE", "INPUT_MODE_PASSTHROUGH",
    "INPUT_MODE_VEL_RAMP", "INPUT_MODE_POS_FILTER", "INPUT_MODE_TRAP_TRAJ", "INPUT_MODE_TORQUE_RAMP",
    "INPUT_MODES", "PROCEDURE_RESULTS", "PROCEDURE_RESULT_SUCCESS", "PROCEDURE_RESULT_BUSY",
    "AXIS_ERRORS", "WATCHDOG_TIMER_EXPIRED", "ESTOP_REQUESTED", "axis_error_names", "axis_error_text",
    "axis_error_bit", "Heartbeat", "OdriveFrameError", "OdriveScale", "FF_SCALE", "FF_LIMIT",
    "arbitration_id", "split_id", "pack_set_axis_state", "unpack_set_axis_state", "pack_set_controller_mode",
    "unpack_set_controller_mode", "ff_to_int16", "pack_set_input_pos", "unpack_set_input_pos",
    "pack_set_input_vel", "unpack_set_input_vel", "pack_set_input_torque", "unpack_set_input_torque",
    "pack_set_limits", "unpack_set_limits", "pack_set_pos_gain", "pack_set_vel_gains", "pack_estop",
    "pack_clear_errors", "pack_set_linear_count", "unpack_set_linear_count", "pack_set_absolute_position",
    "unpack_float", "pack_heartbeat", "pack_set_axis_node_id", "unpack_set_axis_node_id",
    "CMD_SET_AXIS_NODE_ID",
    "unpack_heartbeat", "pack_encoder_estimates", "unpack_encoder_estimates", "pack_float_pair",
    "unpack_float_pair", "pack_get_error", "unpack_get_error", "pack_motor_error", "unpack_motor_error",
    "is_get_request", "GET_COMMANDS", "check_node_id", "check_feedforward_encodable", "StateConfirmation",
    "traffic",
]

V05 = "0.5"
V06 = "0.6"
VERSIONS = (V05, V06)


def parse_version(text: str) -> str:
    """``"0.5"``/``"0.6"`` from a firmware version such as ``0.5.6`` or ``0.6.10``.

    :raises ValueError: naming the value and the supported lines.
    """
    s = str(text).strip().lstrip("vV")
    for v in VERSIONS:
        if s == v or s.startswith(v + "."):
            return v
    raise ValueError(f"ODrive firmware version '{text}' is not supported; use 0.5.x or 0.6.x")


def _check_version(version: str) -> None:
    if version not in VERSIONS:
        raise ValueError(f"ODrive firmware line must be one of {VERSIONS}, got {version!r}")


# -- command ids -----------------------------------------------------------------------------------
CMD_HEARTBEAT = 0x01
CMD_ESTOP = 0x02
CMD_SET_AXIS_STATE = 0x07
CMD_GET_ENCODER_ESTIMATES = 0x09
CMD_SET_CONTROLLER_MODE = 0x0B
CMD_SET_INPUT_POS = 0x0C
CMD_SET_INPUT_VEL = 0x0D
CMD_SET_INPUT_TORQUE = 0x0E
CMD_SET_LIMITS = 0x0F
CMD_GET_IQ = 0x14
CMD_GET_BUS_VOLTAGE_CURRENT = 0x17
CMD_CLEAR_ERRORS = 0x18
CMD_SET_POS_GAIN = 0x1A
CMD_SET_VEL_GAINS = 0x1B
CMD_SET_AXIS_NODE_ID = 0x06   # 0.5 only

#: commands with the same id and meaning on both lines
COMMON_COMMANDS: Dict[str, int] = {
    "Heartbeat": 0x01, "Estop": 0x02, "Set_Axis_State": 0x07, "Get_Encoder_Estimates": 0x09,
    "Set_Controller_Mode": 0x0B, "Set_Input_Pos": 0x0C, "Set_Input_Vel": 0x0D, "Set_Input_Torque": 0x0E,
    "Set_Limits": 0x0F, "Set_Traj_Vel_Limit": 0x11, "Set_Traj_Accel_Limits": 0x12, "Set_Traj_Inertia": 0x13,
    "Get_Iq": 0x14, "Reboot": 0x16, "Get_Bus_Voltage_Current": 0x17, "Clear_Errors": 0x18,
    "Set_Pos_Gain": 0x1A, "Set_Vel_Gains": 0x1B,
}
#: the command table of each firmware line (name -> cmd id)
COMMANDS: Dict[str, Dict[str, int]] = {
    V05: dict(COMMON_COMMANDS, Get_Motor_Error=0x03, Get_Encoder_Error=0x04, Get_Sensorless_Error=0x05,
              Set_Axis_Node_ID=0x06, Get_Encoder_Count=0x0A, Start_Anticogging=0x10,
              Get_Sensorless_Estimates=0x15, Set_Linear_Count=0x19, Get_ADC_Voltage=0x1C,
              Get_Controller_Error=0x1D),
    V06: dict(COMMON_COMMANDS, Get_Version=0x00, Get_Error=0x03, RxSdo=0x04, TxSdo=0x05, Address=0x06,
              Get_Temperature=0x15, Set_Absolute_Position=0x19, Get_Torques=0x1C, Get_Powers=0x1D,
              Enter_DFU_Mode=0x1F),
}
#: "get" commands (answered to an RTR frame or a data frame of DLC 0) per line
GET_COMMANDS: Dict[str, Tuple[int, ...]] = {
    V05: (0x03, 0x04, 0x05, 0x09, 0x0A, 0x14, 0x15, 0x17),
    V06: (0x00, 0x03, 0x09, 0x14, 0x15, 0x17, 0x1C, 0x1D),
}


def command_ids(version: str) -> Dict[str, int]:
    """The command table of a firmware line (a copy)."""
    _check_version(version)
    return dict(COMMANDS[version])


# -- enums -----------------------------------------------------------------------------------------
AXIS_STATE_IDLE = 1
AXIS_STATE_FULL_CALIBRATION_SEQUENCE = 3
AXIS_STATE_CLOSED_LOOP_CONTROL = 8
AXIS_STATES: Dict[int, str] = {
    0: "UNDEFINED", 1: "IDLE", 2: "STARTUP_SEQUENCE", 3: "FULL_CALIBRATION_SEQUENCE", 4: "MOTOR_CALIBRATION",
    5: "SENSORLESS_CONTROL", 6: "ENCODER_INDEX_SEARCH", 7: "ENCODER_OFFSET_CALIBRATION",
    8: "CLOSED_LOOP_CONTROL", 9: "LOCKIN_SPIN", 10: "ENCODER_DIR_FIND", 11: "HOMING",
    12: "ENCODER_HALL_POLARITY_CALIBRATION", 13: "ENCODER_HALL_PHASE_CALIBRATION",
    14: "ANTICOGGING_CALIBRATION",
}
CONTROL_MODE_VOLTAGE = 0
CONTROL_MODE_TORQUE = 1
CONTROL_MODE_VELOCITY = 2
CONTROL_MODE_POSITION = 3
CONTROL_MODES: Dict[int, str] = {0: "VOLTAGE_CONTROL", 1: "TORQUE_CONTROL", 2: "VELOCITY_CONTROL",
                                 3: "POSITION_CONTROL"}
INPUT_MODE_INACTIVE = 0
INPUT_MODE_PASSTHROUGH = 1
INPUT_MODE_VEL_RAMP = 2
INPUT_MODE_POS_FILTER = 3
INPUT_MODE_TRAP_TRAJ = 5
INPUT_MODE_TORQUE_RAMP = 6
INPUT_MODES: Dict[int, str] = {0: "INACTIVE", 1: "PASSTHROUGH", 2: "VEL_RAMP", 3: "POS_FILTER",
                               4: "MIX_CHANNELS", 5: "TRAP_TRAJ", 6: "TORQUE_RAMP", 7: "MIRROR", 8: "TUNING"}
PROCEDURE_RESULT_SUCCESS = 0
PROCEDURE_RESULT_BUSY = 1
PROCEDURE_RESULT_DISARMED = 3
#: 0.6 heartbeat byte 5
PROCEDURE_RESULTS: Dict[int, str] = {
    0: "SUCCESS", 1: "BUSY", 2: "CANCELLED", 3: "DISARMED", 4: "NO_RESPONSE", 5: "POLE_PAIR_CPR_MISMATCH",
    6: "PHASE_RESISTANCE_OUT_OF_RANGE", 7: "PHASE_INDUCTANCE_OUT_OF_RANGE", 8: "UNBALANCED_PHASES",
    9: "INVALID_MOTOR_TYPE", 10: "ILLEGAL_HALL_STATE", 11: "TIMEOUT", 12: "HOMING_WITHOUT_ENDSTOP",
    13: "INVALID_STATE", 14: "NOT_CALIBRATED", 15: "NOT_CONVERGING",
}

#: the heartbeat's axis error bits per line, named as the firmware names them
AXIS_ERRORS: Dict[str, Dict[int, str]] = {
    V05: {  # fw-v0.5.6 Axis::Error
        0x00000001: "INVALID_STATE", 0x00000040: "MOTOR_FAILED", 0x00000080: "SENSORLESS_ESTIMATOR_FAILED",
        0x00000100: "ENCODER_FAILED", 0x00000200: "CONTROLLER_FAILED", 0x00000800: "WATCHDOG_TIMER_EXPIRED",
        0x00001000: "MIN_ENDSTOP_PRESSED", 0x00002000: "MAX_ENDSTOP_PRESSED", 0x00004000: "ESTOP_REQUESTED",
        0x00020000: "HOMING_WITHOUT_ENDSTOP", 0x00040000: "OVER_TEMP", 0x00080000: "UNKNOWN_POSITION",
    },
    V06: {  # 0.6.x ODriveError
        0x00000001: "INITIALIZING", 0x00000002: "SYSTEM_LEVEL", 0x00000004: "TIMING_ERROR",
        0x00000008: "MISSING_ESTIMATE", 0x00000010: "BAD_CONFIG", 0x00000020: "DRV_FAULT",
        0x00000040: "MISSING_INPUT", 0x00000100: "DC_BUS_OVER_VOLTAGE", 0x00000200: "DC_BUS_UNDER_VOLTAGE",
        0x00000400: "DC_BUS_OVER_CURRENT", 0x00000800: "DC_BUS_OVER_REGEN_CURRENT",
        0x00001000: "CURRENT_LIMIT_VIOLATION", 0x00002000: "MOTOR_OVER_TEMP",
        0x00004000: "INVERTER_OVER_TEMP",
        0x00008000: "VELOCITY_LIMIT_VIOLATION", 0x00010000: "POSITION_LIMIT_VIOLATION",
        0x01000000: "WATCHDOG_TIMER_EXPIRED", 0x02000000: "ESTOP_REQUESTED", 0x04000000: "SPINOUT_DETECTED",
        0x08000000: "BRAKE_RESISTOR_DISARMED", 0x10000000: "THERMISTOR_DISCONNECTED",
        0x40000000: "CALIBRATION_ERROR",
    },
}
#: the watchdog and e-stop bits per line
WATCHDOG_TIMER_EXPIRED: Dict[str, int] = {V05: 0x00000800, V06: 0x01000000}
ESTOP_REQUESTED: Dict[str, int] = {V05: 0x00004000, V06: 0x02000000}


def axis_error_names(version: str, axis_error: int) -> List[str]:
    """The names of the bits set in ``axis_error`` (lowest bit first); unknown bits as ``0x...``."""
    _check_version(version)
    table = AXIS_ERRORS[version]
    names = []
    bit = 1
    while bit <= axis_error:
        if axis_error & bit:
            names.append(table.get(bit, f"0x{bit:08X}"))
        bit <<= 1
    return names


def axis_error_text(version: str, axis_error: int) -> str:
    """``"OVER_TEMP | ESTOP_REQUESTED"``, or ``"NONE"``."""
    return " | ".join(axis_error_names(version, axis_error)) or "NONE"


def axis_error_bit(version: str, name: str) -> int:
    """The bit of an error name of ``version`` (ValueError naming the known ones)."""
    _check_version(version)
    for bit, n in AXIS_ERRORS[version].items():
        if n == name:
            return bit
    raise ValueError(f"unknown ODrive {version} axis error '{name}'; known: "
                     + ", ".join(AXIS_ERRORS[version].values()))


# -- frames ----------------------------------------------------------------------------------------
class OdriveFrameError(ValueError):
    """A frame does not have the layout of the CAN Simple message it claims to be."""


_U32 = struct.Struct("<I")
_II = struct.Struct("<II")
_F = struct.Struct("<f")
_FF = struct.Struct("<ff")
_FHH = struct.Struct("<fhh")
_I32 = struct.Struct("<i")
_U64 = struct.Struct("<Q")
_HB = struct.Struct("<IBBBB")

#: Set_Input_Pos feed-forward factor and the largest magnitude an int16 carries with it
FF_SCALE = 0.001
FF_LIMIT = 32767 * FF_SCALE


def arbitration_id(node_id: int, cmd_id: int) -> int:
    """``node_id << 5 | cmd_id`` (ValueError for a node or command id out of range)."""
    if not 0 <= node_id <= 0x3F:
        raise ValueError(f"ODrive node id must be 0..63, got {node_id!r}")
    if not 0 <= cmd_id <= 0x1F:
        raise ValueError(f"CAN Simple command id must be 0..31, got {cmd_id!r}")
    return (node_id << 5) | cmd_id


def split_id(arbitration_id_: int) -> Tuple[int, int]:
    """``(node_id, cmd_id)`` of an 11-bit CAN Simple id."""
    return (arbitration_id_ >> 5) & 0x3F, arbitration_id_ & 0x1F


def is_get_request(version: str, cmd_id: int, dlc: int, is_remote: bool) -> bool:
    """True when the firmware answers this frame: a "get" command sent as RTR or with DLC 0."""
    return cmd_id in GET_COMMANDS[version] and (is_remote or dlc == 0)


def _need(data: bytes, n: int, what: str) -> bytes:
    if len(data) < n:
        raise OdriveFrameError(f"{what} needs {n} bytes, got {len(data)}")
    return bytes(data)


def pack_set_axis_state(state: int) -> bytes:
    """Set_Axis_State (u32, DLC 4 as in ODrive's examples)."""
    return _U32.pack(state)


def unpack_set_axis_state(data: bytes) -> int:
    return _U32.unpack_from(_need(data, 4, "Set_Axis_State"))[0]


def pack_set_controller_mode(control_mode: int, input_mode: int) -> bytes:
    """Set_Controller_Mode: control mode, input mode (u32 each)."""
    return _II.pack(control_mode, input_mode)


def unpack_set_controller_mode(data: bytes) -> Tuple[int, int]:
    return _II.unpack_from(_need(data, 8, "Set_Controller_Mode"))


def ff_to_int16(value: float, scale: float = FF_SCALE) -> int:
    """A feed-forward as the int16 of Set_Input_Pos: rounded to ``scale``, saturated at the int16
    limits (never wrapped); NaN sends 0 (no feed-forward)."""
    if value != value:
        return 0
    x = value / scale
    if x >= 32767.0:
        return 32767
    if x <= -32768.0:
        return -32768
    return int(round(x))


def pack_set_input_pos(position: float, vel_ff: float = 0.0, torque_ff: float = 0.0) -> bytes:
    """Set_Input_Pos: position (turn), velocity feed-forward (turn/s) and torque feed-forward (N·m),
    the feed-forwards saturated at +-32.767 (:func:`ff_to_int16`)."""
    return _FHH.pack(position, ff_to_int16(vel_ff), ff_to_int16(torque_ff))


def unpack_set_input_pos(data: bytes) -> Tuple[float, float, float]:
    p, v, t = _FHH.unpack_from(_need(data, 8, "Set_Input_Pos"))
    return p, v * FF_SCALE, t * FF_SCALE


def pack_set_input_vel(velocity: float, torque_ff: float = 0.0) -> bytes:
    """Set_Input_Vel: velocity (turn/s), torque feed-forward (N·m)."""
    return _FF.pack(velocity, torque_ff)


def unpack_set_input_vel(data: bytes) -> Tuple[float, float]:
    return _FF.unpack_from(_need(data, 8, "Set_Input_Vel"))


def pack_set_input_torque(torque: float) -> bytes:
    """Set_Input_Torque (N·m at the motor)."""
    return _F.pack(torque)


def unpack_set_input_torque(data: bytes) -> float:
    return _F.unpack_from(_need(data, 4, "Set_Input_Torque"))[0]


def pack_set_limits(vel_limit: float, current_limit: float) -> bytes:
    """Set_Limits: velocity limit (turn/s), current limit (A)."""
    return _FF.pack(vel_limit, current_limit)


def unpack_set_limits(data: bytes) -> Tuple[float, float]:
    return _FF.unpack_from(_need(data, 8, "Set_Limits"))


def pack_set_pos_gain(pos_gain: float) -> bytes:
    """Set_Pos_Gain ((turn/s)/turn)."""
    return _F.pack(pos_gain)


def pack_set_vel_gains(vel_gain: float, vel_integrator_gain: float) -> bytes:
    """Set_Vel_Gains (N·m/(turn/s), N·m/turn)."""
    return _FF.pack(vel_gain, vel_integrator_gain)


def pack_estop() -> bytes:
    """Estop: DLC 0."""
    return b""


def pack_clear_errors(version: str, identify: bool = False) -> bytes:
    """Clear_Errors: DLC 0 on 0.5; DLC 1 (u8 identify: blink the LED) on 0.6."""
    _check_version(version)
    return b"" if version == V05 else bytes((1 if identify else 0,))


def pack_set_linear_count(counts: int) -> bytes:
    """0.5 Set_Linear_Count (i32 encoder counts): set the position estimate (the zero)."""
    return _I32.pack(counts)


def unpack_set_linear_count(data: bytes) -> int:
    return _I32.unpack_from(_need(data, 4, "Set_Linear_Count"))[0]


def pack_set_absolute_position(turns: float) -> bytes:
    """0.6 Set_Absolute_Position (f32 turn): set the position estimate (the zero)."""
    return _F.pack(turns)


def unpack_float(data: bytes, what: str = "float message") -> float:
    """The f32 of a one-float message (Set_Absolute_Position, Set_Pos_Gain, ...)."""
    return _F.unpack_from(_need(data, 4, what))[0]


class Heartbeat(NamedTuple):
    """A decoded heartbeat.  ``procedure_result`` only on 0.6; the three error flags only on 0.5."""

    axis_error: int
    axis_state: int
    trajectory_done: bool
    procedure_result: Optional[int] = None
    motor_error_flag: Optional[bool] = None
    encoder_error_flag: Optional[bool] = None
    controller_error_flag: Optional[bool] = None


def pack_heartbeat(version: str, axis_error: int, axis_state: int, trajectory_done: bool = True,
                   procedure_result: int = PROCEDURE_RESULT_SUCCESS, motor_error_flag: bool = False,
                   encoder_error_flag: bool = False, controller_error_flag: bool = False) -> bytes:
    """Encode a heartbeat as the firmware line does (DLC 8)."""
    _check_version(version)
    if version == V05:
        return _HB.pack(axis_error, axis_state, int(motor_error_flag), int(encoder_error_flag),
                        int(controller_error_flag) | (0x80 if trajectory_done else 0))
    return _HB.pack(axis_error, axis_state, procedure_result, 1 if trajectory_done else 0, 0)


def unpack_heartbeat(version: str, data: bytes) -> Heartbeat:
    """Decode a heartbeat (0.5 needs 8 bytes, 0.6 at least 7)."""
    _check_version(version)
    if version == V05:
        d = _need(data, 8, "0.5 heartbeat")
        err, state, motor, enc, ctrl = _HB.unpack_from(d)
        return Heartbeat(err, state, bool(ctrl & 0x80), None, bool(motor & 1), bool(enc & 1), bool(ctrl & 1))
    d = _need(data, 7, "0.6 heartbeat")
    err, state, result = struct.unpack_from("<IBB", d)
    return Heartbeat(err, state, bool(d[6] & 1), result)


def pack_encoder_estimates(position: float, velocity: float) -> bytes:
    """Get_Encoder_Estimates reply: position (turn), velocity (turn/s)."""
    return _FF.pack(position, velocity)


def unpack_encoder_estimates(data: bytes) -> Tuple[float, float]:
    return _FF.unpack_from(_need(data, 8, "Get_Encoder_Estimates"))


def pack_float_pair(a: float, b: float) -> bytes:
    """The two-float replies: Get_Iq (setpoint, measured A), Get_Bus_Voltage_Current (V, A),
    0.6 Get_Temperature (FET, motor deg C), 0.6 Get_Torques (target, estimate N·m)."""
    return _FF.pack(a, b)


def unpack_float_pair(data: bytes) -> Tuple[float, float]:
    return _FF.unpack_from(_need(data, 8, "two-float reply"))


def pack_get_error(active_errors: int, disarm_reason: int) -> bytes:
    """0.6 Get_Error reply: u32 active errors, u32 disarm reason (ODriveError bits)."""
    return _II.pack(active_errors, disarm_reason)


def unpack_get_error(data: bytes) -> Tuple[int, int]:
    return _II.unpack_from(_need(data, 8, "Get_Error"))


def pack_motor_error(motor_error: int) -> bytes:
    """0.5 Get_Motor_Error reply: u64."""
    return _U64.pack(motor_error)


def unpack_motor_error(data: bytes) -> int:
    return _U64.unpack_from(_need(data, 8, "Get_Motor_Error"))[0]


class StateConfirmation:
    """Tells when heartbeats confirm a requested axis state (the heartbeat has no sequence number).

    Feed every heartbeat of the axis after sending Set_Axis_State; :attr:`confirmed` becomes True when
    ``needed`` consecutive heartbeats show the requested state (and, on 0.6, a procedure result other
    than BUSY, except for CLOSED_LOOP_CONTROL, which firmware 0.6.11 and later report BUSY while it
    lasts), and :attr:`refused` when, on 0.6, a heartbeat after the request reports the procedure
    finished with another result while the state is not the requested one (e.g. DISARMED), or on
    either line an axis error is set while the state is not the requested one.  The caller owns the
    time-out.  Pure state, no clock.
    """

    def __init__(self, version: str, requested_state: int, needed: int = 2) -> None:
        _check_version(version)
        self.version = version
        self.requested_state = requested_state
        self.needed = needed
        self.matches = 0
        self.confirmed = False
        self.refused = False
        #: the last heartbeat fed
        self.last: Optional[Heartbeat] = None

    def feed(self, heartbeat: Heartbeat) -> bool:
        """Account for one heartbeat; True once the state is confirmed."""
        self.last = heartbeat
        busy = heartbeat.procedure_result == PROCEDURE_RESULT_BUSY
        # closed loop is a procedure that runs until disarmed: 0.6.11 and later report it BUSY all along
        settled = not busy or self.requested_state == AXIS_STATE_CLOSED_LOOP_CONTROL
        if heartbeat.axis_state == self.requested_state and settled:
            self.matches += 1
            if self.matches >= self.needed:
                self.confirmed = True
            return self.confirmed
        self.matches = 0
        if heartbeat.axis_state != self.requested_state and not busy:
            if heartbeat.axis_error:
                self.refused = True
            elif heartbeat.procedure_result not in (None, PROCEDURE_RESULT_SUCCESS):
                self.refused = True
        return self.confirmed


# -- units -----------------------------------------------------------------------------------------
class OdriveScale(NamedTuple):
    """Turns at the motor <-> radians at the output, through ``ratio`` motor turns per output turn.

    ``torque`` converts the motor's N·m to the output's (x ratio, losses ignored).
    """

    ratio: float = 1.0

    def to_rad(self, turns: float) -> float:
        return turns * (2.0 * math.pi) / self.ratio

    def to_turns(self, rad: float) -> float:
        return rad * self.ratio / (2.0 * math.pi)

    def torque_to_output(self, motor_torque: float) -> float:
        return motor_torque * self.ratio

    def torque_to_motor(self, output_torque: float) -> float:
        return output_torque / self.ratio


# -- start-up checks --------------------------------------------------------------------------------------
def check_node_id(node_id: int, unit_name: Optional[str] = None, attribute: str = "node_id") -> int:
    """:raises EncodableRangeError: a node id outside 0..63 (11-bit ids)."""
    return int(check_encodable(attribute, node_id, 0, 0x3F, "ODrive CAN Simple (11-bit ids)", unit_name))


def check_feedforward_encodable(attribute: str, value: float, unit_name: Optional[str] = None,
                                units: str = "") -> float:
    """A feed-forward magnitude (turn/s or N·m at the motor) Set_Input_Pos must carry, e.g. the
    largest velocity of a joint in turn/s: beyond +-32.767 the frame would saturate.

    :raises EncodableRangeError: naming the attribute, the value and the range.
    """
    return check_encodable(attribute, value, -FF_LIMIT, FF_LIMIT, "ODrive Set_Input_Pos (int16 x 0.001)",
                           unit_name, units)


def traffic(heartbeat_rate: float = 0.1, encoder_rate: float = 0.01, command_dlc: int = 8,
            extra_cyclic: Tuple[float, ...] = ()) -> Traffic:
    """One command per control cycle (Set_Input_Pos/Vel: 8 bytes, Set_Input_Torque: 4) and the
    axis's cyclic heartbeat and encoder estimates (periods in s, 0 = off) plus any ``extra_cyclic``
    8-byte messages (their periods), whatever the control rate."""
    per_second = sum(frame_bits(8) / period for period in (heartbeat_rate, encoder_rate) + tuple(extra_cyclic)
                     if period > 0.0)
    return Traffic(((command_dlc, False),), per_second)


def pack_set_axis_node_id(node_id: int) -> bytes:
    """Set_Axis_Node_ID (0.5, 0x06): u32 node id (0..0x3F), DLC 4."""
    if not 0 <= node_id <= 0x3F:
        raise ValueError(f"ODrive node id must be 0..63, got {node_id!r}")
    return struct.pack("<I", node_id)


def unpack_set_axis_node_id(data: bytes) -> int:
    if len(data) < 4:
        raise OdriveFrameError(f"Set_Axis_Node_ID needs 4 bytes, got {len(data)}")
    return int(struct.unpack_from("<I", bytes(data))[0])
