"""What ``~home`` answers (:class:`rospy_control.control_loop.homing.Homing`), with a RobotHW that
records what it is asked: refused while a trajectory goal runs, with nothing homed; units it cannot
home named; every homeable unit when none is named; each unit's outcome in the message."""
from __future__ import annotations

from types import SimpleNamespace

from rospy_control.control_loop.homing import Homing, running_trajectories
from rospy_control.hardware_interface.robot_hw import RobotHW


class Hw(RobotHW):
    def __init__(self, units=("d1", "d2"), fail=()):
        super().__init__()
        self.units, self.fail, self.asked = list(units), set(fail), []

    def homeable_units(self):
        return self.units

    def home(self, units, timeout=None):
        self.asked.append(list(units))
        return {u: (u not in self.fail, "homing completed" if u not in self.fail else "homing error")
                for u in units}


def test_refused_while_a_trajectory_runs_and_nothing_is_homed():
    hw = Hw()
    ok, message = Homing(hw, busy=lambda: ["arm_controller"]).home()
    assert not ok and "arm_controller" in message and "trajectory is running" in message
    assert hw.asked == []


def test_every_unit_by_default_and_each_outcome_named():
    hw = Hw(fail=("d2",))
    ok, message = Homing(hw).home()
    assert hw.asked == [["d1", "d2"]]
    assert not ok and "d1: homing completed" in message and "d2: homing error" in message
    ok, message = Homing(hw).home(["d1"])
    assert ok and hw.asked[-1] == ["d1"]


def test_units_that_cannot_home_are_named_with_those_that_can():
    ok, message = Homing(Hw()).home(["m7"])
    assert not ok and "'m7'" in message and "d1, d2" in message
    ok, message = Homing(Hw(units=())).home()
    assert not ok and "<homing" in message


def test_a_robot_hw_of_ones_own_homes_nothing_by_default():
    assert RobotHW().homeable_units() == []
    assert RobotHW().home(["x"])["x"][0] is False


def test_running_trajectories_are_the_running_controllers_with_an_active_goal():
    def ctrl(running, goal):
        return SimpleNamespace(is_running=lambda: running,
                               executor=SimpleNamespace(active_goal_key=goal))
    cs = {"a": ctrl(True, 1), "b": ctrl(True, None), "c": ctrl(False, 2), "jsc": SimpleNamespace(
        is_running=lambda: True)}
    cm = SimpleNamespace(get_controller_names=lambda: list(cs), get_controller_by_name=cs.get)
    assert running_trajectories(cm) == ["a"]
    assert running_trajectories(None) == []
