#!/usr/bin/env python3
"""rostest node: holding accuracy under gravity, in either branch (``~use_ros_control``).

The simulated arm's motors feel the static gravity torque of the URDF's links at the current pose, and
the driver feeds the same model's torque forward (``<gravity_compensation>`` in
config/arm_hardware.xml).  The arm reaches three poses, the outstretched one included (the shoulder
then carries about 14 N m), each goal with ``goal_tolerance`` 0.005 rad per joint: every goal must
SUCCEED and the error measured on /joint_states once the arm is still must be <= 0.003 rad per joint.
"""
from __future__ import annotations

import math
import os
import sys
import unittest

import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import JointTolerance
from controller_manager_msgs.srv import ListControllers

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

ARM = "arm_controller"
GOAL_TOLERANCE = 0.005
FINAL_ERROR = 0.003
#: shoulder_pan, shoulder_lift, elbow, wrist_1, wrist_2, wrist_3
POSES = {
    "outstretched": [0.0, math.pi / 2, 0.0, 0.0, 0.0, 0.0],
    "reaching down": [0.6, -0.9, 1.3, -0.7, 0.4, 0.3],
    "folded forward": [-0.7, 1.0, -1.6, 1.1, -0.5, -0.4],
}


class DriverGravityTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_driver_gravity")
        cls.use_ros_control = bool(rospy.get_param("~use_ros_control"))
        cls.joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.arm = u.client(ARM, 180.0)  # the driver and the spawner start at once on a loaded host
        if not u.wait_for(lambda: cls.js.positions(cls.joints) is not None, 60.0):
            raise AssertionError("no /joint_states with the arm joints")
        if cls.use_ros_control:  # the spawner starts arm_controller after the action server exists
            rospy.wait_for_service("controller_manager/list_controllers", 120.0)
            lister = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)

            def running() -> bool:
                return any(c.name == ARM and c.state == "running" for c in lister().controller)

            if not u.wait_for(running, 120.0, step=0.2):
                raise AssertionError(f"{ARM} is not running after 120 s")

    def still(self) -> bool:
        v = self.js.velocities(self.joints)
        return v is not None and max(abs(x) for x in v) < 0.005

    def reach(self, name: str) -> None:
        target = POSES[name]
        start = self.js.positions(self.joints)
        delta = [t - s for t, s in zip(target, start)]
        goal = u.ramp_goal(self.joints, start, delta, 3.0)
        goal.goal_tolerance = [JointTolerance(name=j, position=GOAL_TOLERANCE) for j in self.joints]
        goal.goal_time_tolerance = rospy.Duration(1.0)
        self.arm.send_goal(goal)
        self.assertTrue(self.arm.wait_for_result(rospy.Duration(40.0)), f"{name}: no result in time")
        result = self.arm.get_result()
        self.assertEqual(self.arm.get_state(), GoalStatus.SUCCEEDED,
                         f"{name}: goal not SUCCEEDED: error_code {result.error_code if result else '?'}, "
                         f"'{result.error_string if result else ''}'")
        u.wait_for(self.still, 5.0)
        rospy.sleep(0.3)
        final = self.js.positions(self.joints)
        errors = {j: abs(f - t) for j, f, t in zip(self.joints, final, target)}
        rospy.loginfo("gravity test (%s branch), pose '%s': final errors %s",
                      "ros_control" if self.use_ros_control else "standalone", name,
                      ", ".join(f"{j} {e:.4f}" for j, e in errors.items()))
        worst = max(errors, key=lambda j: errors[j])
        self.assertLessEqual(errors[worst], FINAL_ERROR,
                             f"{name}: {worst} ends {errors[worst]:.4f} rad from its target (all: {errors})")

    def test_three_poses_within_0_003_rad(self) -> None:
        for name in POSES:
            self.reach(name)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_driver_gravity", DriverGravityTest)
