"""Scanning for MIT-mode motors (``hw_check scan``; model: :mod:`rospy_control.devices.scan`).

Probe: the exit-motor-mode frame ``FF FF FF FF FF FF FF FD`` to every id 1..255.  The MIT firmware
answers every 8-byte frame to its id, the special ones included, with its state on the channel's
master id, byte 0 its id (docs/protocols.md); exit-motor-mode is the one frame that can only take
torque away: a motor in motor mode goes limp, one out of it stays out.  No frame that enters motor
mode or carries a command is sent.  (A motor no host commands is limp anyway; ``hw_check scan``
refuses to probe while another host sends command frames.)

The reply's length tells the firmware's flavour: 6 bytes (Mini-Cheetah), 7 (adds the bus voltage),
8 (CubeMars' temperature and error bytes).
"""
from __future__ import annotations

from typing import List, Optional

import can

from rospy_control.devices.mit import codec as mit
from rospy_control.devices.scan import Expected, Probe, Scanner, Sighting, is_a

__all__ = ["MitScanner", "PROTOCOL"]

PROTOCOL = "MIT mode"

_FLAVOUR = {6: "6-byte reply (Mini-Cheetah firmware)", 7: "7-byte reply (with bus voltage)",
            8: "8-byte reply (CubeMars firmware: temperature, error code)"}


def probe_frame(motor_id: int) -> Probe:
    """The probe to ``motor_id``: exit motor mode."""
    return Probe(motor_id, mit.EXIT_MOTOR_MODE)


class MitScanner(Scanner):
    """MIT-mode motors on 11-bit ids, answering on ``master_id``."""

    protocol = PROTOCOL
    #: a RobStride motor switched to its MIT protocol answers these frames instead of its own
    alternative_of = ("RobStride",)
    alternative_fix = ("switch it back to its private protocol with RobStride's tool (the switch takes "
                       "a power cycle), or configure it as an MIT motor")

    def __init__(self, master_id: int = 0) -> None:
        self.master_id = master_id

    def expected(self, unit) -> Optional[Expected]:
        if not is_a(unit, "Motor") or getattr(unit, "v3", False):
            return None
        return Expected(unit.name, PROTOCOL, unit.can_id, unit.where)

    def probes(self, round_: int, expected: List[Expected], seen: List[Sighting]) -> List[Probe]:
        return [probe_frame(i) for i in range(1, mit.MAX_MOTOR_ID + 1) if i != self.master_id]

    def reply(self, round_: int, msg: can.Message) -> Optional[Sighting]:
        if msg.is_extended_id or msg.is_remote_frame or msg.arbitration_id != self.master_id:
            return None
        data = bytes(msg.data)
        if len(data) < 6 or data[0] == self.master_id:
            return None
        return Sighting(PROTOCOL, data[0], _FLAVOUR.get(len(data), f"{len(data)}-byte reply"), how="answers")
