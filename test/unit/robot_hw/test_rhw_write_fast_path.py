"""The write path's shortcut for one joint behind a SimpleTransmission in a position interface gives
what the general path gives: the same motor Command, actuator data, setpoint and limit state, for
commands inside the limits, beyond them (clamped) and non-finite (held)."""
from __future__ import annotations

import math

import pytest

from rospy_control.hardware_interface import PositionJointInterface, SwitchState
from rospy_control.robot_hw import _writer

from robot_hw_testutil import DT, hardware, info, joint, motor, simple, spin, switch, urdf


def _state(hw, name, mname):
    j = hw._rec.joints[name]
    a = hw._rec.acts_by_name[mname]
    handles = j.handles["position"]
    return (a.motor._cmd_buf.read_from_rt(), a.data.command_position, a.data.command_velocity,
            j.setpoint, j.data.command_position, [h._prev for h in handles])


@pytest.mark.parametrize("direction,reduction,offset", [(1, 1.0, 0.0), (-1, 2.0, 0.1), (1, -3.5, -0.4)])
def test_shortcut_and_general_path_write_the_same(make_hw, monkeypatch, direction, reduction, offset):
    xml = hardware(motor("m", 1, f'direction="{direction}"', sim='initial_position="0.3"'))
    text = urdf(joint("j", limit='lower="-1" upper="1" velocity="5" effort="10"'),
                simple("t", "j", "m", reduction=reduction, offset=offset))
    hw = make_hw(xml, text, {"hold_mode": "position"})
    assert switch(hw, [info("pos", PositionJointInterface, "j")]) == [SwitchState.DONE]
    spin(hw, 0.05)
    hw.read(0.0, DT)
    j = hw._rec.joints["j"]
    h = hw.get(PositionJointInterface).get_handle("j")
    # inside, beyond the velocity bound, beyond the position limit, NaN, inf, back inside
    for command in (0.05, 0.5, 5.0, -5.0, math.nan, math.inf, 0.2, 0.0):
        saved = (j.setpoint, [lh._prev for lh in j.handles["position"]])
        results = []
        for shortcut in (True, False):
            j.setpoint = saved[0]
            for lh, prev in zip(j.handles["position"], saved[1]):
                lh._prev = prev
            h.set_command(command)
            if not shortcut:
                monkeypatch.setattr(j.group, "simple", None)  # the general path for this group
            hw.write(0.0, DT)
            monkeypatch.undo()
            results.append(_state(hw, "j", "m"))
        fast, general = results
        assert fast == general, command
        assert all(math.isfinite(v) for v in fast[1:4])


def test_shortcut_is_taken_for_the_common_case(make_hw, monkeypatch):
    # guards the comparison above: the shortcut really runs for this configuration
    xml = hardware(motor("m", 1))
    hw = make_hw(xml, urdf(joint("j"), simple("t", "j", "m", reduction=2.0)), {"hold_mode": "position"})
    assert switch(hw, [info("pos", PositionJointInterface, "j")]) == [SwitchState.DONE]
    spin(hw, 0.03)
    assert hw._rec.joints["j"].group.simple is not None
    calls = []
    orig = _writer.Writer._write_position

    def counting(self, *args):
        calls.append(args)
        return orig(self, *args)

    monkeypatch.setattr(_writer.Writer, "_write_position", counting)
    before = hw._rec.acts_by_name["m"].motor.command_count
    hw.read(0.0, DT)
    hw.write(0.0, DT)
    assert calls == []                                              # not the general path
    assert hw._rec.acts_by_name["m"].motor.command_count == before + 1  # and the motor got a command
