"""``FourBarLinkageTransmission``: two actuators, two joints, the second joint coupled to the first."""
from __future__ import annotations

from typing import List, Sequence

from rospy_control.transmission_interface.two_by_two_transmission import TwoByTwoTransmission

__all__ = ["FourBarLinkageTransmission"]


class FourBarLinkageTransmission(TwoByTwoTransmission):
    """Actuator 1 drives joint 1; actuator 2 drives joint 2 through a four-bar linkage whose motion
    also depends on joint 1.

    Actuator → joint (na = actuator reductions, nj = joint reductions, off = joint offsets):

    * τj1 = nj1·na1·τa1,  τj2 = nj2·(na2·τa2 − nj1·na1·τa1)                          (N·m)
    * ẋj1 = ẋa1 / (nj1·na1),  ẋj2 = (ẋa2/na2 − ẋa1/(nj1·na1)) / nj2                  (rad/s)
    * xj1 = xa1 / (nj1·na1) + off1,  xj2 = (xa2/na2 − xa1/(nj1·na1)) / nj2 + off2      (rad)

    Joint → actuator:

    * τa1 = τj1 / (nj1·na1),  τa2 = (τj1 + τj2/nj2) / na2
    * ẋa1 = nj1·na1·ẋj1,  ẋa2 = na2·(ẋj1 + nj2·ẋj2)
    * xa1 = nj1·na1·(xj1 − off1),  xa2 = na2·((xj1 − off1) + nj2·(xj2 − off2))

    Absolute encoders map like positions, torque sensors like efforts.

    :raises TransmissionInterfaceError: vectors not of size 2, or a zero reduction.
    """

    def actuator_to_joint_effort(self, values: Sequence[float]) -> List[float]:
        a1, a2 = self._acts(values, "actuator_to_joint_effort")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [nj1 * na1 * a1, nj2 * (na2 * a2 - nj1 * na1 * a1)]

    def actuator_to_joint_velocity(self, values: Sequence[float]) -> List[float]:
        a1, a2 = self._acts(values, "actuator_to_joint_velocity")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [a1 / (nj1 * na1), (a2 / na2 - a1 / (nj1 * na1)) / nj2]

    def joint_to_actuator_effort(self, values: Sequence[float]) -> List[float]:
        j1, j2 = self._jnts(values, "joint_to_actuator_effort")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [j1 / (nj1 * na1), (j1 + j2 / nj2) / na2]

    def joint_to_actuator_velocity(self, values: Sequence[float]) -> List[float]:
        j1, j2 = self._jnts(values, "joint_to_actuator_velocity")
        (na1, na2), (nj1, nj2) = self.actuator_reduction, self.joint_reduction
        return [nj1 * na1 * j1, na2 * (j1 + nj2 * j2)]
