"""Motor/sensor units driven through the channel contract directly (no threads, no bus)."""
from __future__ import annotations

import pytest

from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ContactSensor, ControlMode, Motor
from rospy_control.devices.mit import codec as mit
from rospy_control.devices.sensors import codec as sensors
from rospy_control.devices import frame_bits

L = mit.MitLimits()


def reply(motor_id=1, p=0.0, v=0.0, t=0.0, dlc=8, temp=30, err=0):
    return mit.pack_reply(motor_id, p, v, t, L, dlc, temp, err)


def active_motor(period=0.01, command_timeout=0.0, **kw):
    m = Motor("m", 1, **kw)
    m.activate(0.0, True, 0.05, period, command_timeout)
    return m


def test_enable_then_command_frames():
    m = active_motor()
    assert bytes(m.poll(0.0).data) == mit.ENTER_MOTOR_MODE
    assert m.on_frame(0, reply(), 0.001) == 1
    assert m.end_cycle(0.002).enabled
    m.set_command(ControlMode.POSITION, 1.0)
    assert bytes(m.poll(0.003).data) == mit.pack_command(1.0, 0.0, 20.0, 0.5, 0.0, L)


def test_mode_is_confirmed_by_a_reply_once_two_frames_in_that_mode_went_out():
    m = active_motor()
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.request_mode(ControlMode.VELOCITY)
    assert m.command_mode == ControlMode.VELOCITY
    assert not m.mode_confirmed(ControlMode.VELOCITY)      # nothing sent yet
    msg = m.poll(0.001)
    assert bytes(msg.data) == mit.pack_command(0.0, 0.0, 0.0, 1.0, 0.0, L)
    assert not m.mode_confirmed(ControlMode.VELOCITY)      # sent, not answered
    # a reply now may be the late answer to the last frame of the old mode (a host that ran the
    # device's side late): it confirms nothing
    m.on_frame(0, reply(), 0.0015)
    assert m.end_cycle(0.002).mode != ControlMode.VELOCITY
    m.poll(0.003)                                         # the second frame in the new mode
    assert not m.mode_confirmed(ControlMode.VELOCITY)
    m.on_frame(0, reply(), 0.0035)                        # answers a frame in the new mode
    assert not m.mode_confirmed(ControlMode.VELOCITY)      # answered, not yet published
    state = m.end_cycle(0.004)
    assert state.mode == ControlMode.VELOCITY == state.requested_mode
    assert not m.mode_confirmed(ControlMode.VELOCITY)      # the channel publishes after every unit
    m.poll(0.005)                                         # next cycle: the snapshot is out
    assert m.mode_confirmed(ControlMode.VELOCITY)


def test_effort_and_mit_and_direction_offset_encoding():
    m = active_motor(direction=-1, zero_offset=0.5)
    m.set_command(ControlMode.EFFORT, 2.0)
    assert m.encode_command(m.command) == mit.pack_command(0, 0, 0, 0, -2.0, L)
    m.set_mit_command(0.25, 1.0, 10.0, 0.2, 1.0)
    assert m.command_mode == ControlMode.MIT
    assert m.encode_command(m.command) == mit.pack_command(0.25, -1.0, 10.0, 0.2, -1.0, L)
    m.poll(0.0)
    m.on_frame(0, reply(p=0.1, v=2.0, t=-3.0), 0.0)
    s = m.end_cycle(0.0)
    assert s.position == pytest.approx(0.4, abs=1e-3)  # -(0.1 - 0.5)
    assert s.velocity == pytest.approx(-2.0, abs=0.04)
    assert s.effort == pytest.approx(3.0, abs=0.01)
    with pytest.raises(ValueError, match="set_mit_command"):
        m.set_command(ControlMode.MIT, 1.0)


def test_position_command_is_clamped_to_the_motor_range():
    m = active_motor()
    m.set_command(ControlMode.POSITION, 100.0)
    assert m.encode_command(m.command)[:2] == b"\xff\xff"


def test_timeout_fault_needs_n_misses_and_fault_timeout():
    # period 10 ms, fault_timeout 50 ms: N = max(3, 5) = 5 unanswered requests and 50 ms since the first
    m = active_motor()
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.end_cycle(0.0)
    for t in (0.01, 0.02, 0.03, 0.04, 0.05):
        m.poll(t)
        s = m.end_cycle(t + 0.001)
        assert not s.fault  # 5 misses, but only 41 ms since the first went out
    assert m.reply_timeouts == 5
    m.poll(0.06)
    s = m.end_cycle(0.061)
    assert s.fault and s.fault_reason == ("no reply for 51.0 ms (fault_timeout 50.0 ms), "
                                          "6 requests unanswered")
    assert s.fault_time > 0
    assert bytes(m.poll(0.07).data) == mit.EXIT_MOTOR_MODE   # once
    assert m.poll(0.08) is None                               # no commands in FAULT


