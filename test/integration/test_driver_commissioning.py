#!/usr/bin/env python3
"""rostest node: commissioning from ROS -- joints read a whole motor turn off at start-up, the
actuators' telemetry, and gains changed at run time.

The driver runs the simulated arm with two motors switched on a turn away from where they were
switched off (``arm_hardware_turn_off.xml``), in either branch (``~use_ros_control``):

* ``elbow_joint`` (a belt of 2: a motor turn is half a joint turn, so two readings a turn away lie
  inside its limits) is not started: its motor reports a FAULT naming the joint, the reading, the
  limits and both candidate ``zero_offset`` values; goals that need it are rejected naming it;
  ``~reset_faults`` checks it again and says it is still refused;
* ``shoulder_lift_joint`` (``wrap="auto"``, a travel shorter than a turn) starts from the one reading
  inside its limits, and ``/diagnostics`` says so;
* the rest of the robot runs (a gripper goal succeeds);
* ``~telemetry`` (``rospy_control/ActuatorTelemetry``) carries every actuator's temperature, mode,
  fault and gains; ``~set_gains`` changes a gain within the frame's range, refuses one outside it and
  never saves unasked (these MIT motors keep none in flash).
"""
from __future__ import annotations

import os
import sys
import unittest

import genpy
import rosnode
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryGoal, FollowJointTrajectoryResult
from std_srvs.srv import Trigger

from rospy_control.msg import ActuatorTelemetry
from rospy_control.srv import SetGains
from trajectory_msgs.msg import JointTrajectoryPoint

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ARM = "arm_controller"
GRIPPER = "gripper_controller"


class DriverCommissioningTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_driver_commissioning")
        cls.driver = rospy.get_param("~driver_name", "/driver")
        cls.arm_joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 90.0)
        cls.gripper = u.client(GRIPPER, 30.0)
        rospy.wait_for_service(f"{cls.driver}/reset_faults", 60.0)
        cls.reset_faults = rospy.ServiceProxy(f"{cls.driver}/reset_faults", Trigger)
        cls.telemetry = u.Recorder(f"{cls.driver}/telemetry", ActuatorTelemetry, keep=20)
        rospy.wait_for_service(f"{cls.driver}/set_gains", 30.0)
        cls.set_gains = rospy.ServiceProxy(f"{cls.driver}/set_gains", SetGains)
        if not u.wait_for(lambda: cls.js.positions(cls.arm_joints) is not None, 30.0):
            raise AssertionError("no /joint_states with the arm joints")
        if rospy.get_param("~use_ros_control"):
            # the action servers answer before the spawner has started their controllers
            from controller_manager_msgs.srv import ListControllers
            rospy.wait_for_service("controller_manager/list_controllers", 30.0)
            lc = rospy.ServiceProxy("controller_manager/list_controllers", ListControllers)
            if not u.wait_for(lambda: all({c.name: c.state for c in lc().controller}.get(n) == "running"
                                          for n in (ARM, GRIPPER)), 30.0):
                raise AssertionError("the spawner did not start arm_controller and gripper_controller")

    def run_goal(self, client, goal, timeout):
        u.send_goal(client, goal)
        self.assertTrue(client.wait_for_result(rospy.Duration(timeout)), "no result in time")
        return client.get_state(), client.get_result()

    def elbow_fault(self):
        st = self.diag.status("motor elbow_motor") or {}
        return st.get("message", "") if st.get("level") == "2" else ""

    def test_00_test_data_differs_from_the_shipped_arm_only_by_the_turns(self):
        with open(os.path.join(HERE, "arm_hardware_turn_off.xml")) as f:
            test = f.read()
        with open(os.path.join(HERE, "..", "..", "config", "arm_hardware.xml")) as f:
            shipped = f.read()
        body = test[test.index("<hardware"):]
        for change in (' wrap="auto"', ' turn_offset="-1"', ' turn_offset="1"'):
            self.assertIn(change, body)
            body = body.replace(change, "", 1)
        self.assertEqual(body, shipped[shipped.index("<hardware"):])

    def test_01_the_joint_a_turn_off_is_refused_naming_the_reading_the_limits_and_the_fixes(self):
        self.assertTrue(u.wait_for(lambda: self.elbow_fault() != "", 30.0), "elbow_motor reported no fault")
        message = self.elbow_fault()
        for words in ("joint 'elbow_joint' reads", "outside its position limits [-2.5000, 2.5000]",
                      "turn(s) of motor 'elbow_motor'", 'zero_offset="', '<unit name="elbow_motor">',
                      "cannot choose", "~reset_faults"):
            self.assertIn(words, message)
        faults = self.diag.status(": faults") or {}
        self.assertEqual(faults.get("level"), "2")
        self.assertIn("elbow_motor", faults.get("message", ""))

    def test_02_wrap_auto_starts_the_other_joint_from_its_reading_in_limits(self):
        def shoulder_ok():
            p = self.js.positions(["shoulder_lift_joint"])
            return p is not None and -2.05 <= p[0] <= 2.05
        self.assertTrue(u.wait_for(shoulder_ok, 20.0), self.js.positions(["shoulder_lift_joint"]))
        self.assertTrue(u.wait_for(
            lambda: 'wrap="auto"' in (self.diag.status("motor shoulder_lift_motor") or {}).get(
                "shoulder_lift_joint start-up check", ""), 20.0))
        st = self.diag.status("motor shoulder_lift_motor")
        self.assertEqual(st["level"], "0", st["message"])
        self.assertIn("turn(s) of motor 'shoulder_lift_motor' applied",
                      st["shoulder_lift_joint start-up check"])

    def test_03_goals_that_need_the_refused_joint_are_rejected_and_the_rest_runs(self):
        start = self.js.positions(self.arm_joints)
        goal = u.ramp_goal(self.arm_joints, start, [0.0] * len(self.arm_joints), 1.0)
        state, result = self.run_goal(self.arm, goal, 10.0)
        self.assertEqual(result.error_code, FollowJointTrajectoryResult.INVALID_GOAL, result.error_string)
        self.assertIn("elbow_joint", result.error_string)
        finger = self.js.positions(["gripper_finger_joint"])[0]
        gripper = FollowJointTrajectoryGoal()
        gripper.trajectory.joint_names = ["gripper_finger_joint"]
        gripper.trajectory.points = [JointTrajectoryPoint(positions=[0.03 if finger < 0.02 else 0.01],
                                                          time_from_start=genpy.Duration(1.0))]
        state, result = self.run_goal(self.gripper, gripper, 20.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)

    def test_04_a_reset_checks_again_and_says_the_joint_is_still_refused(self):
        answer = self.reset_faults()
        self.assertFalse(answer.success, answer.message)
        self.assertIn("elbow_motor", answer.message)
        self.assertIn("elbow_joint", answer.message)
        self.assertTrue(u.wait_for(lambda: self.elbow_fault() != "", 10.0))

    def latest(self):
        msgs = self.telemetry.snapshot()
        return msgs[-1] if msgs else None

    def test_05_telemetry_carries_every_actuator(self):
        self.assertTrue(u.wait_for(lambda: self.latest() is not None, 10.0), "no ~telemetry")

        def elbow_faulted():
            msg = self.latest()
            names = list(msg.name)
            return "elbow_motor" in names and msg.fault[names.index("elbow_motor")]
        # The reset of the test before clears the fault for the moment of its check: a message taken
        # in that moment may still be in flight, so the fault must show in the messages that follow.
        self.assertTrue(u.wait_for(elbow_faulted, 5.0), "elbow_motor's refusal not in ~telemetry")
        msg = self.latest()
        row = {n: i for i, n in enumerate(msg.name)}
        for name in ("shoulder_pan_motor", "shoulder_lift_motor", "elbow_motor", "gripper_motor"):
            self.assertIn(name, row)
        for field in ("temperature", "bus_voltage", "current", "effort", "mode", "error_code", "fault",
                      "position_kp"):
            self.assertEqual(len(getattr(msg, field)), len(msg.name), field)
        pan = row["shoulder_pan_motor"]
        self.assertTrue(20.0 < msg.temperature[pan] < 60.0, msg.temperature[pan])   # DLC 8 replies
        self.assertEqual(msg.mode[pan], "POSITION")
        self.assertIn("elbow_joint", msg.fault_reason[row["elbow_motor"]])

    def test_06_a_gain_changes_at_run_time_within_its_range_and_is_never_saved_unasked(self):
        nan = float("nan")
        answer = self.set_gains(unit="wrist_1_motor", position_kp=45.0, position_kd=nan, velocity_kd=nan,
                                save=False)
        self.assertTrue(answer.success, answer.message)

        def kp():
            msg = self.latest()
            return msg.position_kp[list(msg.name).index("wrist_1_motor")] if msg else None
        self.assertTrue(u.wait_for(lambda: kp() == 45.0, 5.0), kp())
        answer = self.set_gains(unit="wrist_1_motor", position_kp=900.0, position_kd=nan, velocity_kd=nan,
                                save=False)
        self.assertFalse(answer.success)
        self.assertIn("position_kp", answer.message)
        answer = self.set_gains(unit="wrist_1_motor", position_kp=40.0, position_kd=nan, velocity_kd=nan,
                                save=True)
        self.assertFalse(answer.success)
        self.assertIn("flash", answer.message)
        rospy.sleep(0.3)
        self.assertEqual(kp(), 45.0)

    def test_99_node_still_running(self):
        self.assertTrue(rosnode.rosnode_ping(self.driver, max_count=1))


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_driver_commissioning", DriverCommissioningTest)
