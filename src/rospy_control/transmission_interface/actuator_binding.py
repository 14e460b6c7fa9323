"""Which actuator drives which joint: the one binding of actuators to URDF joints, used by the driver's
RobotHW (:mod:`rospy_control.robot_hw._binding`, strict) and by the simulator's gravity
(:mod:`rospy_control.dynamics.actuation`, lenient).

An actuator is any object with ``name``, ``joint`` (the hardware XML's ``joint`` attribute, or None)
and ``where`` (its file:line, for messages): a middleware :class:`~rospy_control.middleware.ActuatorUnit`.
The binding is the URDF ``<transmission>`` elements that name the actuators, then a 1:1
``SimpleTransmission`` record (reduction 1, no offset; Position, Velocity and Effort joint interfaces),
built directly from the actuator's ``joint`` attribute, for each actuator no transmission names and
whose ``joint`` attribute names a movable URDF joint.  The URDF is parsed once, by
:mod:`rospy_control.urdf`.

``strict=True`` (the RobotHW: nothing half-starts) raises :class:`~rospy_control.exceptions.ConfigError`,
naming the URDF transmission or the hardware XML unit and its file:line, when:

* an ``<actuator>`` of a transmission is not one of ``actuators`` (``skip_unknown_actuators`` drops
  transmissions *none* of whose actuators are known, for a URDF shared by several RobotHWs; a
  transmission with some known and some unknown actuators is always an error), or is used by two;
* a ``<joint>`` of a transmission is not in the URDF, is ``fixed``, or is driven by two;
* an actuator's ``joint`` attribute disagrees with its transmission, names a joint another
  transmission or actuator drives, a joint the URDF lacks or a fixed one;
* an actuator is named by a transmission the parser *skipped* (or its ``joint`` is), or drives no
  joint at all.

``strict=False`` (the simulator, which simulates only some channels of a robot and must not refuse a
configuration the driver will judge) keeps every transmission all of whose actuators are known (a
joint the URDF lacks stays in it; the user maps it as it likes) and every 1:1 binding that conflicts
with nothing, and skips the rest with a debug message.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Dict, List, Sequence

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.transmission_interface.parser import ParseResult, TransmissionParser
from rospy_control.transmission_interface.transmission_info import (
    ActuatorInfo,
    ElementValue,
    JointInfo,
    TransmissionInfo,
)
from rospy_control.urdf import parse_urdf

__all__ = ["ActuatorJointBinding", "bind_actuators_to_joints", "direct_transmission", "DIRECT_INTERFACES"]

logger = get_logger(__name__)

#: the joint interfaces of a synthetic 1:1 transmission
DIRECT_INTERFACES = ("hardware_interface/PositionJointInterface", "hardware_interface/VelocityJointInterface",
                     "hardware_interface/EffortJointInterface")
_MOVABLE = ("revolute", "continuous", "prismatic")


@dataclasses.dataclass
class ActuatorJointBinding:
    """Result of :func:`bind_actuators_to_joints`.

    :ivar infos: the transmissions, URDF ones (file order) then the synthetic 1:1 ones.
    :ivar parse_result: the parser's result (skipped transmissions and joints with reasons).
    :ivar joint_elements: URDF ``<joint>`` elements by name.
    :ivar direct: actuator -> joint of the 1:1 bindings made from the ``joint`` attributes.
    """

    infos: List[TransmissionInfo]
    parse_result: ParseResult
    joint_elements: Dict[str, Any]
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


def bind_actuators_to_joints(urdf_xml: str, actuators: Sequence[Any],
                             urdf_source: str = "robot_description",
                             hardware: str = "the hardware description", strict: bool = True,
                             skip_unknown_actuators: bool = False) -> ActuatorJointBinding:
    """Bind ``actuators`` to the joints of ``urdf_xml`` (see the module docstring).

    :param hardware: how messages name the hardware description (``hardware 'arm' (file)``).
    :raises ConfigError: a malformed URDF; with ``strict``, any inconsistency (naming why).
    """
    root = parse_urdf(urdf_xml, urdf_source)
    joint_elements = {el.get("name"): el for el in root.findall("joint") if el.get("name")}
    result = TransmissionParser.parse_root(root, source=urdf_source)
    motors = {m.name: m for m in actuators}
    hw = hardware
    known = ", ".join(motors) or "none"

    kept: List[TransmissionInfo] = []
    actuator_owner: Dict[str, str] = {}
    joint_owner: Dict[str, TransmissionInfo] = {}
    for info in result:
        names = [a.name for a in info.actuators]
        unknown = [n for n in names if n not in motors]
        if unknown and not strict:
            logger.debug("transmission '%s' skipped: actuator(s) %s not here", info.name, ", ".join(unknown))
            continue
        if unknown and len(unknown) == len(names) and skip_unknown_actuators:
            continue
        if unknown:
            raise ConfigError(
                f"URDF transmission '{info.name}': actuator '{unknown[0]}' is not a motor of {hw}; "
                f"motors there: {known}", source=info.source, line=info.line)
        if not strict:
            taken = [n for n in names if n in actuator_owner]
            if taken:
                logger.debug("transmission '%s' skipped: actuator '%s' already in transmission '%s'",
                             info.name, taken[0], actuator_owner[taken[0]])
                continue
            for name in names:
                actuator_owner[name] = info.name
            for joint in info.joints:
                joint_owner.setdefault(joint.name, info)
            kept.append(info)
            continue
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

    skipped_acts = _skipped_actuators(root, result) if strict else {}
    direct: Dict[str, str] = {}
    for name, motor in motors.items():
        where = f"{hw}: motor '{name}' ({motor.where})"
        joint = motor.joint
        if name in actuator_owner:
            if joint is None or not strict:
                continue
            info = next(i for i in kept if i.name == actuator_owner[name])
            if all(j.name != joint for j in info.joints):
                raise ConfigError(
                    f"{where} has joint=\"{joint}\" but URDF transmission '{info.name}' ({info.where}) "
                    f"drives it into joint(s) {', '.join(j.name for j in info.joints)}; make them agree "
                    "or remove the joint attribute")
            continue
        if not strict:
            el = joint_elements.get(joint) if joint else None
            if (el is not None and el.get("type") in _MOVABLE and joint not in joint_owner
                    and joint not in direct.values()):
                direct[name] = joint
            elif joint:
                logger.debug("actuator '%s': joint '%s' not bound 1:1 (not a free movable URDF joint)", name,
                             joint)
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
    trans_names = {i.name for i in kept}
    for motor_name, joint in direct.items():
        trans = f"{motor_name}_direct_transmission"
        if trans in trans_names and strict:
            raise ConfigError(f"{hw}: cannot bind motor '{motor_name}' 1:1: the URDF already has a "
                              f"transmission called '{trans}'")
        synthetic.append(direct_transmission(trans, motors[motor_name], joint))
    return ActuatorJointBinding(kept + synthetic, result, joint_elements, direct)


def direct_transmission(name: str, actuator: Any, joint: str) -> TransmissionInfo:
    """The 1:1 ``SimpleTransmission`` record of ``actuator`` driving ``joint`` (reduction 1, offset 0)."""
    act = ActuatorInfo(actuator.name, [], "", values={"mechanicalReduction": ElementValue("1")})
    return TransmissionInfo(
        name, "transmission_interface/SimpleTransmission", [JointInfo(joint, list(DIRECT_INTERFACES))], [act],
        source=f"hardware XML motor '{actuator.name}' at {actuator.where} (joint attribute)")
