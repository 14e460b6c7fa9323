"""What the parts of a CiA 402 drive share: the latest command as the drive takes it (direction and
zero offset applied), the 402 mode of each :class:`ControlMode`, the unit's phases and the error of a
failed start-up step."""
from __future__ import annotations

from typing import NamedTuple

from rospy_control.devices.actuator import ControlMode
from rospy_control.devices.cia402 import codec as co

__all__ = ["DriveCommand", "LIMP", "CIA_MODE", "TARGET_OF", "IDLE", "CONFIGURING", "RUNNING", "StartUpFailed"]

CIA_MODE = {ControlMode.POSITION: co.CSP, ControlMode.VELOCITY: co.CSV, ControlMode.EFFORT: co.CST,
            ControlMode.NONE: co.CST}
TARGET_OF = {co.CSP: co.TARGET_POSITION, co.CSV: co.TARGET_VELOCITY, co.CST: co.TARGET_TORQUE}

# the unit's phases (channel thread's view)
IDLE, CONFIGURING, RUNNING = "idle", "configuring", "running"


class DriveCommand(NamedTuple):
    """The latest command, drive side (direction and zero offset applied)."""

    mode: ControlMode
    position: float = 0.0
    velocity: float = 0.0
    effort: float = 0.0


LIMP = DriveCommand(ControlMode.NONE)


class StartUpFailed(Exception):
    """A start-up or reset step failed (the message is the fault reason)."""
