"""Building trajectories from JointTrajectory-shaped data: mapping, validation, dropping, merge, wrap."""
from __future__ import annotations

import logging
import math
from types import SimpleNamespace

import numpy as np
import pytest

from rospy_control.trajectory import (
    INVALID_GOAL, INVALID_JOINTS, PointState, Trajectory, TrajectoryRejected, init_joint_trajectory,
    map_joints, to_sec, wraparound_offset,
)
from traj_testutil import Duration, point, trajectory

J = ["joint1", "joint2"]
LOGGER = "rosout.rospy_control.trajectory.message"


def moving_current():
    """Current trajectory: both joints from 0 to 1 (cubic, rest to rest) over [0, 2]."""
    return Trajectory.from_states([0.0, 2.0], [PointState([0.0, 0.0], [0.0, 0.0]),
                                               PointState([1.0, 1.0], [0.0, 0.0])])


# ------------------------------------------------------------------------------------------- helpers
def test_to_sec_accepts_durations_secs_nsecs_and_numbers():
    assert to_sec(Duration(1.5)) == 1.5
    assert to_sec(SimpleNamespace(secs=2, nsecs=500000000)) == 2.5
    assert to_sec(3) == 3.0
    assert to_sec(None) == 0.0


def test_map_joints_reorders_and_refuses_bad_lists():
    np.testing.assert_array_equal(map_joints(["joint2", "joint1"], J, False), [1, 0])
    np.testing.assert_array_equal(map_joints(["joint2"], J, True), [1])
    for names, allow, fragment in ((["joint1"], False, "missing \\['joint2'\\]"),
                                   (["joint1", "nope"], False, "'nope'"),
                                   (["joint1", "joint1"], True, "more than once"),
                                   ([], True, "no joint names"),
                                   (["joint1", "joint2", "joint3"], True, "joint3")):
        with pytest.raises(TrajectoryRejected, match=fragment) as info:
            map_joints(names, J, allow)
        assert info.value.code == INVALID_JOINTS


# ------------------------------------------------------------------------------------------- validation
@pytest.mark.parametrize("points, fragment", [
    ([point([0, 0], 1.0), point([1, 1], 1.0)], "not strictly increasing.*point 1"),
    ([point([0, 0], 2.0), point([1, 1], 1.0)], "not strictly increasing"),
    ([point([0, 0], float("nan"))], "non-finite time_from_start"),
    ([point([], 1.0)], "point 0 has no positions"),
    ([point([1.0], 1.0)], "point 0 has 1 position value\\(s\\) for 2 joint"),
    ([point([1.0, 2.0], 1.0, velocities=[0.0])], "1 velocity value"),
    ([point([1.0, 2.0], 1.0, velocities=[0.0, 0.0], accelerations=[0, 0, 0])], "3 acceleration value"),
    ([point([1.0, float("nan")], 1.0)], "position of joint 'joint2' is nan"),
    ([point([1.0, 2.0], 1.0, velocities=[float("inf"), 0.0])], "velocity of joint 'joint1' is inf"),
    ([point([1.0, 2.0], 1.0, velocities=[0, 0], accelerations=[0, float("-inf")])], "acceleration of joint"),
    ([point(["a", "b"], 1.0)], "non-numeric position"),
])
def test_invalid_points_are_rejected_with_invalid_goal(points, fragment):
    with pytest.raises(TrajectoryRejected, match=fragment) as info:
        init_joint_trajectory(trajectory(J, points), J, now=100.0, current=Trajectory.hold(0.0, [0, 0]),
                              uptime=0.0)
    assert info.value.code == INVALID_GOAL


def test_dropped_points_are_not_validated():
    msg = trajectory(J, [point([1.0], 0.5), point([1.0, 2.0], 1.0)], stamp=99.4)  # first point in the past
    res = init_joint_trajectory(msg, J, now=100.0)
    assert res.first_point == 1


def test_empty_points_rejected_by_the_builder():
    with pytest.raises(TrajectoryRejected) as info:
        init_joint_trajectory(trajectory(J, []), J, now=0.0)
    assert info.value.code == INVALID_GOAL


# ------------------------------------------------------------------------------------------- no current
def test_positions_only_gives_piecewise_linear_and_joint_reordering():
    msg = trajectory(["joint2", "joint1"],
                     [point([0.0, 0.0], 1.0), point([2.0, 1.0], 2.0), point([2.0, 3.0], 4.0)])
    res = init_joint_trajectory(msg, J, now=10.0)
    traj = res.trajectory
    p, v, _ = traj.sample(11.5)  # between point 0 and 1 (stamp 0 -> starts at now = 10)
    np.testing.assert_allclose(p, [0.5, 1.0])  # joint1 gets the second column
    np.testing.assert_allclose(v, [1.0, 2.0])
    p, v, _ = traj.sample(13.0)
    np.testing.assert_allclose(p, [2.0, 2.0])
    np.testing.assert_allclose(v, [1.0, 0.0])
    assert res.joints_in_message.all() and res.start_time == 10.0 and res.end_time == 14.0


