"""Interface-mode switching through prepare_switch / do_switch (hwi_switch_test, in our words).

A robot whose joints each allow some command interfaces: ``j1`` position or velocity, ``j2``
velocity only.  ``prepare_switch`` vetoes a start that would command a joint through an interface it
does not allow; ``do_switch`` records each joint's new mode.
"""
from __future__ import annotations

import pytest
from cm_fakes import Env

from rospy_control.controller_manager import BEST_EFFORT, STRICT
from rospy_control.hardware_interface import PositionJointInterface, VelocityJointInterface
from rospy_control.testing.robot_hw import JointsRobotHW

ALLOWED = {"j1": {"hardware_interface::PositionJointInterface", "hardware_interface::VelocityJointInterface"},
           "j2": {"hardware_interface::VelocityJointInterface"}}


class ModeRobotHW(JointsRobotHW):
    def __init__(self) -> None:
        super().__init__(list(ALLOWED),
                         {PositionJointInterface: "command", VelocityJointInterface: "command"})
        self.modes = {name: None for name in ALLOWED}
        self.vetoes = []

    def prepare_switch(self, start_list, stop_list):
        for info in start_list:
            for claimed in info.claimed_resources:
                for joint in claimed.resources:
                    if claimed.hardware_interface not in ALLOWED[joint]:
                        self.vetoes.append((info.name, joint))
                        return False
        return True

    def do_switch(self, start_list, stop_list):
        for info in stop_list:
            for claimed in info.claimed_resources:
                for joint in claimed.resources:
                    self.modes[joint] = None
        for info in start_list:
            for claimed in info.claimed_resources:
                for joint in claimed.resources:
                    self.modes[joint] = claimed.hardware_interface.split("::")[1]


@pytest.fixture
def robot():
    env = Env(ModeRobotHW())
    env.load("pos_j1", "test/PositionTestController", joints=["j1"])
    env.load("vel_j1", "test/VelocityTestController", joints=["j1"])
    env.load("vel_j2", "test/VelocityTestController", joints=["j2"])
    env.load("pos_j2", "test/PositionTestController", joints=["j2"])
    yield env
    env.cm.shutdown()


def running(env):
    return sorted(c.name for c in env.cm.list_controllers() if c.state == "running")


def test_allowed_modes_switch_and_are_applied_by_do_switch(robot):
    env = robot
    assert env.switch(start=["pos_j1", "vel_j2"]).ok
    assert env.hw.modes == {"j1": "PositionJointInterface", "j2": "VelocityJointInterface"}
    assert env.switch(start=["vel_j1"], stop=["pos_j1"]).ok
    assert env.hw.modes["j1"] == "VelocityJointInterface"
    assert running(env) == ["vel_j1", "vel_j2"]


def test_disallowed_mode_is_vetoed_in_both_modes(robot):
    env = robot
    for strictness in (STRICT, BEST_EFFORT):
        assert not env.switch(start=["pos_j2"], strictness=strictness).ok
    assert env.hw.vetoes == [("pos_j2", "j2"), ("pos_j2", "j2")]
    assert env.hw.modes == {"j1": None, "j2": None}


def test_two_modes_on_one_joint_is_a_resource_conflict(robot):
    env = robot
    assert env.switch(start=["pos_j1"]).ok
    assert not env.switch(start=["vel_j1"]).ok
    assert not env.switch(start=["vel_j1", "pos_j1"], strictness=BEST_EFFORT).ok
    assert running(env) == ["pos_j1"] and env.hw.modes["j1"] == "PositionJointInterface"


def test_best_effort_ignores_unknown_names_and_still_switches(robot):
    env = robot
    assert env.switch(start=["pos_j1", "ghost"], stop=["phantom"], strictness=BEST_EFFORT).ok
    assert not env.switch(start=["vel_j1", "ghost"], stop=["pos_j1"], strictness=STRICT).ok
    assert running(env) == ["pos_j1"]


def test_stop_not_running_and_double_start(robot):
    env = robot
    assert not env.switch(stop=["vel_j2"], strictness=STRICT).ok
    assert env.switch(stop=["vel_j2"], strictness=BEST_EFFORT).ok
    assert env.switch(start=["vel_j2"]).ok
    assert not env.switch(start=["vel_j2"], strictness=STRICT).ok
    assert env.switch(start=["vel_j2"], strictness=BEST_EFFORT).ok
    assert running(env) == ["vel_j2"]
