"""Joint limit records (``joint_limits_interface/joint_limits.h``)."""
from __future__ import annotations

__all__ = ["JointLimits", "SoftJointLimits"]


class JointLimits:
    """Hard limits of one joint.  Values are 0.0 and flags False until set.

    Units: positions rad (m), velocities rad/s (m/s), accelerations rad/s² (m/s²), jerks rad/s³,
    efforts N·m (N).  ``angle_wraparound``: a continuous joint whose position may be wrapped.
    """

    __slots__ = (
        "min_position", "max_position", "max_velocity", "max_acceleration", "max_jerk", "max_effort",
        "has_position_limits", "has_velocity_limits", "has_acceleration_limits", "has_jerk_limits",
        "has_effort_limits", "angle_wraparound",
    )
    # Declared for type checkers; __init__ sets every slot.
    min_position: float
    max_position: float
    max_velocity: float
    max_acceleration: float
    max_jerk: float
    max_effort: float
    has_position_limits: bool
    has_velocity_limits: bool
    has_acceleration_limits: bool
    has_jerk_limits: bool
    has_effort_limits: bool
    angle_wraparound: bool

    def __init__(self, **values) -> None:
        for name in self.__slots__:
            setattr(self, name, False if name.startswith("has_") or name == "angle_wraparound" else 0.0)
        for name, value in values.items():
            if name not in self.__slots__:
                raise TypeError(f"JointLimits has no field '{name}'")
            setattr(self, name, value)

    def __eq__(self, other) -> bool:
        return isinstance(other, JointLimits) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        return "JointLimits(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"


class SoftJointLimits:
    """Soft limits of one joint (URDF ``<safety_controller>``): ``min_position``, ``max_position``
    (rad or m), ``k_position`` (1/s), ``k_velocity`` (effort per velocity), all 0.0 by default."""

    __slots__ = ("min_position", "max_position", "k_position", "k_velocity")

    def __init__(self, min_position: float = 0.0, max_position: float = 0.0, k_position: float = 0.0,
                 k_velocity: float = 0.0) -> None:
        self.min_position = min_position
        self.max_position = max_position
        self.k_position = k_position
        self.k_velocity = k_velocity

    def __eq__(self, other) -> bool:
        return isinstance(other, SoftJointLimits) and all(
            getattr(self, n) == getattr(other, n) for n in self.__slots__)

    def __repr__(self) -> str:
        return "SoftJointLimits(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.__slots__) + ")"
