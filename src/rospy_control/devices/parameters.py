"""Device parameters and ids, protocol-free: the model every protocol fills, and how to find a unit's.

A protocol that documents parameter access offers a :class:`ParameterAccess` subclass in its own
``devices/<protocol>/parameters.py``: its table of :class:`Parameter` (the maker's names and units,
type, range, whether the device lets it be written) and the frames of each operation as an
:class:`Exchange` -- the frame to send and how to recognise and decode its answer.  Nothing here does
I/O: ``hw_check params`` / ``backup`` / ``restore`` / ``set-id`` send the exchanges on a bus.

An operation a protocol's documents do not offer raises :class:`Refused` with a message that names the
protocol and the document, and sends nothing.  A value the device would refuse (range, type,
read-only) raises :class:`ParameterError` naming the parameter, the value and what it accepts.

:func:`access_for` finds the access of a unit by the name of its class (imported on first use).
"""
from __future__ import annotations

import importlib
import math
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Union

from rospy_control.devices.frame import Frame

__all__ = ["Parameter", "ParameterError", "Refused", "Exchange", "ParameterAccess", "NoParameterAccess",
           "ACCESS", "access_for", "Value", "parse_id"]

Value = Union[int, float]


class ParameterError(ValueError):
    """A parameter name or value the device would not take (unknown, read-only, out of range)."""


class Refused(Exception):
    """The operation is not documented for this protocol (or this device): nothing was sent."""


class Parameter(NamedTuple):
    """One documented parameter of a device.

    ``kind``: ``float``, ``uint`` or ``int``; ``lo``/``hi``: what the device accepts (the data type's
    range where the document gives no other); ``key``: the protocol's address of it (a register id,
    a parameter index, an ``(index, subindex)``, a command id); ``readable`` False for a write-only
    one (the device cannot report it); ``restore`` False for one that is written but not restored
    from a backup (an id: restoring it onto another device would clone that device's id).
    """

    name: str
    unit: str
    kind: str
    writable: bool
    lo: float = -math.inf
    hi: float = math.inf
    key: Any = None
    description: str = ""
    readable: bool = True
    restore: bool = True

    def parse(self, text: Union[str, Value]) -> Value:
        """The value of ``text`` (decimal or ``0x`` hex for integers), checked against the range.

        :raises ParameterError: not a number of this kind, or outside ``lo..hi``.
        """
        try:
            if isinstance(text, str):
                value: Value = float(text) if self.kind == "float" else int(text, 0)
            else:
                value = float(text) if self.kind == "float" else int(text)
                if self.kind != "float" and value != text:
                    raise ValueError(text)
        except ValueError:
            kind = "a number" if self.kind == "float" else "an integer"
            raise ParameterError(f"{self.name}: {text!r} is not {kind}") from None
        if not (self.lo <= value <= self.hi):  # also catches NaN
            raise ParameterError(f"{self.name}={value!r} is outside what the device accepts "
                                 f"[{self.lo:g}, {self.hi:g}]{' ' + self.unit if self.unit else ''}")
        return value

    def check_writable(self) -> None:
        """:raises ParameterError: the device does not let it be written."""
        if not self.writable:
            raise ParameterError(f"{self.name} is read-only on the device")


class Exchange(NamedTuple):
    """One request and its answer: ``frame`` to send; ``answer(arbitration_id, is_extended_id, data)``
    returns the decoded answer, or None for a frame that is not it (a feedback frame on the same id,
    another device's); it raises :class:`ParameterError` when the device answers with a refusal.
    ``answer`` None: the device sends no answer to this frame.  ``what`` names it in messages."""

    frame: Frame
    answer: Optional[Callable[[int, bool, bytes], Any]]
    what: str


def parse_id(text: str, lo: int, hi: int, protocol: str) -> int:
    """A device id from the command line (decimal or ``0x`` hex) within ``lo..hi``.

    :raises ParameterError: naming the protocol and the range.
    """
    try:
        value = int(text, 0)
    except ValueError:
        raise ParameterError(f"'{text}' is not an id (decimal or 0x hex)") from None
    if not lo <= value <= hi:
        raise ParameterError(f"id {value} (0x{value:X}) is outside {protocol}'s ids {lo}..{hi}")
    return value


