"""Scanning for ODrive axes, CAN Simple (``hw_check scan``; model: :mod:`rospy_control.devices.scan`).

Listening: an axis sends its heartbeat (cmd 0x01, default every 100 ms) and its encoder estimates
(cmd 0x09, default every 10 ms) on its own; both are what the driver reads (it polls nothing), and
either may be switched off on the device (``heartbeat_rate_ms`` / ``encoder_rate_ms`` = 0).
Probe, per node 0..63: remote (RTR) frames of Get_Version (cmd 0x00: answered by 0.6 firmware with
its hardware and firmware versions; reserved on 0.5, which ignores it) and Get_Encoder_Estimates
(cmd 0x09): the firmware answers a "get" sent as RTR; a remote frame carries no data, so it cannot
set anything (every frame to an axis feeds its watchdog, which is harmless).

What the sightings add up to per node: heard and answering: as the driver needs it; answering polls
only (nothing heard): cyclic messages off; heartbeat heard but no cyclic encoder estimates: the
encoder message switched off (ros_odrive's "no data" reports).
"""
from __future__ import annotations

from typing import List, Optional

import can

from rospy_control.devices.odrive import codec as od
from rospy_control.devices.scan import Expected, Probe, Scanner, Sighting, by_ident, is_a

__all__ = ["OdriveScanner", "PROTOCOL", "probe_frames"]

PROTOCOL = "ODrive CAN Simple"
CMD_GET_VERSION = 0x00


def probe_frames(node_id: int) -> List[Probe]:
    """The probes to ``node_id``: RTR Get_Version and RTR Get_Encoder_Estimates (DLC 8)."""
    return [Probe(od.arbitration_id(node_id, cmd), remote=True, rtr_dlc=8)
            for cmd in (CMD_GET_VERSION, od.CMD_GET_ENCODER_ESTIMATES)]


def version_text(data: bytes) -> str:
    """Get_Version's answer (0.6): protocol, hardware major.minor.variant, firmware major.minor.revision."""
    d = bytes(data) + bytes(8)
    dev = " (unreleased)" if d[7] else ""
    return f"firmware {d[4]}.{d[5]}.{d[6]}{dev}, hardware {d[1]}.{d[2]}.{d[3]}"


class OdriveScanner(Scanner):
    protocol = PROTOCOL

    def expected(self, unit) -> Optional[Expected]:
        if not is_a(unit, "OdriveAxis"):
            return None
        return Expected(unit.name, PROTOCOL, unit.node_id, unit.where)

    def probes(self, round_: int, expected: List[Expected], seen: List[Sighting]) -> List[Probe]:
        return [p for node in range(0, 0x40) for p in probe_frames(node)]

    def passive(self, msg: can.Message) -> Optional[Sighting]:
        if msg.is_extended_id or msg.is_remote_frame or len(msg.data) != 8:
            return None
        node, cmd = od.split_id(msg.arbitration_id)
        if cmd == od.CMD_HEARTBEAT:
            state = msg.data[4]
            error = int.from_bytes(bytes(msg.data[:4]), "little")
            return Sighting(PROTOCOL, node, f"axis state {state}, axis error 0x{error:X}", how="heartbeat")
        if cmd == od.CMD_GET_ENCODER_ESTIMATES:
            return Sighting(PROTOCOL, node, "", how="encoder")
        return None

    def reply(self, round_: int, msg: can.Message) -> Optional[Sighting]:
        if msg.is_extended_id or msg.is_remote_frame or len(msg.data) != 8:
            return None
        node, cmd = od.split_id(msg.arbitration_id)
        if cmd == CMD_GET_VERSION:
            return Sighting(PROTOCOL, node, version_text(bytes(msg.data)), how="version")
        if cmd == od.CMD_GET_ENCODER_ESTIMATES:
            return Sighting(PROTOCOL, node, "", how="polled")
        if cmd == od.CMD_HEARTBEAT:
            return self.passive(msg)
        return None

    def review(self, seen: List[Sighting]) -> List[Sighting]:
        out = []
        for node, got in by_ident(seen):
            hows = {s.how for s in got}
            detail = ", ".join(s.detail for s in got if s.detail and s.how == "version")
            beat = next((s.detail for s in got if s.how == "heartbeat"), "")
            detail = ", ".join(d for d in (detail or "firmware 0.5 or older (no Get_Version)", beat) if d)
            problem = ""
            if "heartbeat" not in hows and "encoder" not in hows:
                problem = ("answers polls but sends neither heartbeat nor encoder estimates on its own "
                           "(cyclic messages off): the driver reads both as they come; set the axis's "
                           "heartbeat and encoder message rates (heartbeat_rate_ms, encoder_rate_ms) "
                           "to the XML's heartbeat_rate / encoder_rate")
            elif "encoder" not in hows:
                problem = ("its heartbeat comes but its encoder estimates do not (cyclic encoder message "
                           "off): the driver gets no position; set the axis's encoder message rate "
                           "(encoder_rate_ms) to the XML's encoder_rate")
            elif "heartbeat" not in hows:
                problem = ("its encoder estimates come but no heartbeat (heartbeat message off): the "
                           "driver cannot see the axis state; set heartbeat_rate_ms")
            out.append(Sighting(PROTOCOL, node, detail, problem, how="reviewed"))
        return out
