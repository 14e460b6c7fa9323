"""The device contract end to end with the device of docs/writing_a_device.md: ExampleMotor, built from a
hardware XML by its type name, driven through the RobotHW over a python-can virtual bus against its
simulated counterpart (ExampleMotorPeer, a peer on the bus, not inside the driver)."""
from __future__ import annotations

import itertools
import os
import re

import pytest

from rospy_control.testing.sim_rig import simulated_middleware
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import (
    PositionJointInterface, SwitchState, VelocityJointInterface,
)
from rospy_control.middleware import ActuatorUnit, ControlMode
from rospy_control.devices.example import codec as example
from rospy_control.simulator.example import ExampleDeviceModel, ExampleMotorPeer
from rospy_control.devices import CanUnit, ExampleMotor, RequestReplyActuator
from rospy_control.testing import wait_until

from robot_hw_testutil import info, joint, position, simple, spin, switch, urdf

_channels = itertools.count()

IFACES = ("PositionJointInterface", "VelocityJointInterface")


def hardware_xml(channel: str, gains: str = 'position_kp="40" position_kd="1.0" velocity_kd="0.5"',
                 extra: str = "") -> str:
    """Two example motors on a virtual bus (no <simulation>: the driver opens the bus as on hardware)."""
    return (f'<hardware name="ex" command_timeout="0"><channel name="bus" interface="virtual" '
            f'channel="{channel}" rate="500" fault_timeout="0.05"/>'
            f'<unit name="m1" type="rospy_control/ExampleMotor" channel="bus" can_id="1" {extra}>'
            f'<gains {gains}/></unit>'
            '<unit name="m2" type="rospy_control/ExampleMotor" channel="bus" can_id="2" direction="-1">'
            f'<gains {gains}/></unit></hardware>')


def robot_urdf() -> str:
    return urdf(joint("j1"), joint("j2"), simple("t1", "j1", "m1", ifaces=IFACES),
                simple("t2", "j2", "m2", reduction=2.0, ifaces=IFACES))


@pytest.fixture
def rig(make_hw):
    """(hw, peer): the RobotHW on two ExampleMotors and their simulated counterparts."""
    channel = f"example-{os.getpid()}-{next(_channels)}"
    peer = ExampleMotorPeer("virtual", channel, [ExampleDeviceModel(1, position=0.2),
                                                 ExampleDeviceModel(2, position=-0.4)])
    try:
        hw = make_hw(hardware_xml(channel), robot_urdf())
        yield hw, peer
    finally:
        peer.close()


# -- the codec ---------------------------------------------------------------------------------------

def test_example_codec_is_byte_exact_and_saturates():
    cmd = example.ExampleCommand(example.MODE_POSITION, 1.234, -0.5, 0.0, 40.0, 1.0)
    data = example.pack_command(cmd)
    assert data == bytes.fromhex("01 01 04d2 ffce 28 32".replace(" ", ""))
    assert example.unpack_command(data) == (1, 1.234, -0.5, 0.0, 40.0, 1.0)
    # beyond the fields: saturated, never wrapped
    big = example.pack_command(example.ExampleCommand(example.MODE_POSITION, 40.0, -400.0, 0.0, 300.0, 9.0))
    assert big == bytes.fromhex("0101" "7fff" "8000" "ff" "ff")
    assert example.pack_command(example.ExampleCommand(example.MODE_EFFORT, effort=-2.5)) == \
        bytes.fromhex("0103ff06000000 00".replace(" ", ""))
    reply = example.pack_reply(example.ExampleReply(True, 1, 3, -0.25, 2.0, 1.5, 41.0))
    assert reply == bytes.fromhex("33" "ff06" "00c8" "0096" "29")
    assert example.unpack_reply(reply) == (True, 1, 3, -0.25, 2.0, 1.5, 41.0)
    assert example.special_frame(example.OP_ENABLE) == bytes.fromhex("0e00000000000000")


# -- the contract -------------------------------------------------------------------------------------

def test_the_contract_is_abstract_and_the_example_implements_it():
    with pytest.raises(TypeError):
        ActuatorUnit("x", 1)  # type: ignore[abstract]
    with pytest.raises(TypeError):
        RequestReplyActuator("x", 1)  # type: ignore[abstract]
    m = ExampleMotor("m", 3)
    assert isinstance(m, ActuatorUnit)
    assert m.supports(ControlMode.POSITION) and not m.supports(ControlMode.MIT)
    assert m.effort_range == (-example.EFFORT_MAX, example.EFFORT_MAX)
    assert m.reply_ids() == (0x103,)
    from rospy_control.devices import UnsupportedCommand
    with pytest.raises(UnsupportedCommand):
        m.set_impedance(0.0, 0.0, 1.0, 0.1, 0.0)


