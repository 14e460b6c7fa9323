"""URDF ``<transmission>`` parsing (``transmission_interface/transmission_parser``).

ros_control's rules, per ``<transmission>`` child of the root element:

* ``name`` attribute required and non-empty; ``<type>`` child required with non-empty text.
* At least one valid ``<joint>``.  A ``<joint>`` without a ``name`` attribute invalidates the whole
  transmission; ``name=""`` skips that joint.  A joint needs at least one non-empty
  ``<hardwareInterface>`` (empty ones are ignored); a joint without one is skipped.
* At least one valid ``<actuator>``; missing ``name`` invalidates the transmission, ``name=""`` skips
  the actuator.  ``<hardwareInterface>`` is optional on actuators.
* Everything else is left to the type-specific loader.

A bad transmission is skipped and the others load (ros_control's per-transmission isolation), but
unlike ros_control -- which logs each failure separately and moves on -- every skipped transmission
(and every joint dropped from a kept one) is collected in the returned :class:`ParseResult` and
reported in **one** summary log record, and a later request for such a joint can fail with the
recorded reason (:meth:`ParseResult.require_joint`).  XML that cannot be parsed raises
:class:`TransmissionParseError`.  The text is parsed by :mod:`rospy_control.urdf`, the one reader of
the URDF; a caller that already holds the parsed root passes it to :meth:`TransmissionParser.parse_root`.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from rospy_control.exceptions import ConfigError, TransmissionInterfaceError
from rospy_control.log import get_logger
from rospy_control.transmission_interface.transmission_info import (
    ActuatorInfo,
    JointInfo,
    SkippedTransmission,
    TransmissionInfo,
    element_values,
)
from rospy_control.urdf import parse_urdf

logger = get_logger(__name__)

__all__ = ["TransmissionParser", "ParseResult", "TransmissionParseError"]


class TransmissionParseError(TransmissionInterfaceError, ConfigError):
    """The URDF text is not well-formed XML (catchable as either base class)."""


class ParseResult(list):
    """The parsed :class:`TransmissionInfo` list, plus what was skipped and why.

    :ivar skipped: :class:`SkippedTransmission` records, document order.
    :ivar skipped_joints: joint name → reason, for joints of skipped transmissions and joints
        dropped from kept ones.
    """

    def __init__(self, infos=(), skipped=(), skipped_joints=None, source: str = "<urdf>") -> None:
        super().__init__(infos)
        self.skipped: List[SkippedTransmission] = list(skipped)
        self.skipped_joints: Dict[str, str] = dict(skipped_joints or {})
        self.source = source

    @property
    def transmissions(self) -> List[TransmissionInfo]:
        return list(self)

    def summary(self) -> str:
        """One message listing every skipped transmission and dropped joint ("" if none)."""
        if not self.skipped and not self.skipped_joints:
            return ""
        lines = [
            f"{self.source}: skipped {len(self.skipped)} of {len(self.skipped) + len(self)} URDF "
            "transmission(s); the joints they name get no hardware interfaces:"
        ]
        lines.extend(f"  - {s.describe()}" for s in self.skipped)
        kept_drops = {j: r for j, r in self.skipped_joints.items()
                      if not any(j in s.joints for s in self.skipped)}
        lines.extend(f"  - {reason}" for reason in kept_drops.values())
        return "\n".join(lines)

    def skip_reason(self, joint_name: str) -> Optional[str]:
        """Why ``joint_name`` has no transmission, or None if it was not skipped."""
        return self.skipped_joints.get(joint_name)

    def require_joint(self, joint_name: str) -> TransmissionInfo:
        """The transmission of ``joint_name``.

        :raises TransmissionInterfaceError: the joint's transmission was skipped (message gives the
            parse-time reason) or no transmission names the joint.
        """
        for info in self:
            if any(j.name == joint_name for j in info.joints):
                return info
        reason = self.skip_reason(joint_name)
        if reason is not None:
            raise TransmissionInterfaceError(f"Joint '{joint_name}' has no usable transmission: {reason}")
        raise TransmissionInterfaceError(f"No URDF transmission names joint '{joint_name}' ({self.source}).")


def _text(element) -> str:
    return (element.text or "").strip() if element is not None else ""


def _interfaces(element) -> Tuple[List[str], int]:
    found, empty = [], 0
    for hw in element.findall("hardwareInterface"):
        text = _text(hw)
        if text:
            found.append(text)
        else:
            empty += 1
    return found, empty


def _named(element, tag: str, problems: List[str]) -> Tuple[List[Tuple[Any, str]], Optional[str]]:
    """The ``<tag>`` children with a non-empty ``name``, and None; a child with ``name=""`` is skipped
    with a problem noted; one without ``name`` invalidates the transmission (its reason is returned
    instead of None)."""
    article = "an" if tag[0] in "aeiou" else "a"
    out: List[Tuple[Any, str]] = []
    for el in element.findall(tag):
        name = el.get("name")
        if name is None:
            return out, f"{article} <{tag}> (line {el.sourceline}) has no 'name' attribute"
        if not name:
            problems.append(f"{article} <{tag}> (line {el.sourceline}) has an empty 'name' attribute")
            continue
        out.append((el, name))
    return out, None


class TransmissionParser:
    """Parse the ``<transmission>`` elements of a URDF (ros_control's ``TransmissionParser``).

    ``TransmissionParser.parse(urdf_xml)`` is static, as in ros_control.
    """

    @staticmethod
    def parse(urdf_xml: Union[str, bytes], source: str = "<urdf>") -> ParseResult:
        """Parse ``urdf_xml`` (XML text) into a :class:`ParseResult` (a list of TransmissionInfo).

        :param source: file or parameter name used in messages (e.g. ``/robot_description``).
        :raises TransmissionParseError: the text is not well-formed XML.
        """
        try:
            root = parse_urdf(urdf_xml, source, root_tag=None)
        except ConfigError as err:
            raise TransmissionParseError(err.reason, source=source, line=err.line) from err
        return TransmissionParser.parse_root(root, source)

    @staticmethod
    def parse_root(root: Any, source: str = "<urdf>") -> ParseResult:
        """As :meth:`parse`, for a root element :func:`rospy_control.urdf.parse_urdf` returned."""
        result = ParseResult(source=source)
        for element in root.findall("transmission"):
            outcome = TransmissionParser._parse_transmission(element, source)
            if isinstance(outcome, SkippedTransmission):
                result.skipped.append(outcome)
                for joint in outcome.joints:
                    result.skipped_joints[joint] = outcome.describe()
            else:
                info, dropped = outcome
                result.append(info)
                result.skipped_joints.update(dropped)
        if not result and not result.skipped:
            logger.debug("No transmissions found in %s.", source)
        summary = result.summary()
        if summary:
            logger.error("%s", summary)
        return result

    @staticmethod
    def parse_file(path: str) -> ParseResult:
        """Parse the URDF file at ``path``."""
        with open(path, "rb") as stream:
            return TransmissionParser.parse(stream.read(), source=path)

    @staticmethod
    def _parse_transmission(element, source: str):
        line = element.sourceline
        name = element.get("name")
        joint_names = [j.get("name") for j in element.findall("joint") if j.get("name")]

        def skip(reason: str) -> SkippedTransmission:
            return SkippedTransmission(name or "", reason, line, source, joint_names)

        if name is None:
            return skip("no 'name' attribute")
        if not name:
            return skip("empty 'name' attribute")
        type_el = element.find("type")
        if type_el is None:
            return skip("no <type> element")
        type_text = _text(type_el)
        if not type_text:
            return skip("empty <type> element")

        actuator_ifaces = {}
        for act in element.findall("actuator"):
            act_ifaces, _ = _interfaces(act)
            if act_ifaces and act.get("name"):
                actuator_ifaces[act.get("name")] = act_ifaces

        joints: List[JointInfo] = []
        problems: List[str] = []
        dropped: Dict[str, str] = {}
        named, missing = _named(element, "joint", problems)
        if missing is not None:
            return skip(missing)
        for joint_el, joint_name in named:
            ifaces, empty = _interfaces(joint_el)
            if not ifaces:
                problem = f"joint '{joint_name}' has no non-empty <hardwareInterface>"
                if empty:
                    problem += f" ({empty} empty one(s) ignored)"
                if actuator_ifaces:
                    act_name, act_list = next(iter(actuator_ifaces.items()))
                    problem += (
                        f"; actuator '{act_name}' declares {', '.join(act_list)} -- ros_control reads a "
                        "joint's interfaces only from <joint>: add "
                        f"<hardwareInterface>{act_list[0]}</hardwareInterface> inside "
                        f"<joint name=\"{joint_name}\">"
                    )
                else:
                    problem += (
                        "; add e.g. <hardwareInterface>hardware_interface/PositionJointInterface"
                        f"</hardwareInterface> inside <joint name=\"{joint_name}\">"
                    )
                problems.append(problem)
                dropped[joint_name] = f"transmission '{name}' at {source}:{line}: {problem}"
                continue
            joints.append(JointInfo(joint_name, ifaces, _text(joint_el.find("role")), joint_el,
                                    joint_el.sourceline, element_values(joint_el)))
        if not joints:
            reason = "no valid <joint>" + (": " + "; ".join(problems) if problems else "")
            return skip(reason)

        actuators: List[ActuatorInfo] = []
        act_problems: List[str] = []
        named, missing = _named(element, "actuator", act_problems)
        if missing is not None:
            return skip(missing)
        for act_el, act_name in named:
            ifaces, _ = _interfaces(act_el)
            actuators.append(ActuatorInfo(act_name, ifaces, _text(act_el.find("role")), act_el,
                                          act_el.sourceline, element_values(act_el)))
        if not actuators:
            reason = "no valid <actuator>" + (": " + "; ".join(act_problems) if act_problems else "")
            return skip(reason)
        for problem in problems + act_problems:
            logger.warning("Transmission '%s' at %s:%s: %s (ignored).", name, source, line, problem)
        info = TransmissionInfo(name, type_text, joints, actuators, element, line, source,
                                element_values(element))
        return info, dropped
