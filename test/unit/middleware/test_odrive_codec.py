"""Byte-exact tests of the ODrive CAN Simple codec (rospy_control.devices.odrive.codec), both
firmware lines, and conversations with the simulated axis (rospy_control.simulator.odrive).

Vectors O1-O7 are those of the protocol facts file (section 8, ODrive)."""
from __future__ import annotations

import math
import struct

import can
import pytest

from rospy_control.devices.odrive import codec as od
from rospy_control.devices.encodable import EncodableRangeError
from rospy_control.simulator.device import PhysicalState
from rospy_control.simulator.odrive import SimulatedOdrive

TAU = 2 * math.pi


# -- vectors ---------------------------------------------------------------------------------------------
def test_o1_set_input_vel():
    assert od.arbitration_id(1, od.CMD_SET_INPUT_VEL) == 0x02D
    assert od.pack_set_input_vel(-2.5, 0.25) == bytes.fromhex("000020C00000803E")


def test_o2_set_axis_state_closed_loop():
    assert od.arbitration_id(3, od.CMD_SET_AXIS_STATE) == 0x067
    assert od.pack_set_axis_state(od.AXIS_STATE_CLOSED_LOOP_CONTROL) == bytes.fromhex("08000000")


def test_o3_set_controller_mode_position_passthrough():
    assert od.arbitration_id(3, od.CMD_SET_CONTROLLER_MODE) == 0x06B
    data = od.pack_set_controller_mode(od.CONTROL_MODE_POSITION, od.INPUT_MODE_PASSTHROUGH)
    assert data == bytes.fromhex("0300000001000000")


def test_o4_set_input_pos_with_feed_forwards():
    assert od.arbitration_id(3, od.CMD_SET_INPUT_POS) == 0x06C
    assert od.pack_set_input_pos(1.5, 2.0, -0.5) == bytes.fromhex("0000C03FD0070CFE")


def test_o5_encoder_estimates():
    assert od.arbitration_id(3, od.CMD_GET_ENCODER_ESTIMATES) == 0x069
    assert od.pack_encoder_estimates(0.25, -1.0) == bytes.fromhex("0000803E000080BF")
    assert od.unpack_encoder_estimates(bytes.fromhex("0000803E000080BF")) == (0.25, -1.0)


def test_o6_heartbeat_per_version():
    assert od.arbitration_id(3, od.CMD_HEARTBEAT) == 0x061
    assert od.pack_heartbeat(od.V06, 0, 8, True) == bytes.fromhex("0000000008000100")
    assert od.pack_heartbeat(od.V05, 0, 8, True) == bytes.fromhex("0000000008000080")
    hb = od.unpack_heartbeat(od.V05, bytes.fromhex("0000000008000080"))
    assert (hb.axis_error, hb.axis_state, hb.trajectory_done, hb.procedure_result) == (0, 8, True, None)


def test_o7_heartbeat_decodes_by_version():
    data = bytes.fromhex("0100008008000100")
    assert od.split_id(0x021) == (1, od.CMD_HEARTBEAT)
    hb6 = od.unpack_heartbeat(od.V06, data)
    assert (hb6.axis_error, hb6.axis_state) == (0x80000001, 8)
    assert (hb6.procedure_result, hb6.trajectory_done) == (0, True)
    hb5 = od.unpack_heartbeat(od.V05, data)
    assert (hb5.axis_error, hb5.axis_state) == (0x80000001, 8)
    assert (hb5.motor_error_flag, hb5.encoder_error_flag, hb5.controller_error_flag) == (False, True, False)
    assert hb5.trajectory_done is False


# -- codec -------------------------------------------------------------------------------------------------
def test_feed_forwards_saturate_never_wrap():
    assert od.pack_set_input_pos(0.0, 40.0, -40.0)[4:] == struct.pack("<hh", 32767, -32768)
    assert od.pack_set_input_pos(0.0, 32.7674, 0.0)[4:6] == struct.pack("<h", 32767)
    assert od.pack_set_input_pos(0.0, 1e9, float("inf"))[4:] == struct.pack("<hh", 32767, 32767)
    assert od.pack_set_input_pos(0.0, float("nan"), 0.0)[4:6] == b"\x00\x00"
    assert od.ff_to_int16(-0.0004) == 0 and od.ff_to_int16(0.0006) == 1


