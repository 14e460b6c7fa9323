"""A joint whose first reading lies outside its limits is not started: its motor is put in FAULT
naming the joint, the reading, the limits and the zero_offset a turn away that fixes it; with
``wrap="auto"`` the one in-limit reading a turn away is applied and the joint starts from it."""
from __future__ import annotations

import math
import threading

from rospy_control.hardware_interface import PositionJointInterface
from rospy_control.testing.sim_rig import sim_of

from robot_hw_testutil import hardware, info, joint, motor, spin, switch, urdf

LIMITS = 'lower="-1" upper="1" velocity="5" effort="10"'
TURN = 2.0 * math.pi


def _arm(make_hw, start: float, extra: str = "", limit: str = LIMITS, start2: float = 0.0):
    xml = hardware(motor("m1", 1, f'joint="j1" {extra}', sim=f'initial_position="{start}"'),
                   motor("m2", 2, 'joint="j2"', sim=f'initial_position="{start2}"'))
    return make_hw(xml, urdf(joint("j1", limit=limit), joint("j2", limit=LIMITS)))


def _motor_position(hw, name: str) -> float:
    return sim_of(hw.middleware).firmware_of(name).by_name[name].joint_position()


def test_a_joint_read_a_turn_off_is_refused_naming_the_fix_and_its_neighbour_runs(make_hw):
    hw = _arm(make_hw, 0.5 + TURN)
    assert spin(hw, 3.0, until=lambda: "j1" in hw.faulted_joints() and not hw.not_ready_joints())
    reason = hw.faulted_joints()["j1"]
    # (the MIT frame carries positions in steps of 0.4 mrad)
    for words in ("joint 'j1' reads 6.78", "[-1.0000, 1.0000]", "-1 turn(s) of motor 'm1'",
                  "would read 0.49", 'zero_offset="6.283185"', '<unit name="m1">', 'wrap="auto"'):
        assert words in reason, reason
    assert hw.middleware.motor("m1").state().fault           # the motor itself reports it
    assert "start-up" in hw.status()["joints"]["j1"]["start_check"]
    handle = hw.get(PositionJointInterface).get_handle("j1")
    assert handle.get_fault() and "reads 6.78" in handle.get_fault()
    # the healthy joint beside it started and follows its commands
    assert hw.get(PositionJointInterface).get_handle("j2").get_fault() is None
    switch(hw, [info("pos", PositionJointInterface, "j2")])
    j2 = hw.get(PositionJointInterface).get_handle("j2")
    spin(hw, 1.0, lambda: j2.set_command(0.4))
    assert abs(_motor_position(hw, "m2") - 0.4) < 0.05
    assert abs(_motor_position(hw, "m1") - (0.5 + TURN)) < 0.05   # never commanded: it stayed put
    # a reset checks again: the reading has not changed, so it is refused again, and the reset says so
    answer = {}
    resetter = threading.Thread(target=lambda: answer.update(hw.reset_faults(timeout=2.0)))
    resetter.start()
    spin(hw, 3.0, until=lambda: not resetter.is_alive())
    resetter.join()
    assert "reads 6.78" in answer.get("m1", ""), answer
    assert spin(hw, 2.0, until=lambda: "j1" in hw.faulted_joints())
    assert "reads 6.78" in hw.faulted_joints()["j1"]


def test_wrap_auto_applies_the_one_in_limit_reading_and_the_joint_runs(make_hw):
    hw = _arm(make_hw, 0.5 + TURN, extra='wrap="auto"')
    assert spin(hw, 3.0, until=lambda: not hw.not_ready_joints()
                and hw.status()["joints"]["j1"]["start_check"] != "")
    assert spin(hw, 1.0, until=lambda: abs(hw.status()["joints"]["j1"]["position"] - 0.5) < 0.01)
    assert not hw.faulted_joints()
    note = hw.status()["joints"]["j1"]["start_check"]
    assert 'wrap="auto"' in note and "-1 turn(s) of motor 'm1' applied" in note, note
    assert abs(hw.middleware.motor("m1").zero_offset - TURN) < 1e-9
    switch(hw, [info("pos", PositionJointInterface, "j1")])
    j1 = hw.get(PositionJointInterface).get_handle("j1")
    spin(hw, 1.0, lambda: j1.set_command(0.8))
    assert abs(hw.status()["joints"]["j1"]["position"] - 0.8) < 0.05
    # the simulated joint, as the hardware XML's zero_offset sees it, is where it was: a turn further
    assert abs(_motor_position(hw, "m1") - TURN - 0.8) < 0.05


def test_a_joint_resting_a_hair_beyond_its_limit_starts(make_hw):
    hw = _arm(make_hw, 1.03)
    assert spin(hw, 2.0, until=lambda: not hw.not_ready_joints())
    spin(hw, 0.1)
    assert not hw.faulted_joints() and hw.status()["joints"]["j1"]["start_check"] == ""


def test_wrap_auto_refuses_when_more_than_one_reading_lies_inside(make_hw):
    # a travel of 8 rad is longer than a turn: -9 + one turn and -9 + two turns are both inside
    hw = _arm(make_hw, -9.0, extra='wrap="auto"', limit='lower="-4" upper="4" velocity="5" effort="10"')
    assert spin(hw, 3.0, until=lambda: "j1" in hw.faulted_joints())
    reason = hw.faulted_joints()["j1"]
    assert "+1 turn(s)" in reason and "+2 turn(s)" in reason and "cannot choose" in reason, reason
    assert abs(hw.middleware.motor("m1").zero_offset) < 1e-12


def _recover(hw, name: str) -> dict:
    answer: dict = {}
    resetter = threading.Thread(target=lambda: answer.update(hw.reset_faults(timeout=2.0)))
    resetter.start()
    spin(hw, 4.0, until=lambda: not resetter.is_alive())
    resetter.join()
    return answer


def test_a_joint_that_sagged_past_its_limit_while_faulted_restarts_one_that_lost_a_turn_does_not(make_hw):
    hw = _arm(make_hw, 0.9)
    assert spin(hw, 3.0, until=lambda: not hw.not_ready_joints())
    sim = sim_of(hw.middleware).firmware_of("m1")
    model = sim.by_name["m1"]
    for moved_to, restarts in ((1.2, True), (0.5 + TURN, False)):
        sim.set_fault("m1", "silent")
        assert spin(hw, 3.0, until=lambda: "j1" in hw.faulted_joints())
        # limp onto its stop past the limit / switched off and on a turn away (a power cycle)
        model.enabled, model.p, model.v = False, moved_to, 0.0
        sim.clear_fault("m1")
        answer = _recover(hw, "m1")
        if restarts:
            assert answer == {}, answer
            assert spin(hw, 2.0, until=lambda: "j1" not in hw.faulted_joints())
            assert abs(hw.status()["joints"]["j1"]["position"] - 1.2) < 0.05   # holding there
            model.p = 0.9
            spin(hw, 0.5)
        else:
            assert "reads 6.78" in answer.get("m1", ""), answer
