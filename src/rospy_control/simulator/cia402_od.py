"""The object dictionary of the simulated CiA 402 drive (:mod:`.cia402`): its entries, the default
PDO layout, and the access helpers the drive and its CANopen communication (:mod:`.cia402_comm`)
share.  The objects are the ones a CiA 301 / 402 drive offers (identity, PDO communication and
mapping parameters, heartbeat, controlword / statusword, modes, targets and actual values, SYNC
period 0x60C2, supported modes 0x6502)."""
from __future__ import annotations

import struct
from typing import Dict, Tuple, Union

from rospy_control.devices.cia402 import codec as co

__all__ = ["Value", "Key", "DEFAULT_RPDOS", "DEFAULT_TPDOS", "OdEntry", "Cia402ObjectDictionary"]

Value = Union[int, bytes]
Key = Tuple[int, int]

#: default PDO layout: (mapping, transmission type) for PDO 1..3 (4 is disabled)
DEFAULT_RPDOS: Tuple[Tuple[Tuple[Tuple[int, int, int], ...], int], ...] = (
    (((0x6040, 0, 16), (0x6060, 0, 8)), 255),
    (((0x607A, 0, 32), (0x60FF, 0, 32)), 1),
    (((0x6071, 0, 16), (0x60B2, 0, 16)), 1),
)
DEFAULT_TPDOS: Tuple[Tuple[Tuple[Tuple[int, int, int], ...], int], ...] = (
    (((0x6041, 0, 16), (0x6061, 0, 8)), 255),
    (((0x6064, 0, 32), (0x606C, 0, 32)), 1),
    (((0x6077, 0, 16), (0x603F, 0, 16)), 1),
)

_SIZE = {"UNSIGNED8": 1, "UNSIGNED16": 2, "UNSIGNED32": 4, "INTEGER8": 1, "INTEGER16": 2, "INTEGER32": 4}


class _Entry:
    __slots__ = ("dtype", "access", "pdo", "default", "value")

    def __init__(self, dtype: str, access: str, value: Value, pdo: bool = False) -> None:
        self.dtype, self.access, self.pdo, self.default, self.value = dtype, access, pdo, value, value


#: an object of the dictionary: data type, access, PDO-mappable, default and present value
OdEntry = _Entry


