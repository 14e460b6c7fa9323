"""Type-specific transmission loaders and :func:`load_transmission` (phase two of loading).

:data:`TRANSMISSION_LOADERS` maps a URDF ``<type>`` to a :class:`TransmissionLoader` subclass
(``transmission_interface/SimpleTransmission``, ``transmission_interface/DifferentialTransmission``,
``transmission_interface/FourBarLinkageTransmission``).  It is open to third-party types::

    TRANSMISSION_LOADERS.register("my_pkg/CableTransmission", "my_pkg.cable:CableTransmissionLoader")

and a ``<type>`` of the form ``module:LoaderClass`` is imported directly.

Rules (ros_control's ``TransmissionLoader`` helpers):

* joint and actuator counts are checked first ("expected 2 actuators, got 1");
* numeric elements (``mechanicalReduction``, ``offset``) are floats; an element that is present but
  not a number fails the load **even when it is optional**; a missing optional one takes its default;
* ``<role>`` must be present and non-empty where required, and one of the allowed values;
* a zero reduction fails the load (the transmission constructor refuses it).

Every failure raises :class:`~rospy_control.exceptions.TransmissionInterfaceError` naming the
transmission, its URDF location, the element and why.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence

from rospy_control.exceptions import PluginError, TransmissionInterfaceError
from rospy_control.plugins import Registry
from rospy_control.transmission_interface.differential_transmission import DifferentialTransmission
from rospy_control.transmission_interface.four_bar_linkage_transmission import FourBarLinkageTransmission
from rospy_control.transmission_interface.simple_transmission import SimpleTransmission
from rospy_control.transmission_interface.transmission import Transmission
from rospy_control.transmission_interface.transmission_info import TransmissionInfo

__all__ = [
    "TransmissionLoader",
    "SimpleTransmissionLoader",
    "DifferentialTransmissionLoader",
    "FourBarLinkageTransmissionLoader",
    "TRANSMISSION_LOADERS",
    "load_transmission",
]


class TransmissionLoader:
    """Base of type-specific loaders: ``load(info) -> Transmission``, with parsing helpers."""

    def load(self, info: TransmissionInfo) -> Transmission:
        raise NotImplementedError

    # -- errors ---------------------------------------------------------------------------------
    @staticmethod
    def error(info: TransmissionInfo, message: str, line: Optional[int] = None) -> TransmissionInterfaceError:
        where = f"{info.source}:{line}" if line is not None else info.where
        return TransmissionInterfaceError(f"Transmission '{info.name}' ({where}): {message}")

    # -- checks ---------------------------------------------------------------------------------
    @classmethod
    def check_counts(cls, info: TransmissionInfo, actuators: int, joints: int) -> None:
        if len(info.actuators) != actuators:
            raise cls.error(info, f"expected {actuators} actuator(s), got {len(info.actuators)}.")
        if len(info.joints) != joints:
            raise cls.error(info, f"expected {joints} joint(s), got {len(info.joints)}.")

    @classmethod
    def get_number(cls, info: TransmissionInfo, item, kind: str, tag: str, required: bool,
                   default: float) -> float:
        """Float text of ``<tag>`` inside ``item``'s element (a JointInfo or ActuatorInfo)."""
        value = item.values.get(tag)
        if value is None:
            if required:
                hint = ""
                if tag in info.values:
                    hint = f" (a <{tag}> directly under <transmission> is not read: move it into <{kind}>)"
                raise cls.error(
                    info, f"{kind} '{item.name}' does not specify the required <{tag}> element{hint}.",
                    item.line,
                )
            return default
        try:
            return float(value.text)
        except ValueError:
            raise cls.error(
                info, f"{kind} '{item.name}' has an invalid <{tag}> element '{value.text}': it must be a "
                "number.", value.line,
            ) from None

    @classmethod
    def get_role(cls, info: TransmissionInfo, item, kind: str, allowed: Sequence[str]) -> str:
        value = item.values.get("role")
        if value is None:
            raise cls.error(
                info, f"{kind} '{item.name}' does not specify the required <role> element.", item.line
            )
        role = value.text
        if not role:
            raise cls.error(info, f"{kind} '{item.name}' has an empty <role> element.", value.line)
        if role not in allowed:
            raise cls.error(
                info, f"{kind} '{item.name}' has an invalid <role> '{role}': expected one of "
                f"{', '.join(repr(a) for a in allowed)}.", value.line,
            )
        return role

    @classmethod
    def order_by_role(cls, info: TransmissionInfo, items: Sequence, kind: str, roles: Sequence[str]) -> List:
        """``items`` sorted by their role (document order does not matter); roles must be distinct."""
        by_role: Dict[str, Any] = {}
        for item in items:
            role = cls.get_role(info, item, kind, roles)
            if role in by_role:
                raise cls.error(
                    info,
                    f"{kind}s '{by_role[role].name}' and '{item.name}' both have role '{role}'; "
                    "roles must be distinct.",
                )
            by_role[role] = item
        return [by_role[r] for r in roles]

    @classmethod
    def construct(cls, info: TransmissionInfo, factory, *args, **kwargs) -> Transmission:
        try:
            return factory(*args, **kwargs)
        except TransmissionInterfaceError as err:
            raise cls.error(info, str(err)) from err


