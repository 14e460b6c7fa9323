"""The hardware XML's robot-level gravity options (schema in docs/hardware_xml.md, docs/gravity.md).

Two optional children of ``<hardware>``::

    <!-- what the simulated firmware applies (used only where a channel is simulated) -->
    <simulation gravity="0 0 -9.80665">
      <payload link="tool_link" mass="0.5" xyz="0 0 0.05"/>   <!-- a load the URDF does not know -->
    </simulation>

    <!-- the driver's gravity feed-forward (MiddlewareRobotHW) -->
    <gravity_compensation enabled="true" gravity="0 0 -9.80665">
      <payload link="tool_link" mass="0.2" xyz="0 0 0.03"/>   <!-- the payload estimate -->
      <joint name="gripper_finger_joint" enabled="false"/>
    </gravity_compensation>

Without ``<gravity_compensation>`` the feed-forward is off; without the root ``<simulation>`` the
simulator applies the URDF's own weights under standard gravity (when it was given a URDF).
"""
from __future__ import annotations

import os
from typing import Any, FrozenSet, NamedTuple, Optional, Tuple

from rospy_control.dynamics.gravity import STANDARD_GRAVITY, Payload
from rospy_control.hardware_config.document import (
    AttributeReader, ElementInfo, non_negative, parse_hardware_xml, to_bool, to_float, to_str,
)

__all__ = ["GravityOptions", "read_gravity_options", "simulation_options", "compensation_options",
           "hardware_root", "configuration_root"]


def to_vec3(text: str) -> Tuple[float, float, float]:
    """Three finite numbers separated by spaces."""
    parts = text.split()
    if len(parts) != 3:
        raise ValueError("not three numbers")
    a, b, c = (to_float(p) for p in parts)
    return (a, b, c)


to_vec3.expected = "three finite numbers 'x y z'"  # type: ignore[attr-defined]


class GravityOptions(NamedTuple):
    """One gravity element: on/off, gravity vector (root link frame), payloads, joints switched off."""

    enabled: bool = False
    gravity: Tuple[float, float, float] = STANDARD_GRAVITY
    payloads: Tuple[Payload, ...] = ()
    disabled_joints: FrozenSet[str] = frozenset()
    where: str = ""


def _read(el: Optional[ElementInfo], default_enabled: bool, joints_allowed: bool) -> GravityOptions:
    if el is None:
        return GravityOptions(enabled=default_enabled)
    r = AttributeReader(el)
    enabled = r.get("enabled", to_bool, True)
    gravity = r.get("gravity", to_vec3, STANDARD_GRAVITY)
    r.finish()
    payloads = []
    disabled = set()
    for c in el.children:
        if c.tag == "payload":
            pr = AttributeReader(c)
            link = pr.get("link", to_str)
            mass = pr.get("mass", to_float, check=non_negative, expected="a mass >= 0 (kg)")
            payloads.append(Payload(link, mass, pr.get("xyz", to_vec3, (0.0, 0.0, 0.0))))
            pr.finish()
        elif c.tag == "joint" and joints_allowed:
            jr = AttributeReader(c)
            name = jr.get("name", to_str)
            if not jr.get("enabled", to_bool, True):
                disabled.add(name)
            jr.finish()
        else:
            allowed = "<payload> or <joint>" if joints_allowed else "<payload>"
            raise c.error(f"unexpected element <{c.tag}> inside {el.describe()}; expected {allowed}")
    return GravityOptions(enabled, gravity, tuple(payloads), frozenset(disabled), f"{el.source}:{el.line}")


def hardware_root(hardware_xml: Optional[str]) -> Optional[ElementInfo]:
    """The parsed ``<hardware>`` element of a path or XML text (None: nothing readable given, e.g. a
    middleware built from text whose ``source`` is ``<xml string>``).

    :raises ConfigError: malformed XML.
    """
    if not hardware_xml:
        return None
    if not hardware_xml.lstrip().startswith("<") and not os.path.isfile(hardware_xml):
        return None
    return parse_hardware_xml(hardware_xml).element


def configuration_root(middleware: Any, hardware_xml: Optional[str] = None) -> Optional[ElementInfo]:
    """The ``<hardware>`` element the gravity options of ``middleware`` come from: the one the middleware
    already parsed (``middleware.info``), unless ``hardware_xml`` names another description (a path
    other than the middleware's file, or XML text for a middleware built from a file), which is
    parsed then (:func:`hardware_root`).

    :raises ConfigError: ``hardware_xml`` is malformed XML.
    """
    info = getattr(middleware, "info", None)
    if info is not None:
        if hardware_xml is None:
            return info.element
        text = hardware_xml.lstrip().startswith("<")
        if not text and os.path.isfile(str(info.source)) and os.path.isfile(hardware_xml) \
                and os.path.samefile(hardware_xml, str(info.source)):
            return info.element
    elif hardware_xml is None and os.path.isfile(str(getattr(middleware, "source", ""))):
        hardware_xml = middleware.source
    return hardware_root(hardware_xml)


def simulation_options(root: Optional[ElementInfo]) -> GravityOptions:
    """The root ``<simulation>`` (what the simulated firmware applies); on by default.

    :raises ConfigError: a bad attribute or child.
    """
    return _read(root.child("simulation") if root is not None else None, True, False)


def compensation_options(root: Optional[ElementInfo]) -> GravityOptions:
    """``<gravity_compensation>`` (the driver's feed-forward); off when absent.

    :raises ConfigError: a bad attribute or child.
    """
    return _read(root.child("gravity_compensation") if root is not None else None, False, True)


def read_gravity_options(hardware_xml: Optional[str]) -> Tuple[GravityOptions, GravityOptions]:
    """``(simulation, compensation)`` options of a hardware XML path or text (the entry point for a
    description no middleware has parsed; with a middleware at hand use :func:`configuration_root`)."""
    root = hardware_root(hardware_xml)
    return simulation_options(root), compensation_options(root)
