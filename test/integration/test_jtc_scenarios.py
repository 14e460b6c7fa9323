#!/usr/bin/env python3
"""rostest node: the JointTrajectoryController scenarios of spec 6.9 (in our words) plus ours, on the
simulated arm, in either branch (``~use_ros_control``; run by jtc_arm.test and jtc_arm_standalone.test).

Controllers (test/integration/jtc_test_controllers.yaml):

* ``jtc_controller`` (A): position JTC over shoulder_pan_joint, wrist_2_joint and the continuous
  wrist_3_joint; stop_trajectory_duration 0 (hold at the measured position);
* ``jtc_partial_controller`` (B): position JTC over elbow_joint and wrist_1_joint with
  allow_partial_joints_goal;
* ros_control branch only, switched in by the tests: ``jtc_stopramp_controller`` (A's joints, stop
  ramp 0.4 s) and ``jtc_velocity_(no)ff_controller`` (velocity variant on wrist_1_joint).

Tests 28-30 are the reliability suite's item 1: an absurd goal (elbow at 1e6 rad, 1.79769e308,
1e154/1e300 velocities and accelerations) is rejected with INVALID_GOAL naming the joint, later
goals succeed, ``state`` stays finite and inside the limits, cancels are answered, and points longer
than ``joint_names`` are accepted.

The tests assert on outcomes (result codes, final positions within tolerances, the robot being
still), never on exact timings; waits are generous for a loaded machine.  Each test leaves the
robot still (most go back home first).
"""
from __future__ import annotations

import math
import os
import sys
import time
import unittest
from typing import Dict, List, Optional, Sequence

import actionlib
import genpy
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import (
    FollowJointTrajectoryAction, FollowJointTrajectoryGoal, FollowJointTrajectoryResult, JointTolerance,
)
from control_msgs.srv import QueryTrajectoryState
from controller_manager_msgs.srv import ListControllers, LoadController, SwitchController
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

R = FollowJointTrajectoryResult
A_NAME = "jtc_controller"
B_NAME = "jtc_partial_controller"
RAMP_NAME = "jtc_stopramp_controller"
VEL_FF = "jtc_velocity_ff_controller"
VEL_NOFF = "jtc_velocity_noff_controller"
A_HOME = [0.0, 0.0, 0.0]
B_HOME = [0.7, 0.0]  # the elbow's start; its simulated hard stops are at about -1.2 and 1.4 rad
GOAL_TOL = 0.02       # jtc_controller's goal tolerance (all joints)
B_GOAL_TOL = 0.03
STILL_VEL = 0.03      # rad/s: "not moving"
#: position limits of urdf/arm.urdf (wrist_3_joint is continuous: no limits)
URDF_LIMITS = {"shoulder_pan_joint": (-3.0, 3.0), "wrist_2_joint": (-3.0, 3.0), "elbow_joint": (-2.5, 2.5),
               "wrist_1_joint": (-3.0, 3.0)}
STANDALONE_SKIP = ("standalone branch: the node serves only the position JTCs of ~trajectory_controllers, "
                   "no controller manager to switch in a variant on the same joints")


# -- message builders -------------------------------------------------------------------------------
def point(positions: Sequence[float], t: float, velocities: Optional[Sequence[float]] = None,
          accelerations: Optional[Sequence[float]] = None) -> JointTrajectoryPoint:
    p = JointTrajectoryPoint()
    p.positions = list(positions)
    p.velocities = list(velocities or [])
    p.accelerations = list(accelerations or [])
    p.time_from_start = genpy.Duration.from_sec(t)
    return p


def trajectory(joints: Sequence[str], points: List[JointTrajectoryPoint],
               stamp: float = 0.0) -> JointTrajectory:
    msg = JointTrajectory()
    msg.header.stamp = genpy.Time.from_sec(stamp) if stamp else genpy.Time(0)
    msg.joint_names = list(joints)
    msg.points = points
    return msg


def rest(positions: Sequence[float], t: float) -> JointTrajectoryPoint:
    """A point at rest (velocities and accelerations zero: the segment to it is quintic)."""
    n = len(positions)
    return point(positions, t, [0.0] * n, [0.0] * n)


def goal_of(traj: JointTrajectory, path: Optional[Dict[str, float]] = None,
            goal: Optional[Dict[str, float]] = None, goal_time: float = 0.0,
            goal_vel: Optional[Dict[str, float]] = None) -> FollowJointTrajectoryGoal:
    g = FollowJointTrajectoryGoal()
    g.trajectory = traj
    for name, value in (path or {}).items():
        g.path_tolerance.append(JointTolerance(name=name, position=value))
    names = list((goal or {}).keys()) + [n for n in (goal_vel or {}) if n not in (goal or {})]
    for name in names:
        g.goal_tolerance.append(JointTolerance(name=name, position=(goal or {}).get(name, 0.0),
                                               velocity=(goal_vel or {}).get(name, 0.0)))
    g.goal_time_tolerance = genpy.Duration.from_sec(goal_time)
    return g


