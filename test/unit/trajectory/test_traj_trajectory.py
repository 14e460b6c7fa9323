"""Multi-joint trajectories: find/sample, compiled grid vs per-joint reference, hold and stop ramp."""
from __future__ import annotations

import numpy as np
import pytest

from rospy_control.trajectory import JointPieces, PointState, SplineSegment, Trajectory, TrajectoryError
from rospy_control.trajectory.segment import QUINTIC, spline_coefficients


def three_point_trajectory():
    states = [PointState([0.0, 0.0], [0.0, 0.0]), PointState([1.0, -1.0], [0.5, 0.0]),
              PointState([2.0, 0.0], [0.0, 0.0])]
    return Trajectory.from_states([1.0, 2.0, 4.0], states), states


def test_sample_at_knots_inside_before_and_after():
    traj, states = three_point_trajectory()
    assert traj.n_joints == 2 and traj.start_time == 1.0 and traj.end_time == 4.0
    for t, st in zip((1.0, 2.0), states):
        p, v, _ = traj.sample(t)
        np.testing.assert_allclose(p, st.positions, atol=1e-12)
        np.testing.assert_allclose(v, st.velocities, atol=1e-12)
    p, v, a = traj.sample(4.0 + 1e-9)
    np.testing.assert_allclose(p, [2.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(v, [0.0, 0.0])
    np.testing.assert_allclose(a, [0.0, 0.0])
    p, v, a = traj.sample(0.0)
    np.testing.assert_allclose(p, [0.0, 0.0])
    np.testing.assert_allclose(v, [0.0, 0.0])
    # inside the second segment: same as the segment itself
    seg = SplineSegment(2.0, states[1], 4.0, states[2])
    for t in (2.3, 3.1, 3.99):
        for got, want in zip(traj.sample(t), seg.sample(t)):
            np.testing.assert_allclose(got, want, atol=1e-12)


def test_find_segment():
    traj, _ = three_point_trajectory()
    assert traj.find_segment(0, 0.5) == -1
    assert traj.find_segment(0, 1.0) == 0
    assert traj.find_segment(1, 1.99) == 0
    assert traj.find_segment(1, 2.0) == 1
    assert traj.find_segment(0, 99.0) == 1
    assert len(traj.segments(0)) == 2 and traj.segments(0)[1].start_time == 2.0


def test_compiled_grid_matches_per_joint_reference_with_different_knots():
    rng = np.random.default_rng(7)
    joints = []
    for j in range(4):
        k = int(rng.integers(1, 5))
        knots = np.cumsum(rng.uniform(0.1, 1.0, size=k + 1)) + rng.uniform(-1, 1)
        p = rng.normal(size=k + 1)
        v = rng.normal(size=k + 1)
        a = rng.normal(size=k + 1)
        coefs = spline_coefficients(QUINTIC, np.diff(knots), p[:-1], p[1:], v[:-1], v[1:], a[:-1], a[1:])
        joints.append(JointPieces(knots[:-1], knots[1:], coefs))
    traj = Trajectory(joints)
    for t in np.concatenate((rng.uniform(-3, 8, size=300), [jp.starts[0] for jp in joints],
                             [jp.ends[-1] for jp in joints])):
        p, v, a = traj.sample(t)
        for j, jp in enumerate(joints):
            ref = jp.sample(t)
            np.testing.assert_allclose([p[j], v[j], a[j]], ref, rtol=1e-8, atol=1e-8)


def test_grid_masks_mark_path_and_goal_phases():
    traj, _ = three_point_trajectory()
    assert not traj.in_path[traj.interval(0.5)].any()
    assert traj.in_path[traj.interval(1.5)].all()
    assert not traj.at_end[traj.interval(3.0)].any()
    assert traj.at_end[traj.interval(4.0)].all()
    assert not traj.in_path[traj.interval(4.0)].any()


def test_hold_is_a_zero_length_segment_with_zero_velocity():
    traj = Trajectory.hold(3.0, [0.1, -0.2, 0.3])
    for t in (0.0, 3.0, 5.0):
        p, v, a = traj.sample(t)
        np.testing.assert_allclose(p, [0.1, -0.2, 0.3])
        np.testing.assert_allclose(v, 0.0)
        np.testing.assert_allclose(a, 0.0)
    assert traj.at_end[traj.interval(3.0)].all()
    with pytest.raises(TrajectoryError):
        Trajectory.hold(0.0, [float("nan")])


@pytest.mark.parametrize("v0", [1.0, -2.5, 0.0])
def test_stop_ramp_decelerates_to_zero_without_reversing(v0):
    d = 0.4
    traj = Trajectory.stop_ramp(10.0, [0.5, 0.5], [v0, -v0], d)
    times = np.linspace(10.0, 10.0 + d, 201)
    vel = np.array([traj.sample(t)[1] for t in times])
    np.testing.assert_allclose(vel[0], [v0, -v0], atol=1e-12)  # continuous with the start state
    np.testing.assert_allclose(vel[-1], [0.0, 0.0], atol=1e-9)
    assert np.all(vel[:, 0] * np.sign(v0) >= -1e-12)  # never reverses
    assert np.all(np.diff(np.abs(vel[:, 0])) <= 1e-12)  # monotone deceleration
    p_end, v_end, a_end = traj.sample(10.0 + d + 0.1)
    np.testing.assert_allclose(p_end, [0.5 + 5 * v0 * d / 8, 0.5 - 5 * v0 * d / 8], atol=1e-12)
    np.testing.assert_allclose(v_end, 0.0)
    np.testing.assert_allclose(a_end, 0.0)
    # at the end of the ramp the acceleration is that of the midpoint of the symmetric 2d quintic
    np.testing.assert_allclose(traj.sample(10.0 + d - 1e-9)[2][0], -1.5 * v0 / d, atol=1e-6)


def test_stop_ramp_with_zero_duration_is_a_hold():
    traj = Trajectory.stop_ramp(1.0, [0.2], [3.0], 0.0)
    np.testing.assert_allclose(traj.sample(1.0)[1], [0.0])


def test_invalid_trajectories():
    with pytest.raises(TrajectoryError):
        Trajectory([])
    with pytest.raises(TrajectoryError):
        JointPieces([], [], np.zeros((0, 6)))
    with pytest.raises(TrajectoryError):
        JointPieces([1.0], [0.5], np.zeros((1, 6)))
    with pytest.raises(TrajectoryError):
        JointPieces([1.0, 0.5], [2.0, 2.0], np.zeros((2, 6)))
    with pytest.raises(TrajectoryError):
        Trajectory.stop_ramp(0.0, [0.0, 1.0], [0.0], 1.0)


def test_single_state_trajectory_holds_that_state():
    traj = Trajectory.from_states([2.0], [PointState([1.0])])
    np.testing.assert_allclose(traj.sample(5.0)[0], [1.0])
    assert "1 joints" in repr(traj)