class ParameterAccess:
    """The parameters and id of one unit, as its protocol's documents offer them.

    Subclasses set :attr:`PROTOCOL`, :attr:`DOCUMENT`, fill :attr:`parameters` and override the
    operations their documents offer; the others raise :class:`Refused` naming both.
    """

    #: the protocol's name in messages
    PROTOCOL = "this protocol"
    #: the document an operation follows (or whose silence a refusal cites)
    DOCUMENT = "its maker's documents"
    #: the XML attribute holding the device's id
    ID_ATTRIBUTE = "can_id"
    #: ids the protocol can address (inclusive)
    ID_RANGE = (1, 0x7F)

    def __init__(self, unit: Any) -> None:
        self.unit = unit
        #: name -> parameter, in the document's order
        self.parameters: Dict[str, Parameter] = {}

    # -- what a protocol fills ------------------------------------------------------------------------
    @property
    def device_id(self) -> int:
        """The id the XML gives the device (what a backup records)."""
        return int(getattr(self.unit, self.ID_ATTRIBUTE))

    def read(self, p: Parameter) -> Exchange:
        """Read ``p``; the answer decodes to its value."""
        raise Refused(self.refusal("reading parameters"))

    def write(self, p: Parameter, value: Value) -> Exchange:
        """Write ``value`` to ``p`` (RAM where the protocol keeps RAM and flash apart)."""
        raise Refused(self.refusal("writing parameters"))

    def writes(self, values: Dict[str, Value]) -> List[Exchange]:
        """The exchanges writing ``{name: value}`` (one :meth:`write` each unless a protocol's message
        carries several values)."""
        return [self.write(self.parameter(n), v) for n, v in values.items()]

    def save(self, device_id: Optional[int] = None) -> Exchange:
        """Store what was written so that it survives a power cycle (``device_id``: the device's id
        when it is no longer the XML's, after :meth:`set_id`)."""
        raise Refused(self.refusal("storing parameters in the device's memory"))

    def set_id(self, new_id: int) -> Exchange:
        """Give the device the id ``new_id``."""
        raise Refused(self.refusal("changing the device's id"))

    def probe(self, device_id: int) -> Exchange:
        """A request the device at ``device_id`` answers (to confirm it answers there after set-id)."""
        raise Refused(self.refusal("probing the device's id"))

    def id_notes(self, new_id: int) -> List[str]:
        """What else the id change means on this protocol (printed after it)."""
        return []

    def saved_with_id(self) -> bool:
        """True when the id change itself is stored by the device (no separate save needed)."""
        return False

    # -- shared ---------------------------------------------------------------------------------------
    def refusal(self, operation: str) -> str:
        return (f"{self.PROTOCOL} offers no command for {operation}: {self.DOCUMENT} documents none; "
                "nothing was sent")

    def parameter(self, name: str) -> Parameter:
        """The parameter called ``name`` (case-insensitive when unambiguous).

        :raises ParameterError: unknown name, listing the known ones.
        """
        p = self.parameters.get(name)
        if p is None:
            matches = [q for n, q in self.parameters.items() if n.lower() == name.lower()]
            if len(matches) == 1:
                return matches[0]
            known = ", ".join(self.parameters) or "none"
            raise ParameterError(f"{self.PROTOCOL} has no parameter '{name}'; known: {known}")
        return p

    def check_new_id(self, new_id: int, others: List[int]) -> None:
        """:raises ParameterError: ``new_id`` outside :attr:`ID_RANGE` or used by ``others``."""
        lo, hi = self.ID_RANGE
        if not lo <= new_id <= hi:
            raise ParameterError(f"id {new_id} (0x{new_id:X}) is outside {self.PROTOCOL}'s ids {lo}..{hi}")
        if new_id in others:
            raise ParameterError(f"id {new_id} (0x{new_id:X}) is already another unit's on this channel")


class NoParameterAccess(ParameterAccess):
    """A protocol without parameter or id commands: every operation is refused with ``reason``."""

    def __init__(self, unit: Any, protocol: str, document: str, reason: str) -> None:
        super().__init__(unit)
        self.PROTOCOL, self.DOCUMENT, self.reason = protocol, document, reason

    def refusal(self, operation: str) -> str:
        return (f"{self.PROTOCOL} has no command for {operation}: {self.reason} ({self.DOCUMENT}); "
                "nothing was sent")


#: unit class name -> "module:class" of its :class:`ParameterAccess` (imported on first use)
ACCESS: Dict[str, str] = {
    "DamiaoMotor": "rospy_control.devices.damiao.parameters:DamiaoParameters",
    "RobStrideMotor": "rospy_control.devices.robstride.parameters:RobStrideParameters",
    "OdriveAxis": "rospy_control.devices.odrive.parameters:OdriveParameters",
    "Cia402Drive": "rospy_control.devices.cia402.parameters:Cia402Parameters",
    "Motor": "rospy_control.devices.mit.parameters:mit_parameters",
}


def access_for(unit: Any) -> ParameterAccess:
    """The :class:`ParameterAccess` of ``unit`` (by its class or a base class's name).

    :raises Refused: a unit type without parameters (a sensor, a type this package does not know).
    """
    for cls in type(unit).__mro__:
        target = ACCESS.get(cls.__name__)
        if target is not None:
            module, name = target.split(":")
            return getattr(importlib.import_module(module), name)(unit)
    raise Refused(f"'{getattr(unit, 'name', unit)}' is a {type(unit).__name__}: this tool knows no parameters"
                  " "
                  f"or id commands for it; nothing was sent")
