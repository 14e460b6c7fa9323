"""The executor's per-cycle shortcuts change nothing: same desired states, same goal results.

``TrajectoryExecutor`` keeps per grid interval whether the desired positions can leave the limits
and the path thresholds, and runs the exact tolerance check only when raw errors exceed them.  The
reference below disables both shortcuts (limit check and exact check on every cycle, as the
executor did before them); both are driven side by side through random goals, measured states
(noisy, off by whole turns on continuous joints, sometimes far off) and limits that the splines
overshoot, and must agree bit for bit on every desired state and every goal event.
"""
from __future__ import annotations

import numpy as np
import pytest

from rospy_control.trajectory import TrajectoryExecutor
from rospy_control.trajectory.limits import TrajectoryLimits
from rospy_control.trajectory.tolerances import tolerances_from_params
from traj_testutil import goal, point, tolerance, trajectory

J = ["a", "b", "c"]


class ReferenceExecutor(TrajectoryExecutor):
    """No per-interval shortcut: the limit check and the exact tolerance check run every cycle."""

    def _loop_facts(self, plan, i):
        return False, None, True


def _executors(rng):
    lower = rng.uniform(-1.2, -0.6, len(J))
    upper = rng.uniform(0.6, 1.2, len(J))
    limits = TrajectoryLimits(J, lower=lower, upper=upper)
    constraints = {"goal_time": float(rng.choice([0.0, 0.05])), "stopped_velocity_tolerance": 0.05}
    params = {"constraints": constraints}
    for name in J:
        params["constraints"][name] = {"trajectory": float(rng.choice([0.0, 0.02, 0.2])),
                                       "goal": float(rng.choice([0.0, 0.01, 0.1]))}
    continuous = [False, True, False]
    tol = tolerances_from_params(params, J)
    stop = float(rng.choice([0.0, 0.1]))
    return [cls(J, continuous, tol, stop, limits=limits) for cls in (TrajectoryExecutor, ReferenceExecutor)]


def _random_goal(rng, start_time: float):
    n_points = int(rng.integers(1, 5))
    kind = rng.integers(0, 3)  # 0 positions, 1 + velocities, 2 + accelerations
    points = []
    t = start_time
    for _ in range(n_points):
        t += float(rng.uniform(0.02, 0.3))
        pos = rng.uniform(-0.55, 0.55, len(J))
        vel = rng.uniform(-3.0, 3.0, len(J)) if kind >= 1 else None
        acc = rng.uniform(-40.0, 40.0, len(J)) if kind == 2 else None
        points.append(point(pos, t, vel, acc))
    path = [tolerance(name, position=float(rng.choice([0.0, 0.05, -1.0])),
                      velocity=float(rng.choice([0.0, 0.5, 2.0]))) for name in J if rng.random() < 0.5]
    return goal(trajectory(J, points), path_tolerance=path, goal_time_tolerance=float(rng.choice([0.0, 0.1])))


def _drive(rng, executors, cycles=600, whole_turns=False):
    """Random goals (a new one every 150 cycles, accepted alike by every executor) and measured states
    around the first executor's trajectory; yields ``(cycle, time, period, pos, vel)`` per cycle."""
    for ex in executors:
        ex.start(0.0, [0.0, 0.0, 0.0], [0.0, 0.0, 0.0])
    time = 0.0
    noise = 0.0
    ref = executors[0]
    for cycle in range(cycles):
        if cycle % 150 == 0:
            g = _random_goal(rng, 0.0)
            results = [ex.accept_goal(g, f"goal{cycle}") for ex in executors]
            assert all(res == results[0] for res in results)
            noise = float(rng.choice([0.0, 0.005, 0.05, 0.5]))
        period = float(rng.choice([0.002, 0.01, 0.0333]))
        time += period
        desired = ref.trajectory.sample(ref.uptime + period)[0]
        pos = desired + rng.normal(0.0, noise, len(J)) if noise else desired.copy()
        if whole_turns and rng.random() < 0.3:
            pos[1] += 2.0 * np.pi * rng.integers(-3, 4)  # continuous joint: whole turns are no error
        vel = rng.normal(0.0, 10.0 * noise + 1e-3, len(J))
        yield cycle, time, period, pos, vel


