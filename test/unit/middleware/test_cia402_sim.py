"""Conversations with the simulated CiA 402 drive (simulation/cia402.py), frame by frame, built and
decoded with the codec (protocols/cia402.py)."""
from __future__ import annotations

import math
import struct
from typing import List, Optional

import can
import pytest

from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State
from rospy_control.simulator.cia402 import SimulatedCia402Drive

DT = 0.0005
NODE = 3


def msg(frame: co.Frame) -> can.Message:
    return can.Message(arbitration_id=frame.arbitration_id, is_extended_id=False, data=frame.data)


class Bus:
    """The host side: sends frames to the drive at a simulated time and keeps what it answers."""

    def __init__(self, **kw) -> None:
        self.drive = SimulatedCia402Drive("d", NODE, **kw)
        self.now = 0.0
        self.rx: List[can.Message] = self.drive.tick(0.0, DT)

    def send(self, frame: co.Frame, after: float = 0.0) -> List[can.Message]:
        self.now += after
        out = self.drive.handle(msg(frame), self.now, DT)
        self.rx += out
        return out

    def tick(self, after: float) -> List[can.Message]:
        self.now += after
        out = self.drive.tick(self.now, DT)
        self.rx += out
        return out

    def sdo(self, transfer) -> Optional[bytes]:
        frame = transfer.start()
        while frame is not None:
            out = [m for m in self.send(frame) if m.arbitration_id == 0x580 + NODE]
            assert len(out) == 1, out
            frame = transfer.feed(bytes(out[0].data))
        return getattr(transfer, "data", None)

    def read(self, index: int, sub: int = 0, signed: bool = False) -> int:
        data = self.sdo(co.SdoUpload(NODE, index, sub))
        assert data is not None
        return int.from_bytes(data, "little", signed=signed)

    def write(self, index: int, sub: int, value: int, size: int) -> None:
        self.sdo(co.SdoDownload(NODE, index, sub, value.to_bytes(size, "little", signed=value < 0)))

    def state(self) -> str:
        return co.decode_statusword(self.read(0x6041))


def test_bootup_message_then_pre_operational_and_switch_on_disabled():
    b = Bus()
    assert [(m.arbitration_id, bytes(m.data)) for m in b.rx] == [(0x703, b"\x00")]
    assert b.drive.nmt_state == co.NMT_PRE_OP
    assert b.state() == State.SWITCH_ON_DISABLED


def test_c2_c3_byte_exact_answers():
    b = Bus()
    out = b.send(co.sdo_download_request(NODE, 0x6060, 0, b"\x08"))
    assert [(m.arbitration_id, bytes(m.data).hex().upper()) for m in out] == [(0x583, "6060600000000000")]
    for cw in (0x06, 0x07, 0x0F):
        b.write(0x6040, 0, cw, 2)
    out = b.send(co.sdo_upload_request(NODE, 0x6041))
    assert [(m.arbitration_id, bytes(m.data).hex().upper()) for m in out] == [(0x583, "4B41600037120000")]
    # 0x1237: operation enabled (0x27), voltage enabled, remote, and bit 12 "follows the command" in CSP
    assert co.decode_statusword(0x1237) == State.OPERATION_ENABLED


def test_nmt_states_and_heartbeat_at_1017_period():
    b = Bus(heartbeat_ms=100)
    beats = []
    for _ in range(50):
        beats += [m for m in b.tick(0.01) if m.arbitration_id == 0x703]
    assert [bytes(m.data) for m in beats] == [b"\x7f"] * 5
    b.send(co.nmt_command(co.NMT_START, NODE))
    beats = [m for _ in range(20) for m in b.tick(0.01)]
    assert [bytes(m.data) for m in beats if m.arbitration_id == 0x703] == [b"\x05"] * 2
    b.send(co.nmt_command(co.NMT_STOP, 0))  # broadcast
    assert b.send(co.sdo_upload_request(NODE, 0x6041)) == [], "STOPPED answers no SDO"
    beats = [m for _ in range(10) for m in b.tick(0.01)]
    assert [bytes(m.data) for m in beats] == [b"\x04"]
    b.send(co.nmt_command(co.NMT_PRE_OPERATIONAL, NODE))
    assert b.drive.nmt_state == co.NMT_PRE_OP
    b.write(0x1017, 0, 20, 2)
    beats = [m for _ in range(10) for m in b.tick(0.01)]
    assert len(beats) == 5
    assert b.send(co.nmt_command(co.NMT_START, 9)) == [] and b.drive.nmt_state == co.NMT_PRE_OP


