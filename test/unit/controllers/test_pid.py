"""Pid (control_toolbox semantics) and the angle helpers."""
from __future__ import annotations

import math

import pytest

from rospy_control.angles import (
    shortest_angular_distance, shortest_angular_distance_with_large_limits,
)
from rospy_control.controllers.pid import Pid
from rospy_control.exceptions import ConfigError
from rospy_control.testing import InMemoryNodeHandle


def test_proportional_only():
    pid = Pid(p=2.0)
    assert pid.compute_command(0.5, 0.01) == pytest.approx(1.0)
    assert pid.get_current_pid_errors()[0] == 0.5


def test_integral_accumulates_error_times_dt():
    pid = Pid(i=10.0, i_max=100.0, i_min=-100.0)
    for _ in range(5):
        command = pid.compute_command(1.0, 0.1)
    assert pid.i_error == pytest.approx(0.5)
    assert command == pytest.approx(5.0)


def test_integral_term_clamped_without_antiwindup_but_error_keeps_growing():
    pid = Pid(i=1.0, i_max=0.5, i_min=-0.5)
    for _ in range(10):
        command = pid.compute_command(1.0, 1.0)
    assert command == pytest.approx(0.5)
    assert pid.i_error == pytest.approx(10.0)
    # winding back down takes as long as it took to wind up
    command = pid.compute_command(-1.0, 1.0)
    assert command == pytest.approx(0.5)


def test_antiwindup_clamps_the_integral_itself():
    pid = Pid(i=2.0, i_max=1.0, i_min=-1.0, antiwindup=True)
    for _ in range(10):
        command = pid.compute_command(1.0, 1.0)
    assert pid.i_error == pytest.approx(0.5)          # i_max / |i|
    assert command == pytest.approx(1.0)
    command = pid.compute_command(-1.0, 1.0)          # recovers immediately
    assert pid.i_error == pytest.approx(-0.5)
    assert command == pytest.approx(-1.0)


def test_antiwindup_with_zero_i_gain_is_harmless():
    pid = Pid(p=1.0, i=0.0, i_max=1.0, i_min=-1.0, antiwindup=True)
    assert pid.compute_command(2.0, 0.1) == pytest.approx(2.0)


def test_derivative_from_finite_difference_and_given_error_dot():
    pid = Pid(d=0.5)
    assert pid.compute_command(1.0, 0.1) == pytest.approx(0.5 * (1.0 - 0.0) / 0.1)
    assert pid.compute_command(1.5, 0.1) == pytest.approx(0.5 * 0.5 / 0.1)
    assert pid.compute_command(1.5, 0.1, error_dot=-2.0) == pytest.approx(-1.0)


@pytest.mark.parametrize("dt,error", [(0.0, 1.0), (-0.1, 1.0), (0.1, math.nan), (0.1, math.inf)])
def test_invalid_dt_or_error_returns_zero_and_keeps_state(dt, error):
    pid = Pid(p=1.0, i=1.0, i_max=10, i_min=-10)
    pid.compute_command(1.0, 0.1)
    before = pid.get_current_pid_errors()
    assert pid.compute_command(error, dt) == 0.0
    assert pid.get_current_pid_errors() == before


def test_reset_forgets_history():
    pid = Pid(p=1.0, i=1.0, d=1.0, i_max=10, i_min=-10)
    pid.compute_command(1.0, 0.1)
    pid.reset()
    assert pid.get_current_pid_errors() == (0.0, 0.0, 0.0)
    assert pid.compute_command(1.0, 0.1) == pytest.approx(1.0 + 0.1 + 10.0)


def test_from_params():
    nh = InMemoryNodeHandle("/ctrl")
    nh.set_param("pid", {"p": 100, "i": 1.0, "d": 2.0, "i_clamp": -3.0})
    gains = Pid.from_params(nh.child("pid")).get_gains()
    assert tuple(gains) == (100.0, 1.0, 2.0, 3.0, -3.0, False)
    nh.set_param("pid", {"p": 1.0, "i_clamp": 3.0, "i_clamp_min": -1.0, "antiwindup": True})
    gains = Pid.from_params(nh.child("pid")).get_gains()
    assert (gains.i_max, gains.i_min, gains.antiwindup) == (3.0, -1.0, True)


def test_from_params_errors():
    nh = InMemoryNodeHandle("/ctrl")
    with pytest.raises(ConfigError, match="No p gain specified for pid. Namespace: /ctrl/pid"):
        Pid.from_params(nh.child("pid"))
    nh.set_param("pid", {"p": "high"})
    with pytest.raises(ConfigError, match="PID gain 'p' must be a number"):
        Pid.from_params(nh.child("pid"))


@pytest.mark.parametrize("a,b,expected", [
    (0.0, 1.0, 1.0), (1.0, 0.0, -1.0), (3.0, -3.0, 2 * math.pi - 6.0), (-3.0, 3.0, 6.0 - 2 * math.pi),
    (0.0, 2 * math.pi, 0.0), (0.0, math.pi, math.pi),
])
def test_shortest_angular_distance(a, b, expected):
    assert shortest_angular_distance(a, b) == pytest.approx(expected)


def test_shortest_angular_distance_with_large_limits():
    # free: plain shortest
    assert shortest_angular_distance_with_large_limits(0.0, 1.0, -10.0, 10.0) == pytest.approx(1.0)
    # the short way (through +pi) would leave [-3.5, 3.0]: go the long way round
    d = shortest_angular_distance_with_large_limits(2.9, -2.9, -3.5, 3.0)
    assert d == pytest.approx(-5.8)
    # limits wider than 2 pi: 0 -> 2pi-0.1 short way is -0.1
    assert shortest_angular_distance_with_large_limits(0.0, 2 * math.pi - 0.1, -7, 7) == pytest.approx(-0.1)
    # inverted limits: shortest, no limit handling
    assert shortest_angular_distance_with_large_limits(0.0, 1.0, 1.0, -1.0) == pytest.approx(1.0)
