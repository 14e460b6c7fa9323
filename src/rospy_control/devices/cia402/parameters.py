"""CiA 402 drive objects as parameters (:class:`Cia402Parameters`): expedited SDO upload (read) and
download (write) of the standard objects of CiA 301 / CiA 402-2 listed in :data:`OBJECTS`, and the
store through 0x1010 sub 1 (CiA 301 7.5.2.13: write the signature "save", 0x65766173).

A drive may lack an object: it answers the SDO with an abort ("Object does not exist", 0x06020000),
reported as such.  A value it refuses is likewise its abort.  The node id: CiA 301 defines no object
that sets it; CiA 305 (LSS) can, on drives that implement LSS, and vendors put it in their own
0x2000-0x5FFF objects -- neither is standard across drives, so this tool does not send it.
"""
from __future__ import annotations

import struct
from typing import Any, Optional

from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.parameters import (
    Exchange, Parameter, ParameterAccess, ParameterError, Refused, Value,
)

__all__ = ["Cia402Parameters", "OBJECTS", "SAVE_SIGNATURE"]

#: 0x1010 sub 1 "save all parameters": the ASCII "save" as a little-endian u32 (CiA 301 7.5.2.13)
SAVE_SIGNATURE = 0x65766173
_INT = {"UNSIGNED8": (0, 0xFF), "UNSIGNED16": (0, 0xFFFF), "UNSIGNED32": (0, 0xFFFFFFFF),
        "INTEGER8": (-0x80, 0x7F), "INTEGER16": (-0x8000, 0x7FFF), "INTEGER32": (-0x80000000, 0x7FFFFFFF)}

#: (index, sub, name, CiA name, type, writable, unit); names: the CiA name in lower case with underscores
_TABLE = (
    (0x1000, 0, "device_type", "Device type", "UNSIGNED32", False, ""),
    (0x1001, 0, "error_register", "Error register", "UNSIGNED8", False, ""),
    (0x1017, 0, "producer_heartbeat_time", "Producer heartbeat time", "UNSIGNED16", True, "ms"),
    (0x1018, 1, "vendor_id", "Identity object: Vendor-ID", "UNSIGNED32", False, ""),
    (0x1018, 2, "product_code", "Identity object: Product code", "UNSIGNED32", False, ""),
    (0x1018, 3, "revision_number", "Identity object: Revision number", "UNSIGNED32", False, ""),
    (0x1018, 4, "serial_number", "Identity object: Serial number", "UNSIGNED32", False, ""),
    (0x603F, 0, "error_code", "Error code", "UNSIGNED16", False, ""),
    (0x6007, 0, "abort_connection_option_code", "Abort connection option code", "INTEGER16", True, ""),
    (0x6041, 0, "statusword", "Statusword", "UNSIGNED16", False, ""),
    (0x6061, 0, "modes_of_operation_display", "Modes of operation display", "INTEGER8", False, ""),
    (0x6064, 0, "position_actual_value", "Position actual value", "INTEGER32", False, "inc"),
    (0x6065, 0, "following_error_window", "Following error window", "UNSIGNED32", True, "inc"),
    (0x6072, 0, "max_torque", "Max torque", "UNSIGNED16", True, "per mille of rated torque"),
    (0x6076, 0, "motor_rated_torque", "Motor rated torque", "UNSIGNED32", True, "mN m"),
    (0x607D, 1, "min_position_limit", "Software position limit: Min", "INTEGER32", True, "inc"),
    (0x607D, 2, "max_position_limit", "Software position limit: Max", "INTEGER32", True, "inc"),
    (0x6081, 0, "profile_velocity", "Profile velocity", "UNSIGNED32", True, "inc/s"),
    (0x6083, 0, "profile_acceleration", "Profile acceleration", "UNSIGNED32", True, "inc/s^2"),
    (0x6084, 0, "profile_deceleration", "Profile deceleration", "UNSIGNED32", True, "inc/s^2"),
    (0x60C2, 1, "interpolation_time_period_value", "Interpolation time period: value", "UNSIGNED8", True,
     "x 10^index s"),
    (0x60C2, 2, "interpolation_time_index", "Interpolation time period: index", "INTEGER8", True, ""),
    (0x6502, 0, "supported_drive_modes", "Supported drive modes", "UNSIGNED32", False, ""),
)
#: the objects as :class:`Parameter` (key: ``(index, subindex, data type)``)
OBJECTS = tuple(
    Parameter(name, unit, "uint" if dtype.startswith("U") else "int", writable, *_INT[dtype],
              (index, sub, dtype), f"0x{index:04X}:{sub} {cia}",
              restore=writable)
    for index, sub, name, cia, dtype, writable, unit in _TABLE)


