"""Byte-exact tests of the CyberGear / RobStride codec (rospy_control.devices.robstride.codec).

R1-R4 are the vectors of the device-protocol spec (section 8); the others follow the CyberGear
manual's tables (chapter 4) and RobStride's sample program.
"""
from __future__ import annotations

import math
import struct

import pytest

from rospy_control.devices.robstride import codec as rs

CG = rs.limits_for("cybergear")


def test_r1_write_run_mode_position_motor_2_from_host_aa():
    f = rs.encode_param_write(2, "run_mode", 1, host_id=0xAA)
    assert f.is_extended_id
    assert f.arbitration_id == 0x1200AA02
    assert f.data == bytes.fromhex("0570000001000000")
    assert str(f) == "1200AA02#0570000001000000"


def test_r2_enable_motor_7f_from_host_fd():
    f = rs.encode_enable(0x7F, 0xFD)
    assert (f.arbitration_id, f.data, f.is_extended_id) == (0x0300FD7F, bytes(8), True)


def test_r3_all_zero_operation_control_truncates_to_7fff():
    f = rs.encode_operation_control(0x7F, 0.0, 0.0, 0.0, 0.0, 0.0, CG)
    assert f.arbitration_id == 0x017FFF7F
    assert f.data == bytes.fromhex("7FFF7FFF00000000")


def test_r4_feedback_id_and_mode_run_decodes_as_2():
    f = rs.encode_feedback(0x7F, 0xFD, 0.0, 0.0, 0.0, 25.0, CG, faults=0, mode=rs.MODE_RUN)
    assert f.arbitration_id == 0x02807FFD
    fb = rs.decode_feedback(0x02807FFD, f.data, CG)
    # bits 23-22 together: a decoder reading only bit 22 would give 0 (reset) here
    assert fb.mode == 2 and fb.mode_name == "run"
    assert (fb.motor_id, fb.host_id, fb.faults, fb.fault_names) == (0x7F, 0xFD, 0, [])
    assert fb.temperature == pytest.approx(25.0)


def test_operation_control_field_order_and_ranges():
    # position max, velocity min, kp max, kd at half, torque max (id bits 23-8)
    f = rs.encode_operation_control(1, 4 * math.pi, -30.0, 500.0, 2.5, 12.0, CG)
    assert f.arbitration_id == 0x01FFFF01
    assert f.data == bytes.fromhex("FFFF0000FFFF7FFF")
    mid, p, v, kp, kd, t = rs.decode_operation_control(f.arbitration_id, f.data, CG)
    assert (mid, p, v, kp, t) == (1, pytest.approx(4 * math.pi), pytest.approx(-30.0), pytest.approx(500.0),
                                  pytest.approx(12.0))
    assert kd == pytest.approx(2.5, abs=1e-4)


def test_operation_control_clamps_by_default_and_strict_names_the_attribute():
    clamped = rs.encode_operation_control(1, 100.0, 0, 0, 0, -99.0, CG)
    assert clamped.data[:2] == b"\xff\xff" and (clamped.arbitration_id >> 8) & 0xFFFF == 0
    with pytest.raises(rs.RobStrideRangeError) as e:
        rs.encode_operation_control(1, 0.0, 31.0, 0, 0, 0, CG, strict=True, model="cybergear")
    msg = str(e.value)
    assert "velocity=31.0" in msg and "cybergear" in msg and "[-30, 30]" in msg
    with pytest.raises(rs.RobStrideRangeError, match="torque=nan"):
        rs.encode_operation_control(1, 0.0, 0.0, 0, 0, float("nan"), CG, strict=True)


def test_model_ranges_differ_and_unknown_model_is_named():
    rs04 = rs.limits_for("RS04")
    assert (rs04.t_max, rs04.v_max, rs04.kp_max, rs04.kd_max) == (120.0, 15.0, 5000.0, 100.0)
    assert rs.limits_for("rs01").t_max == 17.0 and rs.limits_for("rs01").v_max == 44.0
    assert rs.limits_for("cybergear").t_max == 12.0
    # the same torque packs differently on different models
    a = rs.encode_operation_control(1, 0, 0, 0, 0, 6.0, CG).arbitration_id
    b = rs.encode_operation_control(1, 0, 0, 0, 0, 6.0, rs04).arbitration_id
    assert a != b
    with pytest.raises(ValueError, match="unknown RobStride/CyberGear model 'rs99'.*cybergear"):
        rs.limits_for("rs99")
    for lim in rs.MODELS.values():
        lim.validate()


