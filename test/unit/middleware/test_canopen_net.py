"""End to end through the ``canopen`` library: a RemoteNode loaded from config/cia402_drive.eds, on a
network built on an existing python-can ``virtual`` bus that this test reads itself (never connect()
nor disconnect()), talking to the simulated CiA 402 drive on the same virtual channel."""
from __future__ import annotations

import os
import sys
import threading
import time
from typing import Any, Callable, List

import can
import pytest

from rospy_control.exceptions import CommunicationTimeout, ConfigError
from rospy_control.devices.cia402 import canopen_net
from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State
from rospy_control.simulator.cia402 import SimulatedCia402Drive

canopen = pytest.importorskip("canopen", reason="tools/bootstrap.sh installs canopen into .ws/venv")

EDS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config", "cia402_drive.eds")
NODE = 3
TIMEOUT = 5.0   # generous: a stalled 2-core host


class DriveRunner:
    """The simulated drive on its own bus and thread, as a device on the wire."""

    def __init__(self, channel: str, drive: SimulatedCia402Drive) -> None:
        self.drive = drive
        self.lock = threading.Lock()
        self.bus = can.Bus(interface="virtual", channel=channel, receive_own_messages=False)
        self._running = True
        self.error: List[BaseException] = []
        self.thread = threading.Thread(target=self._run, name="sim-cia402", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def call(self, fn: Callable[[SimulatedCia402Drive], Any]) -> Any:
        with self.lock:
            return fn(self.drive)

    def _run(self) -> None:
        dt = 0.001
        while self._running:
            try:
                msg = self.bus.recv(0.002)
                with self.lock:
                    now = time.perf_counter()
                    out = self.drive.handle(msg, now, dt) if msg is not None else []
                    out += self.drive.tick(now, dt)
                for m in out:
                    self.bus.send(m)
            except Exception as err:  # noqa: BLE001 - reported by the fixture
                self.error.append(err)
                return

    def stop(self) -> None:
        self._running = False
        self.thread.join(2.0)
        self.bus.shutdown()


class HostReader:
    """The caller's receive path: one thread reading the host bus and feeding the network."""

    def __init__(self, bus: can.BusABC, feed: Callable[[can.Message], None]) -> None:
        self.bus, self.feed = bus, feed
        self._running = True
        self.thread = threading.Thread(target=self._run, name="host-rx", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while self._running:
            msg = self.bus.recv(0.005)
            if msg is not None:
                self.feed(msg)

    def stop(self) -> None:
        self._running = False
        self.thread.join(2.0)


@pytest.fixture
def rig(virtual_channel, request):
    drive = SimulatedCia402Drive("drive", NODE, counts_per_rev=4096, heartbeat_ms=0)
    profile402 = getattr(request, "param", False)
    runner = DriveRunner(virtual_channel, drive)
    host_bus = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    net = canopen_net.CanopenNetwork(host_bus)
    reader = HostReader(host_bus, net.on_message)
    sniffer = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    node = net.add_node(NODE, EDS, where="test", profile402=profile402)
    runner.sniffer = sniffer  # type: ignore[attr-defined]
    yield net, node, runner
    sniffer.shutdown()
    net.close()
    reader.stop()
    runner.stop()
    host_bus.shutdown()
    assert not runner.error, runner.error
    net.check()


def booted(net, runner) -> None:
    runner.start()
    net.reset_and_wait_for_bootup(NODE, TIMEOUT)


def test_bootup_detection_and_nmt_state(rig):
    net, node, runner = rig
    booted(net, runner)
    assert node.nmt.state == "PRE-OPERATIONAL"
    assert net.network.notifier is None, "no second reader: connect() was never called"
    node.nmt.state = "OPERATIONAL"
    deadline = time.monotonic() + TIMEOUT
    while runner.call(lambda d: d.nmt_state) != co.NMT_OPERATIONAL and time.monotonic() < deadline:
        time.sleep(0.01)
    assert runner.call(lambda d: d.nmt_state) == co.NMT_OPERATIONAL


def test_never_booting_drive_gives_an_error_naming_the_node(rig):
    net, node, runner = rig
    runner.call(lambda d: setattr(d, "never_boots", True))
    runner.start()
    with pytest.raises(CommunicationTimeout) as e:
        net.reset_and_wait_for_bootup(NODE, 0.3)
    msg = str(e.value)
    assert "CANopen node 3 sent no boot-up message (0x703: 00) within 0.3 s after NMT reset node" in msg
    assert "node id and bitrate" in msg


def test_sdo_read_write_expedited_segmented_and_abort(rig):
    net, node, runner = rig
    booted(net, runner)
    assert co.decode_statusword(node.sdo["Statusword"].raw) == State.SWITCH_ON_DISABLED
    node.sdo["Modes of operation"].raw = co.CSP
    assert node.sdo[0x6061].raw == co.CSP
    assert node.sdo[0x1008].raw == "rospy_control simulated CiA 402 drive"   # segmented upload
    node.sdo[0x2000].raw = "segmented download through canopen"
    assert runner.call(lambda d: d.get(0x2000)) == b"segmented download through canopen"
    with pytest.raises(canopen.SdoAbortedError) as e:
        node.sdo.upload(0x6093, 0)   # position factor: not in this drive
    assert e.value.code == 0x06020000
    assert co.sdo_abort_text(e.value.code) == "Object does not exist in the object dictionary"
    for cw, expected in co.path_to_operation_enabled(State.SWITCH_ON_DISABLED):
        node.sdo["Controlword"].raw = cw
        assert co.decode_statusword(node.sdo["Statusword"].raw) == expected


def test_heartbeat_consumed_as_liveness(rig):
    net, node, runner = rig
    booted(net, runner)
    assert net.last_heartbeat(NODE) is not None   # the boot-up message
    node.sdo["Producer heartbeat time"].raw = 20
    node.nmt.state = "OPERATIONAL"
    assert node.nmt.wait_for_heartbeat(TIMEOUT) == "OPERATIONAL"
    first = net.last_heartbeat(NODE)
    deadline = time.monotonic() + TIMEOUT
    while net.last_heartbeat(NODE) == first and time.monotonic() < deadline:
        time.sleep(0.01)
    assert net.last_heartbeat(NODE) != first


def test_emcy_reported_with_code_and_text(rig):
    net, node, runner = rig
    booted(net, runner)
    got: List[co.Emcy] = []
    event = threading.Event()

    def on_emcy(err) -> None:
        got.append(canopen_net.emcy_of(NODE, err))
        event.set()

    node.emcy.add_callback(on_emcy)
    runner.call(lambda d: d.inject_fault(0x4310, register=0x08, manufacturer=b"\x2a"))
    assert event.wait(TIMEOUT)
    e = got[0]
    assert (e.code, e.register, e.text) == (0x4310, 0x09, "Excess temperature drive")
    assert "EMCY node 3: 0x4310 Excess temperature drive, error register 0x09" in str(e)
    deadline = time.monotonic() + TIMEOUT
    while co.decode_statusword(node.sdo["Statusword"].raw) != State.FAULT and time.monotonic() < deadline:
        time.sleep(0.01)
    for cw, _ in co.path_to_operation_enabled(State.FAULT):
        node.sdo["Controlword"].raw = cw
    assert co.decode_statusword(node.sdo["Statusword"].raw) == State.OPERATION_ENABLED
    assert node.emcy.active == []   # the drive's "error reset" EMCY cleared canopen's active list


def test_pdo_mapping_from_eds_matches_the_drive_and_tpdos_arrive_on_sync(rig):
    net, node, runner = rig
    booted(net, runner)
    node.tpdo.read(from_od=True)
    node.rpdo.read(from_od=True)
    from_eds = canopen_net.describe_pdos(node)
    node.tpdo.read()
    node.rpdo.read()
    from_drive = canopen_net.describe_pdos(node)
    assert from_eds == from_drive
    assert ("TPDO1 0x183 type 255: 0x6041:00 Statusword (16 bit), "
            "0x6061:00 Modes of operation display (8 bit)") in from_drive
    assert "RPDO2 0x303 type 1: 0x607A:00 Target position (32 bit), 0x60FF:00 Target velocity (32 bit)" \
        in from_drive
    node.nmt.state = "OPERATIONAL"
    runner.call(lambda d: setattr(d, "q", 0.5))
    for _ in range(50):
        net.network.sync.transmit()
        if node.tpdo[2].wait_for_reception(0.1):
            break
    counts = node.tpdo[2]["Position actual value"].raw
    assert counts == round(0.5 * 4096 / (2 * 3.141592653589793))


def test_close_leaves_the_bus_open(virtual_channel):
    bus = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    other = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    try:
        net = canopen_net.CanopenNetwork(bus)
        net.add_node(NODE, EDS)
        net.network.sync.start(0.01)
        net.close()
        net.close()
        bus.send(can.Message(arbitration_id=0x123, is_extended_id=False, data=b"\x01"))
        got = other.recv(1.0)
        while got is not None and got.arbitration_id == 0x080:
            got = other.recv(1.0)
        assert got is not None and got.arbitration_id == 0x123
    finally:
        bus.shutdown()
        other.shutdown()


def test_callback_errors_do_not_escape_the_receive_path_and_are_rechecked(virtual_channel):
    bus = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    try:
        net = canopen_net.CanopenNetwork(bus)

        def broken(can_id, data, timestamp):
            raise RuntimeError("callback bug")

        net.network.subscribe(0x181, broken)
        net.on_message(can.Message(arbitration_id=0x181, is_extended_id=False, data=b"\x00"))
        net.on_message(can.Message(arbitration_id=0x181, is_extended_id=True, data=b"\x00"))  # skipped
        with pytest.raises(RuntimeError, match="callback bug"):
            net.check()
        net.check()  # reported once
    finally:
        bus.shutdown()


def test_missing_canopen_is_one_clear_config_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "canopen", None)
    with pytest.raises(ConfigError) as e:
        canopen_net.CanopenNetwork(object(), what="unit 'shoulder' in arm.xml")
    msg = str(e.value)
    assert msg.startswith("unit 'shoulder' in arm.xml needs the Python package 'canopen'")
    assert "tools/bootstrap.sh" in msg and "pip install" in msg


def test_bad_eds_path_and_node_id_are_named(virtual_channel, tmp_path):
    bus = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    try:
        net = canopen_net.CanopenNetwork(bus)
        with pytest.raises(ConfigError,
                           match="arm.xml:7: object dictionary file 'nope.eds' of CANopen node 3"):
            net.add_node(3, "nope.eds", where="arm.xml:7")
        with pytest.raises(ConfigError, match="node id 200"):
            net.add_node(200, EDS)
        bad = tmp_path / "bad.eds"
        bad.write_text("[1000]\nParameterName=x\nObjectType=0x7\nDataType=0x0007\n")
        with pytest.raises(ConfigError, match="cannot read object dictionary"):
            net.add_node(4, str(bad))
    finally:
        bus.shutdown()


def test_shipped_eds_defaults_equal_the_simulated_drive(virtual_channel):
    od = canopen.import_od(EDS, NODE)
    drive = SimulatedCia402Drive("d", NODE)
    for (index, sub), entry in drive.od.items():
        obj = od[index]
        compound = isinstance(obj, (canopen.objectdictionary.ODRecord, canopen.objectdictionary.ODArray))
        var = obj[sub] if compound else obj
        default = var.default
        expected = entry.default.decode() if isinstance(entry.default, bytes) else entry.default
        assert default == expected, f"0x{index:04X}:{sub:02X} EDS {default!r} != drive {expected!r}"
        assert var.pdo_mappable == entry.pdo, f"0x{index:04X}:{sub:02X} PDOMapping"


def sniffed(runner, count: int, skip=()) -> List[str]:
    """The next ``count`` frames on the wire, in candump notation (ids in ``skip`` left out)."""
    out = []
    while len(out) < count:
        m = runner.sniffer.recv(TIMEOUT)
        assert m is not None, out
        if m.arbitration_id not in skip:
            out.append(f"{m.arbitration_id:03X}#{bytes(m.data).hex().upper()}")
    return out


def test_canopen_sends_and_the_drive_answers_the_spec_vectors_byte_for_byte(rig):
    net, node, runner = rig
    runner.start()
    net.reset_and_wait_for_bootup(NODE, TIMEOUT)
    assert sniffed(runner, 2) == ["000#8103", "703#00"]
    node.sdo[0x6060].raw = co.CSP                                  # C2
    assert sniffed(runner, 2) == ["603#2F60600008000000", "583#6060600000000000"]
    node.sdo[0x6040].raw = 0x06                                    # C4
    assert sniffed(runner, 2) == ["603#2B40600006000000", "583#6040600000000000"]
    node.sdo[0x607A].raw = 10000                                   # C5
    assert sniffed(runner, 2) == ["603#237A600010270000", "583#607A600000000000"]
    node.sdo[0x6040].raw = 0x07
    node.sdo[0x6040].raw = 0x0F
    sniffed(runner, 4)
    node.sdo[0x6041].raw                                           # C3
    assert sniffed(runner, 2) == ["603#4041600000000000", "583#4B41600037120000"]
    node.nmt.state = "OPERATIONAL"                                 # C1
    # the event-driven TPDO1 (statusword) goes out on entering OPERATIONAL
    assert sniffed(runner, 2) == ["000#0103", "183#371208"]
    net.network.sync.transmit()                                    # C6 and the TPDOs it triggers
    frames = sniffed(runner, 3, skip=(0x183,))                     # TPDO1 also comes every 100 ms
    assert frames[0] == "080#" and {f[:3] for f in frames[1:]} == {"283", "383"}


@pytest.mark.parametrize("rig", [True], indirect=True)
def test_canopen_402_state_machine_op_mode_and_fault_reset(rig):
    net, node, runner = rig
    booted(net, runner)
    # a loaded 2-core host: canopen's own 0.4-0.8 s waits are too tight for a test.  Not
    # TIMEOUT_RESET_FAULT: reset_from_fault() always waits it out (its FIXME: the fault stays until
    # the later state change sends the 0x80 edge), and then goes on regardless
    for name in ("TIMEOUT_SWITCH_OP_MODE", "TIMEOUT_SWITCH_STATE_FINAL", "TIMEOUT_SWITCH_STATE_SINGLE",
                 "TIMEOUT_CHECK_TPDO"):
        setattr(node, name, TIMEOUT)
    node.setup_402_state_machine()
    node.nmt.state = "OPERATIONAL"
    node.op_mode = "CYCLIC SYNCHRONOUS VELOCITY"
    assert node.op_mode == "CYCLIC SYNCHRONOUS VELOCITY"
    node.state = "OPERATION ENABLED"
    assert runner.call(lambda d: d.state) == State.OPERATION_ENABLED
    runner.call(lambda d: d.inject_fault(0x2310))
    deadline = time.monotonic() + TIMEOUT
    while node.state != "FAULT" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert node.state == "FAULT"
    node.reset_from_fault()
    assert runner.call(lambda d: d.state) == State.OPERATION_ENABLED
    node.state = "SWITCH ON DISABLED"
    assert runner.call(lambda d: d.state) == State.SWITCH_ON_DISABLED