def test_a_unit_written_against_the_former_private_hooks_is_refused():
    with pytest.raises(TypeError, match=r"defines _poll\(\), which the channel no longer calls: .* "
                                        r"override poll\(\)"):
        type("OldUnit", (CanUnit,), {"_poll": lambda self, now: None})


def test_built_from_xml_by_type_name_and_its_gain_ranges_are_checked():
    mw = simulated_middleware(hardware_xml("unused"))
    assert [type(m).__name__ for m in mw.motors()] == ["ExampleMotor", "ExampleMotor"]
    assert mw.motor("m2").direction == -1
    with pytest.raises(ConfigError, match=r"unit 'm1': position_kd=6.0 is outside what the example protocol "
                                          r"can encode \(0.0 \.\. 5\.1\)"):
        simulated_middleware(hardware_xml("unused", gains='position_kd="6"'))


def test_the_step_cap_acts_on_decoded_positions():
    m = ExampleMotor("m", 1, position_kp=40.0)
    m.set_max_position_step(0.0105)
    assert m.max_position_step == pytest.approx(0.010)   # what a mrad field resolves
    m.activate(0.0, True, 0.05, 0.002)
    m.poll(0.0)                                         # enable
    m.on_frame(0x101, example.pack_reply(example.ExampleReply(True, 0, 0, 0.0, 0.0, 0.0, 30.0)), 0.0)
    m.end_cycle(0.001)
    m.set_command(ControlMode.POSITION, 1.0)            # 1 rad from where the motor reported (0)
    sent = [0.0] + [example.unpack_command(bytes(m.poll(0.002 * (k + 1)).data)).position for k in range(150)]
    steps = [b - a for a, b in zip(sent, sent[1:])]
    # a ramp up from the measured position in steps of at most the cap as the frame carries it
    # (whole mrad), none lost
    assert all(0.009 - 1e-9 <= d <= 0.010 + 1e-9 for d in steps[:100]), steps
    assert sent[-1] == 1.0 and m.limited_frames >= 100
    m.set_command(ControlMode.POSITION, 0.0)
    sent = [1.0] + [example.unpack_command(bytes(m.poll(0.4 + 0.002 * k).data)).position for k in range(150)]
    steps = [a - b for a, b in zip(sent, sent[1:])]
    # and down again from the last frame sent
    assert all(0.009 - 1e-9 <= d <= 0.010 + 1e-9 for d in steps[:100]), steps
    assert sent[-1] == 0.0 and m.limited_frames >= 200


# -- end to end through the RobotHW -------------------------------------------------------------------

def test_position_and_velocity_through_the_robot_hw(rig):
    hw, peer = rig
    spin(hw, 0.05)
    assert position(hw, "j1") == pytest.approx(0.2, abs=2e-3)
    assert position(hw, "j2") == pytest.approx(0.2, abs=2e-3)   # direction -1, reduction 2
    assert hw.joint_interfaces("j1") == ["hardware_interface::PositionJointInterface",
                                         "hardware_interface::VelocityJointInterface"]
    assert switch(hw, [info("pos", PositionJointInterface, "j1", "j2")])[-1] == SwitchState.DONE
    handles = [hw.get(PositionJointInterface).get_handle(j) for j in ("j1", "j2")]

    def command():
        handles[0].set_command(0.6)
        handles[1].set_command(-0.3)

    assert spin(hw, 3.0, command, until=lambda: abs(position(hw, "j1") - 0.6) < 0.01
                and abs(position(hw, "j2") + 0.3) < 0.01)
    assert peer.devices[2].position == pytest.approx(0.6, abs=0.03)   # motor = -1 * 2 * joint
    assert hw.middleware.snapshot()["m1"].mode == ControlMode.POSITION
    # switch to velocity: the mode is confirmed by the device's replies
    results = switch(hw, [info("vel", VelocityJointInterface, "j1")], [info("pos", PositionJointInterface,
                                                                            "j1", "j2")])
    assert results[-1] == SwitchState.DONE
    assert hw.middleware.snapshot()["m1"].mode == ControlMode.VELOCITY
    vel = hw.get(VelocityJointInterface).get_handle("j1")
    start = position(hw, "j1")
    assert spin(hw, 3.0, lambda: vel.set_command(0.5), until=lambda: position(hw, "j1") > start + 0.1)
    assert peer.devices[1].commands[-1].mode == example.MODE_VELOCITY


