"""CiA 301 SDO frames and transfers, byte-exact (CiA 301 v4.2 7.2.4; the SDO abort-code table):
expedited and segmented upload/download requests and responses, their parsers, and the client side of a
segmented transfer as a state machine fed one response at a time.  Pure codec: no I/O.

8 bytes, little-endian: byte 0 command specifier, bytes 1-2 index, byte 3 sub-index, bytes 4-7 data
(expedited, size in bits 3-2 as ``4 - n``) or a u32 size (segmented initiate); segments carry 7 data
bytes after a command byte with the toggle bit 4 and "no more segments" bit 0."""
from __future__ import annotations

import struct
from typing import Dict, NamedTuple, Optional, Tuple

from rospy_control.devices.frame import Frame
from rospy_control.devices.cia402.nmt import Cia402Error, check_node

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
    return Frame(SDO_RX_BASE + check_node(node), b"\x40" + _mux(index, subindex) + bytes(4))


def sdo_download_request(node: int, index: int, subindex: int, data: bytes) -> Frame:
    """Initiate an expedited download (write) of 1-4 bytes: command ``0x2F/0x2B/0x27/0x23`` (C2, C4, C5).

    Longer data: :class:`SdoDownload` (segmented).
    """
    n = len(data)
    if not 1 <= n <= 4:
        raise Cia402Error(f"an expedited SDO download carries 1-4 bytes, got {n}; use SdoDownload")
    cmd = (CCS_DOWNLOAD_INITIATE << 5) | ((4 - n) << 2) | 0x03
    return Frame(SDO_RX_BASE + check_node(node), bytes((cmd,)) + _mux(index, subindex) + bytes(data)
                 + bytes(4 - n))


def sdo_abort_frame(node: int, index: int, subindex: int, code: int, server: bool = False) -> Frame:
    """Abort transfer ``0x80 idx sub code(u32 LE)``, from the client (0x600) or the server (0x580)."""
    base = SDO_TX_BASE if server else SDO_RX_BASE
    return Frame(base + check_node(node), b"\x80" + _mux(index, subindex) + struct.pack("<I", code))


# server-side builders (the simulated drive)
def sdo_upload_response(node: int, index: int, subindex: int, data: bytes) -> Frame:
    """Expedited upload response (1-4 bytes, command 0x4F/0x4B/0x47/0x43)."""
    n = len(data)
    if not 1 <= n <= 4:
        raise Cia402Error(f"an expedited SDO upload carries 1-4 bytes, got {n}")
    cmd = (SCS_UPLOAD_INITIATE << 5) | ((4 - n) << 2) | 0x03
    return Frame(SDO_TX_BASE + check_node(node), bytes((cmd,)) + _mux(index, subindex) + bytes(data)
                 + bytes(4 - n))


def sdo_upload_segmented_response(node: int, index: int, subindex: int, size: int) -> Frame:
    """Upload response starting a segmented transfer of ``size`` bytes (command 0x41)."""
    return Frame(SDO_TX_BASE + check_node(node), b"\x41" + _mux(index, subindex) + struct.pack("<I", size))


def sdo_download_response(node: int, index: int, subindex: int) -> Frame:
    """Download initiate response ``0x60 idx sub 00 00 00 00`` (C2)."""
    return Frame(SDO_TX_BASE + check_node(node), b"\x60" + _mux(index, subindex) + bytes(4))


def _segment(toggle: int, chunk: bytes, last: bool, scs: int = 0) -> bytes:
    n = len(chunk)
    if not 0 <= n <= 7:
        raise Cia402Error(f"an SDO segment carries 0-7 bytes, got {n}")
    cmd = (scs << 5) | ((toggle & 1) << 4) | ((7 - n) << 1) | (1 if last else 0)
    return bytes((cmd,)) + bytes(chunk) + bytes(7 - n)


def sdo_upload_segment_response(node: int, toggle: int, chunk: bytes, last: bool) -> Frame:
    return Frame(SDO_TX_BASE + check_node(node), _segment(toggle, chunk, last, SCS_UPLOAD_SEGMENT))


def sdo_download_segment_response(node: int, toggle: int) -> Frame:
    return Frame(SDO_TX_BASE + check_node(node), bytes(((SCS_DOWNLOAD_SEGMENT << 5) | ((toggle & 1) << 4),))
                 + bytes(7))


class SdoMessage(NamedTuple):
    """The fields of a decoded SDO frame, either way; ``kind``: ``download`` (expedited: ``data``;
    segmented: ``size``), ``download_segment`` (``toggle``, ``data``, ``last``), ``upload`` (a
    response: expedited ``data`` or segmented ``size``), ``upload_segment`` (``toggle``; a response:
    ``data``, ``last``), ``abort`` (``code``)."""

    kind: str
    index: int = 0  # type: ignore[assignment]  # the field, not tuple.index
    subindex: int = 0
    data: bytes = b""
    size: Optional[int] = None
    toggle: int = 0
    last: bool = False
    code: int = 0


class SdoRequest(SdoMessage):
    """A decoded client request (the server's view)."""

    __slots__ = ()


# The four layouts of an SDO frame (CiA 301 7.2.4.3), the same in both directions: an initiate frame
# that carries data (expedited) or the size (segmented), a segment with up to 7 bytes, an initiate or
# segment answer that only acknowledges, an abort with its code.
_INITIATE, _SEGMENT, _ACK_INITIATE, _ACK_SEGMENT, _ABORT = range(5)
#: client -> server command specifiers: (kind, layout)
_REQUESTS = {CCS_DOWNLOAD_INITIATE: ("download", _INITIATE),
             CCS_DOWNLOAD_SEGMENT: ("download_segment", _SEGMENT),
             CCS_UPLOAD_INITIATE: ("upload", _ACK_INITIATE),
             CCS_UPLOAD_SEGMENT: ("upload_segment", _ACK_SEGMENT),
             CS_ABORT: ("abort", _ABORT)}