def test_reset_node_and_reset_communication_boot_again():
    b = Bus(heartbeat_ms=0)
    b.write(0x1017, 0, 50, 2)
    b.write(0x6060, 0, co.CSV, 1)
    out = b.send(co.nmt_command(co.NMT_RESET_COMMUNICATION, NODE))
    assert [(m.arbitration_id, bytes(m.data)) for m in out] == [(0x703, b"\x00")]
    assert b.read(0x1017) == 0 and b.read(0x6060, signed=True) == co.CSV
    b.send(co.nmt_command(co.NMT_RESET_NODE, NODE))
    assert b.read(0x6060) == 0
    assert b.drive.bootups == 3


def test_sdo_segmented_upload_of_device_name_and_download_of_a_string():
    b = Bus()
    name = b.sdo(co.SdoUpload(NODE, 0x1008))
    assert name == b"rospy_control simulated CiA 402 drive"
    text = b"a text longer than four bytes, in segments"
    b.sdo(co.SdoDownload(NODE, 0x2000, 0, text))
    assert b.sdo(co.SdoUpload(NODE, 0x2000)) == text


def test_sdo_aborts():
    b = Bus()
    cases = [
        (co.SdoUpload(NODE, 0x6093), 0x06020000),   # position factor: not in this drive
        (co.SdoUpload(NODE, 0x1018, 9), 0x06090011),
        (co.SdoDownload(NODE, 0x6041, 0, b"\x00\x00"), 0x06010002),
        (co.SdoDownload(NODE, 0x6040, 0, b"\x06"), 0x06070010),
        (co.SdoDownload(NODE, 0x6060, 0, b"\x07"), 0x06090030),   # IP is not supported
        (co.SdoDownload(NODE, 0x1A00, 1, struct.pack("<I", 0x60410010)), 0x06010000),  # mapping active
        (co.SdoDownload(NODE, 0x1008, 0, b"renamed drive"), 0x06010002),
    ]
    for transfer, code in cases:
        with pytest.raises(co.SdoAbortError) as e:
            b.sdo(transfer)
        assert e.value.code == code, (transfer.index, hex(e.value.code))
    # a segment with the wrong toggle bit
    b.send(co.sdo_upload_request(NODE, 0x1008))
    out = b.send(co.Frame(0x603, bytes((0x70,)) + bytes(7)))
    assert co.parse_sdo_response(bytes(out[0].data)).code == 0x05030000


def test_state_machine_every_transition_and_paths():
    b = Bus()
    seen = [b.state()]
    for cw, expected in co.path_to_operation_enabled(seen[0]):
        b.write(0x6040, 0, cw, 2)
        seen.append(b.state())
        assert seen[-1] == expected
    assert seen[-1] == State.OPERATION_ENABLED
    b.write(0x6040, 0, 0x07, 2)
    assert b.state() == State.SWITCHED_ON          # disable operation
    b.write(0x6040, 0, 0x06, 2)
    assert b.state() == State.READY_TO_SWITCH_ON   # shutdown
    b.write(0x6040, 0, 0x0F, 2)
    assert b.state() == State.OPERATION_ENABLED    # 3+4 at once
    b.write(0x6040, 0, 0x02, 2)
    assert b.state() == State.QUICK_STOP_ACTIVE
    b.write(0x6040, 0, 0x0F, 2)
    assert b.state() == State.OPERATION_ENABLED    # transition 16
    b.write(0x6040, 0, 0x00, 2)
    assert b.state() == State.SWITCH_ON_DISABLED   # disable voltage


