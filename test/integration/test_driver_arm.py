#!/usr/bin/env python3
"""rostest node: the driver with the simulated arm, in either branch (``~use_ros_control``).

What MoveIt relies on (can_moveit_facts.md section 4): /joint_states with every joint at the
configured rate and strictly increasing stamps; MoveIt-shaped goals succeed within the goal
tolerance; a second goal mid-motion preempts the first without a desired-velocity jump; cancel
stops the robot; invalid goals are rejected with the right codes; the node survives all of it.
ros_control branch only: switching arm_controller <-> arm_group_velocity_controller changes the
motors' mode (seen in /diagnostics), and the controller_manager / spawner tools work against the node.
"""
from __future__ import annotations

import math
import os
import signal
import subprocess
import sys
import time
import unittest

import actionlib
import genpy
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryResult
from controller_manager_msgs.srv import ListControllers, LoadController, SwitchController
from trajectory_msgs.msg import JointTrajectoryPoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

from rospy_control.adapter.tools.demo_trajectory import excursion, joint_limits_from_urdf  # noqa: E402

ARM = "arm_controller"
SCRIPTS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
GRIPPER = "gripper_controller"


class DriverArmTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_driver_arm")
        cls.use_ros_control = bool(rospy.get_param("~use_ros_control"))
        cls.publish_rate = float(rospy.get_param("~publish_rate", 100.0))
        cls.driver = rospy.get_param("~driver_name", "/driver")
        urdf = rospy.get_param("robot_description")
        cls.all_joints = u.actuated_joints(urdf)
        cls.limits = joint_limits_from_urdf(urdf)
        cls.arm_joints = rospy.get_param(ARM + "/joints")
        cls.goal_tol = 0.02
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 180.0)  # the driver and the spawner start at once on a loaded host
        cls.gripper = u.client(GRIPPER, 60.0)
        if not u.wait_for(lambda: cls.js.positions(cls.arm_joints) is not None, 60.0):
            raise AssertionError("no /joint_states with the arm joints")

    # -- helpers ----------------------------------------------------------------------------------
    def current(self, joints=None):
        joints = joints or self.arm_joints
        pos = self.js.positions(joints)
        self.assertIsNotNone(pos)
        return pos

    def deltas(self, start, amplitude, joints=None):
        joints = joints or self.arm_joints
        return excursion(start, [amplitude] * len(joints), [self.limits[j] for j in joints], margin=0.15)

    def run_goal(self, client, goal, timeout):
        """Send ``goal`` and wait for its result: ``timeout`` is the goal's own duration plus a
        generous margin for a loaded host (it only bounds the wait)."""
        u.send_goal(client, goal)
        self.assertTrue(client.wait_for_result(rospy.Duration(timeout + 20.0)), "no result in time")
        return client.get_state(), client.get_result()

    def settle(self):
        """Wait until the arm is still (previous test's motion finished)."""
        u.wait_for(lambda: max(abs(v) for v in (self.js.velocities(self.arm_joints) or [1.0])) < 0.02, 10.0)

    def fresh(self, joints=None):
        """Positions from a /joint_states message stamped after now (not one that was already on its
        way before what the caller waits for had happened)."""
        joints = joints or self.arm_joints
        msg = u.wait_fresh(self.js, rospy.get_time())
        self.assertIsNotNone(msg, "no fresh /joint_states")
        m = dict(zip(msg.name, msg.position))
        return [m[j] for j in joints]

    # -- /joint_states ----------------------------------------------------------------------------
    def test_01_joint_states_every_joint_rate_and_stamps(self):
        self.js.clear()
        time.sleep(6.0)  # the measurement window
        with self.js.lock:
            msgs = list(self.js.msgs)
            arrivals = list(self.js.arrivals)
        self.assertGreater(len(msgs), 10)
        for msg in msgs:
            self.assertEqual(set(self.all_joints) - set(msg.name), set(), "joints missing in /joint_states")
            self.assertEqual(len(msg.name), len(msg.position))
            self.assertEqual(len(msg.name), len(msg.velocity))
            self.assertEqual(len(msg.name), len(msg.effort))
        stamps = [m.header.stamp.to_sec() for m in msgs]
        for a, b in zip(stamps, stamps[1:]):
            self.assertGreater(b, a, "stamps not strictly increasing")
        # per-second rates, median: a host stall empties one bin and the catch-up fills the next
        rate = u.median_rate(stamps)
        wall_rate = u.median_rate(arrivals)
        rospy.loginfo("/joint_states: %.2f Hz by stamps, %.2f Hz by arrival (median of 1 s bins; %.2f Hz "
                      "over the window; configured %.1f Hz)", rate, wall_rate,
                      (len(stamps) - 1) / (stamps[-1] - stamps[0]), self.publish_rate)
        self.assertLess(abs(rate - self.publish_rate), 0.05 * self.publish_rate)
        self.assertLess(abs(wall_rate - self.publish_rate), 0.05 * self.publish_rate)

    # -- goals --------------------------------------------------------------------------------------
    def test_02_moveit_goal_succeeds_within_tolerance(self):
        self.settle()
        start = self.current()
        delta = self.deltas(start, 0.3)
        goal = u.excursion_goal(self.arm_joints, start, delta, 2.0)
        goal.trajectory.points = goal.trajectory.points[:11]  # out only: end at the peak
        goal.trajectory.points[-1].velocities = [0.0] * len(delta)
        goal.trajectory.points[-1].accelerations = [0.0] * len(delta)
        state, result = self.run_goal(self.arm, goal, 10.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        self.assertEqual(result.error_code, FollowJointTrajectoryResult.SUCCESSFUL)
        final = self.fresh()
        target = list(goal.trajectory.points[-1].positions)
        err = u.max_abs_diff(final, target)
        rospy.loginfo("MoveIt-shaped goal: final max error %.4f (tolerance %.3f)", err, self.goal_tol)
        self.assertLess(err, self.goal_tol)

    def test_03_gripper_goal_succeeds(self):
        start = self.current(["gripper_finger_joint"])
        delta = self.deltas(start, 0.015, ["gripper_finger_joint"])
        goal = u.ramp_goal(["gripper_finger_joint"], start, delta, 1.0, points=6)
        state, result = self.run_goal(self.gripper, goal, 8.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        final = self.fresh(["gripper_finger_joint"])
        self.assertLess(abs(final[0] - (start[0] + delta[0])), 0.002)

    def test_04_second_goal_preempts_smoothly(self):
        self.settle()
        state_rec = u.ControllerState(ARM)
        # connected before the first goal: connecting takes seconds on a loaded host
        client2 = actionlib.SimpleActionClient(ARM + "/follow_joint_trajectory",
                                               u.FollowJointTrajectoryAction)
        self.assertTrue(client2.wait_for_server(rospy.Duration(60.0)))
        try:
            start = self.current()
            delta = self.deltas(start, 1.0)
            goal1 = u.ramp_goal(self.arm_joints, start, delta, 2.5, points=15)
            k = max(range(len(delta)), key=lambda i: abs(delta[i]))
            peak = 1.875 * abs(delta[k]) / 2.5  # the smoothstep's top speed, at mid-motion (1.25 s)

            def fast():  # goal 1 is moving fast (past ~1.05 s of its 2.5 s), however late it started
                msg = state_rec.latest()
                return (msg is not None and list(msg.joint_names) == self.arm_joints
                        and abs(msg.desired.velocities[k]) > 0.95 * peak)

            self.arm.send_goal(goal1)
            self.assertTrue(u.wait_for(fast, 30.0), "the first goal never got moving")
            now = self.current()
            back = [-0.5 * d for d in delta]
            goal2 = u.ramp_goal(self.arm_joints, now, back, 3.0, points=4)
            t_switch = rospy.get_time()
            client2.send_goal(goal2)
            self.assertTrue(self.arm.wait_for_result(rospy.Duration(30.0)))
            self.assertEqual(self.arm.get_state(), GoalStatus.PREEMPTED)
            self.assertTrue(client2.wait_for_result(rospy.Duration(30.0)))
            self.assertEqual(client2.get_state(), GoalStatus.SUCCEEDED, client2.get_result())
        finally:
            state_rec.sub.unregister()
        msgs = [m for m in state_rec.snapshot() if m.joint_names == self.arm_joints]
        window = [m for m in msgs if t_switch - 0.1 <= m.header.stamp.to_sec() <= t_switch + 0.6]
        self.assertGreater(len(window), 10, "too few state messages around the switch")
        v_at_switch = max(abs(v) for v in window[0].desired.velocities)
        self.assertGreater(v_at_switch, 0.3, "the first goal was not moving fast at the switch")
        jumps = [max(abs(a - b) for a, b in zip(m1.desired.velocities, m2.desired.velocities))
                 for m1, m2 in zip(window, window[1:])]
        k = max(range(len(self.arm_joints)), key=lambda i: abs(window[0].desired.velocities[i]))
        rospy.loginfo("preemption at t=%.3f: %s desired velocity %s", t_switch, self.arm_joints[k],
                      ["%.3f@%.3f" % (m.desired.velocities[k], m.header.stamp.to_sec() - t_switch)
                       for m in window])
        rospy.loginfo("preemption: desired |v| %.3f rad/s at the switch, largest desired-velocity step "
                      "between state messages %.4f rad/s", v_at_switch, max(jumps))
        # a restart from goal 2's point 0 (v = 0) would step by ~v_at_switch in one message
        self.assertLess(max(jumps), min(0.2, 0.3 * v_at_switch), "desired velocity jumps at the goal switch")

    def test_05_cancel_stops_the_robot(self):
        self.settle()
        start = self.current()
        delta = self.deltas(start, 0.8)
        goal = u.ramp_goal(self.arm_joints, start, delta, 3.0)
        self.arm.send_goal(goal)
        # moving (> 0.1 rad/s: ~0.3 s into the 3 s goal), however late the goal got there
        self.assertTrue(u.wait_for(lambda: max(abs(v) for v in self.js.velocities(self.arm_joints)) > 0.1,
                                   30.0), "not moving before the cancel")
        self.arm.cancel_goal()
        self.assertTrue(self.arm.wait_for_result(rospy.Duration(30.0)))
        self.assertEqual(self.arm.get_state(), GoalStatus.PREEMPTED)
        # stops (stop_trajectory_duration 0.2 s; 0.8 s when the host is idle, more allowed here) ...
        self.assertTrue(u.wait_for(lambda: max(abs(v) for v in self.js.velocities(self.arm_joints)) < 0.05,
                                   10.0), "robot not stopped after cancel")
        p1 = self.fresh()
        time.sleep(1.0)  # ... and stays stopped
        p2 = self.fresh()
        self.assertLess(u.max_abs_diff(p1, p2), 0.01, "robot still moving after cancel")
        self.assertGreater(u.max_abs_diff(p2, [s + d for s, d in zip(start, delta)]), 0.1,
                           "the cancelled goal was completed anyway")

    def _expect_rejected(self, goal, code):
        state, result = self.run_goal(self.arm, goal, 5.0)
        self.assertEqual(state, GoalStatus.REJECTED, result)
        self.assertEqual(result.error_code, code, result.error_string)
        self.assertTrue(result.error_string)

    def test_06_invalid_goals_get_the_right_codes(self):
        self.settle()
        start = self.current()
        base = u.ramp_goal(self.arm_joints, start, [0.1] * len(start), 1.0, points=4)
        bad = u.ramp_goal(self.arm_joints, start, [0.1] * len(start), 1.0, points=4)
        bad.trajectory.joint_names[0] = "no_such_joint"
        self._expect_rejected(bad, FollowJointTrajectoryResult.INVALID_JOINTS)
        bad = u.ramp_goal(self.arm_joints, start, [0.1] * len(start), 1.0, points=4)
        bad.trajectory.points[2].time_from_start = bad.trajectory.points[1].time_from_start
        self._expect_rejected(bad, FollowJointTrajectoryResult.INVALID_GOAL)
        bad = u.ramp_goal(self.arm_joints, start, [0.1] * len(start), 1.0, points=4)
        bad.trajectory.points[2].positions[1] = float("nan")
        self._expect_rejected(bad, FollowJointTrajectoryResult.INVALID_GOAL)
        bad = u.ramp_goal(self.arm_joints, start, [0.1] * len(start), 1.0, points=4)
        bad.trajectory.header.stamp = genpy.Time.from_sec(rospy.get_time() - 30.0)
        self._expect_rejected(bad, FollowJointTrajectoryResult.INVALID_GOAL)
        bad = u.ramp_goal(self.arm_joints, start, [0.1] * len(start), 1.0, points=4)
        bad.trajectory.points.append(JointTrajectoryPoint(positions=[0.0], time_from_start=rospy.Duration(2)))
        self._expect_rejected(bad, FollowJointTrajectoryResult.INVALID_GOAL)
        # still serving: a valid goal afterwards succeeds
        state, result = self.run_goal(self.arm, base, 6.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)

    # -- ros_control branch -------------------------------------------------------------------------
    def _motor_mode(self, motor):
        st = self.diag.status(f"motor {motor}")
        return None if st is None else st.get("mode")

    def _wait_modes(self, motors, mode, timeout=30.0):
        self.diag.clear()
        ok = u.wait_for(lambda: all(self._motor_mode(m) == mode for m in motors), timeout, 0.1)
        self.assertTrue(ok, {m: self._motor_mode(m) for m in motors})

    def test_07_switch_modes_follow(self):
        arm_motors = ["shoulder_pan_motor", "shoulder_lift_motor", "elbow_motor", "wrist_1_motor",
                      "wrist_a_motor", "wrist_b_motor"]
        if not self.use_ros_control:
            self._wait_modes(arm_motors, "POSITION")
            with self.assertRaises(rospy.ROSException):
                rospy.wait_for_service("controller_manager/list_controllers", 0.5)
            return
        self.settle()
        self._wait_modes(arm_motors, "POSITION")
        load = rospy.ServiceProxy("controller_manager/load_controller", LoadController)
        switch = rospy.ServiceProxy("controller_manager/switch_controller", SwitchController)
        names = [c.name for c in rospy.ServiceProxy("controller_manager/list_controllers",
                                                    ListControllers)().controller]
        if "arm_group_velocity_controller" not in names:
            self.assertTrue(load("arm_group_velocity_controller").ok)
        self.assertTrue(switch(["arm_group_velocity_controller"], [ARM], 2, False, 10.0).ok)
        self._wait_modes(arm_motors, "VELOCITY")
        self._wait_modes(["gripper_motor"], "POSITION")
        # (no position hold in velocity mode: the shoulder sags under gravity, so switch back at once)
        self.assertTrue(switch([ARM], ["arm_group_velocity_controller"], 2, False, 10.0).ok)
        self._wait_modes(arm_motors, "POSITION")
        # the trajectory controller works again after the round trip
        start = self.current()
        goal = u.ramp_goal(self.arm_joints, start, self.deltas(start, 0.2), 1.0, points=5)
        state, result = self.run_goal(self.arm, goal, 6.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)

    def test_08_tools_against_the_node(self):
        if not self.use_ros_control:
            return
        env = dict(os.environ)
        out = subprocess.run([sys.executable, os.path.join(SCRIPTS, "controller_manager"), "list"], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=90).stdout.decode()
        self.assertIn("'joint_state_controller'", out)
        self.assertRegex(out, r"'arm_controller' - '.*PositionJointInterface.*' \( running \)")
        spawner = subprocess.Popen([sys.executable, os.path.join(SCRIPTS, "spawner"), "--stopped",
                                    "arm_group_position_controller", "__name:=test_spawner"], env=env)
        lister = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)

        def state_of(name):
            for c in lister().controller:
                if c.name == name:
                    return c.state
            return None
        try:
            self.assertTrue(u.wait_for(lambda: state_of("arm_group_position_controller") == "initialized",
                                       60.0, 0.2), "spawner did not load the controller")
        finally:
            spawner.send_signal(signal.SIGINT)
            try:
                code = spawner.wait(30)
            except subprocess.TimeoutExpired:
                spawner.kill()
                code = "hung"
        self.assertEqual(code, 0, "spawner exit status after SIGINT")
        self.assertIsNone(state_of("arm_group_position_controller"),
                          "spawner did not unload its controller on shutdown")
        self.assertEqual(state_of(ARM), "running")

    # -- still alive ----------------------------------------------------------------------------
    def test_99_node_still_running(self):
        self.js.clear()
        self.assertTrue(u.wait_for(lambda: self.js.count() > 20, 30.0))
        self.assertTrue(self.arm.wait_for_server(rospy.Duration(30.0)))
        loop = self.diag.status("control loop")
        self.assertIsNotNone(loop)
        rospy.loginfo("control loop: %s", loop)
        self.assertNotEqual(loop["level"], "2", loop)
        self.assertTrue(math.isfinite(float(loop["rate (measured, Hz)"])))


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_driver_arm", DriverArmTest, sys.argv)
