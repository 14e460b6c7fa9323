"""rospy_control.urdf: the single reader of robot descriptions used by every layer."""
from __future__ import annotations

import math

import pytest

from rospy_control.exceptions import ConfigError
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle
from rospy_control.urdf import find_robot_description, load_robot_description, parse_urdf, urdf_joints

ROBOT = """<robot name="r">
  <joint name="a" type="revolute"><limit lower="-1" upper="2" velocity="3" effort="4"/></joint>
  <joint name="c" type="continuous"/>
  <transmission name="t"><joint name="a"><hardwareInterface>x</hardwareInterface></joint></transmission>
</robot>"""


def test_joints_with_and_without_limits_and_transmission_joints_ignored():
    joints = urdf_joints(parse_urdf(ROBOT))
    assert set(joints) == {"a", "c"}
    a, c = joints["a"], joints["c"]
    assert (a.type, a.lower, a.upper, a.velocity, a.effort, a.has_limits) == ("revolute", -1, 2, 3, 4, True)
    assert (c.type, c.has_limits, c.upper) == ("continuous", False, math.inf)
    assert a.line == 2


@pytest.mark.parametrize("text,message,line", [
    ("", "the robot description is empty", None),
    ("<robot name='r'>\n  <joint name='a'>\n</robot>", "cannot parse the URDF", 3),
    ("<model/>", "the root element is <model>, expected <robot>", 1),
])
def test_bad_descriptions_name_the_source_and_line(text, message, line):
    with pytest.raises(ConfigError) as err:
        parse_urdf(text, "/robot_description")
    assert message in str(err.value)
    assert err.value.source == "/robot_description"
    assert err.value.line == line


def test_non_numeric_limit_is_reported_with_its_line():
    text = ("<robot name='r'>\n<joint name='a' type='revolute'>\n"
            "<limit lower='low' upper='1'/></joint></robot>")
    with pytest.raises(ConfigError, match=r"<limit lower='low'> of joint 'a' is not a number") as err:
        urdf_joints(parse_urdf(text, "arm.urdf"), "arm.urdf")
    assert str(err.value).startswith("arm.urdf:3:")


def test_description_is_searched_upwards_then_globally():
    graph = InMemoryGraph()
    nh = InMemoryNodeHandle("/robot/arm_controller", graph)
    with pytest.raises(ConfigError, match="Could not find parameter 'robot_description'"):
        load_robot_description(nh)
    nh.set_param("/robot_description", ROBOT)
    assert find_robot_description(nh) == (ROBOT, "/robot_description")
    nh.set_param("/robot/robot_description", ROBOT.replace("'r'", "'near'"))
    text, where = find_robot_description(nh)
    assert where == "/robot/robot_description"
    _, joints, _ = load_robot_description(nh)
    assert "a" in joints
