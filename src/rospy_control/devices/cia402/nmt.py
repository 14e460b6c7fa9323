"""CiA 301 network management on the wire: NMT commands, SYNC, EMCY and heartbeat / boot-up frames,
byte-exact (CiA 301 v4.2 7.2.7, 7.2.8.3; the EMCY error-code table), and the node-id check every other
CANopen frame builder uses.  Pure codec: no I/O."""
from __future__ import annotations

import struct
from typing import Dict, List, NamedTuple, Optional, Tuple

from rospy_control.devices.frame import Frame


class Cia402Error(ValueError):
    """A frame or value does not fit CiA 301/402."""


# -- NMT (CiA 301 7.2.8.3.1) ---------------------------------------------------------------------------------
NMT_ID = 0x000
NMT_START = 0x01
NMT_STOP = 0x02
NMT_PRE_OPERATIONAL = 0x80
NMT_RESET_NODE = 0x81
NMT_RESET_COMMUNICATION = 0x82
NMT_COMMANDS: Dict[int, str] = {
    NMT_START: "start remote node", NMT_STOP: "stop remote node",
    NMT_PRE_OPERATIONAL: "enter pre-operational",
    NMT_RESET_NODE: "reset node", NMT_RESET_COMMUNICATION: "reset communication",
}

#: heartbeat / boot-up states (CiA 301 7.2.8.3.2.1)
NMT_BOOTUP = 0x00
NMT_STOPPED = 0x04
NMT_OPERATIONAL = 0x05
NMT_PRE_OP = 0x7F
NMT_STATES: Dict[int, str] = {
    NMT_BOOTUP: "INITIALISING", NMT_STOPPED: "STOPPED", NMT_OPERATIONAL: "OPERATIONAL",
    NMT_PRE_OP: "PRE-OPERATIONAL",
}


def check_node(node: int, allow_broadcast: bool = False) -> int:
    lo = 0 if allow_broadcast else 1
    if not lo <= node <= 127:
        raise Cia402Error(f"CANopen node id {node} is not in {lo}..127")
    return node


def nmt_command(command: int, node: int) -> Frame:
    """NMT frame ``0x000: [command, node]`` (node 0: every node), e.g. start node 3: ``000#0103``."""
    if command not in NMT_COMMANDS:
        raise Cia402Error(f"unknown NMT command 0x{command:02X}; known: "
                          + ", ".join(f"0x{c:02X} {n}" for c, n in NMT_COMMANDS.items()))
    return Frame(NMT_ID, bytes((command, check_node(node, True))))


def parse_nmt(data: bytes) -> Tuple[int, int]:
    """``(command, node)`` of an NMT frame."""
    if len(data) != 2:
        raise Cia402Error(f"NMT frame must have 2 bytes, got {len(data)}")
    return data[0], data[1]


# -- SYNC ----------------------------------------------------------------------------------------------------
SYNC_ID = 0x080


def sync_frame(counter: Optional[int] = None) -> Frame:
    """SYNC ``0x080`` with DLC 0, or DLC 1 carrying the counter (1-240) when the producer counts."""
    if counter is None:
        return Frame(SYNC_ID, b"")
    if not 1 <= counter <= 240:
        raise Cia402Error(f"SYNC counter {counter} is not in 1..240")
    return Frame(SYNC_ID, bytes((counter,)))


# -- EMCY (CiA 301 7.2.7) ------------------------------------------------------------------------------------
EMCY_BASE = 0x080

#: error codes (CiA 301 table 21, and the CiA 402 drive codes drives report most); looked up exactly,
#: then by their class (code & 0xFF00, then code & 0xF000)
EMCY_CODES: Dict[int, str] = {
    0x0000: "Error reset or no error",
    0x1000: "Generic error",
    0x2000: "Current - generic error",
    0x2100: "Current, CANopen device input side - generic",
    0x2200: "Current inside the CANopen device - generic",
    0x2300: "Current, CANopen device output side - generic",
    0x2310: "Continuous over current",
    0x2320: "Short circuit/earth leakage",
    0x2330: "Earth leakage",
    0x3000: "Voltage - generic error",
    0x3100: "Mains voltage - generic",
    0x3200: "Voltage inside the CANopen device - generic",
    0x3210: "DC link over-voltage",
    0x3220: "DC link under-voltage",
    0x3300: "Output voltage - generic",
    0x4000: "Temperature - generic error",
    0x4100: "Ambient temperature - generic",
    0x4200: "Device temperature - generic",
    0x4210: "Excess temperature device",
    0x4300: "Drive temperature",
    0x4310: "Excess temperature drive",
    0x5000: "CANopen device hardware - generic error",
    0x5500: "Data storage",
    0x6000: "CANopen device software - generic error",
    0x6100: "Internal software - generic",
    0x6200: "User software - generic",
    0x6300: "Data set - generic",
    0x7000: "Additional modules - generic error",
    0x7100: "Power",
    0x7300: "Sensor",
    0x7305: "Incremental sensor 1 fault",
    0x7500: "Communication",
    0x8000: "Monitoring - generic error",
    0x8100: "Communication - generic",
    0x8110: "CAN overrun (objects lost)",
    0x8120: "CAN in error passive mode",
    0x8130: "Life guard error or heartbeat error",
    0x8140: "Recovered from bus off",
    0x8150: "CAN-ID collision",
    0x8200: "Protocol error - generic",
    0x8210: "PDO not processed due to length error",
    0x8220: "PDO length exceeded",
    0x8230: "DAM MPDO not processed, destination object not available",
    0x8240: "Unexpected SYNC data length",
    0x8250: "RPDO timeout",
    0x8400: "Velocity speed controller",
    0x8500: "Position controller",
    0x8611: "Following error",
    0x8612: "Reference limit",
    0x9000: "External error - generic error",
    0xF000: "Additional functions - generic error",
    0xFF00: "Device specific - generic error",
}

