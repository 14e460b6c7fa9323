"""CANopen: CiA 301 frames and the CiA 402 drive profile (pure codec, no I/O, no ``canopen`` needed).

The driver talks to drives through the ``canopen`` library (:mod:`.canopen_net`); this module is what
that library does not give, or what must not depend on it: byte-exact frame builders and parsers
for the tests, the simulated drive and the diagnostics, the 402 state machine as data, the object
indices, and the unit conversions.  Sources: CiA 301 v4.2 (NMT, SYNC, EMCY, heartbeat, SDO, PDO
COB-IDs and communication/mapping objects, the EMCY error-code and SDO abort-code tables), CiA
402-2 (state machine, controlword/statusword bits, modes of operation, objects 0x6040-0x60FF).
The controlword/statusword masks agree with ``canopen``'s ``BaseNode402``.

**COB-IDs** (11-bit, node 1-127)::

    0x000          NMT          [command, node]   (node 0 = all nodes)
    0x080          SYNC         DLC 0 (or 1: counter)
    0x080 + node   EMCY         u16 error code, u8 error register (0x1001), 5 manufacturer bytes
    0x180/0x280/0x380/0x480 + node   TPDO1-4 (drive -> host)
    0x200/0x300/0x400/0x500 + node   RPDO1-4 (host -> drive)
    0x580 + node   SDO response (server -> client),  0x600 + node  SDO request
    0x700 + node   heartbeat / boot-up: [state]  0x00 boot-up, 0x04 stopped, 0x05 operational,
                   0x7F pre-operational

**SDO** (8 bytes, little-endian): byte 0 command specifier, bytes 1-2 index, byte 3 sub-index, bytes
4-7 data (expedited, size in bits 3-2 as ``4 - n``) or a u32 size (segmented initiate); segments
carry 7 data bytes after a command byte with the toggle bit 4 and "no more segments" bit 0.

**Units**: positions and velocities in drive increments (``counts``), velocity per second, torque in
per mille of the motor's rated torque (0x6076, mN m).  :class:`UnitScale` converts them to rad,
rad/s and N m on the joint side of a gearbox.
"""
from __future__ import annotations

import math
import struct
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

from rospy_control.devices.frame import Frame

__all__ = [
    "Frame", "Cia402Error", "SdoAbortError", "NMT_COMMANDS", "NMT_STATES", "nmt_command", "parse_nmt",
    "sync_frame", "emcy_frame", "parse_emcy", "Emcy", "emcy_text", "EMCY_CODES", "ERROR_REGISTER_BITS",
    "heartbeat_frame", "parse_heartbeat", "bootup_frame", "sdo_upload_request", "sdo_download_request",
    "SdoDownload", "SdoUpload", "SdoRequest", "parse_sdo_request", "SdoResponse", "parse_sdo_response",
    "sdo_abort_frame", "SDO_ABORT_CODES", "sdo_abort_text", "tpdo_cob_id", "rpdo_cob_id", "pdo_map_entry",
    "parse_pdo_map_entry", "pack_pdo", "unpack_pdo", "State", "STATE_NAMES", "decode_statusword",
    "Command", "CONTROLWORDS", "decode_controlword", "next_command", "path_to_operation_enabled",
    "path_to_switch_on_disabled", "MODES", "MODE_NAMES", "OBJECTS", "ObjectInfo", "object_info",
    "UnitScale", "interpolation_period_s", "check_sync_period",
]


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


def _check_node(node: int, allow_broadcast: bool = False) -> int:
    lo = 0 if allow_broadcast else 1
    if not lo <= node <= 127:
        raise Cia402Error(f"CANopen node id {node} is not in {lo}..127")
    return node


def nmt_command(command: int, node: int) -> Frame:
    """NMT frame ``0x000: [command, node]`` (node 0: every node), e.g. start node 3: ``000#0103``."""
    if command not in NMT_COMMANDS:
        raise Cia402Error(f"unknown NMT command 0x{command:02X}; known: "
                          + ", ".join(f"0x{c:02X} {n}" for c, n in NMT_COMMANDS.items()))
    return Frame(NMT_ID, bytes((command, _check_node(node, True))))


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
    return Frame(EMCY_BASE + _check_node(node), data)


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
    return Frame(HEARTBEAT_BASE + _check_node(node), bytes((state,)))


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


# -- SDO (CiA 301 7.2.4) -------------------------------------------------------------------------------------
SDO_TX_BASE = 0x580   # server -> client
SDO_RX_BASE = 0x600   # client -> server

# client command specifiers (bits 7-5 of byte 0)
CCS_DOWNLOAD_SEGMENT = 0
CCS_DOWNLOAD_INITIATE = 1
CCS_UPLOAD_INITIATE = 2
CCS_UPLOAD_SEGMENT = 3
CS_ABORT = 4
# server command specifiers
SCS_UPLOAD_SEGMENT = 0
SCS_DOWNLOAD_SEGMENT = 1
SCS_UPLOAD_INITIATE = 2
SCS_DOWNLOAD_INITIATE = 3

