"""``SimpleTransmission``: one actuator, one joint, a gear (or belt) and an offset."""
from __future__ import annotations

from typing import List, Sequence

from rospy_control.transmission_interface.transmission import ActuatorSensorTransmission, check_reduction

__all__ = ["SimpleTransmission"]


class SimpleTransmission(ActuatorSensorTransmission):
    """Single actuator driving a single joint through a reduction ``n`` with a joint offset.

    Actuator → joint (effort N·m, velocity rad/s, position rad):

    * τj = n · τa
    * ẋj = ẋa / n
    * xj = xa / n + offset   (absolute encoder: same as position; torque sensor: same as effort)

    Joint → actuator:

    * τa = τj / n
    * ẋa = n · ẋj
    * xa = n · (xj − offset)

    A negative ``n`` means the joint turns the other way round from the actuator.

    :param reduction: n, must be non-zero.
    :param joint_offset: joint position (rad or m) when the actuator position is zero.
    :raises TransmissionInterfaceError: zero (or non-numeric, non-finite) reduction.
    """

    num_actuators = 1
    num_joints = 1

    def __init__(self, reduction: float, joint_offset: float = 0.0) -> None:
        self.reduction = check_reduction(reduction, "reduction", "SimpleTransmission")
        self.joint_offset = float(joint_offset)

    def get_mechanical_reduction(self) -> float:
        return self.reduction

    def get_joint_offset(self) -> float:
        return self.joint_offset

    def actuator_to_joint_effort(self, values: Sequence[float]) -> List[float]:
        (a,) = self._acts(values, "actuator_to_joint_effort")
        return [a * self.reduction]

    def actuator_to_joint_velocity(self, values: Sequence[float]) -> List[float]:
        (a,) = self._acts(values, "actuator_to_joint_velocity")
        return [a / self.reduction]

    def actuator_to_joint_position(self, values: Sequence[float]) -> List[float]:
        (a,) = self._acts(values, "actuator_to_joint_position")
        return [a / self.reduction + self.joint_offset]

    def joint_to_actuator_effort(self, values: Sequence[float]) -> List[float]:
        (j,) = self._jnts(values, "joint_to_actuator_effort")
        return [j / self.reduction]

    def joint_to_actuator_velocity(self, values: Sequence[float]) -> List[float]:
        (j,) = self._jnts(values, "joint_to_actuator_velocity")
        return [j * self.reduction]

    def joint_to_actuator_position(self, values: Sequence[float]) -> List[float]:
        (j,) = self._jnts(values, "joint_to_actuator_position")
        return [(j - self.joint_offset) * self.reduction]
