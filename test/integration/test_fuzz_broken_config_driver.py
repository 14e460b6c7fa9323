#!/usr/bin/env python3
"""rostest node: files of the broken-configuration corpus (``test/unit/data/broken/``) through the real
driver node (the ROS-free layer is ``test/unit/test_fuzz_broken_config.py``).

Each file, given to the driver where a user would put it (``~configure``, ``robot_description``,
``joint_limits``, the controller namespaces), makes it exit with code 1 and exactly one FATAL line
that names the file:line or the parameter, without a traceback.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import unittest

import rospkg
import rospy
import rostest
import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DRIVER = os.path.normpath(os.path.join(HERE, "..", "..", "scripts", "driver_node"))
BROKEN = os.path.normpath(os.path.join(HERE, "..", "unit", "data", "broken"))


def expectation(path: str) -> str:
    with open(path) as f:
        first = f.readline()
    return re.search(r"expect: (.*?)\s*(-->)?\s*$", first).group(1)


class DriverBrokenCorpusTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls) -> None:
        rospy.init_node("test_fuzz_broken_config_driver")
        pkg = rospkg.RosPack().get_path("rospy_control")
        cls.xml = os.path.join(pkg, "config", "arm_hardware.xml")
        with open(os.path.join(pkg, "urdf", "arm.urdf")) as f:
            cls.urdf = f.read()
        with open(os.path.join(pkg, "config", "arm_controllers.yaml")) as f:
            cls.controllers = yaml.safe_load(f)
        with open(os.path.join(pkg, "config", "arm_joint_limits.yaml")) as f:
            cls.limits = yaml.safe_load(f)["joint_limits"]

    def namespace(self, ns, urdf=None, controllers=None, limits=None):
        rospy.set_param(ns + "/robot_description", self.urdf if urdf is None else urdf)
        for key, value in (controllers or self.controllers).items():
            rospy.set_param(f"{ns}/{key}", value)
        rospy.set_param(ns + "/joint_limits", self.limits if limits is None else limits)
        return ns

    def run_driver(self, ns, *params):
        proc = subprocess.run([sys.executable, DRIVER, f"__ns:={ns}", "__name:=driver"] + list(params),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120.0)
        return proc.returncode, proc.stdout.decode(errors="replace")

    def assert_one_fatal(self, code, out, pattern):
        self.assertEqual(code, 1, out)
        fatal = [line for line in out.splitlines() if "[FATAL]" in line]
        self.assertEqual(len(fatal), 1, out)
        self.assertRegex(fatal[0], pattern)
        self.assertNotIn("Traceback", out)

    def test_hardware_xml(self):
        for name in ("hw_missing_can_id.xml", "hw_unknown_unit_type.xml"):
            path = os.path.join(BROKEN, name)
            ns = self.namespace("/broken_" + name.split(".")[0])
            code, out = self.run_driver(ns, f"_configure:={path}")
            self.assert_one_fatal(code, out, expectation(path).replace("{path}", re.escape(path)))

    def test_urdf(self):
        path = os.path.join(BROKEN, "urdf_unknown_actuator.urdf")
        with open(path) as f:
            text = f.read()
        ns = self.namespace("/broken_urdf", urdf=text)
        code, out = self.run_driver(ns, f"_configure:={self.xml}")
        self.assert_one_fatal(code, out, "/broken_urdf/" + expectation(path))

    def test_joint_limits(self):
        path = os.path.join(BROKEN, "joint_limits_negative_velocity.yaml")
        with open(path) as f:
            limits = yaml.safe_load(f)["joint_limits"]
        ns = self.namespace("/broken_limits", limits=dict(self.limits, **limits))
        code, out = self.run_driver(ns, f"_configure:={self.xml}")
        self.assert_one_fatal(code, out, expectation(path))

    def test_controller_yaml(self):
        path = os.path.join(BROKEN, "controllers_unknown_joint.yaml")
        with open(path) as f:
            broken = yaml.safe_load(f)
        ns = self.namespace("/broken_yaml", controllers=dict(self.controllers, **broken))
        code, out = self.run_driver(ns, f"_configure:={self.xml}", "_use_ros_control:=false")
        self.assert_one_fatal(code, out, "/broken_yaml" + expectation(path))


if __name__ == "__main__":
    rostest.rosrun("rospy_control", "fuzz_broken_config_driver", DriverBrokenCorpusTest, sys.argv)
