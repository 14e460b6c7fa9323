"""The integration step every simulated joint shares (rospy_control.simulator.physics)."""
from __future__ import annotations

from rospy_control.simulator.physics import MAX_STEPS, move, steps_due


def test_friction_slows_the_joint_and_stops_it_rather_than_reverse_it():
    assert move(0.0, 1.0, 0.5, 0.25) == (0.375, 0.75)
    assert move(0.0, -1.0, 0.5, 0.25) == (-0.375, -0.75)
    assert move(0.5, 0.2, 0.1, 0.25) == (0.5, 0.0)
    assert move(0.5, -0.25, 0.1, 0.25) == (0.5, 0.0)


def test_an_end_stop_holds_the_joint_and_keeps_only_a_velocity_that_leaves_it():
    assert move(0.95, 1.0, 0.1, 0.0, -1.0, 1.0) == (1.0, 0.0)
    assert move(-0.95, -1.0, 0.1, 0.0, -1.0, 1.0) == (-1.0, 0.0)
    assert move(0.95, 1.0, 0.1, 0.0) == (1.05, 1.0)   # no stops by default


def test_the_steps_due_start_at_the_first_call_and_leave_the_remainder_for_the_next():
    assert steps_due(None, 3.0, 0.5) == (0, 3.0)
    assert steps_due(3.0, 3.2, 0.5) == (0, 3.0)
    assert steps_due(3.0, 4.2, 0.5) == (2, 4.0)


def test_a_long_silence_is_not_caught_up():
    n, t = steps_due(0.0, 100.0, 0.001)
    assert n == MAX_STEPS and abs(t - 100.0) < 1e-9
    assert steps_due(0.0, 10.0, 1.0, max_steps=3) == (3, 10.0)
