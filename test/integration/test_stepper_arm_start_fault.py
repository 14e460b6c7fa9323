#!/usr/bin/env python3
"""rostest node: the stepper arm's board unreachable when the driver starts.

The driver comes up anyway with the arm's joints in fault (``/diagnostics`` says the board is not
reachable, a goal is refused); this node then starts the board program, and the driver connects by
itself: the fault clears and a goal succeeds.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
import unittest

import rospy
import rostest
from actionlib_msgs.msg import GoalStatus

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
ARM = "arm_controller"


class StartFaultTest(unittest.TestCase):

    def test_board_started_later_is_connected_by_itself(self):
        rospy.init_node("test_stepper_arm_start_fault")
        port_file = rospy.get_param("~port_file")
        joints = rospy.get_param(ARM + "/joints")
        js = u.JointStates()
        diag = u.Diagnostics()
        arm = u.client(ARM, 180.0)
        self.assertTrue(u.wait_for(lambda: js.positions(joints) is not None, 60.0))
        rospy.wait_for_service("controller_manager/list_controllers", 60.0)

        def hw():
            return diag.status("robot_hw") or {}
        self.assertTrue(u.wait_for(lambda: hw().get("level") == "2", 30.0), hw())
        self.assertIn("stepper_arm_board", hw().get("message", ""))
        arm.send_goal(u.ramp_goal(joints, js.positions(joints), [0.1] * 6, 1.0))
        self.assertTrue(arm.wait_for_result(rospy.Duration(30.0)))
        self.assertIn(arm.get_state(), (GoalStatus.REJECTED, GoalStatus.ABORTED))

        board = subprocess.Popen([sys.executable, os.path.join(ROOT, "scripts", "trajectory_board"),
                                  "--port", "0", "--port-file", port_file, "--hardware-xml",
                                  os.path.join(ROOT, "config", "stepper_arm_hardware.xml")])
        try:
            self.assertTrue(u.wait_for(lambda: hw().get("connected") == "True" and hw().get("level") == "0",
                                       60.0), hw())
            time.sleep(0.5)
            arm.send_goal(u.ramp_goal(joints, js.positions(joints), [0.1] * 6, 1.0))
            self.assertTrue(arm.wait_for_result(rospy.Duration(30.0)))
            self.assertEqual(arm.get_state(), GoalStatus.SUCCEEDED, arm.get_result())
        finally:
            board.terminate()
            board.wait(10.0)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_stepper_arm_start_fault", StartFaultTest)
