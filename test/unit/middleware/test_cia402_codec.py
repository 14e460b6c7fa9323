"""Byte-exact tests of the CiA 301 / CiA 402 codec (rospy_control.devices.cia402.codec).

C1-C7 are the vectors of the device-protocol spec (section 8, node 3)."""
from __future__ import annotations

import math

import pytest

from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State


def test_c1_nmt_start_bootup_and_heartbeat_operational():
    assert str(co.nmt_command(co.NMT_START, 3)) == "000#0103"
    assert str(co.bootup_frame(3)) == "703#00"
    assert str(co.heartbeat_frame(3, co.NMT_OPERATIONAL)) == "703#05"
    assert co.parse_heartbeat(0x703, b"\x05") == (3, co.NMT_OPERATIONAL)
    assert co.parse_heartbeat(0x703, b"\x85") == (3, co.NMT_OPERATIONAL)  # toggle bit dropped
    assert co.parse_nmt(b"\x01\x03") == (1, 3)
    assert str(co.nmt_command(co.NMT_RESET_NODE, 0)) == "000#8100"


def test_c2_sdo_write_mode_csp_and_response():
    assert str(co.sdo_download_request(3, 0x6060, 0, bytes((co.CSP,)))) == "603#2F60600008000000"
    assert str(co.sdo_download_response(3, 0x6060, 0)) == "583#6060600000000000"
    assert co.parse_sdo_response(bytes.fromhex("6060600000000000")) == co.SdoResponse("download", 0x6060, 0)


def test_c3_sdo_read_statusword_operation_enabled():
    assert str(co.sdo_upload_request(3, 0x6041)) == "603#4041600000000000"
    resp = co.sdo_upload_response(3, 0x6041, 0, (0x0237).to_bytes(2, "little"))
    assert str(resp) == "583#4B41600037020000"
    t = co.SdoUpload(3, 0x6041)
    t.start()
    assert t.feed(resp.data) is None
    assert int.from_bytes(t.data, "little") == 0x0237
    assert co.decode_statusword(0x0237) == State.OPERATION_ENABLED


def test_c4_c5_controlword_and_target_position():
    assert str(co.sdo_download_request(3, 0x6040, 0, (0x06).to_bytes(2, "little"))) == "603#2B40600006000000"
    assert str(co.sdo_download_request(3, 0x607A, 0, (10000).to_bytes(4, "little", signed=True))) \
        == "603#237A600010270000"
    assert str(co.sdo_download_request(3, 0x1234, 1, b"\x01\x02\x03")) == "603#2734120101020300"


def test_c6_sync():
    f = co.sync_frame()
    assert (f.arbitration_id, f.data) == (0x080, b"")
    assert co.sync_frame(5).data == b"\x05"
    with pytest.raises(co.Cia402Error, match="SYNC counter 241"):
        co.sync_frame(241)


def test_c7_emcy_decode_code_register_text():
    e = co.parse_emcy(0x083, bytes.fromhex("1081110000000000"))
    assert (e.node, e.code, e.register) == (3, 0x8110, 0x11)
    assert e.text == "CAN overrun (objects lost)"
    assert e.register_names == ["generic error", "communication error"]
    assert str(co.emcy_frame(3, 0x8110, 0x11)) == "083#1081110000000000"
    assert "0x8110 CAN overrun" in str(e)
    assert co.emcy_text(0x2311) == "Current, CANopen device output side - generic (0x2311)"
    assert co.emcy_text(0xFF42) == "Device specific - generic error (0xFF42)"
    assert co.parse_emcy(0x083, bytes.fromhex("000000")).text == "Error reset or no error"


def test_every_statusword_state():
    cases = {0x0000: State.NOT_READY_TO_SWITCH_ON, 0x0250: State.SWITCH_ON_DISABLED,
             0x0231: State.READY_TO_SWITCH_ON, 0x0233: State.SWITCHED_ON, 0x0237: State.OPERATION_ENABLED,
             0x0217: State.QUICK_STOP_ACTIVE, 0x021F: State.FAULT_REACTION_ACTIVE, 0x0218: State.FAULT,
             0x0008: State.FAULT, 0x1637: State.OPERATION_ENABLED}
    for sw, state in cases.items():
        assert co.decode_statusword(sw) == state, hex(sw)
    assert co.STATE_NAMES[State.OPERATION_ENABLED] == "Operation enabled"
    with pytest.raises(co.Cia402Error, match="statusword 0x0001"):
        co.decode_statusword(0x0001)