#: SDO abort codes (CiA 301 table 22)
SDO_ABORT_CODES: Dict[int, str] = {
    0x05030000: "Toggle bit not alternated",
    0x05040000: "SDO protocol timed out",
    0x05040001: "Client/server command specifier not valid or unknown",
    0x05040002: "Invalid block size",
    0x05040003: "Invalid sequence number",
    0x05040004: "CRC error",
    0x05040005: "Out of memory",
    0x06010000: "Unsupported access to an object",
    0x06010001: "Attempt to read a write only object",
    0x06010002: "Attempt to write a read only object",
    0x06020000: "Object does not exist in the object dictionary",
    0x06040041: "Object cannot be mapped to the PDO",
    0x06040042: "The number and length of the objects to be mapped would exceed PDO length",
    0x06040043: "General parameter incompatibility reason",
    0x06040047: "General internal incompatibility in the device",
    0x06060000: "Access failed due to a hardware error",
    0x06070010: "Data type does not match, length of service parameter does not match",
    0x06070012: "Data type does not match, length of service parameter too high",
    0x06070013: "Data type does not match, length of service parameter too low",
    0x06090011: "Sub-index does not exist",
    0x06090030: "Invalid value for parameter (download only)",
    0x06090031: "Value of parameter written too high (download only)",
    0x06090032: "Value of parameter written too low (download only)",
    0x06090036: "Maximum value is less than minimum value",
    0x060A0023: "Resource not available: SDO connection",
    0x08000000: "General error",
    0x08000020: "Data cannot be transferred or stored to the application",
    0x08000021: "Data cannot be transferred or stored to the application because of local control",
    0x08000022: "Data cannot be transferred or stored to the application because of the present device state",
    0x08000023: "Object dictionary dynamic generation fails or no object dictionary is present",
    0x08000024: "No data available",
}
ABORT_TOGGLE = 0x05030000
ABORT_COMMAND = 0x05040001
ABORT_UNSUPPORTED = 0x06010000
ABORT_WRITE_ONLY = 0x06010001
ABORT_READ_ONLY = 0x06010002
ABORT_NO_OBJECT = 0x06020000
ABORT_NOT_MAPPABLE = 0x06040041
ABORT_PDO_LENGTH = 0x06040042
ABORT_LENGTH = 0x06070010
ABORT_NO_SUBINDEX = 0x06090011
ABORT_VALUE = 0x06090030
ABORT_DEVICE_STATE = 0x08000022


def sdo_abort_text(code: int) -> str:
    """Text of an SDO abort code."""
    return SDO_ABORT_CODES.get(code, f"unknown abort code 0x{code:08X}")


class SdoAbortError(Cia402Error):
    """The peer aborted an SDO transfer (``code``, with its text, index and sub-index)."""

    def __init__(self, code: int, index: int, subindex: int, node: Optional[int] = None) -> None:
        self.code, self.index, self.subindex, self.node = code, index, subindex, node
        who = f"node {node} " if node is not None else ""
        super().__init__(f"SDO {who}0x{index:04X}:{subindex:02X} aborted with 0x{code:08X}: "
                         f"{sdo_abort_text(code)}")


def _mux(index: int, subindex: int) -> bytes:
    if not 0 <= index <= 0xFFFF or not 0 <= subindex <= 0xFF:
        raise Cia402Error(f"object 0x{index:X}:{subindex:X} is not a valid index/sub-index")
    return struct.pack("<HB", index, subindex)


def sdo_upload_request(node: int, index: int, subindex: int = 0) -> Frame:
    """Initiate an upload (read): ``0x600+node: 40 idx_lo idx_hi sub 00 00 00 00`` (C3)."""
    return Frame(SDO_RX_BASE + _check_node(node), b"\x40" + _mux(index, subindex) + bytes(4))


def sdo_download_request(node: int, index: int, subindex: int, data: bytes) -> Frame:
    """Initiate an expedited download (write) of 1-4 bytes: command ``0x2F/0x2B/0x27/0x23`` (C2, C4, C5).

    Longer data: :class:`SdoDownload` (segmented).
    """
    n = len(data)
    if not 1 <= n <= 4:
        raise Cia402Error(f"an expedited SDO download carries 1-4 bytes, got {n}; use SdoDownload")
    cmd = (CCS_DOWNLOAD_INITIATE << 5) | ((4 - n) << 2) | 0x03
    return Frame(SDO_RX_BASE + _check_node(node), bytes((cmd,)) + _mux(index, subindex) + bytes(data)
                 + bytes(4 - n))


def sdo_abort_frame(node: int, index: int, subindex: int, code: int, server: bool = False) -> Frame:
    """Abort transfer ``0x80 idx sub code(u32 LE)``, from the client (0x600) or the server (0x580)."""
    base = SDO_TX_BASE if server else SDO_RX_BASE
    return Frame(base + _check_node(node), b"\x80" + _mux(index, subindex) + struct.pack("<I", code))


# server-side builders (the simulated drive)
def sdo_upload_response(node: int, index: int, subindex: int, data: bytes) -> Frame:
    """Expedited upload response (1-4 bytes, command 0x4F/0x4B/0x47/0x43)."""
    n = len(data)
    if not 1 <= n <= 4:
        raise Cia402Error(f"an expedited SDO upload carries 1-4 bytes, got {n}")
    cmd = (SCS_UPLOAD_INITIATE << 5) | ((4 - n) << 2) | 0x03
    return Frame(SDO_TX_BASE + _check_node(node), bytes((cmd,)) + _mux(index, subindex) + bytes(data)
                 + bytes(4 - n))


def sdo_upload_segmented_response(node: int, index: int, subindex: int, size: int) -> Frame:
    """Upload response starting a segmented transfer of ``size`` bytes (command 0x41)."""
    return Frame(SDO_TX_BASE + _check_node(node), b"\x41" + _mux(index, subindex) + struct.pack("<I", size))


