"""Byte-exact tests of the MIT-mode codec (rospy_control.devices.mit.codec)."""
from __future__ import annotations

import pytest

from rospy_control.devices.mit import codec as mit
from rospy_control.devices.mit.codec import MitLimits, pack_command, unpack_reply

L = MitLimits()  # Mini-Cheetah ranges: P +-12.5, V +-65, KP 0..500, KD 0..5, T +-18


def test_zero_command_is_mid_range_with_zero_gains():
    # p=0 -> 0x7FFF, v=0 -> 0x7FF, kp=kd=0 -> 0, t=0 -> 0x7FF
    assert pack_command(0, 0, 0, 0, 0, L) == bytes.fromhex("7fff7ff0000007ff")


def test_max_and_min_values_fill_all_bits():
    assert pack_command(12.5, 65, 500, 5, 18, L) == bytes.fromhex("ffffffffffffffff")
    assert pack_command(-12.5, -65, 0, 0, -18, L) == bytes.fromhex("0000000000000000")


def test_out_of_range_values_are_clamped():
    assert pack_command(100, 1e6, 1e6, 99, 1e3, L) == bytes.fromhex("ffffffffffffffff")
    assert pack_command(-100, -1e6, -5, -1, -1e3, L) == bytes.fromhex("0000000000000000")


def test_nan_maps_to_range_minimum():
    nan = float("nan")
    assert pack_command(nan, nan, nan, nan, nan, L) == bytes(8)


def test_field_layout_nibbles():
    # only kp at max: bits 24..35 set -> byte 3 low nibble and byte 4
    assert pack_command(-12.5, -65, 500, 0, -18, L) == bytes.fromhex("0000000fff000000")
    # only kd at max: byte 5 and high nibble of byte 6
    assert pack_command(-12.5, -65, 0, 5, -18, L) == bytes.fromhex("0000000000fff000")
    # only v at max: byte 2 and high nibble of byte 3
    assert pack_command(-12.5, 65, 0, 0, -18, L) == bytes.fromhex("0000fff000000000")


def test_truncation_like_the_firmware():
    # one 16-bit step of p is 25/65535 rad; 1.9 steps truncate to 1
    step = 25.0 / 65535
    assert pack_command(-12.5 + 1.9 * step, -65, 0, 0, -18, L)[:2] == b"\x00\x01"
    assert mit.float_to_uint(-12.5 + 0.999 * step, -12.5, 12.5, 16) == 0


def test_negative_only_range():
    lim = MitLimits(p_min=-4.0, p_max=-1.0, t_min=-10.0, t_max=-2.0)
    assert pack_command(-1.0, 0, 0, 0, -2.0, lim)[:2] == b"\xff\xff"
    assert pack_command(-4.0, 0, 0, 0, -10.0, lim)[:2] == b"\x00\x00"
    r = unpack_reply(bytes.fromhex("01ffff7ff000"), lim)
    assert r.position == pytest.approx(-1.0)
    assert r.torque == pytest.approx(-10.0)


def test_unpack_reply_dlc6():
    r = unpack_reply(bytes.fromhex("057fff7ff7ff"), L)
    assert r.motor_id == 5
    assert r.position == pytest.approx(0.0, abs=25 / 65535)
    assert r.velocity == pytest.approx(0.0, abs=130 / 4095)
    assert r.torque == pytest.approx(0.0, abs=36 / 4095)
    assert r.temperature is None and r.error is None and r.voltage is None


def test_unpack_reply_boundaries():
    hi = unpack_reply(bytes.fromhex("01ffffffffff"), L)
    lo = unpack_reply(bytes.fromhex("010000000000"), L)
    assert (hi.position, hi.velocity, hi.torque) == (12.5, 65.0, 18.0)
    assert (lo.position, lo.velocity, lo.torque) == (-12.5, -65.0, -18.0)


def test_unpack_reply_dlc7_voltage_and_dlc8_temperature_error():
    r7 = unpack_reply(bytes.fromhex("027fff7ff7ff18"), L)
    assert r7.voltage == 24.0 and r7.temperature is None
    r8 = unpack_reply(bytes.fromhex("037fff7ff7ff2a03"), L)
    assert r8.temperature == 42.0 and r8.error == 3 and r8.voltage is None


def test_unpack_reply_too_short_raises():
    with pytest.raises(mit.MitFrameError, match="at least 6 bytes, got 5"):
        unpack_reply(b"\x01\x02\x03\x04\x05", L)


def test_reply_round_trip_within_one_step():
    for dlc in (6, 7, 8):
        data = mit.pack_reply(9, 1.234, -3.21, 4.5, L, dlc=dlc, temperature=50, error=0)
        assert len(data) == dlc
        r = unpack_reply(data, L)
        assert r.motor_id == 9
        assert r.position == pytest.approx(1.234, abs=25 / 65535)
        assert r.velocity == pytest.approx(-3.21, abs=130 / 4095)
        assert r.torque == pytest.approx(4.5, abs=36 / 4095)


def test_command_round_trip_through_firmware_decoder():
    p, v, kp, kd, t = mit.unpack_command(pack_command(1.0, -2.0, 50.0, 1.0, 3.0, L), L)
    assert p == pytest.approx(1.0, abs=25 / 65535)
    assert v == pytest.approx(-2.0, abs=130 / 4095)
    assert kp == pytest.approx(50.0, abs=500 / 4095)
    assert kd == pytest.approx(1.0, abs=5 / 4095)
    assert t == pytest.approx(3.0, abs=36 / 4095)


def test_special_frames():
    assert mit.ENTER_MOTOR_MODE == bytes.fromhex("fffffffffffffffc")
    assert mit.EXIT_MOTOR_MODE == bytes.fromhex("fffffffffffffffd")
    assert mit.SET_ZERO == bytes.fromhex("fffffffffffffffe")


def test_limits_validate_names_the_pair():
    with pytest.raises(ValueError, match="kd_min=5.0 must be smaller than kd_max=5.0"):
        MitLimits(kd_min=5.0, kd_max=5.0).validate()
