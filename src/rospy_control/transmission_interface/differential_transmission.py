"""``DifferentialTransmission``: two actuators drive two joints through a differential."""
from __future__ import annotations

from typing import List, Sequence

from rospy_control.transmission_interface.two_by_two_transmission import TwoByTwoTransmission, check_pair

# TwoByTwoTransmission and check_pair lived here before; still importable from this module
__all__ = ["DifferentialTransmission", "TwoByTwoTransmission", "check_pair"]


class DifferentialTransmission(TwoByTwoTransmission):
    """Two actuators, two joints (e.g. a wrist's pitch and roll).

    With actuator reductions na1, na2, joint reductions nj1, nj2 and joint offsets off1, off2
    (index 1/2 = role actuator1/actuator2, joint1/joint2):

    Actuator → joint:

    * τj1 = nj1·(na1·τa1 + na2·τa2),  τj2 = nj2·(na1·τa1 − na2·τa2)            (N·m)
    * ẋj1 = (ẋa1/na1 + ẋa2/na2) / (2·nj1),  ẋj2 = (ẋa1/na1 − ẋa2/na2) / (2·nj2)  (rad/s)
    * xj1 = (xa1/na1 + xa2/na2) / (2·nj1) + off1,  xj2 = (xa1/na1 − xa2/na2) / (2·nj2) + off2 (rad)

    Joint → actuator:

    * τa1 = (τj1/nj1 + τj2/nj2) / (2·na1),  τa2 = (τj1/nj1 − τj2/nj2) / (2·na2)
    * ẋa1 = na1·(nj1·ẋj1 + nj2·ẋj2),  ẋa2 = na2·(nj1·ẋj1 − nj2·ẋj2)
    * xa1 = na1·(nj1·(xj1−off1) + nj2·(xj2−off2)),  xa2 = na2·(nj1·(xj1−off1) − nj2·(xj2−off2))

    Absolute encoders map like positions, unless ``ignore_transmission_absolute_encoder`` is set:
    then the encoders sit on the joints and joint absolute positions are the actuator values swapped
    (j1 ← a2, j2 ← a1), unscaled.  Torque sensors map like efforts.

    :raises TransmissionInterfaceError: vectors not of size 2, or a zero reduction.
    """

    def __init__(self, actuator_reduction: Sequence[float], joint_reduction: Sequence[float],
                 joint_offset: Sequence[float] = (0.0, 0.0),
                 ignore_transmission_absolute_encoder: bool = False) -> None:
        super().__init__(actuator_reduction, joint_reduction, joint_offset)
        self.ignore_transmission_absolute_encoder = bool(ignore_transmission_absolute_encoder)

    def actuator_to_joint_effort(self, values: Sequence[float]) -> List[float]:
        a1, a2 = self._acts(values, "actuator_to_joint_effort")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [nj1 * (na1 * a1 + na2 * a2), nj2 * (na1 * a1 - na2 * a2)]

    def actuator_to_joint_velocity(self, values: Sequence[float]) -> List[float]:
        a1, a2 = self._acts(values, "actuator_to_joint_velocity")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [(a1 / na1 + a2 / na2) / (2.0 * nj1), (a1 / na1 - a2 / na2) / (2.0 * nj2)]

    def joint_to_actuator_effort(self, values: Sequence[float]) -> List[float]:
        j1, j2 = self._jnts(values, "joint_to_actuator_effort")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [(j1 / nj1 + j2 / nj2) / (2.0 * na1), (j1 / nj1 - j2 / nj2) / (2.0 * na2)]

    def joint_to_actuator_velocity(self, values: Sequence[float]) -> List[float]:
        j1, j2 = self._jnts(values, "joint_to_actuator_velocity")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [na1 * (nj1 * j1 + nj2 * j2), na2 * (nj1 * j1 - nj2 * j2)]

    def actuator_to_joint_absolute_position(self, values: Sequence[float]) -> List[float]:
        if self.ignore_transmission_absolute_encoder:
            a1, a2 = self._acts(values, "actuator_to_joint_absolute_position")
            return [a2, a1]
        return super().actuator_to_joint_absolute_position(values)