def test_cycles_not_on_time_neither_count_nor_end_the_streak():
    m = active_motor()
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.end_cycle(0.0)
    m.poll(0.01)
    m.end_cycle(0.011)                 # miss 1 (its request went out at 0.01)
    for t in (0.02, 0.3, 0.31):         # host stalls: excused
        m.poll(t)
        assert not m.end_cycle(t + 0.001, on_time=False).fault
    assert m.reply_timeouts == 1
    for t in (0.32, 0.33):
        m.poll(t)
        assert not m.end_cycle(t + 0.001).fault   # misses 2, 3
    m.poll(0.34)
    s = m.end_cycle(0.341)              # miss 4 of N=5
    assert not s.fault
    m.poll(0.35)
    s = m.end_cycle(0.351)              # miss 5, 341 ms since the first: FAULT
    assert s.fault and "5 requests unanswered" in s.fault_reason


def test_a_late_reply_ends_the_streak():
    m = active_motor()
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.end_cycle(0.0)
    for k in range(1, 30):
        t = 0.01 * k
        m.poll(t)
        m.end_cycle(t + 0.008)                  # the reply misses the window...
        if k % 4 == 0:
            m.on_frame(0, reply(), t + 0.009)   # ...and arrives before the next cycle (drained then)
    assert not m._state.fault
    assert m.reply_timeouts == 29


def test_miss_limit():
    from rospy_control.devices import miss_limit
    assert miss_limit(0.1, 0.002) == 50       # not 51: 0.1 / 0.002 is 50.000000000000001 in floats
    assert miss_limit(0.1, 0.001) == 100
    assert miss_limit(0.02, 0.01) == 3
    assert miss_limit(0.05, None) == 3


def test_reset_probe_keeps_fault_until_a_valid_reply_to_enter():
    m = active_motor()
    m.poll(0.0)
    m.on_frame(0, reply(err=3), 0.0)
    s = m.end_cycle(0.001)
    assert s.fault and s.fault_reason == "motor reported error code 0x03"
    assert bytes(m.poll(0.01).data) == mit.EXIT_MOTOR_MODE
    m.on_frame(0, reply(err=3), 0.0105)                 # the motor answers it, still in error
    m.end_cycle(0.011)
    ticket = m.reset_fault()
    assert m.reset_outcome(ticket) is None
    assert bytes(m.poll(0.02).data) == mit.ENTER_MOTOR_MODE
    assert m.end_cycle(0.021).fault                     # silent so far: still FAULT, probe goes on
    assert m.reset_outcome(ticket) is None and m.resetting
    assert bytes(m.poll(0.03).data) == mit.ENTER_MOTOR_MODE
    m.on_frame(0, reply(err=3), 0.031)
    s = m.end_cycle(0.032)
    assert s.fault and s.fault_reason == "reset failed: motor still reports error code 0x03"
    assert m.reset_outcome(ticket) == (False, "reset failed: motor still reports error code 0x03")
    assert bytes(m.poll(0.04).data) == mit.EXIT_MOTOR_MODE   # leaves motor mode again, once
    m.on_frame(0, reply(err=3), 0.041)
    assert m.poll(0.05) is None
    ticket = m.reset_fault()
    assert bytes(m.poll(0.06).data) == mit.ENTER_MOTOR_MODE
    m.on_frame(0, reply(), 0.061)
    s = m.end_cycle(0.062)
    assert not s.fault and s.enabled and s.fault_reason == "" and s.fault_time == 0.0
    assert m.reset_outcome(ticket) == (True, "")
    assert m.command_mode == ControlMode.NONE
    # no command of its own, and not limp: it holds where it was re-enabled (the reply said 0.0)
    # with its position gains, until the caller commands; that command ends the hold at once
    assert bytes(m.poll(0.07).data) == mit.pack_command(0.0, 0, m.position_kp, m.position_kd, 0, L)
    m.set_command(ControlMode.POSITION, 0.25)
    assert bytes(m.poll(0.08).data) == mit.pack_command(0.25, 0, m.position_kp, m.position_kd, 0, L)
    m.set_watchdog_mode("none")
    m.set_fault("again")
    m.poll(0.09)
    ticket = m.reset_fault()
    assert bytes(m.poll(0.10).data) == mit.ENTER_MOTOR_MODE
    m.on_frame(0, reply(p=0.5), 0.101)
    assert not m.end_cycle(0.102).fault
    assert bytes(m.poll(0.11).data) == mit.pack_command(0, 0, 0, 0, 0, L)   # watchdog_mode none: limp


