"""Protocol devices in the simulated firmware (simulation/peers.py): routed by id, standard or
extended, ticked for their own frames, fault switches passed to the device; and a channel's units
reading 29-bit frames through their extended routes."""
from __future__ import annotations

import time
import uuid
from typing import List, Optional

import can
import pytest

from rospy_control.simulator import SimulatedFirmware, SimulationSettings
from rospy_control.simulator import peers
from rospy_control.simulator.device import Impedance, SimulatedDevice
from rospy_control.simulator.joint import SimulatedProtocolMotor


class EchoDevice(SimulatedDevice):
    """Answers a 29-bit frame 0x1000_00<id> with 0x2000_00<id> carrying the same bytes; sends a
    beat on 0x3000_00<id> every 10 ms; "overheat" is its own fault."""

    DEVICE_FAULTS = ("overheat",)

    def __init__(self, name: str, node: int) -> None:
        super().__init__(name)
        self.node = node
        self.next_beat = 0.0

    def listen_ids(self):
        return [(0x10000000 | self.node, True)]

    def reply_ids(self):
        return [(0x20000000 | self.node, True), (0x30000000 | self.node, True)]

    def _handle(self, msg, state, now):
        data = bytes(msg.data) if self.fault != "overheat" else b"\xee"
        return [self._message(0x20000000 | self.node, data, extended=True)]

    def tick(self, state, now):
        if now < self.next_beat:
            return []
        self.next_beat = now + 0.01
        return [self._message(0x30000000 | self.node, bytes([self.node]), extended=True)]

    def impedance(self, position: float, velocity: float) -> Optional[Impedance]:
        return None


class EchoUnit:
    """Stands for the configuration record of a unit class the registry knows (only what the factory
    reads: the record's ``kinds`` name the configuring class and its bases)."""

    kinds = ("EchoUnit",)

    def __init__(self, name: str, node: int) -> None:
        self.name = name
        self.node = node
        self.simulation = None


def peer_for_unit(unit: EchoUnit):
    return SimulatedProtocolMotor(EchoDevice(unit.name, unit.node), peers.joint_model(unit))


@pytest.fixture
def firmware(monkeypatch):
    monkeypatch.setitem(peers.PEER_FACTORIES, "EchoUnit", f"{__name__}:peer_for_unit")
    fw = SimulatedFirmware("bus", [EchoUnit("a", 1), EchoUnit("b", 2)], SimulationSettings())
    channel = f"peers-{uuid.uuid4().hex[:8]}"
    fw.start(channel)
    bus = can.Bus(interface="virtual", channel=channel)
    yield fw, bus
    bus.shutdown()
    fw.stop()


def _collect(bus, seconds: float) -> List[can.Message]:
    out = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        msg = bus.recv(0.01)
        if msg is not None:
            out.append(msg)
    return out