def test_set_input_pos_round_trip():
    p, v, t = od.unpack_set_input_pos(od.pack_set_input_pos(-3.25, -1.234, 0.75))
    assert (p, v, t) == pytest.approx((-3.25, -1.234, 0.75), abs=1e-9)


def test_clear_errors_and_estop_lengths_per_version():
    assert od.pack_clear_errors(od.V05) == b""
    assert od.pack_clear_errors(od.V06) == b"\x00"
    assert od.pack_clear_errors(od.V06, identify=True) == b"\x01"
    assert od.pack_estop() == b""
    assert od.arbitration_id(3, od.CMD_CLEAR_ERRORS) == 0x078 and od.arbitration_id(3, od.CMD_ESTOP) == 0x062


def test_command_tables_differ_where_the_lines_differ():
    t5, t6 = od.command_ids(od.V05), od.command_ids(od.V06)
    assert t5["Get_Motor_Error"] == 0x03 and t6["Get_Error"] == 0x03
    assert t5["Set_Linear_Count"] == 0x19 and t6["Set_Absolute_Position"] == 0x19
    assert t6["Get_Torques"] == 0x1C and "Get_Torques" not in t5
    for name in ("Set_Axis_State", "Get_Encoder_Estimates", "Set_Controller_Mode", "Set_Input_Pos",
                 "Set_Input_Vel", "Set_Input_Torque", "Get_Bus_Voltage_Current", "Clear_Errors"):
        assert t5[name] == t6[name]


def test_axis_errors_named_per_version():
    assert od.axis_error_names(od.V06, 0x01000000) == ["WATCHDOG_TIMER_EXPIRED"]
    assert od.axis_error_names(od.V05, 0x00000800) == ["WATCHDOG_TIMER_EXPIRED"]
    assert od.axis_error_names(od.V05, 0x00040000 | 0x4000) == ["ESTOP_REQUESTED", "OVER_TEMP"]
    assert od.axis_error_text(od.V06, 0x2000 | 0x02000000) == "MOTOR_OVER_TEMP | ESTOP_REQUESTED"
    assert od.axis_error_text(od.V06, 0) == "NONE"
    assert od.axis_error_names(od.V06, 0x80000000) == ["0x80000000"]
    assert od.axis_error_bit(od.V06, "SPINOUT_DETECTED") == 0x04000000
    with pytest.raises(ValueError, match="unknown ODrive 0.5 axis error 'MOTOR_OVER_TEMP'"):
        od.axis_error_bit(od.V05, "MOTOR_OVER_TEMP")


def test_parse_version():
    assert od.parse_version("0.5.6") == od.V05 and od.parse_version("v0.6.10") == od.V06
    assert od.parse_version("0.6") == od.V06
    with pytest.raises(ValueError, match="'0.4.12' is not supported"):
        od.parse_version("0.4.12")


def test_ids_out_of_range():
    with pytest.raises(ValueError, match="node id must be 0..63, got 64"):
        od.arbitration_id(64, 1)
    with pytest.raises(EncodableRangeError, match="unit 'wheel': node_id=70"):
        od.check_node_id(70, "wheel")


def test_feedforward_start_up_check():
    od.check_feedforward_encodable("max_velocity", 32.0)
    with pytest.raises(EncodableRangeError, match="max_velocity=40.0 turn/s is outside what ODrive"):
        od.check_feedforward_encodable("max_velocity", 40.0, units="turn/s")


def test_other_frames():
    assert od.pack_set_input_torque(1.5) == struct.pack("<f", 1.5)
    assert od.pack_set_limits(10.0, 20.0) == struct.pack("<ff", 10.0, 20.0)
    assert od.pack_set_linear_count(-5) == struct.pack("<i", -5)
    assert od.pack_set_absolute_position(0.5) == struct.pack("<f", 0.5)
    assert od.unpack_get_error(od.pack_get_error(0x2000, 0x2000)) == (0x2000, 0x2000)
    with pytest.raises(od.OdriveFrameError, match="Set_Input_Pos needs 8 bytes, got 4"):
        od.unpack_set_input_pos(bytes(4))
    with pytest.raises(od.OdriveFrameError, match="0.5 heartbeat needs 8 bytes"):
        od.unpack_heartbeat(od.V05, bytes(7))
    assert od.unpack_heartbeat(od.V06, bytes.fromhex("00000000080001")).trajectory_done