def sdo_download_response(node: int, index: int, subindex: int) -> Frame:
    """Download initiate response ``0x60 idx sub 00 00 00 00`` (C2)."""
    return Frame(SDO_TX_BASE + _check_node(node), b"\x60" + _mux(index, subindex) + bytes(4))


def _segment(toggle: int, chunk: bytes, last: bool, scs: int = 0) -> bytes:
    n = len(chunk)
    if not 0 <= n <= 7:
        raise Cia402Error(f"an SDO segment carries 0-7 bytes, got {n}")
    cmd = (scs << 5) | ((toggle & 1) << 4) | ((7 - n) << 1) | (1 if last else 0)
    return bytes((cmd,)) + bytes(chunk) + bytes(7 - n)


def sdo_upload_segment_response(node: int, toggle: int, chunk: bytes, last: bool) -> Frame:
    return Frame(SDO_TX_BASE + _check_node(node), _segment(toggle, chunk, last, SCS_UPLOAD_SEGMENT))


def sdo_download_segment_response(node: int, toggle: int) -> Frame:
    return Frame(SDO_TX_BASE + _check_node(node), bytes(((SCS_DOWNLOAD_SEGMENT << 5) | ((toggle & 1) << 4),))
                 + bytes(7))


class SdoRequest(NamedTuple):
    """A decoded client request (the server's view).  ``kind``: ``download`` (expedited: ``data``;
    segmented: ``size``), ``download_segment`` (``toggle``, ``data``, ``last``), ``upload``,
    ``upload_segment`` (``toggle``), ``abort`` (``code``)."""

    kind: str
    index: int = 0  # type: ignore[assignment]  # the field, not tuple.index
    subindex: int = 0
    data: bytes = b""
    size: Optional[int] = None
    toggle: int = 0
    last: bool = False
    code: int = 0


def parse_sdo_request(data: bytes) -> SdoRequest:
    """Decode a client -> server SDO frame.

    :raises SdoAbortError: an unknown command specifier (code 0x05040001; the server sends that abort).
    :raises Cia402Error: not 8 bytes.
    """
    if len(data) != 8:
        raise Cia402Error(f"SDO frame must have 8 bytes, got {len(data)}")
    cmd = data[0]
    ccs = cmd >> 5
    index, sub = struct.unpack_from("<HB", bytes(data), 1)
    if ccs == CCS_DOWNLOAD_INITIATE:
        expedited, size_given = bool(cmd & 0x02), bool(cmd & 0x01)
        if expedited:
            n = 4 - ((cmd >> 2) & 0x3) if size_given else 4
            return SdoRequest("download", index, sub, bytes(data[4:4 + n]))
        size = struct.unpack_from("<I", bytes(data), 4)[0] if size_given else None
        return SdoRequest("download", index, sub, b"", size)
    if ccs == CCS_DOWNLOAD_SEGMENT:
        n = 7 - ((cmd >> 1) & 0x7)
        return SdoRequest("download_segment", data=bytes(data[1:1 + n]), toggle=(cmd >> 4) & 1,
                          last=bool(cmd & 1))
    if ccs == CCS_UPLOAD_INITIATE:
        return SdoRequest("upload", index, sub)
    if ccs == CCS_UPLOAD_SEGMENT:
        return SdoRequest("upload_segment", toggle=(cmd >> 4) & 1)
    if ccs == CS_ABORT:
        return SdoRequest("abort", index, sub, code=struct.unpack_from("<I", bytes(data), 4)[0])
    raise SdoAbortError(ABORT_COMMAND, index, sub)


class SdoResponse(NamedTuple):
    """A decoded server response (the client's view); ``kind`` as in :class:`SdoRequest`."""

    kind: str
    index: int = 0  # type: ignore[assignment]  # the field, not tuple.index
    subindex: int = 0
    data: bytes = b""
    size: Optional[int] = None
    toggle: int = 0
    last: bool = False
    code: int = 0


def parse_sdo_response(data: bytes) -> SdoResponse:
    """Decode a server -> client SDO frame."""
    if len(data) != 8:
        raise Cia402Error(f"SDO frame must have 8 bytes, got {len(data)}")
    cmd = data[0]
    scs = cmd >> 5
    index, sub = struct.unpack_from("<HB", bytes(data), 1)
    if scs == SCS_UPLOAD_INITIATE:
        if cmd & 0x02:
            n = 4 - ((cmd >> 2) & 0x3) if cmd & 0x01 else 4
            return SdoResponse("upload", index, sub, bytes(data[4:4 + n]))
        size = struct.unpack_from("<I", bytes(data), 4)[0] if cmd & 0x01 else None
        return SdoResponse("upload", index, sub, b"", size)
    if scs == SCS_UPLOAD_SEGMENT:
        n = 7 - ((cmd >> 1) & 0x7)
        return SdoResponse("upload_segment", data=bytes(data[1:1 + n]), toggle=(cmd >> 4) & 1,
                           last=bool(cmd & 1))
    if scs == SCS_DOWNLOAD_INITIATE:
        return SdoResponse("download", index, sub)
    if scs == SCS_DOWNLOAD_SEGMENT:
        return SdoResponse("download_segment", toggle=(cmd >> 4) & 1)
    if scs == CS_ABORT:
        return SdoResponse("abort", index, sub, code=struct.unpack_from("<I", bytes(data), 4)[0])
    raise Cia402Error(f"unknown SDO server command specifier in 0x{cmd:02X}")


