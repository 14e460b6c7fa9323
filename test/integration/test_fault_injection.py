#!/usr/bin/env python3
"""rostest node: every fault switch of the simulated firmware, injected at run time through ROS, and a
controller that raises in ``update()``.

Runs against the simulated arm in either branch (``~use_ros_control``).  For each switch (on
``elbow_motor``, or on the bus ``can0``) while a trajectory moves the arm:

* the goal result: ABORTED / PATH_TOLERANCE_VIOLATED with an error_string naming the joint and the
  cause for the switches that fault a motor; SUCCEEDED for those that must not (a little lateness,
  garbage frames, bus error frames);
* the bus as the simulated firmware saw it (``command_stats``): nothing reaches a faulted motor, the
  other motors keep receiving hold commands;
* ``/diagnostics``: the motor, the ``faults`` status (or the channel status) and their level;
* recovery: ``~reset_faults`` refused while the switch is on, successful once it is off, and a goal
  succeeds afterwards.

The figures (detection time, goal result, diagnostics level, recovery) are logged as ``FIGURE`` lines
and written to ``$ROS_HOME``-independent ``/tmp/rospy_control_fault_figures_<branch>.json``.
"""
from __future__ import annotations

import json
import math
import os
import sys
import time
import unittest

import rosnode
import rospy
import rostest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryResult
from controller_manager_msgs.srv import (
    ListControllers, LoadController, SwitchController, SwitchControllerRequest, UnloadController,
)
from std_srvs.srv import Trigger

from rospy_control.srv import SetSimFault, SimCommandStats

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import driver_test_utils as u  # noqa: E402

from rospy_control.adapter.tools.demo_trajectory import excursion, joint_limits_from_urdf  # noqa: E402

ARM = "arm_controller"
MOTOR, JOINT, CHANNEL = "elbow_motor", "elbow_joint", "can0"
OTHERS = ("shoulder_pan_motor", "shoulder_lift_motor", "wrist_1_motor")
ERROR, WARN, OK = 2, 1, 0
FIGURES: dict = {}


class FaultInjectionTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_fault_injection")
        cls.use_ros_control = bool(rospy.get_param("~use_ros_control"))
        cls.branch = "ros_control" if cls.use_ros_control else "standalone"
        cls.driver = rospy.get_param("~driver_name", "/driver")
        urdf = rospy.get_param("robot_description")
        cls.limits = joint_limits_from_urdf(urdf)
        cls.arm_joints = rospy.get_param(ARM + "/joints")
        cls.js = u.JointStates()
        cls.diag = u.Diagnostics()
        cls.arm = u.client(ARM, 90.0)
        for name in ("reset_faults", "sim/set_fault"):
            rospy.wait_for_service(f"{cls.driver}/{name}", 60.0)
        cls.reset_faults = rospy.ServiceProxy(f"{cls.driver}/reset_faults", Trigger)
        cls.set_fault = rospy.ServiceProxy(f"{cls.driver}/sim/set_fault", SetSimFault)
        cls.stats_srv = cls._stats_service(60.0)
        if not u.wait_for(lambda: cls.js.positions(cls.arm_joints) is not None, 30.0):
            raise AssertionError("no /joint_states with the arm joints")

    @classmethod
    def tearDownClass(cls) -> None:
        path = f"/tmp/rospy_control_fault_figures_{cls.branch}.json"
        try:
            with open(path, "w") as f:
                json.dump(FIGURES, f, indent=1, sort_keys=True)
        except OSError:
            pass

    @classmethod
    def _stats_service(cls, timeout: float) -> rospy.ServiceProxy:
        """The simulator's command record: the driver's own (in-process simulator) or the sim node's."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name in (f"{cls.driver}/sim/command_stats", "/sim/command_stats"):
                try:
                    rospy.wait_for_service(name, 0.5)
                    return rospy.ServiceProxy(name, SimCommandStats)
                except rospy.ROSException:
                    pass
        raise AssertionError("no command_stats service of the simulator")

    # -- helpers ----------------------------------------------------------------------------------
    def setUp(self) -> None:
        # every test starts from a healthy robot at rest
        for unit, fault in ((MOTOR, "silent"), (CHANNEL, "bus_off"), (CHANNEL, "bus_errors")):
            self.set_fault(unit=unit, fault=fault, enable=False, value=0.0)
        answer = self.reset_faults()
        self.assertTrue(answer.success, answer.message)

    def stats(self):
        answer = self.stats_srv(unit="")
        self.assertTrue(answer.success, answer.message)
        motors = {n: dict(frames=f, commands=c, p=p, enabled=e) for n, f, c, p, e in zip(
            answer.units, answer.frames, answer.commands, answer.last_p_des, answer.enabled)}
        return motors, dict(zip(answer.channels, answer.bus_off))

    def goal_from_here(self, amplitude: float, duration: float, sign: float = 1.0):
        """A move from the measured position (put back inside the joint limits: a limp joint may rest
        on its mechanical stop, just outside them)."""
        self.wait_at_rest()
        start = self.js.positions(self.arm_joints)
        self.assertIsNotNone(start)
        start = [min(max(q, self.limits[j][0] + 0.05), self.limits[j][1] - 0.05)
                 for q, j in zip(start, self.arm_joints)]
        delta = excursion(start, [sign * amplitude] * len(self.arm_joints),
                          [self.limits[j] for j in self.arm_joints], margin=0.2)
        return u.ramp_goal(self.arm_joints, start, delta, duration)

    def wait_at_rest(self, timeout: float = 10.0) -> None:
        """Until the arm has been still for 0.3 s (a joint just back from FAULT may still move)."""
        still = []

        def rest() -> bool:
            v = self.js.velocities(self.arm_joints)
            if v is None or max(abs(x) for x in v) > 0.05:
                still.clear()
                return False
            still.append(time.monotonic())
            return still[-1] - still[0] >= 0.3

        u.wait_for(rest, timeout)

    def run_goal(self, goal, timeout: float):
        u.send_goal(self.arm, goal)
        self.assertTrue(self.arm.wait_for_result(rospy.Duration(timeout)), "no result in time")
        return self.arm.get_state(), self.arm.get_result()

    def status(self, suffix: str, newer_than: float, accept=lambda st: True, timeout: float = 15.0):
        """The newest ``/diagnostics`` status named ``*suffix`` received after ``newer_than``
        (monotonic) for which ``accept`` holds; fails after ``timeout``."""
        found = []

        def look() -> bool:
            with self.diag.lock:
                msgs = [m for m, t in zip(self.diag.msgs, self.diag.arrivals) if t > newer_than]
            for msg in reversed(msgs):
                for st in msg.status:
                    if st.name.endswith(suffix) and accept(st):
                        found.append(st)
                        return True
            return False

        self.assertTrue(u.wait_for(look, timeout), f"no fresh '{suffix}' diagnostics status as expected")
        return found[-1]

    def fault_time(self, unit: str, newer_than: float):
        """Wall time of the newest 'fault' event of ``unit`` in the driver's fault log (None if none)."""
        st = self.status(": faults", newer_than)
        best = None
        for kv in st.values:
            parts = kv.key.split()
            if len(parts) == 3 and parts[2] == unit and kv.value.startswith("fault:"):
                h, m, s = parts[1].split(":")
                best = int(h) * 3600 + int(m) * 60 + float(s)
        return best

    @staticmethod
    def seconds_of_day(wall: float) -> float:
        lt = time.localtime(wall)
        return lt.tm_hour * 3600 + lt.tm_min * 60 + lt.tm_sec + (wall % 1.0)

    def assert_frames_stop(self, motors, quiet: float = 1.0):
        """Nothing reaches ``motors`` for ``quiet`` seconds, while the other arm motors are held."""
        before, _ = self.stats()
        time.sleep(quiet)
        after, _ = self.stats()
        for m in motors:
            self.assertEqual(after[m]["frames"], before[m]["frames"], f"{m} was sent frames while faulted")
        held = [m for m in OTHERS if m not in motors]
        for m in held:
            self.assertGreater(after[m]["commands"], before[m]["commands"], f"{m} got no hold command")
            self.assertLess(abs(after[m]["p"] - before[m]["p"]), 1e-3, f"{m} was not held still")
        return before, after

    def figure(self, name: str, **values) -> None:
        FIGURES[name] = values
        rospy.loginfo("FIGURE %s %s: %s", self.branch, name, json.dumps(values, sort_keys=True))

    # -- a switch that faults the motor ------------------------------------------------------------
    def aborted_result(self, t_on: float):
        """The result of the goal that just ended, which must have aborted; if it did not, the
        failure says what the bus thread saw since ``t_on`` (excused cycles, stalls, ...)."""
        result = self.arm.get_result()
        state = self.arm.get_state()
        if state != GoalStatus.ABORTED:
            channel = self.status(f": channel {CHANNEL}", t_on)
            self.fail(f"the goal ended in state {state} ({result.error_string!r}), not ABORTED; "
                      f"channel {CHANNEL}: {channel.message}; "
                      + "; ".join(f"{kv.key}={kv.value}" for kv in channel.values))
        return result

    def channel_figures(self, newer_than: float):
        """``(cycles, excused)`` of the arm's channel from its newest ``/diagnostics`` status received
        after ``newer_than``: bus cycles so far, and of them those not judged against the units (the
        bus thread late, or the simulated firmware starved: ``late_cycles + simulator_stalls``)."""
        st = self.status(f": channel {CHANNEL}", newer_than)
        values = {kv.key: kv.value for kv in st.values}
        return int(values["cycles"]), int(values["late_cycles"]) + int(values.get("simulator_stalls", 0))

    def motor_fault(self, fault: str, value: float, cause: str, limp: bool = True):
        t0 = time.monotonic()
        # 'late' silences the motor only for its delay: after it the delayed replies flow again. If
        # the host did not let the driver judge that window (it excuses the cycles in which its own
        # bus thread ran late or the simulated firmware was starved: a late host is never a hardware
        # fault), the switch is tried again; the channel's figures over the goal say whether a
        # quarter of its cycles or more were excused (a quiet host: about 1 %).
        attempts = 3 if fault == "late" else 1
        for attempt in range(attempts):
            self.arm.send_goal(self.goal_from_here(0.3, 4.0))
            time.sleep(0.5)
            if fault == "late":
                before = self.channel_figures(time.monotonic() - 3.0)
            wall_on, t_on = time.time(), time.monotonic()
            on = self.set_fault(unit=MOTOR, fault=fault, enable=True, value=value)
            self.assertTrue(on.success, on.message)
            self.assertTrue(self.arm.wait_for_result(rospy.Duration(20.0)), "no result")
            if self.arm.get_state() == GoalStatus.ABORTED or attempt == attempts - 1:
                break
            after = self.channel_figures(time.monotonic())
            cycles, excused = after[0] - before[0], after[1] - before[1]
            off = self.set_fault(unit=MOTOR, fault=fault, enable=False, value=0.0)
            self.assertTrue(off.success, off.message)
            # a quiet host excuses about 1 % of the cycles
            self.assertGreater(4 * excused, cycles,
                               f"a {value} s '{fault}' went unnoticed although the driver judged "
                               f"{cycles - excused} of its {cycles} bus cycles meanwhile")
            rospy.logwarn("'%s' %.2f s went unnoticed: the host excused %d of %d bus cycles meanwhile; "
                          "again", fault, value, excused, cycles)
            time.sleep(value + 0.5)
        try:
            # the goal in flight aborts, naming the joint, the motor and the cause
            abort_after = time.monotonic() - t_on
            result = self.aborted_result(t_on)
            self.assertEqual(result.error_code, FollowJointTrajectoryResult.PATH_TOLERANCE_VIOLATED)
            for word in (JOINT, MOTOR, cause):
                self.assertIn(word, result.error_string)
            # the bus: nothing more for the faulted motor (after its one exit-motor-mode frame); the
            # others hold
            time.sleep(0.3)
            self.assert_frames_stop([MOTOR])
            if limp:
                self.assertTrue(u.wait_for(lambda: not self.stats()[0][MOTOR]["enabled"], 5.0),
                                "the motor is still in motor mode (no exit-motor-mode frame reached it)")
            # /diagnostics
            motor = self.status(f": motor {MOTOR}", t_on, lambda st: st.level == ERROR)
            self.assertTrue(motor.message.startswith("FAULT: ") and cause in motor.message, motor.message)
            faults = self.status(": faults", t_on, lambda st: st.level == ERROR)
            self.assertIn(MOTOR, faults.message)
            self.assertIn(cause, faults.message)
            detected = self.fault_time(MOTOR, t_on)
            detection = None if detected is None else (detected - self.seconds_of_day(wall_on)) % 86400.0
            # new goals are refused while the fault lasts; a reset is refused
            state, refused = self.run_goal(self.goal_from_here(0.2, 1.0), 10.0)
            self.assertEqual(refused.error_code, FollowJointTrajectoryResult.INVALID_GOAL)
            self.assertIn(JOINT, refused.error_string)
            answer = self.reset_faults()
            self.assertFalse(answer.success, answer.message)
            self.assertIn(MOTOR, answer.message)
            refused_reset = answer.message
        finally:
            off = self.set_fault(unit=MOTOR, fault=fault, enable=False, value=0.0)
            self.assertTrue(off.success, off.message)
        if fault == "late":
            time.sleep(value + 0.2)  # replies already delayed still come late (a device answers in order)
        self.recover([MOTOR], t_on)
        self.figure(fault, value=value, fault_detected_s=None if detection is None else round(detection, 3),
                    goal_aborted_after_s=round(abort_after, 3), result="ABORTED",
                    error_code=result.error_code, error_string=result.error_string,
                    diagnostics=f"{faults.level} {faults.message}", reset_while_on=refused_reset,
                    recovered="reset_faults success", test_s=round(time.monotonic() - t0, 1))

    def recover(self, motors, t_on: float):
        before, _ = self.stats()
        t_reset = time.monotonic()
        answer = self.reset_faults()
        self.assertTrue(answer.success, answer.message)
        for m in motors:
            self.assertIn(m, answer.message)
        st = self.status(": faults", t_reset, lambda s: s.level == OK)
        self.assertEqual(st.message.split(" (")[0], "no unit in FAULT")
        after, _ = self.stats()
        for m in motors:
            self.assertGreater(after[m]["frames"], before[m]["frames"], f"{m} is not talked to again")
        state, result = self.run_goal(self.goal_from_here(0.25, 1.5), 30.0)
        self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)

    # -- a switch that must not fault anything ------------------------------------------------------
    def harmless(self, unit: str, fault: str, value: float, channel_level: int):
        t0 = time.monotonic()
        on = self.set_fault(unit=unit, fault=fault, enable=True, value=value)
        self.assertTrue(on.success, on.message)
        t_on = time.monotonic()
        try:
            before, _ = self.stats()
            state, result = self.run_goal(self.goal_from_here(0.3, 2.0), 30.0)
            self.assertEqual(state, GoalStatus.SUCCEEDED, result.error_string)
            after, _ = self.stats()
            self.assertGreater(after[MOTOR]["commands"], before[MOTOR]["commands"])
            channel = self.status(f": channel {CHANNEL}", t_on, lambda st: st.level == channel_level)
            faults = self.status(": faults", t_on)
            self.assertEqual(faults.level, OK, faults.message)
        finally:
            off = self.set_fault(unit=unit, fault=fault, enable=False, value=0.0)
            self.assertTrue(off.success, off.message)
        t_off = time.monotonic()
        answer = self.reset_faults()
        self.assertTrue(answer.success, answer.message)
        self.assertIn("nothing to reset", answer.message)
        back = self.status(f": channel {CHANNEL}", t_off + 0.6, lambda st: st.level == OK)
        self.figure(fault if fault != "late" else "late (small)", value=value, fault_detected_s=None,
                    result="SUCCEEDED", error_code=result.error_code,
                    diagnostics=f"channel {channel.level} {channel.message}; faults {faults.level}",
                    after_off=f"channel {back.level} {back.message}", recovered="nothing to reset",
                    test_s=round(time.monotonic() - t0, 1))

    # -- the switches -------------------------------------------------------------------------------
    def test_01_silent(self):
        self.motor_fault("silent", 0.0, "no reply", limp=False)  # a silent firmware ignores the exit frame

    def test_02_late_beyond_fault_timeout(self):
        self.motor_fault("late", 0.5, "no reply")

    def test_03_late_within_fault_timeout_is_no_fault(self):
        self.harmless(MOTOR, "late", 0.02, OK)

    def test_04_wrong_dlc(self):
        self.motor_fault("wrong_dlc", 0.0, "no reply")

    def test_05_garbage_is_counted_not_a_fault(self):
        self.harmless(MOTOR, "garbage", 0.0, WARN)

    def test_06_error_flag(self):
        self.motor_fault("error_flag", 7.0, "error code 0x07")

    def test_07_over_temperature(self):
        self.motor_fault("over_temperature", 120.0, "over-temperature: 120 C")

    def test_08_bus_errors_are_counted_not_a_fault(self):
        self.harmless(CHANNEL, "bus_errors", 0.0, WARN)

    def test_09_bus_off_and_its_recovery(self):
        t0 = time.monotonic()
        motors0, _ = self.stats()
        everyone = sorted(motors0)
        self.arm.send_goal(self.goal_from_here(0.3, 4.0))
        time.sleep(0.5)
        wall_on, t_on = time.time(), time.monotonic()
        on = self.set_fault(unit=CHANNEL, fault="bus_off", enable=True, value=0.0)
        self.assertTrue(on.success, on.message)
        try:
            self.assertTrue(self.arm.wait_for_result(rospy.Duration(20.0)), "no result")
            abort_after = time.monotonic() - t_on
            result = self.aborted_result(t_on)
            self.assertEqual(result.error_code, FollowJointTrajectoryResult.PATH_TOLERANCE_VIOLATED)
            self.assertIn("bus-off", result.error_string)
            self.assertTrue(any(j in result.error_string for j in self.arm_joints), result.error_string)
            # the bus carries nothing: no motor receives a frame
            before, bus = self.stats()
            self.assertTrue(bus[CHANNEL])
            time.sleep(1.0)
            after, _ = self.stats()
            for m in everyone:
                self.assertEqual(after[m]["frames"], before[m]["frames"],
                                 f"{m} received a frame while bus-off")
            # /diagnostics: the channel says BUS-OFF, every motor is in FAULT naming it
            channel = self.status(f": channel {CHANNEL}", t_on, lambda st: st.level == ERROR)
            self.assertTrue(channel.message.startswith("BUS-OFF"), channel.message)
            faults = self.status(": faults", t_on, lambda st: st.level == ERROR)
            for m in everyone:
                self.assertIn(m, faults.message)
            self.assertIn(f"channel '{CHANNEL}' is bus-off", faults.message)
            detected = self.fault_time(MOTOR, t_on)
            detection = None if detected is None else (detected - self.seconds_of_day(wall_on)) % 86400.0
            # a reset fails at once while the bus is off
            t_reset = time.monotonic()
            answer = self.reset_faults()
            reset_took = time.monotonic() - t_reset
            self.assertFalse(answer.success, answer.message)
            self.assertIn("bus-off", answer.message)
            refused_reset = answer.message
        finally:
            off = self.set_fault(unit=CHANNEL, fault="bus_off", enable=False, value=0.0)
            self.assertTrue(off.success, off.message)
        t_off = time.monotonic()
        # the controller restarted: the channel is back, the motors stay in FAULT (each got one
        # exit-motor-mode frame, its safe state) until the reset
        channel_back = self.status(f": channel {CHANNEL}", t_off,
                                   lambda st: not st.message.startswith("BUS-OFF"))
        self.assertTrue(u.wait_for(lambda: all(not self.stats()[0][m]["enabled"] for m in everyone), 10.0),
                        "motors still in motor mode after the bus came back")
        mid, _ = self.stats()
        for m in everyone:
            self.assertLessEqual(mid[m]["frames"] - after[m]["frames"], 1, f"{m}: more than the exit frame")
        faults = self.status(": faults", t_off, lambda st: st.level == ERROR)
        self.recover(everyone, t_off)
        self.figure("bus_off", value=0.0, fault_detected_s=None if detection is None else round(detection, 3),
                    goal_aborted_after_s=round(abort_after, 3), result="ABORTED",
                    error_code=result.error_code, error_string=result.error_string,
                    diagnostics=f"channel {channel.level} {channel.message}", reset_while_on=refused_reset,
                    reset_while_on_took_s=round(reset_took, 3),
                    after_off=f"channel {channel_back.level} {channel_back.message}",
                    recovered="reset_faults success", test_s=round(time.monotonic() - t0, 1))

    # -- a controller that raises in update() ------------------------------------------------------
    def test_10_controller_raising_in_update_is_aborted_and_the_rest_goes_on(self):
        if not self.use_ros_control:
            self.skipTest("the standalone branch has a fixed controller set (no controller_manager services)")
        t0 = time.monotonic()
        cm = "controller_manager/"
        for s in ("load_controller", "switch_controller", "list_controllers", "unload_controller"):
            rospy.wait_for_service(cm + s, 30.0)
        load = rospy.ServiceProxy(cm + "load_controller", LoadController)
        switch = rospy.ServiceProxy(cm + "switch_controller", SwitchController)
        listing = rospy.ServiceProxy(cm + "list_controllers", ListControllers)
        unload = rospy.ServiceProxy(cm + "unload_controller", UnloadController)

        def states():
            return {c.name: c.state for c in listing().controller}

        name = "boom_controller"
        rospy.set_param(name, {"type": "fault_test_controllers:RaisingController", "raise_in_update": True})
        self.assertTrue(load(name).ok)
        try:
            self.arm.send_goal(self.goal_from_here(0.3, 3.0))
            time.sleep(0.3)
            js_before = self.js.count()
            motors_before, _ = self.stats()
            t_on = time.monotonic()
            self.assertTrue(switch(start_controllers=[name], stop_controllers=[],
                                   strictness=SwitchControllerRequest.STRICT, start_asap=False,
                                   timeout=0.0).ok)
            self.assertTrue(u.wait_for(lambda: states().get(name) == "aborted", 10.0), states())
            aborted_after = time.monotonic() - t_on
            # the loop and the other controllers go on: the goal succeeds, /joint_states flow, the
            # motors keep receiving commands
            self.assertTrue(self.arm.wait_for_result(rospy.Duration(30.0)))
            result = self.arm.get_result()
            self.assertEqual(self.arm.get_state(), GoalStatus.SUCCEEDED, result.error_string)
            st = states()
            for other in ("joint_state_controller", ARM):
                self.assertEqual(st.get(other), "running", st)
            self.assertGreater(self.js.count(), js_before + 50)
            motors_after, _ = self.stats()
            for m in (MOTOR,) + OTHERS:
                self.assertGreater(motors_after[m]["commands"], motors_before[m]["commands"] + 50)
            diag = self.status(": controller failures", t_on, lambda s: s.level == ERROR)
            for word in (name, "update()", "RuntimeError", "injected failure"):
                self.assertIn(word, diag.message)
            # nothing is in FAULT: a reset has nothing to do; the controller comes back with a switch
            answer = self.reset_faults()
            self.assertTrue(answer.success, answer.message)
            rospy.set_param(name + "/raise_in_update", False)
            t_fix = time.monotonic()
            self.assertTrue(switch(start_controllers=[name], stop_controllers=[],
                                   strictness=SwitchControllerRequest.STRICT, start_asap=False,
                                   timeout=0.0).ok)
            time.sleep(0.2)
            self.assertEqual(states().get(name), "running")
            back = self.status(": controller failures", t_fix, lambda s: s.level == OK)
        finally:
            switch(start_controllers=[], stop_controllers=[name],
                   strictness=SwitchControllerRequest.BEST_EFFORT, start_asap=False, timeout=0.0)
            unload(name)
            rospy.delete_param(name)
        self.figure("controller raising in update()", aborted_after_s=round(aborted_after, 3),
                    result="SUCCEEDED (arm goal meanwhile)", diagnostics=f"{diag.level} {diag.message}",
                    after_restart=f"{back.level} {back.message}", recovered="switch_controller start",
                    test_s=round(time.monotonic() - t0, 1))

    def test_99_node_still_running(self):
        self.assertTrue(rosnode.rosnode_ping(self.driver, max_count=1))
        self.assertFalse(any(math.isnan(p) for p in self.js.positions(self.arm_joints)))


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_fault_injection", FaultInjectionTest)