def test_a_device_error_is_a_fault_named_as_the_device_names_it_and_resets_once_it_is_gone(rig):
    hw, peer = rig
    spin(hw, 0.05)
    peer.set_error(1, 3)
    assert spin(hw, 2.0, until=lambda: "m1" in hw.faulted_motors())
    assert hw.faulted_motors()["m1"] == "motor reported over-current (error code 3)"
    assert "j1" in hw.faulted_joints() and "j2" not in hw.faulted_joints()
    # while the cause lasts, the reset is refused with the device's reason
    failed = hw.reset_faults(timeout=3.0)
    assert failed["m1"] == "reset failed: motor still reports over-current (error code 3)"
    peer.set_error(1, 0)
    assert hw.reset_faults(timeout=3.0) == {}
    assert spin(hw, 1.0, until=lambda: not hw.faulted_joints())


def test_a_silent_device_faults_and_comes_back_after_a_reset(rig):
    hw, peer = rig
    spin(hw, 0.05)
    peer.set_silent(2, True)
    assert spin(hw, 2.0, until=lambda: "m2" in hw.faulted_motors())
    assert re.match(r"no reply for \d+\.\d ms", hw.faulted_motors()["m2"])
    assert "m1" not in hw.faulted_motors()
    peer.set_silent(2, False)
    assert hw.reset_faults(timeout=3.0) == {}
    assert wait_until(lambda: not hw.middleware.snapshot()["m2"].fault, 2.0)


def test_the_walkthrough_shows_the_shipped_device_and_its_xml_loads():
    """docs/writing_a_device.md quotes ExampleMotor as shipped, and its hardware XML loads as written."""
    import inspect
    from robot_hw_testutil import ROOT
    from rospy_control.devices.example import device as example_motor
    with open(os.path.join(ROOT, "docs", "writing_a_device.md"), encoding="utf-8") as stream:
        text = stream.read()
    source = inspect.getsource(example_motor)
    shown = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    assert shown.strip() and shown in source
    assert shown.startswith("class ExampleMotor(RequestReplyActuator):")
    xml = re.search(r"```xml\n(.*?)```", text, re.S).group(1)
    mw = simulated_middleware(xml)
    assert isinstance(mw.motor("m1"), ExampleMotor) and mw.motor("m1").joint == "j1"


class PositionOnlyMotor(ExampleMotor):
    """An example-protocol device whose firmware only takes position commands (and limp)."""

    CAPABILITIES = ExampleMotor.CAPABILITIES._replace(
        modes=frozenset((ControlMode.NONE, ControlMode.POSITION)))


class NoFeedForwardMotor(ExampleMotor):
    """An example-protocol device without a velocity feed-forward in its position command."""

    CAPABILITIES = ExampleMotor.CAPABILITIES._replace(position_velocity_ff=False)


def _with_type(xml: str, cls: type) -> str:
    return xml.replace('type="rospy_control/ExampleMotor" channel="bus" can_id="1"',
                       f'type="test_example_device:{cls.__name__}" channel="bus" can_id="1"')


def test_the_robot_hw_offers_only_what_the_devices_can_carry(make_hw):
    """An interface whose mode a device lacks, or a hold mode it lacks, is a start-up error, not a
    command that fails (or is dropped) in the control loop."""
    xml = _with_type(hardware_xml("unused"), PositionOnlyMotor)
    with pytest.raises(ConfigError, match=r"transmission 't1' .* offers hardware_interface::"
                                          r"VelocityJointInterface for joint 'j1', but its actuator 'm1' "
                                          r"\(PositionOnlyMotor\) has no VELOCITY mode"):
        make_hw(xml, robot_urdf(), start=False)
    only_position = urdf(joint("j1"), joint("j2"),
                         simple("t1", "j1", "m1", ifaces=("PositionJointInterface",)),
                         simple("t2", "j2", "m2", ifaces=("PositionJointInterface",)))
    with pytest.raises(ConfigError, match=r"hold_mode: 'damping' needs DAMPING mode, which actuator 'm1' "
                                          r"\(PositionOnlyMotor\) does not have"):
        make_hw(xml, only_position, {"hold_mode": "damping"}, start=False)
    hw = make_hw(xml, only_position, start=False)
    assert hw.joint_interfaces("j1") == ["hardware_interface::PositionJointInterface"]
    with pytest.raises(ConfigError, match=r"offers hardware_interface::PosVelJointInterface for joint 'j1', "
                                          r"but its actuator 'm1' \(NoFeedForwardMotor\) has no velocity "
                                          r"feed-forward in its position command"):
        make_hw(_with_type(hardware_xml("unused"), NoFeedForwardMotor), robot_urdf(),
                {"posvel_interface": True}, start=False)
