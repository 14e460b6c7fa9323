"""The CiA 402 drive unit (``rospy_control/Cia402Drive``) end to end: a real Middleware and CanChannel on a
python-can ``virtual`` bus, the canopen library on the channel's own bus, and the simulated CiA 402 drive
as the simulated firmware's peer.

Everything waits on conditions with generous timeouts (a loaded 2-core host)."""
from __future__ import annotations

import math
import struct
import sys
import threading
import time
from typing import List

import can
import pytest

from rospy_control.testing.sim_rig import sim_of, simulated_middleware
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ControlMode, Middleware
from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.actuator import UnsupportedCommand

from middleware_testutil import drain_bus, wait_until

pytest.importorskip("canopen", reason="tools/bootstrap.sh installs canopen into .ws/venv")

TIMEOUT = 10.0
#: 10000 increments at 4096 per turn (spec vector C5: the target written before enabling)
START_COUNTS = 10000
START_RAD = START_COUNTS * 2.0 * math.pi / 4096


def drive_xml(attrs: str = "", children: str = "", sim: str = 'initial_position="0.0"',
              rate: float = 200.0, second: bool = True) -> str:
    other = ('<unit name="d4" type="rospy_control/Cia402Drive" channel="bus" node_id="4">'
             '<simulation inertia="0.01" damping="0.05" friction="0.02"/></unit>') if second else ""
    return (f'<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="{rate}" '
            'fault_timeout="0.05"><simulation rate="2000"/></channel>'
            f'<unit name="d3" type="rospy_control/Cia402Drive" channel="bus" node_id="3" {attrs}>{children}'
            f'<simulation inertia="0.01" damping="0.05" friction="0.02" {sim}/></unit>{other}</hardware>')


class Sniffer:
    """Every frame on the simulated bus, read by a third party (never by the driver).  Read when asked
    (drain_bus), never by a thread that could lag behind the driver."""

    def __init__(self, mw: Middleware) -> None:
        self.bus = can.Bus(interface="virtual", channel=mw.buses()["bus"].channel,
                           receive_own_messages=False)
        self.frames: List[can.Message] = []

    def _drain(self) -> None:
        drain_bus(self.bus, self.frames)

    def has(self, arb_id: int, data: bytes) -> bool:
        self._drain()
        return any(m.arbitration_id == arb_id and bytes(m.data) == data for m in self.frames)

    def stop(self) -> None:
        self.bus.shutdown()


def started(xml: str, before=None) -> Middleware:
    mw = simulated_middleware(xml, simulate=True)
    if before is not None:
        before(mw)
    mw.start()
    assert wait_until(lambda: all(s.enabled or s.fault for s in mw.snapshot().states.values()), TIMEOUT)
    return mw


def drive_of(mw: Middleware, name: str = "d3"):
    return sim_of(mw).firmware("bus").by_name[name].drive


@pytest.fixture
def mw():
    m = started(drive_xml())
    yield m
    m.shutdown()


def command_until(mw, name, fn, pred, timeout=TIMEOUT) -> bool:
    def step():
        fn()
        return pred(mw.snapshot()[name])
    return wait_until(step, timeout)


def test_start_up_enables_the_drive_through_nmt_sdo_and_the_state_machine(mw):
    for name in ("d3", "d4"):
        s = mw.snapshot()[name]
        assert s.enabled and not s.fault and s.received, s
    d = drive_of(mw)
    assert d.state == co.State.OPERATION_ENABLED
    assert d.nmt_state == co.NMT_OPERATIONAL
    assert d.bootups >= 2                 # its own power-on, then after the driver's NMT reset node
    assert d.get(0x1017) == 100           # heartbeat producer 0.1 s
    assert (d.get(0x60C2, 1), d.get(0x60C2, 2)) == (5, -3)   # 0x60C2 = the channel's 5 ms SYNC period
    assert d.syncs > 0
    unit = mw.unit("d3")
    assert unit.node.nmt.state == "OPERATIONAL"
    assert mw.channels["bus"].thread_errors == 0


