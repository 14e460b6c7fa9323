"""Fuzzing the joint trajectory controller with hostile goals and commands, ROS-free.

Bursts of generated FollowJointTrajectory goals and ``command`` trajectories (``fuzz_goal_gen``: wrong,
duplicated, unknown and empty joint names, NaN/inf in every field and in times, huge values,
non-increasing and negative times, empty points, size mismatches, stamps far in the past and future,
points longer than the joints, random cancels) go to a position JointTrajectoryController of the
example arm (urdf/arm.urdf with config/arm_joint_limits.yaml, the arm_controller parameters of
config/arm_controllers.yaml) on the in-memory controller manager rig.  For every one:

* an action goal the oracle refuses is REJECTED at once with exactly the expected code and a
  non-empty error_string; every other goal is accepted and ends SUCCEEDED, PREEMPTED or ABORTED
  with PATH/GOAL_TOLERANCE_VIOLATED and an error_string;
* every cycle, every position command the controller writes is finite and inside the joint's limits,
  and every ``state`` message is finite;
* afterwards the controller holds still and a valid goal succeeds.

``make test`` runs a fixed, derandomized budget; ``FUZZ_EXAMPLES=<n>`` (``make fuzz``) a larger
randomized one.  Figures (per category: sent, rejected by code, accepted, outcome) are printed with
``-s`` and written to ``.ws/fuzz/unit_goals.json``.
"""
from __future__ import annotations

import json
import math
import os
import sys
from collections import Counter, defaultdict

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from rospy_control.testing import GoalStatus
from test_jtc_sim import JtcRig, fjt_goal, pt, traj

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "test", "integration"))
import fuzz_goal_gen as gen  # noqa: E402

RANDOM_BUDGET = int(os.environ.get("FUZZ_EXAMPLES", "0") or 0)
BURSTS = RANDOM_BUDGET or 400          # bursts of 1-6 goals: ~1400 goals in make test
LONG_BURSTS = max(4, (RANDOM_BUDGET or 0) // 50)
SETTINGS = dict(max_examples=BURSTS, derandomize=not RANDOM_BUDGET, deadline=None, database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.function_scoped_fixture])

with open(os.path.join(ROOT, "urdf", "arm.urdf")) as f:
    URDF = f.read()
with open(os.path.join(ROOT, "config", "arm_controllers.yaml")) as f:
    PARAMS = yaml.safe_load(f)["arm_controller"]
with open(os.path.join(ROOT, "config", "arm_joint_limits.yaml")) as f:
    JOINT_LIMITS = yaml.safe_load(f)["joint_limits"]
JOINTS = PARAMS["joints"]
ARM = gen.Arm.from_urdf(URDF, JOINTS, JOINT_LIMITS)
TERMINAL_OK = {GoalStatus.SUCCEEDED, GoalStatus.PREEMPTED, GoalStatus.ABORTED}
FIGURES: dict = {"categories": defaultdict(Counter), "cycles": 0, "commands_checked": 0,
                 "max_excess": -math.inf}


class FuzzRig(JtcRig):
    """The arm's JTC on the JTC rig; every cycle checks the position commands against the limits."""

    def __init__(self) -> None:
        start = [0.5 * (a + b) for a, b in (ARM.safe_range(j) for j in range(len(JOINTS)))]
        super().__init__({j: "revolute" for j in JOINTS}, positions=start, tau=0.02)
        self.root_nh.set_param("robot_description", URDF)
        self.root_nh.set_param("joint_limits", JOINT_LIMITS)
        self.ctrl = self.start("arm_controller", PARAMS["type"], dict(PARAMS))
        self.states = self.record_state()
        self.violations = []

    def control(self, t: float, dt: float) -> None:
        super().control(t, dt)
        FIGURES["cycles"] += 1
        for j, name in enumerate(JOINTS):
            cmd = self.robot.data[name].command_position
            FIGURES["commands_checked"] += 1
            if not math.isfinite(cmd):
                self.violations.append((t, name, cmd))
                continue
            excess = max(ARM.lower[j] - cmd, cmd - ARM.upper[j])
            FIGURES["max_excess"] = max(FIGURES["max_excess"], excess)
            if excess > 1e-9:
                plan = self.ctrl.executor._plan
                self.violations.append((t, name, cmd, self.robot.data[name].position, plan,
                                        self.ctrl.executor.uptime))

    def check_states(self) -> None:
        for m in self.states:
            for field in (m.desired.positions, m.desired.velocities, m.desired.accelerations,
                          m.error.positions, m.actual.positions):
                assert all(math.isfinite(v) for v in field), m
        del self.states[:]


