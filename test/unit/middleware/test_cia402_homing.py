"""Homing on demand of a CiA 402 drive (``<homing>``, CiA 402-2 homing mode 6): the driver's unit against
the simulated drive on a ``virtual`` bus, and the frames a third party sees on that bus.

Checked: the SDO downloads of 0x6098 / 0x607C / 0x6099:1-2 / 0x609A with the XML's values in
increments, the mode 6 in the RPDO with controlword bit 4 low and then high, the statusword read as
CiA 402-2 says (completed, error), the position counted from the new zero afterwards with the drive
back in cyclic synchronous position holding where it is, a method the drive lacks refused by its SDO
abort, a limit-switch homing that moves the joint, and the timeout that stops it."""
from __future__ import annotations

import math
import struct
import time

import pytest

from rospy_control.devices.actuator import ControlMode, UnsupportedCommand
from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.homing import HomingSettings, homing_status, homing_writes
from rospy_control.exceptions import ConfigError

from middleware_testutil import wait_until
from test_cia402_unit import Sniffer, drive_of, drive_xml, started

pytest.importorskip("canopen", reason="tools/bootstrap.sh installs canopen into .ws/venv")

TIMEOUT = 10.0
COUNTS_PER_RAD = 4096 / (2.0 * math.pi)


def homed(mw, unit, timeout=TIMEOUT):
    number = unit.request_home()
    assert wait_until(lambda: not unit.homing_state().active and unit.homing_state().number == number,
                      timeout)
    return unit.homing_state()


def sdo_download(sniffer: Sniffer, index: int, sub: int) -> bytes:
    """The data of the last expedited SDO download of ``index:sub`` to node 3 seen on the bus."""
    sniffer._drain()
    found = None
    for m in sniffer.frames:
        d = bytes(m.data)
        if m.arbitration_id == 0x603 and len(d) == 8 and d[0] & 0xE0 == 0x20 and \
                d[1:3] == struct.pack("<H", index) and d[3] == sub:
            n = 4 - ((d[0] >> 2) & 3) if d[0] & 0x01 else 4
            found = d[4:4 + n]
    assert found is not None, f"no SDO download of 0x{index:04X}:{sub:02X}"
    return found


def test_the_writes_carry_the_xml_values_in_increments():
    s = HomingSettings(method=17, offset=-0.5, switch_speed=0.5, zero_speed=0.05, acceleration=2.0)
    w = {(i, sub): data for i, sub, data, _ in homing_writes(s, -COUNTS_PER_RAD)}
    assert w[(0x6098, 0)] == struct.pack("<b", 17)
    assert w[(0x607C, 0)] == struct.pack("<i", round(0.5 * COUNTS_PER_RAD))
    assert w[(0x6099, 1)] == struct.pack("<I", round(0.5 * COUNTS_PER_RAD))   # a magnitude
    assert w[(0x6099, 2)] == struct.pack("<I", round(0.05 * COUNTS_PER_RAD))
    assert w[(0x609A, 0)] == struct.pack("<I", round(2.0 * COUNTS_PER_RAD))


@pytest.mark.parametrize("sw, status", [(0x0237, "in progress"), (0x0637, "interrupted"),
                                        (0x1237, "attained"), (0x1637, "completed"), (0x2637, "error"),
                                        (0x2237, "error")])
def test_the_statusword_is_read_as_cia_402_2_says(sw, status):
    assert homing_status(sw) == status


