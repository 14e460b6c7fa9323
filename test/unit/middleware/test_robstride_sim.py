"""Conversations with the simulated CyberGear / RobStride motor (simulation/robstride.py): every frame
is built with the codec, as the driver will, and the answers are decoded with it."""
from __future__ import annotations

import can
import pytest

from rospy_control.devices.robstride import codec as rs
from rospy_control.simulator.robstride import SimulatedRobStride

DT = 0.0005
HOST = 0xFD


def msg(frame: rs.Frame) -> can.Message:
    return can.Message(arbitration_id=frame.arbitration_id, is_extended_id=frame.is_extended_id,
                       data=frame.data)


class Conversation:
    def __init__(self, model: str = "cybergear", **kw) -> None:
        self.sim = SimulatedRobStride("m", 0x7F, model, **kw)
        self.lim = rs.limits_for(model)
        self.now = 0.0
        self.sim.advance(0.0, DT)

    def send(self, frame: rs.Frame, after: float = 0.0):
        self.now += after
        return self.sim.handle(msg(frame), self.now, DT)

    def feedback(self, frame: rs.Frame, after: float = 0.0) -> rs.Feedback:
        out = self.send(frame, after)
        assert len(out) == 1, out
        return rs.decode_feedback(out[0].arbitration_id, out[0].data, self.lim)


def test_enable_answers_feedback_in_run_mode_to_the_senders_host():
    c = Conversation()
    out = c.send(rs.encode_enable(0x7F, 0xAA))
    assert out[0].is_extended_id and out[0].arbitration_id == 0x02807FAA
    fb = rs.decode_feedback(out[0].arbitration_id, out[0].data, c.lim)
    assert (fb.motor_id, fb.host_id, fb.mode_name, fb.faults) == (0x7F, 0xAA, "run", 0)


def test_frames_for_other_ids_and_standard_frames_are_ignored():
    c = Conversation()
    assert c.send(rs.encode_enable(0x10, HOST)) == []
    std = can.Message(arbitration_id=0x7F, is_extended_id=False, data=bytes(8))
    assert c.sim.handle(std, 0.0, DT) == []
    assert c.sim.frames == 0


def test_operation_control_tracks_position_then_stop_goes_limp():
    c = Conversation()
    c.send(rs.encode_enable(0x7F, HOST))
    fb = c.feedback(rs.encode_operation_control(0x7F, 1.0, 0.0, 20.0, 1.0, 0.0, c.lim))
    for _ in range(30):
        fb = c.feedback(rs.encode_operation_control(0x7F, 1.0, 0.0, 20.0, 1.0, 0.0, c.lim), after=0.05)
    assert fb.position == pytest.approx(1.0, abs=0.02)
    assert fb.mode == rs.MODE_RUN
    fb = c.feedback(rs.encode_stop(0x7F, HOST))
    assert fb.mode == rs.MODE_RESET
    fb = c.feedback(rs.encode_operation_control(0x7F, -1.0, 0.0, 20.0, 1.0, 0.0, c.lim), after=0.5)
    assert fb.position == pytest.approx(1.0, abs=0.05), "a stopped motor ignores operation control"


def test_velocity_run_mode_through_parameter_writes():
    c = Conversation()
    c.feedback(rs.encode_param_write(0x7F, "run_mode", rs.RUN_MODES["velocity"], HOST))
    c.feedback(rs.encode_param_write(0x7F, "limit_cur", 10.0, HOST, limits=c.lim))
    c.feedback(rs.encode_enable(0x7F, HOST))
    c.feedback(rs.encode_param_write(0x7F, "spd_ref", 3.0, HOST, limits=c.lim))
    fb = c.feedback(rs.encode_enable(0x7F, HOST), after=1.0)
    assert fb.velocity == pytest.approx(3.0, abs=0.1)


@pytest.mark.parametrize("model", ["cybergear", "rs01"])
def test_position_run_mode_reaches_loc_ref_at_the_speed_limit(model):
    c = Conversation(model)
    for f in rs.encode_switch_run_mode(0x7F, "position", HOST):
        c.feedback(f)
    for f in rs.encode_position_target(0x7F, -0.8, speed_limit=1.0, host_id=HOST, limits=c.lim, model=model):
        c.feedback(f)
    fb = c.feedback(rs.encode_enable(0x7F, HOST), after=0.3)
    assert fb.velocity == pytest.approx(-1.0, abs=0.05), "moving at the speed limit"
    for _ in range(20):
        fb = c.feedback(rs.encode_enable(0x7F, HOST), after=0.1)
    assert fb.position == pytest.approx(-0.8, abs=0.02)


def test_run_mode_is_only_changed_in_reset_mode():
    c = Conversation()
    c.send(rs.encode_enable(0x7F, HOST))
    c.send(rs.encode_param_write(0x7F, "run_mode", 2, HOST))
    out = c.send(rs.encode_param_read(0x7F, "run_mode", HOST))
    r = rs.decode_param_reply(out[0].arbitration_id, out[0].data)
    assert (r.name, r.value, r.ok) == ("run_mode", 0, True)
    c.send(rs.encode_stop(0x7F, HOST))
    c.send(rs.encode_param_write(0x7F, "run_mode", 2, HOST))
    out = c.send(rs.encode_param_read(0x7F, "run_mode", HOST))
    assert rs.decode_param_reply(out[0].arbitration_id, out[0].data).value == 2


