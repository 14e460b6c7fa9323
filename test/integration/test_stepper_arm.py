#!/usr/bin/env python3
"""rostest node: the stepper arm (robot:=stepper_arm) driven through its trajectory board program.

The launch file starts the board program (scripts/trajectory_board, simulated pulses) as its own
process and the driver with the board RobotHW, in the branch of ``~use_ros_control``.  Checked as a
FollowJointTrajectory client sees it: ``/arm_controller/follow_joint_trajectory`` executes goals and
``/joint_states`` (the board's feedback) ends at the goal; tolerances, cancel, replacement, a board
fault (injected through the board program's ``--fault-file``) and ``~reset_faults``, the connection
cut mid-goal (the same file's ``DISCONNECT``: the goal aborts naming the board, the board ramps to a
stop by itself, the driver reconnects), and the driver frozen by SIGSTOP mid-trajectory.  With
``~protocol`` = original (or its former name seed; a board speaking the original board program's
protocol): open loop, a goal succeeds at its end time, ``/diagnostics`` says so, a cancel is not claimed.
"""
from __future__ import annotations

import os
import signal
import sys
import time
import unittest
import xmlrpc.client

import rosgraph
import rosnode
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryGoal, FollowJointTrajectoryResult, JointTolerance
from controller_manager_msgs.srv import ListControllers
from std_srvs.srv import Trigger
from trajectory_msgs.msg import JointTrajectoryPoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

ARM = "arm_controller"
STEP = 1.0 / 2291.83      # rad per pulse: the board's position resolution


class StepperArmTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_stepper_arm")
        # "seed" is the former name of "original", still accepted by the launch file
        protocol = rospy.get_param("~protocol", "full")
        cls.protocol = {"seed": "original"}.get(protocol, protocol)
        cls.fault_file = rospy.get_param("~fault_file", "")
        cls.joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 180.0)
        if not u.wait_for(lambda: cls.js.positions(cls.joints) is not None, 60.0):
            raise AssertionError("no /joint_states with the arm joints")
        if rospy.get_param("~use_ros_control"):
            # the action server is up once the spawner loaded the controller; goals need it started
            rospy.wait_for_service("controller_manager/list_controllers", 60.0)
            listing = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)

            def running():
                return any(c.name == ARM and c.state == "running" for c in listing().controller)
            if not u.wait_for(running, 60.0, step=0.1):
                raise AssertionError(f"{ARM} not running: {listing()}")
        # the board connected: the joints leave their start-up fault
        if cls.protocol == "full":
            ok = u.wait_for(lambda: (cls.diag.status("robot_hw") or {}).get("connected") == "True", 60.0)
            assert ok, cls.diag.status("robot_hw")

    def here(self):
        return self.js.positions(self.joints)

    def send(self, delta, duration=1.2, **kw):
        goal = u.ramp_goal(self.joints, self.here(), delta, duration)
        for key, value in kw.items():
            setattr(goal, key, value)
        self.arm.send_goal(goal)
        return goal

    def result(self, timeout=30.0):
        self.assertTrue(self.arm.wait_for_result(rospy.Duration(timeout)), "no result")
        return self.arm.get_state(), self.arm.get_result()

    def settle(self):
        """Joint states stopped changing (the board is at rest)."""
        def still():
            a = self.here()
            time.sleep(0.2)
            b = self.here()
            return max(abs(x - y) for x, y in zip(a, b)) < 0.5 * STEP
        self.assertTrue(u.wait_for(still, 10.0))

    # ------------------------------------------------------------------------------------------
    def test_1_goal_succeeds_and_joint_states_reach_it(self):
        start = self.here()
        delta = [0.3, -0.2, 0.25, 0.2, -0.15, 0.3]
        goal = self.send(delta)
        state, result = self.result()
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        target = goal.trajectory.points[-1].positions
        ok = u.wait_for(lambda: max(abs(a - b) for a, b in zip(self.here(), target)) <= 1.5 * STEP, 5.0)
        self.assertTrue(ok, f"joint_states {self.here()} vs goal {list(target)} (start {start})")

    def test_2_tolerance_violation_aborts_naming_the_joint(self):
        if self.protocol != "full":
            self.skipTest("open loop: the plan is the state")
        # a goal tolerance below the board's step on joint_2, with a target between two steps
        self.send([0.0, 0.1 + 0.4 * STEP, 0.0, 0.0, 0.0, 0.0], duration=0.8,
                  goal_tolerance=[JointTolerance(name="joint_2", position=0.05 * STEP)])
        state, result = self.result()
        self.assertEqual(state, GoalStatus.ABORTED, result)
        self.assertEqual(result.error_code, FollowJointTrajectoryResult.GOAL_TOLERANCE_VIOLATED, result)
        self.assertIn("joint_2", result.error_string)

    def test_3_cancel_ramps_to_a_stop_and_preempts(self):
        if self.protocol != "full":
            self.skipTest("the original protocol has no cancel (test_seed_*)")
        self.settle()
        start = self.here()
        self.send([0.8, 0, 0, 0, 0, 0], duration=3.0)
        time.sleep(1.2)
        moving = self.js.velocities(self.joints)[0]
        self.arm.cancel_goal()
        state, result = self.result()
        self.assertEqual(state, GoalStatus.PREEMPTED, result)
        self.settle()
        travelled = self.here()[0] - start[0]
        self.assertGreater(moving, 0.05)
        self.assertTrue(0.05 < travelled < 0.75, travelled)     # stopped on the way, not at the goal

    def test_4_replacement_goal_takes_over(self):
        if self.protocol != "full":
            self.skipTest("the original board program cannot replace a running trajectory")
        self.settle()
        first = u.client(ARM, 30.0)
        first.send_goal(u.ramp_goal(self.joints, self.here(), [0.6, 0, 0, 0, 0, 0], 3.0))
        time.sleep(0.8)
        # as MoveIt replans: one point 1.5 s ahead, at rest there; the board splices from where it is
        here = self.here()
        goal = FollowJointTrajectoryGoal()
        goal.trajectory.joint_names = list(self.joints)
        goal.trajectory.points.append(JointTrajectoryPoint(
            positions=[here[0] + 0.2, here[1] + 0.1] + here[2:], velocities=[0.0] * 6,
            time_from_start=rospy.Duration(1.5)))
        self.arm.send_goal(goal)
        self.assertTrue(first.wait_for_result(rospy.Duration(30.0)))
        state, result = self.result()
        self.assertEqual(first.get_state(), GoalStatus.PREEMPTED, (first.get_goal_status_text(), result))
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        target = goal.trajectory.points[-1].positions
        self.assertTrue(u.wait_for(lambda: max(abs(a - b) for a, b in zip(self.here(), target)) <= 1.5 * STEP,
                                   5.0))

    def board_hook(self, text):
        """Write the board program's --fault-file (whole or absent: written aside, then renamed)."""
        with open(self.fault_file + ".tmp", "w") as f:
            f.write(text)
        os.replace(self.fault_file + ".tmp", self.fault_file)

    def reset_faults(self):
        reset = rospy.ServiceProxy("driver/reset_faults", Trigger)
        rospy.wait_for_service("driver/reset_faults", 10.0)
        # refused while the board still decelerates; then clears the latched fault
        self.assertTrue(u.wait_for(lambda: reset().success, 10.0, step=0.3))
        self.assertTrue(u.wait_for(lambda: (self.diag.status("robot_hw") or {}).get("level") == "0", 10.0),
                        self.diag.status("robot_hw"))

    def test_5_board_fault_aborts_with_its_code_and_reset_faults_clears_it(self):
        if self.protocol != "full" or not self.fault_file:
            self.skipTest("needs the full protocol and the board's fault file")
        self.settle()
        self.send([0.5, 0, 0, 0, 0, 0], duration=2.5)
        time.sleep(0.6)
        self.board_hook("LIMIT_SWITCH joint_3 limit switch hit")
        state, result = self.result()
        self.assertEqual(state, GoalStatus.ABORTED, result)
        self.assertIn("LIMIT_SWITCH", result.error_string)
        self.assertIn("stepper_arm_board", result.error_string)
        # refused while the joints are in fault
        self.send([0.05, 0, 0, 0, 0, 0], duration=0.5)
        state, _ = self.result()
        self.assertIn(state, (GoalStatus.REJECTED, GoalStatus.ABORTED))
        self.reset_faults()
        self.send([-0.1, 0, 0, 0, 0, 0], duration=0.8)
        state, result = self.result()
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)

    def test_5b_connection_lost_mid_goal_aborts_the_board_stops_and_the_driver_reconnects(self):
        if self.protocol != "full" or not self.fault_file:
            self.skipTest("needs the full protocol and the board's fault file")
        self.settle()
        start = self.here()
        delta = 0.5
        self.send([delta, 0, 0, 0, 0, 0], duration=3.0)
        self.assertTrue(u.wait_for(lambda: self.here()[0] - start[0] > 0.01, 5.0), "the arm never moved")
        self.board_hook("DISCONNECT")         # the board drops the host's socket, no goodbye
        state, result = self.result()
        self.assertEqual(state, GoalStatus.ABORTED, result)
        self.assertIn("stepper_arm_board", result.error_string)
        self.assertIn("connection lost", result.error_string)

        # the driver reconnects by itself and /diagnostics shows the fault the board latched
        def reconnected_and_faulted():
            st = self.diag.status("robot_hw") or {}
            return (st.get("connected") == "True" and st.get("fault") == "CONNECTION_LOST"
                    and st["level"] == "2")
        self.assertTrue(u.wait_for(reconnected_and_faulted, 15.0), self.diag.status("robot_hw"))
        # the board ramped to a stop by itself: /joint_states (its feedback again) at rest, short of the goal
        self.settle()
        travelled = self.here()[0] - start[0]
        self.assertTrue(0.01 < travelled < delta - 0.1, travelled)
        time.sleep(0.5)
        self.assertAlmostEqual(self.here()[0], start[0] + travelled, delta=0.5 * STEP)   # and stays there
        # refused while the fault lasts; ~reset_faults clears it; a new goal succeeds
        self.send([0.05, 0, 0, 0, 0, 0], duration=0.5)
        state, _ = self.result()
        self.assertIn(state, (GoalStatus.REJECTED, GoalStatus.ABORTED))
        self.reset_faults()
        goal = self.send([-0.1, 0.05, 0, 0, 0, 0], duration=0.8)
        state, result = self.result()
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        target = goal.trajectory.points[-1].positions
        self.assertTrue(u.wait_for(lambda: max(abs(a - b) for a, b in zip(self.here(), target)) <= 1.5 * STEP,
                                   5.0), (self.here(), list(target)))

    def test_6_driver_frozen_for_0_3_s_does_not_disturb_the_trajectory(self):
        self.settle()
        master = rosgraph.Master("/test_stepper_arm")
        uri = rosnode.get_api_uri(master, "/driver")
        pid = xmlrpc.client.ServerProxy(uri).getPid("/test_stepper_arm")[2]
        goal = self.send([0.3, 0.2, -0.2, 0, 0, 0], duration=2.0)
        time.sleep(0.8)
        os.kill(pid, signal.SIGSTOP)
        try:
            time.sleep(0.3)
        finally:
            os.kill(pid, signal.SIGCONT)
        state, result = self.result()
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        target = goal.trajectory.points[-1].positions
        self.assertTrue(u.wait_for(lambda: max(abs(a - b) for a, b in zip(self.here(), target)) <= 1.5 * STEP,
                                   5.0))

    def test_7_seed_open_loop(self):
        if self.protocol != "original":
            self.skipTest("original protocol only")

        def says_open_loop():
            return "open loop" in (self.diag.status("robot_hw") or {}).get("message", "")
        self.assertTrue(u.wait_for(says_open_loop, 20.0), self.diag.status("robot_hw"))
        goal = self.send([0.2, 0.1, -0.1, 0, 0, 0], duration=1.0)
        sent = time.monotonic()
        state, result = self.result()
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        self.assertGreater(time.monotonic() - sent, 0.9)        # not before its time has run out
        target = goal.trajectory.points[-1].positions        # /joint_states is the plan: exactly there
        self.assertTrue(u.wait_for(lambda: max(abs(a - b) for a, b in zip(self.here(), target)) < 1e-9, 5.0),
                        (self.here(), target))
        # a cancel the original board program cannot honour is not claimed
        self.send([-0.2, -0.1, 0.1, 0, 0, 0], duration=2.0)
        time.sleep(0.5)
        self.arm.cancel_goal()
        state, result = self.result()
        self.assertNotEqual(state, GoalStatus.PREEMPTED, result)
        self.assertIn("not honoured", result.error_string)

    def test_8_home_is_refused_during_a_goal_then_homes_against_the_limit_switch(self):
        if self.protocol != "full":
            self.skipTest("the board programs of the original protocols have no homing")
        driver = rospy.get_param("~driver_name", "/driver")
        rospy.wait_for_service(f"{driver}/home/joint_6", 10.0)
        home_all = rospy.ServiceProxy(f"{driver}/home", Trigger)
        home_6 = rospy.ServiceProxy(f"{driver}/home/joint_6", Trigger)
        self.settle()
        self.send([0.2, 0, 0, 0, 0, 0.2], duration=3.0)
        self.assertTrue(u.wait_for(lambda: self.arm.get_state() == GoalStatus.ACTIVE, 10.0))
        answer = home_all()
        self.assertFalse(answer.success, answer.message)
        self.assertIn("trajectory is running", answer.message)
        state, result = self.result()
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        answer = home_6()
        self.assertTrue(answer.success, answer.message)
        self.assertTrue(u.wait_for(lambda: abs(self.here()[5] + 2.9) < 0.02, 5.0), self.here())
        self.send([0, 0, 0, 0, 0, 0.4], duration=1.0)       # away from the switch, from the new zero
        state, result = self.result()
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_stepper_arm", StepperArmTest)
