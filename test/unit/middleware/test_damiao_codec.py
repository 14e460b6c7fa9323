"""Byte-exact tests of the DaMiao codec (rospy_control.devices.damiao.codec) and conversations
with the simulated DaMiao firmware (rospy_control.simulator.damiao).

Vectors D1-D5 are those of the protocol facts file (section 8, DaMiao)."""
from __future__ import annotations

import math
import struct

import can
import pytest

from rospy_control.devices.damiao import codec as dm
from rospy_control.devices.damiao.codec import DamiaoRanges
from rospy_control.devices.encodable import EncodableRangeError
from rospy_control.simulator.damiao import SimulatedDamiao
from rospy_control.simulator.device import PhysicalState

DM4310 = dm.MODEL_RANGES["DM4310"]          # 12.5 rad, 30 rad/s, 10 N m
DM4340 = DamiaoRanges(12.5, 10.0, 28.0)      # the VMAX the D1 capture decodes with


# -- vectors -------------------------------------------------------------------------------------------------
def test_d1_enable_frame_and_its_reply():
    assert dm.ENABLE == bytes.fromhex("FFFFFFFFFFFFFFFC")
    r = dm.unpack_reply(bytes.fromhex("1183277FF7FF0000"), DM4340)
    assert (r.state, r.motor_id, r.enabled, r.fault) == (1, 1, True, None)
    assert r.position == pytest.approx(0.3080, abs=5e-5)
    assert r.velocity == pytest.approx(-0.0024, abs=5e-5)
    assert r.torque == pytest.approx(-0.0068, abs=5e-5)
    assert (r.mos_temperature, r.rotor_temperature) == (0.0, 0.0)


def test_d2_mit_all_zero_truncates():
    assert dm.pack_mit(0, 0, 0, 0, 0, DM4310) == bytes.fromhex("7FFF7FF0000007FF")


def test_d3_mit_command():
    assert dm.pack_mit(1.0, 0.0, 20.0, 0.5, 0.0, DM4310) == bytes.fromhex("8A3C7FF0A31997FF")
    assert dm.command_id(1, dm.MODE_MIT) == 0x001


def test_d4_position_velocity_and_velocity_frames():
    assert dm.command_id(1, dm.MODE_POS_VEL) == 0x101
    assert dm.pack_pos_vel(1.0, 2.0) == bytes.fromhex("0000803F00000040")
    assert dm.command_id(1, dm.MODE_VEL) == 0x201
    assert dm.pack_vel(3.0) == bytes.fromhex("00004040")
    assert dm.pack_vel(3.0, dlc=8) == bytes.fromhex("0000404000000000")
    assert dm.command_id(1, dm.MODE_FORCE_POS) == 0x301


def test_d5_register_read_and_write():
    assert dm.pack_register_read(1, dm.RID_MST_ID) == bytes.fromhex("0100330700000000")
    assert dm.pack_register_write(1, dm.RID_CTRL_MODE, dm.MODE_POS_VEL) == bytes.fromhex("0100550A02000000")
    assert dm.REGISTER_ID == 0x7FF


def test_special_frames():
    assert dm.DISABLE == bytes.fromhex("FFFFFFFFFFFFFFFD")
    assert dm.SET_ZERO == bytes.fromhex("FFFFFFFFFFFFFFFE")
    assert dm.CLEAR_ERROR == bytes.fromhex("FFFFFFFFFFFFFFFB")


# -- codec ---------------------------------------------------------------------------------------------------
def test_reply_round_trip_and_state_nibble():
    data = dm.pack_reply(0x13, 0xB, 1.234, -3.2, 4.5, DM4310, mos_temperature=81, rotor_temperature=55)
    assert data[0] == 0xB3  # state << 4 | (slave id & 0xF)
    r = dm.unpack_reply(data, DM4310)
    assert (r.motor_id, r.state, r.fault, r.enabled) == (3, 0xB, "MOS over-temperature", False)
    assert r.position == pytest.approx(1.234, abs=25 / 65535)
    assert r.velocity == pytest.approx(-3.2, abs=60 / 4095)
    assert r.torque == pytest.approx(4.5, abs=20 / 4095)
    assert (r.mos_temperature, r.rotor_temperature) == (81.0, 55.0)


