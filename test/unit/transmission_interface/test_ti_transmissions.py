"""Simple, differential and four-bar transmissions: formulas, round trips, preconditions."""
from __future__ import annotations

import itertools

import pytest

from rospy_control.transmission_interface import (
    DifferentialTransmission,
    FourBarLinkageTransmission,
    SimpleTransmission,
    TransmissionInterfaceError,
)

REDUCTIONS = [10.0, -10.0, 0.5, -0.5]
OFFSETS = [0.0, 1.0, -1.0]


def approx(values):
    return pytest.approx(values, abs=1e-12)


@pytest.mark.parametrize("cls", [DifferentialTransmission, FourBarLinkageTransmission])
def test_zero_reduction_rejected(cls):
    with pytest.raises(TransmissionInterfaceError, match=r"actuator_reduction\[0\] cannot be zero"):
        cls([0.0, 1.0], [1.0, 1.0])
    with pytest.raises(TransmissionInterfaceError, match=r"joint_reduction\[1\] cannot be zero"):
        cls([1.0, 1.0], [1.0, 0.0])
    with pytest.raises(TransmissionInterfaceError, match="must have 2 elements, got 3"):
        cls([1.0, 1.0, 1.0], [1.0, 1.0])


def test_simple_zero_reduction_rejected():
    with pytest.raises(TransmissionInterfaceError, match="SimpleTransmission: reduction cannot be zero"):
        SimpleTransmission(0.0)


def test_simple_formulas():
    tr = SimpleTransmission(10.0, 1.0)
    assert (tr.num_actuators, tr.num_joints) == (1, 1)
    assert tr.actuator_to_joint_effort([2.0]) == [20.0]
    assert tr.actuator_to_joint_velocity([20.0]) == [2.0]
    assert tr.actuator_to_joint_position([20.0]) == [3.0]
    assert tr.joint_to_actuator_effort([20.0]) == [2.0]
    assert tr.joint_to_actuator_velocity([2.0]) == [20.0]
    assert tr.joint_to_actuator_position([3.0]) == [20.0]
    assert tr.actuator_to_joint_absolute_position([20.0]) == [3.0]
    assert tr.actuator_to_joint_torque_sensor([2.0]) == [20.0]


def test_wrong_sizes_rejected():
    with pytest.raises(TransmissionInterfaceError, match="expected 1 actuator value"):
        SimpleTransmission(2.0).actuator_to_joint_position([1.0, 2.0])
    with pytest.raises(TransmissionInterfaceError, match="expected 2 joint value"):
        DifferentialTransmission([1, 1], [1, 1]).joint_to_actuator_effort([1.0])


@pytest.mark.parametrize("reduction, offset", itertools.product(REDUCTIONS, OFFSETS))
def test_simple_round_trip(reduction, offset):
    tr = SimpleTransmission(reduction, offset)
    for value in (-1.5, 0.0, 2.25):
        assert tr.joint_to_actuator_position(tr.actuator_to_joint_position([value])) == approx([value])
        assert tr.joint_to_actuator_velocity(tr.actuator_to_joint_velocity([value])) == approx([value])
        assert tr.joint_to_actuator_effort(tr.actuator_to_joint_effort([value])) == approx([value])


TWO_BY_TWO = [
    ([10.0, 10.0], [1.0, 1.0], [0.0, 0.0]),
    ([-10.0, 10.0], [1.0, -1.0], [1.0, -1.0]),
    ([10.0, -20.0], [-2.0, 0.5], [0.5, 1.5]),
    ([-0.5, -0.5], [-1.0, -3.0], [-1.0, 0.0]),
]


@pytest.mark.parametrize("cls", [DifferentialTransmission, FourBarLinkageTransmission])
@pytest.mark.parametrize("act_red, jnt_red, off", TWO_BY_TWO)
def test_two_by_two_round_trips(cls, act_red, jnt_red, off):
    tr = cls(act_red, jnt_red, off)
    values = [1.5, -0.75]
    for a2j, j2a in (("actuator_to_joint_position", "joint_to_actuator_position"),
                     ("actuator_to_joint_velocity", "joint_to_actuator_velocity"),
                     ("actuator_to_joint_effort", "joint_to_actuator_effort")):
        assert getattr(tr, j2a)(getattr(tr, a2j)(values)) == approx(values)
        assert getattr(tr, a2j)(getattr(tr, j2a)(values)) == approx(values)


def test_differential_white_box_values():
    tr = DifferentialTransmission([10.0, 20.0], [2.0, 4.0], [0.5, -0.5])
    # moving actuator 1 only
    assert tr.actuator_to_joint_position([10.0, 0.0]) == approx([(1.0 / 4.0) + 0.5, (1.0 / 8.0) - 0.5])
    # both actuators
    assert tr.actuator_to_joint_velocity([10.0, 20.0]) == approx([(1.0 + 1.0) / 4.0, 0.0])
    assert tr.actuator_to_joint_effort([1.0, 1.0]) == approx([2.0 * 30.0, 4.0 * -10.0])
    assert tr.joint_to_actuator_effort([4.0, 8.0]) == approx([(2.0 + 2.0) / 20.0, 0.0])
    assert tr.joint_to_actuator_velocity([1.0, 0.5]) == approx([10.0 * (2.0 + 2.0), 20.0 * (2.0 - 2.0)])
    assert tr.joint_to_actuator_position([0.5, -0.5]) == approx([0.0, 0.0])


def test_differential_absolute_encoder_swap():
    tr = DifferentialTransmission([10.0, 20.0], [2.0, 4.0], [0.5, -0.5],
                                  ignore_transmission_absolute_encoder=True)
    assert tr.actuator_to_joint_absolute_position([1.0, 2.0]) == [2.0, 1.0]
    plain = DifferentialTransmission([10.0, 20.0], [2.0, 4.0], [0.5, -0.5])
    values = [1.0, 2.0]
    assert plain.actuator_to_joint_absolute_position(values) == plain.actuator_to_joint_position(values)
    assert plain.actuator_to_joint_torque_sensor([1.0, 2.0]) == plain.actuator_to_joint_effort([1.0, 2.0])


def test_four_bar_white_box_values():
    tr = FourBarLinkageTransmission([10.0, 20.0], [2.0, 4.0], [0.5, -0.5])
    # actuator 1 moves joint 1 and, through the linkage, joint 2 the other way
    assert tr.actuator_to_joint_position([20.0, 0.0]) == approx([1.0 + 0.5, -1.0 / 4.0 - 0.5])
    assert tr.actuator_to_joint_velocity([0.0, 20.0]) == approx([0.0, 1.0 / 4.0])
    assert tr.actuator_to_joint_effort([1.0, 1.0]) == approx([20.0, 4.0 * (20.0 - 20.0)])
    assert tr.joint_to_actuator_effort([20.0, 4.0]) == approx([1.0, (20.0 + 1.0) / 20.0])
    assert tr.joint_to_actuator_velocity([1.0, 1.0]) == approx([20.0, 20.0 * 5.0])
    assert tr.joint_to_actuator_position([0.5, -0.5]) == approx([0.0, 0.0])
