"""Protocol devices in the simulated firmware: which simulated device answers for which unit.

The simulated firmware of a channel (:class:`~.firmware.SimulatedFirmware`) asks :func:`peer_for`
for every unit first.  The units are configuration records
(:class:`~rospy_control.hardware_config.records.UnitConfig`: what the device module's reader made of
the ``<unit>`` element, frozen), never the driver's device objects.  A protocol module of this
package that simulates a device class offers a factory ``peer_for_unit(unit) -> Optional[peer]``;
:data:`PEER_FACTORIES` names it by the name of the unit's configuring class (or of a base of it:
``unit.kinds``), and it is imported only when a unit of that class is simulated.  A factory returns
None for a unit it leaves to the firmware's own models (an MIT ``Motor`` is a
:class:`~.motor.SimulatedMotor` unless it speaks CubeMars V3).

A *peer* is what the firmware drives, the shape of :class:`~.joint.SimulatedProtocolMotor`:

* ``name``; ``fault`` (the fault switch on, or None), ``frames`` (frames received), ``latency``
  (reply delay in s, None = the channel's);
* ``listen_ids()``: ``(arbitration_id, is_extended_id)`` of every frame it reads;
* ``handle_frame(msg, now, dt)``: the frames it sends in answer to ``msg`` (``now`` from
  ``time.perf_counter``, ``dt`` the integration step);
* ``tick(now, dt)``: the frames it sends on its own by ``now`` (cyclic messages, heartbeats);
* ``set_fault(fault, value)`` / ``clear_fault()``: the fault switches, ``faults`` lists them
  (``silent`` and the device's own error conditions, named as its manual names them);
* ``joint_position()``: the unit's position as the RobotHW sees it (rad; direction, zero offset and
  the device's own zero applied);
* ``joint``: its :class:`~.joint.JointModel` (built by :func:`joint_model`, so it knows its ``unit``):
  what the simulator's gravity loads (``joint_position()``, ``gravity_load``, ``gravity``), the same
  interface an MIT :class:`~.motor.SimulatedMotor` offers itself.

:func:`joint_model` builds the :class:`~.joint.JointModel` of a unit from its ``<simulation>``
element, with the same attributes and defaults as an MIT motor's (``inertia``, ``damping``,
``friction``, ``torque_limit``, ``load_torque``, ``stop_min``/``stop_max`` and ``initial_position``
joint side, ``temperature``), so every protocol's example arm moves alike.
"""
from __future__ import annotations

import importlib
from typing import Any, Dict, Optional

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_config.document import AttributeReader, non_negative, positive, to_float
from rospy_control.simulator.joint import JointModel
from rospy_control.simulator.mismatch import GENERIC

__all__ = ["PEER_FACTORIES", "peer_for", "joint_model"]

#: unit class name -> "module:function" of its factory (see the module docstring)
PEER_FACTORIES: Dict[str, str] = {
    "DamiaoMotor": "rospy_control.simulator.damiao:peer_for_unit",
    "OdriveAxis": "rospy_control.simulator.odrive:peer_for_unit",
    "RobStrideMotor": "rospy_control.simulator.robstride:peer_for_unit",
    "Cia402Drive": "rospy_control.simulator.cia402_peer:peer_for_unit",
    "Motor": "rospy_control.simulator.cubemars:peer_for_unit",
}


def peer_for(unit: Any) -> Optional[Any]:
    """The protocol peer simulating ``unit``, or None when the firmware's own models do (or none)."""
    for kind in unit.kinds:
        target = PEER_FACTORIES.get(kind)
        if target is None:
            continue
        module_name, func = target.split(":")
        try:
            factory = getattr(importlib.import_module(module_name), func)
        except (ImportError, AttributeError):
            return None          # that protocol's simulation is not there (yet): the firmware warns
        return factory(unit)
    return None


def joint_model(unit: Any, defaults: Optional[Dict[str, float]] = None) -> JointModel:
    """The joint a protocol device drives, from the unit's ``<simulation>`` element (motor frame).

    ``defaults`` overrides the attributes' defaults (``torque_limit`` = the device's peak torque,
    for instance).  Reads and checks every attribute it knows, then leaves the reader open: the
    caller reads its protocol's own attributes and calls ``finish()`` on the joint's ``reader`` (None
    without a ``<simulation>`` element).
    Raises :class:`ConfigError` naming the file, line, attribute and value.
    """
    d = {"inertia": 0.01, "damping": 0.05, "friction": 0.05, "torque_limit": 1e9, "load_torque": 0.0,
         "temperature": 35.0, "initial_position": 0.0}
    d.update(defaults or {})
    el = getattr(unit, "simulation", None)
    r = AttributeReader(el, ignore=GENERIC) if el is not None else None

    def get(key, check=None, expected=""):
        if r is None:
            return d.get(key)
        if check is None:
            return r.get(key, to_float, d.get(key))
        return r.get(key, to_float, d.get(key), check=check, expected=expected)

    inertia = get("inertia", positive, "a positive inertia (kg m^2)")
    damping = get("damping", non_negative, "a number >= 0 (N m s/rad)")
    friction = get("friction", non_negative, "a number >= 0 (N m)")
    torque_limit = get("torque_limit", positive, "a positive torque (N m)")
    load = get("load_torque")
    temperature = get("temperature")
    init = get("initial_position")
    stop_min = get("stop_min")
    stop_max = get("stop_max")
    direction = getattr(unit, "direction", 1)
    offset = getattr(unit, "zero_offset", 0.0)
    lo, hi = -1e9, 1e9
    if stop_min is not None:
        a = direction * stop_min + offset
        lo, hi = (a, hi) if direction > 0 else (lo, a)
    if stop_max is not None:
        b = direction * stop_max + offset
        lo, hi = (lo, b) if direction > 0 else (b, hi)
    if not lo < hi:
        where = f" ({el.source}:{el.line})" if el is not None else ""
        raise ConfigError(f"<simulation> of '{unit.name}'{where}: stop_min must be below stop_max")
    joint = JointModel(inertia=inertia, damping=damping, friction=friction, torque_limit=torque_limit,
                       stop_min=lo, stop_max=hi, position=direction * init + offset, load=load,
                       temperature=temperature)
    joint.unit = unit
    joint.reader = r
    return joint
