"""Transmission base class (``transmission_interface::Transmission``).

A transmission maps actuator-space values to joint-space values and back.  Every mapping takes a
sequence of floats (``num_actuators`` or ``num_joints`` long, ordered by role) and returns a new list.
Units: positions rad (or m), velocities rad/s (or m/s), efforts N·m (or N), in the space named.
"""
from __future__ import annotations

from typing import List, Sequence

from rospy_control.exceptions import TransmissionInterfaceError

__all__ = ["Transmission", "ActuatorSensorTransmission", "check_reduction"]


def check_reduction(value: float, what: str, transmission: str) -> float:
    """``float(value)``; raises :class:`TransmissionInterfaceError` for zero or non-finite values."""
    try:
        reduction = float(value)
    except (TypeError, ValueError):
        raise TransmissionInterfaceError(f"{transmission}: {what} must be a number, got {value!r}.") from None
    if reduction == 0.0:
        raise TransmissionInterfaceError(f"{transmission}: {what} cannot be zero.")
    if reduction != reduction or reduction in (float("inf"), float("-inf")):
        raise TransmissionInterfaceError(f"{transmission}: {what} must be finite, got {value!r}.")
    return reduction


class Transmission:
    """Abstract transmission.  Subclasses implement the six position/velocity/effort mappings and
    set ``num_actuators`` / ``num_joints``."""

    num_actuators = 0
    num_joints = 0

    # -- helpers --------------------------------------------------------------------------------
    def _check(self, values: Sequence[float], expected: int, space: str, method: str) -> List[float]:
        vals = [float(v) for v in values]
        if len(vals) != expected:
            raise TransmissionInterfaceError(
                f"{type(self).__name__}.{method}: expected {expected} {space} value(s), got {len(vals)}."
            )
        return vals

    def _acts(self, values: Sequence[float], method: str) -> List[float]:
        return self._check(values, self.num_actuators, "actuator", method)

    def _jnts(self, values: Sequence[float], method: str) -> List[float]:
        return self._check(values, self.num_joints, "joint", method)

    # -- interface ------------------------------------------------------------------------------
    def actuator_to_joint_effort(self, values: Sequence[float]) -> List[float]:
        raise NotImplementedError

    def actuator_to_joint_velocity(self, values: Sequence[float]) -> List[float]:
        raise NotImplementedError

    def actuator_to_joint_position(self, values: Sequence[float]) -> List[float]:
        raise NotImplementedError

    def joint_to_actuator_effort(self, values: Sequence[float]) -> List[float]:
        raise NotImplementedError

    def joint_to_actuator_velocity(self, values: Sequence[float]) -> List[float]:
        raise NotImplementedError

    def joint_to_actuator_position(self, values: Sequence[float]) -> List[float]:
        raise NotImplementedError

    def has_actuator_to_joint_absolute_position(self) -> bool:
        """True if :meth:`actuator_to_joint_absolute_position` is supported."""
        return False

    def has_actuator_to_joint_torque_sensor(self) -> bool:
        """True if :meth:`actuator_to_joint_torque_sensor` is supported."""
        return False

    def actuator_to_joint_absolute_position(self, values: Sequence[float]) -> List[float]:
        raise TransmissionInterfaceError(
            f"{type(self).__name__} does not support actuator to joint absolute encoder mapping."
        )

    def actuator_to_joint_torque_sensor(self, values: Sequence[float]) -> List[float]:
        raise TransmissionInterfaceError(
            f"{type(self).__name__} does not support actuator to joint torque sensor mapping."
        )


class ActuatorSensorTransmission(Transmission):
    """A transmission whose absolute encoders and torque sensors sit on the actuators: absolute
    positions map like positions, torque sensor readings like efforts."""

    def has_actuator_to_joint_absolute_position(self) -> bool:
        return True

    def has_actuator_to_joint_torque_sensor(self) -> bool:
        return True

    def actuator_to_joint_absolute_position(self, values: Sequence[float]) -> List[float]:
        return self.actuator_to_joint_position(values)

    def actuator_to_joint_torque_sensor(self, values: Sequence[float]) -> List[float]:
        return self.actuator_to_joint_effort(values)
