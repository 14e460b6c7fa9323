#!/usr/bin/env python3
"""rostest node: a RobotHW that is not ours (``user_robot_hw/pan_tilt_hw``), loaded by the driver from
parameters, driven by a FollowJointTrajectory client, and in the ros_control branch by the spawner
(which started ``head_controller``) and the ``controller_manager`` CLI."""
from __future__ import annotations

import os
import subprocess
import sys
import unittest

import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from controller_manager_msgs.srv import ListControllers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

JOINTS = ["pan", "tilt"]
SCRIPTS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))


def cli(*args: str) -> str:
    command = [sys.executable, os.path.join(SCRIPTS, "controller_manager"), "--timeout", "60", *args]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return done.stdout.decode()


class UserRobotHWTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_user_robot_hw")
        cls.use_ros_control = bool(rospy.get_param("~use_ros_control"))
        cls.js = u.JointStates()
        cls.head = u.client("head_controller", 180.0)
        if not u.wait_for(lambda: cls.js.positions(JOINTS) is not None, 60.0):
            raise AssertionError("no /joint_states with pan and tilt")
        if cls.use_ros_control:  # the action server exists once loaded; goals need the spawner's start
            rospy.wait_for_service("controller_manager/list_controllers", 60.0)
            lister = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)
            if not u.wait_for(lambda: any(c.name == "head_controller" and c.state == "running"
                                          for c in lister().controller), 120.0, 0.2):
                raise AssertionError("the spawner did not start head_controller")

    def goal(self, target):
        start = self.js.positions(JOINTS)
        self.head.send_goal(u.ramp_goal(JOINTS, start, [t - s for s, t in zip(start, target)], 1.0))
        self.assertTrue(self.head.wait_for_result(rospy.Duration(40.0)))
        return self.head.get_state()

    def test_1_a_goal_moves_the_users_robot(self):
        self.assertEqual(self.goal([0.5, -0.3]), GoalStatus.SUCCEEDED)
        reached = u.wait_for(lambda: u.max_abs_diff(self.js.positions(JOINTS), [0.5, -0.3]) < 0.01, 10.0)
        self.assertTrue(reached, self.js.positions(JOINTS))

    def test_2_stock_tools(self):
        if not self.use_ros_control:
            return
        self.assertRegex(cli("list"), r"'head_controller' - '.*PositionJointInterface.*' \( running \)")
        self.assertIn("Stopped ['head_controller'] successfully", cli("stop", "head_controller"))
        self.assertIn("Started ['head_controller'] successfully", cli("start", "head_controller"))
        self.assertEqual(self.goal([-0.2, 0.4]), GoalStatus.SUCCEEDED)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "user_robot_hw", UserRobotHWTest)