def test_parameter_read_reply_and_unknown_index():
    c = Conversation(initial_position=0.25)
    out = c.send(rs.encode_param_read(0x7F, "mechPos", HOST))
    assert out[0].arbitration_id == 0x11007FFD
    r = rs.decode_param_reply(out[0].arbitration_id, out[0].data)
    assert r.value == pytest.approx(0.25)
    raw = can.Message(arbitration_id=rs.make_id(rs.PARAM_READ, HOST, 0x7F), is_extended_id=True,
                      data=bytes.fromhex("3412000000000000"))
    out = c.sim.handle(raw, 0.0, DT)
    r = rs.decode_param_reply(out[0].arbitration_id, out[0].data)
    assert (r.ok, r.index) == (False, 0x1234)


def test_set_zero_and_set_can_id_and_get_id():
    c = Conversation(initial_position=0.5)
    fb = c.feedback(rs.encode_set_zero(0x7F, HOST))
    assert fb.position == pytest.approx(0.0, abs=4e-4)
    out = c.send(rs.encode_get_id(0x7F, HOST))
    assert rs.decode_get_id_reply(out[0].arbitration_id, out[0].data) == (0x7F, c.sim.uid)
    out = c.send(rs.encode_set_can_id(0x7F, 0x05, HOST))
    assert rs.decode_get_id_reply(out[0].arbitration_id, out[0].data)[0] == 0x05
    assert c.send(rs.encode_enable(0x7F, HOST)) == []
    assert len(c.send(rs.encode_enable(0x05, HOST))) == 1


def test_injected_fault_is_reported_latched_and_cleared_by_stop_with_clear_flag():
    c = Conversation()
    c.send(rs.encode_enable(0x7F, HOST))
    c.sim.inject_fault(fault_word=1)  # motor over-temperature
    frames = c.sim.tick(c.now)
    assert len(frames) == 1
    report = rs.decode_fault_frame(frames[0].arbitration_id, frames[0].data)
    assert report.fault_names == ["motor over-temperature"]
    assert c.sim.tick(c.now + 0.01) == [], "repeated every FAULT_REPEAT, not every tick"
    assert len(c.sim.tick(c.now + 0.2)) == 1
    fb = c.feedback(rs.encode_enable(0x7F, HOST))
    assert fb.mode == rs.MODE_RESET and fb.fault_names == ["over temperature"]
    fb = c.feedback(rs.encode_stop(0x7F, HOST))
    assert fb.faults, "a stop without the clear flag keeps the fault"
    fb = c.feedback(rs.encode_stop(0x7F, HOST, clear_fault=True))
    assert fb.faults == 0
    assert c.feedback(rs.encode_enable(0x7F, HOST)).mode == rs.MODE_RUN


def test_persistent_fault_survives_clear_until_removed():
    c = Conversation()
    c.sim.inject_fault(fault_word=1 << 2, persistent=True)  # undervoltage
    fb = c.feedback(rs.encode_stop(0x7F, HOST, clear_fault=True))
    assert fb.fault_names == ["undervoltage"]
    c.sim.remove_fault()
    assert c.feedback(rs.encode_stop(0x7F, HOST, clear_fault=True)).faults == 0


def test_active_reporting_at_epscan_interval():
    c = Conversation()
    assert c.send(rs.encode_param_write(0x7F, "EPScan_time", 3, HOST))  # 20 ms
    assert c.send(rs.encode_active_report(0x7F, True, HOST)) == []
    t0 = c.now
    reports = []
    for i in range(101):  # 100 ms in 1 ms ticks
        reports += c.sim.tick(t0 + i * 0.001)
    assert len(reports) == 6  # at 0, 20, 40, 60, 80, 100 ms
    fb = rs.decode_feedback(reports[0].arbitration_id, reports[0].data, c.lim)
    assert fb.comm_type == rs.ACTIVE_REPORT and (reports[0].arbitration_id >> 24) == 24
    c.send(rs.encode_active_report(0x7F, False, HOST))
    assert c.sim.tick(t0 + 1.0) == []


def test_firmware_can_timeout_drops_run_mode():
    c = Conversation()
    c.send(rs.encode_param_write(0x7F, "canTimeout", 2000, HOST))  # 0.1 s
    c.send(rs.encode_enable(0x7F, HOST))
    assert c.feedback(rs.encode_enable(0x7F, HOST), after=0.05).mode == rs.MODE_RUN
    # any frame answered with feedback, but not an enable (which would re-enter run mode)
    fb = c.feedback(rs.encode_param_write(0x7F, "loc_kp", 30.0, HOST), after=0.5)
    assert fb.mode == rs.MODE_RESET
    assert c.sim.firmware_timeouts == 1


def test_silent_motor_answers_nothing():
    c = Conversation()
    c.sim.fault = "silent"
    assert c.send(rs.encode_enable(0x7F, HOST)) == []
    c.sim.inject_fault()
    assert c.sim.tick(1.0) == []