def test_peers_answer_their_own_extended_ids_and_send_their_cyclic_frames(firmware):
    fw, bus = firmware
    assert [p.name for p in fw.peers] == ["a", "b"]
    bus.send(can.Message(arbitration_id=0x10000002, is_extended_id=True, data=b"\x01\x02"))
    frames = _collect(bus, 0.3)
    answers = [m for m in frames if m.arbitration_id == 0x20000002]
    assert [bytes(m.data) for m in answers] == [b"\x01\x02"]
    assert not [m for m in frames if m.arbitration_id == 0x20000001]
    beats_a = [m for m in frames if m.arbitration_id == 0x30000001]
    # every 10 ms, not every simulator tick (0.5 ms): a late host can only stretch the gaps, so the
    # count has a ceiling and the typical gap a floor
    assert 3 <= len(beats_a) <= 40, len(beats_a)
    gaps = sorted(b.timestamp - a.timestamp for a, b in zip(beats_a, beats_a[1:]))
    assert gaps[len(gaps) // 2] >= 0.008, gaps


def test_fault_switches_reach_the_device(firmware):
    fw, bus = firmware
    fw.set_fault("a", "overheat")
    assert fw.fault_of("a") == "overheat"
    bus.send(can.Message(arbitration_id=0x10000001, is_extended_id=True, data=b"\x05"))
    assert [bytes(m.data) for m in _collect(bus, 0.2) if m.arbitration_id == 0x20000001] == [b"\xee"]
    fw.set_fault("a", "silent")
    bus.send(can.Message(arbitration_id=0x10000001, is_extended_id=True, data=b"\x05"))
    frames = _collect(bus, 0.2)
    assert not [m for m in frames if m.arbitration_id in (0x20000001, 0x30000001)]
    assert [m for m in frames if m.arbitration_id == 0x30000002]          # b still beats
    with pytest.raises(ValueError, match="unknown fault 'nope'"):
        fw.set_fault("a", "nope")
    fw.clear_fault("a")
    assert fw.fault_of("a") is None


def test_a_frame_that_waited_too_long_for_the_simulator_is_dropped_as_a_stall(firmware):
    # A frame queued 0.5 s ago (the host starved the simulator): a device never answers a frame
    # that old, and working through such a backlog would run every device behind the driver. It is
    # dropped unanswered, and the sign of life records the stall and the drop, so the driver excuses
    # the silence; a fresh frame queued right behind it is answered as usual (a stop frame sent just
    # now still reaches its motor).
    fw, bus = firmware
    old = can.Bus(interface="virtual", channel=bus.channel_id, preserve_timestamps=True)
    try:
        start = time.perf_counter()
        old.send(can.Message(arbitration_id=0x10000001, is_extended_id=True, data=b"\x07",
                             timestamp=time.time() - 0.5))
        old.send(can.Message(arbitration_id=0x10000003, is_extended_id=True, data=b"\x09",
                             timestamp=time.time() - 0.5))
        old.send(can.Message(arbitration_id=0x10000002, is_extended_id=True, data=b"\x08",
                             timestamp=time.time()))
        frames = _collect(old, 0.3)
    finally:
        old.shutdown()
    assert not [m for m in frames if m.arbitration_id in (0x20000001, 0x20000003)]
    assert [bytes(m.data) for m in frames if m.arbitration_id == 0x20000002] == [b"\x08"]
    assert fw.frames_stale == 2
    assert fw.liveness.stalled(start, time.perf_counter())
    assert start < fw.liveness.last_drop() < time.perf_counter()


def test_a_command_step_is_not_measured_across_a_frame_the_simulator_dropped():
    # The command statistics measure what the driver sent (its step cap): a frame the simulator
    # dropped because the host starved it breaks the chain, so the step to the next frame is not
    # counted as one the driver sent.
    from rospy_control.devices.mit import codec as mit
    from rospy_control.hardware_config.document import parse_hardware_xml
    from rospy_control.middleware.configuration import read_configuration
    from middleware_testutil import motor_xml
    motor = read_configuration(parse_hardware_xml(motor_xml(1))).unit("m1")   # can_id 1
    fw = SimulatedFirmware("bus", [motor], SimulationSettings())
    channel = f"drop-{uuid.uuid4().hex[:8]}"
    fw.start(channel)
    bus = can.Bus(interface="virtual", channel=channel, preserve_timestamps=True)
    lim = motor.limits

    def send(data: bytes, age: float = 0.0) -> None:
        bus.send(can.Message(arbitration_id=1, is_extended_id=False, data=data, timestamp=time.time() - age))
        _collect(bus, 0.05)

    try:
        send(mit.ENTER_MOTOR_MODE)
        send(mit.pack_command(0.00, 0.0, 20.0, 0.5, 0.0, lim))
        send(mit.pack_command(0.02, 0.0, 20.0, 0.5, 0.0, lim))
        send(mit.pack_command(0.04, 0.0, 20.0, 0.5, 0.0, lim), age=0.5)     # dropped: 0.5 s old
        send(mit.pack_command(0.06, 0.0, 20.0, 0.5, 0.0, lim))
        send(mit.pack_command(0.08, 0.0, 20.0, 0.5, 0.0, lim))
        stats = fw.motors[1].cstats
        assert fw.frames_stale == 1
        assert stats.max_step == pytest.approx(0.02, abs=2e-3)                # never 0.04 across the drop
        assert stats.last_p_des == pytest.approx(0.08, abs=2e-3)
    finally:
        bus.shutdown()
        fw.stop()


def test_joint_model_reads_the_simulation_element_joint_side():
    from rospy_control.hardware_config.document import ElementInfo

    unit = EchoUnit("c", 3)
    unit.direction = -1
    unit.zero_offset = 0.5
    unit.simulation = ElementInfo("simulation", {"inertia": "0.02", "stop_min": "-1", "stop_max": "2",
                                                 "initial_position": "0.25"}, "arm.xml", 7, ())
    joint = peers.joint_model(unit)
    assert joint.inertia == 0.02
    assert (joint.stop_min, joint.stop_max) == (-1.5, 1.5)
    assert joint.p == pytest.approx(0.25)
    unit.simulation = ElementInfo("simulation", {"inertia": "-1"}, "arm.xml", 9, ())
    with pytest.raises(Exception, match="inertia"):
        peers.joint_model(unit)


class RoutedDevice(EchoDevice):
    """Reads 29-bit ids 0x0100_xx<id> whatever xx is (data carried in the id, as RobStride's torque)."""

    def listen_ids(self):
        return []

    def listen_routes(self):
        return [(0x1F0000FF, 0x01000000 | self.node)]

    def _handle(self, msg, state, now):
        data2_low = (msg.arbitration_id >> 8) & 0xFF
        return [self._message(0x20000000 | self.node, bytes([data2_low]), extended=True)]


def routed_peer_for_unit(unit: EchoUnit):
    dev = RoutedDevice(unit.name, unit.node)
    peer = SimulatedProtocolMotor(dev, peers.joint_model(unit))
    peer.listen_routes = dev.listen_routes
    return peer


def test_peers_may_read_29_bit_ids_by_mask(monkeypatch):
    monkeypatch.setitem(peers.PEER_FACTORIES, "EchoUnit", f"{__name__}:routed_peer_for_unit")
    fw = SimulatedFirmware("bus", [EchoUnit("a", 1), EchoUnit("b", 2)], SimulationSettings())
    channel = f"peers-{uuid.uuid4().hex[:8]}"
    fw.start(channel)
    bus = can.Bus(interface="virtual", channel=channel)
    try:
        for data2 in (0x7FFF, 0x1234):
            bus.send(can.Message(arbitration_id=0x01000002 | (data2 << 8), is_extended_id=True, data=b""))
        frames = _collect(bus, 0.3)
        assert [bytes(m.data) for m in frames if m.arbitration_id == 0x20000002] == [b"\xff", b"\x34"]
        assert not [m for m in frames if m.arbitration_id == 0x20000001]
    finally:
        bus.shutdown()
        fw.stop()