def test_mixed_fields_choose_segment_order_per_segment():
    msg = trajectory(J, [point([0, 0], 1.0, [0, 0], [0, 0]), point([1, 1], 2.0, [0, 0], [0, 0]),
                         point([2, 2], 3.0, [0, 0]), point([3, 3], 4.0)])
    traj = init_joint_trajectory(msg, J, now=0.0).trajectory
    # quintic rest-to-rest, T = 1: mid-segment velocity 1.875
    np.testing.assert_allclose(traj.sample(1.5)[1], [1.875, 1.875])
    np.testing.assert_allclose(traj.sample(2.5)[1], [1.5, 1.5])  # cubic rest to rest, T = 1
    np.testing.assert_allclose(traj.sample(3.5)[1], [1.0, 1.0])  # linear


def test_partial_goal_without_current_trajectory_is_refused():
    with pytest.raises(TrajectoryRejected) as info:
        init_joint_trajectory(trajectory(["joint1"], [point([1.0], 1.0)]), J, now=0.0,
                              allow_partial_joints_goal=True)
    assert info.value.code == INVALID_JOINTS


# ------------------------------------------------------------------------------------------- dropping
def test_first_point_at_zero_with_zero_stamp_is_dropped_silently(caplog):
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    msg = trajectory(J, [point([0, 0], 0.0), point([1, 1], 1.0)])
    res = init_joint_trajectory(msg, J, now=5.0, uptime=1.0, current=Trajectory.hold(1.0, [0, 0]))
    assert res.first_point == 1
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_other_dropped_points_give_one_clear_warning(caplog):
    import rospy_control.trajectory.message as message
    message._drop_throttle._last.clear()
    caplog.set_level(logging.DEBUG, logger=LOGGER)
    msg = trajectory(J, [point([0, 0], 0.0), point([1, 1], 1.0), point([2, 2], 3.0)], stamp=98.5)
    res = init_joint_trajectory(msg, J, now=100.0)
    assert res.first_point == 2
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1
    assert "skipping its first 2 of 3 point(s)" in warnings[0].getMessage()
    assert "Dropping" not in warnings[0].getMessage()


def test_all_points_in_the_past_are_rejected_with_invalid_goal():
    msg = trajectory(J, [point([0, 0], 0.5), point([1, 1], 1.0)], stamp=90.0)
    with pytest.raises(TrajectoryRejected,
                       match="Dropping all 2 trajectory point\\(s\\).*9.000 s in the past") as info:
        init_joint_trajectory(msg, J, now=100.0)
    assert info.value.code == INVALID_GOAL


def test_a_single_point_at_time_zero_stamped_zero_is_all_in_the_past():
    with pytest.raises(TrajectoryRejected) as info:
        init_joint_trajectory(trajectory(J, [point([0, 0], 0.0)]), J, now=100.0)
    assert info.value.code == INVALID_GOAL


# ------------------------------------------------------------------------------------------- merge
def test_merge_before_first_point_bridges_from_the_current_state():
    cur = moving_current()
    now = 0.5
    msg = trajectory(J, [point([3.0, 3.0], 1.0, [0, 0], [0, 0]), point([4.0, 4.0], 2.0, [0, 0], [0, 0])])
    res = init_joint_trajectory(msg, J, now=100.0, uptime=now, current=cur)
    traj = res.trajectory
    # continuity: at "now" the new trajectory equals the old one (position, velocity, acceleration)
    for got, want in zip(traj.sample(now), cur.sample(now)):
        np.testing.assert_allclose(got, want, atol=1e-12)
    # the bridge ends at the first point, then the message is followed
    np.testing.assert_allclose(traj.sample(now + 1.0)[0], [3.0, 3.0], atol=1e-12)
    np.testing.assert_allclose(traj.sample(now + 2.0 + 1.0)[0], [4.0, 4.0])
    # segments of joint 0: current (active now) + bridge + 1 new
    assert len(traj.joints[0]) == 3
    assert traj.joints[0].starts[1] == now and traj.joints[0].ends[1] == now + 1.0


def test_merge_mid_trajectory_drops_past_points_and_bridges_to_the_first_future_one():
    cur = moving_current()
    now = 1.0
    # stamped 1.5 s ago: points at 0.5 and 1.0 after the stamp are past, the one at 2.0 is future
    msg = trajectory(J, [point([0, 0], 0.5), point([5, 5], 1.0), point([2, 2], 2.0)], stamp=100.0 - 1.5)
    res = init_joint_trajectory(msg, J, now=100.0, uptime=now, current=cur)
    assert res.first_point == 2
    traj = res.trajectory
    np.testing.assert_allclose(traj.sample(now)[0], cur.sample(now)[0])
    np.testing.assert_allclose(traj.sample(now + 0.5)[0], [2.0, 2.0])
    # bridge to a positions-only point is linear (constant velocity)
    p0 = cur.sample(now)[0]
    np.testing.assert_allclose(traj.sample(now + 0.25)[1], (2.0 - p0) / 0.5)


