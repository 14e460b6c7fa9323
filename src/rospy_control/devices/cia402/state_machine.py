"""The CiA 402 drive state machine as data (CiA 402-2: controlword / statusword bits, the states, the
commands and the paths between states, the modes of operation 0x6060 / 0x6061).  The controlword /
statusword masks agree with ``canopen``'s ``BaseNode402``."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from rospy_control.devices.cia402.nmt import Cia402Error


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
