"""Protocol-level simulated devices on the simulated joint (rospy_control.simulator.joint)."""
from __future__ import annotations

import can
import pytest

from rospy_control.devices.damiao import codec as dm
from rospy_control.devices.odrive import codec as od
from rospy_control.simulator.damiao import SimulatedDamiao
from rospy_control.simulator.device import Impedance
from rospy_control.simulator.joint import JointModel, SimulatedProtocolMotor
from rospy_control.simulator.odrive import SimulatedOdrive

DT = 0.0005
R = dm.MODEL_RANGES["DM4310"]


def _run(m, t0: float, t1: float) -> None:
    """Advance in 0.1 s pieces, as the firmware thread does (one call integrates at most 1 s)."""
    t = t0
    while t < t1:
        t = min(t1, t + 0.1)
        m.advance(t, DT)


def _std(aid: int, data: bytes = b"", remote: bool = False) -> can.Message:
    return can.Message(arbitration_id=aid, is_extended_id=False, data=data, is_remote_frame=remote)


def test_damiao_holds_against_a_load_with_the_stiffness_it_was_given():
    m = SimulatedProtocolMotor(SimulatedDamiao("j", 1, 0x11, R), JointModel(load=-2.0, friction=0.0))
    m.handle_frame(_std(0x01, dm.ENABLE), 0.0, DT)
    m.handle_frame(_std(0x01, dm.pack_mit(0.5, 0.0, 50.0, 1.0, 0.0, R)), 0.0, DT)
    _run(m, 0.0, 3.0)
    out = m.handle_frame(_std(0x7FF, dm.pack_refresh(1)), 3.0, DT)
    r = dm.unpack_reply(out[0].data, R)
    # steady state: kp (p_des - p) = -load -> p = 0.5 - 2/50
    assert r.position == pytest.approx(0.46, abs=0.005)
    assert r.torque == pytest.approx(2.0, abs=0.05)
    assert m.joint_position() == pytest.approx(0.46, abs=0.005)


def test_limp_joint_falls_to_its_stop_and_an_error_makes_it_limp():
    m = SimulatedProtocolMotor(SimulatedDamiao("j", 1, 0x11, R),
                               JointModel(load=-1.0, stop_min=-0.3, stop_max=1.0))
    m.handle_frame(_std(0x01, dm.ENABLE), 0.0, DT)
    m.handle_frame(_std(0x01, dm.pack_mit(0.5, 0.0, 50.0, 1.0, 0.0, R)), 0.0, DT)
    _run(m, 0.0, 2.0)
    assert m.joint_position() > 0.4
    m.device.set_fault("overload")
    _run(m, 2.0, 5.0)
    assert m.joint_position() == -0.3
    out = m.handle_frame(_std(0x7FF, dm.pack_refresh(1)), 5.0, DT)
    assert dm.unpack_reply(out[0].data, R).fault == "overload"


def test_torque_limit_of_the_device_and_of_the_joint():
    j = JointModel(torque_limit=3.0, friction=0.0)
    j.advance(0.0, DT, lambda p, v: None)
    j.advance(0.01, DT, lambda p, v: Impedance(10.0, 0.0, 100.0, 0.0, 0.0, 5.0))
    assert j.tau == 3.0
    j.advance(0.02, DT, lambda p, v: Impedance(10.0, 0.0, 100.0, 0.0, 0.0, 1.0))
    assert j.tau == 1.0


def test_odrive_on_a_joint_sends_cyclic_estimates_of_the_moving_joint():
    axis = SimulatedOdrive("w", node_id=1, version=od.V05)
    m = SimulatedProtocolMotor(axis, JointModel(friction=0.0))
    m.tick(0.0, DT)
    m.handle_frame(_std(od.arbitration_id(1, od.CMD_SET_AXIS_STATE), od.pack_set_axis_state(8)), 0.0, DT)
    m.handle_frame(_std(od.arbitration_id(1, od.CMD_SET_CONTROLLER_MODE), od.pack_set_controller_mode(2, 1)),
                   0.0, DT)
    m.handle_frame(_std(od.arbitration_id(1, od.CMD_SET_INPUT_VEL), od.pack_set_input_vel(0.5)), 0.0, DT)
    _run(m, 0.0, 6.0)
    frames = m.tick(6.0, DT)   # the velocity integrator removes the damping's steady-state error
    enc = [f for f in frames if f.arbitration_id == od.arbitration_id(1, od.CMD_GET_ENCODER_ESTIMATES)]
    _, vel = od.unpack_encoder_estimates(enc[0].data)
    assert vel == pytest.approx(0.5, abs=0.01)
    assert m.name == "w" and m.fault is None and m.frames == 3
    assert axis.integrator > 0.0


def test_joint_model_validates():
    with pytest.raises(ValueError, match="inertia must be positive"):
        JointModel(inertia=0.0)
    with pytest.raises(ValueError, match="stop_min=1.0 must be below stop_max=0.0"):
        JointModel(stop_min=1.0, stop_max=0.0)


def test_odrive_position_loop_holds_against_gravity_with_its_integrator():
    axis = SimulatedOdrive("w", node_id=1, version=od.V06)
    m = SimulatedProtocolMotor(axis, JointModel(load=-0.3, friction=0.0))
    m.tick(0.0, DT)
    m.handle_frame(_std(od.arbitration_id(1, od.CMD_SET_AXIS_STATE), od.pack_set_axis_state(8)), 0.0, DT)
    m.handle_frame(_std(od.arbitration_id(1, od.CMD_SET_INPUT_POS), od.pack_set_input_pos(0.1)), 0.0, DT)
    _run(m, 0.0, 10.0)
    assert m.joint_position() == pytest.approx(0.1 * 2 * 3.141592653589793, abs=0.01)
    assert axis.integrator == pytest.approx(0.3, abs=0.02)
    m.handle_frame(_std(od.arbitration_id(1, od.CMD_ESTOP)), 10.0, DT)
    assert axis.integrator == 0.0