def test_targets_are_written_before_enabling_and_the_start_up_frames_are_the_standard_ones():
    """A stale target 0x607A in the drive must not move it (ros_canopen's start-up jerk); the frames
    of the start-up are the CiA 301 ones of the spec's vectors C1, C2, C4, C5, C6."""
    sniff = {}

    def before(m):
        sniff["s"] = Sniffer(m)
        d3 = m.unit("d3")
        d3.set_position(START_RAD)        # the caller holds the measured position: CSP from the start

    xml = drive_xml(sim=f'initial_position="{START_RAD!r}"', second=False)
    mw = simulated_middleware(xml, simulate=True)
    before(mw)
    drive = drive_of(mw)
    drive.od[(0x607A, 0)].value = -50000                  # a stale target left in the drive
    drive.od[(0x607A, 0)].default = -50000
    mw.start()
    try:
        s = sniff["s"]
        assert wait_until(lambda: mw.snapshot()["d3"].enabled, TIMEOUT), mw.snapshot()["d3"]
        assert abs(mw.snapshot()["d3"].position - START_RAD) < 1e-3
        assert wait_until(lambda: s.has(0x080, b""), TIMEOUT)                                    # C6
        assert s.has(0x000, bytes.fromhex("0103"))                                              # C1
        assert s.has(0x703, b"\x00")                                                            # C1
        assert s.has(0x603, bytes.fromhex("2F60600008000000"))                                  # C2
        assert s.has(0x603, bytes.fromhex("2B40600006000000"))                                  # C4
        assert s.has(0x603, bytes.fromhex("237A600010270000"))                                  # C5
        assert s.has(0x603, bytes.fromhex("4041600000000000"))                                  # C3
        # the RPDO2 of the cycle carries the held position and 0 rad/s, byte for byte
        assert wait_until(lambda: s.has(0x303, struct.pack("<ii", START_COUNTS, 0)), TIMEOUT)
        assert abs(drive.q - START_RAD) < 1e-3   # it never moved towards the stale target
        s.stop()
    finally:
        mw.shutdown()


def test_position_velocity_effort_modes_switch_and_confirm(mw):
    unit = mw.unit("d3")
    drive = drive_of(mw)
    assert command_until(mw, "d3", lambda: unit.set_command(ControlMode.POSITION, 0.8),
                         lambda s: abs(s.position - 0.8) < 0.01 and s.mode == ControlMode.POSITION)
    assert drive.get(0x6061) == co.CSP
    assert unit.mode_confirmed(ControlMode.POSITION)
    assert command_until(mw, "d3", lambda: unit.set_command(ControlMode.VELOCITY, -1.0),
                         lambda s: abs(s.velocity + 1.0) < 0.1 and s.mode == ControlMode.VELOCITY)
    assert drive.get(0x6061) == co.CSV
    assert command_until(mw, "d3", lambda: unit.set_command(ControlMode.EFFORT, 0.2),
                         lambda s: s.mode == ControlMode.EFFORT and abs(s.effort - 0.2) < 0.01)
    assert drive.get(0x6061) == co.CST
    assert drive.get(0x6071) == 200                       # 0.2 N m = 200 per mille of 1 N m
    assert command_until(mw, "d3", lambda: unit.request_mode(ControlMode.POSITION),
                         lambda s: s.mode == ControlMode.POSITION and abs(s.velocity) < 0.05)
    with pytest.raises(UnsupportedCommand):
        unit.set_command(ControlMode.DAMPING)


def test_the_drives_own_error_is_named_and_reset_only_after_it_is_gone(mw):
    unit = mw.unit("d3")
    assert command_until(mw, "d3", lambda: unit.set_command(ControlMode.POSITION, 0.3),
                         lambda s: abs(s.position - 0.3) < 0.01)
    sim_of(mw).set_fault("d3", "over_temperature")
    assert wait_until(lambda: mw.snapshot()["d3"].fault, TIMEOUT)
    reason = mw.snapshot()["d3"].fault_reason
    assert "EMCY 0x4310 Excess temperature drive" in reason and "CANopen node 3" in reason, reason
    assert not mw.snapshot()["d4"].fault
    still = mw.reset_faults(["d3"], timeout=TIMEOUT)
    assert "still in FAULT" in still["d3"] and "Excess temperature drive" in still["d3"], still
    sim_of(mw).set_fault("d3", "over_temperature", on=False)
    assert mw.reset_faults(["d3"], timeout=TIMEOUT) == {}
    s = mw.snapshot()["d3"]
    assert s.enabled and not s.fault
    assert drive_of(mw).state == co.State.OPERATION_ENABLED
    assert abs(s.position - 0.3) < 0.05      # recovered holding where it was: nothing jumps


