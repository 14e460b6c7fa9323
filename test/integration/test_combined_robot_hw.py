#!/usr/bin/env python3
"""rostest node: the simulated CAN arm combined with a RobotHW of the user's own keeps what the CAN arm
alone has.

The driver runs ``robot_hardware: [arm, camera]`` (``combined_robot_hw/combined_robot_hw.yaml``): the
arm is ``rospy_control/MiddlewareRobotHW`` on its simulated CAN bus, the camera tilt a plain servo
(``rospy_control/SimpleRobotHW``), in either branch (``~use_ros_control``).  Through the capabilities
``CombinedRobotHW`` aggregates:

* **Step cap on the wire**: no position step between two consecutive command frames a motor received
  (``~sim/command_stats``) exceeds what the joint's URDF velocity limit allows over two control periods.
* **~reset_faults**: a motor silenced through ``~sim/set_fault`` goes to FAULT, the goal in flight
  aborts naming the joint, the reset is refused naming the motor while it is silent and succeeds once
  it answers again.
* **Controllers' restart after the recovery**: every running controller restarts, the camera's too (a
  camera goal in flight during the reset is preempted, "controller stopped"); then both accept goals.
* **Unit diagnostics**: the arm's motors and the combined joints on ``/diagnostics``.
"""
from __future__ import annotations

import os
import sys
import time
import unittest

import rosnode
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryResult
from std_srvs.srv import Trigger

from rospy_control.srv import SetSimFault, SimCommandStats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402
from test_driver_faults import motor_step_bounds  # noqa: E402

from rospy_control.adapter.tools.demo_trajectory import excursion, joint_limits_from_urdf  # noqa: E402

ARM = "arm_controller"
CAMERA = "camera_controller"
CAMERA_JOINT = "camera_tilt_joint"


class CombinedRobotHWTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_combined_robot_hw")
        cls.driver = rospy.get_param("~driver_name", "/driver")
        cls.control_rate = float(rospy.get_param("~control_rate", 200.0))
        cls.urdf = rospy.get_param("robot_description")
        cls.limits = joint_limits_from_urdf(cls.urdf)
        cls.arm_joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 90.0)
        cls.camera = u.client(CAMERA, 90.0)
        if rospy.get_param("~use_ros_control", True):
            u.wait_running([ARM, CAMERA], 60.0)
        for name in ("reset_faults", "sim/set_fault", "sim/reset_command_stats", "sim/command_stats"):
            rospy.wait_for_service(f"{cls.driver}/{name}", 60.0)
        cls.reset_faults = rospy.ServiceProxy(f"{cls.driver}/reset_faults", Trigger)
        cls.set_fault = rospy.ServiceProxy(f"{cls.driver}/sim/set_fault", SetSimFault)
        cls.reset_stats = rospy.ServiceProxy(f"{cls.driver}/sim/reset_command_stats", Trigger)
        cls.command_stats = rospy.ServiceProxy(f"{cls.driver}/sim/command_stats", SimCommandStats)
        if not u.wait_for(lambda: cls.js.positions(cls.arm_joints + [CAMERA_JOINT]) is not None, 30.0):
            raise AssertionError("no /joint_states with the arm's and the camera's joints")

    # -- helpers ----------------------------------------------------------------------------------
    def arm_goal(self, amplitude: float, duration: float, sign: float = 1.0):
        start = self.js.positions(self.arm_joints)
        self.assertIsNotNone(start)
        delta = excursion(start, [sign * amplitude] * len(self.arm_joints),
                          [self.limits[j] for j in self.arm_joints], margin=0.2)
        return u.ramp_goal(self.arm_joints, start, delta, duration)

    def camera_goal(self, target: float, duration: float):
        start = self.js.positions([CAMERA_JOINT])
        self.assertIsNotNone(start)
        return u.ramp_goal([CAMERA_JOINT], start, [target - start[0]], duration)

    def run_goal(self, client, goal, timeout: float):
        u.send_goal(client, goal)
        self.assertTrue(client.wait_for_result(rospy.Duration(timeout)), "no result in time")
        return client.get_state(), client.get_result()

    # -- tests --------------------------------------------------------------------------------------
    def test_1_the_step_cap_reaches_the_wire_of_the_combined_arm(self):
        self.assertTrue(self.reset_stats().success)
        for sign in (1.0, -1.0):
            state, result = self.run_goal(self.arm, self.arm_goal(0.35, 1.0, sign), 30.0)
            self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)
        state, result = self.run_goal(self.camera, self.camera_goal(0.3, 1.0), 30.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)
        stats = self.command_stats(unit="")
        self.assertTrue(stats.success, stats.message)
        steps = dict(zip(stats.units, stats.max_step))
        bounds = motor_step_bounds(self.urdf, 1.0 / self.control_rate)
        quantum = 25.0 / 65535 * 2  # MIT p_des resolution (p range 25 rad on 16 bits), twice
        checked = 0
        for motor, step in steps.items():
            if motor not in bounds or step != step:   # NaN: no command frame yet
                continue
            self.assertLessEqual(step, bounds[motor] + quantum,
                                 f"motor {motor}: command step {step:.4f} rad > bound {bounds[motor]:.4f}")
            checked += 1
        self.assertGreaterEqual(checked, len(self.arm_joints), f"steps {steps}, bounds {bounds}")
        rospy.loginfo("largest command steps: %s (bounds %s)", steps, bounds)

    def test_2_a_fault_is_reset_and_every_controller_restarts(self):
        self.assertTrue(self.set_fault(unit="elbow_motor", fault="silent", enable=True, value=0.0).success)
        try:
            self.arm.send_goal(self.arm_goal(0.3, 3.0))
            self.assertTrue(self.arm.wait_for_result(rospy.Duration(20.0)))
            self.assertEqual(self.arm.get_state(), GoalStatus.ABORTED)
            self.assertIn("elbow_joint", self.arm.get_result().error_string)
            answer = self.reset_faults()
            self.assertFalse(answer.success, answer.message)
            self.assertIn("elbow_motor", answer.message)
            self.assertTrue(u.wait_for(
                lambda: (self.diag.status(": faults") or {}).get("level") == "2", 10.0),
                self.diag.status(": faults"))
            state, result = self.run_goal(self.arm, self.arm_goal(0.2, 1.0), 10.0)
            self.assertEqual(result.error_code, FollowJointTrajectoryResult.INVALID_GOAL)
            self.assertIn("elbow_joint", result.error_string)
        finally:
            off = self.set_fault(unit="elbow_motor", fault="silent", enable=False, value=0.0)
            self.assertTrue(off.success, off.message)
        # a camera goal in flight: the recovery restarts every running controller, the camera's too
        self.camera.send_goal(self.camera_goal(-0.4, 8.0))
        time.sleep(1.0)
        self.assertEqual(self.camera.get_state(), GoalStatus.ACTIVE)
        answer = self.reset_faults()
        self.assertTrue(answer.success, answer.message)
        self.assertIn("elbow_motor", answer.message)
        self.assertTrue(self.camera.wait_for_result(rospy.Duration(10.0)), "the camera goal did not end")
        self.assertIn(self.camera.get_state(), (GoalStatus.PREEMPTED, GoalStatus.ABORTED),
                      self.camera.get_result())
        self.assertIn("controller stopped", self.camera.get_goal_status_text() + " " +
                      (self.camera.get_result().error_string or ""))
        self.assertTrue(u.wait_for(lambda: (self.diag.status(": faults") or {}).get("level") == "0", 10.0),
                        self.diag.status(": faults"))
        state, result = self.run_goal(self.arm, self.arm_goal(0.3, 1.5), 30.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)
        state, result = self.run_goal(self.camera, self.camera_goal(0.0, 1.0), 30.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)

    def test_3_the_arm_units_and_the_combined_joints_are_on_diagnostics(self):
        self.assertTrue(u.wait_for(lambda: self.diag.status(" elbow_motor") is not None, 10.0))
        motor = self.diag.status(" elbow_motor")
        self.assertEqual(motor.get("elbow_joint interface") is not None, True, motor)
        hw = self.diag.status(": robot_hw")
        self.assertIsNotNone(hw)
        for joint in ("elbow_joint", CAMERA_JOINT):
            self.assertIn(joint, hw, hw)
        self.assertTrue(u.wait_for(lambda: self.diag.status(": simulator") is not None, 10.0))

    def test_99_node_still_running(self):
        self.assertTrue(rosnode.rosnode_ping(self.driver, max_count=1))


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_combined_robot_hw", CombinedRobotHWTest)
