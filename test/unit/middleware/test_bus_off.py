"""Bus-off: the simulated bus goes off as a CAN controller's does (error frames with CAN_ERR_BUSOFF, no
traffic), the channel faults every unit at once, sends nothing, fails resets while it lasts, and
takes the units back through a reset once the controller restarted (CAN_ERR_RESTARTED)."""
from __future__ import annotations

import can
import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.bus.channel import CAN_ERR_BUSOFF, CAN_ERR_RESTARTED, _says_bus_off

from middleware_testutil import motor_xml, wait_until


def frames(mw):
    return {n: m.frames for n, m in sim_of(mw).firmware("bus").motors.items()}


def test_bus_off_faults_every_unit_sends_nothing_and_recovers_through_a_reset(make_mw):
    mw = make_mw(motor_xml(3, fault_timeout=0.05))
    mw.start()
    ch, sim = mw.channels["bus"], sim_of(mw).firmware("bus")
    assert mw.faults() == {} and not ch.bus_off
    sim.set_fault(None, "bus_off")
    assert wait_until(lambda: len(mw.faults()) == 3, timeout=5.0)
    assert ch.bus_off and ch.bus_off_count == 1
    for name, reason in mw.faults().items():
        assert reason == "channel 'bus' is bus-off (error frame CAN_ERR_BUSOFF)", (name, reason)
    st = ch.statistics()
    assert st["bus_off"] is True and st["bus_off_count"] == 1 and st["bus_off_since"] > 0
    # nothing reaches a device while the bus is off; the lost frames are the bus's, not the motors'
    before = frames(mw)
    sent = ch.frames_sent
    assert wait_until(lambda: sim.bus_off_frames >= 3, timeout=5.0)  # repeated every 0.1 s
    assert frames(mw) == before
    assert ch.frames_sent == sent          # the channel sends nothing while bus-off
    # a reset fails at once, naming the bus-off
    result = mw.reset_faults(timeout=5.0)
    assert sorted(result) == ["m1", "m2", "m3"]
    assert all(r == "reset failed: channel 'bus' is bus-off (error frame CAN_ERR_BUSOFF)"
               for r in result.values()), result
    # the controller restarts: the channel leaves bus-off, the units stay in FAULT until a reset
    sim.set_bus_off(False)
    assert wait_until(lambda: not ch.bus_off, timeout=5.0)
    assert len(mw.faults()) == 3
    # each faulted motor gets its one exit-motor-mode frame now that the bus is back, then nothing
    assert wait_until(lambda: all(frames(mw)[i] == before[i] + 1 for i in before), timeout=5.0)
    assert mw.reset_faults(timeout=5.0) == {}
    assert mw.faults() == {}
    assert wait_until(lambda: all(frames(mw)[i] > before[i] + 5 for i in before), timeout=5.0)
    kinds = [e.kind for e in mw.events() if e.unit == "m1"]
    assert kinds == ["fault", "reset_requested", "reset_failed", "reset_requested", "recovered"]


def test_clear_fault_of_the_whole_bus_ends_bus_off(make_mw):
    mw = make_mw(motor_xml(1))
    mw.start()
    sim = sim_of(mw).firmware("bus")
    sim.set_fault(None, "bus_off")
    assert wait_until(lambda: mw.channels["bus"].bus_off, timeout=5.0)
    sim.clear_fault()
    assert not sim.bus_off
    assert wait_until(lambda: not mw.channels["bus"].bus_off, timeout=5.0)


def test_unknown_bus_wide_fault_is_refused(make_mw):
    mw = make_mw(motor_xml(1))
    with pytest.raises(ValueError, match="bus_errors' and 'bus_off"):
        sim_of(mw).firmware("bus").set_fault(None, "silent")


class _FakeBus:
    """Just enough of a python-can bus for one channel cycle: frames to receive, send may fail."""

    def __init__(self, rx, send_error=None):
        self.rx = list(rx)
        self.send_error = send_error
        self.sent = []
        self.channel_info = "fake"

    def recv(self, timeout=None):
        return self.rx.pop(0) if self.rx else None

    def send(self, msg, timeout=None):
        if self.send_error is not None:
            raise self.send_error
        self.sent.append(msg)

    def shutdown(self):
        pass


def _channel(make_mw, bus):
    mw = make_mw(motor_xml(2))
    ch = mw.channels["bus"]
    ch._bus = bus
    ch._prepare(True)
    return mw, ch


def test_socketcan_error_frames_enter_and_leave_bus_off(make_mw):
    off = can.Message(is_error_frame=True, arbitration_id=CAN_ERR_BUSOFF, data=bytes(8))
    bus = _FakeBus([off])
    mw, ch = _channel(make_mw, bus)
    ch._cycle()
    assert ch.bus_off and bus.sent == []            # detected before sending: nothing sent
    assert all(u.fault for u in ch.units)
    bus.rx.append(can.Message(is_error_frame=True, arbitration_id=CAN_ERR_RESTARTED, data=bytes(8)))
    ch._cycle()
    assert not ch.bus_off
    # the bus is back: each faulted motor is sent exit-motor-mode once (its safe state)
    assert len(bus.sent) == 2 and all(bytes(m.data) == bytes([0xFF] * 7 + [0xFD]) for m in bus.sent)
    ch.shutdown()


def test_a_send_error_saying_bus_off_is_a_bus_off(make_mw):
    err = can.CanOperationError("Bus error: the CAN controller is in bus-off state.")
    mw, ch = _channel(make_mw, _FakeBus([], send_error=err))
    ch._cycle()
    assert ch.bus_off and ch.tx_errors == 1
    assert all(u.fault and "bus-off" in u.fault_reason for u in ch.units)
    assert ch.tx_errors == 1   # nothing more is tried while bus-off
    ch._cycle()
    assert ch.tx_errors == 1
    ch.shutdown()


@pytest.mark.parametrize("text,expected", [
    ("Bus error: the CAN controller is in bus-off state.", True),
    ("CAN bus off", True),
    ("BUSOFF", True),
    ("Failed to transmit: [Errno 105] No buffer space available", False),
])
def test_says_bus_off(text, expected):
    assert _says_bus_off(can.CanOperationError(text)) is expected
