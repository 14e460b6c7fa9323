"""What a bus scan shares across protocols: probe frames, sightings, and the comparison with the XML.

A protocol's scanner (``devices/<protocol>/probe.py``, a :class:`Scanner`) says

* which units of the hardware XML it looks for, and at which id (:meth:`Scanner.expected`);
* which frames it sends, in rounds (:meth:`Scanner.probes`): every id its protocol allows in round 0,
  follow-up questions to the devices that answered (or to the XML's units that did not) in later
  rounds.  Probes never move anything: each protocol's module says why its frames are safe;
* what a frame it receives tells: an answer to its probes (:meth:`Scanner.reply`) or a frame the
  device sends on its own, heard while listening (:meth:`Scanner.passive`), as a :class:`Sighting`;
* what the sightings of one device add up to (:meth:`Scanner.review`: e.g. an ODrive whose heartbeat
  comes but whose encoder estimates do not).

:func:`compare` then names every difference between the XML and what answered, as :class:`Finding`
records: a unit that does not answer; a device at another id; a device answering another protocol
or mode at the unit's id; a device in a state the driver cannot use; a device the XML does not name.
Nothing here does I/O: ``hw_check scan`` sends and receives.
"""
from __future__ import annotations

from typing import Dict, List, Mapping, NamedTuple, Optional, Sequence, Tuple

import can

__all__ = ["Probe", "Sighting", "Expected", "Finding", "Scanner", "compare", "frame_time", "is_a", "by_ident"]


class Probe(NamedTuple):
    """One frame a scanner sends."""

    arbitration_id: int
    data: bytes = b""
    extended: bool = False
    #: a remote (RTR) frame of DLC ``rtr_dlc`` (``data`` unused)
    remote: bool = False
    rtr_dlc: int = 0

    def message(self) -> can.Message:
        if self.remote:
            return can.Message(arbitration_id=self.arbitration_id, is_extended_id=self.extended,
                               is_remote_frame=True, dlc=self.rtr_dlc)
        return can.Message(arbitration_id=self.arbitration_id, is_extended_id=self.extended, data=self.data)


class Sighting(NamedTuple):
    """A device seen on the bus: its protocol, its id in that protocol, what it told about itself."""

    protocol: str
    ident: int
    #: firmware, identity, state (printed with the device)
    detail: str = ""
    #: a difference the device itself shows, with its fix (cyclic messages off, wrong NMT state, ...)
    problem: str = ""
    #: how it was seen ("answers", "heartbeat", ...): review() merges sightings of one device
    how: str = ""


class Expected(NamedTuple):
    """A unit of the hardware XML as a scanner looks for it."""

    unit: str
    protocol: str
    ident: int
    #: ``file:line`` of its ``<unit>`` element
    where: str


class Finding(NamedTuple):
    """One difference between the XML and the bus."""

    #: "missing" (no answer anywhere), "moved" (another id), "protocol" (another protocol or mode),
    #: "state" (answers, but not usable as it is), "unexpected" (not in the XML)
    kind: str
    unit: Optional[str]
    text: str


class Scanner:
    """One protocol's probes and decoding (see the module docstring)."""

    #: the protocol's name as printed
    protocol = ""
    #: number of probe rounds
    rounds = 1
    #: protocols whose devices can be switched to answer this one instead (e.g. a RobStride motor in
    #: MIT mode): a sighting of this protocol at the id of such a unit is named as that difference
    alternative_of: Sequence[str] = ()
    #: what to do about a unit of ``alternative_of`` found speaking this protocol
    alternative_fix = ""

    def expected(self, unit) -> Optional[Expected]:
        """The unit as this scanner looks for it (None: not this protocol's)."""
        return None

    def probes(self, round_: int, expected: List[Expected], seen: List[Sighting]) -> List[Probe]:
        """The frames of round ``round_`` (``seen``: this scanner's sightings so far)."""
        return []

    def reply(self, round_: int, msg: can.Message) -> Optional[Sighting]:
        """What a frame received during round ``round_`` of this scanner's probes tells (None: not
        one of its answers); by default what :meth:`passive` makes of it."""
        return self.passive(msg)

    def passive(self, msg: can.Message) -> Optional[Sighting]:
        """What a frame the device sends unasked tells (None: not one of this protocol's)."""
        return None

    def review(self, seen: List[Sighting]) -> List[Sighting]:
        """One sighting per device (merging what was heard and what answered); by default the first of
        each id, with the details of all."""
        out: Dict[int, Sighting] = {}
        for s in seen:
            old = out.get(s.ident)
            if old is None:
                out[s.ident] = s
            else:
                extra = [d for d in (old.detail, s.detail) if d and d not in old.detail]
                detail = ", ".join(extra) or old.detail
                out[s.ident] = old._replace(detail=detail, problem=old.problem or s.problem)
        return [out[k] for k in sorted(out)]