def test_stop_with_and_without_clear_fault():
    assert rs.encode_stop(0x7F, 0xFD).data == bytes(8)
    f = rs.encode_stop(0x7F, 0xFD, clear_fault=True)
    assert f.arbitration_id == 0x0400FD7F and f.data == bytes.fromhex("0100000000000000")


def test_set_zero_set_can_id_get_id():
    assert str(rs.encode_set_zero(0x7F, 0xFD)) == "0600FD7F#0100000000000000"
    assert rs.encode_set_can_id(0x7F, 0x05, 0xFD).arbitration_id == 0x0705FD7F
    assert rs.encode_get_id(0x7F, 0xFD).arbitration_id == 0x0000FD7F
    reply = rs.encode_get_id_reply(0x7F, bytes(range(8)))
    assert reply.arbitration_id == 0x00007FFE
    assert rs.decode_get_id_reply(reply.arbitration_id, reply.data) == (0x7F, bytes(range(8)))


def test_param_read_request_and_float_reply():
    f = rs.encode_param_read(0x7F, "mechPos", 0xFD)
    assert str(f) == "1100FD7F#1970000000000000"
    raw = struct.pack("<f", 1.5)
    reply = rs.encode_param_reply(0x7F, 0xFD, 0x7019, raw)
    assert reply.arbitration_id == 0x11007FFD
    r = rs.decode_param_reply(reply.arbitration_id, reply.data)
    assert (r.motor_id, r.host_id, r.name, r.value, r.ok) == (0x7F, 0xFD, "mechPos", 1.5, True)
    bad = rs.encode_param_reply(0x7F, 0xFD, 0x7FFF, bytes(4), ok=False)
    r = rs.decode_param_reply(bad.arbitration_id, bad.data)
    assert (r.ok, r.value, r.name) == (False, None, "0x7FFF")


@pytest.mark.parametrize("name,value,expected", [
    ("spd_ref", 2.0, "0A70000000000040"),
    ("loc_ref", -1.0, "16700000000080BF"),
    ("limit_spd", 10.0, "1770000000002041"),
    ("limit_cur", 5.0, "187000000000A040"),
    ("iq_ref", 0.5, "067000000000003F"),
    ("EPScan_time", 39, "2670000027000000"),
])
def test_param_write_payloads(name, value, expected):
    f = rs.encode_param_write(0x7F, name, value, 0xFD, limits=CG)
    assert f.arbitration_id == 0x1200FD7F
    assert f.data.hex().upper() == expected


def test_param_write_validation_names_attribute_value_and_range():
    with pytest.raises(rs.RobStrideRangeError, match=r"spd_ref=31.0 .*cybergear \[-30, 30\]"):
        rs.encode_param_write(1, "spd_ref", 31.0, limits=CG, model="cybergear")
    with pytest.raises(rs.RobStrideRangeError, match=r"limit_spd=-1.0 .*\[0, 30\]"):
        rs.encode_param_write(1, "limit_spd", -1.0, limits=CG)
    with pytest.raises(rs.RobStrideRangeError, match=r"iq_ref=24.0 .*\[-23, 23\]"):
        rs.encode_param_write(1, "iq_ref", 24.0, limits=CG)
    with pytest.raises(rs.RobStrideRangeError, match=r"loc_ref=inf"):
        rs.encode_param_write(1, "loc_ref", math.inf)
    with pytest.raises(rs.RobStrideRangeError, match=r"EPScan_time=70000"):
        rs.encode_param_write(1, "EPScan_time", 70000)
    with pytest.raises(ValueError, match=r"run_mode=4 is not one of \[0, 1, 2, 3, 5\]"):
        rs.encode_param_write(1, "run_mode", 4)
    with pytest.raises(ValueError, match=r"mechPos \(0x7019\) is read-only"):
        rs.encode_param_write(1, "mechPos", 0.0)
    with pytest.raises(ValueError, match=r"unknown RobStride/CyberGear parameter 0x1234"):
        rs.encode_param_read(1, 0x1234)
    with pytest.raises(ValueError, match="host_id=300"):
        rs.encode_enable(1, 300)


def test_run_mode_names():
    assert [rs.run_mode_value(m) for m in ("operation", "position", "velocity", "current")] == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="unknown run mode 'torque'"):
        rs.run_mode_value("torque")