class SdoDownload:
    """Client side of one SDO download (write), expedited for 1-4 bytes, segmented above.

    ``frame = t.start()``, then for each response ``frame = t.feed(response_data)`` until it returns
    None (done).  An abort from the server raises :class:`SdoAbortError`; a response that does not fit
    raises :class:`Cia402Error` (the caller then sends :meth:`abort`).
    """

    def __init__(self, node: int, index: int, subindex: int, data: bytes,
                 force_segmented: bool = False) -> None:
        self.node, self.index, self.subindex, self.data = _check_node(node), index, subindex, bytes(data)
        self.segmented = force_segmented or len(self.data) > 4 or not self.data
        self._pos = 0
        self._toggle = 0
        self._state = "new"

    def start(self) -> Frame:
        self._state = "initiate"
        if not self.segmented:
            return sdo_download_request(self.node, self.index, self.subindex, self.data)
        cmd = (CCS_DOWNLOAD_INITIATE << 5) | 0x01  # size indicated, not expedited
        return Frame(SDO_RX_BASE + self.node, bytes((cmd,)) + _mux(self.index, self.subindex)
                     + struct.pack("<I", len(self.data)))

    def _next_segment(self) -> Frame:
        chunk = self.data[self._pos:self._pos + 7]
        self._pos += len(chunk)
        last = self._pos >= len(self.data)
        f = Frame(SDO_RX_BASE + self.node, _segment(self._toggle, chunk, last, CCS_DOWNLOAD_SEGMENT))
        self._state = "segment"
        return f

    def feed(self, data: bytes) -> Optional[Frame]:
        r = parse_sdo_response(data)
        if r.kind == "abort":
            self._state = "done"
            raise SdoAbortError(r.code, r.index, r.subindex, self.node)
        if self._state == "initiate":
            if r.kind != "download" or (r.index, r.subindex) != (self.index, self.subindex):
                raise Cia402Error(f"unexpected SDO response {r.kind} to a download of 0x{self.index:04X}")
            if not self.segmented:
                self._state = "done"
                return None
            return self._next_segment()
        if self._state == "segment":
            if r.kind != "download_segment" or r.toggle != self._toggle:
                raise Cia402Error(f"unexpected SDO response {r.kind} (toggle {r.toggle}) to a segment")
            if self._pos >= len(self.data):
                self._state = "done"
                return None
            self._toggle ^= 1
            return self._next_segment()
        raise Cia402Error("the SDO download is not in progress")

    def abort(self, code: int) -> Frame:
        self._state = "done"
        return sdo_abort_frame(self.node, self.index, self.subindex, code)


class SdoUpload:
    """Client side of one SDO upload (read); the server chooses expedited or segmented.

    ``frame = t.start()``; ``frame = t.feed(response_data)`` until None, then :attr:`data`.
    """

    def __init__(self, node: int, index: int, subindex: int = 0) -> None:
        self.node, self.index, self.subindex = _check_node(node), index, subindex
        self.data = b""
        self.size: Optional[int] = None
        self._toggle = 0
        self._state = "new"

    def start(self) -> Frame:
        self._state = "initiate"
        return sdo_upload_request(self.node, self.index, self.subindex)

    def _request_segment(self) -> Frame:
        cmd = (CCS_UPLOAD_SEGMENT << 5) | (self._toggle << 4)
        return Frame(SDO_RX_BASE + self.node, bytes((cmd,)) + bytes(7))

    def feed(self, data: bytes) -> Optional[Frame]:
        r = parse_sdo_response(data)
        if r.kind == "abort":
            self._state = "done"
            raise SdoAbortError(r.code, r.index, r.subindex, self.node)
        if self._state == "initiate":
            if r.kind != "upload" or (r.index, r.subindex) != (self.index, self.subindex):
                raise Cia402Error(f"unexpected SDO response {r.kind} to an upload of 0x{self.index:04X}")
            if data[0] & 0x02:  # expedited: the value is in this frame
                self.data = r.data
                self._state = "done"
                return None
            self.size = r.size
            self._state = "segment"
            return self._request_segment()
        if self._state == "segment":
            if r.kind != "upload_segment" or r.toggle != self._toggle:
                raise Cia402Error(f"unexpected SDO response {r.kind} (toggle {r.toggle}) to a segment "
                                  "request")
            self.data += r.data
            if r.last:
                self._state = "done"
                if self.size is not None and len(self.data) != self.size:
                    raise Cia402Error(f"SDO upload of 0x{self.index:04X} announced {self.size} bytes, "
                                      f"got {len(self.data)}")
                return None
            self._toggle ^= 1
            return self._request_segment()
        raise Cia402Error("the SDO upload is not in progress")

    def abort(self, code: int) -> Frame:
        self._state = "done"
        return sdo_abort_frame(self.node, self.index, self.subindex, code)


# -- PDO (CiA 301 7.2.2, 7.5.2.35-38) ------------------------------------------------------------------------
RPDO_COMM = 0x1400
RPDO_MAP = 0x1600
TPDO_COMM = 0x1800
TPDO_MAP = 0x1A00
#: COB-ID bit 31: the PDO does not exist / is not valid
PDO_INVALID = 0x80000000


def tpdo_cob_id(n: int, node: int) -> int:
    """Default COB-ID of TPDO ``n`` (1-4): 0x180/0x280/0x380/0x480 + node."""
    if not 1 <= n <= 4:
        raise Cia402Error(f"TPDO {n} has no default COB-ID (1-4)")
    return 0x180 + 0x100 * (n - 1) + _check_node(node)


