"""The simulated firmware's gravity: pose-dependent loads from the URDF, across channels, through
transmissions, with a payload the URDF does not know, and the constant load_torque beside it."""
from __future__ import annotations

import math
import time

import pytest

from rospy_control.testing.sim_rig import sim_of, simulated_middleware
from rospy_control.dynamics import GravityModel, Payload
from rospy_control.simulator.gravity import attach_to_middleware
from rospy_control.exceptions import ConfigError

G = 9.80665

# j1 (shoulder, axis y) carries l1 (1 kg at 0.3 m up its z) and, at 0.5 m, j2 (axis y) carrying l2
# (0.5 kg at 0.2 m).  j1 is driven through a 2:1 reduction by a motor mounted backwards (direction -1),
# j2 1:1 by a motor on another bus.
URDF = """<?xml version="1.0"?><robot name="r"><link name="base"/>
<joint name="j1" type="revolute"><parent link="base"/><child link="l1"/><origin xyz="0 0 0.1"/>
  <axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="5" effort="100"/></joint>
<link name="l1"><inertial><origin xyz="0 0 0.3"/><mass value="1.0"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0 0 0.5"/>
  <axis xyz="0 1 0"/><limit lower="-3" upper="3" velocity="5" effort="100"/></joint>
<link name="l2"><inertial><origin xyz="0 0 0.2"/><mass value="0.5"/>
  <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
<transmission name="t1"><type>transmission_interface/SimpleTransmission</type>
  <joint name="j1"><hardwareInterface>hardware_interface/PositionJointInterface</hardwareInterface></joint>
  <actuator name="m1"><mechanicalReduction>2</mechanicalReduction></actuator></transmission>
</robot>"""


def hardware(root: str = "", m1_sim: str = 'initial_position="0.8"', m2_sim: str = 'initial_position="0.3"',
             extra_units: str = "") -> str:
    return f"""<hardware name="t">{root}
  <channel name="a" interface="socketcan" channel="x0"><simulation rate="2000"/></channel>
  <channel name="b" interface="socketcan" channel="x1"><simulation rate="2000"/></channel>
  <unit name="m1" type="rospy_control/Motor" channel="a" can_id="1" direction="-1" zero_offset="0.2">
    <limits t_min="-30" t_max="30"/><simulation inertia="0.02" damping="0.1" friction="0.0" {m1_sim}/></unit>
  <unit name="m2" type="rospy_control/Motor" channel="b" can_id="2" joint="j2">
    <limits t_min="-30" t_max="30"/><simulation inertia="0.01" damping="0.1" friction="0.0" {m2_sim}/></unit>
  {extra_units}
</hardware>"""


def sim_motor(mw, name):
    return sim_of(mw).firmware_of(name).by_name[name]


def expected_loads(q1: float, q2: float, payload=()):
    """Motor-frame loads: minus the holding torque, through the transmission and the direction."""
    t = GravityModel.from_urdf(URDF, payloads=payload).torque_map({"j1": q1, "j2": q2})
    return {"m1": -(-1) * t["j1"] / 2.0, "m2": -t["j2"]}


def test_loads_follow_the_pose_of_every_channel_through_the_transmissions():
    mw = simulated_middleware(hardware())
    load = attach_to_middleware(sim_of(mw), URDF, hardware())
    assert load is not None
    m1, m2 = sim_motor(mw, "m1"), sim_motor(mw, "m2")
    # actuator m1 at 0.8 (joint side of the motor) -> joint j1 = 0.8 / 2 = 0.4
    assert load.loads() == pytest.approx(expected_loads(0.4, 0.3))
    # hand check of j2 alone: 0.5 kg at 0.2 m, absolute angle 0.4 + 0.3: gravity pulls it forward
    assert m2.gravity_load == pytest.approx(G * 0.5 * 0.2 * math.sin(0.7))
    # move the motor on the *other* bus: the load of m1 changes with it
    m2.p = -1.2
    load.update()
    assert load.loads() == pytest.approx(expected_loads(0.4, -1.2))
    assert m1.gravity_load != pytest.approx(expected_loads(0.4, 0.3)["m1"])


def test_a_payload_the_urdf_does_not_know_and_the_gravity_vector_come_from_the_root_simulation():
    root = '<simulation gravity="0 0 -9.80665"><payload link="l2" mass="0.5" xyz="0 0 0.1"/></simulation>'
    mw = simulated_middleware(hardware(root))
    load = attach_to_middleware(sim_of(mw), URDF, hardware(root))
    assert load is not None
    assert load.loads() == pytest.approx(expected_loads(0.4, 0.3, [Payload("l2", 0.5, (0, 0, 0.1))]))
    off = '<simulation enabled="false"/>'
    mw = simulated_middleware(hardware(off))
    assert attach_to_middleware(sim_of(mw), URDF, hardware(off)) is None
    assert sim_motor(mw, "m1").gravity_load == 0.0 and sim_motor(mw, "m1").gravity is None


def test_bad_simulation_options_are_config_errors():
    for root, match in [('<simulation gravity="0 0"/>', "expected three finite numbers"),
                        ('<simulation><payload link="l2" mass="-1"/></simulation>', "a mass >= 0"),
                        ('<simulation><payload link="nope" mass="1"/></simulation>',
                         "'nope' is not a <link>"),
                        ('<simulation><joint name="j1"/></simulation>', "expected <payload>"),
                        ('<simulation colour="red"/>', "unknown attribute 'colour'")]:
        mw = simulated_middleware(hardware(root))
        with pytest.raises(ConfigError, match=match):
            attach_to_middleware(sim_of(mw), URDF, hardware(root))


def test_limp_motors_fall_under_gravity_and_load_torque_still_adds():
    # j2 starts tilted forward: limp, it falls to its stop; m3 (no URDF joint) has only a constant load
    xml = hardware(m2_sim='initial_position="0.3" stop_min="-1.0" stop_max="1.0"',
                   m1_sim='initial_position="0.0" stop_min="-0.5" stop_max="0.5"',
                   extra_units='<unit name="m3" type="rospy_control/Motor" channel="a" can_id="3">'
                               '<simulation load_torque="-2.0" stop_min="-0.4" stop_max="0.4"/></unit>')
    mw = simulated_middleware(xml)
    attach_to_middleware(sim_of(mw), URDF, xml)
    assert sim_motor(mw, "m3").gravity is None
    mw.start()
    try:
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            s = mw.snapshot()
            if s["m2"].position > 0.99 and s["m3"].position < -0.39:
                break
            time.sleep(0.02)
        s = mw.snapshot()
        assert s["m2"].position == pytest.approx(1.0, abs=0.01)   # fell forward onto its stop
        assert s["m3"].position == pytest.approx(-0.4, abs=0.01)  # pushed by its constant load
    finally:
        mw.shutdown()


def test_without_a_urdf_nothing_is_attached():
    mw = simulated_middleware(hardware())
    assert attach_to_middleware(sim_of(mw), None) is None
    assert sim_motor(mw, "m1").gravity is None