def test_reset_probe_fails_after_n_silent_on_time_cycles():
    m = active_motor()
    m.set_fault("test")
    ticket = m.reset_fault()
    for k in range(0, 5):
        t = 0.01 * k
        assert bytes(m.poll(t).data) == mit.ENTER_MOTOR_MODE
        assert m.end_cycle(t + 0.001, on_time=(k != 2)).fault
    assert m.reset_outcome(ticket) is None          # 4 counted misses, 41 ms
    m.poll(0.05)
    m.end_cycle(0.051)                             # 5th counted miss, 51 ms since the first
    assert m.reset_outcome(ticket) == (False, "reset failed: no reply to enter-motor-mode for 51 ms")
    assert m.fault and m.fault_reason.startswith("reset failed: no reply to enter-motor-mode")


def test_reset_of_a_unit_not_in_fault_is_a_no_op():
    m = active_motor()
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.end_cycle(0.0)
    ticket = m.reset_fault()
    m.set_command(ControlMode.POSITION, 0.5)
    assert bytes(m.poll(0.01).data) == mit.pack_command(0.5, 0.0, 20.0, 0.5, 0.0, L)
    assert m.reset_outcome(ticket) == (True, "")


def test_watchdog_holds_commanded_position_then_resumes_at_once():
    m = active_motor(command_timeout=0.05)
    m.poll(0.0)
    m.on_frame(0, reply(p=0.2), 0.0)
    m.end_cycle(0.0)
    m.set_position(0.3, 1.5, 0.25)
    cmd = mit.pack_command(0.3, 1.5, 20.0, 0.5, 0.25, L)
    t = 0.0
    for _ in range(5):
        t += 0.01
        assert bytes(m.poll(t).data) == cmd
        m.on_frame(0, reply(p=0.2), t)
        m.end_cycle(t)
    t += 0.01
    held = bytes(m.poll(t).data)   # 50 ms without a new command
    m.on_frame(0, reply(p=0.2), t)
    assert held == mit.replace_velocity(cmd, 0.0, L) != cmd
    assert mit.unpack_command(held, L)[0] == mit.unpack_command(cmd, L)[0]   # same p_des, bit for bit
    assert m.end_cycle(t).watchdog and m.watchdog_trips == 1
    assert m.end_cycle(t).mode == ControlMode.POSITION
    m.set_position(0.31, 1.5, 0.25)
    assert bytes(m.poll(t + 0.01).data) == mit.pack_command(0.31, 1.5, 20.0, 0.5, 0.25, L)
    m.on_frame(0, reply(p=0.2), t + 0.01)
    assert not m.end_cycle(t + 0.01).watchdog


def test_watchdog_counts_each_cycle_at_most_two_periods():
    m = active_motor(command_timeout=0.05)
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.end_cycle(0.0)
    m.set_command(ControlMode.VELOCITY, 1.0)
    vel = mit.pack_command(0.0, 1.0, 0.0, 1.0, 0.0, L)
    assert bytes(m.poll(0.01).data) == vel
    assert bytes(m.poll(0.31).data) == vel   # a 300 ms freeze of the whole process: + 20 ms only
    assert bytes(m.poll(0.32).data) == vel   # 30 ms
    assert bytes(m.poll(0.33).data) == vel   # 40 ms
    m.on_frame(0, reply(p=0.7), 0.335)
    held = bytes(m.poll(0.34).data)          # 50 ms: hold the measured position with the position gains
    assert held == mit.pack_command(0.7, 0.0, 20.0, 0.5, 0.0, L)


def test_watchdog_modes_damping_and_none():
    m = active_motor(command_timeout=0.02, watchdog_mode="damping", velocity_kd=0.8)
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.set_command(ControlMode.EFFORT, 1.0)
    for t in (0.01, 0.02, 0.03):
        m.poll(t)
    assert bytes(m.poll(0.04).data) == mit.pack_command(0.0, 0.0, 0.0, 0.8, 0.0, L)
    m.set_watchdog_mode("none")               # switches a hold in progress
    assert bytes(m.poll(0.05).data) == mit.pack_command(0.0, 0.0, 0.0, 0.0, 1.0, L)
    assert not m.watchdog_active
    with pytest.raises(ValueError, match="unknown watchdog_mode 'hold'"):
        m.set_watchdog_mode("hold")


