"""Hardware XML -> plain data (phase 1 of 2; no objects, no I/O besides reading the file).

:func:`parse_hardware_xml` turns the document into :class:`HardwareInfo` holding
:class:`ChannelInfo` and :class:`UnitInfo` records that remember file and line of every element.
Phase 2 (:class:`~.middleware.Middleware`) resolves the ``type`` strings and lets each class read its
attributes with :class:`AttributeReader`, which raises :class:`~rospy_control.exceptions.ConfigError`
messages of the form ``file:line: <unit name='x'>: attribute 'can_id'='abc': expected an integer``.

The schema is documented in ``docs/hardware_xml.md``.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from .element import ElementInfo
from .reader import read_xml

__all__ = [
    "ElementInfo", "ChannelInfo", "UnitInfo", "HardwareInfo", "parse_hardware_xml", "AttributeReader",
    "read_xml", "to_int", "to_float", "to_bool", "to_str",
]


class ChannelInfo(NamedTuple):
    """A ``<channel>`` element."""

    name: str
    type: str
    element: ElementInfo
    simulation: Optional[ElementInfo]


class UnitInfo(NamedTuple):
    """A ``<unit>`` or ``<group>`` element; ``members`` are the names of a group's direct children."""

    name: str
    type: str
    channel: Optional[str]
    group: Optional[str]
    element: ElementInfo
    members: Tuple[str, ...]


class HardwareInfo(NamedTuple):
    """The whole document."""

    name: str
    source: str
    element: ElementInfo
    channels: Tuple[ChannelInfo, ...]
    units: Tuple[UnitInfo, ...]


def parse_hardware_xml(source: str) -> HardwareInfo:
    """Parse a hardware description from a file path or from XML text (starting with ``<``).

    :raises ConfigError: unreadable file, malformed XML, wrong structure, duplicate names, a unit
        bound to a channel that does not exist.  Attribute values are checked in phase 2.
    """
    doc = read_xml(source, not_found="hardware description file not found (expected a path or XML text)")
    name = doc.source
    if doc.tag != "hardware":
        raise doc.error("the root element must be <hardware>")
    channels: List[ChannelInfo] = []
    units: List[UnitInfo] = []
    seen: Dict[str, ElementInfo] = {}

    def need_name(el: ElementInfo) -> str:
        n = el.attributes.get("name", "").strip()
        if not n:
            raise el.error("attribute 'name' is missing or empty: every element of this kind needs a name")
        if n in seen:
            first = seen[n]
            raise el.error(f"duplicate name '{n}' (first defined at {first.source}:{first.line}); "
                           "names of channels, groups and units must be unique")
        seen[n] = el
        return n

    def walk(el: ElementInfo, group: Optional[str], channel: Optional[str]) -> List[str]:
        names = []
        for c in el.children:
            if c.tag == "unit":
                n = need_name(c)
                t = c.attributes.get("type", "").strip()
                if not t:
                    raise c.error("attribute 'type' is missing: expected a unit type such as "
                                  "'rospy_control/Motor' or 'module:Class'")
                units.append(UnitInfo(n, t, c.attributes.get("channel", channel), group, c, ()))
                names.append(n)
            elif c.tag == "group":
                n = need_name(c)
                t = c.attributes.get("type", "rospy_control/UnitGroup").strip()
                ch = c.attributes.get("channel", channel)
                idx = len(units)
                members = walk(c, n, ch)
                units.insert(idx, UnitInfo(n, t, ch, group, c, tuple(members)))  # parents before children
                names.append(n)
            elif el is not doc and c.tag in ("limits", "gains", "simulation", "covariance"):
                continue
            elif el is doc and c.tag in ("channel", "simulation", "gravity_compensation"):
                continue  # read by Middleware (channels) and rospy_control.dynamics (the other two)
            else:
                where = "inside <hardware>" if el is doc else f"inside {el.describe()}"
                top = "<channel>, <group>, <unit>, <simulation> or <gravity_compensation>"
                raise c.error(f"unexpected element <{c.tag}> {where}; expected "
                              + (top if el is doc else "<group> or <unit>"))
        return names

    for c in doc.children:
        if c.tag == "channel":
            n = need_name(c)
            t = c.attributes.get("type", "rospy_control/CanChannel").strip()
            for cc in c.children:
                if cc.tag != "simulation":
                    raise cc.error(f"unexpected element <{cc.tag}> inside {c.describe()}; "
                                   "expected only <simulation>")
            channels.append(ChannelInfo(n, t, c, c.child("simulation")))
    walk(doc, None, None)
    channel_names = [c.name for c in channels]
    for u in units:
        if u.channel is not None and u.channel not in channel_names:
            raise u.element.error(
                f"attribute 'channel'='{u.channel}': no such channel; defined channels: "
                f"{', '.join(channel_names) or '(none)'}")
    return HardwareInfo(doc.attributes.get("name", "hardware"), name, doc, tuple(channels), tuple(units))