#: bits of the error register 0x1001 (CiA 301 7.5.2.2)
ERROR_REGISTER_BITS: Dict[int, str] = {
    0: "generic error", 1: "current", 2: "voltage", 3: "temperature", 4: "communication error",
    5: "device profile specific", 6: "reserved", 7: "manufacturer specific",
}


def emcy_text(code: int) -> str:
    """Text of an EMCY error code: exact, else its class (``0x8613`` -> "Monitoring ... (0x8613)")."""
    if code in EMCY_CODES:
        return EMCY_CODES[code]
    for mask in (0xFF00, 0xF000):
        base = code & mask
        if base in EMCY_CODES:
            return f"{EMCY_CODES[base]} (0x{code:04X})"
    return f"unknown error code 0x{code:04X}"


class Emcy(NamedTuple):
    """A decoded EMCY frame."""

    node: int
    code: int
    register: int
    manufacturer: bytes

    @property
    def text(self) -> str:
        return emcy_text(self.code)

    @property
    def register_names(self) -> List[str]:
        return [n for b, n in ERROR_REGISTER_BITS.items() if self.register & (1 << b)]

    def __str__(self) -> str:
        return (f"EMCY node {self.node}: 0x{self.code:04X} {self.text}, error register 0x{self.register:02X}"
                + (f" ({', '.join(self.register_names)})" if self.register else "")
                + (f", manufacturer data {self.manufacturer.hex().upper()}"
                   if any(self.manufacturer) else ""))


def emcy_frame(node: int, code: int, register: int, manufacturer: bytes = b"") -> Frame:
    """EMCY ``0x080 + node: code (u16 LE), register (u8), 5 manufacturer bytes``."""
    if len(manufacturer) > 5:
        raise Cia402Error(f"EMCY manufacturer data has at most 5 bytes, got {len(manufacturer)}")
    data = struct.pack("<HB", code, register) + bytes(manufacturer) + bytes(5 - len(manufacturer))
    return Frame(EMCY_BASE + check_node(node), data)


def parse_emcy(arbitration_id: int, data: bytes) -> Emcy:
    """Decode an EMCY frame (as ``canopen`` does: ``<HB5s``; shorter frames are zero-padded)."""
    node = arbitration_id - EMCY_BASE
    if not 1 <= node <= 127:
        raise Cia402Error(f"0x{arbitration_id:03X} is not an EMCY COB-ID")
    if len(data) < 3:
        raise Cia402Error(f"EMCY frame needs at least 3 bytes, got {len(data)}")
    raw = bytes(data) + bytes(8 - len(data))
    code, reg, man = struct.unpack("<HB5s", raw[:8])
    return Emcy(node, code, reg, man)


# -- heartbeat (CiA 301 7.2.8.3.2) ---------------------------------------------------------------------------
HEARTBEAT_BASE = 0x700


def heartbeat_frame(node: int, state: int) -> Frame:
    """Heartbeat ``0x700 + node: [state]`` (state 0x00 is the boot-up message)."""
    if state not in NMT_STATES:
        raise Cia402Error(f"0x{state:02X} is not an NMT state; known: "
                          + ", ".join(f"0x{s:02X} {n}" for s, n in NMT_STATES.items()))
    return Frame(HEARTBEAT_BASE + check_node(node), bytes((state,)))


def bootup_frame(node: int) -> Frame:
    """The boot-up message ``0x700 + node: 00``."""
    return heartbeat_frame(node, NMT_BOOTUP)


def parse_heartbeat(arbitration_id: int, data: bytes) -> Tuple[int, int]:
    """``(node, state)`` of a heartbeat / boot-up frame (the node-guarding toggle bit 7 is dropped)."""
    node = arbitration_id - HEARTBEAT_BASE
    if not 1 <= node <= 127:
        raise Cia402Error(f"0x{arbitration_id:03X} is not a heartbeat COB-ID")
    if len(data) != 1:
        raise Cia402Error(f"heartbeat frame must have 1 byte, got {len(data)}")
    return node, data[0] & 0x7F