class Cia402ObjectDictionary:
    """The object dictionary part of a simulated drive: :attr:`od` and its helpers.

    The drive sets the attributes declared here; :meth:`_refresh_actuals` (bring the actual values
    up to date before a read) is the drive's own.
    """

    od: Dict[Key, _Entry]
    node_id: int
    device_name: str
    scale: co.UnitScale
    _heartbeat_default: int

    def _refresh_actuals(self) -> None:
        """Bring the actual-value objects up to date (the drive does; nothing here)."""

    # -- object dictionary ----------------------------------------------------------------------------------
    def _add(self, index: int, sub: int, dtype: str, access: str, value: Value, pdo: bool = False) -> None:
        self.od[(index, sub)] = _Entry(dtype, access, value, pdo)

    def _build_od(self) -> None:
        a = self._add
        a(0x1000, 0, "UNSIGNED32", "ro", 0x00020192)   # CiA 402, servo drive
        a(0x1001, 0, "UNSIGNED8", "ro", 0, True)
        a(0x1008, 0, "VISIBLE_STRING", "const", self.device_name.encode())
        a(0x1010, 0, "UNSIGNED8", "ro", 1)
        a(0x1010, 1, "UNSIGNED32", "rw", 1)             # bit 0: saves on command (CiA 301 7.5.2.13)
        a(0x1017, 0, "UNSIGNED16", "rw", self._heartbeat_default)
        a(0x1018, 0, "UNSIGNED8", "ro", 4)
        for sub, v in ((1, 0x00000ABC), (2, 0x00000402), (3, 0x00010000), (4, 0x00000001)):
            a(0x1018, sub, "UNSIGNED32", "ro", v)
        for i in range(4):
            rmap, rtype = DEFAULT_RPDOS[i] if i < len(DEFAULT_RPDOS) else ((), 255)
            tmap, ttype = DEFAULT_TPDOS[i] if i < len(DEFAULT_TPDOS) else ((), 255)
            off = co.PDO_INVALID if i >= len(DEFAULT_RPDOS) else 0
            a(0x1400 + i, 0, "UNSIGNED8", "ro", 2)
            a(0x1400 + i, 1, "UNSIGNED32", "rw", co.rpdo_cob_id(i + 1, self.node_id) | off)
            a(0x1400 + i, 2, "UNSIGNED8", "rw", rtype)
            a(0x1600 + i, 0, "UNSIGNED8", "rw", len(rmap))
            for s in range(1, 9):
                a(0x1600 + i, s, "UNSIGNED32", "rw", co.pdo_map_entry(*rmap[s - 1]) if s <= len(rmap) else 0)
            off = co.PDO_INVALID if i >= len(DEFAULT_TPDOS) else 0
            a(0x1800 + i, 0, "UNSIGNED8", "ro", 5)
            a(0x1800 + i, 1, "UNSIGNED32", "rw", co.tpdo_cob_id(i + 1, self.node_id) | off)
            a(0x1800 + i, 2, "UNSIGNED8", "rw", ttype)
            a(0x1800 + i, 3, "UNSIGNED16", "rw", 0)
            # TPDO1 (statusword) also every 100 ms: canopen's BaseNode402 takes a TPDO it saw twice
            # for periodic and then waits for the next one
            a(0x1800 + i, 5, "UNSIGNED16", "rw", 100 if i == 0 else 0)
            a(0x1A00 + i, 0, "UNSIGNED8", "rw", len(tmap))
            for s in range(1, 9):
                a(0x1A00 + i, s, "UNSIGNED32", "rw", co.pdo_map_entry(*tmap[s - 1]) if s <= len(tmap) else 0)
        a(0x2000, 0, "VISIBLE_STRING", "rw", b"")       # a free text object (segmented download)
        a(0x6007, 0, "INTEGER16", "rw", 1)
        a(0x603F, 0, "UNSIGNED16", "ro", 0, True)
        a(0x6040, 0, "UNSIGNED16", "rw", 0, True)
        a(0x6041, 0, "UNSIGNED16", "ro", 0, True)
        a(0x6060, 0, "INTEGER8", "rw", 0, True)
        a(0x6061, 0, "INTEGER8", "ro", 0, True)
        a(0x6064, 0, "INTEGER32", "ro", 0, True)
        a(0x606C, 0, "INTEGER32", "ro", 0, True)
        a(0x6071, 0, "INTEGER16", "rw", 0, True)
        a(0x6072, 0, "UNSIGNED16", "rw", 3000, True)
        a(0x6076, 0, "UNSIGNED32", "rw", int(round(self.scale.rated_torque * 1000.0)))
        a(0x6065, 0, "UNSIGNED32", "rw", 0xFFFFFFFF)     # following error window: off
        a(0x607D, 0, "UNSIGNED8", "ro", 2)
        a(0x607D, 1, "INTEGER32", "rw", -0x80000000)
        a(0x607D, 2, "INTEGER32", "rw", 0x7FFFFFFF)
        a(0x6077, 0, "INTEGER16", "ro", 0, True)
        a(0x607A, 0, "INTEGER32", "rw", 0, True)
        a(0x6081, 0, "UNSIGNED32", "rw", int(self.scale.counts_per_rev), True)
        a(0x6083, 0, "UNSIGNED32", "rw", int(self.scale.counts_per_rev) * 10, True)
        a(0x6084, 0, "UNSIGNED32", "rw", int(self.scale.counts_per_rev) * 10, True)
        a(0x60B1, 0, "INTEGER32", "rw", 0, True)
        a(0x60B2, 0, "INTEGER16", "rw", 0, True)
        a(0x60C2, 0, "UNSIGNED8", "ro", 2)
        a(0x60C2, 1, "UNSIGNED8", "rw", 10)
        a(0x60C2, 2, "INTEGER8", "rw", -3)
        a(0x60FF, 0, "INTEGER32", "rw", 0, True)
        a(0x6502, 0, "UNSIGNED32", "ro", (1 << 0) | (1 << 2) | (1 << 7) | (1 << 8) | (1 << 9))

    def get(self, index: int, sub: int = 0) -> Value:
        """The present value of an object (tests, the simulation's own logic)."""
        self._refresh_actuals()
        return self.od[(index, sub)].value

    def _val(self, index: int, sub: int = 0) -> int:
        v = self.od[(index, sub)].value
        assert isinstance(v, int)
        return v

    def _encode(self, key: Key) -> bytes:
        e = self.od[key]
        if isinstance(e.value, bytes):
            return e.value
        return struct.pack("<" + co.struct_code(e.dtype), e.value)