# -- typed attribute access -------------------------------------------------------------------------

def to_int(text: str) -> int:
    """Decimal or ``0x`` hex integer."""
    return int(text.strip(), 0)


to_int.expected = "an integer (decimal or 0x hex)"  # type: ignore[attr-defined]


def to_float(text: str) -> float:
    """Finite float."""
    v = float(text)
    if v != v or v in (float("inf"), float("-inf")):
        raise ValueError("not finite")
    return v


to_float.expected = "a finite number"  # type: ignore[attr-defined]

_BOOLS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def to_bool(text: str) -> bool:
    """true/false/1/0/yes/no."""
    return _BOOLS[text.strip().lower()]


to_bool.expected = "a boolean (true/false)"  # type: ignore[attr-defined]


def to_str(text: str) -> str:
    """Non-empty string."""
    if not text.strip():
        raise ValueError("empty")
    return text.strip()


to_str.expected = "a non-empty string"  # type: ignore[attr-defined]

_REQUIRED = object()


class AttributeReader:
    """Typed, located access to one element's attributes; reports unknown attributes.

    Use :meth:`get` for every attribute the class understands, then :meth:`finish` to reject the
    rest (typos fail at load time, with the list of accepted attributes).
    """

    def __init__(self, element: ElementInfo, ignore: Sequence[str] = ()) -> None:
        self.element = element
        self._used = set(ignore)

    def get(self, name: str, convert: Callable[[str], object] = to_str, default=_REQUIRED,
            check: Optional[Callable[[Any], bool]] = None, expected: Optional[str] = None):
        """Return attribute ``name`` converted by ``convert``; ``default`` if absent (required if none).

        :param check: extra predicate on the converted value; ``expected`` describes it.
        :raises ConfigError: missing required attribute, conversion failure or failed check.
        """
        self._used.add(name)
        exp = expected or getattr(convert, "expected", "a valid value")
        raw = self.element.attributes.get(name)
        if raw is None:
            if default is _REQUIRED:
                raise self.element.error(f"required attribute '{name}' is missing: expected {exp}")
            return default
        try:
            value = convert(raw)
        except (ValueError, KeyError, TypeError):
            raise self.element.error(f"attribute '{name}'='{raw}': expected {exp}") from None
        if check is not None and not check(value):
            raise self.element.error(f"attribute '{name}'='{raw}': expected {exp}")
        return value

    def seconds(self, name: str, default=_REQUIRED) -> Any:
        """A duration attribute: a positive number of seconds (see :meth:`get`)."""
        return self.get(name, to_float, default, check=positive, expected="a positive number of seconds")

    def finish(self) -> None:
        """Raise ConfigError if the element has attributes nobody read."""
        unknown = sorted(set(self.element.attributes) - self._used)
        if unknown:
            raise self.element.error(
                f"unknown attribute '{unknown[0]}'='{self.element.attributes[unknown[0]]}'; "
                f"accepted attributes: {', '.join(sorted(self._used))}")


def positive(v) -> bool:
    return v > 0


def non_negative(v) -> bool:
    return v >= 0
