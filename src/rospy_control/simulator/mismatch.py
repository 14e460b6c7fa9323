"""Mismatch switches: a simulated device that is not what the hardware XML says (rehearsing
``hw_check scan``).  Read from the unit's ``<simulation>`` element:

* ``answer_id="N"`` (every protocol): the device's id is N, not the XML's ``can_id`` / ``node_id``
  (a DaMiao motor's slave id; its master id stays), as after someone changed it with a maker's tool;
* ``silent="true"`` (every protocol): the device never transmits (unpowered, broken wire);
* ``mode="mit"`` (RobStride / CyberGear): the motor was switched to its MIT protocol with the maker's
  tool (RobStride RS0x: a setting that takes a power cycle), so it answers MIT-mode frames at its id,
  with its model's ranges, and no longer its private protocol;
* protocol devices' own, read by their modules: ``id_offset="true"`` (DaMiao old firmware),
  ``cyclic="false"`` / ``encoder_estimates="off"`` (ODrive), ``nmt="stopped"`` and ``heartbeat_ms``
  (CiA 402).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

from rospy_control.devices.mit import codec as mit
from rospy_control.devices.robstride import codec as rs
from rospy_control.hardware_config.document import AttributeReader, to_bool, to_int, to_str
from rospy_control.hardware_config.records import Settings

__all__ = ["GENERIC", "as_built", "silent"]

#: the switches every simulated device takes (readers of ``<simulation>`` let them through)
GENERIC = ("answer_id", "silent", "mode")


def _reader(unit: Any) -> Optional[AttributeReader]:
    el = getattr(unit, "simulation", None)
    return AttributeReader(el) if el is not None else None


def as_built(unit: Any) -> Any:
    """The unit record the simulated device is built from: ``unit`` with ``answer_id`` and ``mode``
    applied."""
    unit = _in_mit_mode(unit)
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


#: the kinds of an MIT-mode motor record (what the firmware's own MIT model simulates)
_MIT_KINDS = ("Motor", "RequestReplyActuator", "CommandedActuator", "ActuatorUnit", "CanUnit", "HardwareUnit")


def _in_mit_mode(unit: Any) -> Any:
    """``unit`` as the MIT-mode motor a ``mode="mit"`` RobStride is (see the module docstring)."""
    r = _reader(unit)
    if r is None or not unit.is_a("RobStrideMotor"):
        return unit
    mode = r.get("mode", to_str, "private", check=lambda v: v in ("private", "mit"),
                 expected="private (its own protocol, as the XML says) or mit (switched to MIT mode)")
    if mode != "mit":
        return unit
    lim = rs.limits_for(str(unit.settings.get("model", "cybergear")))
    keep = ("direction", "zero_offset", "joint", "position_kp", "position_kd", "velocity_kd",
            "max_temperature", "fault_timeout", "watchdog_mode", "firmware_timeout", "wrap", "can_id")
    items = {k: unit.settings.get(k) for k in keep}
    items.update(limits=mit.MitLimits(lim.p_min, lim.p_max, lim.v_min, lim.v_max, lim.kp_min, lim.kp_max,
                                      lim.kd_min, lim.kd_max, lim.t_min, lim.t_max),
                 reply_dlc=8, firmware="mit")
    return dataclasses.replace(unit, type_name="rospy_control/Motor", kinds=_MIT_KINDS,
                               settings=Settings(items))


def silent(unit: Any) -> bool:
    """True when ``<simulation silent="true">``: the device never transmits."""
    r = _reader(unit)
    return bool(r.get("silent", to_bool, False)) if r is not None else False
