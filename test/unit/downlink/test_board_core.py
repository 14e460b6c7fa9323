"""The board's executor in board-clock terms: pulses against the plan, limits, cancel, splice, faults."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rospy_control.board import core as C
from rospy_control.board.backends import SimBackend
from rospy_control.board.config import AxisConfig, BoardConfig, EncoderConfig, seed_config
from rospy_control.board.core import BoardCore, Nack, TrajPoint
from rospy_control.board.interpolation import hermite, ramp_to_stop
from rospy_control.board import wire

from downlink_testutil import min_jerk, plan_steps, run

SPR = 14400 / (2 * math.pi)      # 1.8 deg, 2 microsteps, 36:1


def make(n=1, **board):
    cfg = seed_config(n, **board)
    backend = SimBackend(cfg.axes)
    return BoardCore(cfg, backend, t0=1.0), backend


def make_accel(max_acceleration):
    cfg = BoardConfig([AxisConfig("joint_1", SPR, max_acceleration=max_acceleration)])
    backend = SimBackend(cfg.axes)
    return BoardCore(cfg, backend, t0=1.0), backend


def events(core, kind):
    return [e for e in core.take_events() if e[0] == kind]


def test_codes_agree_with_the_proto():
    pb = wire.pb()
    for name in ("OK", "OUT_OF_ORDER", "BUFFER_FULL", "LIMIT_VIOLATION", "START_MISMATCH", "FAULTED",
                 "HOST_TIMEOUT", "CONNECTION_LOST", "BUFFER_UNDERRUN", "FOLLOWING_ERROR", "PROTOCOL_ERROR"):
        assert pb.Code.Value(name) == getattr(C, name), name
    for name in ("IDLE", "WAITING", "EXECUTING", "STOPPING", "FAULT"):
        assert pb.State.Value(name) == getattr(C, name)
    for name in ("SUCCEEDED", "CANCELED", "PREEMPTED", "ABORTED"):
        assert pb.GoalResult.Value(name) == getattr(C, name)


def test_seed_numbers():
    assert seed_config(1).axes[0].steps_per_unit == pytest.approx(2291.83, abs=0.01)
    assert SPR * math.pi == pytest.approx(7200)


@pytest.mark.parametrize("derivs,kind", [(2, "quintic"), (1, "cubic"), (0, "linear")])
def test_interpolation_meets_the_points(derivs, kind):
    pts = min_jerk([0.0, 1.0], [1.0, -1.0], 2.0, n=5, derivs=derivs)
    for a, b in zip(pts[:-1], pts[1:]):
        seg = BoardCore._between(a, b)
        assert seg.kind == kind
        np.testing.assert_allclose(seg.eval(b.t), b.p, atol=1e-12)
        np.testing.assert_allclose(seg.eval(a.t), a.p, atol=1e-12)
        if derivs >= 1:
            np.testing.assert_allclose(seg.eval(b.t, 1), b.v, atol=1e-9)
            np.testing.assert_allclose(seg.eval(a.t, 1), a.v, atol=1e-9)
        if derivs >= 2:
            np.testing.assert_allclose(seg.eval(b.t, 2), b.a, atol=1e-7)
            np.testing.assert_allclose(seg.eval(a.t, 2), a.a, atol=1e-7)


def test_pulse_count_and_times_follow_the_plan_at_the_seed_numbers():
    core, backend = make(2)
    core.add_segment(1, 0, min_jerk([0, 0], [1.0, -0.5], 2.0, n=21), True, 1.0)
    ts = core.start(1, 1.5, 1.0)
    assert ts == 1.5
    run(core, 1.0, 4.0)
    done = events(core, "goal_done")
    assert [(e[1], e[2]) for e in done] == [(1, C.SUCCEEDED)]
    for axis, target in ((0, 1.0), (1, -0.5)):
        times, dirs = backend.pulses(axis)
        assert int(dirs.sum()) == round(target * SPR)          # 2292 and -1146 pulses
        assert len(times) == abs(round(target * SPR))          # a min-jerk move never reverses
        assert times[0] > 1.5 and times[-1] < 3.5              # inside the scheduled window
        assert np.all(np.diff(times) > 0)
        # every pulse sits where the planned position crosses the half step between two counts
        s = plan_steps(core, axis, times)
        levels = np.cumsum(dirs) - 0.5 * dirs
        assert np.max(np.abs(s - levels)) < 0.02
        # and the count at any time is the planned position rounded
        grid = np.linspace(1.4, 3.6, 57)
        counts = np.array([backend.steps_at(axis, t) for t in grid])
        assert np.max(np.abs(counts - plan_steps(core, axis, grid))) <= 0.5 + 0.02
        # highest step rate stays within the axis limit
        assert 1.0 / np.min(np.diff(times)) <= core.config.axes[axis].max_step_rate * 1.05


def test_fractional_steps_are_carried():
    core, backend = make(1, buffer_capacity=400)
    # 300 straight segments of a third of a step each: truncating every segment would send none
    step = 1.0 / SPR / 3.0
    pts = [TrajPoint(0.0, [0.0])] + [TrajPoint(0.01 * k, [step * k]) for k in range(1, 301)]
    core.add_segment(1, 0, pts, True, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 5.0)
    _, dirs = backend.pulses(0)
    assert int(dirs.sum()) == 100 == round(300 * step * SPR)


def test_step_rate_limit_rejects_and_nothing_executes():
    cfg = BoardConfig([AxisConfig("joint_1", SPR, max_velocity=10.0, max_acceleration=100.0)])
    backend = SimBackend(cfg.axes)
    core = BoardCore(cfg, backend, t0=1.0)
    too_fast = min_jerk([0.0], [4.0], 1.2, n=11)           # peak 6.25 rad/s: 14 kHz
    with pytest.raises(Nack) as err:
        core.add_segment(1, 0, too_fast, True, 1.0)
    assert err.value.code == C.LIMIT_VIOLATION
    assert "axis 'joint_1'" in err.value.reason and "max_step_rate" in err.value.reason
    with pytest.raises(Nack) as err:
        core.start(1, 0, 1.0)
    assert err.value.code == C.UNKNOWN_GOAL
    run(core, 1.0, 3.0)
    assert backend.pulse_total == [0]


def test_acceleration_and_position_limits():
    cfg = BoardConfig([AxisConfig("j", SPR, max_acceleration=2.0, min_position=-1.0, max_position=1.0)])
    core = BoardCore(cfg, SimBackend(cfg.axes), t0=1.0)
    with pytest.raises(Nack, match="acceleration .* exceeds max_acceleration 2"):
        core.add_segment(1, 0, min_jerk([0.0], [0.9], 0.8), True, 1.0)
    with pytest.raises(Nack, match=r"position 1\.\d+ rad .* outside \[-1, 1\]"):
        core.add_segment(2, 0, min_jerk([0.0], [1.2], 3.0), True, 1.0)
    with pytest.raises(Nack, match="velocity jumps"):          # positions only, 1 rad/s from rest
        core.add_segment(3, 0, [TrajPoint(0, [0.0]), TrajPoint(0.5, [0.5])], True, 1.0)


def test_invalid_points():
    core, _ = make(2)
    with pytest.raises(Nack, match="1 positions; the board has 2 axes"):
        core.add_segment(1, 0, [TrajPoint(0, [0.0])], True, 1.0)
    with pytest.raises(Nack, match="does not increase"):
        core.add_segment(1, 0, [TrajPoint(0, [0, 0]), TrajPoint(0, [0, 0])], True, 1.0)
    with pytest.raises(Nack, match="NaN"):
        core.add_segment(1, 0, [TrajPoint(0, [0, float("nan")])], True, 1.0)


def test_out_of_order_segments_are_refused_and_nothing_executes():
    core, backend = make(1)
    pts = min_jerk([0.0], [0.5], 2.0, n=9)
    with pytest.raises(Nack) as err:
        core.add_segment(1, 1, pts[4:], True, 1.0)
    assert err.value.code == C.OUT_OF_ORDER and "before its segment 0" in err.value.reason
    core.add_segment(1, 0, pts[:5], False, 1.0)
    with pytest.raises(Nack, match="expected 1"):
        core.add_segment(1, 2, pts[5:], True, 1.0)
    with pytest.raises(Nack) as err:
        core.start(2, 0, 1.0)
    assert err.value.code == C.UNKNOWN_GOAL
    run(core, 1.0, 2.0)
    assert backend.pulse_total == [0]


def test_start_mismatch():
    core, _ = make(1)
    core.add_segment(1, 0, min_jerk([0.3], [0.5], 2.0), True, 1.0)
    with pytest.raises(Nack) as err:
        core.start(1, 0, 1.0)
    assert err.value.code == C.START_MISMATCH and "starts at 0.3" in err.value.reason


def test_streaming_window_and_execution_before_the_last_segment():
    core, backend = make(1, buffer_capacity=20)
    pts = min_jerk([0.0], [1.0], 4.0, n=41)
    core.add_segment(1, 0, pts[:15], False, 1.0)
    with pytest.raises(Nack) as err:
        core.add_segment(1, 1, pts[15:30], False, 1.0)
    assert err.value.code == C.BUFFER_FULL and "buffer_capacity is 20" in err.value.reason
    core.start(1, 0, 1.0)
    run(core, 1.0, 2.0)                        # 1 s = 10 points executed, goal still streaming
    assert backend.pulse_total[0] > 0
    assert core.buffer_fill(2.0) == 4          # points at 2.1 ... 2.4 s (board time) still to run
    core.add_segment(1, 1, pts[15:30], False, 2.0)
    run(core, 2.0, 3.5)
    core.add_segment(1, 2, pts[30:], True, 3.5)
    run(core, 3.5, 6.0)
    assert [(e[1], e[2]) for e in events(core, "goal_done")] == [(1, C.SUCCEEDED)]
    assert backend.steps_at(0, 6.0) == round(SPR)


def test_underrun_ramps_to_a_stop_and_aborts():
    core, backend = make(1)
    pts = min_jerk([0.0], [1.0], 2.0, n=21)
    core.add_segment(1, 0, pts[:8], False, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 4.0)
    ev = core.take_events()
    faults = [e for e in ev if e[0] == "fault"]
    assert faults and faults[0][1] == C.BUFFER_UNDERRUN
    done = [e for e in ev if e[0] == "goal_done"]
    assert done[0][2] == C.ABORTED and done[0][3] == C.BUFFER_UNDERRUN
    # the ramp starts where the points end (no jump), at most max_acceleration
    ramp = [s for s in list(core.history) + core.plan if s.kind == "ramp"][0]
    assert ramp.t0 == pytest.approx(1.0 + pts[7].t)
    assert abs(ramp.eval(ramp.t0, 2)[0]) <= 10.0 + 1e-9
    assert backend.steps_at(0, 4.0) == backend.steps_at(0, 3.5)     # stopped


def test_cancel_decelerates_within_the_limits():
    cfg = BoardConfig([AxisConfig("a", SPR, max_acceleration=4.0),
                       AxisConfig("b", SPR, max_acceleration=8.0)])
    backend = SimBackend(cfg.axes)
    core = BoardCore(cfg, backend, t0=1.0)
    core.add_segment(1, 0, min_jerk([0, 0], [2.0, -2.0], 4.0, n=41), True, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 3.0)                                # mid-move, about 0.94 rad/s
    p, v, _ = core.state_at(3.0)
    t_stop = core.cancel(1, 3.0)
    assert t_stop == pytest.approx(3.0 + max(abs(v[0]) / 4.0, abs(v[1]) / 8.0))
    run(core, 3.0, t_stop + 0.5)
    done = events(core, "goal_done")
    assert [(e[1], e[2]) for e in done] == [(1, C.CANCELED)]
    assert done[0][5] >= t_stop                         # reported once stopped
    ramp = [s for s in core.plan if s.kind == "ramp"][0]
    taus = np.linspace(ramp.t0, ramp.t1, 50)
    acc = ramp.eval(taus, 2)
    assert np.all(np.abs(acc[0]) <= 4.0 + 1e-9) and np.all(np.abs(acc[1]) <= 8.0 + 1e-9)
    np.testing.assert_allclose(ramp.eval(ramp.t0), p)          # continuous position and velocity
    np.testing.assert_allclose(ramp.eval(ramp.t0, 1), v)
    np.testing.assert_allclose(ramp.eval(ramp.t1, 1), [0, 0], atol=1e-12)
    # the pulses slow down after the cancel and stop at the ramp's end
    times, _ = backend.pulses(0)
    after = times[times > 3.0]
    assert after[-1] <= t_stop + 1e-6
    gaps = np.diff(after)
    assert gaps[-1] > 3 * gaps[0]
    assert backend.steps_at(0, t_stop + 0.4) == round(ramp.eval(ramp.t1)[0] * SPR)


def test_replacement_splices_at_a_future_time():
    core, backend = make(1)
    core.add_segment(1, 0, min_jerk([0.0], [1.0], 4.0, n=41), True, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 2.0)
    # goal 2: from wherever the arm is at its start, to -0.2; starts at board time 2.5
    new = [TrajPoint(0.0, [0.5], [0.0], [0.0]), TrajPoint(1.5, [-0.2], [0.0], [0.0])]
    core.add_segment(2, 0, new, True, 2.0)
    p_before, v_before, _ = core.state_at(2.5)
    assert core.start(2, 2.5, 2.0) == 2.5
    ev = events(core, "goal_done")
    assert [(e[1], e[2]) for e in ev] == [(1, C.PREEMPTED)]
    run(core, 2.0, 5.0)
    seg = core._segment_at(2.5)
    np.testing.assert_allclose(seg.eval(2.5), p_before)       # no jump at the splice
    np.testing.assert_allclose(seg.eval(2.5, 1), v_before)
    assert [(e[1], e[2]) for e in events(core, "goal_done")] == [(2, C.SUCCEEDED)]
    assert backend.steps_at(0, 5.0) == round(-0.2 * SPR)
    # before the splice the pulses followed goal 1
    assert abs(backend.steps_at(0, 2.4) - plan_steps(core, 0, [2.4])[0]) <= 0.52


def test_a_stamp_in_the_past_drops_the_points_already_due():
    core, backend = make(1)
    run(core, 1.0, 2.0)
    # at rest for its first second, then a move
    pts = [TrajPoint(0.0, [0.0], [0.0], [0.0])] + min_jerk([0.0], [0.5], 2.0, n=21, t_offset=1.0)
    core.add_segment(1, 0, pts, True, 2.0)
    ts = core.start(1, 1.5, 2.0)              # the goal's time 0 was half a second ago
    assert ts == 2.0
    run(core, 2.0, 5.0)                       # ends at 1.5 + 3.0 s
    assert backend.steps_at(0, 5.0) == round(0.5 * SPR)
    assert backend.steps_at(0, 2.45) == 0      # the part already due was at rest: nothing jumped
    assert [e[2] for e in events(core, "goal_done")] == [C.SUCCEEDED]


def test_a_late_start_a_fraction_of_a_step_off_leads_in_to_a_point_it_can_reach():
    """The host sent the goal from its quantised joint states and the Start arrived late, a few
    milliseconds before the goal's second point: joining that point would take 30 rad/s^2 for a
    third of a step, so the lead-in aims at the next point and the goal runs."""
    core, backend = make_accel(8.0)
    rest = 0.1234567                                            # not a whole number of steps
    core.add_segment(1, 0, [TrajPoint(0.0, [0.0], [0.0], [0.0]), TrajPoint(0.5, [rest], [0.0], [0.0])],
                     True, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 2.0)
    here = round(rest * SPR) / SPR + 0.3 / SPR                  # what joint states said, and more
    pts = min_jerk([here], [here + 0.05], 0.8, n=15)
    core.add_segment(2, 0, pts, True, 2.0)
    late = pts[1].t - 0.006
    lead_to_next = hermite(0.0, 0.006, [rest], [0.0], [0.0], pts[1].p, pts[1].v, pts[1].a)
    assert np.max(np.abs(lead_to_next.eval(np.linspace(0.0, 0.006, 9), 2))) > 8.0
    assert core.start(2, 2.0 - late, 2.0) == 2.0
    run(core, 2.0, 3.5)
    assert [(e[1], e[2]) for e in events(core, "goal_done")][-1:] == [(2, C.SUCCEEDED)]
    assert backend.steps_at(0, 3.5) == round((here + 0.05) * SPR)


def test_a_lead_in_no_point_in_reach_can_take_is_refused_and_the_axis_holds():
    core, backend = make_accel(8.0)
    run(core, 1.0, 2.0)
    # the goal's time 0 was 0.3 s ago, and it moves 0.4 rad in its first 0.6 s: mid-move now
    pts = min_jerk([0.0], [0.4], 0.6, n=9) + [TrajPoint(2.0, [0.4], [0.0], [0.0])]
    core.add_segment(1, 0, pts, True, 2.0)
    with pytest.raises(Nack) as err:
        core.start(1, 1.7, 2.0)
    assert err.value.code == C.LIMIT_VIOLATION and "joint_1" in err.value.reason
    run(core, 2.0, 2.5)
    assert backend.steps_at(0, 2.5) == 0


def test_host_silence_ramps_to_a_stop():
    core, backend = make(1, heartbeat_timeout=1.5)
    core.add_segment(1, 0, min_jerk([0.0], [1.0], 4.0, n=21), True, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 2.0)
    run(core, 2.0, 3.2, heartbeat=False)       # a 1.2 s stall of the host: no effect
    assert core.fault is None
    run(core, 3.2, 3.3)
    run(core, 3.3, 6.0, heartbeat=False)
    ev = core.take_events()
    fault = [e for e in ev if e[0] == "fault"][0]
    assert fault[1] == C.HOST_TIMEOUT and fault[4] == pytest.approx(3.3 + 1.5, abs=0.003)
    assert [(e[1], e[2], e[3]) for e in ev if e[0] == "goal_done"] == [(1, C.ABORTED, C.HOST_TIMEOUT)]
    assert backend.steps_at(0, 6.0) < round(SPR)          # stopped short of the goal
    with pytest.raises(Nack) as err:
        core.add_segment(2, 0, min_jerk([0.5], [0.6], 1.0), True, 6.0)
    assert err.value.code == C.FAULTED
    core.reset_faults(6.0)
    assert core.fault is None


def test_following_error_from_the_encoder():
    ax = AxisConfig("j", SPR, encoder=EncoderConfig(4000.0, max_following_error=0.01))
    cfg = BoardConfig([ax])
    backend = SimBackend(cfg.axes)
    core = BoardCore(cfg, backend, t0=1.0)
    core.add_segment(1, 0, min_jerk([0.0], [1.0], 3.0), True, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 2.0)
    fb = core.feedback(2.0)
    assert abs(fb["actual"][0] - fb["desired"][0]) < 0.001     # from the (simulated) encoder
    backend.slip[0] = -0.05 * SPR                               # the motor lost 0.05 rad of steps
    run(core, 2.0, 3.0)
    fault = [e for e in core.take_events() if e[0] == "fault"][0]
    assert fault[1] == C.FOLLOWING_ERROR and fault[3] == "j"


def test_feedback_snapshot():
    core, _ = make(2)
    core.add_segment(7, 0, min_jerk([0, 0], [0.4, 0.2], 2.0), True, 1.0)
    core.start(7, 1.5, 1.0)
    run(core, 1.0, 1.2)
    assert core.feedback(1.2)["state"] == C.WAITING
    run(core, 1.2, 2.5)
    fb = core.feedback(2.5)
    assert fb["goal_id"] == 7 and fb["state"] == C.EXECUTING
    assert fb["time_from_start"] == pytest.approx(1.0)
    np.testing.assert_allclose(fb["desired"], [0.2, 0.1], atol=1e-9)
    assert abs(fb["steps"][0] - 0.2 * SPR) <= 0.5
    np.testing.assert_allclose(fb["actual"], fb["desired"], atol=1 / SPR)


def test_ramp_to_stop_keeps_the_path_direction():
    segs = ramp_to_stop(0.0, [0.0, 0.0], [1.0, -0.5], [2.0, 10.0])
    assert segs[0].duration == pytest.approx(0.5)
    end = segs[0].eval(0.5)
    assert end[0] / end[1] == pytest.approx(-2.0)


def test_hermite_rejects_zero_duration():
    with pytest.raises(ValueError):
        hermite(1.0, 1.0, [0], [0], [0], [1], None, None)


def test_host_gone_before_a_goal_started_drops_it_without_a_fault():
    core, backend = make(1)
    core.add_segment(1, 0, min_jerk([0.0], [0.5], 1.0), True, 1.0)
    run(core, 1.0, 4.0, heartbeat=False)           # silent, but nothing runs: no fault
    assert core.fault is None
    core.host_disconnected(4.0)
    assert core.fault is None and core.pending is None
    assert [(e[1], e[2]) for e in events(core, "goal_done")] == [(1, C.CANCELED)]
    assert backend.pulse_total == [0]


def test_connection_lost_during_a_goal_ramps_and_latches():
    core, backend = make(1)
    core.add_segment(1, 0, min_jerk([0.0], [1.0], 3.0), True, 1.0)
    core.start(1, 0, 1.0)
    run(core, 1.0, 2.5)
    core.host_disconnected(2.5)
    run(core, 2.5, 5.0, heartbeat=False)
    ev = core.take_events()
    assert [e[1] for e in ev if e[0] == "fault"] == [C.CONNECTION_LOST]
    assert [(e[2], e[3]) for e in ev if e[0] == "goal_done"] == [(C.ABORTED, C.CONNECTION_LOST)]
    assert backend.steps_at(0, 5.0) < round(SPR)
    assert core.state_code(5.0) == C.FAULT


def test_sim_backend_counts_over_many_small_chunks_and_forgets_old_pulses():
    backend = SimBackend(seed_config(1).axes, keep_seconds=10.0)
    for k in range(5000):                          # one pulse every 2 ms: 5000 executor cycles
        backend.emit(0, np.array([1.0 + 0.002 * k]), np.array([1]))
    assert backend.steps_at(0, 1.0 + 0.002 * 4999) == 5000
    assert backend.steps_at(0, 5.0005) == 2001     # pulses at 1.000 ... 5.000 s
    assert backend.pulses(0)[0].size == 5000
    for k in range(5000, 12000):
        backend.emit(0, np.array([1.0 + 0.002 * k]), np.array([1]))
    assert backend.steps_at(0, 1.0 + 0.002 * 11999) == 12000
    assert backend.steps_at(0, 20.0005) == 9501    # inside the last 10 s: still exact
    assert backend.steps_at(0, 2.0) is None        # forgotten: unknown, never a wrong count
    assert backend.pulses(0)[0].size < 12000
