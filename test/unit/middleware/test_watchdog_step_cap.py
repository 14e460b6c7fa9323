"""The command watchdog's timing rule and the position-step cap, shared by every protocol."""
from __future__ import annotations

import pytest

from rospy_control.devices.step_cap import PositionStepCap
from rospy_control.devices.watchdog import CommandWatchdog


def test_the_watchdog_sums_cycles_at_most_two_periods_each():
    wd = CommandWatchdog()
    wd.start(0.0, 0, 0.01, 0.05)
    assert wd.observe(0.01, 1)            # a first command
    assert not wd.due(1, "position")
    assert not wd.observe(0.5, 1)         # a host stall of 490 ms counts two periods only
    assert wd.stale == pytest.approx(0.02)
    assert not wd.due(1, "position")
    for k in range(3):
        wd.observe(0.51 + 0.01 * k, 1)
    assert wd.stale == pytest.approx(0.05) and wd.due(1, "position")
    assert not wd.due(1, "none")
    assert not wd.due(0, "position")      # never before a first command
    assert wd.observe(0.6, 2) and wd.stale == 0.0


def test_the_watchdog_is_off_without_a_command_timeout():
    wd = CommandWatchdog()
    wd.start(0.0, 0, 0.01, 0.0)
    wd.observe(0.01, 1)
    for k in range(100):
        wd.observe(0.02 + 0.01 * k, 1)
    assert not wd.due(1, "position")


def test_the_step_cap_starts_from_the_measured_position_and_counts_what_it_limits():
    cap = PositionStepCap("m")
    assert cap.apply(1.0, None) == 1.0 and cap.last == 1.0      # no cap: only tracked
    cap.set(0.1)
    assert cap.apply(2.0, 0.0) == pytest.approx(1.1)             # from the frame before
    cap.forget()
    assert cap.apply(2.0, 0.5) == pytest.approx(0.6)             # after none: from the measured position
    cap.forget()
    assert cap.apply(2.0, None) == 2.0                           # nothing measured yet: nothing to cap from
    assert cap.limited == 2
    cap.set(None)
    assert cap.step is None and cap.apply(-5.0, 0.0) == -5.0
    with pytest.raises(ValueError):
        cap.set(-1.0)


def test_a_quantised_cap_moves_whole_field_steps_after_rounding():
    cap = PositionStepCap("m", resolution=0.01)
    cap.set(0.035)
    assert cap.step == pytest.approx(0.03) and cap.wire == pytest.approx(0.025)
    assert cap.apply(1.0, 0.0) == pytest.approx(0.025)
