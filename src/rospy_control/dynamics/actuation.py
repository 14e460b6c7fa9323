"""Joint space <-> motor space for the gravity model: the URDF's ``<transmission>`` elements (and the
hardware XML's 1:1 ``joint="..."`` bindings) applied to positions and torques.

:func:`bind_actuators` pairs a :class:`~.gravity.GravityModel`'s joints with named actuators through
the project's transmission parser and loaders (:mod:`rospy_control.transmission_interface`); the
simulator uses it to turn simulated motor positions into a pose and the holding torques back into
motor torques.  (The driver's RobotHW has its transmissions already and uses them directly.)
"""
from __future__ import annotations

from typing import Dict, List, NamedTuple, Optional, Sequence, Set, Tuple

from rospy_control.dynamics.gravity import GravityModel
from rospy_control.log import get_logger
from rospy_control.transmission_interface import (
    SimpleTransmission, Transmission, TransmissionParser, load_transmission,
)

__all__ = ["ActuatorBinding", "bind_actuators"]

logger = get_logger(__name__)


class ActuatorBinding(NamedTuple):
    """One transmission: its actuators (names, role order), its joints' model indices (-1: a joint the
    model does not know) and the transmission."""

    actuators: Tuple[str, ...]
    joints: Tuple[int, ...]
    transmission: Transmission
    name: str


def bind_actuators(model: GravityModel, urdf: str, actuators: Sequence[str],
                   direct: Optional[Dict[str, str]] = None,
                   source: str = "robot_description") -> List[ActuatorBinding]:
    """Transmissions between ``actuators`` and the model's joints.

    :param direct: ``{actuator: joint}`` 1:1 bindings (the hardware XML's ``joint`` attribute), used for
        actuators no URDF transmission names.
    :returns: one binding per URDF transmission all of whose actuators are in ``actuators`` (others are
        skipped with a debug message: they belong to another bus or robot), then the 1:1 ones.
    """
    names = set(actuators)
    out: List[ActuatorBinding] = []
    used: Set[str] = set()
    for info in TransmissionParser.parse(urdf, source=source):
        acts = tuple(a.name for a in info.ordered_actuators())
        if not all(a in names for a in acts):
            logger.debug("gravity model: transmission '%s' skipped (actuators %s not all simulated here)",
                         info.name, ", ".join(acts))
            continue
        joints = tuple(model.index.get(j.name, -1) for j in info.ordered_joints())
        out.append(ActuatorBinding(acts, joints, load_transmission(info), info.name))
        used.update(acts)
    for act, joint in (direct or {}).items():
        if act in names and act not in used and joint in model.index:
            out.append(ActuatorBinding((act,), (model.index[joint],), SimpleTransmission(1.0),
                                       f"{act} (1:1)"))
    return out
