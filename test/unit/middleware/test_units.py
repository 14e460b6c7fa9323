"""Motor/sensor units driven through the channel contract directly (no threads, no bus)."""
from __future__ import annotations

import pytest

from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ContactSensor, ControlMode, Motor
from rospy_control.middleware.protocols import mit, sensors
from rospy_control.middleware.units import frame_bits

L = mit.MitLimits()


def reply(motor_id=1, p=0.0, v=0.0, t=0.0, dlc=8, temp=30, err=0):
    return mit.pack_reply(motor_id, p, v, t, L, dlc, temp, err)


def active_motor(**kw):
    m = Motor("m", 1, **kw)
    m._activate(0.0, True, 0.05)
    return m


def test_enable_then_command_frames():
    m = active_motor()
    assert bytes(m._poll(0.0).data) == mit.ENTER_MOTOR_MODE
    assert m._on_frame(0, reply(), 0.001) == 1
    assert m._end_cycle(0.002).enabled
    m.set_command(ControlMode.POSITION, 1.0)
    assert bytes(m._poll(0.003).data) == mit.pack_command(1.0, 0.0, 20.0, 0.5, 0.0, L)


def test_mode_is_confirmed_by_the_first_reply_after_a_frame_in_that_mode():
    m = active_motor()
    m._poll(0.0)
    m._on_frame(0, reply(), 0.0)
    m.request_mode(ControlMode.VELOCITY)
    assert m.command_mode == ControlMode.VELOCITY
    assert not m.mode_confirmed(ControlMode.VELOCITY)      # nothing sent yet
    msg = m._poll(0.001)
    assert bytes(msg.data) == mit.pack_command(0.0, 0.0, 0.0, 1.0, 0.0, L)
    assert not m.mode_confirmed(ControlMode.VELOCITY)      # sent, not answered
    m._on_frame(0, reply(), 0.0015)
    assert m.mode_confirmed(ControlMode.VELOCITY)
    state = m._end_cycle(0.002)
    assert state.mode == ControlMode.VELOCITY == state.requested_mode


def test_effort_and_mit_and_direction_offset_encoding():
    m = active_motor(direction=-1, zero_offset=0.5)
    m.set_command(ControlMode.EFFORT, 2.0)
    assert m._cmd[1] == mit.pack_command(0, 0, 0, 0, -2.0, L)
    m.set_mit_command(0.25, 1.0, 10.0, 0.2, 1.0)
    assert m._cmd == (ControlMode.MIT, mit.pack_command(0.25, -1.0, 10.0, 0.2, -1.0, L))
    m._poll(0.0)
    m._on_frame(0, reply(p=0.1, v=2.0, t=-3.0), 0.0)
    s = m._end_cycle(0.0)
    assert s.position == pytest.approx(0.4, abs=1e-3)  # -(0.1 - 0.5)
    assert s.velocity == pytest.approx(-2.0, abs=0.04)
    assert s.effort == pytest.approx(3.0, abs=0.01)
    with pytest.raises(ValueError, match="set_mit_command"):
        m.set_command(ControlMode.MIT, 1.0)


def test_position_command_is_clamped_to_the_motor_range():
    m = active_motor()
    m.set_command(ControlMode.POSITION, 100.0)
    assert m._cmd[1][:2] == b"\xff\xff"


def test_timeout_fault_after_fault_timeout_only():
    m = active_motor()
    m._poll(0.0)
    m._on_frame(0, reply(), 0.0)
    m._end_cycle(0.0)
    for t in (0.01, 0.02, 0.03, 0.04):
        m._poll(t)
        s = m._end_cycle(t + 0.001)
        assert not s.fault
    assert m.reply_timeouts == 4
    m._poll(0.05)
    s = m._end_cycle(0.051)
    assert s.fault and s.fault_reason == "no reply for 51.0 ms (fault_timeout 50.0 ms)"
    assert bytes(m._poll(0.06).data) == mit.EXIT_MOTOR_MODE   # once
    assert m._poll(0.07) is None                               # no commands in FAULT
    m.reset_fault()
    assert bytes(m._poll(0.08).data) == mit.ENTER_MOTOR_MODE    # re-enable after reset
    assert m.command_mode == ControlMode.NONE


def test_short_reply_is_a_bad_frame():
    m = active_motor()
    m._poll(0.0)
    assert m._on_frame(0, b"\x01\x02\x03", 0.0) == 0
    assert m.bad_frames == 1


def test_bits_per_cycle_from_spec_table():
    assert frame_bits(8) == 135 and frame_bits(6) == 115 and frame_bits(0) == 55
    assert frame_bits(8, extended=True) == 160
    assert Motor("m", 1, reply_dlc=6).bits_per_cycle() == 250


def test_contact_sensor_decodes_and_faults_on_error_flag():
    c = ContactSensor("foot", 0x30, force_range=1000.0)
    c._activate(0.0, True, 0.05)
    assert c.reply_ids() == (0x430,)
    assert bytes(c._poll(0.0).data) == b""
    assert c._on_frame(0x430, sensors.encode_contact(True, 250.0, 1000.0), 0.0) == 1
    s = c._end_cycle(0.0)
    assert s.in_contact and s.force == pytest.approx(250.0, abs=0.02)
    c._poll(0.01)
    c._on_frame(0x430, sensors.encode_contact(False, 0.0, 1000.0, error=True), 0.01)
    assert c._end_cycle(0.01).fault_reason == "contact sensor reported an error flag"


def test_programmatic_construction_validates():
    with pytest.raises(ConfigError, match="direction must be 1 or -1"):
        Motor("m", 1, direction=2)
    with pytest.raises(ConfigError, match="can_id 0x800 outside"):
        Motor("m", 0x800)


@pytest.mark.parametrize("send", [
    lambda m: m.set_command(ControlMode.POSITION, float("nan")),
    lambda m: m.set_command(ControlMode.VELOCITY, float("inf")),
    lambda m: m.set_position(float("nan"), 0.0, 0.0),
    lambda m: m.set_mit_command(0.0, 0.0, float("nan"), 0.1, 0.0),
])
def test_non_finite_command_is_never_sent_and_the_previous_one_stays(send, caplog):
    # The codec maps NaN to p_min: sent, it would drive the joint to the end of its range.
    m = active_motor()
    m._poll(0.0)
    m._on_frame(0, reply(), 0.001)
    m._end_cycle(0.002)
    m.set_command(ControlMode.POSITION, 1.0)
    send(m)
    assert bytes(m._poll(0.003).data) == mit.pack_command(1.0, 0.0, 20.0, 0.5, 0.0, L)
    assert m.rejected_commands == 1
    assert "non-finite command" in caplog.text
