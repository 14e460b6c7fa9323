"""Status and diagnostics of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` (any thread): plain
data built from the records and the middleware's snapshot, and records shaped like
``diagnostic_msgs/DiagnosticStatus``.
"""
from __future__ import annotations

from typing import Dict, List, NamedTuple, Tuple

from rospy_control.middleware import Middleware
from rospy_control.robot_hw._records import KIND_INTERFACES, Records

__all__ = ["DiagnosticRecord", "OK", "WARN", "ERROR", "STALE", "TEMPERATURE_MARGIN", "build_status",
           "diagnostics"]

#: diagnostic levels (``diagnostic_msgs/DiagnosticStatus``)
OK, WARN, ERROR, STALE = 0, 1, 2, 3
#: a motor within this many degrees of its ``max_temperature`` is reported as WARN
TEMPERATURE_MARGIN = 10.0


class DiagnosticRecord(NamedTuple):
    """One ``diagnostic_msgs/DiagnosticStatus``: ``values`` are (key, value) string pairs."""

    level: int
    name: str
    message: str
    hardware_id: str
    values: List[Tuple[str, str]]


def build_status(mw: Middleware, rec: Records, faulted_joints: Dict[str, str], switch: dict) -> dict:
    """Per-joint, per-motor and per-sensor status (plain data); ``switch`` is the last switch's."""
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


def _unit_level(unit: dict):
    """(level, message) of a unit in FAULT or without a reply yet, else None."""
    if unit["fault"]:
        return ERROR, f"FAULT: {unit['fault_reason']}"
    if not unit["received"]:
        return STALE, "no reply yet"
    return None


def diagnostics(st: dict) -> List[DiagnosticRecord]:
    """One record per motor and per sensor of the status ``st`` (see
    :meth:`MiddlewareRobotHW.diagnostics <rospy_control.robot_hw.MiddlewareRobotHW.diagnostics>`)."""
    hw = st["name"]
    out: List[DiagnosticRecord] = []
    for name, m in st["motors"].items():
        temp = m["temperature"]
        level_msg = _unit_level(m)
        if level_msg is not None:
            level, msg = level_msg
        elif temp is not None and temp >= m["max_temperature"] - TEMPERATURE_MARGIN:
            level, msg = WARN, f"temperature {temp:.0f} C close to the limit {m['max_temperature']:.0f} C"
        elif m["mode"] != m["requested_mode"]:
            level, msg = WARN, f"switching {m['mode']} -> {m['requested_mode']}"
        else:
            level, msg = OK, f"{m['mode']}"
        joints = m["joints"]
        values = [("joints", ", ".join(joints)), ("mode", m["mode"]),
                  ("requested mode", m["requested_mode"]),
                  ("enabled", str(m["enabled"])), ("fault", str(m["fault"])),
                  ("fault reason", m["fault_reason"]),
                  ("temperature", "" if temp is None else f"{temp:.1f}"),
                  ("error code", f"0x{m['error_code']:02X}"), ("position", f"{m['position']:.4f}"),
                  ("velocity", f"{m['velocity']:.4f}"), ("effort", f"{m['effort']:.4f}")]
        for jn in joints:
            j = st["joints"][jn]
            values.append((f"{jn} interface", j["interface"] or f"hold ({st['hold_mode']})"))
            values.append((f"{jn} controller", j["controller"] or ""))
        out.append(DiagnosticRecord(level, f"{hw}: motor {name}", msg,
                                    f"{m['channel']}/0x{m['can_id']:02X}", values))
    for name, s in st["sensors"].items():
        level, msg = _unit_level(s) or (OK, "OK")
        out.append(DiagnosticRecord(level, f"{hw}: {s['type']} {name}", msg, name,
                                    [("frame_id", s["frame_id"]), ("fault", str(s["fault"])),
                                     ("fault reason", s["fault_reason"])]))
    return out
