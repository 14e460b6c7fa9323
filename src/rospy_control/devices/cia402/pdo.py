"""CiA 301 PDOs: COB-IDs of RPDO/TPDO 1-4, the communication and mapping objects (CiA 301 v4.2
7.2.2, 7.5.2.35-38), mapping entries, and the packing of mapped values into a PDO's bytes.  Pure codec."""
from __future__ import annotations

import struct
from typing import Dict, Sequence, Tuple

from rospy_control.devices.cia402.nmt import Cia402Error, check_node
from rospy_control.devices.cia402.objects import OBJECTS

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
    return 0x180 + 0x100 * (n - 1) + check_node(node)


def rpdo_cob_id(n: int, node: int) -> int:
    """Default COB-ID of RPDO ``n`` (1-4): 0x200/0x300/0x400/0x500 + node."""
    if not 1 <= n <= 4:
        raise Cia402Error(f"RPDO {n} has no default COB-ID (1-4)")
    return 0x200 + 0x100 * (n - 1) + check_node(node)


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
