"""Tolerance parameters, goal overrides and checks."""
from __future__ import annotations

import math

import numpy as np
import pytest

from rospy_control.exceptions import ConfigError
from rospy_control.trajectory import (
    StateTolerances, Tolerances, check_state_tolerance, shortest_angular_distance, tolerances_from_params,
)
from traj_testutil import Duration, tolerance

J = ["joint1", "joint2"]


def test_defaults_without_parameters():
    tol = tolerances_from_params({}, J)
    np.testing.assert_array_equal(tol.path.position, [0, 0])
    np.testing.assert_array_equal(tol.goal.position, [0, 0])
    np.testing.assert_array_equal(tol.goal.velocity, [0.01, 0.01])  # stopped_velocity_tolerance
    np.testing.assert_array_equal(tol.goal_time, [0.0, 0.0])


def test_nested_parameters_as_upstream_tolerances_test():
    params = {"constraints": {"goal_time": 1.0, "stopped_velocity_tolerance": 0.02,
                              "joint1": {"trajectory": 0.05, "goal": 0.03},
                              "joint2": {"goal": 0.01},
                              "unknown_joint": {"goal": 9.0}}}
    tol = tolerances_from_params(params, J)
    np.testing.assert_array_equal(tol.goal_time, [1.0, 1.0])
    np.testing.assert_array_equal(tol.goal.velocity, [0.02, 0.02])
    np.testing.assert_array_equal(tol.path.position, [0.05, 0.0])
    np.testing.assert_array_equal(tol.goal.position, [0.03, 0.01])
    np.testing.assert_array_equal(tol.path.velocity, [0.0, 0.0])


def test_flat_keys_and_node_handle_like_sources():
    flat = {"constraints/goal_time": 0.5, "constraints/joint2/trajectory": 0.1}
    tol = tolerances_from_params(flat, J)
    assert tol.goal_time[0] == 0.5 and tol.path.position[1] == 0.1

    class FakeNh:
        def get_param(self, key, default):
            return {"constraints/joint1/goal": 0.2}.get(key, default)

    assert tolerances_from_params(FakeNh(), J).goal.position[0] == 0.2


@pytest.mark.parametrize("value", ["fast", None, float("nan")])
def test_bad_values_raise_config_error_naming_the_key(value):
    with pytest.raises(ConfigError, match="constraints/joint1/goal"):
        tolerances_from_params({"constraints": {"joint1": {"goal": value}}}, J, source="/arm_controller")


def test_goal_overrides_replace_disable_or_keep():
    base = Tolerances(2, StateTolerances(2, position=[0.05, 0.05], velocity=[0.1, 0.1]),
                      StateTolerances(2, position=[0.01, 0.01], velocity=[0.01, 0.01]), 0.5)
    tol = base.with_goal(J, path_tolerance=[tolerance("joint1", position=0.2, velocity=-1.0),
                                            tolerance("nope", position=5.0)],
                         goal_tolerance=[tolerance("joint2", position=-1.0, velocity=0.0, acceleration=0.3)],
                         goal_time_tolerance=Duration(2.0))
    np.testing.assert_array_equal(tol.path.position, [0.2, 0.05])
    np.testing.assert_array_equal(tol.path.velocity, [0.0, 0.1])
    np.testing.assert_array_equal(tol.goal.position, [0.01, 0.0])
    np.testing.assert_array_equal(tol.goal.velocity, [0.01, 0.01])
    np.testing.assert_array_equal(tol.goal.acceleration, [0.0, 0.3])
    np.testing.assert_array_equal(tol.goal_time, [2.0, 2.0])
    assert base.goal_time[0] == 0.5  # the defaults are untouched
    assert base.with_goal(J, goal_time_tolerance=-1.0).goal_time[0] == 0.0
    assert base.with_goal(J, goal_time_tolerance=0.0).goal_time[0] == 0.5


def test_merged_takes_other_for_masked_joints():
    a = Tolerances(2, goal_time=1.0)
    b = Tolerances(2, StateTolerances(2, position=[3.0, 3.0]), goal_time=2.0)
    m = a.merged(b, [False, True])
    np.testing.assert_array_equal(m.path.position, [0.0, 3.0])
    np.testing.assert_array_equal(m.goal_time, [1.0, 2.0])


def test_shortest_angular_distance():
    np.testing.assert_allclose(shortest_angular_distance(0.1, 2 * math.pi - 0.1), -0.2, atol=1e-12)
    np.testing.assert_allclose(shortest_angular_distance(0.0, 3 * math.pi), math.pi, atol=1e-12)
    np.testing.assert_allclose(shortest_angular_distance([0.0, 1.0], [0.5, 0.5]), [0.5, -0.5])


def test_check_state_tolerance_zero_means_not_enforced():
    tol = StateTolerances(3, position=[0.1, 0.0, 0.1], velocity=[0.0, 0.0, 0.5])
    ok = check_state_tolerance(np.array([0.2, 100.0, 0.05]), np.array([9.0, 9.0, 0.6]), tol)
    np.testing.assert_array_equal(ok, [False, True, False])