@pytest.mark.parametrize("seed", range(40))
def test_fast_path_matches_the_exact_check_every_cycle(seed):
    rng = np.random.default_rng(seed)
    fast, ref = _executors(rng)
    for cycle, time, period, pos, vel in _drive(rng, (ref, fast), whole_turns=True):
        if rng.random() < 0.5:
            out_fast = fast.update(time, period, pos, vel)
            out_ref = ref.update(time, period, pos, vel)
        else:
            stacked = list(pos) + list(vel)
            r_fast = fast.update_stacked(time, period, stacked)
            r_ref = ref.update_stacked(time, period, stacked)
            out_fast, out_ref = (r_fast[:3], r_fast[3:6], r_fast[6:]), (r_ref[:3], r_ref[3:6], r_ref[6:])
        for a, b in zip(out_fast, out_ref):
            assert np.array_equal(a, b), (seed, cycle, out_fast, out_ref)
        assert fast.poll_events() == ref.poll_events()
        assert fast.active_goal_key == ref.active_goal_key


@pytest.mark.parametrize("seed", range(10))
def test_desired_state_is_the_sample_put_on_the_limits(seed):
    """Where a spline overshoots a limit the joint waits on it at rest, whatever the shortcut."""
    rng = np.random.default_rng(100 + seed)
    fast, _ = _executors(rng)
    fast.start(0.0, [0.0, 0.0, 0.0])
    assert fast.accept_goal(_random_goal(rng, 0.0), "g")[0] == 0
    lower, upper = fast.limits.lower, fast.limits.upper
    time = 0.0
    clipped = 0
    for _ in range(300):
        time += 0.005
        p, v, a = fast.trajectory.sample(fast.uptime + 0.005)
        dp, dv, da = fast.update(time, 0.005, p, v)
        out = (p < lower) | (p > upper)
        clipped += int(out.any())
        np.testing.assert_allclose(dp, np.clip(p, lower, upper), rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(dv, np.where(out, 0.0, v), rtol=0.0, atol=1e-12)
        np.testing.assert_allclose(da, np.where(out, 0.0, a), rtol=0.0, atol=1e-12)
        assert np.all(dp >= lower) and np.all(dp <= upper)


@pytest.mark.parametrize("seed", range(30))
def test_positions_only_cycles_agree_with_the_whole_sample(seed):
    """``update_positions`` (what the position trajectory controller runs) evaluates only the rows
    it needs and samples the rest when asked: the same desired positions (to rounding), the same goal
    events and the same feedback as a cycle that samples everything."""
    rng = np.random.default_rng(200 + seed)
    whole, _ = _executors(rng)
    rng2 = np.random.default_rng(200 + seed)
    lean, _ = _executors(rng2)
    events = 0
    for cycle, time, period, pos, vel in _drive(rng, (whole, lean)):
        stacked = list(pos) + list(vel)
        r = whole.update_stacked(time, period, stacked)
        positions = lean.update_positions(time, period, stacked)
        assert isinstance(positions, list) and len(positions) >= len(J)
        np.testing.assert_allclose(positions[:len(J)], r[:len(J)], rtol=0.0, atol=1e-12)
        ew, el = whole.poll_events(), lean.poll_events()
        assert ew == el, (seed, cycle)
        events += len(ew)
        assert whole.active_goal_key == lean.active_goal_key
        if cycle % 7 == 0:
            fw, fl = whole.feedback(), lean.feedback()
            for a, b in ((fw.desired_positions, fl.desired_positions),
                         (fw.desired_velocities, fl.desired_velocities),
                         (fw.desired_accelerations, fl.desired_accelerations)):
                np.testing.assert_allclose(b, a, rtol=0.0, atol=1e-9)
    assert events > 0  # goals were accepted and ended: the comparison saw their outcomes
