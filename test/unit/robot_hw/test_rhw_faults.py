"""Faulted motors: reported, not commanded, healthy coupled motors hold, recovery re-seeds; the node's
diagnostics of a MiddlewareRobotHW."""
from __future__ import annotations

import logging

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.hardware_interface import PositionJointInterface
from rospy_control.middleware import ControlMode

from robot_hw_testutil import (
    ARM_HW, ARM_URDF, hardware, info, joint, load_yaml, motor, spin, switch, urdf,
)


@pytest.fixture
def arm(make_hw):
    return make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))


def spy(m, method):
    calls = []
    original = getattr(m, method)

    def wrapper(*args, **kw):
        calls.append(args)
        return original(*args, **kw)

    setattr(m, method, wrapper)
    return calls


def test_faulted_motor_is_reported_and_gets_no_commands_then_recovers(arm, caplog):
    mw = arm.middleware
    switch(arm, [info("pos", PositionJointInterface, "elbow_joint")])
    handle = arm.get(PositionJointInterface).get_handle("elbow_joint")
    spin(arm, 0.05, lambda: handle.set_command(0.7))
    sim = sim_of(mw).firmware_of("elbow_motor")
    calls = spy(mw.motor("elbow_motor"), "set_command")
    pos_calls = spy(mw.motor("elbow_motor"), "set_position")  # position + gravity feed-forward
    with caplog.at_level(logging.ERROR):
        sim.set_fault("elbow_motor", "silent")
        assert spin(arm, 1.0, lambda: handle.set_command(0.7), until=lambda: bool(arm.faulted_joints()))
    reason = arm.faulted_joints()["elbow_joint"]
    assert reason.startswith("motor 'elbow_motor': no reply for ")
    assert "motor 'elbow_motor' went to FAULT" in caplog.text
    sent_before = len(calls) + len(pos_calls)
    spin(arm, 0.1, lambda: handle.set_command(0.9))
    assert len(calls) + len(pos_calls) == sent_before  # nothing sent to the faulted motor
    status = arm.status()
    assert status["motors"]["elbow_motor"]["fault"] is True
    assert status["motors"]["elbow_motor"]["fault_reason"].startswith("no reply for")
    assert status["joints"]["elbow_joint"]["fault"] is True
    assert status["joints"]["elbow_joint"]["controller"] == "pos"
    # controllers see it on their handles (the JTC aborts its goal on it)
    assert handle.get_fault() == reason
    assert arm.get(PositionJointInterface).get_handle("shoulder_pan_joint").get_fault() is None
    # recovery: commands resume from the measured position, the controller manager is asked to reset
    sim.clear_fault("elbow_motor")
    mw.reset_fault("elbow_motor")
    assert spin(arm, 1.0, until=lambda: not arm.faulted_joints())
    assert handle.get_fault() is None
    assert arm.consume_reset_request() is True and arm.consume_reset_request() is False
    spin(arm, 0.05)
    assert len(calls) + len(pos_calls) > sent_before
    assert mw.motor("elbow_motor").command_mode == ControlMode.POSITION


def test_healthy_motor_of_a_faulted_differential_holds(arm):
    mw = arm.middleware
    spin(arm, 0.05)
    b_position = mw.snapshot()["wrist_b_motor"].position
    calls = spy(mw.motor("wrist_b_motor"), "set_command")
    a_calls = spy(mw.motor("wrist_a_motor"), "set_command")
    sim_of(mw).firmware_of("wrist_a_motor").set_fault("wrist_a_motor", "error_flag", 3)
    assert spin(arm, 1.0, until=lambda: "wrist_3_joint" in arm.faulted_joints())
    assert set(arm.faulted_joints()) == {"wrist_2_joint", "wrist_3_joint"}
    assert "error code 0x03" in arm.faulted_joints()["wrist_2_joint"]
    n_a = len(a_calls)
    spin(arm, 0.05)
    assert len(a_calls) == n_a
    assert calls[-1][0] == ControlMode.POSITION and calls[-1][1] == pytest.approx(b_position, abs=0.01)


