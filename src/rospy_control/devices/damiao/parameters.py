"""DaMiao registers as parameters (:class:`DamiaoParameters`): read ``0x33``, write ``0x55`` (RAM),
store ``0xAA`` (flash), all on id 0x7FF; the id is register 8 ESC_ID.  Frames and register ids:
:mod:`.codec` (the DM-J manual as DaMiao's ``DM_Control_Python`` implements it)."""
from __future__ import annotations

import math
from typing import Any, List, Optional

from rospy_control.devices.damiao import codec as dm
from rospy_control.devices.frame import Frame
from rospy_control.devices.parameters import Exchange, Parameter, ParameterAccess, ParameterError, Value

__all__ = ["DamiaoParameters", "REGISTERS"]

_U32 = float(0xFFFFFFFF)
_POS = 1e-6   # PMAX/VMAX/TMAX: the motor refuses 0 and negative values

#: (rid, unit, writable, lo, hi, description); names from :data:`.codec.REGISTER_NAMES`.  Registers
#: 11-20 and 36 are the motor's own data (model, versions, serial number, electrical constants): the
#: manual lists them read-only.
_TABLE = (
    (0, "V", True, 0.0, math.inf, "under-voltage protection"),
    (1, "N m/A", True, 0.0, math.inf, "torque constant"),
    (2, "deg C", True, 0.0, math.inf, "over-temperature protection"),
    (3, "", True, 0.0, math.inf, "over-current protection"),
    (4, "rad/s^2", True, 0.0, math.inf, "acceleration"),
    (5, "rad/s^2", True, -math.inf, math.inf, "deceleration"),
    (6, "rad/s", True, 0.0, math.inf, "maximum speed"),
    (7, "", True, 0, 0x7FF, "master id: the id the motor answers on"),
    (8, "", True, 1, 0x7FE, "slave id: the id the motor is commanded on"),
    (9, "x 50 us", True, 0, _U32, "CAN timeout (0 = off)"),
    (10, "", True, 1, 4, "control mode: 1 MIT, 2 position-velocity, 3 velocity, 4 force-position"),
    (11, "", False, -math.inf, math.inf, "damping"),
    (12, "", False, -math.inf, math.inf, "inertia"),
    (13, "", False, 0, _U32, "hardware version"),
    (14, "", False, 0, _U32, "software version"),
    (15, "", False, 0, _U32, "serial number"),
    (16, "", False, 0, _U32, "pole pairs"),
    (17, "ohm", False, -math.inf, math.inf, "phase resistance"),
    (18, "H", False, -math.inf, math.inf, "phase inductance"),
    (19, "Wb", False, -math.inf, math.inf, "flux linkage"),
    (20, "", False, -math.inf, math.inf, "gear ratio"),
    (21, "rad", True, _POS, math.inf, "position range of the MIT mapping"),
    (22, "rad/s", True, _POS, math.inf, "velocity range of the MIT mapping"),
    (23, "N m", True, _POS, math.inf, "torque range of the MIT mapping"),
    (24, "", True, 0.0, math.inf, "current loop bandwidth"),
    (25, "", True, 0.0, math.inf, "speed loop KP"),
    (26, "", True, 0.0, math.inf, "speed loop KI"),
    (27, "", True, 0.0, math.inf, "position loop KP"),
    (28, "", True, 0.0, math.inf, "position loop KI"),
    (29, "V", True, 0.0, math.inf, "over-voltage protection"),
    (30, "", True, 0.0, math.inf, "gear torque efficiency"),
    (31, "", True, 0.0, math.inf, "speed loop damping"),
    (32, "", True, 0.0, math.inf, "speed loop filter bandwidth"),
    (33, "", True, 0.0, math.inf, "current loop gain"),
    (34, "", True, 0.0, math.inf, "speed loop gain"),
    (35, "", True, 0, 9, "CAN bitrate code (the code table is not in the documents at hand)"),
    (36, "", False, 0, _U32, "sub version"),
)
#: every register as a :class:`Parameter` (key: the register id)
REGISTERS = tuple(
    Parameter(dm.REGISTER_NAMES[rid], unit, "uint" if rid in dm.UINT32_REGISTERS else "float", writable,
              lo, hi, rid, desc, restore=rid not in (dm.RID_MST_ID, dm.RID_ESC_ID))
    for rid, unit, writable, lo, hi, desc in _TABLE)