def test_injected_fault_emcy_fault_state_and_reset_on_rising_edge():
    b = Bus()
    b.send(co.nmt_command(co.NMT_START, NODE))
    for cw, _ in co.path_to_operation_enabled(b.state()):
        b.write(0x6040, 0, cw, 2)
    b.drive.inject_fault(0x4310, register=0x08, manufacturer=b"\x01\x02", now=b.now)
    out = b.tick(0.001)
    emcy = [co.parse_emcy(m.arbitration_id, bytes(m.data)) for m in out if m.arbitration_id == 0x083]
    assert len(emcy) == 1
    assert (emcy[0].code, emcy[0].register, emcy[0].text) == (0x4310, 0x09, "Excess temperature drive")
    assert emcy[0].manufacturer == b"\x01\x02\x00\x00\x00"
    assert b.state() == State.FAULT_REACTION_ACTIVE
    b.tick(0.01)
    assert b.state() == State.FAULT
    assert b.read(0x603F) == 0x4310 and b.read(0x1001) == 0x09
    b.write(0x6040, 0, 0x80, 2)   # previous controlword 0x0F has bit 7 low: a rising edge
    assert b.state() == State.SWITCH_ON_DISABLED
    resets = [co.parse_emcy(m.arbitration_id, bytes(m.data)) for m in b.rx if m.arbitration_id == 0x083]
    assert resets[-1].code == 0 and resets[-1].text == "Error reset or no error"
    assert b.read(0x603F) == 0


def test_fault_reset_needs_the_edge_and_persistent_fault_stays():
    b = Bus()
    b.write(0x6040, 0, 0x80, 2)   # bit 7 high before the fault
    b.drive.inject_fault(0x2310, persistent=True, now=b.now)
    b.tick(0.01)
    b.write(0x6040, 0, 0x80, 2)   # still high: no edge
    assert b.state() == State.FAULT
    for cw, _ in co.path_to_operation_enabled(State.FAULT)[:2]:
        b.write(0x6040, 0, cw, 2)
    assert b.state() == State.FAULT, "the cause is still there"
    b.drive.remove_fault()
    for cw, _ in co.path_to_operation_enabled(State.FAULT):
        b.write(0x6040, 0, cw, 2)
    assert b.state() == State.OPERATION_ENABLED


def test_sync_sends_tpdos_and_applies_rpdos_in_csp():
    b = Bus(counts_per_rev=4096, gear_ratio=1.0)
    b.send(co.nmt_command(co.NMT_START, NODE))
    assert b.send(co.sync_frame()) != []
    target = 1024  # a quarter turn
    rpdo1, rpdo2 = co.rpdo_cob_id(1, NODE), co.rpdo_cob_id(2, NODE)
    b.send(co.Frame(rpdo2, struct.pack("<ii", target, 0)))
    b.send(co.Frame(rpdo1, struct.pack("<Hb", 0x06, co.CSP)))   # type 255: applied at once
    assert b.drive.state == State.READY_TO_SWITCH_ON
    b.send(co.Frame(rpdo1, struct.pack("<Hb", 0x0F, co.CSP)))
    assert b.drive.state == State.OPERATION_ENABLED
    tpdo = {}
    for _ in range(100):
        for m in b.send(co.sync_frame(), after=0.01):
            tpdo[m.arbitration_id] = bytes(m.data)
    pos, vel = struct.unpack("<ii", tpdo[0x283])
    assert pos == pytest.approx(target, abs=3)
    assert abs(vel) < 50
    # TPDO1 is event-driven (type 255): sent when the statusword changes and every 100 ms
    last_tpdo1 = [bytes(m.data) for m in b.rx if m.arbitration_id == 0x183][-1]
    sw, mode = struct.unpack("<Hb", last_tpdo1)
    assert co.decode_statusword(sw) == State.OPERATION_ENABLED and mode == co.CSP
    torque, err = struct.unpack("<hH", tpdo[0x383])
    assert err == 0
    assert b.drive.joint_position() == pytest.approx(math.pi / 2, abs=0.005)