def test_scale_turns_and_radians():
    s = od.OdriveScale(ratio=9.0)
    assert s.to_rad(9.0) == pytest.approx(TAU)
    assert s.to_turns(math.pi) == pytest.approx(4.5)
    assert s.torque_to_output(2.0) == 18.0 and s.torque_to_motor(18.0) == 2.0


# -- conversations with the simulated axis -----------------------------------------------------------------
def _msg(node: int, cmd: int, data: bytes = b"", remote: bool = False) -> can.Message:
    return can.Message(arbitration_id=od.arbitration_id(node, cmd), is_extended_id=False, data=data,
                       is_remote_frame=remote, dlc=8 if remote else len(data))


S = PhysicalState(position=math.pi, velocity=TAU, torque=0.5, temperature=40.0, mos_temperature=35.0)


@pytest.fixture(params=[od.V05, od.V06])
def axis(request):
    return SimulatedOdrive("wheel", node_id=3, version=request.param)


def _heartbeat(axis, now):
    frames = axis.tick(S, now)
    hb = [f for f in frames if f.arbitration_id == 0x061]
    assert len(hb) == 1
    return od.unpack_heartbeat(axis.version, hb[0].data)


def test_sim_enable_command_and_cyclic_feedback(axis):
    axis.handle_frame(_msg(3, od.CMD_SET_CONTROLLER_MODE, od.pack_set_controller_mode(3, 1)), S, 0.0)
    assert axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.0) == []
    frames = axis.tick(S, 0.0)
    assert [f.arbitration_id for f in frames] == [0x061, 0x069]
    hb = od.unpack_heartbeat(axis.version, frames[0].data)
    assert (hb.axis_state, hb.axis_error, hb.trajectory_done) == (8, 0, True)
    assert od.unpack_encoder_estimates(frames[1].data) == pytest.approx((0.5, 1.0))
    axis.handle_frame(_msg(3, od.CMD_SET_INPUT_POS, od.pack_set_input_pos(0.75, 0.5, 0.2)), S, 0.001)
    imp = axis.impedance(math.pi, 0.0)
    # vel_cmd = 20 (0.75 - 0.5) turn/s + 0.5 turn/s = 5.5 turn/s
    assert imp is not None and imp.v_des == pytest.approx(5.5 * TAU) and imp.t_ff == pytest.approx(0.2)
    assert imp.kd == pytest.approx(0.16 / TAU)
    # rates: nothing more within the periods, encoder estimates after 10 ms, heartbeat after 100 ms
    assert axis.tick(S, 0.005) == []
    assert [f.arbitration_id for f in axis.tick(S, 0.0101)] == [0x069]
    assert [f.arbitration_id for f in axis.tick(S, 0.1)] == [0x061, 0x069]


def test_sim_velocity_and_torque_modes(axis):
    axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.0)
    axis.handle_frame(_msg(3, od.CMD_SET_CONTROLLER_MODE, od.pack_set_controller_mode(2, 1)), S, 0.0)
    axis.handle_frame(_msg(3, od.CMD_SET_INPUT_VEL, od.pack_set_input_vel(-1.0, 0.1)), S, 0.0)
    imp = axis.impedance(0.0, 0.0)
    assert imp is not None and imp.v_des == pytest.approx(-TAU) and imp.kp == 0.0
    axis.handle_frame(_msg(3, od.CMD_SET_CONTROLLER_MODE, od.pack_set_controller_mode(1, 1)), S, 0.0)
    axis.handle_frame(_msg(3, od.CMD_SET_INPUT_TORQUE, od.pack_set_input_torque(0.3)), S, 0.0)
    imp = axis.impedance(0.0, 0.0)
    assert imp is not None and (imp.kp, imp.kd, imp.t_ff) == (0.0, 0.0, pytest.approx(0.3))