def rpdo_cob_id(n: int, node: int) -> int:
    """Default COB-ID of RPDO ``n`` (1-4): 0x200/0x300/0x400/0x500 + node."""
    if not 1 <= n <= 4:
        raise Cia402Error(f"RPDO {n} has no default COB-ID (1-4)")
    return 0x200 + 0x100 * (n - 1) + _check_node(node)


def pdo_map_entry(index: int, subindex: int, bits: int) -> int:
    """A mapping entry (u32) ``index << 16 | subindex << 8 | length in bits``."""
    if not 1 <= bits <= 64:
        raise Cia402Error(f"a PDO mapping entry length is 1-64 bits, got {bits}")
    return (index << 16) | (subindex << 8) | bits


def parse_pdo_map_entry(entry: int) -> Tuple[int, int, int]:
    """``(index, subindex, bits)`` of a mapping entry."""
    return (entry >> 16) & 0xFFFF, (entry >> 8) & 0xFF, entry & 0xFF


_INT_FMT = {(8, True): "b", (8, False): "B", (16, True): "h", (16, False): "H", (32, True): "i",
            (32, False): "I", (64, True): "q", (64, False): "Q"}


def _signed(index: int, subindex: int) -> bool:
    info = OBJECTS.get(index)
    return bool(info and info.dtype.startswith("INTEGER"))


def pack_pdo(mapping: Sequence[Tuple[int, int, int]], values: Dict[Tuple[int, int], int]) -> bytes:
    """Payload of a PDO with ``mapping`` [(index, sub, bits)] (byte-aligned entries) from ``values``.

    :raises Cia402Error: a mapped object has no value, or a value does not fit its size.
    """
    out = b""
    for index, sub, bits in mapping:
        try:
            v = values[(index, sub)]
        except KeyError:
            raise Cia402Error(f"no value for mapped object 0x{index:04X}:{sub:02X}") from None
        fmt = _INT_FMT.get((bits, _signed(index, sub)))
        if fmt is None:
            raise Cia402Error(f"0x{index:04X}:{sub:02X}: only 8/16/32/64-bit entries are supported, "
                              f"got {bits}")
        try:
            out += struct.pack("<" + fmt, int(v))
        except struct.error as err:
            raise Cia402Error(f"value {v} of 0x{index:04X}:{sub:02X} does not fit {bits} bits") from err
    if len(out) > 8:
        raise Cia402Error(f"PDO mapping needs {len(out)} bytes, more than 8")
    return out


def unpack_pdo(mapping: Sequence[Tuple[int, int, int]], data: bytes) -> Dict[Tuple[int, int], int]:
    """Values of a received PDO by ``(index, sub)``.

    :raises Cia402Error: the PDO is shorter than its mapping (CiA 301: not processed, EMCY 0x8210).
    """
    out: Dict[Tuple[int, int], int] = {}
    pos = 0
    for index, sub, bits in mapping:
        fmt = _INT_FMT.get((bits, _signed(index, sub)))
        if fmt is None:
            raise Cia402Error(f"0x{index:04X}:{sub:02X}: only 8/16/32/64-bit entries are supported, "
                              f"got {bits}")
        n = bits // 8
        if pos + n > len(data):
            raise Cia402Error(f"PDO of {len(data)} bytes is shorter than its mapping ({pos + n} bytes)")
        (out[(index, sub)],) = struct.unpack_from("<" + fmt, bytes(data), pos)
        pos += n
    return out


# -- CiA 402 state machine -----------------------------------------------------------------------------------
class State:
    """The drive states of CiA 402 (values are the names ``canopen`` uses)."""

    NOT_READY_TO_SWITCH_ON = "NOT READY TO SWITCH ON"
    SWITCH_ON_DISABLED = "SWITCH ON DISABLED"
    READY_TO_SWITCH_ON = "READY TO SWITCH ON"
    SWITCHED_ON = "SWITCHED ON"
    OPERATION_ENABLED = "OPERATION ENABLED"
    QUICK_STOP_ACTIVE = "QUICK STOP ACTIVE"
    FAULT_REACTION_ACTIVE = "FAULT REACTION ACTIVE"
    FAULT = "FAULT"


#: (mask, value, state) in the order they are tested; statusword bits 0-3, 5, 6 (CiA 402-2 table 30)
_STATUS_PATTERNS: Tuple[Tuple[int, int, str], ...] = (
    (0x4F, 0x00, State.NOT_READY_TO_SWITCH_ON),
    (0x4F, 0x40, State.SWITCH_ON_DISABLED),
    (0x6F, 0x21, State.READY_TO_SWITCH_ON),
    (0x6F, 0x23, State.SWITCHED_ON),
    (0x6F, 0x27, State.OPERATION_ENABLED),
    (0x6F, 0x07, State.QUICK_STOP_ACTIVE),
    (0x4F, 0x0F, State.FAULT_REACTION_ACTIVE),
    (0x4F, 0x08, State.FAULT),
)
#: human-readable names ("Operation enabled") by state
STATE_NAMES: Dict[str, str] = {s: s.capitalize() for _m, _v, s in _STATUS_PATTERNS}

#: statusword bits (CiA 402-2 6.2.2)
SW_READY_TO_SWITCH_ON = 1 << 0
SW_SWITCHED_ON = 1 << 1
SW_OPERATION_ENABLED = 1 << 2
SW_FAULT = 1 << 3
SW_VOLTAGE_ENABLED = 1 << 4
SW_QUICK_STOP = 1 << 5          # 0 = quick stop active
SW_SWITCH_ON_DISABLED = 1 << 6
SW_WARNING = 1 << 7
SW_REMOTE = 1 << 9
SW_TARGET_REACHED = 1 << 10
SW_INTERNAL_LIMIT = 1 << 11
SW_OP_MODE_12 = 1 << 12         # CSP/CSV/CST: drive follows the command value; PP: set-point acknowledge
SW_OP_MODE_13 = 1 << 13         # CSP/PP: following error