class Ctl:
    """Client side of one trajectory controller: two action clients, command topic, state, query_state."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.joints: List[str] = list(rospy.get_param(name + "/joints"))
        self.action_name = name + "/follow_joint_trajectory"
        self.client = actionlib.SimpleActionClient(self.action_name, FollowJointTrajectoryAction)
        self.client2 = actionlib.SimpleActionClient(self.action_name, FollowJointTrajectoryAction)
        self.pub = rospy.Publisher(name + "/command", JointTrajectory, queue_size=1)
        self.state = u.ControllerState(name)
        self.query = rospy.ServiceProxy(name + "/query_state", QueryTrajectoryState)

    def connect(self, timeout: float = 60.0) -> None:
        for c in (self.client, self.client2):
            if not c.wait_for_server(rospy.Duration(timeout)):
                raise AssertionError(f"{self.action_name} not available after {timeout} s")
        if not u.wait_for(lambda: self.pub.get_num_connections() > 0, timeout, 0.05):
            raise AssertionError(f"nobody subscribes {self.name}/command")
        if not u.wait_for(lambda: self.state.latest() is not None, timeout, 0.05):
            raise AssertionError(f"no {self.name}/state")
        rospy.wait_for_service(self.name + "/query_state", timeout)

    def close(self) -> None:
        self.state.sub.unregister()
        self.pub.unregister()

    def desired(self) -> List[float]:
        """Desired positions of the latest ``state`` (waits for one after ``state.clear()``)."""
        if not u.wait_for(lambda: self.state.latest() is not None, 5.0, 0.01):
            raise AssertionError(f"no {self.name}/state message")
        return list(self.state.latest().desired.positions)


class JtcScenarios(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_jtc_scenarios")
        cls.use_ros_control = bool(rospy.get_param("~use_ros_control"))
        cls.js = u.JointStates()
        cls.A = Ctl(A_NAME)
        cls.B = Ctl(B_NAME)
        cls.A.connect(90.0)
        cls.B.connect(30.0)
        joints = cls.A.joints + cls.B.joints
        if not u.wait_for(lambda: cls.js.positions(joints) is not None, 30.0):
            raise AssertionError("no /joint_states with the controllers' joints")
        if cls.use_ros_control:
            cls.list_controllers = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)
            cls.load = rospy.ServiceProxy("controller_manager/load_controller", LoadController)
            cls.switch = rospy.ServiceProxy("controller_manager/switch_controller", SwitchController)
            rospy.wait_for_service("controller_manager/switch_controller", 30.0)

    # -- helpers ------------------------------------------------------------------------------------
    def actual(self, ctl: Ctl) -> List[float]:
        pos = self.js.positions(ctl.joints)
        self.assertIsNotNone(pos)
        return pos

    def wait_still(self, ctl: Ctl, timeout: float = 4.0) -> bool:
        """True once every joint of ``ctl`` moved slower than STILL_VEL for 0.1 s."""
        end = time.monotonic() + timeout
        since = None
        while time.monotonic() < end:
            vel = self.js.velocities(ctl.joints)
            if vel is not None and max(abs(v) for v in vel) < STILL_VEL:
                since = since or time.monotonic()
                if time.monotonic() - since >= 0.1:
                    return True
            else:
                since = None
            time.sleep(0.01)
        return False

    def assert_stopped(self, ctl: Ctl, what: str) -> List[float]:
        """The robot comes to rest and stays there; returns where."""
        self.assertTrue(self.wait_still(ctl), f"{what}: the robot did not stop")
        p1 = self.actual(ctl)
        time.sleep(0.5)
        p2 = self.actual(ctl)
        self.assertLess(u.max_abs_diff(p1, p2), 0.01, f"{what}: the robot is still moving ({p1} -> {p2})")
        return p2

    def run_goal(self, client, goal, timeout: float):
        u.send_goal(client, goal)   # an answer sent at once (a rejection) is not lost
        self.assertTrue(client.wait_for_result(rospy.Duration(timeout)), "no result in time")
        return client.get_state(), client.get_result()

    def assert_succeeds(self, client, goal, timeout: float = 10.0) -> None:
        state, result = self.run_goal(client, goal, timeout)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        self.assertEqual(result.error_code, R.SUCCESSFUL, result.error_string)

    def assert_near(self, actual: Sequence[float], target: Sequence[float], tol: float, what: str) -> None:
        err = u.max_abs_diff(actual, target)
        self.assertLess(err, tol, f"{what}: {list(actual)} vs {list(target)} (max error {err:.4f}, "
                                  f"tolerance {tol})")

    def move(self, ctl: Ctl, target: Sequence[float], duration: Optional[float] = None) -> None:
        """Action goal to ``target`` (smooth, from the desired state) that must succeed."""
        start = ctl.desired()
        span = max(abs(a - b) for a, b in zip(start, target))
        if duration is None:
            duration = min(2.0, max(0.5, 1.2 * span))
        self.assert_succeeds(ctl.client, goal_of(trajectory(ctl.joints, [rest(target, duration)])),
                             duration + 8.0)

    def home(self, ctl: Optional[Ctl] = None) -> None:
        """Bring ``ctl`` (default A) home unless it is there already, then wait until still."""
        ctl = ctl or self.A
        target = A_HOME if ctl is self.A else B_HOME
        if u.max_abs_diff(ctl.desired(), target) > 1e-3 or u.max_abs_diff(self.actual(ctl), target) > 0.03:
            self.move(ctl, target)
        self.assertTrue(self.wait_still(ctl), "not still at home")

    def expect_rejected(self, ctl: Ctl, goal, code: int, what: str) -> str:
        state, result = self.run_goal(ctl.client, goal, 5.0)
        self.assertEqual(state, GoalStatus.REJECTED, f"{what}: {result}")
        self.assertEqual(result.error_code, code, f"{what}: {result.error_string}")
        self.assertTrue(result.error_string, f"{what}: empty error_string")
        return result.error_string

    def stream(self, ctl: Ctl, seconds: float, step: float = 0.01) -> List[List[float]]:
        """Actual positions of ``ctl`` sampled for ``seconds``."""
        out = []
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            out.append(self.actual(ctl))
            time.sleep(step)
        return out

    # -- state topic and query_state ------------------------------------------------------------------
    def test_00_state_topic_consistency(self):
        for ctl in (self.A, self.B):
            ctl.state.clear()
            time.sleep(0.5)
            msgs = ctl.state.snapshot()
            self.assertGreater(len(msgs), 5, f"{ctl.name}/state: too few messages")
            n = len(ctl.joints)
            for m in msgs:
                self.assertEqual(list(m.joint_names), ctl.joints)
                for field in ("positions", "velocities", "accelerations"):
                    self.assertEqual(len(getattr(m.desired, field)), n, f"desired.{field}")
                for field in ("positions", "velocities"):
                    self.assertEqual(len(getattr(m.actual, field)), n, f"actual.{field}")
                    self.assertEqual(len(getattr(m.error, field)), n, f"error.{field}")
                self.assertEqual(len(m.actual.accelerations), 0, "actual.accelerations must be empty")
                self.assertEqual(len(m.error.accelerations), 0, "error.accelerations must be empty")
                for d, a, e in zip(m.desired.positions, m.actual.positions, m.error.positions):
                    wrapped = math.atan2(math.sin(d - a), math.cos(d - a))
                    self.assertAlmostEqual(e, wrapped, places=6)
                for d, a, e in zip(m.desired.velocities, m.actual.velocities, m.error.velocities):
                    self.assertAlmostEqual(e, d - a, places=6)
            stamps = [m.header.stamp.to_sec() for m in msgs]
            self.assertEqual(stamps, sorted(stamps), "state stamps go backwards")

    def test_01_query_state_consistency(self):
        self.home()
        for ctl in (self.A, self.B):
            resp = ctl.query(rospy.Time.now())
            n = len(ctl.joints)
            self.assertEqual(list(resp.name), ctl.joints)
            self.assertEqual((len(resp.position), len(resp.velocity), len(resp.acceleration)), (n, n, n))
            # holding: the desired state is constant, so the query equals the latest state message
            self.assertTrue(self.wait_still(ctl))
            self.assert_near(resp.position, ctl.desired(), 1e-6, f"{ctl.name} query_state vs state")
            self.assert_near(resp.velocity, [0.0] * n, 1e-9, "query_state velocity at rest")
        # a time before the trajectory start is refused (the call fails), as upstream
        with self.assertRaises(rospy.ServiceException):
            self.A.query(rospy.Time.now() - rospy.Duration(1000.0))

    # -- invalid messages -------------------------------------------------------------------------------
    def test_02_invalid_goals_and_their_codes(self):
        self.home()
        j = self.A.joints
        before = self.A.desired()
        tgt = [0.2, 0.1, 0.1]

        def ok_traj():
            return trajectory(j, [rest(tgt, 0.5), rest([0.0, 0.0, 0.0], 1.0)])

        g = goal_of(trajectory(j[:2], [rest(tgt[:2], 0.5)]))
        self.expect_rejected(self.A, g, R.INVALID_JOINTS, "wrong joint count")
        g = goal_of(trajectory(j[:2] + ["no_such_joint"], [rest(tgt, 0.5)]))
        self.expect_rejected(self.A, g, R.INVALID_JOINTS, "unknown joint")
        g = goal_of(trajectory([j[0], j[0], j[2]], [rest(tgt, 0.5)]))
        self.expect_rejected(self.A, g, R.INVALID_JOINTS, "duplicated joint")
        g = goal_of(JointTrajectory())
        self.expect_rejected(self.A, g, R.INVALID_JOINTS, "empty goal (no joints, no points)")
        t = ok_traj()
        t.points[1].positions = []
        self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "point without positions")
        t = ok_traj()
        t.points[1].positions = [0.0, 0.0]
        self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "positions size mismatch")
        t = ok_traj()
        t.points[0].velocities = [0.0]
        self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "velocities size mismatch")
        t = ok_traj()
        t.points[1].time_from_start = t.points[0].time_from_start
        self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "equal times")
        t = ok_traj()
        t.points[1].time_from_start = genpy.Duration.from_sec(0.25)
        self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "decreasing times")
        t = ok_traj()
        t.points[1].positions[2] = float("nan")
        text = self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "NaN position")
        self.assertIn("wrist_3_joint", text)
        t = ok_traj()
        t.points[0].velocities[1] = float("inf")
        self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "inf velocity")
        t = ok_traj()
        t.points[0].accelerations[0] = float("nan")
        self.expect_rejected(self.A, goal_of(t), R.INVALID_GOAL, "NaN acceleration")
        # nothing moved, and the controller still takes a valid goal
        self.assert_near(self.A.desired(), before, 1e-9, "desired after rejected goals")
        self.assert_succeeds(self.A.client, goal_of(ok_traj()))
        self.home()

    def test_03_invalid_topic_commands_are_ignored(self):
        self.home()
        j = self.A.joints
        bad = [trajectory(j[:2] + ["no_such_joint"], [rest([0.3] * 3, 0.5)]),
               trajectory(j[:2], [rest([0.3] * 2, 0.5)]),
               trajectory(j, [rest([0.3, 0.3, float("nan")], 0.5)]),
               trajectory(j, [rest([0.3] * 3, 0.5), rest([0.1] * 3, 0.5)]),
               trajectory(j, [point([0.3] * 3, 0.5), point([0.3, 0.3], 1.0)])]
        before = self.A.desired()
        for msg in bad:
            self.A.pub.publish(msg)
            time.sleep(0.15)
        time.sleep(0.3)
        self.assert_near(self.A.desired(), before, 1e-9, "desired after invalid commands")
        self.assert_near(self.actual(self.A), A_HOME, 0.03, "robot after invalid commands")

    # -- single trajectories ----------------------------------------------------------------------------
    def test_04_single_trajectory_by_topic(self):
        self.home()
        target = [0.3, -0.2, 0.4]
        self.A.pub.publish(trajectory(self.A.joints, [rest([0.15, -0.1, 0.2], 0.5), rest(target, 1.0)]))
        self.assertTrue(u.wait_for(lambda: u.max_abs_diff(self.A.desired(), target) < 1e-9, 6.0),
                        "desired never reached the last point")
        self.assertTrue(self.wait_still(self.A))
        self.assert_near(self.actual(self.A), target, GOAL_TOL, "topic trajectory end")
        self.assert_near(self.A.state.latest().error.positions, [0.0] * 3, GOAL_TOL, "state error at the end")
        resp = self.A.query(rospy.Time.now())
        self.assert_near(resp.position, self.A.desired(), 1e-6, "query_state vs state")
        self.home()

    def test_05_single_trajectory_by_action(self):
        self.home()
        target = [-0.3, 0.25, -0.4]
        g = goal_of(trajectory(self.A.joints, [rest([-0.15, 0.1, -0.2], 0.5), rest(target, 1.0)]))
        t_sent = rospy.Time.now()
        self.A.state.clear()
        feedback = []
        self.A.client.send_goal(g, feedback_cb=feedback.append)
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(10.0)), "no result in time")
        result = self.A.client.get_result()
        self.assertEqual(self.A.client.get_state(), GoalStatus.SUCCEEDED, result)
        self.assertEqual(result.error_code, R.SUCCESSFUL, result.error_string)
        self.assertGreater(len(feedback), 3, "too little action feedback")
        for fb in feedback:
            self.assertEqual(list(fb.joint_names), self.A.joints)
            self.assertEqual((len(fb.desired.positions), len(fb.actual.positions), len(fb.error.positions)),
                             (3, 3, 3))
        self.assert_near(self.actual(self.A), target, GOAL_TOL, "action trajectory end")
        self.assertTrue(u.wait_for(lambda: u.max_abs_diff(self.A.desired(), target) < 1e-9, 2.0))
        # query_state (at a time during the motion and now) matches the state topic's desired state
        resp = self.A.query(rospy.Time.now())
        self.assert_near(resp.position, self.A.desired(), 1e-6, "query_state vs state at the end")
        msgs = [m for m in self.A.state.snapshot() if m.header.stamp > t_sent]
        mid = msgs[len(msgs) // 3]
        during = self.A.query(mid.header.stamp)
        # the trajectory is still the same, so sampling it at a past state's stamp gives that desired.
        # As in ros_control, the controller maps a stamp to its own uptime (the sum of the loop's
        # periods): a host stall between that state and now, which the loop does not make up, shifts
        # the sample by the time lost, so the answer is the desired state of a message up to a stall
        # away from ``mid`` (the host stalls for up to 0.25 s).
        near = [m for m in msgs if abs((m.header.stamp - mid.header.stamp).to_sec()) <= 0.3]
        best = min(near, key=lambda m: u.max_abs_diff(during.position, m.desired.positions))
        shift = (best.header.stamp - mid.header.stamp).to_sec()
        self.assert_near(during.position, best.desired.positions, 0.01,
                         f"query_state at a past stamp (nearest state {shift:+.3f} s from it)")
        self.home()

    def test_06_joint_reordering(self):
        self.home()
        names = list(reversed(self.A.joints))  # wrist_3, wrist_2, shoulder_pan
        target_by_name = {"shoulder_pan_joint": 0.25, "wrist_2_joint": -0.3, "wrist_3_joint": 0.5}
        g = goal_of(trajectory(names, [rest([target_by_name[n] for n in names], 1.0)]))
        self.assert_succeeds(self.A.client, g)
        self.assert_near(self.actual(self.A), [target_by_name[n] for n in self.A.joints], GOAL_TOL,
                         "reordered goal")
        self.home()

    # -- continuous joint -------------------------------------------------------------------------------
    def test_07_wraparound_far_multi_turn_goal(self):
        self.home()
        k = self.A.joints.index("wrist_3_joint")
        d = self.A.desired()
        for delta, turns in ((math.pi / 4, 2), (-math.pi / 2, -3)):
            start = self.actual(self.A)[k]
            target = list(d)
            target[k] = d[k] + delta + turns * 2 * math.pi
            self.A.client.send_goal(goal_of(trajectory(self.A.joints, [rest(target, 1.0)])))
            path = []
            while not self.A.client.wait_for_result(rospy.Duration(0.01)):
                path.append(self.actual(self.A)[k])
                if len(path) > 1500:
                    break
            self.assertEqual(self.A.client.get_state(), GoalStatus.SUCCEEDED, self.A.client.get_result())
            final = self.actual(self.A)[k]
            self.assertAlmostEqual(final, d[k] + delta, delta=GOAL_TOL,
                                   msg=f"wrist_3 went to {final}, expected {d[k] + delta} (short way)")
            lo, hi = sorted((start, d[k] + delta))
            self.assertGreater(min(path), lo - 0.1, "wrist_3 moved the long way")
            self.assertLess(max(path), hi + 0.1, "wrist_3 moved the long way")
            d = self.A.desired()
            self.assertAlmostEqual(d[k], final, delta=GOAL_TOL)
        self.home()

    def test_08_wraparound_pi_singularity(self):
        self.home()
        k = self.A.joints.index("wrist_3_joint")
        for sign in (+1, -1):
            d = self.A.desired()  # exactly what the controller holds
            target = list(d)
            target[k] = d[k] + sign * math.pi
            n = len(target)
            g = goal_of(trajectory(self.A.joints, [point(target, 2.0, [0.0] * n)]))  # cubic
            self.assert_succeeds(self.A.client, g)
            final = self.actual(self.A)[k]
            self.assertAlmostEqual(final, d[k] + sign * math.pi, delta=GOAL_TOL,
                                   msg=f"moving {sign:+d}pi ended at {final} from {d[k]} (wrong way?)")
        self.assert_near(self.actual(self.A), A_HOME, GOAL_TOL, "back home after +pi, -pi")

    # -- replacement ------------------------------------------------------------------------------------
    FAR = [0.8, 0.5, 0.6]

    def _far_traj(self, duration: float = 1.5) -> JointTrajectory:
        return trajectory(self.A.joints, [rest(self.FAR, duration)])

    def _home_traj(self, duration: float = 1.0) -> JointTrajectory:
        return trajectory(self.A.joints, [rest(A_HOME, duration)])

    def _assert_replaced_home(self, what: str) -> None:
        self.assertTrue(self.wait_still(self.A, 6.0), f"{what}: not still")
        self.assert_near(self.actual(self.A), A_HOME, GOAL_TOL, what)

    def _assert_moving(self, ctl: Optional[Ctl] = None) -> None:
        ctl = ctl or self.A
        self.assertTrue(u.wait_for(lambda: max(abs(v) for v in self.js.velocities(ctl.joints)) > 0.1, 2.0),
                        "the first trajectory does not move the robot")

    def test_09_topic_replaces_topic(self):
        self.home()
        self.A.pub.publish(self._far_traj())
        self._assert_moving()
        time.sleep(0.3)
        self.A.pub.publish(self._home_traj())
        peak = max(p[0] for p in self.stream(self.A, 1.2))
        self._assert_replaced_home("topic replaced by topic")
        self.assertLess(peak, self.FAR[0] - 0.2, "the first trajectory was completed")

    def test_10_action_replaces_action(self):
        self.home()
        self.A.client.send_goal(goal_of(self._far_traj()))
        self._assert_moving()
        time.sleep(0.3)
        self.A.client2.send_goal(goal_of(self._home_traj()))
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(5.0)))
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self.assertTrue(self.A.client2.wait_for_result(rospy.Duration(8.0)))
        self.assertEqual(self.A.client2.get_state(), GoalStatus.SUCCEEDED, self.A.client2.get_result())
        self._assert_replaced_home("action replaced by action")

    def test_11_action_replaces_topic(self):
        self.home()
        self.A.pub.publish(self._far_traj())
        self._assert_moving()
        time.sleep(0.3)
        self.assert_succeeds(self.A.client, goal_of(self._home_traj()))
        self._assert_replaced_home("topic replaced by action")

    def test_12_topic_replaces_action(self):
        self.home()
        self.A.client.send_goal(goal_of(self._far_traj()))
        self._assert_moving()
        time.sleep(0.3)
        self.A.pub.publish(self._home_traj())
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(5.0)))
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self._assert_replaced_home("action replaced by topic")

    # -- empty trajectories and cancel ------------------------------------------------------------------
    def _stopped_midway(self, at_stop: Sequence[float], what: str, ctl: Optional[Ctl] = None) -> None:
        """Stopped close to where it was when the stop was requested, short of the target."""
        final = self.assert_stopped(ctl or self.A, what)
        self.assertLess(abs(final[0] - at_stop[0]), 0.25, f"{what}: stopped at {final}, stop requested at "
                                                          f"{list(at_stop)}")
        self.assertLess(final[0], self.FAR[0] - 0.15, f"{what}: the robot went on to the target")

    def _empty(self, ctl: Optional[Ctl] = None) -> JointTrajectory:
        return trajectory((ctl or self.A).joints, [])

    def test_13_empty_topic_cancels_topic(self):
        self.home()
        self.A.pub.publish(self._far_traj())
        self._assert_moving()
        time.sleep(0.3)
        at_stop = self.actual(self.A)
        self.A.pub.publish(self._empty())
        self._stopped_midway(at_stop, "empty topic after topic")
        self.home()

    def test_14_empty_topic_cancels_action_holds_measured(self):
        self.home()
        self.A.client.send_goal(goal_of(self._far_traj()))
        self._assert_moving()
        time.sleep(0.3)
        self.A.state.clear()
        at_stop = self.actual(self.A)
        self.A.pub.publish(self._empty())
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(5.0)))
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self._stopped_midway(at_stop, "empty topic after action")
        # stop_trajectory_duration 0: the desired state becomes the measured position at the stop, at rest
        msgs = self.A.state.snapshot()
        held = [m for m in msgs if max(abs(v) for v in m.desired.velocities) == 0.0]
        self.assertTrue(held, "desired velocity never became zero")
        first = msgs.index(held[0])
        self.assertTrue(all(max(abs(v) for v in m.desired.velocities) == 0.0 for m in msgs[first:]))
        hold = list(held[0].desired.positions)
        self.assertTrue(all(list(m.desired.positions) == hold for m in msgs[first:]), "hold position drifts")
        prev = msgs[first - 1] if first > 0 else held[0]
        self.assert_near(hold, prev.actual.positions, 0.05, "hold vs measured position at the stop")
        self.home()

    def test_15_empty_action_cancels_topic(self):
        self.home()
        self.A.pub.publish(self._far_traj())
        self._assert_moving()
        time.sleep(0.3)
        at_stop = self.actual(self.A)
        self.assert_succeeds(self.A.client, goal_of(self._empty()), 5.0)
        self._stopped_midway(at_stop, "empty action after topic")
        self.home()

    def test_16_empty_action_cancels_action(self):
        self.home()
        self.A.client.send_goal(goal_of(self._far_traj()))
        self._assert_moving()
        time.sleep(0.3)
        at_stop = self.actual(self.A)
        self.assert_succeeds(self.A.client2, goal_of(self._empty()), 5.0)
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(5.0)))
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self._stopped_midway(at_stop, "empty action after action")
        self.home()

    def test_17_cancel_goal_stops_the_robot(self):
        self.home()
        self.A.client.send_goal(goal_of(self._far_traj()))
        self._assert_moving()
        time.sleep(0.3)
        at_stop = self.actual(self.A)
        self.A.client.cancel_goal()
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(5.0)))
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self._stopped_midway(at_stop, "cancel")
        self.home()

    def test_17b_repeated_cancels_are_all_answered(self):
        # every cancel must be answered while the action monitor publishes feedback concurrently
        self.home()
        for i in range(8):
            target = [0.3 if i % 2 == 0 else -0.3, 0.0, 0.0]
            self.A.client.send_goal(goal_of(trajectory(self.A.joints, [rest(target, 1.0)])))
            time.sleep(0.2)
            self.A.client.cancel_goal()
            self.assertTrue(self.A.client.wait_for_result(rospy.Duration(5.0)),
                            f"cancel {i} never answered (action server stuck?)")
            self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self.assert_stopped(self.A, "after repeated cancels")
        self.home()

    # -- old trajectories -------------------------------------------------------------------------------
    def test_18_old_action_goal_rejected_running_one_untouched(self):
        self.home()
        target = [0.4, 0.3, -0.3]
        self.A.client.send_goal(goal_of(trajectory(self.A.joints, [rest(target, 1.2)])))
        self._assert_moving()
        old = trajectory(self.A.joints, [rest([-0.5] * 3, 0.5), rest([-0.6] * 3, 1.0)],
                         stamp=rospy.get_time() - 3.0)
        self.expect_rejected_with(self.A.client2, goal_of(old), R.INVALID_GOAL, "all points in the past")
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(8.0)))
        self.assertEqual(self.A.client.get_state(), GoalStatus.SUCCEEDED, self.A.client.get_result())
        self.assert_near(self.actual(self.A), target, GOAL_TOL, "running goal after the old one")
        self.home()

    def expect_rejected_with(self, client, goal, code: int, what: str) -> None:
        state, result = self.run_goal(client, goal, 5.0)
        self.assertEqual(state, GoalStatus.REJECTED, f"{what}: {result}")
        self.assertEqual(result.error_code, code, f"{what}: {result.error_string}")
        self.assertTrue(result.error_string)

    def test_19_old_topic_command_ignored(self):
        self.home()
        target = [0.4, 0.3, -0.3]
        self.A.client.send_goal(goal_of(trajectory(self.A.joints, [rest(target, 1.2)])))
        self._assert_moving()
        self.A.pub.publish(trajectory(self.A.joints, [rest([-0.5] * 3, 0.5)], stamp=rospy.get_time() - 3.0))
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(8.0)))
        self.assertEqual(self.A.client.get_state(), GoalStatus.SUCCEEDED, self.A.client.get_result())
        self.assert_near(self.actual(self.A), target, GOAL_TOL, "running goal after the old command")
        self.home()

    def test_20_partially_old_goal_executes_only_future_points(self):
        self.home()
        self.A.client.send_goal(goal_of(trajectory(self.A.joints, [rest([0.4, 0.3, 0.3], 1.5)])))
        self._assert_moving()
        past = [-0.8, -0.6, -0.6]
        future = [-0.1, -0.1, -0.1]
        msg = trajectory(self.A.joints, [point(past, 0.25), point(future, 1.5)], stamp=rospy.get_time() - 0.5)
        self.A.client2.send_goal(goal_of(msg))
        path = []
        while not self.A.client2.wait_for_result(rospy.Duration(0.01)):
            path.append(self.actual(self.A))
            if len(path) > 1500:
                break
        self.assertEqual(self.A.client2.get_state(), GoalStatus.SUCCEEDED, self.A.client2.get_result())
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self.assert_near(self.actual(self.A), future, GOAL_TOL, "partially old goal end")
        for i in range(3):
            self.assertGreater(min(p[i] for p in path), future[i] - 0.1,
                               f"{self.A.joints[i]} went towards the dropped past point")
        self.home()

    # -- tolerances -------------------------------------------------------------------------------------
    def test_21_path_tolerance_violation_aborts_and_holds(self):
        self.home()
        target = [0.8, 0.0, 0.0]
        # 0.8 rad in 0.15 s: far beyond shoulder_pan's 2.5 rad/s limit, so the robot lags
        g = goal_of(trajectory(self.A.joints, [point(target, 0.15)]), path={"shoulder_pan_joint": 0.05})
        state, result = self.run_goal(self.A.client, g, 5.0)
        self.assertEqual(state, GoalStatus.ABORTED, result)
        self.assertEqual(result.error_code, R.PATH_TOLERANCE_VIOLATED, result.error_string)
        self.assertIn("shoulder_pan_joint", result.error_string)
        final = self.assert_stopped(self.A, "after the path tolerance violation (hold_on_abort)")
        self.assertLess(final[0], target[0] - 0.3, "the aborted trajectory kept going (hold_on_abort)")
        self.home()

    def test_22_goal_tolerance_violation_aborts_and_holds(self):
        self.home()
        target = [1.0, 0.0, 0.0]
        # path tolerances disabled (negative); 1 rad in 0.1 s + 0.05 s goal time is out of reach
        g = goal_of(trajectory(self.A.joints, [point(target, 0.1)]), path={n: -1.0 for n in self.A.joints},
                    goal={"shoulder_pan_joint": 0.01}, goal_time=0.05)
        state, result = self.run_goal(self.A.client, g, 5.0)
        self.assertEqual(state, GoalStatus.ABORTED, result)
        self.assertEqual(result.error_code, R.GOAL_TOLERANCE_VIOLATED, result.error_string)
        self.assertIn("shoulder_pan_joint", result.error_string)
        final = self.assert_stopped(self.A, "after the goal tolerance violation (hold_on_abort)")
        self.assertLess(final[0], target[0] - 0.2, "the aborted trajectory kept going (hold_on_abort)")
        self.home()

    def test_23_goal_that_never_settles_times_out(self):
        self.home()
        target = [0.2137, 0.0, 0.0]
        # no goal_time in the goal; a goal tolerance no real joint meets: the goal must end by itself
        g = goal_of(trajectory(self.A.joints, [rest(target, 0.5)]), goal={"shoulder_pan_joint": 1e-9})
        t0 = time.monotonic()
        state, result = self.run_goal(self.A.client, g, 10.0)
        elapsed = time.monotonic() - t0
        self.assertEqual(state, GoalStatus.ABORTED, result)
        self.assertEqual(result.error_code, R.GOAL_TOLERANCE_VIOLATED, result.error_string)
        self.assertIn("shoulder_pan_joint", result.error_string)
        # end 0.5 s + goal_time 0.5 s (+ watchdog margin 1 s), generous slack for a loaded machine
        self.assertLess(elapsed, 0.5 + 0.5 + 1.0 + 4.0)
        final = self.assert_stopped(self.A, "after the goal timeout")
        self.assert_near(final, target, GOAL_TOL, "held where it got to")
        self.home()

    # -- partial goals ----------------------------------------------------------------------------------
    def test_24_partial_joint_goals(self):
        self.home(self.B)
        jb = self.B.joints  # elbow_joint, wrist_1_joint
        # unknown joints are refused even with partial goals allowed
        g = goal_of(trajectory(["wrist_1_joint", "no_such_joint"], [rest([0.1, 0.1], 0.5)]))
        self.expect_rejected(self.B, g, R.INVALID_JOINTS, "unknown joint (partial controller)")
        # a partial goal alone
        self.assert_succeeds(self.B.client, goal_of(trajectory(["wrist_1_joint"], [rest([0.3], 0.6)])))
        self.assert_near(self.actual(self.B), [B_HOME[0], 0.3], B_GOAL_TOL, "partial goal alone")
        # full goal running, partial goal for wrist_1 replaces only wrist_1's trajectory
        full_target = [1.0, 0.6]
        self.B.client.send_goal(goal_of(trajectory(jb, [rest(full_target, 1.5)])))
        self._assert_moving(self.B)
        time.sleep(0.3)
        self.B.client2.send_goal(goal_of(trajectory(["wrist_1_joint"], [rest([-0.3], 1.0)])))
        self.assertTrue(self.B.client.wait_for_result(rospy.Duration(5.0)))
        self.assertEqual(self.B.client.get_state(), GoalStatus.PREEMPTED)
        self.assertTrue(self.B.client2.wait_for_result(rospy.Duration(8.0)))
        self.assertEqual(self.B.client2.get_state(), GoalStatus.SUCCEEDED, self.B.client2.get_result())
        self.assertTrue(self.wait_still(self.B))
        self.assert_near(self.actual(self.B), [full_target[0], -0.3], B_GOAL_TOL,
                         "elbow keeps the first trajectory, wrist_1 follows the partial one")
        # partial topic command: only wrist_1 moves
        desired_elbow = self.B.desired()[0]
        self.B.pub.publish(trajectory(["wrist_1_joint"], [rest([0.2], 0.6)]))
        self.assertTrue(u.wait_for(lambda: abs(self.B.desired()[1] - 0.2) < 1e-9, 5.0))
        self.assertTrue(self.wait_still(self.B))
        self.assertEqual(self.B.desired()[0], desired_elbow, "the untouched joint's desired changed")
        self.assert_near(self.actual(self.B), [full_target[0], 0.2], B_GOAL_TOL, "partial topic command")
        self.home(self.B)

    # -- variants (ros_control branch) ------------------------------------------------------------------
    def skip_variant(self) -> None:
        # rosunit's XML report shows a skipped test as passed: say so in the log too
        rospy.logwarn("%s skipped: %s", self.id().rsplit(".", 1)[-1], STANDALONE_SKIP)
        self.skipTest(STANDALONE_SKIP)

    def _ensure_loaded(self, names: Sequence[str]) -> None:
        loaded = {c.name for c in self.list_controllers().controller}
        for name in names:
            if name not in loaded:
                resp = self.load(name)
                self.assertTrue(resp.ok, f"could not load {name}")

    def _switch(self, start: List[str], stop: List[str]) -> None:
        resp = self.switch(start, stop, SwitchController._request_class.STRICT, False, 5.0)
        self.assertTrue(resp.ok, f"switch start={start} stop={stop} failed")

    def _state_of(self, name: str) -> Optional[str]:
        for c in self.list_controllers().controller:
            if c.name == name:
                return c.state
        return None

    def test_25_stop_ramp_keeps_velocity_continuous(self):
        if not self.use_ros_control:
            self.skip_variant()
        self.home()
        self._ensure_loaded([RAMP_NAME])
        ramp = Ctl(RAMP_NAME)
        self._switch([RAMP_NAME], [A_NAME])
        try:
            ramp.connect(20.0)
            ramp.client.send_goal(goal_of(trajectory(ramp.joints, [rest(self.FAR, 1.2)])))
            self._assert_moving(ramp)
            time.sleep(0.35)
            ramp.state.clear()
            ramp.pub.publish(trajectory(ramp.joints, []))
            self.assertTrue(ramp.client.wait_for_result(rospy.Duration(5.0)))
            self.assertEqual(ramp.client.get_state(), GoalStatus.PREEMPTED)
            self.assertTrue(u.wait_for(lambda: (ramp.state.latest() is not None
                                                and ramp.state.latest().desired.velocities[0] == 0.0), 3.0))
            time.sleep(0.1)
            v = [m.desired.velocities[0] for m in ramp.state.snapshot()]
            rospy.loginfo("stop ramp: shoulder_pan desired velocity %s", ["%.3f" % x for x in v])
            self.assertGreater(v[0], 0.3, "not moving fast when the stop was requested")
            self.assertGreater(min(v), -0.02, "the desired velocity reversed during the stop ramp")
            steps = [abs(a - b) for a, b in zip(v, v[1:])]
            self.assertLess(max(steps), 0.5 * v[0], "the desired velocity jumps (no ramp)")
            final = self.assert_stopped(ramp, "stop ramp")
            self.assertLess(final[0], self.FAR[0] - 0.15, "went on to the target")
        finally:
            self._switch([A_NAME], [RAMP_NAME])
            ramp.close()
        self.A.connect(20.0)
        self.home()

    def test_26_velocity_feed_forward(self):
        if not self.use_ros_control:
            self.skip_variant()
        self.home(self.B)
        self._ensure_loaded([VEL_FF, VEL_NOFF])
        ff, noff = Ctl(VEL_FF), Ctl(VEL_NOFF)
        k = self.B.joints.index("wrist_1_joint")
        self._switch([VEL_FF], [B_NAME])
        try:
            ff.connect(20.0)
            start = self.actual(ff)[0]
            g = u.ramp_goal(ff.joints, [start], [0.8], 1.0, points=15)
            self.assert_succeeds(ff.client, g)
            self.assertAlmostEqual(self.actual(ff)[0], start + 0.8, delta=B_GOAL_TOL)
            self._switch([VEL_NOFF], [VEL_FF])
            noff.connect(20.0)
            start = self.actual(noff)[0]
            g = u.ramp_goal(noff.joints, [start], [-0.8], 1.0, points=15)
            state, result = self.run_goal(noff.client, g, 8.0)
            self.assertEqual(state, GoalStatus.ABORTED, result)
            self.assertEqual(result.error_code, R.PATH_TOLERANCE_VIOLATED, result.error_string)
            final = self.assert_stopped(noff, "velocity variant after abort")
            self.assertGreater(final[0], start - 0.6, "the aborted velocity trajectory kept going")
        finally:
            self._switch([B_NAME], [c for c in (VEL_FF, VEL_NOFF) if self._state_of(c) == "running"])
            ff.close()
            noff.close()
        self.B.connect(20.0)
        self.assertTrue(self.wait_still(self.B))
        self.assertLess(abs(self.actual(self.B)[k]), 1.0)
        self.home(self.B)

    # -- MoveIt-shaped goal -----------------------------------------------------------------------------
    def test_27_moveit_shaped_goal(self):
        self.home()
        self.assertTrue(self.wait_still(self.A))
        start = self.actual(self.A)  # point 0 = the current state, joints in group order
        delta = [0.5, -0.4, 0.7]
        g = u.ramp_goal(self.A.joints, start, delta, 1.5, points=12)
        self.assertEqual(g.trajectory.header.stamp, genpy.Time(0))
        self.assertTrue(all(len(p.velocities) == 3 and len(p.accelerations) == 3
                            for p in g.trajectory.points))
        self.assert_succeeds(self.A.client, g)
        final = self.actual(self.A)
        target = list(g.trajectory.points[-1].positions)
        err = u.max_abs_diff(final, target)
        rospy.loginfo("MoveIt-shaped goal: final max error %.4f (goal tolerance %.3f)", err, GOAL_TOL)
        self.assertLess(err, GOAL_TOL)
        self.home()

    # -- absurd goals (reliability suite item 1) ---------------------------------------------------------
    def assert_state_sane(self, ctl: Ctl, msgs: List, what: str) -> None:
        """Every ``state`` message: desired/error finite, desired positions inside the URDF limits."""
        self.assertTrue(msgs, f"{what}: no {ctl.name}/state messages")
        for m in msgs:
            for field in (m.desired.positions, m.desired.velocities, m.desired.accelerations,
                          m.error.positions, m.error.velocities):
                self.assertTrue(u.finite(field), f"{what}: non-finite {ctl.name}/state {list(field)}")
            for name, p in zip(m.joint_names, m.desired.positions):
                lo, hi = URDF_LIMITS.get(name, (-1e6, 1e6))
                self.assertTrue(lo - 1e-6 <= p <= hi + 1e-6,
                                f"{what}: desired {name} = {p} outside [{lo}, {hi}]")

    def expect_absurd_rejected(self, ctl: Ctl, joint: str, field: str, value: float) -> None:
        k = ctl.joints.index(joint)
        values = {"positions": list(ctl.desired()), "velocities": [0.0] * len(ctl.joints),
                  "accelerations": [0.0] * len(ctl.joints)}
        values[field][k] = value
        bad = trajectory(ctl.joints, [point(values["positions"], 0.5, values["velocities"],
                                            values["accelerations"])])
        what = f"{joint} {field} = {value!r}"
        text = self.expect_rejected(ctl, goal_of(bad), R.INVALID_GOAL, what)
        self.assertIn(joint, text, f"{what}: the error does not name the joint")
        self.assertIn("point 0", text, f"{what}: the error does not name the point")

    def test_28_absurd_goal_rejected_then_valid_goals_succeed(self):
        # the reported repro: elbow_joint = 1e6 used to be accepted, abort, and poison every later goal
        self.home(self.B)
        self.B.state.clear()
        k = self.B.joints.index("elbow_joint")
        target = list(B_HOME)
        target[k] = 1e6
        text = self.expect_rejected(self.B, goal_of(trajectory(self.B.joints, [point(target, 0.5)])),
                                    R.INVALID_GOAL, "elbow_joint = 1e6")
        self.assertIn("elbow_joint", text)
        self.assertIn("[-2.5, 2.5]", text, "the error does not give the limits")
        for goal_target in ([1.0, 0.3], [0.4, -0.3], B_HOME):  # three valid goals, as in the repro
            self.move(self.B, goal_target)
            self.assertTrue(self.wait_still(self.B))
            self.assert_near(self.actual(self.B), goal_target, B_GOAL_TOL, "valid goal after the absurd one")
        # the same message on the command topic: nothing executes, the controller keeps holding
        before = self.B.desired()
        self.B.pub.publish(trajectory(self.B.joints, [point(target, 0.5)]))
        time.sleep(0.5)  # nothing must happen: there is no event to wait for
        self.assert_near(self.B.desired(), before, 1e-9, "desired after an absurd command")
        self.move(self.B, [0.9, 0.2])
        self.assert_state_sane(self.B, self.B.state.snapshot(), "absurd elbow goal and command")
        self.home(self.B)

    def test_29_huge_values_rejected_and_state_stays_finite(self):
        self.home()
        self.A.state.clear()
        for joint, field, value in (("wrist_3_joint", "positions", 1.79769e308),
                                    ("shoulder_pan_joint", "positions", 1.79769e308),
                                    ("shoulder_pan_joint", "positions", 1e154),
                                    ("wrist_3_joint", "positions", -1e300),
                                    ("wrist_2_joint", "velocities", 1e154),
                                    ("wrist_3_joint", "velocities", 1.79769e308),
                                    ("shoulder_pan_joint", "accelerations", 1e300),
                                    ("wrist_3_joint", "accelerations", -1.79769e308)):
            self.expect_absurd_rejected(self.A, joint, field, value)
        # cancel and preemption are answered promptly afterwards (they used to hang in PREEMPTING)
        self.A.client.send_goal(goal_of(self._far_traj()))
        self._assert_moving()
        t0 = time.monotonic()
        self.A.client.cancel_goal()
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(3.0)), "cancel not answered")
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        rospy.loginfo("cancel after absurd goals answered in %.3f s", time.monotonic() - t0)
        self.assertTrue(self.wait_still(self.A))
        self.A.client.send_goal(goal_of(self._far_traj()))
        self._assert_moving()
        self.A.client2.send_goal(goal_of(self._home_traj()))
        self.assertTrue(self.A.client.wait_for_result(rospy.Duration(3.0)), "preemption not answered")
        self.assertEqual(self.A.client.get_state(), GoalStatus.PREEMPTED)
        self.assertTrue(self.A.client2.wait_for_result(rospy.Duration(8.0)))
        self.assertEqual(self.A.client2.get_state(), GoalStatus.SUCCEEDED, self.A.client2.get_result())
        self.move(self.A, [0.3, -0.2, 0.4])
        self.assert_state_sane(self.A, self.A.state.snapshot(), "huge values")
        self.home()

    def test_30_longer_points_partial_goal_accepted(self):
        # upstream's partial-trajectory rostests send joint_names [joint2] with 2 values per point
        self.home(self.B)
        g = goal_of(trajectory(["wrist_1_joint"], [point([0.3, 0.0], 0.8, [0.0, 0.0], [0.0, 0.0])]))
        self.assert_succeeds(self.B.client, g)
        self.assertTrue(self.wait_still(self.B))
        self.assert_near(self.actual(self.B), [B_HOME[0], 0.3], B_GOAL_TOL, "longer-point partial goal")
        # velocities of another size than the point's positions are still refused, as upstream
        g = goal_of(trajectory(["wrist_1_joint"], [point([0.1, 0.0], 0.8, [0.0])]))
        self.expect_rejected(self.B, g, R.INVALID_GOAL, "velocities of another size than positions")
        self.home(self.B)

    # -- still alive ------------------------------------------------------------------------------------
    def test_99_node_still_running(self):
        self.js.clear()
        self.assertTrue(u.wait_for(lambda: self.js.count() > 20, 5.0), "/joint_states stopped")
        if self.use_ros_control:
            self.assertEqual(self._state_of(A_NAME), "running")
            self.assertEqual(self._state_of(B_NAME), "running")
        else:
            with self.assertRaises(rospy.ROSException):  # no controller manager in this branch
                rospy.wait_for_service("controller_manager/list_controllers", 0.5)
        for ctl in (self.A, self.B):
            ctl.state.clear()
            self.assertTrue(u.wait_for(lambda: ctl.state.count() > 5, 5.0), f"{ctl.name}/state stopped")
        self.home()
        self.move(self.A, [0.1, 0.1, 0.1])
        self.home()
        self.home(self.B)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_jtc_scenarios", JtcScenarios, sys.argv)