@pytest.mark.parametrize("code,name", [(8, "over-voltage"), (9, "under-voltage"), (0xA, "over-current"),
                                       (0xB, "MOS over-temperature"), (0xC, "coil over-temperature"),
                                       (0xD, "communication loss"), (0xE, "overload")])
def test_error_states_named_as_in_the_manual(code, name):
    assert dm.fault_name(code) == name
    assert dm.fault_code(name) == code


def test_disabled_enabled_are_not_faults_and_unknown_codes_are_named():
    assert dm.fault_name(0) is None and dm.fault_name(1) is None
    assert dm.fault_name(5) == "sensor error"
    assert dm.fault_name(0xF) == "unknown state 0xF"
    with pytest.raises(ValueError, match="unknown DaMiao fault 'hot'"):
        dm.fault_code("hot")


def test_reply_of_wrong_length_raises():
    with pytest.raises(dm.DamiaoFrameError, match="8 bytes, got 6"):
        dm.unpack_reply(bytes(6), DM4310)


def test_mit_round_trip_and_clamping():
    p, v, kp, kd, t = dm.unpack_mit(dm.pack_mit(-2.0, 5.0, 100.0, 2.0, -3.0, DM4310), DM4310)
    assert (p, v, kp, kd, t) == pytest.approx((-2.0, 5.0, 100.0, 2.0, -3.0), abs=0.13)
    # the frame clamps (the start-up check is where a configured gain out of range is an error)
    assert dm.pack_mit(0, 0, 0, 9.0, 0, DM4310) == dm.pack_mit(0, 0, 0, 5.0, 0, DM4310)


def test_force_position_frame():
    data = dm.pack_force_pos(1.0, 2.5, 0.3)
    assert data == struct.pack("<fHH", 1.0, 250, 3000)
    assert dm.unpack_force_pos(data) == pytest.approx((1.0, 2.5, 0.3))
    # clamped in the frame, an error at start-up
    assert dm.pack_force_pos(1.0, 250.0, 1.5) == struct.pack("<fHH", 1.0, 10000, 10000)
    assert dm.pack_force_pos(1.0, float("nan"), -1.0) == struct.pack("<fHH", 1.0, 0, 0)
    with pytest.raises(EncodableRangeError, match="unit 'grip': current_ratio=1.5 is outside"):
        dm.check_force_pos_encodable(2.5, 1.5, "grip")
    with pytest.raises(EncodableRangeError, match="velocity=250.0 rad/s"):
        dm.check_force_pos_encodable(250.0, 0.5)


def test_reply_key_demultiplexes_a_shared_master_id():
    assert dm.reply_key(dm.pack_reply(0x03, 1, 0, 0, 0, DM4310)) == 3
    assert dm.reply_key(dm.pack_reply(0x13, 0xB, 0, 0, 0, DM4310)) == 3
    assert dm.reply_key(dm.pack_register_reply(0x05, dm.REG_READ, dm.RID_PMAX, 12.5)) == 5
    assert dm.reply_key(b"") is None


def test_split_command_id():
    assert dm.split_command_id(0x205) == (dm.MODE_VEL, 5)
    assert dm.split_command_id(0x07) == (dm.MODE_MIT, 7)
    with pytest.raises(dm.DamiaoFrameError):
        dm.split_command_id(0x405)


def test_register_values_float_or_uint32_by_register():
    assert dm.pack_register_write(2, dm.RID_PMAX, 12.5) == bytes((2, 0, 0x55, 21)) + struct.pack("<f", 12.5)
    assert dm.pack_register_write(0x102, dm.RID_TIMEOUT, 20000) == bytes.fromhex("020155092" "04E0000")
    with pytest.raises(ValueError, match="TIMEOUT takes a uint32"):
        dm.pack_register_write(1, dm.RID_TIMEOUT, 1.5)
    assert dm.pack_register_save(3) == bytes.fromhex("0300AA0000000000")
    assert dm.pack_refresh(3) == bytes.fromhex("0300CC0000000000")


def test_parse_register_reply_matches_the_request_only():
    reply = dm.pack_register_reply(1, dm.REG_READ, dm.RID_VMAX, 30.0)
    r = dm.parse_register_reply(reply, 1, dm.RID_VMAX)
    assert r is not None and r.value == 30.0 and r.rid == 22 and r.cmd == 0x33
    assert dm.parse_register_reply(reply, 2) is None
    assert dm.parse_register_reply(reply, 1, dm.RID_PMAX) is None
    assert dm.parse_register_reply(reply, 1, cmd=dm.REG_WRITE) is None
    feedback = dm.pack_reply(1, 1, 0.0, 0.0, 0.0, DM4310)
    assert dm.parse_register_reply(feedback, 1) is None