def test_synchronous_rpdo_waits_for_sync_and_short_rpdo_gives_emcy_8210():
    b = Bus()
    b.send(co.nmt_command(co.NMT_START, NODE))
    b.send(co.Frame(co.rpdo_cob_id(2, NODE), struct.pack("<ii", 500, 7)))
    assert b.read(0x607A) == 0, "type 1: taken over at the next SYNC"
    b.send(co.sync_frame())
    assert b.read(0x607A) == 500 and b.read(0x60FF) == 7
    out = b.send(co.Frame(co.rpdo_cob_id(2, NODE), b"\x01\x02"))
    e = co.parse_emcy(out[0].arbitration_id, bytes(out[0].data))
    assert e.code == 0x8210 and e.text == "PDO not processed due to length error"


def test_pdo_not_sent_in_pre_operational():
    b = Bus()
    assert b.send(co.sync_frame()) == []
    assert b.drive.syncs == 1


def test_csv_and_cst_move_the_joint():
    b = Bus(counts_per_rev=1000, gear_ratio=2.0, rated_torque=0.5)
    b.write(0x6060, 0, co.CSV, 1)
    b.write(0x60FF, 0, 1000, 4)   # one motor turn per second = pi rad/s at the joint
    for cw, _ in co.path_to_operation_enabled(b.state()):
        b.write(0x6040, 0, cw, 2)
    b.tick(1.0)
    assert b.drive.v == pytest.approx(math.pi, rel=0.02)
    assert b.read(0x606C, signed=True) == pytest.approx(1000, abs=10)
    b.write(0x6060, 0, co.CST, 1)
    b.write(0x6071, 0, 100, 2)    # 10 % of 0.5 N m at the motor -> 0.1 N m at the joint
    b.tick(0.001)
    assert b.drive.tau == pytest.approx(0.1)
    assert b.read(0x6077, signed=True) == 100


def test_stale_target_velocity_moves_the_motor_on_enable():
    # ros_canopen #111: the driver must write a zero target before enabling; the simulation does
    # not forgive it, so a test of the driver can catch the jerk
    b = Bus()
    b.write(0x6060, 0, co.CSV, 1)
    b.write(0x60FF, 0, 4096, 4)
    for cw, _ in co.path_to_operation_enabled(b.state()):
        b.write(0x6040, 0, cw, 2)
    b.tick(0.2)
    assert abs(b.drive.v) > 1.0


def test_pdo_remapping_through_sdo_as_canopen_saves_it():
    b = Bus()
    cob = co.tpdo_cob_id(4, NODE)
    b.write(0x1803, 1, cob | co.PDO_INVALID, 4)
    b.write(0x1A03, 0, 0, 1)
    b.write(0x1A03, 1, co.pdo_map_entry(0x6064, 0, 32), 4)
    b.write(0x1A03, 2, co.pdo_map_entry(0x6041, 0, 16), 4)
    b.write(0x1A03, 0, 2, 1)
    b.write(0x1803, 2, 1, 1)
    b.write(0x1803, 1, cob, 4)
    b.send(co.nmt_command(co.NMT_START, NODE))
    out = {m.arbitration_id: bytes(m.data) for m in b.send(co.sync_frame())}
    assert len(out[cob]) == 6
    with pytest.raises(co.SdoAbortError) as e:
        b.write(0x1A03, 0, 0, 1)
        b.write(0x1A03, 1, co.pdo_map_entry(0x1008, 0, 32), 4)
        b.write(0x1A03, 0, 1, 1)
    assert e.value.code == 0x06040041
    with pytest.raises(co.SdoAbortError) as e:
        for s in range(1, 4):
            b.write(0x1A03, s, co.pdo_map_entry(0x6064, 0, 32), 4)
        b.write(0x1A03, 0, 3, 1)
    assert e.value.code == 0x06040042


def test_never_boots_and_silent():
    b = SimulatedCia402Drive("d", NODE, heartbeat_ms=10)
    b.never_boots = True
    assert b.tick(0.0) == [] and b.tick(1.0) == []
    assert b.handle(msg(co.sdo_upload_request(NODE, 0x6041)), 1.0, DT) == []
    bus = Bus(heartbeat_ms=10)
    bus.drive.fault = "silent"
    assert bus.tick(0.5) == [] and bus.send(co.sdo_upload_request(NODE, 0x6041)) == []
