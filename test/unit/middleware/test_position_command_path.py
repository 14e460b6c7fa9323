"""set_command(POSITION, ...) of a request/reply motor (the control loop's per-cycle call) stores the
Command of the motor's own frame, rejects non-finite values and honours the unit's capabilities."""
from __future__ import annotations

import math

import pytest

from rospy_control.middleware import ControlMode, Motor
from rospy_control.devices import UnsupportedCommand
from rospy_control.devices.request_reply import Command


def _motor(**kw):
    m = Motor("m", 1, **kw)
    m.position_kp, m.position_kd = 25.0, 0.7
    return m


@pytest.mark.parametrize("direction,offset", [(1, 0.0), (-1, 0.25), (1, -1.5)])
def test_position_command_in_the_motor_frame(direction, offset):
    m = _motor(direction=direction)
    m.zero_offset = offset
    m.set_command(ControlMode.POSITION, 0.8)
    assert m._cmd_buf.read_from_rt() == Command(ControlMode.POSITION, direction * 0.8 + offset,
                                                0.0, 0.0, 25.0, 0.7)
    # the same Command as set_position without feed-forward
    m.set_position(0.8)
    expected = m._cmd_buf.read_from_rt()
    m.set_command(ControlMode.POSITION, 0.8)
    assert m._cmd_buf.read_from_rt() == expected


@pytest.mark.parametrize("value,effort",
                         [(math.nan, 0.0), (math.inf, 0.0), (0.3, math.nan), (-math.inf, 1.0)])
def test_non_finite_position_command_is_rejected_and_the_previous_kept(value, effort):
    m = _motor()
    m.set_command(ControlMode.POSITION, 0.4)
    before = m._cmd_buf.read_with_sequence()
    m.set_command(ControlMode.POSITION, value, effort)
    assert m._cmd_buf.read_with_sequence() == before
    assert m.rejected_commands == 1


def test_a_unit_without_position_mode_refuses_it():
    m = _motor()
    m.CAPABILITIES = m.CAPABILITIES._replace(modes=frozenset((ControlMode.NONE, ControlMode.EFFORT)))
    with pytest.raises(UnsupportedCommand):
        m.set_command(ControlMode.POSITION, 0.1)


class _Recording(Motor):
    """A subclass with its own ``_store`` (a device that sees every command)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.stored = []

    def _store(self, command):
        self.stored.append(command)
        super()._store(command)


def test_a_subclass_store_still_sees_position_commands():
    m = _Recording("m", 1)
    m.set_command(ControlMode.POSITION, 0.5)
    assert [c.position for c in m.stored] == [0.5]


@pytest.mark.parametrize("direction,offset", [(1, 0.0), (-1, 0.25)])
def test_the_bound_position_setter_does_what_set_command_does(direction, offset):
    m = _motor(direction=direction)
    m.zero_offset = offset
    send = m.position_setter()
    m.set_command(ControlMode.POSITION, 0.8)
    seq, expected = m._cmd_buf.read_with_sequence()
    send(0.8)
    assert m._cmd_buf.read_with_sequence() == (seq + 1, expected)   # a new command, the same Command
    m.position_kp, m.zero_offset = 30.0, offset + 0.1                 # read at each call, not bound
    send(0.8)
    assert m._cmd_buf.read_from_rt() == Command(ControlMode.POSITION, direction * 0.8 + offset + 0.1,
                                                0.0, 0.0, 30.0, 0.7)
    before = m._cmd_buf.read_with_sequence()
    for bad in (math.nan, math.inf):
        send(bad)
    assert m._cmd_buf.read_with_sequence() == before and m.rejected_commands == 2


def test_a_subclass_that_changes_the_command_path_gets_a_setter_through_it():
    class Offsetting(Motor):
        def set_command(self, mode, value=0.0, effort=0.0):
            super().set_command(mode, value + 1.0, effort)

    r = _Recording("r", 1)
    r.position_setter()(0.5)
    assert [c.position for c in r.stored] == [0.5]
    o = Offsetting("o", 2)
    o.position_setter()(0.5)
    assert o._cmd_buf.read_from_rt().position == 1.5