def test_controlword_commands():
    assert co.CONTROLWORDS[co.Command.SHUTDOWN] == 0x06
    assert co.decode_controlword(0x06) == co.Command.SHUTDOWN
    assert co.decode_controlword(0x0E) == co.Command.SHUTDOWN
    assert co.decode_controlword(0x07) == co.Command.SWITCH_ON
    assert co.decode_controlword(0x07, State.OPERATION_ENABLED) == co.Command.DISABLE_OPERATION
    assert co.decode_controlword(0x0F) == co.Command.ENABLE_OPERATION
    assert co.decode_controlword(0x00) == co.Command.DISABLE_VOLTAGE
    assert co.decode_controlword(0x0D) == co.Command.DISABLE_VOLTAGE
    assert co.decode_controlword(0x02) == co.Command.QUICK_STOP
    assert co.decode_controlword(0x0B) == co.Command.QUICK_STOP
    assert co.decode_controlword(0x80) == co.Command.DISABLE_VOLTAGE


@pytest.mark.parametrize("start,controlwords,final", [
    (State.SWITCH_ON_DISABLED, [0x06, 0x07, 0x0F], State.OPERATION_ENABLED),
    (State.NOT_READY_TO_SWITCH_ON, [0x06, 0x07, 0x0F], State.OPERATION_ENABLED),
    (State.READY_TO_SWITCH_ON, [0x07, 0x0F], State.OPERATION_ENABLED),
    (State.SWITCHED_ON, [0x0F], State.OPERATION_ENABLED),
    (State.OPERATION_ENABLED, [], State.OPERATION_ENABLED),
    (State.QUICK_STOP_ACTIVE, [0x00, 0x06, 0x07, 0x0F], State.OPERATION_ENABLED),
    (State.FAULT, [0x00, 0x80, 0x06, 0x07, 0x0F], State.OPERATION_ENABLED),
    (State.FAULT_REACTION_ACTIVE, [0x00, 0x80, 0x06, 0x07, 0x0F], State.OPERATION_ENABLED),
])
def test_path_to_operation_enabled_from_every_state(start, controlwords, final):
    path = co.path_to_operation_enabled(start)
    assert [cw for cw, _ in path] == controlwords
    if path:
        assert path[-1][1] == final


def test_path_down_to_switch_on_disabled():
    assert co.path_to_switch_on_disabled(State.OPERATION_ENABLED) == [(0x00, State.SWITCH_ON_DISABLED)]
    assert [cw for cw, _ in co.path_to_switch_on_disabled(State.FAULT)] == [0x00, 0x80]
    assert co.path_to_switch_on_disabled(State.SWITCH_ON_DISABLED) == []


def test_modes_of_operation():
    assert [co.MODES[m] for m in ("CSP", "CSV", "CST", "PP", "PV")] == [8, 9, 10, 1, 3]
    assert co.MODE_NAMES[9] == "Cyclic Synchronous Velocity"


def test_object_indices():
    idx = {0x6040, 0x6041, 0x6064, 0x606C, 0x6077, 0x607A, 0x60FF, 0x6071, 0x60B1, 0x60B2, 0x1017, 0x1A00,
           0x1600, 0x1800, 0x1400, 0x6060, 0x6061}
    assert idx <= set(co.OBJECTS)
    assert co.object_info(0x6077).dtype == "INTEGER16"
    with pytest.raises(co.Cia402Error, match="object 0x7777"):
        co.object_info(0x7777)


def test_pdo_cob_ids_and_mapping_entries():
    assert [co.tpdo_cob_id(n, 3) for n in (1, 2, 3, 4)] == [0x183, 0x283, 0x383, 0x483]
    assert [co.rpdo_cob_id(n, 3) for n in (1, 2, 3, 4)] == [0x203, 0x303, 0x403, 0x503]
    assert co.pdo_map_entry(0x6041, 0, 16) == 0x60410010
    assert co.parse_pdo_map_entry(0x607A0020) == (0x607A, 0, 32)
    mapping = [(0x6041, 0, 16), (0x6064, 0, 32), (0x6077, 0, 16)]
    data = co.pack_pdo(mapping, {(0x6041, 0): 0x0237, (0x6064, 0): -10000, (0x6077, 0): -5})
    assert data.hex().upper() == "3702F0D8FFFFFBFF"
    assert co.unpack_pdo(mapping, data) == {(0x6041, 0): 0x0237, (0x6064, 0): -10000, (0x6077, 0): -5}
    with pytest.raises(co.Cia402Error, match="shorter than its mapping"):
        co.unpack_pdo(mapping, data[:5])
    with pytest.raises(co.Cia402Error, match="no value for mapped object 0x6064:00"):
        co.pack_pdo(mapping, {(0x6041, 0): 1})
    with pytest.raises(co.Cia402Error, match="does not fit 16 bits"):
        co.pack_pdo([(0x6041, 0, 16)], {(0x6041, 0): 70000})


