"""The board's homing against simulated limit switches, in board-clock terms (BoardCore driven directly)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rospy_control.board import homing as H
from rospy_control.board import wire
from rospy_control.board.backends import SimBackend
from rospy_control.board.config import AxisConfig, BoardConfig, HomingConfig
from rospy_control.board.core import BoardCore, Nack

from downlink_testutil import min_jerk, run

SPR = 14400 / (2 * math.pi)


def make(switch="min", at=-0.3, position=-0.25, max_travel=1.0, search=0.5, backoff=0.05, start=0.0):
    homing = HomingConfig(switch, search, backoff, position, max_travel, 0.2)
    axes = [AxisConfig("joint_1", SPR, max_velocity=2.0, max_acceleration=8.0, min_position=-3.0,
                       max_position=3.0, homing=homing),
            AxisConfig("joint_2", SPR, max_velocity=2.0, max_acceleration=8.0)]
    cfg = BoardConfig(axes, name="arm")
    backend = SimBackend(cfg.axes, switches={0: {switch: at}})
    return BoardCore(cfg, backend, t0=1.0, initial_positions=[start, 0.0]), backend


def home_until_done(core, t0=1.0, limit=20.0, dt=0.001):
    """Drive the core (1 ms ticks) until its home_done event; returns (event, board time)."""
    t = t0
    while t < t0 + limit:
        run(core, t, t + dt, dt)
        t += dt
        done = [e for e in core.take_events() if e[0] == "home_done"]
        if done:
            return done[0], t
    raise AssertionError("no home_done within the limit")


def raw_position(backend, axis, t):
    a = backend.axes[axis]
    return backend.pulse_count_at(axis, t) / (a.steps_per_unit * a.direction)


def test_numbers_agree_with_the_proto():
    pb = wire.pb()
    for name in ("BAD_REQUEST", "FAULTED", "HOMING_ACTIVE", "LIMIT_SWITCH", "OK", "HOME_SWITCH_NOT_FOUND",
                 "HOMING_ABORTED"):
        assert pb.Code.Value(name) == getattr(H, name), name
    assert pb.State.Value("HOMING") == H.HOMING


@pytest.mark.parametrize("switch,at,position", [("min", -0.3, -0.25), ("max", 0.4, 1.5)])
def test_homing_finds_the_switch_backs_off_and_sets_the_position(switch, at, position):
    core, backend = make(switch, at, position)
    core.home([], 1.0)
    assert core.state_code(1.0) == H.HOMING
    (_, ok, code, text, axes, positions, _t), t_end = home_until_done(core)
    assert ok and code == H.OK and axes == ["joint_1"], text
    # where the switch opened (raw pulses: where the axis really is) is now the home position
    raw = raw_position(backend, 0, t_end)
    step = 1.0 / SPR
    board = core.state_at(t_end)[0][0]
    assert positions[0] == pytest.approx(board)
    # the back-off stops a little past the opening (a ramp from backoff_speed); the reference is the opening
    assert board - raw == pytest.approx(position - at, abs=3 * step + 0.05 * 0.002)
    # the count the feedback reports follows the new position; the other axis never moved
    fb = core.feedback(t_end)
    assert fb["actual"][0] == pytest.approx(board, abs=step)
    assert fb["steps"][0] == int(np.floor(board * SPR + 0.5))
    assert backend.pulse_total[1] == 0
    assert fb["state"] == H.OK       # IDLE
    # the switch is open again where the axis rests, and it rests past it on the far side
    assert not backend.switch_closed(0, switch, t_end)
    sign = -1 if switch == "min" else 1
    assert sign * (raw - at) < 0
    # the search ran at the search speed, the back-off at the back-off speed (pulse intervals)
    times, dirs = backend.pulses(0)
    toward = times[dirs == sign]
    away = times[dirs == -sign]
    assert np.min(np.diff(toward)) >= 1 / (0.5 * SPR) * 0.98
    last_away = away[away > toward[-1]]
    assert np.min(np.diff(last_away)) >= 1 / (0.05 * SPR) * 0.98


def test_a_switch_never_found_within_max_travel_fails_naming_the_axis():
    core, backend = make("min", at=-5.0, max_travel=0.5)
    core.home(["joint_1"], 1.0)
    (_, ok, code, text, axes, positions, _t), t_end = home_until_done(core)
    assert not ok and code == H.HOME_SWITCH_NOT_FOUND and axes == []
    assert "'arm'" in text and "'joint_1'" in text and "min limit switch did not close" in text
    assert "max_travel 0.5" in text
    # the search ended at the max travel and the axis keeps its former positions
    assert positions[0] == pytest.approx(-0.5, abs=1e-9)
    assert raw_position(backend, 0, t_end) == pytest.approx(-0.5, abs=1 / SPR)
    assert core.homing is None and core.fault is None


def test_an_axis_on_its_switch_only_backs_off():
    core, backend = make("min", at=0.1, position=0.0)
    core.home([], 1.0)
    (_, ok, _c, text, _a, _p, _t), t_end = home_until_done(core)
    assert ok, text
    times, dirs = backend.pulses(0)
    assert np.all(dirs == 1)                    # never toward the switch
    assert raw_position(backend, 0, t_end) == pytest.approx(0.1, abs=0.002)


def test_homing_is_refused_while_a_goal_runs_and_goals_while_it_homes():
    core, _ = make()
    core.add_segment(1, 0, min_jerk([0.0, 0.0], [0.2, 0.1], 1.0), True, 1.0)
    core.start(1, 0.0, 1.0)
    with pytest.raises(Nack) as refused:
        core.home([], 1.1)
    assert refused.value.code == H.BAD_REQUEST and "a goal runs" in refused.value.reason
    run(core, 1.0, 2.5)
    core.take_events()
    core.home(["joint_1"], 2.5)
    with pytest.raises(Nack) as busy:
        core.add_segment(2, 0, min_jerk([0.2, 0.1], [0.0, 0.0], 1.0), True, 2.6)
    assert busy.value.code == H.HOMING_ACTIVE and "homing" in busy.value.reason
    with pytest.raises(Nack) as again:
        core.home([], 2.6)
    assert again.value.code == H.HOMING_ACTIVE


def test_homing_refuses_unknown_axes_and_axes_without_a_switch():
    core, _ = make()
    with pytest.raises(Nack, match="no axis 'joint_9'"):
        core.home(["joint_9"], 1.0)
    with pytest.raises(Nack, match="axis 'joint_2': no homing switch configured"):
        core.home(["joint_2"], 1.0)
    cfg = core.config
    bare = BoardCore(cfg, SimBackend(cfg.axes, switches={}), t0=1.0)
    with pytest.raises(Nack, match="sim back-end has no input for its min limit switch"):
        bare.home([], 1.0)


def test_a_cancel_aborts_the_homing_and_the_axis_stops():
    core, _ = make(at=-5.0, max_travel=2.0)
    core.home([], 1.0)
    run(core, 1.0, 1.5, 0.001)
    t_stop = core.cancel(0, 1.5)
    done = [e for e in core.take_events() if e[0] == "home_done"]
    assert done and not done[0][1] and done[0][2] == H.HOMING_ABORTED and "canceled" in done[0][3]
    run(core, 1.5, t_stop + 0.01, 0.001)
    assert core.state_at(t_stop + 0.01)[1][0] == 0.0
    assert core.homing is None


def test_a_limit_switch_closing_under_a_goal_is_the_limit_switch_fault():
    core, _ = make(at=-0.1)
    core.add_segment(1, 0, min_jerk([0.0, 0.0], [-0.3, 0.0], 1.0), True, 1.0)
    core.start(1, 0.0, 1.0)
    run(core, 1.0, 2.5, 0.001)
    faults = [e for e in core.take_events() if e[0] == "fault"]
    assert faults and faults[0][1] == H.LIMIT_SWITCH and faults[0][3] == "joint_1"
    assert "min limit switch closed" in faults[0][2]