def decode_statusword(statusword: int) -> str:
    """The :class:`State` a statusword shows (e.g. 0x0237 -> OPERATION ENABLED, vector C3).

    :raises Cia402Error: bits 0-3, 5, 6 match no state.
    """
    for mask, value, state in _STATUS_PATTERNS:
        if statusword & mask == value:
            return state
    raise Cia402Error(f"statusword 0x{statusword:04X} shows no CiA 402 state")


class Command:
    """Controlword commands (CiA 402-2 table 29); bit 7 (fault reset) acts on its rising edge."""

    SHUTDOWN = "SHUTDOWN"
    SWITCH_ON = "SWITCH ON"
    DISABLE_VOLTAGE = "DISABLE VOLTAGE"
    QUICK_STOP = "QUICK STOP"
    DISABLE_OPERATION = "DISABLE OPERATION"
    ENABLE_OPERATION = "ENABLE OPERATION"
    FAULT_RESET = "FAULT RESET"


#: controlword values sent for each command (bits 0-3 and 7; the mode-specific bits 4-6, 8 are 0)
CONTROLWORDS: Dict[str, int] = {
    Command.SHUTDOWN: 0x06, Command.SWITCH_ON: 0x07, Command.DISABLE_VOLTAGE: 0x00, Command.QUICK_STOP: 0x02,
    Command.DISABLE_OPERATION: 0x07, Command.ENABLE_OPERATION: 0x0F, Command.FAULT_RESET: 0x80,
}
CW_FAULT_RESET = 1 << 7
CW_HALT = 1 << 8
CW_NEW_SET_POINT = 1 << 4   # PP


def decode_controlword(controlword: int, state: Optional[str] = None) -> Optional[str]:
    """The command a controlword gives (ignoring bit 7, whose edge the drive detects itself).

    ``SWITCH ON`` and ``DISABLE OPERATION`` share a code (0x07); with ``state`` OPERATION ENABLED it
    reads as DISABLE OPERATION.  None: no command (e.g. 0x01 reserved patterns).
    """
    cw = controlword & 0x0F
    if cw & 0x02 == 0:
        return Command.DISABLE_VOLTAGE
    if cw & 0x06 == 0x02:
        return Command.QUICK_STOP
    if cw & 0x07 == 0x06:
        return Command.SHUTDOWN
    if cw == 0x07:
        return Command.DISABLE_OPERATION if state == State.OPERATION_ENABLED else Command.SWITCH_ON
    if cw == 0x0F:
        return Command.ENABLE_OPERATION
    return None


#: one step towards OPERATION ENABLED: state -> (command, state after it); None: the drive moves by
#: itself (NOT READY TO SWITCH ON, FAULT REACTION ACTIVE) or is there
_STEP_UP: Dict[str, Optional[Tuple[str, str]]] = {
    State.NOT_READY_TO_SWITCH_ON: None,
    State.SWITCH_ON_DISABLED: (Command.SHUTDOWN, State.READY_TO_SWITCH_ON),
    State.READY_TO_SWITCH_ON: (Command.SWITCH_ON, State.SWITCHED_ON),
    State.SWITCHED_ON: (Command.ENABLE_OPERATION, State.OPERATION_ENABLED),
    State.OPERATION_ENABLED: None,
    State.QUICK_STOP_ACTIVE: (Command.DISABLE_VOLTAGE, State.SWITCH_ON_DISABLED),
    State.FAULT_REACTION_ACTIVE: None,
    State.FAULT: (Command.FAULT_RESET, State.SWITCH_ON_DISABLED),
}


def next_command(state: str) -> Optional[Tuple[int, str]]:
    """``(controlword, expected state)`` of the next step from ``state`` to OPERATION ENABLED (None:
    there already, or the drive must move by itself first)."""
    if state not in _STEP_UP:
        raise Cia402Error(f"unknown CiA 402 state '{state}'")
    step = _STEP_UP[state]
    return None if step is None else (CONTROLWORDS[step[0]], step[1])


def path_to_operation_enabled(state: str) -> List[Tuple[int, str]]:
    """Every ``(controlword, expected state)`` from ``state`` to OPERATION ENABLED.

    From FAULT the path starts with 0x00 (bit 7 low) then 0x80 (its rising edge resets the fault), as
    a drive only resets on the edge (ros_canopen PR 138).  From QUICK STOP ACTIVE it goes through
    SWITCH ON DISABLED (transition 12), which every drive supports.
    """
    path: List[Tuple[int, str]] = []
    if state == State.FAULT:
        path.append((CONTROLWORDS[Command.DISABLE_VOLTAGE], State.FAULT))
    elif state in (State.NOT_READY_TO_SWITCH_ON, State.FAULT_REACTION_ACTIVE):
        # the drive goes on by itself (to SWITCH ON DISABLED, or to FAULT); plan from there
        state = State.SWITCH_ON_DISABLED if state == State.NOT_READY_TO_SWITCH_ON else State.FAULT
        return path_to_operation_enabled(state)
    while True:
        step = next_command(state)
        if step is None:
            return path
        path.append(step)
        state = step[1]


