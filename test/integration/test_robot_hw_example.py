#!/usr/bin/env python3
"""rostest node: the driver with a RobotHW that is not on CAN, loaded from parameters.

``bringup.launch robot_hw:=config/simple_robot_hw.yaml`` puts ``robot_hardware: [servos]`` and
``servos/type: rospy_control.examples.simple_robot_hw:SimpleRobotHW`` in the driver's private
namespace; the node must run that RobotHW (no CAN bus, no simulator node) in either branch
(``~use_ros_control``).  Checked as a user would: /joint_states carries the example's joints from its
initial positions, a FollowJointTrajectory client drives the arm, the gripper goal succeeds, and in
the ros_control branch the stock spawner started the controllers and the ``controller_manager`` CLI
stops, spawns and kills controllers (a velocity group controller moves the joints in velocity mode);
in the standalone branch there is no controller manager API.
"""
from __future__ import annotations

import os
import subprocess
import sys
import unittest

import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from controller_manager_msgs.srv import ListControllers
from std_msgs.msg import Float64MultiArray

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

ARM = "arm_controller"
GRIPPER = "gripper_controller"
VELOCITY = "arm_group_velocity_controller"
SCRIPTS = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))


def cli(*args: str) -> str:
    """``rosrun rospy_control controller_manager <args>`` (the stock CLI's output lines)."""
    command = [sys.executable, os.path.join(SCRIPTS, "controller_manager"), "--timeout", "60", *args]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    return done.stdout.decode()


class RobotHWExampleTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_robot_hw_example")
        cls.use_ros_control = bool(rospy.get_param("~use_ros_control"))
        urdf = rospy.get_param("robot_description")
        cls.all_joints = u.actuated_joints(urdf)
        cls.arm_joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 180.0)  # the driver and the spawner start at once on a loaded host
        cls.gripper = u.client(GRIPPER, 60.0)
        if not u.wait_for(lambda: cls.js.positions(cls.arm_joints) is not None, 60.0):
            raise AssertionError("no /joint_states with the arm joints")
        if cls.use_ros_control:  # the action servers exist once loaded; goals need the spawner's start
            rospy.wait_for_service("controller_manager/list_controllers", 60.0)
            lister = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)

            def running():
                states = {c.name: c.state for c in lister().controller}
                return states.get(ARM) == "running" and states.get(GRIPPER) == "running"

            if not u.wait_for(running, 120.0, 0.2):
                raise AssertionError("the spawner did not start arm_controller and gripper_controller")

    def run_goal(self, client, joints, target, duration):
        start = u.wait_fresh(self.js, rospy.get_time())
        self.assertIsNotNone(start, "no fresh /joint_states")
        m = dict(zip(start.name, start.position))
        start_pos = [m[j] for j in joints]
        goal = u.ramp_goal(joints, start_pos, [t - s for s, t in zip(start_pos, target)], duration)
        client.send_goal(goal)
        self.assertTrue(client.wait_for_result(rospy.Duration(duration + 30.0)), "no result in time")
        return client.get_state(), client.get_result()

    def test_01_the_example_robot_hw_runs_not_the_can_robot(self):
        where = rospy.get_param("~robot_hardware_param", "/driver/robot_hardware")
        self.assertEqual(rospy.get_param(where), ["servos"])
        msg = u.wait_fresh(self.js, rospy.get_time())
        self.assertIsNotNone(msg)
        self.assertEqual(set(self.all_joints) - set(msg.name), set(), "joints missing in /joint_states")
        stamps = [m.header.stamp.to_sec() for m in self.js.snapshot()[-50:]]
        self.assertTrue(all(b > a for a, b in zip(stamps, stamps[1:])), "stamps not strictly increasing")
        # the driver's diagnostics name the RobotHW it runs, and there is no CAN channel
        self.assertTrue(u.wait_for(lambda: self.diag.status("robot_hw") is not None, 30.0),
                        "no robot_hw status")
        names = [st.name for m in self.diag.snapshot() for st in m.status]
        self.assertFalse([n for n in names if "channel" in n], names)
        hardware = {st.hardware_id for m in self.diag.snapshot() for st in m.status}
        self.assertIn("SimpleRobotHW", hardware)

    def test_02_follow_joint_trajectory_goals_succeed(self):
        target = [0.4, -0.6, 0.9, 0.3, -0.4, 0.5]
        state, result = self.run_goal(self.arm, self.arm_joints, target, 1.5)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)
        reached = self.js.positions(self.arm_joints)
        self.assertLess(u.max_abs_diff(reached, target), 0.02, reached)
        state, result = self.run_goal(self.gripper, ["gripper_finger_joint"], [0.03], 1.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)

    def test_03_stock_tools(self):
        if not self.use_ros_control:
            self.assertNotIn("/controller_manager/list_controllers",
                             [s for s, _ in rospy.get_master().getSystemState()[2][2]])
            return
        out = cli("list")
        # started by the launch's spawner
        self.assertRegex(out, r"'arm_controller' - '.*PositionJointInterface.*' \( running \)", out)
        self.assertRegex(out, r"'gripper_controller' - '.*' \( running \)", out)
        self.assertIn("Stopped ['arm_controller'] successfully", cli("stop", ARM))
        out = cli("spawn", VELOCITY)
        self.assertIn(f"Started ['{VELOCITY}'] successfully", out)
        start = self.js.positions(self.arm_joints)
        pub = rospy.Publisher(VELOCITY + "/command", Float64MultiArray, queue_size=1, latch=True)
        pub.publish(Float64MultiArray(data=[-0.4, 0.0, 0.0, 0.0, 0.0, 0.0]))
        self.assertTrue(u.wait_for(lambda: self.js.positions(self.arm_joints)[0] < start[0] - 0.2, 30.0),
                        "the velocity command did not move shoulder_pan_joint")
        out = cli("kill", VELOCITY)
        self.assertIn(f"Stopped ['{VELOCITY}'] successfully", out)
        pub.unregister()
        # stopped: the joint holds
        held = u.wait_fresh(self.js, rospy.get_time() + 0.2)
        later = u.wait_fresh(self.js, held.header.stamp.to_sec() + 0.5)
        self.assertLess(u.max_abs_diff(list(held.position), list(later.position)), 1e-3)
        self.assertIn("Started ['arm_controller'] successfully", cli("start", ARM))
        state, result = self.run_goal(self.arm, self.arm_joints, [0.0, -0.3, 0.6, 0.0, 0.0, 0.0], 1.5)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "robot_hw_example", RobotHWExampleTest)
