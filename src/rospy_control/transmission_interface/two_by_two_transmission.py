"""``TwoByTwoTransmission``: what the two-actuator, two-joint transmissions share."""
from __future__ import annotations

from typing import List, Sequence

from rospy_control.exceptions import TransmissionInterfaceError
from rospy_control.transmission_interface.transmission import ActuatorSensorTransmission, check_reduction

__all__ = ["TwoByTwoTransmission", "check_pair"]


def check_pair(values: Sequence[float], what: str, name: str, reduction: bool = True) -> List[float]:
    vals = list(values)
    if len(vals) != 2:
        raise TransmissionInterfaceError(f"{name}: {what} must have 2 elements, got {len(vals)}.")
    if reduction:
        return [check_reduction(v, f"{what}[{i}]", name) for i, v in enumerate(vals)]
    return [float(v) for v in vals]


class TwoByTwoTransmission(ActuatorSensorTransmission):
    """Base of the two-actuator, two-joint transmissions (differential, four-bar linkage).

    Holds the validated reduction and offset pairs.  In both, a position maps like a velocity
    shifted by the joint offsets, so a subclass implements the effort and velocity mappings and
    inherits the position ones; absolute encoders map like positions, torque sensors like efforts.

    :raises TransmissionInterfaceError: vectors not of size 2, or a zero reduction.
    """

    num_actuators = 2
    num_joints = 2

    def __init__(self, actuator_reduction: Sequence[float], joint_reduction: Sequence[float],
                 joint_offset: Sequence[float] = (0.0, 0.0)) -> None:
        name = type(self).__name__
        self.actuator_reduction = check_pair(actuator_reduction, "actuator_reduction", name)
        self.joint_reduction = check_pair(joint_reduction, "joint_reduction", name)
        self.joint_offset = check_pair(joint_offset, "joint_offset", name, reduction=False)

    def get_actuator_reduction(self) -> List[float]:
        return list(self.actuator_reduction)

    def get_joint_reduction(self) -> List[float]:
        return list(self.joint_reduction)

    def get_joint_offset(self) -> List[float]:
        return list(self.joint_offset)

    def actuator_to_joint_position(self, values: Sequence[float]) -> List[float]:
        j1, j2 = self.actuator_to_joint_velocity(self._acts(values, "actuator_to_joint_position"))
        return [j1 + self.joint_offset[0], j2 + self.joint_offset[1]]

    def joint_to_actuator_position(self, values: Sequence[float]) -> List[float]:
        j1, j2 = self._jnts(values, "joint_to_actuator_position")
        return self.joint_to_actuator_velocity([j1 - self.joint_offset[0], j2 - self.joint_offset[1]])