def test_never_commanded_motor_is_not_watched():
    m = active_motor(command_timeout=0.01)
    m.poll(0.0)
    m.on_frame(0, reply(p=0.4), 0.0)
    for k in range(1, 20):
        assert bytes(m.poll(0.01 * k).data) == mit.pack_command(0, 0, 0, 0, 0, L)


def test_firmware_timeout_makes_the_motor_enter_motor_mode_again_after_a_gap():
    m = active_motor(firmware_timeout=0.2)
    m.poll(0.0)
    m.on_frame(0, reply(), 0.0)
    m.set_command(ControlMode.POSITION, 0.1)
    assert bytes(m.poll(0.01).data) != mit.ENTER_MOTOR_MODE
    assert bytes(m.poll(0.05).data) != mit.ENTER_MOTOR_MODE
    assert bytes(m.poll(0.16).data) == mit.ENTER_MOTOR_MODE   # 110 ms without a frame >= 0.2 / 2
    m.on_frame(0, reply(), 0.161)
    assert m.end_cycle(0.162).enabled                         # never published as disabled
    assert bytes(m.poll(0.17).data) == mit.pack_command(0.1, 0.0, 20.0, 0.5, 0.0, L)


def test_events_are_logged():
    from rospy_control.bus.events import EventLog
    log = EventLog(maxlen=3)
    m = active_motor()
    m.attach("bus", log)
    m.set_fault("boom")
    m.reset_fault()
    m.poll(0.0)
    m.on_frame(0, reply(), 0.001)
    m.end_cycle(0.002)
    kinds = [(e.kind, e.unit, e.channel) for e in log.since(0)]
    assert kinds == [("fault", "m", "bus"), ("reset_requested", "m", "bus"), ("recovered", "m", "bus")]
    assert log.since(2)[0].message == "recovered after reset (fault was: boom)"
    m.set_fault("again")
    assert [e.seq for e in log.since(0)] == [2, 3, 4]   # bounded


def test_short_reply_is_a_bad_frame():
    m = active_motor()
    m.poll(0.0)
    assert m.on_frame(0, b"\x01\x02\x03", 0.0) == 0
    assert m.bad_frames == 1


def test_bits_per_cycle_from_spec_table():
    assert frame_bits(8) == 135 and frame_bits(6) == 115 and frame_bits(0) == 55
    assert frame_bits(8, extended=True) == 160
    assert Motor("m", 1, reply_dlc=6).bits_per_cycle() == 250


def test_contact_sensor_decodes_and_faults_on_error_flag():
    c = ContactSensor("foot", 0x30, force_range=1000.0)
    c.activate(0.0, True, 0.05, 0.01)
    assert c.reply_ids() == (0x430,)
    assert bytes(c.poll(0.0).data) == b""
    assert c.on_frame(0x430, sensors.encode_contact(True, 250.0, 1000.0), 0.0) == 1
    s = c.end_cycle(0.0)
    assert s.in_contact and s.force == pytest.approx(250.0, abs=0.02)
    c.poll(0.01)
    c.on_frame(0x430, sensors.encode_contact(False, 0.0, 1000.0, error=True), 0.01)
    assert c.end_cycle(0.01).fault_reason == "contact sensor reported an error flag"
    ticket = c.reset_fault()
    c.poll(0.02)
    c.on_frame(0x430, sensors.encode_contact(False, 0.0, 1000.0, error=True), 0.021)
    s = c.end_cycle(0.022)
    assert s.fault and s.fault_reason == "reset failed: contact sensor still reports an error flag"
    assert c.reset_outcome(ticket)[0] is False
    assert c.poll(0.03) is None   # a faulted sensor is not polled
    ticket = c.reset_fault()
    c.poll(0.04)
    c.on_frame(0x430, sensors.encode_contact(True, 10.0, 1000.0), 0.041)
    assert not c.end_cycle(0.042).fault and c.reset_outcome(ticket) == (True, "")


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
    m.poll(0.0)
    m.on_frame(0, reply(), 0.001)
    m.end_cycle(0.002)
    m.set_command(ControlMode.POSITION, 1.0)
    send(m)
    assert bytes(m.poll(0.003).data) == mit.pack_command(1.0, 0.0, 20.0, 0.5, 0.0, L)
    assert m.rejected_commands == 1
    assert "non-finite command" in caplog.text


