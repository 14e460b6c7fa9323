"""Status of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` (any thread): plain data built from
the records and the middleware's snapshot.  The node's ``/diagnostics`` are built from it (and from
the snapshot) by one builder, :mod:`rospy_control.adapter.diagnostics`.
"""
from __future__ import annotations

from typing import Dict, Optional

from rospy_control.middleware import Middleware
from rospy_control.robot_hw._records import KIND_INTERFACES, Records

__all__ = ["build_status"]


def build_status(mw: Middleware, rec: Records, faulted_joints: Dict[str, str], switch: dict,
                 start_notes: Optional[Dict[str, str]] = None) -> dict:
    """Per-joint, per-motor and per-sensor status (plain data); ``switch`` is the last switch's,
    ``start_notes`` what the start-up position check said of a joint (refused, or a turn applied)."""
    start_notes = start_notes or {}
    snap = mw.snapshot().states
    joints = {}
    for name in sorted(rec.joints):
        j = rec.joints[name]
        joints[name] = {
            "interface": KIND_INTERFACES[j.kind].TYPE_NAME if j.kind else None,
            "controller": j.owner,
            "mode": j.group.mode.name,
            "transmission": j.group.name,
            "motors": [a.name for a in j.group.actuators],
            "fault": j.group.faulted,
            "fault_reason": faulted_joints.get(name, ""),
            "position": j.data.position,
            "velocity": j.data.velocity,
            "effort": j.data.effort,
            "start_check": start_notes.get(name, ""),
        }
    motors = {}
    for a in rec.actuators:
        s = snap[a.name]
        motors[a.name] = {
            "joints": [j.name for j in a.group.joints] if a.group else [],
            "mode": s.mode.name,
            "requested_mode": s.requested_mode.name,
            "enabled": s.enabled,
            "received": s.received,
            "fault": s.fault,
            "fault_reason": s.fault_reason,
            "temperature": s.temperature,
            "max_temperature": a.motor.max_temperature,
            "error_code": s.error_code,
            "position": s.position,
            "velocity": s.velocity,
            "effort": s.effort,
            "can_id": a.motor.can_id,
            "channel": a.motor.channel_name,
        }
    sensors = {}
    for name, unit in rec.sensor_units.items():
        s = snap[name]
        sensors[name] = {"type": type(unit).__name__, "frame_id": unit.frame_id, "received": s.received,
                         "fault": s.fault, "fault_reason": s.fault_reason}
    return {"name": mw.name, "hold_mode": rec.hold_mode_name, "joints": joints, "motors": motors,
            "sensors": sensors, "switch": switch}