#: server -> client command specifiers: (kind, layout)
_RESPONSES = {SCS_UPLOAD_INITIATE: ("upload", _INITIATE), SCS_UPLOAD_SEGMENT: ("upload_segment", _SEGMENT),
              SCS_DOWNLOAD_INITIATE: ("download", _ACK_INITIATE),
              SCS_DOWNLOAD_SEGMENT: ("download_segment", _ACK_SEGMENT), CS_ABORT: ("abort", _ABORT)}


def _parse_sdo(data: bytes, specifiers: dict, make: type) -> Tuple[Optional[SdoMessage], int, int, int]:
    """``(message or None for an unknown specifier, command byte, index, subindex)`` of an SDO frame."""
    if len(data) != 8:
        raise Cia402Error(f"SDO frame must have 8 bytes, got {len(data)}")
    cmd = data[0]
    index, sub = struct.unpack_from("<HB", bytes(data), 1)
    entry = specifiers.get(cmd >> 5)
    if entry is None:
        return None, cmd, index, sub
    kind, layout = entry
    if layout == _INITIATE:
        if cmd & 0x02:       # expedited: the data in bytes 4..7, their count given when bit 0 is set
            n = 4 - ((cmd >> 2) & 0x3) if cmd & 0x01 else 4
            return make(kind, index, sub, bytes(data[4:4 + n])), cmd, index, sub
        size = struct.unpack_from("<I", bytes(data), 4)[0] if cmd & 0x01 else None
        return make(kind, index, sub, b"", size), cmd, index, sub
    if layout == _SEGMENT:
        n = 7 - ((cmd >> 1) & 0x7)
        segment = make(kind, data=bytes(data[1:1 + n]), toggle=(cmd >> 4) & 1, last=bool(cmd & 1))
        return segment, cmd, index, sub
    if layout == _ACK_INITIATE:
        return make(kind, index, sub), cmd, index, sub
    if layout == _ACK_SEGMENT:
        return make(kind, toggle=(cmd >> 4) & 1), cmd, index, sub
    return make(kind, index, sub, code=struct.unpack_from("<I", bytes(data), 4)[0]), cmd, index, sub


def parse_sdo_request(data: bytes) -> SdoRequest:
    """Decode a client -> server SDO frame.

    :raises SdoAbortError: an unknown command specifier (code 0x05040001; the server sends that abort).
    :raises Cia402Error: not 8 bytes.
    """
    message, _, index, sub = _parse_sdo(data, _REQUESTS, SdoRequest)
    if message is None:
        raise SdoAbortError(ABORT_COMMAND, index, sub)
    return message  # type: ignore[return-value]


class SdoResponse(SdoMessage):
    """A decoded server response (the client's view)."""

    __slots__ = ()


def parse_sdo_response(data: bytes) -> SdoResponse:
    """Decode a server -> client SDO frame."""
    message, cmd, _, _ = _parse_sdo(data, _RESPONSES, SdoResponse)
    if message is None:
        raise Cia402Error(f"unknown SDO server command specifier in 0x{cmd:02X}")
    return message  # type: ignore[return-value]


class _SdoTransfer:
    """What an SDO download and an upload share: the server's abort, the initiate answer's check."""

    #: the response kind that answers the initiate frame, and the transfer in messages
    KIND = ""
    WHAT = ""
    node: int
    index: int
    subindex: int
    _state: str

    def _response(self, data: bytes) -> SdoResponse:
        """The decoded response; :raises SdoAbortError: the server aborted; :raises Cia402Error: the
        initiate frame's answer is not for this transfer."""
        r = parse_sdo_response(data)
        if r.kind == "abort":
            self._state = "done"
            raise SdoAbortError(r.code, r.index, r.subindex, self.node)
        mine = (self.index, self.subindex)
        if self._state == "initiate" and (r.kind != self.KIND or (r.index, r.subindex) != mine):
            raise Cia402Error(f"unexpected SDO response {r.kind} to {self.WHAT} of 0x{self.index:04X}")
        return r

    def abort(self, code: int) -> Frame:
        self._state = "done"
        return sdo_abort_frame(self.node, self.index, self.subindex, code)


class SdoDownload(_SdoTransfer):
    """Client side of one SDO download (write), expedited for 1-4 bytes, segmented above.

    ``frame = t.start()``, then for each response ``frame = t.feed(response_data)`` until it returns
    None (done).  An abort from the server raises :class:`SdoAbortError`; a response that does not fit
    raises :class:`Cia402Error` (the caller then sends :meth:`abort`).
    """

    KIND = "download"
    WHAT = "a download"

    def __init__(self, node: int, index: int, subindex: int, data: bytes,
                 force_segmented: bool = False) -> None:
        self.node, self.index, self.subindex, self.data = check_node(node), index, subindex, bytes(data)
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
        r = self._response(data)
        if self._state == "initiate":
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


class SdoUpload(_SdoTransfer):
    """Client side of one SDO upload (read); the server chooses expedited or segmented.

    ``frame = t.start()``; ``frame = t.feed(response_data)`` until None, then :attr:`data`.
    """

    KIND = "upload"
    WHAT = "an upload"

    def __init__(self, node: int, index: int, subindex: int = 0) -> None:
        self.node, self.index, self.subindex = check_node(node), index, subindex
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
        r = self._response(data)
        if self._state == "initiate":
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