def test_sim_gets_answer_rtr_and_dlc0_only(axis):
    out = axis.handle_frame(_msg(3, od.CMD_GET_ENCODER_ESTIMATES, remote=True), S, 0.0)
    assert len(out) == 1 and out[0].arbitration_id == 0x069
    assert od.unpack_encoder_estimates(out[0].data) == pytest.approx((0.5, 1.0))
    assert len(axis.handle_frame(_msg(3, od.CMD_GET_BUS_VOLTAGE_CURRENT), S, 0.0)) == 1
    assert axis.handle_frame(_msg(3, od.CMD_GET_ENCODER_ESTIMATES, bytes(8)), S, 0.0) == []
    assert axis.handle_frame(_msg(4, od.CMD_GET_ENCODER_ESTIMATES), S, 0.0) == []  # another node
    if axis.version == od.V05:   # Get_Controller_Error: answered to any frame on 0.5.6
        assert len(axis.handle_frame(_msg(3, 0x1D, bytes(8)), S, 0.0)) == 1


def test_sim_estop_and_clear_errors(axis):
    axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.0)
    axis.handle_frame(_msg(3, od.CMD_ESTOP), S, 0.01)
    hb = _heartbeat(axis, 0.02)
    assert hb.axis_state == od.AXIS_STATE_IDLE
    assert od.axis_error_names(axis.version, hb.axis_error) == ["ESTOP_REQUESTED"]
    assert axis.impedance(0.0, 0.0) is None
    axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.03)
    assert not axis.armed   # refused while the error is set
    axis.handle_frame(_msg(3, od.CMD_CLEAR_ERRORS, od.pack_clear_errors(axis.version)), S, 0.04)
    axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.05)
    hb = _heartbeat(axis, 0.2)
    assert (hb.axis_error, hb.axis_state) == (0, 8)


def test_sim_injected_error_lasts_through_clear_errors(axis):
    name = "OVER_TEMP" if axis.version == od.V05 else "MOTOR_OVER_TEMP"
    axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.0)
    axis.set_fault(name)
    hb = _heartbeat(axis, 0.01)
    assert od.axis_error_names(axis.version, hb.axis_error) == [name] and hb.axis_state == 1
    axis.handle_frame(_msg(3, od.CMD_CLEAR_ERRORS, od.pack_clear_errors(axis.version)), S, 0.02)
    assert od.axis_error_names(axis.version, axis.axis_error) == [name]
    axis.clear_fault()
    axis.handle_frame(_msg(3, od.CMD_CLEAR_ERRORS, od.pack_clear_errors(axis.version)), S, 0.03)
    assert axis.axis_error == 0


def test_sim_v05_heartbeat_flags_follow_sub_errors():
    axis = SimulatedOdrive("a", node_id=1, version="0.5.6")
    axis.set_fault("ENCODER_FAILED")
    hb = od.unpack_heartbeat(od.V05, axis.tick(S, 0.0)[0].data)
    assert hb.encoder_error_flag and not hb.motor_error_flag


def test_sim_watchdog_expires_and_any_frame_feeds_it(axis):
    axis.watchdog_timeout = 0.1
    axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.0)
    axis.handle_frame(_msg(3, od.CMD_SET_INPUT_POS, od.pack_set_input_pos(0.5)), S, 0.08)
    axis.handle_frame(_msg(3, od.CMD_GET_ENCODER_ESTIMATES, remote=True), S, 0.16)
    axis.expire(S, 0.25)
    assert axis.armed
    hb = _heartbeat(axis, 0.3)
    assert od.axis_error_names(axis.version, hb.axis_error) == ["WATCHDOG_TIMER_EXPIRED"]
    assert hb.axis_state == od.AXIS_STATE_IDLE and axis.watchdog_expiries == 1