class SimpleTransmissionLoader(TransmissionLoader):
    """``transmission_interface/SimpleTransmission``: actuator ``<mechanicalReduction>`` (required),
    joint ``<offset>`` (optional, 0)."""

    def load(self, info: TransmissionInfo) -> Transmission:
        self.check_counts(info, 1, 1)
        reduction = self.get_number(info, info.actuators[0], "actuator", "mechanicalReduction", True, 1.0)
        offset = self.get_number(info, info.joints[0], "joint", "offset", False, 0.0)
        return self.construct(info, SimpleTransmission, reduction, offset)


class _TwoByTwoLoader(TransmissionLoader):
    def read(self, info: TransmissionInfo):
        self.check_counts(info, 2, 2)
        actuators = self.order_by_role(info, info.actuators, "actuator", ("actuator1", "actuator2"))
        joints = self.order_by_role(info, info.joints, "joint", ("joint1", "joint2"))
        act_red = [self.get_number(info, a, "actuator", "mechanicalReduction", True, 1.0) for a in actuators]
        jnt_red = [self.get_number(info, j, "joint", "mechanicalReduction", False, 1.0) for j in joints]
        offsets = [self.get_number(info, j, "joint", "offset", False, 0.0) for j in joints]
        return joints, act_red, jnt_red, offsets


class DifferentialTransmissionLoader(_TwoByTwoLoader):
    """``transmission_interface/DifferentialTransmission``: roles actuator1/actuator2 and
    joint1/joint2 (required, distinct); actuator ``<mechanicalReduction>`` (required); joint
    ``<mechanicalReduction>`` (1) and ``<offset>`` (0) optional; ``<ignoreTransmissionAbsoluteEncoder/>``
    on both joints sets the swapped absolute-encoder mapping."""

    def load(self, info: TransmissionInfo) -> Transmission:
        joints, act_red, jnt_red, offsets = self.read(info)
        tag = "ignoreTransmissionAbsoluteEncoder"
        flags = [tag in j.values for j in joints]
        if any(flags) and not all(flags):
            raise self.error(info, f"<{tag}/> must be given on both joints or on none.")
        return self.construct(info, DifferentialTransmission, act_red, jnt_red, offsets, all(flags))


class FourBarLinkageTransmissionLoader(_TwoByTwoLoader):
    """``transmission_interface/FourBarLinkageTransmission``: same elements as the differential."""

    def load(self, info: TransmissionInfo) -> Transmission:
        _, act_red, jnt_red, offsets = self.read(info)
        return self.construct(info, FourBarLinkageTransmission, act_red, jnt_red, offsets)


#: URDF ``<type>`` → loader class (open registry).
TRANSMISSION_LOADERS = Registry("transmission type", TransmissionLoader)
for _loader in (SimpleTransmissionLoader, DifferentialTransmissionLoader, FourBarLinkageTransmissionLoader):
    TRANSMISSION_LOADERS.register("transmission_interface/" + _loader.__name__[: -len("Loader")], _loader)
del _loader


def load_transmission(info: TransmissionInfo, registry: Optional[Registry] = None) -> Transmission:
    """Build the transmission described by ``info`` through its ``<type>``'s loader.

    :raises TransmissionInterfaceError: unsupported type, or any rule above broken.
    """
    registry = registry if registry is not None else TRANSMISSION_LOADERS
    try:
        loader_cls = registry.resolve(info.type)
    except PluginError as err:
        raise TransmissionInterfaceError(
            f"Transmission '{info.name}' ({info.where}): unsupported type '{info.type}': {err.reason}"
        ) from err
    transmission = loader_cls().load(info)
    if not isinstance(transmission, Transmission):
        raise TransmissionInterfaceError(
            f"Transmission '{info.name}' ({info.where}): loader {loader_cls.__name__} returned "
            f"{transmission!r}, not a Transmission."
        )
    return transmission
