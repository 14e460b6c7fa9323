"""Configuration records: what each device's or channel's reader made of its element, typed and frozen.

The hardware XML is parsed once into located elements (:mod:`.document`); each ``<unit>`` and
``<channel>`` is then read by the one reader of its schema, the ``read_settings`` of the class its
``type`` names (a protocol's device module, :mod:`rospy_control.devices`, or the bus,
:mod:`rospy_control.bus.channel`), into a record of this module.  A record holds the checked
values by the names of the class's constructor arguments, every default filled in, and is never
changed afterwards.  Whoever needs a unit's configuration takes the record:

* the middleware builds the driver's device from it (``from_config``);
* the simulator builds the simulated device that answers for it, without ever seeing the driver's
  objects (:mod:`rospy_control.simulator`);
* the gravity code binds actuators to joints by its ``name`` and ``joint``.

A record reads like the object it configures: ``config.can_id``, ``config.direction``,
``config.get("ranges")``; ``config.is_a("Motor")`` asks for the configuring class or one of its
bases by name (user subclasses of a protocol's device are simulated as that protocol).
"""
from __future__ import annotations

import inspect
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Tuple

from rospy_control.hardware_config.element import Attributes, ElementInfo

__all__ = ["Settings", "ConfigRecord", "UnitConfig", "ChannelConfig", "RobotConfig", "constructor_settings"]


class Settings(Attributes):
    """A read-only ``argument name -> value`` mapping (values of any type; picklable)."""

    __slots__ = ()

    def __getitem__(self, key: str) -> Any:
        return self._items[key]

    def __repr__(self) -> str:
        return f"Settings({self._items!r})"

    def __reduce__(self):
        return (Settings, (self._items,))


_DEFAULTS_CACHE: Dict[type, Dict[str, Any]] = {}


def _constructor_defaults(cls: type) -> Dict[str, Any]:
    """The keyword defaults of ``cls``'s constructor and of every base's it forwards ``**kwargs`` to
    (the most derived class's default wins)."""
    cached = _DEFAULTS_CACHE.get(cls)
    if cached is not None:
        return cached
    out: Dict[str, Any] = {}
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is None:
            continue
        try:
            params = inspect.signature(init).parameters.values()
        except (TypeError, ValueError):
            continue
        for p in params:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.default is not p.empty:
                out.setdefault(p.name, p.default)
    _DEFAULTS_CACHE[cls] = out
    return out


def constructor_settings(cls: type, settings: Mapping[str, Any]) -> Settings:
    """``settings`` (what a reader read: constructor keyword arguments) completed with the defaults of
    ``cls``'s constructor chain, frozen."""
    out = dict(_constructor_defaults(cls))
    out.update(settings)
    return Settings(out)


@dataclass(frozen=True, eq=False)
class ConfigRecord:
    """What a class's reader made of one element.

    :ivar name: the element's ``name``.
    :ivar type_name: the ``type`` it names.
    :ivar kinds: the configuring class and its bases, by class name, most derived first.
    :ivar element: the element (file, line, children) for messages and the parts no reader owns.
    :ivar settings: the checked values by constructor argument name, defaults filled in.
    :ivar arguments: the names the reader read (what the configuring class's constructor is given).
    """

    name: str
    type_name: str
    kinds: Tuple[str, ...]
    element: ElementInfo
    settings: Settings
    arguments: Tuple[str, ...] = ()

    @property
    def where(self) -> str:
        """``file:line`` of the element."""
        return f"{self.element.source}:{self.element.line}"

    def is_a(self, kind: str) -> bool:
        """True when the configuring class, or one of its bases, is called ``kind``."""
        return kind in self.kinds

    def get(self, key: str, default: Any = None) -> Any:
        return self.settings.get(key, default)

    def __post_init__(self) -> None:
        # the settings read like the configured object's attributes (plain attributes: the simulated
        # devices read some on every frame); a name the record itself has keeps the record's meaning
        names = set(self.__dataclass_fields__)
        for key, value in self.settings.items():
            if key not in names and not hasattr(type(self), key):
                object.__setattr__(self, key, value)

    def __getattr__(self, key: str) -> Any:
        # only called for names that are neither fields nor settings
        if key.startswith("__"):
            raise AttributeError(key)
        try:
            return self.__dict__["settings"][key]   # a setting named like a record's own attribute
        except KeyError:
            raise AttributeError(f"{type(self).__name__} of '{self.__dict__.get('name')}' "
                                 f"({self.__dict__.get('type_name')}) has no setting '{key}'") from None


@dataclass(frozen=True, eq=False)
class UnitConfig(ConfigRecord):
    """A ``<unit>`` or ``<group>``: the record plus its place (channel, group, members) and its
    ``<simulation>`` element, which only the simulator reads."""

    channel: Optional[str] = None
    group: Optional[str] = None
    members: Tuple[str, ...] = ()
    simulation: Optional[ElementInfo] = None
    #: the parsed element the record was read from (a type that builds itself in ``from_info``)
    info: Any = field(default=None, repr=False)


@dataclass(frozen=True, eq=False)
class ChannelConfig(ConfigRecord):
    """A ``<channel>``: the record plus its ``<simulation>`` element and its units, in file order."""

    simulation: Optional[ElementInfo] = None
    units: Tuple[UnitConfig, ...] = ()


@dataclass(frozen=True, eq=False)
class RobotConfig:
    """The whole description as records: the root ``<hardware>`` element, the channels (each with its
    units) and every unit and group in file order."""

    name: str
    source: str
    element: ElementInfo
    channels: Tuple[ChannelConfig, ...]
    units: Tuple[UnitConfig, ...]

    def unit(self, name: str) -> UnitConfig:
        """:raises KeyError: no unit or group called ``name``."""
        for u in self.units:
            if u.name == name:
                return u
        raise KeyError(name)

    def channel(self, name: str) -> ChannelConfig:
        """:raises KeyError: no channel called ``name``."""
        for c in self.channels:
            if c.name == name:
                return c
        raise KeyError(name)

    def has_unit(self, name: str) -> bool:
        return any(u.name == name for u in self.units)

    def has_channel(self, name: str) -> bool:
        return any(c.name == name for c in self.channels)
