"""Our sensor frames (rospy_control.devices.sensors.codec)."""
from __future__ import annotations

import math

import pytest

from rospy_control.devices.sensors import codec as sensors


def test_quaternion_identity_bytes_and_round_trip():
    assert sensors.encode_quaternion((0, 0, 0, 1)) == bytes.fromhex("0000000000007fff")
    q = sensors.decode_quaternion(sensors.encode_quaternion((0.1, -0.2, 0.3, 0.9273618)))
    assert q == pytest.approx((0.1, -0.2, 0.3, 0.9273618), abs=1e-4)


def test_vec3_scaling_clamp_and_extra_bytes():
    data = sensors.encode_vec3((9.80665, -200.0, 0.0), 156.9, flags=1, extra=7)
    assert data[2:4] == b"\x80\x01"  # y clamped to -32767
    x, y, z, flags, seq = sensors.decode_vec3(data, 156.9)
    assert x == pytest.approx(9.80665, abs=156.9 / 32767)
    assert y == pytest.approx(-156.9)
    assert (flags, seq) == (1, 7)


def test_contact_frame():
    data = sensors.encode_contact(True, 500.0, 1000.0, seq=3)
    assert data == bytes.fromhex("01800003")  # flags, u16 force 32768, seq
    c, f, err = sensors.decode_contact(data, 1000.0)
    assert c is True and err is False
    assert f == pytest.approx(500.0, abs=1000 / 65535)
    frame = sensors.encode_contact(False, -5, 1000.0, error=True)
    assert sensors.decode_contact(frame, 1000.0) == (False, 0.0, True)


def test_encoder_frame():
    data = sensors.encode_encoder(math.pi, -1.0, 16384, 100.0, seq=1)
    assert data[:4] == (8192).to_bytes(4, "big")
    p, v, flags = sensors.decode_encoder(data, 16384, 100.0)
    assert p == pytest.approx(math.pi)
    assert v == pytest.approx(-1.0, abs=100 / 32767)


@pytest.mark.parametrize("fn,args", [
    (sensors.decode_quaternion, ()), (sensors.decode_vec3, (1.0,)), (sensors.decode_contact, (1.0,)),
    (sensors.decode_encoder, (16384, 1.0)),
])
def test_wrong_length_raises(fn, args):
    with pytest.raises(sensors.SensorFrameError, match="needs"):
        fn(b"\x00\x01", *args)
