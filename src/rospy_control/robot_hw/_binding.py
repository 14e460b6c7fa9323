"""Which motor drives which joint: URDF transmissions checked against the hardware description.

Phase one of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` construction, pure checks and no
side effects.  Rules (every violation is a :class:`~rospy_control.exceptions.ConfigError` naming the
URDF transmission or the hardware XML unit and its file:line):

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
from rospy_control.transmission_interface import ParseResult, TransmissionInfo, TransmissionParser
from rospy_control.urdf import parse_urdf

__all__ = ["Binding", "bind", "POSVEL", "POSVELACC"]

POSVEL = "hardware_interface/PosVelJointInterface"
POSVELACC = "hardware_interface/PosVelAccJointInterface"
_POSITION = "hardware_interface/PositionJointInterface"
_VELOCITY = "hardware_interface/VelocityJointInterface"
_DIRECT_INTERFACES = (_POSITION, _VELOCITY, "hardware_interface/EffortJointInterface")
_MOVABLE = ("revolute", "continuous", "prismatic")


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


def _skipped_actuators(root, result: ParseResult) -> Dict[str, str]:
    """actuator name -> reason, for the actuators of transmissions the parser skipped."""
    by_line = {el.sourceline: el for el in root.findall("transmission")}
    out: Dict[str, str] = {}
    for skipped in result.skipped:
        el = by_line.get(skipped.line)
        if el is None:
            continue
        for act in el.findall("actuator"):
            name = act.get("name")
            if name:
                out[name] = skipped.describe()
    return out


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
    root = parse_urdf(urdf_xml, urdf_source)
    joint_elements = {el.get("name"): el for el in root.findall("joint") if el.get("name")}
    result = TransmissionParser.parse(urdf_xml, source=urdf_source)
    motors = {m.name: m for m in middleware.motors()}
    hw = f"hardware '{middleware.name}' ({middleware.source})"
    known = ", ".join(motors) or "none"

    kept: List[TransmissionInfo] = []
    actuator_owner: Dict[str, str] = {}
    joint_owner: Dict[str, TransmissionInfo] = {}
    for info in result:
        names = [a.name for a in info.actuators]
        unknown = [n for n in names if n not in motors]
        if unknown and len(unknown) == len(names) and skip_unknown_actuators:
            continue
        if unknown:
            raise ConfigError(
                f"URDF transmission '{info.name}': actuator '{unknown[0]}' is not a motor of {hw}; "
                f"motors there: {known}", source=info.source, line=info.line)
        for name in names:
            if name in actuator_owner:
                raise ConfigError(
                    f"URDF transmission '{info.name}': actuator '{name}' is already driven by transmission "
                    f"'{actuator_owner[name]}'; a motor can belong to one transmission only",
                    source=info.source, line=info.line)
            actuator_owner[name] = info.name
        for joint in info.joints:
            el = joint_elements.get(joint.name)
            if el is None:
                raise ConfigError(f"URDF transmission '{info.name}': joint '{joint.name}' is not a <joint> "
                                  "of the URDF", source=info.source, line=joint.line or info.line)
            if el.get("type") not in _MOVABLE:
                raise ConfigError(
                    f"URDF transmission '{info.name}': joint '{joint.name}' is of type "
                    f"'{el.get('type')}'; only revolute, continuous and prismatic joints can be driven",
                    source=info.source, line=joint.line or info.line)
            if joint.name in joint_owner:
                raise ConfigError(
                    f"URDF transmission '{info.name}': joint '{joint.name}' is already driven by "
                    f"transmission '{joint_owner[joint.name].name}'", source=info.source, line=info.line)
            joint_owner[joint.name] = info
        kept.append(info)

    skipped_acts = _skipped_actuators(root, result)
    direct: Dict[str, str] = {}
    for name, motor in motors.items():
        where = f"{hw}: motor '{name}' ({motor.where})"
        joint = motor.joint
        if name in actuator_owner:
            if joint is None:
                continue
            info = next(i for i in kept if i.name == actuator_owner[name])
            if all(j.name != joint for j in info.joints):
                raise ConfigError(
                    f"{where} has joint=\"{joint}\" but URDF transmission '{info.name}' ({info.where}) "
                    f"drives it into joint(s) {', '.join(j.name for j in info.joints)}; make them agree "
                    "or remove the joint attribute")
            continue
        if name in skipped_acts:
            raise ConfigError(f"{where} is driven by a URDF transmission that was skipped: "
                              f"{skipped_acts[name]}")
        if joint is None:
            raise ConfigError(
                f"{where} drives no joint: no URDF transmission names actuator '{name}' and the motor has "
                "no joint attribute; add <unit ... joint=\"<urdf joint>\"> or a <transmission> with "
                f"<actuator name=\"{name}\">")
        reason = result.skip_reason(joint)
        if reason is not None:
            raise ConfigError(f"{where} drives joint '{joint}', whose URDF transmission was skipped: "
                              f"{reason}")
        if joint in joint_owner:
            other = joint_owner[joint]
            raise ConfigError(
                f"{where} has joint=\"{joint}\", but URDF transmission '{other.name}' ({other.where}) "
                f"already drives that joint with actuator(s) {', '.join(a.name for a in other.actuators)}")
        if joint in direct.values():
            first = next(m for m, j in direct.items() if j == joint)
            raise ConfigError(f"{where} has joint=\"{joint}\", which motor '{first}' already drives")
        el = joint_elements.get(joint)
        if el is None:
            raise ConfigError(f"{where} has joint=\"{joint}\", which is not a <joint> of the URDF "
                              f"({urdf_source})")
        if el.get("type") not in _MOVABLE:
            raise ConfigError(f"{where} has joint=\"{joint}\" of type '{el.get('type')}'; only revolute, "
                              "continuous and prismatic joints can be driven")
        direct[name] = joint

    synthetic: List[TransmissionInfo] = []
    if direct:
        trans_names = {i.name for i in kept}
        parts = []
        for motor_name, joint in direct.items():
            trans = f"{motor_name}_direct_transmission"
            if trans in trans_names:
                raise ConfigError(f"{hw}: cannot bind motor '{motor_name}' 1:1: the URDF already has a "
                                  f"transmission called '{trans}'")
            ifaces = "".join(f"<hardwareInterface>{i}</hardwareInterface>" for i in _DIRECT_INTERFACES)
            parts.append(f'<transmission name="{trans}">'
                         '<type>transmission_interface/SimpleTransmission</type>'
                         f'<joint name="{joint}">{ifaces}</joint><actuator name="{motor_name}">'
                         "<mechanicalReduction>1</mechanicalReduction></actuator></transmission>")
        parsed = TransmissionParser.parse("<robot>" + "".join(parts) + "</robot>",
                                          source=str(middleware.source))
        for info in parsed:
            motor = motors[info.actuators[0].name]
            info.source = f"hardware XML motor '{motor.name}' at {motor.where} (joint attribute)"
            info.line = None
            synthetic.append(info)

    posvel: Set[str] = set()
    infos = [_strip_posvel(i, posvel) for i in kept] + synthetic
    return Binding(infos, posvel, result, joint_elements, direct)
