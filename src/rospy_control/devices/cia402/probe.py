"""Scanning for CANopen CiA 402 drives (``hw_check scan``; model: :mod:`rospy_control.devices.scan`).

Listening: a node sends its boot-up (``0x700 + node``: 0x00) when it starts and, when its producer
heartbeat time 0x1017 is set, its NMT state there periodically (0x04 stopped, 0x05 operational,
0x7F pre-operational).  Probes are SDO uploads (reads) only, which change nothing:
round 0 reads 0x1000 device type from every node 1..127; the nodes that answered are then read
0x1018:01 vendor id (round 1) and 0x100A software version (round 2; a version longer than 4 bytes
needs a segmented transfer and is reported by its length only).  One transfer per node at a time,
as an SDO server serves one.

A node heard in STOPPED answers no SDO and no PDO: the driver cannot bring it up as it is.  A device
whose type 0x1000 names another profile than 402 is not a drive.
"""
from __future__ import annotations

import struct
from typing import List, Optional

import can

from rospy_control.devices.cia402 import nmt as co
from rospy_control.devices.cia402 import sdo
from rospy_control.devices.scan import Expected, Probe, Scanner, Sighting, by_ident, is_a

__all__ = ["Cia402Scanner", "PROTOCOL", "upload_probe"]

PROTOCOL = "CiA 402"
NODES = range(1, 0x80)
#: (index, subindex) read in each round
READS = ((0x1000, 0), (0x1018, 1), (0x100A, 0))
STATE_NAMES = {co.NMT_BOOTUP: "boot-up", co.NMT_STOPPED: "STOPPED", co.NMT_OPERATIONAL: "OPERATIONAL",
               co.NMT_PRE_OP: "PRE-OPERATIONAL"}


def upload_probe(node: int, index: int, subindex: int = 0) -> Probe:
    """An SDO upload (read) request of ``index:subindex`` to ``node``."""
    f = sdo.sdo_upload_request(node, index, subindex)
    return Probe(f.arbitration_id, bytes(f.data))


class Cia402Scanner(Scanner):
    protocol = PROTOCOL
    rounds = len(READS)

    def expected(self, unit) -> Optional[Expected]:
        if not is_a(unit, "Cia402Drive"):
            return None
        return Expected(unit.name, PROTOCOL, unit.node_id, unit.where)

    def probes(self, round_: int, expected: List[Expected], seen: List[Sighting]) -> List[Probe]:
        index, sub = READS[round_]
        if round_ == 0:
            return [upload_probe(n, index, sub) for n in NODES]
        answered = sorted({s.ident for s in seen if s.how == "sdo"})
        return [upload_probe(n, index, sub) for n in answered]

    def passive(self, msg: can.Message) -> Optional[Sighting]:
        aid = msg.arbitration_id
        if msg.is_extended_id or msg.is_remote_frame or len(msg.data) != 1:
            return None
        if not co.HEARTBEAT_BASE < aid <= co.HEARTBEAT_BASE + 0x7F:
            return None
        state = msg.data[0] & 0x7F
        return Sighting(PROTOCOL, aid - co.HEARTBEAT_BASE, f"NMT {STATE_NAMES.get(state, hex(state))}",
                        how=f"nmt:{state}")

    def reply(self, round_: int, msg: can.Message) -> Optional[Sighting]:
        aid = msg.arbitration_id
        if msg.is_extended_id or msg.is_remote_frame or not sdo.SDO_TX_BASE < aid <= sdo.SDO_TX_BASE + 0x7F:
            return self.passive(msg)
        try:
            r = sdo.parse_sdo_response(bytes(msg.data))
        except co.Cia402Error:
            return None
        index, sub = READS[round_]
        if r.kind not in ("upload", "abort") or (r.index, r.subindex) != (index, sub):
            return None
        node = aid - sdo.SDO_TX_BASE
        if r.kind == "abort":
            return Sighting(PROTOCOL, node, f"0x{index:04X}:{sub:02X} not readable", how="sdo-")
        if index == 0x100A:
            text = (r.data.rstrip(b"\0").decode("latin-1") if r.data
                    else f"{r.size or '?'} bytes, not read")
            return Sighting(PROTOCOL, node, f"software version {text}", how="sdo+")
        value = struct.unpack("<I", (r.data + bytes(4))[:4])[0]
        if index == 0x1018:
            return Sighting(PROTOCOL, node, f"vendor id 0x{value:08X}", how="sdo+")
        profile = value & 0xFFFF
        problem = "" if profile == 402 else (f"device type 0x{value:08X} names profile {profile}, not 402: "
                                             "not a drive of this protocol")
        return Sighting(PROTOCOL, node, f"device type 0x{value:08X}", problem, how="sdo")

    def review(self, seen: List[Sighting]) -> List[Sighting]:
        out = []
        for node, got in by_ident(seen):
            states = [int(s.how[4:]) for s in got if s.how.startswith("nmt:")]
            state = states[-1] if states else -1
            answered = any(s.how == "sdo" for s in got)
            detail = ", ".join(s.detail for s in got if s.how.startswith("sdo") and s.detail)
            detail = ", ".join(d for d in (detail, f"NMT {STATE_NAMES.get(state, '?')}" if states else
                                           "no heartbeat (0x1017 off)") if d)
            problem = next((s.problem for s in got if s.problem), "")
            if state == co.NMT_STOPPED:
                problem = ("its heartbeat says NMT STOPPED: it answers no SDO and no PDO, so the driver "
                           "cannot configure or run it; send it NMT reset communication (0x000: 82 "
                           f"{node:02X}) or power-cycle it, and find who stopped it")
            elif not answered:
                problem = problem or (f"its heartbeat comes (NMT {STATE_NAMES.get(state, '?')}) but it "
                                      "answers no SDO read")
            out.append(Sighting(PROTOCOL, node, detail, problem, how="reviewed"))
        return out