def test_sdo_segmented_download_conversation():
    payload = b"0123456789ABCDEF"  # 16 bytes: segments of 7, 7, 2
    t = co.SdoDownload(3, 0x2000, 1, payload)
    first = t.start()
    assert str(first) == "603#2100200110000000"
    seg1 = t.feed(bytes.fromhex("6000200100000000"))
    assert seg1 is not None and seg1.data == bytes((0x00,)) + b"0123456"
    seg2 = t.feed(bytes((0x20,)) + bytes(7))
    assert seg2 is not None and seg2.data == bytes((0x10,)) + b"789ABCD"
    seg3 = t.feed(bytes((0x30,)) + bytes(7))
    # 2 bytes, 5 unused (n=5 -> bits 3-1 = 101), last segment, toggle 0
    assert seg3 is not None and seg3.data == bytes((0x0B,)) + b"EF" + bytes(5)
    assert t.feed(bytes((0x20,)) + bytes(7)) is None
    # the server's view of the same frames
    req = co.parse_sdo_request(seg3.data)
    assert (req.kind, req.data, req.toggle, req.last) == ("download_segment", b"EF", 0, True)
    assert co.parse_sdo_request(first.data).size == 16


def test_sdo_segmented_upload_conversation_and_toggle_error():
    t = co.SdoUpload(3, 0x1008)
    assert str(t.start()) == "603#4008100000000000"
    req = t.feed(co.sdo_upload_segmented_response(3, 0x1008, 0, 9).data)
    assert req is not None and req.data == bytes((0x60,)) + bytes(7)
    req = t.feed(co.sdo_upload_segment_response(3, 0, b"rospy_c", False).data)
    assert req is not None and req.data == bytes((0x70,)) + bytes(7)
    assert t.feed(co.sdo_upload_segment_response(3, 1, b"on", True).data) is None
    assert t.data == b"rospy_con"
    t = co.SdoUpload(3, 0x1008)
    t.start()
    t.feed(co.sdo_upload_segmented_response(3, 0x1008, 0, 9).data)
    with pytest.raises(co.Cia402Error, match="toggle 1"):
        t.feed(co.sdo_upload_segment_response(3, 1, b"rospy_c", False).data)


def test_sdo_abort_codes_and_texts():
    f = co.sdo_abort_frame(3, 0x6099, 0, 0x06020000, server=True)
    assert str(f) == "583#8099600000000206"
    t = co.SdoUpload(3, 0x6099)
    t.start()
    with pytest.raises(co.SdoAbortError) as e:
        t.feed(f.data)
    assert e.value.code == 0x06020000
    assert ("node 3 0x6099:00 aborted with 0x06020000: Object does not exist in the object dictionary"
            in str(e.value))
    assert co.sdo_abort_text(0x05030000) == "Toggle bit not alternated"
    assert co.sdo_abort_text(0x12345678).startswith("unknown abort code")
    with pytest.raises(co.SdoAbortError, match="0x05040001"):
        co.parse_sdo_request(bytes((0xE0,)) + bytes(7))


def test_bad_node_and_expedited_length_are_named():
    with pytest.raises(co.Cia402Error, match="node id 128"):
        co.sdo_upload_request(128, 0x6041)
    with pytest.raises(co.Cia402Error, match="1-4 bytes, got 5"):
        co.sdo_download_request(3, 0x6040, 0, bytes(5))
    with pytest.raises(co.Cia402Error, match="unknown NMT command 0x03"):
        co.nmt_command(3, 1)


def test_unit_scale_counts_rad_and_torque_per_mille():
    s = co.UnitScale(counts_per_rev=4096, gear_ratio=10.0, rated_torque=0.5)
    assert s.counts_to_rad(40960) == pytest.approx(2 * math.pi)
    assert s.rad_to_counts(math.pi) == 20480
    assert s.rad_per_s_to_counts_per_s(-2 * math.pi) == -40960
    assert s.counts_per_s_to_rad_per_s(4096) == pytest.approx(2 * math.pi / 10)
    # 1000 per mille = rated motor torque 0.5 N m -> 5 N m at the joint
    assert s.permille_to_nm(1000) == pytest.approx(5.0)
    assert s.nm_to_permille(-2.5) == -500
    with pytest.raises(ValueError, match=r"torque=200.0 N m is outside what 0x6071 can encode "
                                         r"\(\+-163.835 N m"):
        s.nm_to_permille(200.0)
    with pytest.raises(ValueError, match="position=nan"):
        s.rad_to_counts(float("nan"))
    with pytest.raises(ValueError, match="counts_per_rev=0"):
        co.UnitScale(0)
    with pytest.raises(ValueError, match="gear_ratio=0"):
        co.UnitScale(100, 0)
    neg = co.UnitScale(1000, -2.0)
    assert neg.rad_to_counts(1.0) == -318


def test_sync_period_must_equal_the_interpolation_period():
    assert co.interpolation_period_s(10, -3) == pytest.approx(0.010)
    co.check_sync_period(0.010, 10, -3)
    with pytest.raises(ValueError, match=r"node 3: SYNC period 4 ms differs from the drive's interpolation "
                                         r"time period 0x60C2 = 10 x 10\^-3 s = 10 ms"):
        co.check_sync_period(0.004, 10, -3, node=3)
