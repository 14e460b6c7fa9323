#!/usr/bin/env python3
"""rostest node: the driver with the simulated quadruped (either branch; run in the driver's namespace).

/joint_states carries the twelve leg joints at the configured rate with strictly increasing stamps;
the IMU topic carries the simulated IMU at rest (gravity on +z, level orientation, no rotation);
each foot's contact topics say "in contact" with a positive normal force while the robot stands;
a MoveIt-shaped goal through legs_controller/follow_joint_trajectory succeeds.
"""
from __future__ import annotations

import math
import os
import sys
import time
import unittest

import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import Imu
from std_msgs.msg import Bool

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

FEET = ["lf_foot_contact", "rf_foot_contact", "lh_foot_contact", "rh_foot_contact"]


class DriverQuadrupedTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_driver_quadruped")
        cls.publish_rate = float(rospy.get_param("~publish_rate", 50.0))
        cls.joints = u.actuated_joints(rospy.get_param("robot_description"))
        cls.js = u.JointStates()
        cls.imu = u.Recorder("imu", Imu, keep=500)
        cls.contact = {f: u.Recorder(f + "/contact", Bool, keep=200) for f in FEET}
        cls.force = {f: u.Recorder(f, WrenchStamped, keep=200) for f in FEET}
        # two drivers, their spawners and two test nodes start at once on a loaded host
        if not u.wait_for(lambda: cls.js.positions(cls.joints) is not None, 120.0, 0.1):
            raise AssertionError("no /joint_states with every joint")

    def test_joint_states(self):
        self.assertEqual(len(self.joints), 12)
        self.js.clear()
        time.sleep(6.0)  # the measurement window
        msgs = self.js.snapshot()
        self.assertGreater(len(msgs), 10)
        for msg in msgs:
            self.assertEqual(set(self.joints) - set(msg.name), set())
        stamps = [m.header.stamp.to_sec() for m in msgs]
        self.assertTrue(all(b > a for a, b in zip(stamps, stamps[1:])), "stamps not strictly increasing")
        # per-second rates, median: a host stall empties one bin and the catch-up fills the next
        rate = u.median_rate(stamps)
        rospy.loginfo("quadruped /joint_states: %.2f Hz (median of 1 s bins; %.2f Hz over the window; "
                      "configured %.1f)", rate, (len(stamps) - 1) / (stamps[-1] - stamps[0]),
                      self.publish_rate)
        self.assertLess(abs(rate - self.publish_rate), 0.05 * self.publish_rate)

    def test_imu_carries_gravity(self):
        self.assertTrue(u.wait_for(lambda: self.imu.count() > 20, 60.0, 0.1), "no IMU messages")
        msgs = self.imu.snapshot()[-20:]
        az = sum(m.linear_acceleration.z for m in msgs) / len(msgs)
        ax = sum(m.linear_acceleration.x for m in msgs) / len(msgs)
        gz = sum(abs(m.angular_velocity.z) for m in msgs) / len(msgs)
        q = msgs[-1].orientation
        self.assertAlmostEqual(az, 9.81, delta=0.3)
        self.assertLess(abs(ax), 0.3)
        self.assertLess(gz, 0.05)
        self.assertAlmostEqual(math.sqrt(q.x ** 2 + q.y ** 2 + q.z ** 2 + q.w ** 2), 1.0, delta=1e-3)
        self.assertGreater(abs(q.w), 0.99, "standing robot should be level")
        self.assertEqual(msgs[-1].header.frame_id, "imu_link")
        stamps = [m.header.stamp.to_sec() for m in msgs]
        self.assertTrue(all(b > a for a, b in zip(stamps, stamps[1:])))

    def test_feet_in_contact_while_standing(self):
        for foot in FEET:
            ready = lambda: self.contact[foot].count() > 5 and self.force[foot].count() > 5  # noqa: E731
            self.assertTrue(u.wait_for(ready, 60.0, 0.1), f"no contact messages for {foot}")
            self.assertTrue(all(m.data for m in self.contact[foot].snapshot()[-5:]), f"{foot} not in contact")
            fz = self.force[foot].latest().wrench.force.z
            self.assertGreater(fz, 5.0, f"{foot} normal force {fz}")

    def test_legs_goal_succeeds(self):
        legs = rospy.get_param("legs_controller/joints")
        client = u.client("legs_controller", 120.0)
        start = self.js.positions(legs)
        delta = [0.0 if n.endswith("haa_joint") else (0.1 if n.endswith("hfe_joint") else -0.1)
                 for n in legs]
        goal = u.ramp_goal(legs, start, delta, 1.5, points=8)
        client.send_goal(goal)
        self.assertTrue(client.wait_for_result(rospy.Duration(40.0)))  # a 1.5 s goal; bounds the wait
        self.assertEqual(client.get_state(), GoalStatus.SUCCEEDED, client.get_result())
        msg = u.wait_fresh(self.js, rospy.get_time())  # not a message already on its way
        self.assertIsNotNone(msg, "no fresh /joint_states")
        positions = dict(zip(msg.name, msg.position))
        final = [positions[j] for j in legs]
        self.assertLess(u.max_abs_diff(final, list(goal.trajectory.points[-1].positions)), 0.03)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_driver_quadruped", DriverQuadrupedTest, sys.argv)
