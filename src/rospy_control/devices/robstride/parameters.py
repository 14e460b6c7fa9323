"""RobStride / CyberGear parameters and id (:class:`RobStrideParameters`): types 17 read and 18 write
(RAM) of the 0x70xx table, type 7 set CAN id, and on RobStride models type 22 save (CyberGear's type 22
changes the baud rate instead: no save is sent to a CyberGear).  Frames: :mod:`.codec`."""
from __future__ import annotations

import math
from typing import Any, Dict, Optional

from rospy_control.devices.robstride import codec as rs
from rospy_control.devices.parameters import (
    Exchange, Parameter, ParameterAccess, ParameterError, Refused, Value,
)

__all__ = ["RobStrideParameters"]

_KIND = {"f": "float", "h": "int", "B": "uint", "H": "uint", "I": "uint"}
_RANGE: Dict[str, tuple] = {"f": (-math.inf, math.inf), "h": (-32768, 32767), "B": (0, 0xFF),
                            "H": (0, 0xFFFF), "I": (0, 0xFFFFFFFF)}


class RobStrideParameters(ParameterAccess):
    """The parameters and id of one :class:`~.device.RobStrideMotor` (its ``model`` picks the table:
    0x7021-0x702B and type 22 save exist on RobStride models only)."""

    PROTOCOL = "RobStride/CyberGear"
    DOCUMENT = "the CyberGear instruction manual ch. 4 and RobStride's manuals"
    ID_RANGE = (1, 0x7F)

    def __init__(self, unit: Any) -> None:
        super().__init__(unit)
        self.cybergear = unit.model == "cybergear"
        if self.cybergear:
            self.PROTOCOL = "CyberGear"
            self.DOCUMENT = "the CyberGear instruction manual ch. 4"
        for spec in rs.PARAMETERS.values():
            if self.cybergear and spec.source != "CG":
                continue
            lo, hi = _RANGE[spec.fmt]
            if spec.limit == "run_mode":
                lo, hi = 0, max(rs.RUN_MODE_NAMES)
            self.parameters[spec.name] = Parameter(spec.name, spec.unit, _KIND[spec.fmt], spec.writable, lo,
                                                   hi, spec.index, restore=spec.name not in _STATE)

    # -- answers --------------------------------------------------------------------------------------
    def _value(self, index: int):
        host, motor = self.unit.host_id, self.unit.can_id

        def answer(arb_id: int, ext: bool, data: bytes) -> Optional[Value]:
            t, d2, dest = rs.split_id(arb_id)
            if not ext or t != rs.PARAM_READ or dest != host or d2 & 0xFF != motor or len(data) < 8:
                return None
            r = rs.decode_param_reply(arb_id, data)
            if r.index != index:
                return None
            if not r.ok or r.value is None:
                raise ParameterError(f"the motor reports parameter 0x{index:04X} as not readable")
            return r.value
        return answer

    def _feedback(self, motor: int):
        host = self.unit.host_id

        def answer(arb_id: int, ext: bool, data: bytes) -> Optional[bool]:
            t, d2, dest = rs.split_id(arb_id)
            return True if ext and t == rs.FEEDBACK and dest == host and d2 & 0xFF == motor else None
        return answer

    def _uid_from(self, motor: int):
        def answer(arb_id: int, ext: bool, data: bytes) -> Optional[bytes]:
            t, d2, dest = rs.split_id(arb_id)
            ours = ext and t == rs.GET_ID and dest == rs.GET_ID_REPLY_DEST and d2 & 0xFF == motor
            if ours and len(data) == 8:
                return rs.decode_get_id_reply(arb_id, data)[1]
            return None
        return answer

    # -- operations -----------------------------------------------------------------------------------
    def read(self, p: Parameter) -> Exchange:
        f = rs.encode_param_read(self.unit.can_id, p.key, self.unit.host_id)
        return Exchange(f, self._value(p.key), f"read parameter 0x{p.key:04X} {p.name} (type 17)")

    def write(self, p: Parameter, value: Value) -> Exchange:
        p.check_writable()
        value = p.parse(value)
        try:
            f = rs.encode_param_write(self.unit.can_id, p.key, value, self.unit.host_id, self.unit.limits,
                                      self.unit.model)
        except ValueError as err:
            raise ParameterError(str(err)) from None
        return Exchange(f, self._feedback(self.unit.can_id),
                        f"write parameter 0x{p.key:04X} {p.name} (type 18)")

    def save(self, device_id: Optional[int] = None) -> Exchange:
        if self.cybergear:
            raise Refused("CyberGear offers no command that stores parameters: its manual documents type 18 "
                          "writes to RAM only, and its type 22 changes the baud rate; nothing was sent")
        motor = self.unit.can_id if device_id is None else device_id
        return Exchange(rs.encode_save_parameters(motor, self.unit.host_id), self._feedback(motor),
                        "save parameters (type 22)")

    def set_id(self, new_id: int) -> Exchange:
        return Exchange(rs.encode_set_can_id(self.unit.can_id, new_id, self.unit.host_id),
                        self._uid_from(new_id), f"set CAN id {new_id} (type 7)")

    def probe(self, device_id: int) -> Exchange:
        return Exchange(rs.encode_get_id(device_id, self.unit.host_id), self._uid_from(device_id),
                        f"get device id at {device_id} (type 0)")

    def id_notes(self, new_id: int) -> list:
        return ["the manual says the new id takes effect at once (the motor answered from it); "
                + ("CyberGear documents no save command" if self.cybergear
                   else "--save also sends type 22, which stores the parameters")]


#: values that describe the motor's present state or a target, backed up but never restored
_STATE = frozenset(("mechPos", "iqf", "mechVel", "VBUS", "loc_ref", "spd_ref", "iq_ref", "rotation",
                    "run_mode"))
