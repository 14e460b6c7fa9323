#!/usr/bin/env python3
"""rostest node: the driver as a subprocess -- start-up failures and clean shutdown.

* broken hardware XML, broken URDF, bad controller YAML (unknown type, unknown joint): exit code 1
  and exactly one FATAL line naming the file:line or the parameter, no traceback;
* a good start in each branch, then SIGINT: exit code 0, the motors were told to leave motor mode
  (the channel reports its exit-motor-mode frames) and the driver says it shut down cleanly.
"""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import rospkg
import rospy
import rostest
import yaml
from sensor_msgs.msg import JointState

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.normpath(os.path.join(HERE, "..", "..", "scripts", "driver_node"))


class DriverBadConfigTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_driver_bad_config")
        pkg = rospkg.RosPack().get_path("rospy_control")
        cls.xml = os.path.join(pkg, "config", "arm_hardware.xml")
        with open(os.path.join(pkg, "urdf", "arm.urdf")) as f:
            cls.urdf = f.read()
        with open(os.path.join(pkg, "config", "arm_controllers.yaml")) as f:
            cls.controllers = yaml.safe_load(f)
        with open(os.path.join(pkg, "config", "arm_joint_limits.yaml")) as f:
            cls.limits = yaml.safe_load(f)
        cls.tmp = tempfile.mkdtemp(prefix="driver_bad_config_")

    def namespace(self, ns: str, urdf: str = None, controllers: dict = None) -> str:
        rospy.set_param(ns + "/robot_description", self.urdf if urdf is None else urdf)
        for key, value in (self.controllers if controllers is None else controllers).items():
            rospy.set_param(f"{ns}/{key}", value)
        rospy.set_param(ns + "/joint_limits", self.limits["joint_limits"])
        return ns

    def run_driver(self, ns: str, *params: str, timeout: float = 120.0):
        """Run the driver to completion (a start-up failure takes seconds, more on a loaded host;
        ``timeout`` only catches a driver that does not exit)."""
        proc = subprocess.run([sys.executable, DRIVER, f"__ns:={ns}", "__name:=driver"] + list(params),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
        return proc.returncode, proc.stdout.decode(errors="replace")

    def assert_one_fatal(self, code: int, out: str, pattern: str) -> None:
        self.assertEqual(code, 1, out)
        fatal = [line for line in out.splitlines() if "[FATAL]" in line]
        self.assertEqual(len(fatal), 1, out)
        self.assertRegex(fatal[0], pattern)
        self.assertNotIn("Traceback", out)

    # -- start-up failures -------------------------------------------------------------------------
    def test_broken_hardware_xml(self):
        with open(self.xml) as f:
            lines = f.read().splitlines()
        line = next(i for i, text in enumerate(lines, 1) if 'name="elbow_motor"' in text)
        lines[line - 1] = lines[line - 1].replace(' can_id="3"', "")
        path = os.path.join(self.tmp, "broken_arm.xml")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        ns = self.namespace("/bad_xml")
        code, out = self.run_driver(ns, f"_configure:={path}")
        self.assert_one_fatal(code, out, re.escape(f"{path}:{line}:") + ".*can_id")

    def test_broken_xml_syntax_given_as_text(self):
        ns = self.namespace("/bad_xml_text")
        rospy.set_param(ns + "/driver/configure", '<hardware name="x">\n  <channel name="can0"\n</hardware>')
        code, out = self.run_driver(ns)
        self.assert_one_fatal(code, out, r":\d+")

    def test_broken_urdf(self):
        ns = self.namespace("/bad_urdf", urdf="<robot name='x'>\n<joint name='a' type='revolute'>\n</robot>")
        code, out = self.run_driver(ns, f"_configure:={self.xml}")
        self.assert_one_fatal(code, out, r"/bad_urdf/robot_description:\d+")

    def test_unknown_controller_type(self):
        controllers = yaml.safe_load(yaml.safe_dump(self.controllers))
        controllers["arm_controller"]["type"] = "position_controllers/JointTrajectoryControler"
        ns = self.namespace("/bad_type", controllers=controllers)
        code, out = self.run_driver(ns, f"_configure:={self.xml}")
        self.assert_one_fatal(code, out, r"/bad_type/arm_controller/type.*JointTrajectoryControler")

    def test_unknown_joint_in_controller(self):
        controllers = yaml.safe_load(yaml.safe_dump(self.controllers))
        controllers["gripper_controller"]["joints"] = ["gripper_fingers_joint"]
        ns = self.namespace("/bad_joint", controllers=controllers)
        code, out = self.run_driver(ns, f"_configure:={self.xml}", "_use_ros_control:=false")
        self.assert_one_fatal(code, out, r"/bad_joint/gripper_controller/joints.*gripper_fingers_joint")

    def test_missing_configure(self):
        ns = self.namespace("/no_configure")
        code, out = self.run_driver(ns)
        self.assert_one_fatal(code, out, r"~configure")

    # -- clean shutdown ----------------------------------------------------------------------------
    def _start_and_interrupt(self, ns: str, use_ros_control: bool) -> None:
        self.namespace(ns)
        got = []
        sub = rospy.Subscriber(ns + "/joint_states", JointState, lambda m: got.append(m), queue_size=10)
        # The output goes to a file, read at the end: a pipe nobody reads while the driver runs
        # would block the driver once it is full.
        with tempfile.TemporaryFile() as log:
            proc = subprocess.Popen([sys.executable, DRIVER, f"__ns:={ns}", "__name:=driver",
                                     f"_configure:={self.xml}",
                                     f"_use_ros_control:={'true' if use_ros_control else 'false'}"],
                                    stdout=log, stderr=subprocess.STDOUT)
            try:
                end = time.monotonic() + 120.0  # the driver's start-up on a loaded host
                while len(got) < 10 and time.monotonic() < end and proc.poll() is None:
                    time.sleep(0.05)
                self.assertGreaterEqual(len(got), 10, "no /joint_states from the driver")
            finally:
                sub.unregister()
                proc.send_signal(signal.SIGINT)
                try:
                    # roslaunch escalates to SIGTERM after 15 s; more is allowed for a loaded host
                    proc.wait(timeout=45)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
                log.seek(0)
                out = log.read()
        out = out.decode(errors="replace")
        self.assertEqual(proc.returncode, 0, out)
        self.assertRegex(out, r"closed \(7 exit-motor-mode frames sent, 7 answered\)")
        self.assertIn("driver: shut down cleanly", out)
        self.assertNotIn("Traceback", out)

    def test_sigint_clean_shutdown_ros_control(self):
        self._start_and_interrupt("/good_rc", True)

    def test_sigint_clean_shutdown_standalone(self):
        self._start_and_interrupt("/good_sa", False)


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "test_driver_bad_config", DriverBadConfigTest, sys.argv)
