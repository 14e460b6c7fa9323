"""MiddlewareRobotHW's gravity feed-forward: values through the transmission, holding accuracy, torque
limits, velocity mode, and that it stops on a fault and with hold_mode none / damping."""
from __future__ import annotations

import math
import os
import sys

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.dynamics import GravityModel
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import PositionJointInterface, VelocityJointInterface
from rospy_control.middleware import ControlMode

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "robot_hw"))
from robot_hw_testutil import ARM_HW, ARM_URDF, info, load_yaml, position, spin, switch  # noqa: E402

G = 9.80665

# one shoulder: 1 kg at 0.3 m up its link, axis y, driven 2:1 by a motor mounted backwards
URDF = """<?xml version="1.0"?><robot name="r"><link name="base"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/>
  <axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="5" effort="{effort}"/></joint>
<link name="l1"><inertial><origin xyz="0 0 0.3"/><mass value="1.0"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
  <joint name="j1">
    <hardwareInterface>hardware_interface/PositionJointInterface</hardwareInterface>
    <hardwareInterface>hardware_interface/VelocityJointInterface</hardwareInterface>
  </joint>
  <actuator name="m1"><mechanicalReduction>2</mechanicalReduction></actuator></transmission>
</robot>"""


def hardware(gc: str = '<gravity_compensation enabled="true"/>', t_max: float = 30.0) -> str:
    # actuator 1.6 rad = joint 0.8 rad: the link leans forward, the holding torque is g 0.3 sin 0.8
    return f"""<hardware name="t">{gc}
  <channel name="a" interface="socketcan" channel="x0" rate="1000"><simulation rate="2000"/></channel>
  <unit name="m1" type="rospy_control/Motor" channel="a" can_id="1" direction="-1">
    <limits t_min="{-t_max}" t_max="{t_max}"/><gains position_kp="30" position_kd="1.0" velocity_kd="1.5"/>
    <simulation inertia="0.02" damping="0.1" friction="0.01" initial_position="1.6"/></unit>
</hardware>"""


def holding(q: float) -> float:
    return -G * 1.0 * 0.3 * math.sin(q)


def spy(motor, method):
    calls = []
    original = getattr(motor, method)

    def wrapper(*args, **kw):
        calls.append((args, kw))
        return original(*args, **kw)

    setattr(motor, method, wrapper)
    return calls


def test_feed_forward_is_the_models_torque_through_the_transmission(make_hw):
    hw = make_hw(hardware(), URDF.format(effort=100))
    ff = hw.gravity_feed_forward
    assert ff is not None and ff.joint_names == ["j1"]
    calls = spy(hw.middleware.motor("m1"), "set_position")
    spin(hw, 0.05)
    q = position(hw, "j1")
    assert ff.torques()["m1"] == pytest.approx(holding(q) / 2.0, abs=1e-3)   # joint torque / reduction
    (p, v, effort), _ = calls[-1]
    assert effort == pytest.approx(holding(q) / 2.0, abs=1e-3) and v == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("enabled", [True, False])
def test_a_held_joint_stays_where_it_was_only_with_feed_forward(make_hw, enabled):
    gc = f'<gravity_compensation enabled="{str(enabled).lower()}"/>'
    hw = make_hw(hardware(gc), URDF.format(effort=100))
    switch(hw, [info("pos", PositionJointInterface, "j1")])
    handle = hw.get(PositionJointInterface).get_handle("j1")
    spin(hw, 1.0, lambda: handle.set_command(0.5))
    error = abs(position(hw, "j1") - 0.5)
    # without: kp 30 (actuator) carries 1.14 N m -> 0.038 rad actuator -> 0.019 rad joint
    if enabled:
        assert error < 0.003
    else:
        assert 0.01 < error < 0.03


def test_feed_forward_respects_the_motor_torque_range_and_the_joint_effort_limit(make_hw):
    hw = make_hw(hardware(t_max=0.5), URDF.format(effort=100))
    spin(hw, 0.02)
    assert hw.gravity_feed_forward.torques()["m1"] == pytest.approx(-0.5)   # |1.05| clamped to 0.5
    hw2 = make_hw(hardware().replace('channel="x0"', 'channel="x1"'), URDF.format(effort=1.0))
    spin(hw2, 0.02)
    assert hw2.gravity_feed_forward.torques()["m1"] == pytest.approx(-1.0 / 2.0)  # joint clamp, then /2


