"""Scanning for RobStride / CyberGear motors, private protocol (``hw_check scan``; model:
:mod:`rospy_control.devices.scan`).

Probe: communication type 0, get device id, from host 0xFD to every motor id 1..252 (29-bit ids).
It asks for the motor's 64-bit MCU unique id and changes nothing; the motor answers with type 0 to
destination 0xFE, its id in bits 15..8 and the UID in the data (CyberGear manual 4.1.1).

A RobStride motor switched to its MIT protocol (the switch takes a reboot) does not answer these
frames; the MIT scanner (:mod:`rospy_control.devices.mit.probe`) runs on every channel with
RobStride units and names such a motor.
"""
from __future__ import annotations

from typing import List, Optional

import can

from rospy_control.devices.robstride import codec as rs
from rospy_control.devices.robstride.ids import GET_ID, GET_ID_REPLY_DEST, split_id
from rospy_control.devices.scan import Expected, Probe, Scanner, Sighting, is_a

__all__ = ["RobStrideScanner", "PROTOCOL", "probe_frame"]

PROTOCOL = "RobStride"
#: motor ids probed (0xFD is the host, 0xFE the type-0 answer's destination)
MOTOR_IDS = range(1, 0xFD)


def probe_frame(motor_id: int, host_id: int = rs.DEFAULT_HOST_ID) -> Probe:
    """Type 0, get device id, to ``motor_id``."""
    f = rs.encode_get_id(motor_id, host_id)
    return Probe(f.arbitration_id, bytes(f.data), extended=True)


class RobStrideScanner(Scanner):
    protocol = PROTOCOL

    def __init__(self, host_id: int = rs.DEFAULT_HOST_ID) -> None:
        self.host_id = host_id

    def expected(self, unit) -> Optional[Expected]:
        if not is_a(unit, "RobStrideMotor"):
            return None
        self.host_id = unit.host_id
        return Expected(unit.name, PROTOCOL, unit.can_id, unit.where)

    def probes(self, round_: int, expected: List[Expected], seen: List[Sighting]) -> List[Probe]:
        return [probe_frame(i, self.host_id) for i in MOTOR_IDS if i != self.host_id]

    def reply(self, round_: int, msg: can.Message) -> Optional[Sighting]:
        if not msg.is_extended_id or msg.is_remote_frame or len(msg.data) < 8:
            return None
        comm_type, _data2, dest = split_id(msg.arbitration_id)
        if comm_type != GET_ID or dest != GET_ID_REPLY_DEST:
            return None
        motor, uid = rs.decode_get_id_reply(msg.arbitration_id, bytes(msg.data))
        return Sighting(PROTOCOL, motor, f"MCU id {uid.hex()}", how="answers")
