"""Scanning for CubeMars motors with the V3 firmware (``hw_check scan``; model: :mod:`..scan`).

Probe: a limp MIT command (kp = kd = 0, torque 0) to ``0x800 + id`` for every controller id 0..255.
The V3 documents read name no enter / exit motor-mode frame and no read-only request; the limp
command is what the driver sends to disable such a motor (docs/hardware_xml.md), it makes no torque,
and the motor answers it with its feedback frame on ``0x2900 + id`` (position, speed, current,
temperature, error code).  A motor whose periodic status upload is on is also heard while listening.
"""
from __future__ import annotations

from typing import List, Optional

import can

from rospy_control.devices.cubemars import codec as cm
from rospy_control.devices.mit.codec import MitLimits
from rospy_control.devices.scan import Expected, Probe, Scanner, Sighting, is_a

__all__ = ["CubeMarsScanner", "PROTOCOL", "probe_frame"]

PROTOCOL = "CubeMars V3"


def probe_frame(controller_id: int, limits: MitLimits = MitLimits(), layout: str = cm.LAYOUT_V3) -> Probe:
    """The probe to ``controller_id``: a limp MIT command (no gains, no torque)."""
    return Probe(cm.command_id(controller_id), cm.pack_command(0.0, 0.0, 0.0, 0.0, 0.0, limits, layout),
                 extended=True)


class CubeMarsScanner(Scanner):
    protocol = PROTOCOL

    def expected(self, unit) -> Optional[Expected]:
        if is_a(unit, "Motor") and getattr(unit, "v3", False):
            return Expected(unit.name, PROTOCOL, unit.can_id, unit.where)
        return None

    def probes(self, round_: int, expected: List[Expected], seen: List[Sighting]) -> List[Probe]:
        return [probe_frame(i) for i in range(0, 0x100)]

    def passive(self, msg: can.Message) -> Optional[Sighting]:
        if not msg.is_extended_id or msg.is_remote_frame or msg.arbitration_id >> 16:
            return None
        packet, controller = cm.split_id(msg.arbitration_id)
        if packet != cm.PACKET_FEEDBACK or len(msg.data) < 8:
            return None
        code = msg.data[7]
        error = cm.error_name(code) if code else None
        problem = f"reports {error} (error code {code})" if error else ""
        return Sighting(PROTOCOL, controller, f"feedback on 0x{msg.arbitration_id:X}", problem, how="answers")
