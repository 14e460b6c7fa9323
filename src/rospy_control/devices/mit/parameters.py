"""MIT mode and CubeMars V3 motors have no parameter or id commands on CAN (see :func:`mit_parameters`)."""
from __future__ import annotations

from typing import Any

from rospy_control.devices.parameters import NoParameterAccess

__all__ = ["mit_parameters"]


def mit_parameters(unit: Any) -> NoParameterAccess:
    """The refusal for a :class:`~rospy_control.devices.mit.device.Motor`.

    MIT mode (the Mini-Cheetah motor controller's CAN protocol) has three special frames (enter and
    exit motor mode, set zero) and the command frame: no parameter, save or id command.  CubeMars'
    AK manual (servo and MIT modes, V3 firmware) documents none on CAN either: ids and parameters are
    set over CubeMars' upper-computer tool (R-Link / serial).
    """
    if getattr(unit, "v3", False):
        return NoParameterAccess(unit, "CubeMars V3", "CubeMars AK series manual, servo and MIT modes",
                                 "its CAN frames are commands and status only; the id and parameters are "
                                 "set with CubeMars' upper-computer tool")
    return NoParameterAccess(unit, "MIT mode", "the MIT Mini-Cheetah motor controller's CAN protocol",
                             "MIT mode has enter/exit motor mode, set zero and the command frame only; the "
                             "id is set with the motor maker's tool")