def path_to_switch_on_disabled(state: str) -> List[Tuple[int, str]]:
    """The way down (disable): DISABLE VOLTAGE from any powered state; nothing from SWITCH ON DISABLED,
    FAULT reset first from FAULT."""
    if state in (State.SWITCH_ON_DISABLED, State.NOT_READY_TO_SWITCH_ON):
        return []
    if state in (State.FAULT, State.FAULT_REACTION_ACTIVE):
        return [(CONTROLWORDS[Command.DISABLE_VOLTAGE], State.FAULT),
                (CONTROLWORDS[Command.FAULT_RESET], State.SWITCH_ON_DISABLED)]
    return [(CONTROLWORDS[Command.DISABLE_VOLTAGE], State.SWITCH_ON_DISABLED)]


# -- modes of operation (0x6060 / 0x6061) --------------------------------------------------------------------
MODES: Dict[str, int] = {"PP": 1, "VL": 2, "PV": 3, "PT": 4, "HM": 6, "IP": 7, "CSP": 8, "CSV": 9, "CST": 10}
MODE_NAMES: Dict[int, str] = {
    1: "Profile Position", 2: "Velocity", 3: "Profile Velocity", 4: "Profile Torque", 6: "Homing",
    7: "Interpolated Position", 8: "Cyclic Synchronous Position", 9: "Cyclic Synchronous Velocity",
    10: "Cyclic Synchronous Torque",
}
CSP, CSV, CST, PP, PV = 8, 9, 10, 1, 3


# -- objects -------------------------------------------------------------------------------------------------
class ObjectInfo(NamedTuple):
    """What the driver and the simulated drive need to know about an object."""

    index: int  # type: ignore[assignment]  # the field, not tuple.index
    name: str
    dtype: str          # CiA 301 type name: UNSIGNED8/16/32, INTEGER8/16/32, VISIBLE_STRING, RECORD
    access: str         # ro, rw, wo, const
    pdo: bool = False   # mappable
    unit: str = ""


_STRUCT_OF_TYPE = {"UNSIGNED8": "B", "UNSIGNED16": "H", "UNSIGNED32": "I", "INTEGER8": "b", "INTEGER16": "h",
                   "INTEGER32": "i"}

OBJECTS: Dict[int, ObjectInfo] = {o.index: o for o in (
    ObjectInfo(0x1000, "Device type", "UNSIGNED32", "ro"),
    ObjectInfo(0x1001, "Error register", "UNSIGNED8", "ro", True),
    ObjectInfo(0x1008, "Manufacturer device name", "VISIBLE_STRING", "const"),
    ObjectInfo(0x1017, "Producer heartbeat time", "UNSIGNED16", "rw", False, "ms"),
    ObjectInfo(0x1018, "Identity object", "RECORD", "ro"),
    ObjectInfo(0x1400, "RPDO1 communication parameter", "RECORD", "rw"),
    ObjectInfo(0x1600, "RPDO1 mapping parameter", "RECORD", "rw"),
    ObjectInfo(0x1800, "TPDO1 communication parameter", "RECORD", "rw"),
    ObjectInfo(0x1A00, "TPDO1 mapping parameter", "RECORD", "rw"),
    ObjectInfo(0x603F, "Error code", "UNSIGNED16", "ro", True),
    ObjectInfo(0x6040, "Controlword", "UNSIGNED16", "rw", True),
    ObjectInfo(0x6041, "Statusword", "UNSIGNED16", "ro", True),
    ObjectInfo(0x6060, "Modes of operation", "INTEGER8", "rw", True),
    ObjectInfo(0x6061, "Modes of operation display", "INTEGER8", "ro", True),
    ObjectInfo(0x6064, "Position actual value", "INTEGER32", "ro", True, "inc"),
    ObjectInfo(0x606C, "Velocity actual value", "INTEGER32", "ro", True, "inc/s"),
    ObjectInfo(0x6071, "Target torque", "INTEGER16", "rw", True, "per mille of rated torque"),
    ObjectInfo(0x6072, "Max torque", "UNSIGNED16", "rw", True, "per mille of rated torque"),
    ObjectInfo(0x6076, "Motor rated torque", "UNSIGNED32", "rw", False, "mN m"),
    ObjectInfo(0x6077, "Torque actual value", "INTEGER16", "ro", True, "per mille of rated torque"),
    ObjectInfo(0x607A, "Target position", "INTEGER32", "rw", True, "inc"),
    ObjectInfo(0x6081, "Profile velocity", "UNSIGNED32", "rw", True, "inc/s"),
    ObjectInfo(0x60B1, "Velocity offset", "INTEGER32", "rw", True, "inc/s"),
    ObjectInfo(0x60B2, "Torque offset", "INTEGER16", "rw", True, "per mille of rated torque"),
    ObjectInfo(0x60C2, "Interpolation time period", "RECORD", "rw"),
    ObjectInfo(0x60FF, "Target velocity", "INTEGER32", "rw", True, "inc/s"),
    ObjectInfo(0x6502, "Supported drive modes", "UNSIGNED32", "ro"),
)}
for _n in range(1, 4):
    for _base, _kind in ((0x1400, "RPDO%d communication parameter"), (0x1600, "RPDO%d mapping parameter"),
                         (0x1800, "TPDO%d communication parameter"), (0x1A00, "TPDO%d mapping parameter")):
        OBJECTS[_base + _n] = ObjectInfo(_base + _n, _kind % (_n + 1), "RECORD", "rw")