def test_error_flag_reports_the_code_given_as_value(mw):
    sim_of(mw).set_fault("d4", "error_flag", value=0x8611)
    assert wait_until(lambda: mw.snapshot()["d4"].fault, TIMEOUT)
    assert "EMCY 0x8611 Following error" in mw.snapshot()["d4"].fault_reason


def test_silence_faults_the_drive_and_reset_works_once_it_answers(mw):
    sim_of(mw).set_fault("d4", "silent")
    assert wait_until(lambda: mw.snapshot()["d4"].fault, TIMEOUT)
    assert "no reply" in mw.snapshot()["d4"].fault_reason
    assert not mw.snapshot()["d3"].fault          # the other drive on the bus goes on
    still = mw.reset_faults(["d4"], timeout=TIMEOUT)
    assert "d4" in still and "reset failed" in still["d4"], still
    sim_of(mw).set_fault("d4", "silent", on=False)

    def reset_ok() -> bool:
        return mw.reset_faults(["d4"], timeout=TIMEOUT) == {}
    assert wait_until(reset_ok, 3 * TIMEOUT, 0.2)
    assert mw.snapshot()["d4"].enabled


def test_a_drive_that_never_boots_is_named():
    def before(m):
        drive_of(m, "d4").never_boots = True
    m = started(drive_xml(attrs='boot_timeout="0.3"'), before)
    try:
        assert wait_until(lambda: mw_fault(m, "d4"), TIMEOUT)
        reason = m.snapshot()["d4"].fault_reason
        assert "CANopen node 4 sent no boot-up message (0x704: 00) within 2 s" in reason, reason
        assert m.snapshot()["d3"].enabled
    finally:
        m.shutdown()


def _losing_nmt_starts(drive, count: int):
    """The simulated drive misses the next ``count`` NMT "start remote node" frames (lost on the bus)."""
    original = drive._nmt
    lost = []

    def nmt(cmd, now):
        if cmd == co.NMT_START and len(lost) < count:
            lost.append(now)
            return
        original(cmd, now)
    drive._nmt = nmt
    return lost


def test_a_lost_nmt_start_is_sent_again_until_the_drive_sends_its_pdos():
    lost = {}

    def before(m):
        lost["d3"] = _losing_nmt_starts(drive_of(m), 2)
    m = started(drive_xml(), before)
    try:
        s = m.snapshot()["d3"]
        assert s.enabled and s.received and not s.fault, s
        assert len(lost["d3"]) == 2
        assert drive_of(m).nmt_state == co.NMT_OPERATIONAL
        assert wait_until(lambda: m.channels["bus"].cycles > 50, TIMEOUT)
        assert not m.snapshot()["d3"].fault, m.snapshot()["d3"]
    finally:
        m.shutdown()


def test_a_drive_still_initialising_is_waited_for_before_its_controlwords():
    def before(m):
        drive_of(m).ready_delay = 0.45     # NOT READY TO SWITCH ON for 0.45 s after boot-up
    m = started(drive_xml(), before)
    try:
        s = m.snapshot()["d3"]
        assert s.enabled and not s.fault, s
        assert drive_of(m).state == co.State.OPERATION_ENABLED
    finally:
        m.shutdown()


def test_a_drive_that_never_goes_operational_is_named():
    def before(m):
        _losing_nmt_starts(drive_of(m, "d3"), 10 ** 6)
    m = started(drive_xml(attrs='boot_timeout="0.5"'), before)
    try:
        assert wait_until(lambda: mw_fault(m, "d3"), TIMEOUT)
        reason = m.snapshot()["d3"].fault_reason
        assert reason.startswith("CANopen node 3: no PDO within 0.5 s of NMT 'start remote node' "
                                 "(sent "), reason
        assert "its heartbeat shows PRE-OPERATIONAL" in reason, reason
        assert m.snapshot()["d4"].enabled
    finally:
        m.shutdown()


def mw_fault(m, name):
    return m.snapshot()[name].fault


