"""Scanning for DaMiao motors (``hw_check scan``; model: :mod:`rospy_control.devices.scan`).

Round 0: a register read of MST_ID (register 7) through ``0x7FF`` for every slave id 1..255.  A
register read changes nothing; the motor answers ``[id_lo, id_hi, 0x33, 7, master id]`` on its master
id, so one answer gives both ids (and whether they are those of the XML).

Old firmware has no register access and takes its special frames (enable, disable, ...) only on the
command id of the mode it is in, ``0x100`` / ``0x200`` / ``0x300`` + slave id for position-velocity,
velocity and force-position: DaMiao's own library keeps an ``enable_old`` for it, and its maintainer
says old firmware must be enabled at ``+0x100`` in position-velocity mode (DM_Control_Python issue
tracker).  So for each unit of the XML that did not answer in round 0, rounds 1..4 send the
**disable** frame ``FF..FD`` -- which can only take torque away -- to its slave id plus 0, 0x100,
0x200, 0x300 (one offset per round, so an answer tells which one worked); the motor answers with a
feedback frame (byte 0: state << 4 | slave id & 0xF) on its master id.  (DaMiao's library computes
the old enable id as ``((mode - 1) << 2) + slave id``; that does not agree with its maintainer's
``+0x100``, and we follow the maintainer: unverified on a motor.)  A new-firmware motor answered
round 0, so it never gets these frames; one that did not answer gets frames for modes it is not
in, which it ignores.
"""
from __future__ import annotations

import struct
from typing import List, Optional

import can

from rospy_control.devices.damiao import codec as dm
from rospy_control.devices.scan import Expected, Probe, Scanner, Sighting, is_a

__all__ = ["DamiaoScanner", "PROTOCOL", "register_probe", "disable_probe"]

PROTOCOL = "DaMiao"

#: the command-id offset of each old-firmware round (round 1 + i)
OLD_OFFSETS = (0x000, 0x100, 0x200, 0x300)


def register_probe(slave_id: int) -> Probe:
    """Round 0's probe: read MST_ID of ``slave_id`` through 0x7FF."""
    return Probe(dm.REGISTER_ID, dm.pack_register_read(slave_id, dm.RID_MST_ID))


def disable_probe(slave_id: int, offset: int) -> Probe:
    """An old-firmware round's probe: disable, on ``slave_id + offset``."""
    return Probe(slave_id + offset, dm.DISABLE)


class DamiaoScanner(Scanner):
    protocol = PROTOCOL
    rounds = 1 + len(OLD_OFFSETS)

    def __init__(self) -> None:
        #: slave id -> (configured master id) of the XML's motors; filled by expected()
        self.masters = {}  # type: dict

    def expected(self, unit) -> Optional[Expected]:
        if not is_a(unit, "DamiaoMotor"):
            return None
        self.masters[unit.can_id] = unit.master_id
        return Expected(unit.name, PROTOCOL, unit.can_id, unit.where)

    def probes(self, round_: int, expected: List[Expected], seen: List[Sighting]) -> List[Probe]:
        if round_ == 0:
            return [register_probe(i) for i in range(1, 0x100)]
        found = {s.ident for s in seen}
        offset = OLD_OFFSETS[round_ - 1]
        return [disable_probe(e.ident, offset) for e in expected if e.ident not in found]

    def reply(self, round_: int, msg: can.Message) -> Optional[Sighting]:
        if msg.is_extended_id or msg.is_remote_frame or len(msg.data) != 8:
            return None
        data = bytes(msg.data)
        if round_ == 0:
            if data[2] != dm.REG_READ or data[3] != dm.RID_MST_ID:
                return None
            slave = data[0] | data[1] << 8
            master = struct.unpack_from("<I", data, 4)[0]
            problem = ""
            configured = self.masters.get(slave)
            if configured is not None and configured != master:
                problem = (f"answers on master id 0x{master:X} (its MST_ID register), the XML says "
                           f"master_id 0x{configured:X}: set master_id=\"{master}\" in the XML, or MST_ID "
                           "with DaMiao's tool")
            return Sighting(PROTOCOL, slave, f"master id 0x{master:X}, register access (current firmware)",
                            problem, how="register")
        nibble = data[0] & 0xF
        for slave, master in self.masters.items():
            if master == msg.arbitration_id and slave & 0xF == nibble:
                offset = OLD_OFFSETS[round_ - 1]
                mode = {0x000: "MIT", 0x100: "position-velocity", 0x200: "velocity",
                        0x300: "force-position"}[offset]
                where = "" if not offset else (
                    f", and its enable / disable frames only on 0x{slave + offset:X} (slave id + "
                    f"0x{offset:X}, the {mode} mode's id), where the driver does not send them")
                return Sighting(PROTOCOL, slave, f"old firmware, {mode} mode",
                                "old firmware: no register access through 0x7FF (the driver reads the "
                                f"motor's ranges there at start-up){where}: update its firmware with "
                                "DaMiao's tool", how="old")
        return None