class Cia402Parameters(ParameterAccess):
    """The standard objects of one :class:`~.device.Cia402Drive` through SDO (see the module docstring)."""

    PROTOCOL = "CANopen CiA 402"
    DOCUMENT = "CiA 301 / CiA 402-2"
    ID_ATTRIBUTE = "node_id"
    ID_RANGE = (1, 127)

    def __init__(self, unit: Any) -> None:
        super().__init__(unit)
        self.parameters = {p.name: p for p in OBJECTS}

    def parameter(self, name: str) -> Parameter:
        """By name, or by ``0xINDEX`` / ``0xINDEX:SUB`` as the drive's documentation writes it."""
        if name.lower().startswith("0x"):
            index, _, sub = name.partition(":")
            try:
                key = (int(index, 16), int(sub or "0", 0))
            except ValueError:
                key = (-1, -1)
            for p in self.parameters.values():
                if p.key[:2] == key:
                    return p
        return super().parameter(name)

    def _answer(self, index: int, sub: int, kind: str, dtype: Optional[str]):
        rid = co.SDO_TX_BASE + self.unit.node_id

        def answer(arb_id: int, ext: bool, data: bytes) -> Optional[Value]:
            if ext or arb_id != rid or len(data) != 8:
                return None
            r = co.parse_sdo_response(data)
            if (r.index, r.subindex) != (index, sub):
                return None
            if r.kind == "abort":
                raise ParameterError(f"the drive aborted the SDO of 0x{index:04X}:{sub}: "
                                     f"{co.sdo_abort_text(r.code)}")
            if r.kind != kind:
                return None
            if dtype is None:
                return 0
            code = co.struct_code(dtype)
            raw = bytes(r.data[:struct.calcsize(code)])
            if len(raw) != struct.calcsize(code):
                raise ParameterError(f"0x{index:04X}:{sub}: the drive sent {len(r.data)} bytes for a {dtype}")
            return int(struct.unpack("<" + code, raw)[0])
        return answer

    def read(self, p: Parameter) -> Exchange:
        index, sub, dtype = p.key
        return Exchange(co.sdo_upload_request(self.unit.node_id, index, sub),
                        self._answer(index, sub, "upload", dtype), f"SDO upload 0x{index:04X}:{sub}")

    def write(self, p: Parameter, value: Value) -> Exchange:
        p.check_writable()
        value = p.parse(value)
        index, sub, dtype = p.key
        data = struct.pack("<" + co.struct_code(dtype), int(value))
        return Exchange(co.sdo_download_request(self.unit.node_id, index, sub, data),
                        self._answer(index, sub, "download", None), f"SDO download 0x{index:04X}:{sub}")

    def save(self, device_id: Optional[int] = None) -> Exchange:
        node = self.unit.node_id if device_id is None else device_id
        return Exchange(co.sdo_download_request(node, 0x1010, 1, struct.pack("<I", SAVE_SIGNATURE)),
                        self._answer(0x1010, 1, "download", None), "store parameters (0x1010:1 \"save\")")

    def set_id(self, new_id: int) -> Exchange:
        raise Refused("CANopen CiA 402: CiA 301 defines no object that sets the node id; CiA 305 (LSS) sets "
                      "it on drives that implement LSS, and vendors use objects of their own in "
                      "0x2000-0x5FFF; neither is common to every drive, so this tool does not send it: set "
                      "it with the drive's tool or its documented LSS service; nothing was sent")