def _sent_position(m, t, measured=None):
    """Poll one frame and answer it: the motor reports ``measured`` (wire units), by default the
    position the frame commanded (a motor that tracks)."""
    msg = m.poll(t)
    sent = mit.unpack_command(bytes(msg.data), L)
    m.on_frame(0, reply(p=sent[0] if measured is None else measured), t)
    m.end_cycle(t)
    return sent


def test_the_position_step_between_two_command_frames_is_capped_on_the_wire():
    m = active_motor(direction=-1, zero_offset=0.3)
    m.poll(0.0)  # enter motor mode; the motor answers from wire position 0.3 (joint 0)
    m.on_frame(0, reply(p=0.3), 0.0)
    m.end_cycle(0.0)
    m.set_max_position_step(0.02)
    assert m.max_position_step == pytest.approx(0.02, abs=L.p_max / 32768)
    assert m.max_position_step <= 0.02
    m.set_command(ControlMode.POSITION, 0.0)
    p0 = _sent_position(m, 0.01)[0]
    assert p0 == pytest.approx(0.3, abs=1e-3)  # where the motor is: nothing to cap
    m.set_command(ControlMode.POSITION, 0.5)    # 0.5 rad away: reached in steps of at most 0.02
    sent = [p0]
    for k in range(40):
        p, v, kp, kd, t = _sent_position(m, 0.02 + 0.01 * k)
        assert kp == pytest.approx(20.0, abs=0.2) and kd == pytest.approx(0.5, abs=0.01)
        sent.append(p)
    steps = [abs(b - a) for a, b in zip(sent, sent[1:])]
    assert max(steps) <= 0.02 + 1e-9
    assert sent[-1] == pytest.approx(-0.5 + 0.3, abs=1e-3)  # motor = -joint + offset: got there
    assert m.limited_frames >= 20
    # a kp = 0 frame (velocity mode) ends the chain; the next position command starts a new one from
    # where the motor then is (wire 0.1), not from the last position frame (wire -0.2)
    m.set_command(ControlMode.VELOCITY, 0.0)
    _sent_position(m, 1.0, measured=0.1)
    m.set_command(ControlMode.POSITION, -1.0)    # wire 1.3
    assert _sent_position(m, 1.01)[0] == pytest.approx(0.12, abs=1e-3)
    # no cap: any step goes through
    m.set_max_position_step(None)
    assert m.max_position_step is None
    m.set_command(ControlMode.POSITION, 1.0)
    assert _sent_position(m, 1.02)[0] == pytest.approx(-0.7, abs=1e-3)
    with pytest.raises(ValueError):
        m.set_max_position_step(-1.0)


def test_a_cap_set_while_commands_flow_continues_from_the_last_frame_sent():
    # the cap comes after the first position frames (a RobotHW sets it once its joints are known):
    # the very next jump is capped, not sent whole as the start of a chain
    m = active_motor()
    _sent_position(m, 0.0)  # enter motor mode
    m.set_command(ControlMode.POSITION, 0.2)
    assert _sent_position(m, 0.01, measured=0.0)[0] == pytest.approx(0.2, abs=1e-3)  # no cap yet
    m.set_max_position_step(0.02)
    m.set_command(ControlMode.POSITION, 0.6)
    assert _sent_position(m, 0.02, measured=0.0)[0] == pytest.approx(0.22, abs=1e-3)
    assert m.limited_frames == 1


def test_after_enable_a_far_position_command_ramps_from_where_the_motor_is():
    m = active_motor()
    m.set_max_position_step(0.02)
    m.poll(0.0)  # enter motor mode: the motor answers from 1.0 rad
    m.on_frame(0, reply(p=1.0), 0.0)
    m.end_cycle(0.0)
    m.set_command(ControlMode.POSITION, 0.0)  # a stale or wrong target 1 rad away
    sent = [_sent_position(m, 0.01 * (k + 1))[0] for k in range(60)]
    assert sent[0] == pytest.approx(0.98, abs=1e-3)  # one capped step from the (16-bit) reported 1.0
    assert max(abs(b - a) for a, b in zip(sent, sent[1:])) <= 0.02 + 1e-9
    assert sent[-1] == pytest.approx(0.0, abs=1e-3)