def by_ident(seen: List[Sighting]) -> List[Tuple[int, List[Sighting]]]:
    """The sightings grouped by the id they came from, in id order (a probe's ``review``)."""
    groups: Dict[int, List[Sighting]] = {}
    for s in seen:
        groups.setdefault(s.ident, []).append(s)
    return sorted(groups.items())


def is_a(unit, kind: str) -> bool:
    """True when ``unit``'s class, or one of its bases, is called ``kind`` (user subclasses of a
    protocol's device scan as that protocol)."""
    return any(k.__name__ == kind for k in type(unit).__mro__)


def _label(protocol: str, ident: int) -> str:
    return f"{protocol} id {ident} (0x{ident:X})"


def compare(expected: List[Expected], seen: List[Sighting],
            alternatives: Optional[Mapping[str, Sequence[str]]] = None,
            fixes: Optional[Mapping[str, str]] = None) -> List[Finding]:
    """Every difference between the units ``expected`` and the devices ``seen`` (one channel).

    ``alternatives``: ``{protocol: protocols a device of it can be switched to}`` (from
    :attr:`Scanner.alternative_of`); ``fixes``: what to do, by the protocol found instead.
    """
    alternatives = alternatives or {}
    fixes = fixes or {}
    left = list(seen)
    findings: List[Finding] = []

    def take(pred) -> Optional[Sighting]:
        for s in left:
            if pred(s):
                left.remove(s)
                return s
        return None

    missing: List[Expected] = []
    for e in expected:
        s = take(lambda s, e=e: s.protocol == e.protocol and s.ident == e.ident)
        if s is None:
            missing.append(e)
        elif s.problem:
            findings.append(Finding("state", e.unit, f"'{e.unit}' ({e.where}): {s.problem}"))
    still: List[Expected] = []
    for e in missing:
        s = take(lambda s, e=e: s.ident == e.ident and s.protocol in alternatives.get(e.protocol, ()))
        if s is None:
            still.append(e)
            continue
        fix = fixes.get(s.protocol, "")
        findings.append(Finding("protocol", e.unit, f"'{e.unit}' ({e.where}) is configured as {e.protocol} "
                                                    f"id {e.ident}, but answers {s.protocol} at that id"
                                                    + (f": {fix}" if fix else "")))
    taken = {(e.protocol, e.ident) for e in expected}
    for e in still:
        s = take(lambda s, e=e: s.protocol == e.protocol and (s.protocol, s.ident) not in taken)
        if s is None:
            findings.append(Finding("missing", e.unit, f"'{e.unit}' ({e.where}): no {e.protocol} device "
                                                       f"answers at id {e.ident} (0x{e.ident:X}) nor at "
                                                       "another id: check power, wiring, termination "
                                                       "and the channel's bitrate"))
        else:
            findings.append(Finding("moved", e.unit, f"'{e.unit}' ({e.where}) is configured at {e.protocol} "
                                                     f"id {e.ident} (0x{e.ident:X}), which does not answer; "
                                                     f"{_label(s.protocol, s.ident)} answers and is not in "
                                                     f"the XML: if it is this unit, set its id in the XML "
                                                     f"to {s.ident}, or the device's id to {e.ident} with "
                                                     "its maker's tool"))
    for s in left:
        findings.append(Finding("unexpected", None, f"{_label(s.protocol, s.ident)} answers but no unit of "
                                                    "the XML is configured there"
                                                    + (f" ({s.problem})" if s.problem else "")))
    return findings


def frame_time(dlc: int, extended: bool, bitrate: int) -> float:
    """Worst-case time on the wire (s) of a classic CAN data frame: header, payload, CRC, bit stuffing
    of the stuffable part, end of frame and interframe space."""
    header = 39 if extended else 19          # SOF .. DLC (29-bit: SRR, IDE, r1 too)
    stuffable = header + 8 * dlc + 15         # ... data, CRC
    bits = stuffable + (stuffable - 1) // 4 + 10 + 3
    return bits / float(bitrate)
