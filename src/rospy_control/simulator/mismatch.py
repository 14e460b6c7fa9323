"""Mismatch switches: a simulated device that is not what the hardware XML says (rehearsing
``hw_check scan``).  Read from the unit's ``<simulation>`` element:

* ``answer_id="N"`` (every protocol): the device's id is N, not the XML's ``can_id`` / ``node_id``
  (a DaMiao motor's slave id; its master id stays), as after someone changed it with a maker's tool;
* ``silent="true"`` (every protocol): the device never transmits (unpowered, broken wire);
* protocol devices' own, read by their modules: ``id_offset="true"`` (DaMiao old firmware),
  ``cyclic="false"`` / ``encoder_estimates="off"`` (ODrive), ``nmt="stopped"`` and ``heartbeat_ms``
  (CiA 402).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from rospy_control.hardware_config.document import AttributeReader, to_bool, to_int
from rospy_control.hardware_config.records import Settings

__all__ = ["GENERIC", "as_built", "silent"]

#: the switches every simulated device takes (readers of ``<simulation>`` let them through)
GENERIC = ("answer_id", "silent")


def _reader(unit: Any) -> Optional[AttributeReader]:
    el = getattr(unit, "simulation", None)
    return AttributeReader(el) if el is not None else None


def as_built(unit: Any) -> Any:
    """The unit record the simulated device is built from: ``unit`` with ``answer_id`` applied."""
    r = _reader(unit)
    if r is None:
        return unit
    new_id = r.get("answer_id", to_int, None, check=lambda v: 0 <= v <= 0x7FF,
                   expected="the id the device answers at instead of the XML's (0..2047)")
    if new_id is None:
        return unit
    items = dict(unit.settings.items())
    for key in ("can_id", "node_id"):
        if key in items:
            items[key] = new_id
    return dataclasses.replace(unit, settings=Settings(items))


def silent(unit: Any) -> bool:
    """True when ``<simulation silent="true">``: the device never transmits."""
    r = _reader(unit)
    return bool(r.get("silent", to_bool, False)) if r is not None else False
