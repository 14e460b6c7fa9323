"""Plain records produced by the URDF transmission parser (``transmission_info.h``).

Phase one of ros_control's two-phase transmission loading: XML becomes these records; phase two
(:mod:`~rospy_control.transmission_interface.transmission_loader`) reads the type-specific elements
(``mechanicalReduction``, ``offset``, ``role``, ...) from ``values``: the text and line of each child
element, taken once by the parser.  A record can be made without any XML (the driver's 1:1 binding of a
motor to its joint is one); the URDF element stays in ``xml_element`` for a user's own loader.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, NamedTuple, Optional, Sequence

from rospy_control.urdf import element_xml


class ElementValue(NamedTuple):
    """The stripped text of one child element and its source line (None: not from a file)."""

    text: str
    line: Optional[int] = None


#: child tag -> its first element's value, e.g. ``{"mechanicalReduction": ElementValue("50", 12)}``
ElementValues = Dict[str, ElementValue]


def element_values(element: Any) -> ElementValues:
    """The values of an lxml element's child elements (the first of each tag, document order)."""
    out: ElementValues = {}
    if element is None:
        return out
    for child in element:
        if isinstance(child.tag, str) and child.tag not in out:
            out[child.tag] = ElementValue((child.text or "").strip(), child.sourceline)
    return out


@dataclass
class _MemberInfo:
    """What a ``<joint>`` and an ``<actuator>`` of a transmission both hold.

    :ivar name: joint or actuator name.
    :ivar hardware_interfaces: non-empty ``<hardwareInterface>`` texts, in document order.
    :ivar role: text of ``<role>`` ("" when absent or empty).
    :ivar xml_element: the lxml element (None when the record was not read from XML).
    :ivar line: source line of the element.
    :ivar values: the child elements' texts and lines, which the loaders read.
    """

    name: str
    hardware_interfaces: List[str] = field(default_factory=list)
    role: str = ""
    xml_element: Any = None
    line: Optional[int] = None
    values: ElementValues = field(default_factory=dict)

    @property
    def xml(self) -> str:
        """The element serialized as XML text."""
        return element_xml(self.xml_element)


@dataclass
class JointInfo(_MemberInfo):
    """One ``<joint>`` of a transmission."""


@dataclass
class ActuatorInfo(_MemberInfo):
    """One ``<actuator>`` of a transmission (``hardware_interfaces`` may be empty)."""


@dataclass
class TransmissionInfo:
    """One ``<transmission>``: name, ``<type>`` text, joints and actuators."""

    name: str
    type: str
    joints: List[JointInfo] = field(default_factory=list)
    actuators: List[ActuatorInfo] = field(default_factory=list)
    xml_element: Any = None
    line: Optional[int] = None
    source: str = "<urdf>"
    values: ElementValues = field(default_factory=dict)

    @property
    def where(self) -> str:
        """``source:line`` of the ``<transmission>`` element."""
        return f"{self.source}:{self.line}" if self.line is not None else self.source

    def ordered_joints(self) -> List[JointInfo]:
        """Joints in the order the transmission uses them (see :func:`in_role_order`)."""
        return in_role_order(self.joints)

    def ordered_actuators(self) -> List[ActuatorInfo]:
        """Actuators in the order the transmission uses them (see :func:`in_role_order`)."""
        return in_role_order(self.actuators)


def in_role_order(items: Sequence[Any]) -> List[Any]:
    """Order joints/actuators by their ``<role>`` when every one has a distinct non-empty role
    (``joint1`` before ``joint2``), else keep document order: the order transmissions, the
    transmission interface loader and the robot_hw all agree on."""
    roles = [getattr(i, "role", "") for i in items]
    if len(items) > 1 and all(roles) and len(set(roles)) == len(roles):
        return sorted(items, key=lambda i: i.role)
    return list(items)


@dataclass
class SkippedTransmission:
    """A ``<transmission>`` the parser skipped, with the reason and the joints it named."""

    name: str
    reason: str
    line: Optional[int] = None
    source: str = "<urdf>"
    joints: List[str] = field(default_factory=list)

    def describe(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        label = f"'{self.name}'" if self.name else "(unnamed)"
        return f"transmission {label} at {where}: {self.reason}"