def test_current_position_homing_makes_the_position_read_minus_the_offset_and_holds_there():
    mw = started(drive_xml(children='<homing method="35" offset="0.25"/>', sim='initial_position="1.0"',
                           second=False))
    sniffer = Sniffer(mw)
    try:
        unit = mw.unit("d3")
        assert unit.CAPABILITIES.home
        assert unit.homing_state().ok is None
        before = mw.snapshot()["d3"].position
        assert before == pytest.approx(1.0, abs=0.01)
        state = homed(mw, unit)
        assert state.ok, state.message
        assert sdo_download(sniffer, 0x6098, 0) == struct.pack("<b", 35)
        assert sdo_download(sniffer, 0x607C, 0) == struct.pack("<i", round(0.25 * COUNTS_PER_RAD))
        # the RPDO1 (controlword + mode) with mode 6: bit 4 low first, then high
        sniffer._drain()
        rpdo1 = [bytes(m.data) for m in sniffer.frames if m.arbitration_id == 0x203]
        cws = [struct.unpack_from("<H", d)[0] for d in rpdo1 if len(d) >= 3 and d[2] == 6]
        assert cws and not cws[0] & 0x10 and any(cw & 0x10 for cw in cws), [hex(c) for c in cws]
        assert wait_until(lambda: abs(mw.snapshot()["d3"].position + 0.25) < 0.01, TIMEOUT)
        drive = drive_of(mw)
        assert drive.joint_position() == pytest.approx(1.0, abs=0.01)      # it did not move
        # back in cyclic synchronous position, holding where it is
        assert wait_until(lambda: drive.get(0x6061) == co.CSP, TIMEOUT)
        time.sleep(0.2)
        assert drive.joint_position() == pytest.approx(1.0, abs=0.01)
        assert mw.snapshot()["d3"].mode == ControlMode.POSITION
    finally:
        sniffer.stop()
        mw.shutdown()


def test_limit_switch_homing_moves_to_the_switch_and_counts_from_there():
    mw = started(drive_xml(children='<homing method="17" switch_speed="2.0" zero_speed="0.5"/>',
                           sim='initial_position="0.3" limit_switch_min="-0.4"', second=False))
    try:
        unit = mw.unit("d3")
        state = homed(mw, unit)
        assert state.ok, state.message
        drive = drive_of(mw)
        # it went down to the switch and stopped where the switch opened again
        assert drive.joint_position() == pytest.approx(-0.4, abs=0.05)
        assert wait_until(lambda: abs(mw.snapshot()["d3"].position) < 0.05, TIMEOUT)
    finally:
        mw.shutdown()


def test_a_method_the_drive_lacks_is_refused_by_its_sdo_abort_and_nothing_moves():
    mw = started(drive_xml(children='<homing method="1"/>', sim='initial_position="0.5"', second=False))
    try:
        unit = mw.unit("d3")
        state = homed(mw, unit)
        assert state.ok is False
        assert "0x06090030" in state.message and "0x6098" in state.message, state.message
        assert not mw.snapshot()["d3"].fault
        assert mw.snapshot()["d3"].position == pytest.approx(0.5, abs=0.01)
    finally:
        mw.shutdown()


def test_a_switch_that_never_comes_ends_in_the_drive_s_homing_error():
    mw = started(drive_xml(children='<homing method="18"/>', second=False))   # no limit_switch_max
    try:
        state = homed(mw, mw.unit("d3"))
        assert state.ok is False and "homing error" in state.message, state.message
    finally:
        mw.shutdown()


def test_the_timeout_stops_a_homing_that_does_not_end():
    mw = started(drive_xml(children='<homing method="17" switch_speed="0.05" timeout="0.5"/>',
                           sim='initial_position="0.0" limit_switch_min="-3.0"', second=False))
    try:
        state = homed(mw, mw.unit("d3"))
        assert state.ok is False and "timeout 0.5 s" in state.message, state.message
        drive = drive_of(mw)
        p = drive.joint_position()
        time.sleep(0.3)
        assert abs(drive.joint_position() - p) < 0.01, "the drive should stop searching"
    finally:
        mw.shutdown()


def test_a_drive_without_homing_says_what_to_add():
    mw = started(drive_xml(second=False))
    try:
        with pytest.raises(UnsupportedCommand, match="<homing>"):
            mw.unit("d3").request_home()
        assert not mw.unit("d3").CAPABILITIES.home
    finally:
        mw.shutdown()


@pytest.mark.parametrize("attrs, match", [('method="0"', "method"),
                                          ('method="35" switch_speed="-1"', "switch_speed"),
                                          ('method="35" timeout="0"', "timeout"), ('', "method")])
def test_a_bad_homing_element_names_its_attribute(attrs, match):
    from rospy_control.middleware import Middleware
    with pytest.raises(ConfigError, match=match):
        Middleware.from_xml(drive_xml(children=f"<homing {attrs}/>", second=False))
