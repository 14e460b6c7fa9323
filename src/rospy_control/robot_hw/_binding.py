"""Which motor drives which joint: URDF transmissions checked against the hardware description.

Phase one of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` construction, pure checks and no
side effects.  The binding itself is the one the simulator's gravity uses too
(:mod:`rospy_control.transmission_interface.actuator_binding`, here in its strict form); this module
adds the RobotHW's PosVel rule.  Rules (every violation is a
:class:`~rospy_control.exceptions.ConfigError` naming the URDF transmission or the hardware XML unit
and its file:line):

* every ``<actuator>`` of a kept URDF transmission is a motor of the middleware, used by one
  transmission only (``skip_unknown_actuators`` drops transmissions none of whose actuators are ours,
  for a URDF shared by several RobotHWs; a transmission with some known and some unknown actuators is
  always an error);
* every ``<joint>`` of a transmission exists in the URDF, is not ``fixed``, and is driven by one
  transmission only;
* a motor with a ``joint`` attribute either belongs to a transmission naming that joint, or -- when no
  transmission names the motor -- is bound 1:1 to the joint through a synthetic
  ``SimpleTransmission`` (reduction 1, no offset) offering Position, Velocity and Effort joint
  interfaces;
* a motor named by a transmission the parser *skipped*, or whose ``joint`` is named by one, fails with
  the parser's reason; a motor that drives no joint at all fails too (nothing half-starts);
* ``hardware_interface/PosVelJointInterface`` listed on a joint is taken out before the transmission
  interface loader sees it (the loader has no provider for it) and offered by the RobotHW itself; it
  needs Position and Velocity listed as well.  ``PosVelAccJointInterface`` is refused: MIT motors
  take no acceleration.
"""
from __future__ import annotations

import dataclasses
from typing import Dict, List, Set

from rospy_control.exceptions import ConfigError
from rospy_control.transmission_interface import ParseResult, TransmissionInfo
from rospy_control.transmission_interface.actuator_binding import bind_actuators_to_joints

__all__ = ["Binding", "bind", "POSVEL", "POSVELACC"]

POSVEL = "hardware_interface/PosVelJointInterface"
POSVELACC = "hardware_interface/PosVelAccJointInterface"
_POSITION = "hardware_interface/PositionJointInterface"
_VELOCITY = "hardware_interface/VelocityJointInterface"


def _canonical(name: str) -> str:
    """``PosVelJointInterface`` / ``hardware_interface::X`` -> ``hardware_interface/X``."""
    if "::" in name:
        return name.replace("::", "/")
    if "/" not in name and ":" not in name:
        return "hardware_interface/" + name
    return name


@dataclasses.dataclass
class Binding:
    """Result of :func:`bind`.

    :ivar infos: transmissions to load (kept URDF ones + synthetic 1:1 ones), PosVel names removed.
    :ivar posvel_joints: joints whose URDF transmission lists ``PosVelJointInterface``.
    :ivar parse_result: the parser's result (skipped transmissions and joints with reasons).
    :ivar joint_elements: URDF ``<joint>`` elements by name.
    :ivar direct: motor -> joint of the 1:1 bindings made from the hardware XML.
    """

    infos: List[TransmissionInfo]
    posvel_joints: Set[str]
    parse_result: ParseResult
    joint_elements: Dict[str, object]
    direct: Dict[str, str]


def _strip_posvel(info: TransmissionInfo, posvel_joints: Set[str]) -> TransmissionInfo:
    joints = []
    for joint in info.joints:
        canonical = [_canonical(n) for n in joint.hardware_interfaces]
        if POSVELACC in canonical:
            raise ConfigError(
                f"URDF transmission '{info.name}': joint '{joint.name}' lists "
                f"{POSVELACC}, which MiddlewareRobotHW does not offer (MIT motors take no acceleration "
                f"command); list {POSVEL} instead", source=info.source, line=joint.line or info.line)
        if POSVEL in canonical:
            if _POSITION not in canonical or _VELOCITY not in canonical:
                raise ConfigError(
                    f"URDF transmission '{info.name}': joint '{joint.name}' lists {POSVEL} but not both "
                    f"{_POSITION} and {_VELOCITY}; MiddlewareRobotHW propagates PosVel commands through "
                    "the position and velocity transmissions, so list those too",
                    source=info.source, line=joint.line or info.line)
            posvel_joints.add(joint.name)
            kept = [n for n, c in zip(joint.hardware_interfaces, canonical) if c != POSVEL]
            joint = dataclasses.replace(joint, hardware_interfaces=kept)
        joints.append(joint)
    return dataclasses.replace(info, joints=joints)


def bind(middleware, urdf_xml: str, urdf_source: str = "robot_description",
         skip_unknown_actuators: bool = False) -> Binding:
    """Check the URDF transmissions against the middleware's motors (see the module docstring).

    :raises ConfigError: on any inconsistency (message names the transmission or unit and why).
    """
    hw = f"hardware '{middleware.name}' ({middleware.source})"
    shared = bind_actuators_to_joints(
        urdf_xml, middleware.motors(), urdf_source, hardware=hw,
        strict=True, skip_unknown_actuators=skip_unknown_actuators)
    posvel: Set[str] = set()
    infos = [_strip_posvel(i, posvel) for i in shared.infos]
    return Binding(infos, posvel, shared.parse_result, shared.joint_elements, shared.direct)
