"""ODrive CAN Simple "parameters" (:class:`OdriveParameters`): what the protocol can set, and nothing
it cannot.

CAN Simple (0.5.x ``docs/can-protocol.rst``; 0.6.x ``can_simple_messages.hpp`` / the 0.6.10 DBC) has no
generic parameter access on 0.5.  0.6 adds RxSdo/TxSdo (0x004/0x005), but they address an endpoint by
the id the firmware build assigns it in its ``flat_endpoints.json``: the ids change between firmware
versions and this package carries no such file, so it does not guess them.  What both lines do offer
are set-only messages, exposed here as write-only parameters: Set_Pos_Gain (``pos_gain``),
Set_Vel_Gains (``vel_gain`` with ``vel_integrator_gain``), Set_Limits (``vel_limit`` with
``current_limit``).  A message carrying two values needs both.  None of them can be read back, and
none is stored: ``save_configuration()`` is an endpoint (0.5: USB only; 0.6: its Reboot action's
value is not in the documents at hand).

The node id: 0.5's Set_Axis_Node_ID (0x06, no answer; RAM until saved over USB).  0.6 replaced it
by Address (the node id with the device's serial number): not offered here.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional

from rospy_control.devices.frame import Frame
from rospy_control.devices.odrive import codec as od
from rospy_control.devices.parameters import (
    Exchange, Parameter, ParameterAccess, ParameterError, Refused, Value,
)

__all__ = ["OdriveParameters"]

#: (name, unit, message id, position in the message)
_TABLE = (
    ("pos_gain", "(turn/s)/turn", od.CMD_SET_POS_GAIN, 0),
    ("vel_gain", "N m/(turn/s)", od.CMD_SET_VEL_GAINS, 0),
    ("vel_integrator_gain", "N m/turn", od.CMD_SET_VEL_GAINS, 1),
    ("vel_limit", "turn/s", od.CMD_SET_LIMITS, 0),
    ("current_limit", "A", od.CMD_SET_LIMITS, 1),
)
_MESSAGES = {od.CMD_SET_POS_GAIN: "Set_Pos_Gain", od.CMD_SET_VEL_GAINS: "Set_Vel_Gains",
             od.CMD_SET_LIMITS: "Set_Limits"}


class OdriveParameters(ParameterAccess):
    """The CAN Simple set-only messages of one :class:`~.device.OdriveAxis` (see the module docstring)."""

    ID_ATTRIBUTE = "node_id"
    ID_RANGE = (0, 0x3F)

    def __init__(self, unit: Any) -> None:
        super().__init__(unit)
        self.version = unit.firmware
        self.PROTOCOL = f"ODrive CAN Simple {self.version}"
        self.DOCUMENT = ("ODrive's can-protocol.rst (fw 0.5.6)" if self.version == od.V05
                         else "ODrive's CAN Simple 0.6 messages (can_simple_messages.hpp, 0.6.10 DBC)")
        for name, unit_, cmd, pos in _TABLE:
            self.parameters[name] = Parameter(name, unit_, "float", True, 0.0, math.inf, (cmd, pos),
                                              f"{_MESSAGES[cmd]}, write-only", readable=False)

    def read(self, p: Parameter) -> Exchange:
        why = ("0.5 has no parameter read" if self.version == od.V05 else
               "0.6 reads endpoints through RxSdo/TxSdo by ids from the firmware build's "
               "flat_endpoints.json, "
               "which this package does not carry")
        raise Refused(f"{self.PROTOCOL} cannot read {p.name}: {why} ({self.DOCUMENT}); use odrivetool or the "
                      "ODrive GUI to read it; nothing was sent")

    def write(self, p: Parameter, value: Value) -> Exchange:
        return self.writes({p.name: value})[0]

    def writes(self, values: Dict[str, Value]) -> List[Exchange]:
        """One set message per message id; both values of a two-value message are required."""
        out: List[Exchange] = []
        by_cmd: Dict[int, Dict[int, float]] = {}
        for name, value in values.items():
            p = self.parameter(name)
            cmd, pos = p.key
            by_cmd.setdefault(cmd, {})[pos] = float(p.parse(value))
        for cmd, got in by_cmd.items():
            names = [n for n, _u, c, _p in _TABLE if c == cmd]
            if len(got) != len(names):
                raise ParameterError(f"{_MESSAGES[cmd]} carries {' and '.join(names)} together: give both "
                                     "(CAN Simple cannot read the other back)")
            if cmd == od.CMD_SET_POS_GAIN:
                data = od.pack_set_pos_gain(got[0])
            elif cmd == od.CMD_SET_VEL_GAINS:
                data = od.pack_set_vel_gains(got[0], got[1])
            else:
                data = od.pack_set_limits(got[0], got[1])
            out.append(Exchange(Frame(od.arbitration_id(self.unit.node_id, cmd), data), None,
                                f"{_MESSAGES[cmd]} (0x{cmd:02X})"))
        return out

    def save(self, device_id: Optional[int] = None) -> Exchange:
        raise Refused(f"{self.PROTOCOL} has no save message: save_configuration() is an endpoint "
                      + ("reached over USB (odrivetool)" if self.version == od.V05 else
                         "(the Reboot message's save action value is not in the documents at hand)")
                      + f" ({self.DOCUMENT}); nothing was sent")

    def set_id(self, new_id: int) -> Exchange:
        if self.version != od.V05:
            raise Refused(f"{self.PROTOCOL} sets a node id with Address (0x06), which must carry the "
                          "device's serial number; this tool does not send it "
                          f"({self.DOCUMENT}): set axis0.config.can.node_id and save_configuration() "
                          "with odrivetool or the ODrive GUI; nothing was sent")
        return Exchange(Frame(od.arbitration_id(self.unit.node_id, od.CMD_SET_AXIS_NODE_ID),
                              od.pack_set_axis_node_id(new_id)), None, f"Set_Axis_Node_ID {new_id} (0x06)")

    def probe(self, device_id: int) -> Exchange:
        cmd = od.CMD_GET_BUS_VOLTAGE_CURRENT
        rid = od.arbitration_id(device_id, cmd)

        def answer(arb_id: int, ext: bool, data: bytes) -> Optional[bool]:
            return True if not ext and arb_id == rid and len(data) == 8 else None
        # a "get" as a data frame of DLC 0: the firmware answers it as it answers an RTR frame
        return Exchange(Frame(rid, b""), answer, f"Get_Bus_Voltage_Current at node {device_id}")

    def id_notes(self, new_id: int) -> List[str]:
        return ["the node id is in RAM until saved: save_configuration() over USB (odrivetool) keeps it "
                "across a reboot; CAN Simple 0.5 cannot"]