CONTROLWORD, STATUSWORD = 0x6040, 0x6041
MODES_OF_OPERATION, MODES_OF_OPERATION_DISPLAY = 0x6060, 0x6061
POSITION_ACTUAL, VELOCITY_ACTUAL, TORQUE_ACTUAL = 0x6064, 0x606C, 0x6077
TARGET_POSITION, TARGET_VELOCITY, TARGET_TORQUE = 0x607A, 0x60FF, 0x6071
VELOCITY_OFFSET, TORQUE_OFFSET = 0x60B1, 0x60B2
ERROR_CODE, ERROR_REGISTER = 0x603F, 0x1001
HEARTBEAT_PRODUCER = 0x1017
RATED_TORQUE = 0x6076
INTERPOLATION_PERIOD = 0x60C2


def object_info(index: int) -> ObjectInfo:
    """The :class:`ObjectInfo` of a known object (:class:`Cia402Error` naming it in hex otherwise)."""
    try:
        return OBJECTS[index]
    except KeyError:
        raise Cia402Error(f"object 0x{index:04X} is not one this package knows") from None


def struct_code(dtype: str) -> str:
    """struct format letter of an integer CiA 301 type."""
    try:
        return _STRUCT_OF_TYPE[dtype]
    except KeyError:
        raise Cia402Error(f"{dtype} is not an integer data type") from None


# -- units ---------------------------------------------------------------------------------------------------
class UnitScale:
    """Drive units <-> joint units through the encoder resolution, a gear and the rated torque.

    * position: ``rad = counts / counts_per_rev * 2 pi / gear_ratio`` (encoder on the motor, joint
      behind a ``gear_ratio``:1 reduction; ``gear_ratio`` 1 for an encoder on the joint);
    * velocity: the same per second (0x606C / 0x60FF in counts/s);
    * torque: ``N m (joint) = per_mille / 1000 * rated_torque * gear_ratio`` (0x6071 / 0x6077 are
      per mille of the motor's rated torque 0x6076; the gear multiplies it).

    :raises ValueError: counts_per_rev or rated_torque not positive, gear_ratio zero or not finite.
    """

    def __init__(self, counts_per_rev: float, gear_ratio: float = 1.0, rated_torque: float = 1.0) -> None:
        for name, value in (("counts_per_rev", counts_per_rev), ("rated_torque", rated_torque)):
            if not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name}={value!r} must be a positive number")
        if not (math.isfinite(gear_ratio) and gear_ratio != 0):
            raise ValueError(f"gear_ratio={gear_ratio!r} must be a non-zero number")
        self.counts_per_rev = float(counts_per_rev)
        self.gear_ratio = float(gear_ratio)
        self.rated_torque = float(rated_torque)
        self._rad_per_count = 2.0 * math.pi / (self.counts_per_rev * self.gear_ratio)

    def counts_to_rad(self, counts: float) -> float:
        return counts * self._rad_per_count

    def rad_to_counts(self, rad: float, attribute: str = "position") -> int:
        """Rounded to the nearest increment, checked against INTEGER32 (naming ``attribute``)."""
        return _int32(rad / self._rad_per_count, attribute, rad)

    def counts_per_s_to_rad_per_s(self, counts: float) -> float:
        return counts * self._rad_per_count

    def rad_per_s_to_counts_per_s(self, rad_s: float, attribute: str = "velocity") -> int:
        return _int32(rad_s / self._rad_per_count, attribute, rad_s)

    def permille_to_nm(self, permille: float) -> float:
        return permille / 1000.0 * self.rated_torque * self.gear_ratio

    def nm_to_permille(self, nm: float, attribute: str = "torque") -> int:
        """Rounded per mille, checked against INTEGER16 (naming ``attribute``)."""
        if not math.isfinite(nm):
            raise ValueError(f"{attribute}={nm!r} is not a finite torque")
        v = int(round(nm / (self.rated_torque * self.gear_ratio) * 1000.0))
        if not -32768 <= v <= 32767:
            limit = 32.767 * self.rated_torque * abs(self.gear_ratio)
            raise ValueError(f"{attribute}={nm!r} N m is outside what 0x6071 can encode "
                             f"(+-{limit:g} N m at rated torque {self.rated_torque:g} N m)")
        return v


def _int32(x: float, attribute: str, original: float) -> int:
    if not math.isfinite(x):
        raise ValueError(f"{attribute}={original!r} is not a finite number")
    v = int(round(x))
    if not -(1 << 31) <= v < (1 << 31):
        raise ValueError(f"{attribute}={original!r} is {v} increments, outside INTEGER32")
    return v


def interpolation_period_s(value: int, index: int) -> float:
    """The period 0x60C2 encodes: ``value`` (sub 1, u8) times 10 to the ``index`` (sub 2, i8) seconds."""
    return value * 10.0 ** index


def check_sync_period(sync_period: float, value: int, index: int, node: Optional[int] = None) -> None:
    """In CSP/CSV/CST the drive interpolates over 0x60C2; a SYNC period that differs makes it jerk or
    vibrate (ros2_canopen #405).

    :raises ValueError: the periods differ by more than 1 %, naming both.
    """
    period = interpolation_period_s(value, index)
    if period <= 0 or abs(sync_period - period) > 0.01 * period:
        who = f"node {node}: " if node is not None else ""
        raise ValueError(f"{who}SYNC period {sync_period * 1000:g} ms differs from the drive's interpolation "
                         f"time period 0x60C2 = {value} x 10^{index} s = {period * 1000:g} ms")