def test_published_diagnostics_levels(make_hw):
    """What the node publishes for a MiddlewareRobotHW, from its one builder of motor statuses."""
    from rospy_control.adapter.diagnostics import ERROR, OK, WARN, DriverDiagnostics

    xml = hardware(motor("m1", 1, 'joint="j1" max_temperature="40"'), motor("m2", 2, 'joint="j2"'),
                   '<unit name="touch" type="rospy_control/ContactSensor" channel="bus" can_id="0x30" '
                   'frame_id="foot"><simulation in_contact="true"/></unit>')
    hw = make_hw(xml, urdf(joint("j1"), joint("j2")))
    spin(hw, 0.05)
    diag = DriverDiagnostics(hw.middleware, "/driver", robot_hw=hw)
    records = {s.name: s for s in diag.build().status}
    m1, m2 = records["driver: motor m1"], records["driver: motor m2"]
    assert m1.level == WARN and "temperature 35 C close to max_temperature 40 C" in m1.message  # sim: 35 C
    assert m2.level == OK and m2.message == "POSITION"
    assert m2.hardware_id == "bus id 0x2"
    values = {kv.key: kv.value for kv in m2.values}
    assert values["j2 interface"] == "hold" and values["temperature"] == "35"
    assert records["driver: contact touch"].level == OK
    assert records["driver: robot_hw"].level != ERROR
    status = hw.status()
    assert status["motors"]["m2"]["temperature"] == 35.0 and status["motors"]["m2"]["mode"] == "POSITION"
    assert status["sensors"]["touch"]["frame_id"] == "foot"


def test_a_joint_whose_motor_is_not_enabled_yet_is_not_ready_and_restarts_when_it_is(make_hw, caplog):
    """The middleware was started without waiting: an ODrive axis that reports its position but
    enters closed loop only later.  Its joint is not ready (no commands, controllers see why) and,
    once the axis is enabled, restarts from the measured position like a recovered one."""
    from rospy_control.hardware_interface import NOT_READY
    xml = ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="500" '
           'fault_timeout="0.1"><simulation rate="2000"/></channel>'
           '<unit name="a1" type="rospy_control/OdriveAxis" channel="bus" node_id="1" joint="j1" '
           'firmware="0.6" '
           'heartbeat_rate="0.02" pos_gain="40" vel_gain="2" vel_integrator_gain="0">'
           '<simulation inertia="0.01" damping="0.05" friction="0.02" state_delay="0.6"/></unit>'
           '</hardware>')
    hw = make_hw(xml, urdf(joint("j1")), start=False)
    mw = hw.middleware
    mw.start(wait=False)
    axis = mw.motor("a1")
    sent = spy(axis, "set_command") + spy(axis, "set_position")
    position_of = spy(axis, "position_setter")
    assert spin(hw, 2.0, until=lambda: mw.snapshot()["a1"].received)
    assert not mw.snapshot()["a1"].enabled
    hw.start()                                    # the RobotHW's first read and write
    handle = hw.get(PositionJointInterface).get_handle("j1")
    fault = handle.get_fault()
    assert fault == NOT_READY + "motor(s) 'a1' not enabled yet (starting up)", fault
    assert hw.faulted_joints() == {}              # not a fault: nothing to reset
    spin(hw, 0.1)
    assert not sent and not position_of           # no command before the axis can follow
    assert hw.consume_reset_request() is False
    with caplog.at_level(logging.INFO):
        assert spin(hw, 3.0, until=lambda: handle.get_fault() is None)
    assert mw.snapshot()["a1"].enabled
    assert hw.consume_reset_request() is True and hw.consume_reset_request() is False
    assert "joint(s) j1: motors enabled; commands start from the measured position" in caplog.text
    spin(hw, 0.05)
    assert handle.get_fault() is None


def test_a_motor_silent_from_power_on_restarts_its_joint_once_when_its_fault_is_reset(make_hw, caplog):
    """It answers for the first time during the reset's probe, still in FAULT: that is not "enabled
    after start-up" (no restart while the probe runs); the recovery restarts the joint, once."""
    xml = hardware(motor("m1", 1, 'joint="j1"'), motor("m2", 2, 'joint="j2"', sim='fault="silent"'))
    hw = make_hw(xml, urdf(joint("j1"), joint("j2")))
    mw = hw.middleware
    assert spin(hw, 2.0, until=lambda: "j2" in hw.faulted_joints())
    handle = hw.get(PositionJointInterface).get_handle("j2")
    assert "no reply" in handle.get_fault()
    assert hw.consume_reset_request() is False
    sim_of(mw).firmware_of("m2").clear_fault("m2")
    ticket = mw.motor("m2").reset_fault()
    requests = []
    with caplog.at_level(logging.INFO):
        assert spin(hw, 2.0, before_write=lambda: requests.append(hw.consume_reset_request()),
                    until=lambda: not hw.faulted_joints())
        spin(hw, 0.1, before_write=lambda: requests.append(hw.consume_reset_request()))
    assert mw.motor("m2").reset_outcome(ticket) is not None
    assert requests.count(True) == 1, requests
    assert handle.get_fault() is None
    assert "motors back from FAULT" in caplog.text
    assert "motors enabled" not in caplog.text