def test_feedback_every_fault_bit_named_and_round_trip():
    f = rs.encode_feedback(3, 0xFD, 1.0, -2.0, 3.0, 41.3, CG, faults=0x3F, mode=rs.MODE_RESET)
    assert f.arbitration_id == 0x023F03FD
    fb = rs.decode_feedback(f.arbitration_id, f.data, CG)
    assert fb.fault_names == ["undervoltage", "overcurrent", "over temperature", "magnetic encoder fault",
                              "HALL encoder fault / stall overload", "not calibrated"]
    assert fb.mode_name == "reset"
    assert fb.position == pytest.approx(1.0, abs=4e-4)
    assert fb.velocity == pytest.approx(-2.0, abs=1e-3)
    assert fb.torque == pytest.approx(3.0, abs=4e-4)
    assert fb.temperature == pytest.approx(41.3)
    one = rs.decode_feedback(0x02000000 | (1 << 18) | (3 << 8) | 0xFD, f.data, CG)
    assert one.fault_names == ["over temperature"]
    with pytest.raises(rs.RobStrideFrameError, match="feedback frame needs 8 bytes"):
        rs.decode_feedback(f.arbitration_id, f.data[:6], CG)
    with pytest.raises(rs.RobStrideFrameError, match="type 1"):
        rs.decode_feedback(0x017FFF7F, f.data, CG)


def test_fault_frame_type_21_all_bits_named():
    f = rs.encode_fault_frame(0x7F, 0xFD, 0x000100BF | 0x0300, warning=1)
    assert f.arbitration_id == 0x15007FFD
    assert f.data == bytes.fromhex("BF030100" "01000000")
    r = rs.decode_fault_frame(f.arbitration_id, f.data)
    assert r.fault_names == ["motor over-temperature", "driver chip fault", "undervoltage", "overvoltage",
                             "phase B current sampling overcurrent", "phase C current sampling overcurrent",
                             "encoder not calibrated", "overload", "phase A current sampling overcurrent"]
    assert r.overload == 3
    assert r.warning_names == ["motor over-temperature warning"]
    assert rs.fault_names(1 << 6) == ["bit 6"]


def test_active_report_on_off_and_interval():
    on = rs.encode_active_report(0x7F, True, 0xFD)
    assert str(on) == "1800FD7F#0102030405060100"
    assert rs.decode_active_report(on.arbitration_id, on.data) is True
    off = rs.encode_active_report(0x7F, False, 0xFD)
    assert off.data == bytes.fromhex("0102030405060000")
    assert rs.decode_active_report(off.arbitration_id, off.data) is False
    assert rs.report_interval_s(1) == pytest.approx(0.010)
    assert rs.report_interval_value(0.010) == 1
    assert rs.report_interval_value(0.2) == 39
    with pytest.raises(rs.RobStrideRangeError, match="report_interval=0.001"):
        rs.report_interval_value(0.001)
    report = rs.encode_feedback(0x7F, 0xFD, 0, 0, 0, 30, CG, comm_type=rs.ACTIVE_REPORT)
    assert report.arbitration_id == 0x18807FFD
    assert rs.decode_feedback(report.arbitration_id, report.data, CG).comm_type == rs.ACTIVE_REPORT


def test_make_id_rejects_fields_that_do_not_fit():
    with pytest.raises(ValueError, match="communication type 32"):
        rs.make_id(32, 0, 0)
    assert rs.split_id(0x1200AA02) == (18, 0xAA, 0x02)


def test_run_mode_switch_and_targets_as_frame_sequences():
    frames = rs.encode_switch_run_mode(0x7F, "velocity", 0xFD)
    assert [str(f) for f in frames] == ["0400FD7F#0000000000000000", "1200FD7F#0570000002000000",
                                        "0300FD7F#0000000000000000"]
    assert len(rs.encode_switch_run_mode(0x7F, "current", enable=False)) == 2
    pos = rs.encode_position_target(0x7F, -1.0, speed_limit=10.0, host_id=0xFD, limits=CG, model="cybergear")
    assert [f.data.hex().upper() for f in pos] == ["1770000000002041", "16700000000080BF"]
    rs04 = rs.encode_position_target(1, 0.5, speed_limit=5.0, limits=rs.limits_for("rs04"), model="rs04")
    assert rs04[0].data[:2] == b"\x24\x70"   # vel_max on RobStride's position mode
    vel = rs.encode_velocity_target(0x7F, 2.0, current_limit=5.0, host_id=0xFD, limits=CG)
    assert [f.data.hex().upper() for f in vel] == ["187000000000A040", "0A70000000000040"]
    assert rs.encode_current_target(0x7F, 0.5, 0xFD)[0].data.hex().upper() == "067000000000003F"
    with pytest.raises(rs.RobStrideRangeError, match="spd_ref=45.0"):
        rs.encode_velocity_target(1, 45.0, limits=rs.limits_for("rs01"), model="rs01")
