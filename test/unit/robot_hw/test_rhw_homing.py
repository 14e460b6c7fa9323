"""Homing on demand through the RobotHW: the homing unit's joint gets no commands while it homes (its
``fault`` says so, so a trajectory controller refuses goals for it), then restarts from the position
measured from its new zero, with the controllers asked to restart (``consume_reset_request``); a unit
that cannot home is named; a faulted unit is not homed; the neighbour joint runs on throughout."""
from __future__ import annotations

import threading

import pytest

from rospy_control.exceptions import HardwareError
from rospy_control.hardware_interface import PositionJointInterface
from rospy_control.testing.sim_rig import sim_of

from robot_hw_testutil import info, joint, motor, spin, switch, urdf

pytest.importorskip("canopen", reason="tools/bootstrap.sh installs canopen into .ws/venv")


def drive(name: str, node: int, extra: str = "", children: str = "", sim: str = "") -> str:
    return (f'<unit name="{name}" type="rospy_control/Cia402Drive" channel="bus" node_id="{node}" {extra}>'
            f'{children}<simulation inertia="0.01" damping="0.05" friction="0.02" {sim}/></unit>')


def arm(make_hw, homing: str = '<homing method="35" offset="-0.2"/>'):
    xml = ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="500" '
           'fault_timeout="0.05"><simulation rate="2000"/></channel>'
           + drive("d1", 1, 'joint="j1"', homing, 'initial_position="0.5"')
           + motor("m2", 2, 'joint="j2"') + "</hardware>")
    return make_hw(xml, urdf(joint("j1"), joint("j2")))


def home_in_thread(hw, units):
    answer = {}
    t = threading.Thread(target=lambda: answer.update(hw.home(units, timeout=5.0)))
    t.start()
    return t, answer


def test_a_homing_holds_the_joint_and_restarts_it_from_its_new_zero(make_hw):
    hw = arm(make_hw)
    assert spin(hw, 10.0, until=lambda: not hw.not_ready_joints())
    assert hw.homeable_units() == ["d1"] and hw.homing_at_start() == []
    switch(hw, [info("pos", PositionJointInterface, "j1", "j2")])
    j1 = hw.get(PositionJointInterface).get_handle("j1")
    j2 = hw.get(PositionJointInterface).get_handle("j2")
    assert abs(j1.get_position() - 0.5) < 0.01
    hw.consume_reset_request()
    seen_fault = []
    t, answer = home_in_thread(hw, ["d1"])

    def commands():
        j1.set_command(0.5)          # a controller holding where the joint was (it must not be sent)
        j2.set_command(0.3)
        if j1.get_fault():
            seen_fault.append(j1.get_fault())
    assert spin(hw, 8.0, commands, until=lambda: not t.is_alive())
    t.join()
    assert answer["d1"][0], answer
    assert seen_fault and seen_fault[0].startswith("homing: "), seen_fault
    # the new zero: the home position (where it was) reads -offset
    assert abs(j1.get_position() - 0.2) < 0.01
    assert j1.get_fault() is None
    assert hw.consume_reset_request()            # the controllers restart from the measured position
    drive_sim = sim_of(hw.middleware).firmware("bus").by_name["d1"].drive
    assert abs(drive_sim.joint_position() - 0.5) < 0.02     # it never moved
    # the neighbour runs on, and the homed joint follows its commands from the new zero
    spin(hw, 1.5, lambda: (j1.set_command(0.4), j2.set_command(0.3)))
    assert abs(hw.status()["joints"]["j2"]["position"] - 0.3) < 0.05
    assert abs(j1.get_position() - 0.4) < 0.02
    assert abs(drive_sim.joint_position() - 0.7) < 0.02


def test_units_that_cannot_home_are_named_and_a_faulted_one_is_not_homed(make_hw):
    hw = arm(make_hw)
    assert spin(hw, 10.0, until=lambda: not hw.not_ready_joints())
    with pytest.raises(HardwareError, match="'m2'.*d1"):
        hw.home(["m2"])
    sim_of(hw.middleware).set_fault("d1", "error_flag")
    assert spin(hw, 3.0, until=lambda: "j1" in hw.faulted_joints())
    t, answer = home_in_thread(hw, ["d1"])
    assert spin(hw, 3.0, until=lambda: not t.is_alive())
    t.join()
    assert answer["d1"][0] is False and "FAULT" in answer["d1"][1], answer
