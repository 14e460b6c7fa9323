#!/usr/bin/env python3
"""rostest node: hostile goals and command trajectories against the driver and the simulated arm
(``~messages`` per branch: 500 in make test, 1000 over the two branches; make fuzz runs more).

Issue #12 item 4, the ROS layer of the fuzzing (the ROS-free layer is
``test/unit/controllers/test_fuzz_jtc_goals.py``; the recipes and their oracle are ``fuzz_goal_gen.py``).
Runs in either branch (``~use_ros_control``): ``/arm_controller/follow_joint_trajectory`` and
``/arm_controller/command`` are the controller manager's JTC or the standalone branch's, which must
answer identically.

Bursts of generated cases (wrong, duplicated, unknown and empty joint names; NaN and inf in every
field; huge values and times; non-increasing and negative times; empty points; size mismatches;
stamps far in the past and the future; 10 000-point trajectories; random cancels) are sent back to
back, so that accepted goals preempt each other; each burst ends with an empty goal (hold).  Checked:

* every action goal the oracle refuses is REJECTED with exactly the expected code and a non-empty
  error_string; every other goal is accepted and ends SUCCEEDED, PREEMPTED (or RECALLED, canceled
  before it was processed) or ABORTED with PATH/GOAL_TOLERANCE_VIOLATED and an error_string;
* no desired position on ``/arm_controller/state`` leaves the joint limits (URDF tightened by the
  ``joint_limits`` parameters), nothing there or on ``/joint_states`` is non-finite, and the joints stay
  within 0.1 rad of their limits;
* the simulated firmware never received a position step larger than the joint's velocity limit allows
  over two control periods (its command statistics, reset at the start, read from ``/diagnostics``);
* afterwards the node is alive and holding, and a valid goal succeeds.

Budget: the cases come from a derandomized hypothesis run (``~bursts`` of them, reproducible); the
test stops sending after ``~time_budget`` seconds.  ``FUZZ_EXAMPLES=<n>`` in the environment
(``make fuzz``) draws ``n`` random bursts instead and lifts the time budget to ``FUZZ_TIME`` (600 s).
Figures: printed, and written to ``.ws/fuzz/ros_<branch>.json``.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
import unittest
from collections import Counter, defaultdict

import actionlib
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryAction
from hypothesis import HealthCheck, given, settings, strategies as st
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectory

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import driver_test_utils as u  # noqa: E402
import fuzz_goal_gen as gen  # noqa: E402
from test_driver_faults import motor_step_bounds  # noqa: E402

ARM = "arm_controller"
NAMES = {v: k for k, v in vars(GoalStatus).items() if k.isupper() and isinstance(v, int)}
RANDOM_BUDGET = int(os.environ.get("FUZZ_EXAMPLES", "0") or 0)


def draw_bursts(arm: gen.Arm, n: int, long_cases: int):
    """``n`` bursts of 1-8 cases (derandomized unless FUZZ_EXAMPLES), plus ``long_cases`` bursts of
    10 000-point trajectories."""
    out = []

    @settings(max_examples=n, derandomize=not RANDOM_BUDGET, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(burst=gen.bursts(arm, max_size=14, long_ok=False),
           gaps=st.lists(st.sampled_from([0.0, 0.0, 0.0, 0.01, 0.03, 0.1, 0.3]), min_size=14, max_size=14))
    def collect(burst, gaps):
        out.append((burst, gaps))

    collect()
    longs = []

    @settings(max_examples=max(long_cases, 1), derandomize=not RANDOM_BUDGET, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(case=gen.cases(arm, categories=("long_10000", "long_10000_bad"), via="action"))
    def collect_long(case):
        longs.append(([case], [0.0]))

    collect_long()
    # the long ones spread over the run, each in a burst of its own
    step = max(1, len(out) // max(1, len(longs)))
    for k, item in enumerate(longs[:long_cases]):
        out.insert(min(len(out), (k + 1) * step), item)
    return out


class FuzzGoalsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_fuzz_goals")
        cls.branch = "ros_control" if rospy.get_param("~use_ros_control") else "standalone"
        cls.driver = rospy.get_param("~driver_name", "/driver")
        cls.control_rate = float(rospy.get_param("~control_rate", 200.0))
        cls.time_budget = float(os.environ.get("FUZZ_TIME", "600")) if RANDOM_BUDGET else \
            float(rospy.get_param("~time_budget", 100.0))
        cls.n_bursts = RANDOM_BUDGET or int(rospy.get_param("~bursts", 200))
        cls.n_long = max(4, cls.n_bursts // 50)
        cls.target = int(rospy.get_param("~messages", 1100))
        urdf = rospy.get_param("robot_description")
        cls.urdf = urdf
        cls.joints = rospy.get_param(ARM + "/joints")
        cls.arm = gen.Arm.from_urdf(urdf, cls.joints, rospy.get_param("joint_limits", {}))
        cls.step_bounds = motor_step_bounds(urdf, 1.0 / cls.control_rate)
        cls.js = u.JointStates()
        cls.state = u.ControllerState(ARM)
        cls.diag = u.Diagnostics()
        cls.client = actionlib.ActionClient(ARM + "/follow_joint_trajectory", FollowJointTrajectoryAction)
        if not cls.client.wait_for_server(rospy.Duration(180.0)):
            raise AssertionError("arm_controller/follow_joint_trajectory not available")
        cls.simple = u.client(ARM, 60.0)
        cls.command = rospy.Publisher(ARM + "/command", JointTrajectory, queue_size=10)
        rospy.wait_for_service(f"{cls.driver}/sim/reset_command_stats", 60.0)
        cls.reset_stats = rospy.ServiceProxy(f"{cls.driver}/sim/reset_command_stats", Trigger)
        if not u.wait_for(lambda: cls.js.positions(cls.joints) is not None, 60.0):
            raise AssertionError("no /joint_states with the arm joints")
        cls.figures = {"branch": cls.branch, "categories": defaultdict(Counter)}

    # -- helpers ----------------------------------------------------------------------------------
    @staticmethod
    def done(handle) -> bool:
        """The goal's result arrived.  (Not ``get_comm_state() == DONE``: actionlib's client moves a
        handle that is canceled after its result arrived back to WAITING_FOR_CANCEL_ACK for good.)"""
        return handle.get_result() is not None

    def wait_done(self, handles, timeout: float) -> bool:
        return u.wait_for(lambda: all(self.done(h) for h in handles), timeout, 0.005)

    def check_rejected(self, case, handle, expect):
        self.assertTrue(self.wait_done([handle], 30.0), f"no answer to {case}")
        status = handle.get_goal_status()
        result = handle.get_result()
        self.assertEqual(status, GoalStatus.REJECTED, f"{case}: {NAMES.get(status)} {result}")
        self.assertIsNotNone(result, case)
        self.assertEqual(result.error_code, expect, f"{case}: {result}")
        self.assertTrue(result.error_string, case)

    def check_limits(self, since: int):
        """Desired positions inside the limits, everything finite (state + joint_states since ``since``)."""
        worst = self.figures.setdefault("max_desired_beyond_limit", -math.inf)
        for m in self.state.snapshot()[since:]:
            for field in (m.desired.positions, m.desired.velocities, m.desired.accelerations,
                          m.actual.positions, m.error.positions):
                self.assertTrue(all(math.isfinite(v) for v in field), m)
            for j, name in enumerate(m.joint_names):
                k = self.joints.index(name)
                p = m.desired.positions[j]
                excess = max(self.arm.lower[k] - p, p - self.arm.upper[k])
                worst = max(worst, excess)
                self.assertLessEqual(excess, 1e-6, f"desired {name} = {p} outside "
                                     f"[{self.arm.lower[k]}, {self.arm.upper[k]}]")
        self.figures["max_desired_beyond_limit"] = worst
        measured = self.figures.setdefault("max_measured_beyond_limit", -math.inf)
        for m in self.js.snapshot():
            pos = dict(zip(m.name, m.position))
            for k, name in enumerate(self.joints):
                p = pos.get(name)
                if p is None:
                    continue
                self.assertTrue(math.isfinite(p), m)
                measured = max(measured, self.arm.lower[k] - p, p - self.arm.upper[k])
        self.figures["max_measured_beyond_limit"] = measured
        self.assertLess(measured, 0.1, "a joint went more than 0.1 rad beyond its limit")

    def sim_steps(self, newer_than: float):
        st_ = None
        end = time.monotonic() + 15.0
        while st_ is None and time.monotonic() < end:
            with self.diag.lock:
                msgs = [m for m, t in zip(self.diag.msgs, self.diag.arrivals) if t > newer_than]
            for msg in msgs:
                for s in msg.status:
                    if s.name.endswith(": simulator"):
                        st_ = s
            time.sleep(0.05)
        self.assertIsNotNone(st_, "no fresh 'simulator' diagnostics status")
        return {kv.key[:-len(" max command step (rad)")]: float(kv.value) for kv in st_.values
                if kv.key.endswith(" max command step (rad)")}

    def send(self, case, pending, rejected):
        counts = self.figures["categories"][case.category]
        now = rospy.get_time()
        expect = case.expect(now)
        if case.via == "topic":
            counts["topic sent"] += 1
            self.command.publish(case.materialize(now))
            return
        counts["action sent"] += 1
        handle = self.client.send_goal(case.goal(now))
        if expect != gen.ACCEPT:
            rejected.append((case, handle, expect))  # checked at the end of the burst
            return
        pending.append((case, handle))
        if case.cancel_after is not None:
            time.sleep(case.cancel_after)
            if not self.done(handle):
                handle.cancel()
                counts["canceled"] += 1

    def finish_burst(self, pending, rejected, topics: bool):
        for case, handle, expect in rejected:
            self.check_rejected(case, handle, expect)
            self.figures["categories"][case.category][f"rejected {gen.CODE_NAMES[expect]}"] += 1
        # An empty goal (hold) ends the burst.  A command published before it may still overtake it (topic
        # and action goals travel on different connections) and preempt it: then hold again.
        for attempt in range(5):
            final = self.client.send_goal(gen.Case("hold", "action", list(self.joints), [], ("zero", 0.0),
                                                   gen.ACCEPT).goal(rospy.get_time()))
            handles = [h for _, h in pending] + [final]
            self.assertTrue(self.wait_done(handles, 60.0),
                            "goals not finished 60 s after the hold: " +
                            str([(c, NAMES.get(h.get_goal_status())) for c, h in pending
                                 if not self.done(h)]))
            if final.get_goal_status() != GoalStatus.PREEMPTED or not topics:
                break
            self.figures["holds preempted by a late command"] = \
                self.figures.get("holds preempted by a late command", 0) + 1
            time.sleep(0.2)
        self.assertEqual(final.get_goal_status(), GoalStatus.SUCCEEDED, final.get_result())
        for case, handle in pending:
            status = handle.get_goal_status()
            result = handle.get_result()
            counts = self.figures["categories"][case.category]
            self.assertIn(status, (GoalStatus.SUCCEEDED, GoalStatus.PREEMPTED, GoalStatus.ABORTED,
                                   GoalStatus.RECALLED), f"{case}: {NAMES.get(status)} {result}")
            if status == GoalStatus.RECALLED:
                self.assertIsNotNone(case.cancel_after, case)
            counts[f"accepted, ended {NAMES[status]}"] += 1
            if status == GoalStatus.ABORTED:
                self.assertIn(result.error_code, (gen.PATH_TOLERANCE_VIOLATED, gen.GOAL_TOLERANCE_VIOLATED),
                              f"{case}: {result}")
                self.assertTrue(result.error_string, case)

    # -- the test ---------------------------------------------------------------------------------
    def test_fuzzed_goals_and_commands(self):
        t_gen = time.monotonic()
        bursts = draw_bursts(self.arm, self.n_bursts, self.n_long)
        self.figures["generation_s"] = round(time.monotonic() - t_gen, 1)
        self.reset_stats()
        stats_reset_at = time.monotonic()
        start = time.monotonic()
        sent = 0
        done_bursts = 0
        state_seen = 0
        for burst, gaps in bursts:
            if time.monotonic() - start > self.time_budget or (not RANDOM_BUDGET and sent >= self.target):
                break
            pending, rejected = [], []
            for case, gap in zip(burst, gaps):
                self.send(case, pending, rejected)
                sent += 1
                if gap:
                    time.sleep(gap)
            self.finish_burst(pending, rejected, any(c.via == "topic" for c in burst))
            done_bursts += 1
            if done_bursts % 20 == 0:
                self.check_limits(state_seen)
                state_seen = len(self.state.snapshot())
                self.js.clear()
        elapsed = time.monotonic() - start
        self.check_limits(state_seen)
        self.figures.update(messages=sent, bursts=done_bursts, seconds=round(elapsed, 1),
                            bursts_drawn=len(bursts))
        # the simulated motors never got a step beyond the velocity limit x 2 control periods
        steps = self.sim_steps(stats_reset_at + 1.0)
        self.assertTrue(steps, "the simulator reported no command statistics")
        self.figures["max_command_step"] = {m: (round(s, 5), round(self.step_bounds.get(m, math.inf), 5))
                                            for m, s in sorted(steps.items())}
        for motor, step in steps.items():
            if motor in self.step_bounds:
                self.assertLessEqual(step, self.step_bounds[motor] * 1.0001 + 1e-6,
                                     f"{motor}: command step {step} beyond {self.step_bounds[motor]}")
        # alive and holding: still, then a valid goal succeeds
        self.assertTrue(u.wait_for(
            lambda: max(abs(v) for v in (self.js.velocities(self.joints) or [1.0])) < 0.05, 20.0),
            "the arm is not holding still after the fuzzing")
        here = self.js.positions(self.joints)
        delta = [0.15 if p < 0.5 * (lo + hi) or not math.isfinite(lo) else -0.15
                 for p, lo, hi in zip(here, self.arm.lower, self.arm.upper)]
        goal = u.ramp_goal(self.joints, here, delta, 1.5)
        self.simple.send_goal(goal)
        self.assertTrue(self.simple.wait_for_result(rospy.Duration(30.0)), "no result for the final goal")
        self.assertEqual(self.simple.get_state(), GoalStatus.SUCCEEDED, self.simple.get_result())
        self.report()
        # ~messages (500) in make test; the floor only catches a node that stopped answering quickly
        self.assertGreaterEqual(sent, min(300, sum(len(b) for b, _ in bursts)) if not RANDOM_BUDGET else 1,
                                f"only {sent} messages within the time budget of {self.time_budget} s")

    def report(self):
        categories = {c: dict(v) for c, v in sorted(self.figures["categories"].items())}
        figures = dict(self.figures, categories=categories)
        text = json.dumps(figures, indent=1, sort_keys=True)
        rospy.loginfo("fuzz figures (%s):\n%s", self.branch, text)
        print(text)
        root = os.path.normpath(os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", ".."))
        try:
            os.makedirs(os.path.join(root, ".ws", "fuzz"), exist_ok=True)
            with open(os.path.join(root, ".ws", "fuzz", f"ros_{self.branch}.json"), "w") as out:
                out.write(text)
        except OSError as err:
            rospy.logwarn("could not write the fuzz figures: %s", err)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "fuzz_goals", FuzzGoalsTest, sys.argv)
