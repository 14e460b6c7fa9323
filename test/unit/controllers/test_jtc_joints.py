"""The joint list and the joint faults every trajectory controller reads the same way."""
import pytest

from rospy_control.controllers._jtc_common import joints_fault, trajectory_joint_names
from rospy_control.exceptions import ConfigError
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle


class _Handle:
    def __init__(self, fault=None):
        self.fault = fault

    def get_fault(self):
        return self.fault


def test_the_joints_parameter_names_each_joint_once():
    nh = InMemoryNodeHandle("/ctrl", InMemoryGraph())
    nh.set_param("joints", ["a", "b"])
    assert trajectory_joint_names(nh) == ["a", "b"]
    nh.set_param("joints", ["a", "b", "a"])
    with pytest.raises(ConfigError, match="duplicated names"):
        trajectory_joint_names(nh)


def test_the_first_joint_in_fault_is_named():
    assert joints_fault(["a", "b"], [_Handle(), _Handle()]) is None
    text = joints_fault(["a", "b", "c"], [_Handle(), _Handle("over_temperature"), _Handle("x")])
    assert text is not None and "'b'" in text and "over_temperature" in text
