"""python-can's ``udp_multicast`` hands a process its own frames back; the buses the driver and the
simulator open drop them (``receive_own_messages=False`` as it should be), undecoded, and deliver
every other sender's frames, byte-identical ones included."""
from __future__ import annotations

import random

import can
import pytest

from rospy_control.bus.adapter import open_bus
from rospy_control.bus.echo import echo_filter_of

pytest.importorskip("msgpack", reason="python-can's udp_multicast needs msgpack")


def _pair():
    port = random.randint(40000, 45000)
    group = f"239.255.{random.randint(0, 255)}.{random.randint(1, 254)}"
    a = open_bus("udp_multicast", group, 1000000, port=port, hop_limit=0)
    b = open_bus("udp_multicast", group, 1000000, port=port, hop_limit=0)
    return a, b


def _all(bus, timeout=0.3):
    out = []
    while True:
        m = bus.recv(timeout)
        if m is None:
            return out
        out.append(m)
        timeout = 0.05


def test_a_bus_does_not_receive_what_it_sent_and_its_peer_does():
    a, b = _pair()
    try:
        assert echo_filter_of(a) and echo_filter_of(b)
        for i in range(50):
            a.send(can.Message(arbitration_id=0x100 + i, data=bytes([i]), is_extended_id=False))
        b.send(can.Message(arbitration_id=0x7FF, data=b"\x01", is_extended_id=False))
        got_b = _all(b)
        got_a = _all(a)
        assert [m.arbitration_id for m in got_b] == [0x100 + i for i in range(50)]
        assert [m.arbitration_id for m in got_a] == [0x7FF]
    finally:
        a.shutdown()
        b.shutdown()


def test_a_peer_s_frame_byte_identical_to_one_sent_is_still_delivered_once():
    a, b = _pair()
    try:
        same = can.Message(arbitration_id=0x123, data=b"\x00\x01", is_extended_id=False, timestamp=0.0)
        a.send(same)
        b.send(same)
        assert len(_all(a)) == 1       # one of the two identical datagrams is the echo
        assert len(_all(b)) == 1
    finally:
        a.shutdown()
        b.shutdown()