def test_sim_state_change_takes_time_with_busy_result():
    axis = SimulatedOdrive("a", node_id=2, version=od.V06, state_delay=0.05)
    axis.handle_frame(_msg(2, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.0)
    hb = od.unpack_heartbeat(od.V06, axis.tick(S, 0.01)[0].data)
    assert (hb.axis_state, hb.procedure_result) == (od.AXIS_STATE_IDLE, od.PROCEDURE_RESULT_BUSY)
    hb = od.unpack_heartbeat(od.V06, axis.tick(S, 0.2)[0].data)
    # firmware 0.6.11 and later: closed loop runs as a procedure, BUSY until the axis is disarmed
    assert (hb.axis_state, hb.procedure_result) == (8, od.PROCEDURE_RESULT_BUSY)
    axis.set_fault("INVERTER_OVER_TEMP")
    hb = od.unpack_heartbeat(od.V06, axis.tick(S, 0.4)[0].data)
    assert (hb.axis_state, hb.procedure_result) == (od.AXIS_STATE_IDLE, od.PROCEDURE_RESULT_DISARMED)


def test_sim_zero_per_version():
    a5 = SimulatedOdrive("a", node_id=1, version=od.V05, cpr=1000)
    a5.handle_frame(_msg(1, 0x19, od.pack_set_linear_count(250)), S, 0.0)
    assert od.unpack_encoder_estimates(a5.encoder_estimates(S))[0] == pytest.approx(0.25)
    a6 = SimulatedOdrive("b", node_id=1, version=od.V06)
    a6.handle_frame(_msg(1, 0x19, od.pack_set_absolute_position(-1.0)), S, 0.0)
    assert od.unpack_encoder_estimates(a6.encoder_estimates(S))[0] == pytest.approx(-1.0)


def test_sim_v06_get_error_and_temperature():
    axis = SimulatedOdrive("a", node_id=5, version=od.V06)
    axis.set_fault("INVERTER_OVER_TEMP")
    out = axis.handle_frame(_msg(5, 0x03), S, 0.0)
    assert od.unpack_get_error(out[0].data)[0] == 0x4000
    out = axis.handle_frame(_msg(5, 0x15), S, 0.0)
    assert od.unpack_float_pair(out[0].data) == (35.0, 40.0)


def test_sim_silent_sends_nothing(axis):
    axis.set_fault("silent")
    assert axis.tick(S, 0.0) == []
    assert axis.handle_frame(_msg(3, od.CMD_GET_ENCODER_ESTIMATES), S, 0.0) == []
    axis.clear_fault()
    assert len(axis.tick(S, 1.0)) == 2


def test_state_confirmation_needs_two_consecutive_heartbeats():
    c = od.StateConfirmation(od.V06, od.AXIS_STATE_CLOSED_LOOP_CONTROL)
    hb = od.Heartbeat
    assert not c.feed(hb(0, 1, True, od.PROCEDURE_RESULT_SUCCESS))       # the old state, sent before
    assert not c.feed(hb(0, 8, True, od.PROCEDURE_RESULT_SUCCESS))
    assert c.feed(hb(0, 8, True, od.PROCEDURE_RESULT_SUCCESS)) and not c.refused
    # firmware 0.6.11 and later report closed loop BUSY for as long as it lasts
    b = od.StateConfirmation(od.V06, od.AXIS_STATE_CLOSED_LOOP_CONTROL)
    assert not b.feed(hb(0, 8, True, od.PROCEDURE_RESULT_BUSY))
    assert b.feed(hb(0, 8, True, od.PROCEDURE_RESULT_BUSY)) and not b.refused
    # a calibration state still waits for its procedure to finish
    cal = od.StateConfirmation(od.V06, 3)
    cal.feed(hb(0, 3, True, od.PROCEDURE_RESULT_BUSY))
    assert not cal.feed(hb(0, 3, True, od.PROCEDURE_RESULT_BUSY))
    r = od.StateConfirmation(od.V06, 8)
    r.feed(hb(0, 1, True, 3))   # DISARMED
    assert r.refused and not r.confirmed
    e = od.StateConfirmation(od.V05, 8)
    e.feed(hb(0x800, 1, True))
    assert e.refused
    ok = od.StateConfirmation(od.V05, 8)
    ok.feed(hb(0, 8, True))
    ok.feed(hb(0, 1, True))   # not consecutive
    ok.feed(hb(0, 8, True))
    assert not ok.confirmed and not ok.refused
    assert ok.feed(hb(0, 8, True))


def test_state_confirmation_against_the_simulated_axis():
    axis = SimulatedOdrive("a", node_id=3, version=od.V06, state_delay=0.15)
    c = od.StateConfirmation(od.V06, 8)
    axis.handle_frame(_msg(3, od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(8)), S, 0.0)
    t = 0.0
    while not c.confirmed and t < 1.0:
        for f in axis.tick(S, t):
            if f.arbitration_id == 0x061:
                c.feed(od.unpack_heartbeat(od.V06, f.data))
        t += 0.01
    assert c.confirmed and t > 0.15
