#!/usr/bin/env python3
"""rostest node: a motor that is silent from power-on is a fault, not a configuration error.

The driver runs the simulated arm with ``wrist_1_motor`` silent from the start
(``arm_hardware_silent_wrist.xml``), in either branch (``~use_ros_control``).  The node must stay
up, report the faulted joint, run the controllers (the gripper moves; the arm controller refuses
goals that need the faulted joint, naming it), refuse ``~reset_faults`` while the motor is silent,
and, once it answers again, reset it so that the arm controller holds and executes goals.
"""
from __future__ import annotations

import os
import sys
import unittest

import rosnode
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryResult
from std_srvs.srv import Trigger

from rospy_control.srv import SetSimFault

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

from rospy_control.adapter.tools.demo_trajectory import excursion, joint_limits_from_urdf  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ARM = "arm_controller"
GRIPPER = "gripper_controller"


class DriverStartFaultTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_driver_start_fault")
        cls.use_ros_control = bool(rospy.get_param("~use_ros_control"))
        cls.driver = rospy.get_param("~driver_name", "/driver")
        urdf = rospy.get_param("robot_description")
        cls.limits = joint_limits_from_urdf(urdf)
        cls.arm_joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 90.0)
        cls.gripper = u.client(GRIPPER, 30.0)
        rospy.wait_for_service(f"{cls.driver}/reset_faults", 60.0)
        cls.reset_faults = rospy.ServiceProxy(f"{cls.driver}/reset_faults", Trigger)
        cls.set_fault = rospy.ServiceProxy(f"{cls.driver}/sim/set_fault", SetSimFault)
        if not u.wait_for(lambda: cls.js.positions(cls.arm_joints) is not None, 30.0):
            raise AssertionError("no /joint_states with the arm joints")

    def run_goal(self, client, goal, timeout):
        u.send_goal(client, goal)
        self.assertTrue(client.wait_for_result(rospy.Duration(timeout)), "no result in time")
        return client.get_state(), client.get_result()

    def arm_goal(self, amplitude=0.25, duration=1.5):
        start = self.js.positions(self.arm_joints)
        limits = [self.limits[j] for j in self.arm_joints]
        delta = excursion(start, [amplitude] * len(self.arm_joints), limits, margin=0.2)
        return u.ramp_goal(self.arm_joints, start, delta, duration)

    def test_00_test_data_differs_from_the_shipped_arm_only_by_the_silent_motor(self):
        with open(os.path.join(HERE, "arm_hardware_silent_wrist.xml")) as f:
            test = f.read()
        with open(os.path.join(HERE, "..", "..", "config", "arm_hardware.xml")) as f:
            shipped = f.read()
        body = test[test.index("<hardware"):].replace(' fault="silent"', "", 1)
        self.assertEqual(body, shipped[shipped.index("<hardware"):])

    def test_01_node_up_and_the_fault_reported(self):
        self.assertTrue(rosnode.rosnode_ping(self.driver, max_count=1))
        self.assertTrue(u.wait_for(lambda: (self.diag.status(": faults") or {}).get("level") == "2", 15.0))
        st = self.diag.status(": faults")
        self.assertIn("wrist_1_motor", st["message"])
        hw = self.diag.status(": robot_hw")
        self.assertIn("wrist_1_joint", hw["message"])
        if self.use_ros_control:
            from controller_manager_msgs.srv import ListControllers
            rospy.wait_for_service("controller_manager/list_controllers", 30.0)
            lc = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)
            self.assertTrue(u.wait_for(
                lambda: {c.name: c.state for c in lc().controller}.get(ARM) == "running", 30.0),
                "the spawner did not start arm_controller with a faulted joint")
            self.assertEqual({c.name: c.state for c in lc().controller}.get(GRIPPER), "running")

    def test_02_healthy_controllers_run_and_the_faulted_joint_is_named(self):
        finger = self.js.positions(["gripper_finger_joint"])[0]
        target = 0.03 if finger < 0.02 else 0.01
        from control_msgs.msg import FollowJointTrajectoryGoal
        from trajectory_msgs.msg import JointTrajectoryPoint
        import genpy
        goal = FollowJointTrajectoryGoal()
        goal.trajectory.joint_names = ["gripper_finger_joint"]
        goal.trajectory.points = [JointTrajectoryPoint(positions=[target],
                                                       time_from_start=genpy.Duration(1.0))]
        state, result = self.run_goal(self.gripper, goal, 20.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)
        state, result = self.run_goal(self.arm, self.arm_goal(), 10.0)
        self.assertEqual(result.error_code, FollowJointTrajectoryResult.INVALID_GOAL)
        self.assertIn("wrist_1_joint", result.error_string)

    def test_03_reset_refused_while_silent_then_effective(self):
        answer = self.reset_faults()
        self.assertFalse(answer.success, answer.message)
        self.assertIn("wrist_1_motor", answer.message)
        self.assertTrue(self.set_fault(unit="wrist_1_motor", fault="silent", enable=False, value=0.0).success)
        answer = self.reset_faults()
        self.assertTrue(answer.success, answer.message)
        found = self.js.positions(["wrist_1_joint"])[0]
        self.assertTrue(u.wait_for(lambda: (self.diag.status(": faults") or {}).get("level") == "0", 10.0))
        # The joint stays where it was found: the motor engages under the wrist's weight (a sag of a
        # few milliradians, at up to about 0.6 rad/s for a few milliseconds), and the controllers
        # restart from that measured state, so a stop ramp may carry it a few hundredths further;
        # a stale target would be a jump. Once settled it holds, and the arm executes goals again.
        rospy.sleep(0.5)
        before = self.js.positions(["wrist_1_joint"])[0]
        self.assertAlmostEqual(before, found, delta=0.1)
        rospy.sleep(0.5)
        self.assertAlmostEqual(self.js.positions(["wrist_1_joint"])[0], before, delta=0.01)
        state, result = self.run_goal(self.arm, self.arm_goal(), 30.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)

    def test_99_node_still_running(self):
        self.assertTrue(rosnode.rosnode_ping(self.driver, max_count=1))


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_driver_start_fault", DriverStartFaultTest)