@pytest.fixture(scope="module")
def fuzz_rig():
    rig = FuzzRig()
    yield rig
    rig.close()


def send_burst(rig: FuzzRig, burst, gaps, wire: bool) -> None:
    client = rig.client()
    rig.violations = []
    sent = []
    for case, gap in zip(burst, gaps):
        now = rig.t + rig.dt
        expect = case.expect(now)
        counts = FIGURES["categories"][case.category]
        counts[f"{case.via} sent"] += 1
        if case.via == "topic":
            rig.publish(case.materialize(now, wire))
            rig.run(gap)
            continue
        handle = client.send_goal(case.goal(now, wire))
        status = handle.get_goal_status()
        if expect != gen.ACCEPT:
            assert status == GoalStatus.REJECTED, (case, handle.get_result())
            result = handle.get_result()
            assert result.error_code == expect, (case, result)
            assert result.error_string, case
            counts[f"rejected {gen.CODE_NAMES[expect]}"] += 1
        else:
            assert status != GoalStatus.REJECTED, (case, handle.get_result())
            counts["accepted"] += 1
            sent.append((case, handle))
        if case.cancel_after is not None:
            rig.run(case.cancel_after)
            handle.cancel()
            counts["canceled"] += 1
        rig.run(gap)
    # end of the burst: an empty goal preempts whatever runs; everything must have ended properly
    final = client.send_goal(fjt_goal(traj(JOINTS, [])))
    rig.run(3.0, until=lambda: final.is_done() and all(h.is_done() for _, h in sent))
    assert final.get_goal_status() == GoalStatus.SUCCEEDED, final.get_result()
    for case, handle in sent:
        status = handle.get_goal_status()
        assert status in TERMINAL_OK, (case, status, handle.get_result())
        FIGURES["categories"][case.category][f"ended {GoalStatus.NAMES[status]}"] += 1
        if status == GoalStatus.ABORTED:
            result = handle.get_result()
            assert result.error_code in (gen.PATH_TOLERANCE_VIOLATED, gen.GOAL_TOLERANCE_VIOLATED), \
                (case, result)
            assert result.error_string, case
    assert not rig.violations, rig.violations[:5]
    rig.check_states()


@settings(**SETTINGS)
@given(burst=gen.bursts(gen.Arm(JOINTS, ARM.lower, ARM.upper, ARM.max_velocity, ARM.continuous),
                        long_ok=False),
       gaps=st.lists(st.sampled_from([0.0, 0.01, 0.05, 0.2, 0.5]), min_size=6, max_size=6),
       wire=st.booleans())
def test_fuzzed_goal_bursts(fuzz_rig, burst, gaps, wire):
    send_burst(fuzz_rig, burst, gaps, wire)


@settings(**dict(SETTINGS, max_examples=LONG_BURSTS))
@given(burst=gen.bursts(ARM, max_size=2, categories=("long_10000", "long_10000_bad", "valid")),
       gaps=st.lists(st.sampled_from([0.0, 0.3]), min_size=2, max_size=2))
def test_fuzzed_10000_point_goals(fuzz_rig, burst, gaps):
    send_burst(fuzz_rig, burst, gaps, True)


def test_zz_alive_and_holding_afterwards(fuzz_rig):
    """After every fuzzed goal: the arm is still, and a valid goal succeeds (then report figures)."""
    rig = fuzz_rig
    rig.run(1.0)
    before = rig.robot.positions()
    rig.run(1.0)
    assert max(abs(a - b) for a, b in zip(before, rig.robot.positions())) < 1e-3
    target = [0.5 * (a + b) + 0.1 for a, b in (ARM.safe_range(j) for j in range(len(JOINTS)))]
    handle = rig.client().send_goal(fjt_goal(traj(JOINTS, [pt(target, 1.5, [0.0] * 6, [0.0] * 6)])))
    rig.run(5.0, until=handle.is_done)
    assert handle.get_goal_status() == GoalStatus.SUCCEEDED, handle.get_result()
    assert rig.robot.positions() == pytest.approx(target, abs=0.03)
    assert not rig.violations
    report = {"categories": {c: dict(v) for c, v in sorted(FIGURES["categories"].items())},
              "cycles": FIGURES["cycles"], "commands_checked": FIGURES["commands_checked"],
              "max_command_beyond_limit": FIGURES["max_excess"]}
    os.makedirs(os.path.join(ROOT, ".ws", "fuzz"), exist_ok=True)
    with open(os.path.join(ROOT, ".ws", "fuzz", "unit_goals.json"), "w") as out:
        json.dump(report, out, indent=1, sort_keys=True)
    print(json.dumps(report, indent=1, sort_keys=True))