def test_timeout_register_in_50us_units():
    assert dm.timeout_to_register(0.1) == 2000
    assert dm.timeout_to_register(0.0) == 0
    assert dm.register_to_timeout(2000) == pytest.approx(0.1)
    with pytest.raises(EncodableRangeError, match="firmware_timeout=-1.0 s is outside"):
        dm.timeout_to_register(-1.0)
    with pytest.raises(EncodableRangeError):
        dm.check_timeout_encodable(1e6)


# -- start-up checks ------------------------------------------------------------------------------------
def test_gain_outside_mit_range_is_an_error_naming_unit_attribute_value_and_range():
    dm.check_mit_gains_encodable(500.0, 5.0)
    with pytest.raises(EncodableRangeError) as info:
        dm.check_mit_gains_encodable(40.0, 9.0, unit_name="shoulder_lift_motor")
    msg = str(info.value)
    assert "shoulder_lift_motor" in msg and "position_kd=9.0" in msg and "0.0 .. 5.0" in msg
    e = info.value
    assert (e.attribute, e.value, e.low, e.high, e.unit_name) == ("position_kd", 9.0, 0.0, 5.0,
                                                                  "shoulder_lift_motor")
    with pytest.raises(EncodableRangeError, match="position_kp=600.0 N m/rad is outside"):
        dm.check_mit_gains_encodable(600.0, 1.0)
    with pytest.raises(EncodableRangeError, match="position_kp=nan"):
        dm.check_mit_gains_encodable(math.nan, 1.0)


def test_ranges_must_be_positive():
    dm.check_ranges_encodable(DM4310)
    with pytest.raises(EncodableRangeError, match="unit 'm1': VMAX=0.0 rad/s must be a positive"):
        dm.check_ranges_encodable(DamiaoRanges(12.5, 0.0, 10.0), "m1")


def test_ranges_mismatch_names_motor_register_and_both_values():
    dm.check_ranges_match("m1", DM4310, {21: 12.5, 22: 30.0, 23: 10.0})
    with pytest.raises(dm.RangesMismatchError) as info:
        dm.check_ranges_match("elbow", DamiaoRanges(12.5, 10.0, 28.0), {21: 12.5, 22: 8.0, 23: 28.0})
    msg = str(info.value)
    assert "motor 'elbow'" in msg and "VMAX" in msg and "8.0" in msg and "10.0" in msg
    assert info.value.mismatches == [("VMAX", 10.0, 8.0)]
    with pytest.raises(dm.RangesMismatchError, match="TMAX were not read"):
        dm.check_ranges_match("elbow", DM4310, {21: 12.5, 22: 30.0})


# -- conversations with the simulated firmware -------------------------------------------------------------
def _msg(aid: int, data: bytes) -> can.Message:
    return can.Message(arbitration_id=aid, is_extended_id=False, data=data)


@pytest.fixture
def motor():
    return SimulatedDamiao("j1", slave_id=0x01, master_id=0x11, ranges=DM4340)


S = PhysicalState(position=0.5, velocity=-1.0, torque=2.0, temperature=40.0, mos_temperature=45.0)


def _one(frames):
    assert len(frames) == 1, frames
    return frames[0]


def test_sim_enable_command_reply(motor):
    out = _one(motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0))
    assert out.arbitration_id == 0x11 and not out.is_extended_id
    r = dm.unpack_reply(out.data, DM4340)
    assert (r.state, r.motor_id) == (dm.STATE_ENABLED, 1)
    assert r.position == pytest.approx(0.5, abs=1e-3) and r.torque == pytest.approx(2.0, abs=0.02)
    assert (r.mos_temperature, r.rotor_temperature) == (45.0, 40.0)
    assert motor.impedance(0.5, -1.0) is None  # enabled, but no command yet
    out = _one(motor.handle_frame(_msg(0x01, dm.pack_mit(1.0, 0.0, 20.0, 0.5, 0.0, DM4340)), S, 0.001))
    assert dm.unpack_reply(out.data, DM4340).enabled
    imp = motor.impedance(0.5, -1.0)
    assert imp is not None
    assert (imp.p_des, imp.kp, imp.kd) == pytest.approx((1.0, 20.0, 0.5), abs=0.13)
    _one(motor.handle_frame(_msg(0x01, dm.DISABLE), S, 0.002))
    assert motor.impedance(0.5, -1.0) is None