def test_merge_after_the_end_of_the_current_trajectory():
    cur = moving_current()
    now = 5.0
    msg = trajectory(J, [point([2.0, 0.0], 1.0)])
    traj = init_joint_trajectory(msg, J, now=100.0, uptime=now, current=cur).trajectory
    np.testing.assert_allclose(traj.sample(now)[0], [1.0, 1.0])
    np.testing.assert_allclose(traj.sample(now + 0.5)[0], [1.5, 0.5])
    np.testing.assert_allclose(traj.sample(now + 1.0)[0], [2.0, 0.0])


def test_future_stamp_keeps_the_old_motion_until_the_start():
    cur = moving_current()
    now = 0.2
    start_in = 1.0  # message starts 1 s after "now"
    msg = trajectory(J, [point([0.0, 0.0], 0.5)], stamp=100.0 + start_in)
    traj = init_joint_trajectory(msg, J, now=100.0, uptime=now, current=cur).trajectory
    for t in np.linspace(now, now + start_in, 11)[:-1]:  # at the start itself the bridge begins
        for got, want in zip(traj.sample(t), cur.sample(t)):
            np.testing.assert_allclose(got, want, atol=1e-12)
    np.testing.assert_allclose(traj.sample(now + start_in + 0.5)[0], [0.0, 0.0])


def test_partial_goal_keeps_the_current_trajectory_of_absent_joints():
    cur = moving_current()
    now = 0.5
    msg = trajectory(["joint2"], [point([-1.0], 1.0)])
    res = init_joint_trajectory(msg, J, now=100.0, uptime=now, current=cur, allow_partial_joints_goal=True)
    np.testing.assert_array_equal(res.joints_in_message, [False, True])
    for t in np.linspace(now, 3.0, 12):
        np.testing.assert_allclose(res.trajectory.sample(t)[0][0], cur.sample(t)[0][0], atol=1e-12)
    np.testing.assert_allclose(res.trajectory.sample(now + 1.0)[0][1], -1.0)


def test_bridge_takes_velocity_and_acceleration_of_the_current_state():
    cur = moving_current()
    now = 1.0  # mid-motion: velocity 0.75
    msg = trajectory(J, [point([2.0, 2.0], 1.0, [0, 0], [0, 0])])
    traj = init_joint_trajectory(msg, J, now=100.0, uptime=now, current=cur).trajectory
    np.testing.assert_allclose(traj.sample(now)[1], cur.sample(now)[1], atol=1e-12)
    np.testing.assert_allclose(traj.sample(now + 1e-6)[1], cur.sample(now)[1], atol=1e-4)


# ------------------------------------------------------------------------------------------- wraparound
def test_wraparound_offset_takes_the_shortest_way():
    two_pi = 2 * math.pi
    off = wraparound_offset([0.0, 10 * math.pi + 0.1, 0.0], [3 * two_pi + math.pi / 4, 0.2, 3 * two_pi + 0.5],
                            [True, True, False])
    np.testing.assert_allclose(off, [-3 * two_pi, 10 * math.pi, 0.0], atol=1e-9)


@pytest.mark.parametrize("prev, nxt, moved", [
    (0.0, math.pi, math.pi),          # +pi: stays +pi
    (0.0, -math.pi, -math.pi),        # -pi: stays -pi
    (math.pi / 2, 3 * math.pi / 2, math.pi),
    (3 * math.pi / 2, math.pi / 2, -math.pi),
    (0.0, 3 * math.pi, math.pi),      # raw difference positive -> +pi
    (0.0, -3 * math.pi, -math.pi),
])
def test_wraparound_pi_singularity_follows_the_raw_difference(prev, nxt, moved):
    off = wraparound_offset([prev], [nxt], [True])
    np.testing.assert_allclose(nxt + off - prev, [moved], atol=1e-9)


def test_wraparound_applies_one_offset_to_every_point_of_continuous_joints():
    cur = Trajectory.hold(0.0, [0.0, 0.0])
    two_pi = 2 * math.pi
    msg = trajectory(J, [point([4 * two_pi + math.pi / 4, 4 * two_pi + math.pi / 4], 1.0),
                         point([4 * two_pi + math.pi / 2, 4 * two_pi + math.pi / 2], 2.0)])
    traj = init_joint_trajectory(msg, J, now=0.0, current=cur, continuous=[True, False]).trajectory
    np.testing.assert_allclose(traj.sample(1.0)[0], [math.pi / 4, 4 * two_pi + math.pi / 4])
    np.testing.assert_allclose(traj.sample(2.0)[0], [math.pi / 2, 4 * two_pi + math.pi / 2])


def test_genpy_like_times_are_accepted():
    secs = SimpleNamespace
    msg = SimpleNamespace(header=SimpleNamespace(stamp=secs(secs=0, nsecs=0)), joint_names=J,
                          points=[SimpleNamespace(positions=[1, 1], velocities=None, accelerations=None,
                                                  time_from_start=secs(secs=1, nsecs=500000000))])
    res = init_joint_trajectory(msg, J, now=3.0)
    assert res.end_time == 4.5