def test_velocity_commands_carry_the_feed_forward(make_hw):
    hw = make_hw(hardware(), URDF.format(effort=100))
    switch(hw, [info("vel", VelocityJointInterface, "j1")])
    handle = hw.get(VelocityJointInterface).get_handle("j1")
    calls = spy(hw.middleware.motor("m1"), "set_command")
    start = position(hw, "j1")
    spin(hw, 0.5, lambda: handle.set_command(0.0))
    (mode, value, effort), _ = calls[-1]
    assert mode == ControlMode.VELOCITY and value == 0.0
    assert effort == pytest.approx(holding(position(hw, "j1")) / 2.0, abs=1e-3)
    assert abs(position(hw, "j1") - start) < 0.01   # zero velocity holds (it would sag without)


@pytest.mark.parametrize("hold_mode", ["none", "damping"])
def test_no_feed_forward_for_limp_or_damped_joints(make_hw, hold_mode):
    hw = make_hw(hardware(), URDF.format(effort=100), {"hold_mode": hold_mode})
    calls = spy(hw.middleware.motor("m1"), "set_position")
    spin(hw, 0.1)
    assert calls == []
    assert hw.middleware.motor("m1").command_mode == (ControlMode.NONE if hold_mode == "none"
                                                      else ControlMode.DAMPING)


@pytest.mark.slow
def test_feed_forward_stops_on_a_fault_and_resumes_after_the_reset(make_hw):
    arm = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    mw = arm.middleware
    switch(arm, [info("pos", PositionJointInterface, "elbow_joint", "shoulder_lift_joint")])
    handle = arm.get(PositionJointInterface).get_handle("elbow_joint")
    spin(arm, 0.05, lambda: handle.set_command(0.7))
    elbow = spy(mw.motor("elbow_motor"), "set_position")
    shoulder = spy(mw.motor("shoulder_lift_motor"), "set_position")
    spin(arm, 0.05, lambda: handle.set_command(0.7))
    assert elbow and all(abs(args[2]) > 0.1 for args, _ in elbow)   # the forearm's weight, fed forward
    sim = sim_of(mw).firmware_of("elbow_motor")
    sim.set_fault("elbow_motor", "silent")
    assert spin(arm, 1.0, lambda: handle.set_command(0.7), until=lambda: bool(arm.faulted_joints()))
    del elbow[:]
    del shoulder[:]
    spin(arm, 0.1, lambda: handle.set_command(0.7))
    assert elbow == []                          # nothing at all to the faulted motor
    assert shoulder and all(abs(args[2]) > 1.0 for args, _ in shoulder)   # the healthy joint keeps it
    sim.clear_fault("elbow_motor")
    mw.reset_fault("elbow_motor")
    assert spin(arm, 1.0, until=lambda: not arm.faulted_joints())
    spin(arm, 0.05)
    assert elbow and abs(elbow[-1][0][2]) > 0.1


def test_a_joint_can_be_left_out_and_bad_options_are_config_errors(make_hw):
    off = '<gravity_compensation><joint name="j1" enabled="false"/></gravity_compensation>'
    hw = make_hw(hardware(off), URDF.format(effort=100))
    assert hw.gravity_feed_forward is None
    for gc, match in [('<gravity_compensation><joint name="nope" enabled="false"/></gravity_compensation>',
                       "<joint name='nope'> is not a joint"),
                      ('<gravity_compensation gravity="down"/>', "expected three finite numbers"),
                      ('<gravity_compensation><payload link="l9" mass="1"/></gravity_compensation>',
                       "'l9' is not a <link>")]:
        with pytest.raises(ConfigError, match=match):
            make_hw(hardware(gc).replace('channel="x0"', 'channel="x2"'), URDF.format(effort=100))


def test_example_configurations():
    from rospy_control.dynamics import read_gravity_options
    root = os.path.dirname(ARM_HW)
    sim, comp = read_gravity_options(ARM_HW)
    assert comp.enabled and sim.enabled and comp.gravity == pytest.approx((0, 0, -G))
    sim, comp = read_gravity_options(os.path.join(root, "quadruped_hardware.xml"))
    assert not comp.enabled and not sim.enabled   # legs: ground contact carries the load
    with open(ARM_URDF) as f:
        assert GravityModel.from_urdf(f.read()).total_mass() == pytest.approx(7.0)
