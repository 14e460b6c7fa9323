"""Byte-exact tests of the CubeMars V3 MIT codec (rospy_control.devices.cubemars.codec) and
conversations with the simulated V3 motor (rospy_control.simulator.cubemars)."""
from __future__ import annotations

import math
import struct

import can
import pytest

from rospy_control.devices.cubemars import codec as cm
from rospy_control.devices.mit import codec as mit
from rospy_control.devices.encodable import EncodableRangeError
from rospy_control.devices.mit.codec import MitLimits
from rospy_control.simulator.cubemars import SimulatedCubeMarsV3
from rospy_control.simulator.device import PhysicalState

L = MitLimits(p_min=-12.5, p_max=12.5, v_min=-50.0, v_max=50.0, t_min=-65.0, t_max=65.0)  # AK10-9


def _v3_bytes(kp: int, kd: int, p: int, v: int, t: int) -> bytes:
    """The V3 manual's byte-by-byte packing, written out independently of the codec."""
    return bytes((kp >> 4, ((kp & 0xF) << 4) | (kd >> 8), kd & 0xFF, p >> 8, p & 0xFF, v >> 4,
                  ((v & 0xF) << 4) | (t >> 8), t & 0xFF))


def test_ids_are_29_bit_packet_and_controller_id():
    assert cm.command_id(0x68) == 0x868
    assert cm.origin_id(0x68) == 0x568
    assert cm.feedback_id(0x68) == 0x2968
    assert cm.split_id(0x2968) == (0x29, 0x68)
    with pytest.raises(ValueError, match="0..255, got 256"):
        cm.command_id(256)


def test_v3_layout_puts_gains_first():
    assert cm.pack_command(0, 0, 0, 0, 0, L) == bytes.fromhex("0000007FFF7FF7FF")
    assert cm.pack_command(0, 0, 0, 0, 0, L) == _v3_bytes(0, 0, 0x7FFF, 0x7FF, 0x7FF)
    assert cm.pack_command(-12.5, -50, 500, 0, -65, L) == bytes.fromhex("FFF0000000000000")
    assert cm.pack_command(-12.5, -50, 0, 5, -65, L) == bytes.fromhex("000FFF0000000000")
    data = cm.pack_command(1.0, -2.0, 20.0, 0.5, 3.0, L)
    kp = mit.float_to_uint(20.0, 0, 500, 12)
    kd = mit.float_to_uint(0.5, 0, 5, 12)
    p = mit.float_to_uint(1.0, -12.5, 12.5, 16)
    v = mit.float_to_uint(-2.0, -50, 50, 12)
    t = mit.float_to_uint(3.0, -65, 65, 12)
    assert data == _v3_bytes(kp, kd, p, v, t)


def test_classic_layout_option_is_the_mit_codec():
    assert cm.pack_command(1.0, -2.0, 20, 0.5, 3.0, L, cm.LAYOUT_MIT) == mit.pack_command(1.0, -2.0, 20, 0.5,
                                                                                          3.0, L)
    with pytest.raises(ValueError, match="layout must be"):
        cm.pack_command(0, 0, 0, 0, 0, L, "v4")


@pytest.mark.parametrize("layout", [cm.LAYOUT_V3, cm.LAYOUT_MIT])
def test_command_round_trip(layout):
    got = cm.unpack_command(cm.pack_command(1.0, -2.0, 50.0, 1.0, 3.0, L, layout), L, layout)
    assert got == pytest.approx((1.0, -2.0, 50.0, 1.0, 3.0), abs=0.13)
    with pytest.raises(cm.CubeMarsFrameError, match="8 bytes, got 6"):
        cm.unpack_command(bytes(6), L, layout)


def test_feedback_decoding():
    scale = cm.CubeMarsV3Scale(pole_pairs=21, gear_ratio=9.0, torque_constant=0.1)
    data = struct.pack(">hhhbB", 1800, -189, 250, 41, 0)
    fb = cm.unpack_feedback(0x2968, data, scale)
    assert fb.controller_id == 0x68
    assert fb.position == pytest.approx(math.pi)
    # -1890 ERPM / 21 pole pairs = -90 rpm at the rotor, / 9 = -10 rpm at the output
    assert fb.velocity == pytest.approx(-10 * 2 * math.pi / 60)
    assert fb.torque == pytest.approx(0.25)
    assert (fb.temperature, fb.error, fb.fault) == (41.0, 0, None)
    assert cm.unpack_feedback(0x2968, data[:6] + bytes((200, 6)), scale).fault == "MOSFET over-temperature"
    with pytest.raises(cm.CubeMarsFrameError, match="not a CubeMars feedback id"):
        cm.unpack_feedback(0x868, data, scale)
    with pytest.raises(cm.CubeMarsFrameError, match="8 bytes, got 7"):
        cm.unpack_feedback(0x2968, data[:7], scale)