class DamiaoParameters(ParameterAccess):
    """The registers of one DaMiao motor (a :class:`~.device.DamiaoMotor`)."""

    PROTOCOL = "DaMiao"
    DOCUMENT = "the DaMiao DM-J manual (registers through 0x7FF)"
    ID_RANGE = (1, 0x7FE)

    def __init__(self, unit: Any) -> None:
        super().__init__(unit)
        self.parameters = {p.name: p for p in REGISTERS}

    def _reply(self, slave_id: int, rid: int, cmd: Optional[int]):
        master = self.unit.master_id

        def answer(arb_id: int, ext: bool, data: bytes) -> Optional[Value]:
            if ext or arb_id != master:
                return None
            r = dm.parse_register_reply(data, slave_id, rid, cmd)
            return None if r is None else r.value
        return answer

    def read(self, p: Parameter) -> Exchange:
        sid = self.unit.can_id
        return Exchange(Frame(dm.REGISTER_ID, dm.pack_register_read(sid, p.key)),
                        self._reply(sid, p.key, dm.REG_READ), f"read register {p.key} {p.name}")

    def write(self, p: Parameter, value: Value) -> Exchange:
        p.check_writable()
        if p.key == dm.RID_ESC_ID:
            raise ParameterError("ESC_ID is the motor's id: change it with hw_check set-id")
        if p.key == dm.RID_MST_ID:
            raise ParameterError("MST_ID is the id the motor answers on: the driver would lose its "
                                 "replies; change it with DaMiao's tool, then master_id in the XML")
        value = p.parse(value)
        sid = self.unit.can_id
        # the answer to a write echoes 0x55 with DaMiao's tools; some notes read it as 0x33: either
        return Exchange(Frame(dm.REGISTER_ID, dm.pack_register_write(sid, p.key, value)),
                        self._reply(sid, p.key, None), f"write register {p.key} {p.name}")

    def save(self, device_id: Optional[int] = None) -> Exchange:
        sid = self.unit.can_id if device_id is None else device_id
        # the documents describe no answer to the store command
        return Exchange(Frame(dm.REGISTER_ID, dm.pack_register_save(sid)), None, "store registers (0xAA)")

    def set_id(self, new_id: int) -> Exchange:
        sid = self.unit.can_id
        return Exchange(Frame(dm.REGISTER_ID, dm.pack_register_write(sid, dm.RID_ESC_ID, new_id)),
                        self._reply(sid, dm.RID_ESC_ID, None), f"write ESC_ID = 0x{new_id:X}")

    def probe(self, device_id: int) -> Exchange:
        return Exchange(Frame(dm.REGISTER_ID, dm.pack_register_read(device_id, dm.RID_ESC_ID)),
                        self._reply(device_id, dm.RID_ESC_ID, dm.REG_READ), f"read ESC_ID at 0x{device_id:X}")

    def check_new_id(self, new_id: int, others: List[int]) -> None:
        super().check_new_id(new_id, others)
        if new_id in (self.unit.master_id, dm.REGISTER_ID) or new_id + 0x300 > 0x7FF:
            raise ParameterError(f"id 0x{new_id:X} would make a command id collide with the master id "
                                 f"0x{self.unit.master_id:X} or 0x7FF")

    def id_notes(self, new_id: int) -> List[str]:
        return [f"MST_ID (register 7) is unchanged: the motor still answers on 0x{self.unit.master_id:X}, "
                "so master_id in the XML stays; motors sharing a master id must differ in the low 4 bits "
                "of their ids (byte 0 of a reply carries only those)"]
