"""Joint space <-> motor space for the gravity model: the actuator <-> joint binding (URDF
``<transmission>`` elements and the hardware XML's 1:1 ``joint="..."`` attributes) applied to
positions and torques.

:func:`bind_actuators` pairs a :class:`~.gravity.GravityModel`'s joints with actuators through the one
binding the driver's RobotHW uses too
(:func:`rospy_control.transmission_interface.actuator_binding.bind_actuators_to_joints`, in its
lenient form: the simulator may simulate only part of a robot) and the project's transmission
loaders; the simulator uses it to turn simulated actuator positions into a pose and the holding
torques back into actuator torques.
"""
from __future__ import annotations

from typing import Any, List, NamedTuple, Sequence, Tuple

from rospy_control.dynamics.gravity import GravityModel
from rospy_control.transmission_interface import Transmission, load_transmission
from rospy_control.transmission_interface.actuator_binding import bind_actuators_to_joints

__all__ = ["ActuatorBinding", "bind_actuators"]


class ActuatorBinding(NamedTuple):
    """One transmission: its actuators (names, role order), its joints' model indices (-1: a joint the
    model does not know) and the transmission."""

    actuators: Tuple[str, ...]
    joints: Tuple[int, ...]
    transmission: Transmission
    name: str


def bind_actuators(model: GravityModel, urdf: str, actuators: Sequence[Any],
                   source: str = "robot_description") -> List[ActuatorBinding]:
    """Transmissions between ``actuators`` and the model's joints.

    :param actuators: the units (``name``, ``joint``, ``where``: middleware actuator units).
    :returns: one binding per URDF transmission all of whose actuators are in ``actuators`` (others are
        skipped with a debug message: they belong to another bus or robot), then the 1:1 ones.
    """
    shared = bind_actuators_to_joints(urdf, actuators, source, strict=False)
    return [ActuatorBinding(tuple(a.name for a in info.ordered_actuators()),
                            tuple(model.index.get(j.name, -1) for j in info.ordered_joints()),
                            load_transmission(info), info.name)
            for info in shared.infos]