def test_feedback_round_trip_and_saturation():
    scale = cm.CubeMarsV3Scale()
    fb = cm.unpack_feedback(0x2901, cm.pack_feedback(1.0, 2.0, -3.0, scale, 55, 1), scale)
    assert fb.position == pytest.approx(1.0, abs=math.radians(0.05))
    assert fb.velocity == pytest.approx(2.0, abs=0.01)
    assert fb.torque == pytest.approx(-3.0, abs=0.001)
    assert (fb.error, fb.fault) == (1, "motor over-temperature")
    assert struct.unpack(">h", cm.pack_feedback(1e6, 0, 0, scale)[:2])[0] == 32767


def test_set_origin_and_gain_check():
    assert cm.pack_set_origin() == b"\x00" and cm.pack_set_origin(permanent=True) == b"\x01"
    cm.check_gains_encodable(500, 5, L)
    with pytest.raises(EncodableRangeError, match="unit 'knee': position_kd=9.0 .* CubeMars V3"):
        cm.check_gains_encodable(10, 9.0, L, "knee")


# -- conversations with the simulated motor -------------------------------------------------------------
def _msg(aid: int, data: bytes, extended: bool = True) -> can.Message:
    return can.Message(arbitration_id=aid, is_extended_id=extended, data=data)


S = PhysicalState(position=0.5, velocity=1.0, torque=2.0, temperature=40.0)


@pytest.fixture
def motor():
    return SimulatedCubeMarsV3("knee", controller_id=0x68, limits=L)


def test_sim_command_reply(motor):
    out = motor.handle_frame(_msg(0x868, cm.pack_command(1.0, 0, 20, 0.5, 0, L)), S, 0.0)
    assert len(out) == 1 and out[0].arbitration_id == 0x2968 and out[0].is_extended_id
    fb = cm.unpack_feedback(out[0].arbitration_id, out[0].data, motor.scale)
    assert fb.position == pytest.approx(0.5, abs=1e-3) and fb.temperature == 40.0 and fb.error == 0
    imp = motor.impedance(0.5, 1.0)
    assert imp is not None and (imp.p_des, imp.kp, imp.kd) == pytest.approx((1.0, 20.0, 0.5), abs=0.13)
    # a standard-id frame with the same number, another motor's frame: not for this motor
    assert motor.handle_frame(_msg(0x868, bytes(8), extended=False), S, 0.0) == []
    assert motor.handle_frame(_msg(0x869, bytes(8)), S, 0.0) == []


def test_sim_origin(motor):
    assert motor.handle_frame(_msg(0x568, cm.pack_set_origin()), S, 0.0) == []
    out = motor.handle_frame(_msg(0x868, cm.pack_command(0, 0, 0, 0, 0, L)), S._replace(position=0.8), 0.0)
    assert cm.unpack_feedback(0x2968, out[0].data, motor.scale).position == pytest.approx(0.3, abs=1e-3)


def test_sim_error_reported_while_the_condition_lasts(motor):
    motor.handle_frame(_msg(0x868, cm.pack_command(1.0, 0, 20, 0.5, 0, L)), S, 0.0)
    motor.set_fault("motor over-temperature", 95.0)
    out = motor.handle_frame(_msg(0x868, cm.pack_command(1.0, 0, 20, 0.5, 0, L)), S, 0.01)
    fb = cm.unpack_feedback(0x2968, out[0].data, motor.scale)
    assert (fb.fault, fb.temperature) == ("motor over-temperature", 95.0)
    assert motor.impedance(0.5, 0.0) is None
    motor.clear_fault()
    out = motor.handle_frame(_msg(0x868, cm.pack_command(1.0, 0, 20, 0.5, 0, L)), S, 0.02)
    assert cm.unpack_feedback(0x2968, out[0].data, motor.scale).error == 0
    assert motor.impedance(0.5, 0.0) is not None


def test_sim_upload_and_timeout():
    m = SimulatedCubeMarsV3("m", 1, L, upload_rate=0.02, firmware_timeout=0.1)
    assert [f.arbitration_id for f in m.tick(S, 0.0)] == [0x2901]
    assert m.tick(S, 0.01) == []
    assert len(m.tick(S, 0.025)) == 1
    m.handle_frame(_msg(0x801, cm.pack_command(0, 0, 10, 1, 0, L)), S, 0.03)
    m.tick(S, 0.1)
    assert m.impedance(0, 0) is not None
    m.tick(S, 0.2)
    assert m.impedance(0, 0) is None and m.timeouts == 1