def test_sim_command_while_disabled_is_answered_not_applied(motor):
    out = _one(motor.handle_frame(_msg(0x01, dm.pack_mit(1.0, 0, 20, 0.5, 0, DM4340)), S, 0.0))
    assert dm.unpack_reply(out.data, DM4340).state == dm.STATE_DISABLED
    assert motor.command is None


def test_sim_set_zero(motor):
    motor.handle_frame(_msg(0x01, dm.SET_ZERO), S, 0.0)
    out = _one(motor.handle_frame(_msg(0x7FF, dm.pack_refresh(1)), S._replace(position=0.8), 0.01))
    assert dm.unpack_reply(out.data, DM4340).position == pytest.approx(0.3, abs=1e-3)


def test_sim_other_motor_and_other_mode_frames_get_no_answer(motor):
    assert motor.handle_frame(_msg(0x02, dm.ENABLE), S, 0.0) == []
    assert motor.handle_frame(_msg(0x7FF, dm.pack_register_read(2, dm.RID_PMAX)), S, 0.0) == []
    motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0)
    assert motor.handle_frame(_msg(0x201, dm.pack_vel(1.0)), S, 0.0) == []  # motor is in MIT mode


def test_sim_register_read_of_the_ranges(motor):
    read = {}
    for rid in (dm.RID_PMAX, dm.RID_VMAX, dm.RID_TMAX):
        out = _one(motor.handle_frame(_msg(dm.REGISTER_ID, dm.pack_register_read(1, rid)), S, 0.0))
        assert out.arbitration_id == 0x11
        r = dm.parse_register_reply(out.data, 1, rid, dm.REG_READ)
        assert r is not None
        read[rid] = r.value
    assert read == {21: 12.5, 22: 10.0, 23: 28.0}
    dm.check_ranges_match("j1", DM4340, read)
    with pytest.raises(dm.RangesMismatchError, match="VMAX"):
        dm.check_ranges_match("j1", DamiaoRanges(12.5, 8.0, 28.0), read)
    out = _one(motor.handle_frame(_msg(dm.REGISTER_ID, dm.pack_register_read(1, dm.RID_MST_ID)), S, 0.0))
    assert out.data == bytes.fromhex("0100330711000000")


def test_sim_register_write_switches_mode_and_ranges(motor):
    write = dm.pack_register_write(1, dm.RID_CTRL_MODE, dm.MODE_VEL)
    out = _one(motor.handle_frame(_msg(0x7FF, write), S, 0.0))
    assert out.data == bytes.fromhex("0100550A03000000")
    motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0)
    assert motor.handle_frame(_msg(0x01, dm.pack_mit(0, 0, 0, 0, 0, DM4340)), S, 0.0) == []
    _one(motor.handle_frame(_msg(0x201, dm.pack_vel(3.0)), S, 0.0))
    imp = motor.impedance(0.0, 0.0)
    assert imp is not None and imp.v_des == 3.0 and imp.kp == 0.0 and imp.kd > 0.0
    motor.handle_frame(_msg(0x7FF, dm.pack_register_write(1, dm.RID_VMAX, 20.0)), S, 0.0)
    assert motor.ranges.vmax == 20.0
    out = _one(motor.handle_frame(_msg(0x201, dm.pack_vel(3.0, dlc=8)), S._replace(velocity=15.0), 0.0))
    assert dm.unpack_reply(out.data, DamiaoRanges(12.5, 20.0, 28.0)).velocity == pytest.approx(15.0, abs=0.01)


def test_sim_position_velocity_mode_limits_speed(motor):
    motor.handle_frame(_msg(0x7FF, dm.pack_register_write(1, dm.RID_CTRL_MODE, dm.MODE_POS_VEL)), S, 0)
    motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0)
    _one(motor.handle_frame(_msg(0x101, dm.pack_pos_vel(2.0, 1.5)), S, 0.0))
    imp = motor.impedance(0.0, 0.0)
    assert imp is not None and imp.v_des == pytest.approx(1.5)
    imp = motor.impedance(2.0, 0.0)
    assert imp is not None and imp.v_des == pytest.approx(0.0)


