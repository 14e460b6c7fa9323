#!/usr/bin/env python3
"""rostest node: a noisy host never faults a healthy motor; a real fault is reported and cleared from ROS.

Runs against the simulated arm in either branch (``~use_ros_control``):

* **Host stalls**: the driver process is frozen (SIGSTOP ... SIGCONT) for 150-400 ms, ten times,
  while trajectories run -- as a laptop's scheduler does to it.  No motor may fault (the simulated
  firmware runs in its own node, as real firmware does: the motors keep holding their last command
  while the driver is frozen; with ``sim_process:=false`` it freezes with the driver), every goal sent after
  the last freeze succeeds, and no position step between two consecutive command frames a motor
  received exceeds what the joint's URDF velocity limit allows over two control periods (the
  simulated firmware records the steps; ``/diagnostics`` reports them).
* **A real fault, cleared from ROS**: a motor silenced through ``~sim/set_fault`` goes to FAULT, the
  goal in flight aborts naming the joint, ``~reset_faults`` is refused (success false, naming the
  motor) while it stays silent, and succeeds once it answers again; then a goal succeeds.
"""
from __future__ import annotations

import os
import random
import signal
import sys
import threading
import time
import unittest
import xml.etree.ElementTree as ET
import xmlrpc.client

import rosgraph
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

ARM = "arm_controller"


def motor_step_bounds(urdf: str, period: float):
    """``{actuator: largest allowed command step}`` (motor side, rad): URDF velocity limit x 2 control
    periods through the transmission (sum over the joints of a coupled transmission)."""
    root = ET.fromstring(urdf)
    vmax = {}
    for j in root.findall("joint"):
        lim = j.find("limit")
        if lim is not None and lim.get("velocity"):
            vmax[j.get("name")] = float(lim.get("velocity"))
    bounds = {}
    for tr in root.findall("transmission"):
        joint_terms = []
        for j in tr.findall("joint"):
            red = j.find("mechanicalReduction")
            reduction = abs(float(red.text)) if red is not None else 1.0
            joint_terms.append(vmax.get(j.get("name"), 0.0) * reduction)
        for a in tr.findall("actuator"):
            red = a.find("mechanicalReduction")
            ar = abs(float(red.text)) if red is not None else 1.0
            bounds[a.get("name")] = ar * sum(joint_terms) * 2.0 * period
    return bounds


class DriverFaultsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_driver_faults")
        cls.driver = rospy.get_param("~driver_name", "/driver")
        cls.control_rate = float(rospy.get_param("~control_rate", 200.0))
        urdf = rospy.get_param("robot_description")
        cls.urdf = urdf
        cls.limits = joint_limits_from_urdf(urdf)
        cls.arm_joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 90.0)
        for name in ("reset_faults", "sim/set_fault", "sim/reset_command_stats"):
            rospy.wait_for_service(f"{cls.driver}/{name}", 60.0)
        cls.reset_faults = rospy.ServiceProxy(f"{cls.driver}/reset_faults", Trigger)
        cls.set_fault = rospy.ServiceProxy(f"{cls.driver}/sim/set_fault", SetSimFault)
        cls.reset_stats = rospy.ServiceProxy(f"{cls.driver}/sim/reset_command_stats", Trigger)
        if not u.wait_for(lambda: cls.js.positions(cls.arm_joints) is not None, 30.0):
            raise AssertionError("no /joint_states with the arm joints")
        master = rosgraph.Master(rospy.get_name())
        api = rosnode.get_api_uri(master, cls.driver)
        code, _, pid = xmlrpc.client.ServerProxy(api).getPid(rospy.get_name())
        if code != 1:
            raise AssertionError(f"cannot get the pid of {cls.driver}")
        cls.pid = int(pid)

    # -- helpers ----------------------------------------------------------------------------------
    def goal_from_here(self, amplitude: float, duration: float, sign: float = 1.0):
        start = self.js.positions(self.arm_joints)
        self.assertIsNotNone(start)
        delta = excursion(start, [sign * amplitude] * len(self.arm_joints),
                          [self.limits[j] for j in self.arm_joints], margin=0.2)
        return u.ramp_goal(self.arm_joints, start, delta, duration)

    def run_goal(self, goal, timeout: float):
        u.send_goal(self.arm, goal)
        self.assertTrue(self.arm.wait_for_result(rospy.Duration(timeout)), "no result in time")
        return self.arm.get_state(), self.arm.get_result()

    def faults_status(self, newer_than: float = 0.0):
        """The driver's ``faults`` diagnostics status from a message received after ``newer_than``."""
        def fresh():
            with self.diag.lock:
                return [m for m, t in zip(self.diag.msgs, self.diag.arrivals) if t > newer_than]
        self.assertTrue(u.wait_for(
            lambda: any(st.name.endswith(": faults") for m in fresh() for st in m.status), 10.0),
            "no fresh 'faults' diagnostics status")
        for msg in reversed(fresh()):
            for st in msg.status:
                if st.name.endswith(": faults"):
                    return st
        return None

    def sim_steps(self, newer_than: float):
        st = None
        end = time.monotonic() + 10.0
        while st is None and time.monotonic() < end:
            with self.diag.lock:
                msgs = [m for m, t in zip(self.diag.msgs, self.diag.arrivals) if t > newer_than]
            for msg in msgs:
                for s in msg.status:
                    if s.name.endswith(": simulator"):
                        st = s
            time.sleep(0.05)
        self.assertIsNotNone(st, "no fresh 'simulator' diagnostics status")
        return {kv.key[:-len(" max command step (rad)")]: float(kv.value) for kv in st.values
                if kv.key.endswith(" max command step (rad)")}

    # -- host stalls ------------------------------------------------------------------------------
    def test_01_host_freezes_fault_nothing_and_move_nothing_abruptly(self):
        self.assertTrue(self.reset_stats().success)
        t_start = time.monotonic()
        results = []
        stop = threading.Event()

        def drive():
            sign = 1.0
            while not stop.is_set():
                state, result = self.run_goal(self.goal_from_here(0.35, 1.5, sign), 30.0)
                results.append((time.monotonic(), state, result.error_code, result.error_string))
                sign = -sign

        mover = threading.Thread(target=drive, daemon=True)
        mover.start()
        rng = random.Random(10)
        freezes = []
        try:
            time.sleep(0.5)
            for _ in range(10):
                length = rng.uniform(0.15, 0.40)
                os.kill(self.pid, signal.SIGSTOP)
                try:
                    time.sleep(length)
                finally:
                    os.kill(self.pid, signal.SIGCONT)
                freezes.append(length)
                time.sleep(rng.uniform(0.3, 0.9))
        finally:
            last_freeze = time.monotonic()
            stop.set()
        mover.join(60.0)
        self.assertFalse(mover.is_alive(), "the goal sender did not finish")
        rospy.loginfo("freezes (s): %s; goals during them: %s", ", ".join(f"{f:.3f}" for f in freezes),
                      [(s, c, e)
                       for _, s, c, e in results])
        # every goal sent after the last freeze succeeds
        for sign in (1.0, -1.0):
            state, result = self.run_goal(self.goal_from_here(0.3, 1.5, sign), 30.0)
            self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)
            self.assertEqual(result.error_code, FollowJointTrajectoryResult.SUCCESSFUL)
        # no motor fault, not even one cleared meanwhile
        st = self.faults_status(newer_than=time.monotonic())
        self.assertEqual(st.level, 0, st.message)
        events = [kv for kv in st.values if kv.key.startswith("#")]
        self.assertFalse([kv for kv in events if kv.value.startswith("fault")],
                         f"motor faults during host freezes: {events}")
        # no command step beyond the velocity limit over 2 control periods
        bounds = motor_step_bounds(self.urdf, 1.0 / self.control_rate)
        steps = self.sim_steps(newer_than=last_freeze)
        self.assertTrue(steps, "the simulator reported no command statistics")
        quantum = 25.0 / 65535 * 2  # MIT p_des resolution (p range 25 rad on 16 bits), twice
        for motor, step in steps.items():
            if motor not in bounds:
                continue
            self.assertLessEqual(
                step, bounds[motor] + quantum,
                f"motor {motor}: command step {step:.4f} rad > bound {bounds[motor]:.4f} rad")
        rospy.loginfo("largest command steps: %s (bounds %s); run took %.1f s", steps, bounds,
                      time.monotonic() - t_start)
        loop = self.diag.status(": control loop")
        self.assertIsNotNone(loop)
        rospy.loginfo("control loop after the freezes: stalls %s, longest %s ms, delay %s ms",
                      loop.get("host stalls (>= 20 ms)"), loop.get("longest host stall (ms)"),
                      loop.get("trajectory delay (ms)"))
        self.assertGreaterEqual(int(loop["host stalls (>= 20 ms)"]), 1,
                                "the freezes were not measured as stalls")

    # -- a real fault -----------------------------------------------------------------------------
    def test_02_silent_motor_faults_and_is_reset_from_ros(self):
        self.assertTrue(self.set_fault(unit="elbow_motor", fault="silent", enable=True, value=0.0).success)
        try:
            # the goal in flight aborts, naming the joint
            goal = self.goal_from_here(0.3, 3.0)
            self.arm.send_goal(goal)
            self.assertTrue(self.arm.wait_for_result(rospy.Duration(20.0)))
            self.assertEqual(self.arm.get_state(), GoalStatus.ABORTED)
            self.assertIn("elbow_joint", self.arm.get_result().error_string)
            # while silent: reset refused, naming the motor; the fault is on /diagnostics
            answer = self.reset_faults()
            self.assertFalse(answer.success, answer.message)
            self.assertIn("elbow_motor", answer.message)
            st = self.faults_status(newer_than=time.monotonic())
            self.assertEqual(st.level, 2)
            self.assertIn("elbow_motor", st.message)
            # new goals are refused while the fault lasts
            state, result = self.run_goal(self.goal_from_here(0.2, 1.0), 10.0)
            self.assertEqual(result.error_code, FollowJointTrajectoryResult.INVALID_GOAL)
            self.assertIn("elbow_joint", result.error_string)
        finally:
            off = self.set_fault(unit="elbow_motor", fault="silent", enable=False, value=0.0)
            self.assertTrue(off.success)
        answer = self.reset_faults()
        self.assertTrue(answer.success, answer.message)
        self.assertIn("elbow_motor", answer.message)
        # the log on /diagnostics has the fault, the reset and the recovery
        st = self.faults_status(newer_than=time.monotonic())
        self.assertEqual(st.level, 0, st.message)
        kinds = " | ".join(kv.value for kv in st.values if kv.key.startswith("#") and "elbow_motor" in kv.key)
        for kind in ("fault:", "reset_requested:", "recovered:"):
            self.assertIn(kind, kinds)
        # the controller holds and accepts goals again, right after the reply
        state, result = self.run_goal(self.goal_from_here(0.3, 1.5), 30.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)

    def test_03_reset_without_faults_succeeds(self):
        answer = self.reset_faults()
        self.assertTrue(answer.success, answer.message)

    def test_04_bad_sim_request_is_answered_not_raised(self):
        answer = self.set_fault(unit="no_such_motor", fault="silent", enable=True, value=0.0)
        self.assertFalse(answer.success)
        self.assertIn("no_such_motor", answer.message)
        answer = self.set_fault(unit="elbow_motor", fault="melted", enable=True, value=0.0)
        self.assertFalse(answer.success)
        self.assertIn("melted", answer.message)

    def test_99_node_still_running(self):
        self.assertTrue(rosnode.rosnode_ping(self.driver, max_count=1))


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_driver_faults", DriverFaultsTest)
