"""The one place that reads URDF text: safe parsing, the ``robot_description`` look-up, joints.

Every layer that needs the robot model (transmissions, joint limits, robot_hw, controllers, tools)
goes through here, so a malformed description always fails the same way: a
:class:`~rospy_control.exceptions.ConfigError` naming where the text came from and the line.

``urdf_parser_py`` is not a dependency: the little of the model we need (joint names, types and
``<limit>``) is read directly with lxml.
"""
from __future__ import annotations

import math
from typing import Any, Dict, NamedTuple, Optional, Tuple, Union

from lxml import etree

from rospy_control.exceptions import ConfigError

__all__ = ["UrdfJoint", "parse_urdf", "urdf_joints", "element_xml", "find_robot_description",
           "load_robot_description"]

# No entity expansion and no network: a description is data, never a fetch.
_PARSER = etree.XMLParser(remove_comments=True, resolve_entities=False, no_network=True)


class UrdfJoint(NamedTuple):
    """A URDF ``<joint>``: ``type`` is revolute, continuous, prismatic, fixed, floating or planar.

    ``has_limits`` tells whether a ``<limit>`` element exists; without one the bounds are infinite.
    """

    name: str
    type: str
    lower: float = -math.inf
    upper: float = math.inf
    velocity: float = math.inf
    effort: float = math.inf
    has_limits: bool = False
    line: Optional[int] = None


def parse_urdf(text: Union[str, bytes], source: str = "robot_description", root_tag: Optional[str] = "robot"):
    """Parse URDF text and return the root element (lxml, with source lines).

    :param source: where the text came from (file or parameter), used in error messages.
    :param root_tag: the root element required (None: any, as the transmission parser reads
        ``<transmission>`` children of whatever root it is given).
    :raises ConfigError: the text is empty, not XML, or its root is not ``root_tag``.
    """
    if text is None or (isinstance(text, (str, bytes)) and not text.strip()):
        raise ConfigError("the robot description is empty", source)
    if not isinstance(text, (str, bytes)):
        raise ConfigError(f"the robot description must be XML text, got {type(text).__name__}", source)
    data = text.encode("utf-8") if isinstance(text, str) else text
    try:
        root = etree.fromstring(data, _PARSER)
    except etree.XMLSyntaxError as err:
        raise ConfigError(f"cannot parse the URDF: {err.msg}", source, getattr(err, "lineno", None)) from err
    if root_tag is not None and root.tag != root_tag:
        raise ConfigError(f"the root element is <{root.tag}>, expected <{root_tag}>", source, root.sourceline)
    return root


def element_xml(element: Any) -> str:
    """An element of a parsed URDF as XML text ("" for None)."""
    if element is None:
        return ""
    return etree.tostring(element, encoding="unicode", with_tail=False)


def urdf_joints(root, source: str = "robot_description") -> Dict[str, UrdfJoint]:
    """The ``<joint>`` children of ``<robot>`` by name (a ``<transmission>``'s joints do not count).

    :raises ConfigError: a ``<limit>`` attribute is not a number.
    """
    out: Dict[str, UrdfJoint] = {}
    for element in root.findall("joint"):
        name, kind = element.get("name"), element.get("type")
        if not name or not kind:
            continue
        limit = element.find("limit")
        if limit is None:
            out[name] = UrdfJoint(name, kind, line=element.sourceline)
            continue

        def number(key: str, default: float) -> float:
            text = limit.get(key)
            if text is None:
                return default
            try:
                return float(text)
            except ValueError:
                raise ConfigError(f"<limit {key}='{text}'> of joint '{name}' is not a number",
                                  source, limit.sourceline) from None

        out[name] = UrdfJoint(name, kind, number("lower", 0.0), number("upper", 0.0),
                              number("velocity", math.inf), number("effort", math.inf), True,
                              element.sourceline)
    return out


def find_robot_description(nh: Any, param: str = "robot_description") -> Tuple[Optional[Any], str]:
    """``(text, resolved_name)`` of ``param``, searched from ``nh``'s namespace up to the root (as
    roscpp's ``searchParam``, which ros_controllers use), else the global ``/param``; text is None
    when neither exists."""
    where = nh.search_param(param) if hasattr(nh, "search_param") else None
    if where is not None:
        return nh.get_param(where), where
    global_name = "/" + param.lstrip("/")
    return nh.get_param(global_name, None), global_name


def load_robot_description(nh: Any,
                           param: str = "robot_description") -> Tuple[Any, Dict[str, UrdfJoint], str]:
    """Find, parse and index the robot description: ``(root, joints_by_name, where)``.

    :raises ConfigError: the parameter does not exist or does not hold a valid URDF.
    """
    text, where = find_robot_description(nh, param)
    if text is None:
        raise ConfigError(
            f"Could not find parameter '{param}' on the parameter server (searched from "
            f"'{nh.namespace}' up to '/'); load the URDF first", where)
    root = parse_urdf(text, where)
    return root, urdf_joints(root, where), where