def test_sim_injected_error_is_reported_and_cleared(motor):
    motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0)
    motor.handle_frame(_msg(0x01, dm.pack_mit(1.0, 0, 20, 0.5, 0, DM4340)), S, 0.0)
    motor.set_fault("MOS over-temperature", 110.0)
    out = _one(motor.handle_frame(_msg(0x01, dm.pack_mit(1.0, 0, 20, 0.5, 0, DM4340)), S, 0.01))
    r = dm.unpack_reply(out.data, DM4340)
    assert (r.state, r.fault, r.mos_temperature) == (0xB, "MOS over-temperature", 110.0)
    assert motor.impedance(0.5, 0.0) is None  # the output is off
    # while the condition lasts, clear error does not clear it, and enable is refused
    r = dm.unpack_reply(_one(motor.handle_frame(_msg(0x01, dm.CLEAR_ERROR), S, 0.02)).data, DM4340)
    assert r.fault == "MOS over-temperature"
    r = dm.unpack_reply(_one(motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.03)).data, DM4340)
    assert r.fault == "MOS over-temperature"
    motor.clear_fault()
    # the error stays latched until the host clears it
    r = dm.unpack_reply(_one(motor.handle_frame(_msg(0x7FF, dm.pack_refresh(1)), S, 0.04)).data, DM4340)
    assert r.state == 0xB
    r = dm.unpack_reply(_one(motor.handle_frame(_msg(0x01, dm.CLEAR_ERROR), S, 0.05)).data, DM4340)
    assert (r.state, r.fault) == (dm.STATE_DISABLED, None)
    r = dm.unpack_reply(_one(motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.06)).data, DM4340)
    assert r.state == dm.STATE_ENABLED


def test_sim_can_timeout_latches_communication_loss(motor):
    motor.handle_frame(_msg(0x7FF, dm.pack_register_write(1, dm.RID_TIMEOUT, dm.timeout_to_register(0.1))), S,
                       0.0)
    assert motor.can_timeout == pytest.approx(0.1)
    motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0)
    motor.handle_frame(_msg(0x01, dm.pack_mit(0, 0, 1, 0.1, 0, DM4340)), S, 0.05)
    motor.tick(S, 0.12)
    assert motor.enabled  # 70 ms since the last frame
    motor.tick(S, 0.2)
    assert not motor.enabled and motor.timeouts == 1
    r = dm.unpack_reply(_one(motor.handle_frame(_msg(0x7FF, dm.pack_refresh(1)), S, 0.21)).data, DM4340)
    assert r.fault == "communication loss"
    motor.handle_frame(_msg(0x01, dm.CLEAR_ERROR), S, 0.22)
    r = dm.unpack_reply(_one(motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.23)).data, DM4340)
    assert r.enabled


def test_sim_no_timeout_when_off_or_disabled(motor):
    motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0)
    motor.tick(S, 100.0)
    assert motor.enabled


def test_sim_silent_and_unknown_fault(motor):
    motor.set_fault("silent")
    assert motor.handle_frame(_msg(0x01, dm.ENABLE), S, 0.0) == []
    assert motor.enabled and motor.frames == 1  # it acts, but its transmitter is dead
    with pytest.raises(ValueError, match="unknown fault 'melted'"):
        motor.set_fault("melted")


def test_sim_listen_ids(motor):
    assert sorted(motor.listen_ids()) == [(0x001, False), (0x101, False), (0x201, False), (0x301, False),
                                          (0x7FF, False)]


def test_sim_answers_d1_byte_for_byte():
    """The facts file's captured enable reply, produced by the simulated motor in the same state."""
    motor = SimulatedDamiao("j1", slave_id=0x01, master_id=0x11, ranges=DM4340)
    d1 = dm.unpack_reply(bytes.fromhex("1183277FF7FF0000"), DM4340)
    eps = 1e-9  # the decoded values sit exactly on a step; nudge them up so truncation lands on it
    state = PhysicalState(d1.position + eps, d1.velocity + eps, d1.torque + eps, temperature=0.0,
                          mos_temperature=0.0)
    out = _one(motor.handle_frame(_msg(0x001, bytes.fromhex("FFFFFFFFFFFFFFFC")), state, 0.0))
    assert (out.arbitration_id, bytes(out.data)) == (0x011, bytes.fromhex("1183277FF7FF0000"))
