"""The decoded command and reply of an actuator: what the command watchdog, the position-step cap and a
protocol's codec see (the device's own frame, SI units)."""
from __future__ import annotations

from typing import NamedTuple, Optional

from rospy_control.devices.actuator import ControlMode

__all__ = ["Command", "Reply"]


class Command(NamedTuple):
    """One command in the device's own frame (direction and zero offset applied), SI units.

    ``position`` rad, ``velocity`` rad/s, ``effort`` N·m, ``kp`` N·m/rad, ``kd`` N·m·s/rad.  Which fields
    a mode uses: POSITION position (+ velocity/effort feed-forward) with kp/kd = the position gains;
    VELOCITY velocity (+ effort) with kd = ``velocity_kd``; EFFORT effort; DAMPING kd = ``velocity_kd``;
    MIT all; NONE none.
    """

    mode: ControlMode
    position: float = 0.0
    velocity: float = 0.0
    effort: float = 0.0
    kp: float = 0.0
    kd: float = 0.0


class Reply(NamedTuple):
    """One decoded reply, in the device's own frame (direction and zero offset not applied)."""

    position: float
    velocity: float
    effort: float
    temperature: Optional[float] = None
    #: the device's error code, 0 = none (named through ``ERRORS``)
    error_code: int = 0
    #: the supply voltage (V) and the motor current (A) where the reply carries them
    bus_voltage: Optional[float] = None
    current: Optional[float] = None