def test_pdo_mapping_from_the_xml_is_written_to_the_drive():
    children = ('<rpdo number="3" transmission="1" map="0x60B1:00/32 0x6071:00/16 0x60B2:00/16"/>'
                '<tpdo number="3" transmission="2" map="0x6077:00/16 0x603F:00/16"/>')
    m = started(drive_xml(children=children, second=False))
    try:
        d = drive_of(m)
        assert d.get(0x1602, 0) == 3
        assert [d.get(0x1602, i) for i in (1, 2, 3)] == [0x60B10020, 0x60710010, 0x60B20010]
        assert d.get(0x1802, 2) == 2
        unit = m.unit("d3")
        assert unit.CAPABILITIES.position_velocity_ff
        assert command_until(m, "d3", lambda: unit.set_position(0.5, 0.25),
                             lambda s: abs(s.position - 0.5) < 0.02)
        assert d.get(0x60B1) == round(0.25 * 4096 / (2 * math.pi))
    finally:
        m.shutdown()


@pytest.mark.parametrize("attrs, children, words", [
    ('node_id="0"', "", ["node_id", "1..127"]),
    ('node_id="3" max_torque="70000"', "", ["max_torque", "1..65535"]),
    ('node_id="3" gear_ratio="0"', "", ["gear_ratio"]),
    ('node_id="3" eds="no_such.eds"', "", ["no_such.eds", "does not exist"]),
    ('node_id="3" watchdog_mode="damping"', "", ["watchdog_mode", "damping"]),
    ('node_id="3"', '<rpdo number="2" map="0x60FF:00/32"/>', ["0x607A"]),
    ('node_id="3"', '<tpdo number="1" map="0x6061:00/8"/>', ["statusword 0x6041"]),
    ('node_id="3"', '<rpdo number="2" map="0x607A/32"/>', ["0x607A/32", "index:sub/bits"]),
])
def test_bad_attributes_are_clear_config_errors(attrs, children, words):
    xml = ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9"/>'
           f'<unit name="bad" type="rospy_control/Cia402Drive" channel="bus" {attrs}>{children}</unit>'
           '</hardware>')
    with pytest.raises(ConfigError) as e:
        simulated_middleware(xml, simulate=True)
    for w in words:
        assert w in str(e.value), str(e.value)


def test_without_canopen_a_drive_is_one_clear_start_up_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "canopen", None)    # import canopen -> ImportError
    with pytest.raises(ConfigError) as e:
        simulated_middleware(drive_xml(second=False), simulate=True)
    msg = str(e.value)
    assert "unit 'd3'" in msg and "canopen" in msg and "tools/bootstrap.sh" in msg, msg


def test_the_sdo_worker_is_a_named_thread_sending_under_the_channels_send_lock(mw):
    unit = mw.unit("d3")
    channel = mw.channels["bus"]
    assert unit.net.network.send_lock is channel.send_lock       # one send path per bus
    assert unit._send_lock is channel.send_lock
    assert mw.unit("d4").net.network.send_lock is channel.send_lock
    worker = unit._worker
    assert worker is not None and worker.name == "rospy_control.cia402.d3", worker


def test_a_drive_deactivated_during_its_start_up_stops_and_joins_its_worker():
    # no drive on this bus: the worker waits for a boot-up when the drive is deactivated
    m = Middleware.from_xml(drive_xml(attrs='boot_timeout="30"', second=False))
    unit = m.unit("d3")
    bus = can.Bus(interface="virtual", channel=f"cia402.nobody.{id(m):x}")
    try:
        unit.bind_bus(bus, threading.Lock())
        unit.activate(time.monotonic(), True, 0.05, 0.005)
        worker = unit._worker
        assert worker is not None and worker.name == "rospy_control.cia402.d3"
        assert wait_until(lambda: worker.is_alive(), TIMEOUT)
        t0 = time.monotonic()
        unit.deactivate()
        assert not worker.is_alive() and unit._worker is None
        assert time.monotonic() - t0 < 5.0        # not the 30 s boot timeout
    finally:
        bus.shutdown()


def test_hold_mode_none_on_a_cia402_drive_is_a_config_error_naming_file_and_line():
    m = Middleware.from_xml(drive_xml(second=False))
    unit = m.unit("d3")
    with pytest.raises(ConfigError) as e:
        m.set_watchdog_mode("damping")      # what hold_mode: none asks of the motors
    assert "damping" in str(e.value) and e.value.line is not None, str(e.value)
    assert f"{e.value.source}:{e.value.line}" == unit.where
    with pytest.raises(ConfigError):
        unit.set_watchdog_mode("sideways")
