"""The records :class:`~rospy_control.robot_hw.MiddlewareRobotHW` keeps per joint, motor and
transmission group, the tables that map command interfaces to motor modes, and :class:`Records`, the
set of them one configuration built.

Every URDF transmission (or 1:1 hardware-XML binding) is a *group*: its joints, its motors (ordered by
role) and its :class:`~rospy_control.transmission_interface.Transmission`.  A group runs in exactly one
motor :class:`~rospy_control.middleware.ControlMode` at a time (a differential couples its two motors,
so they always switch together).
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Tuple

from rospy_control.hardware_interface import (
    ActuatorData,
    ContactSensorData,
    EffortJointInterface,
    ForceTorqueSensorData,
    ImuSensorData,
    PositionJointInterface,
    PosVelAccJointInterface,
    PosVelJointInterface,
    VelocityJointInterface,
)
from rospy_control.middleware import ActuatorUnit, ControlMode
from rospy_control.devices import CanSensor

if TYPE_CHECKING:
    from rospy_control.transmission_interface import TransmissionInterfaceLoader

__all__ = ["HOLD_MODES", "WATCHDOG_MODES", "KIND_INTERFACES", "KIND_MODE", "KIND_BY_NAME", "Joint",
           "Actuator", "Group", "Records"]

#: ``hold_mode`` parameter value -> motor mode of groups no running controller commands.
HOLD_MODES = {"position": ControlMode.POSITION, "damping": ControlMode.DAMPING, "none": ControlMode.NONE}

#: ``hold_mode`` -> the middleware's command-watchdog mode (what the bus thread does by itself when the
#: control loop stops writing commands).
WATCHDOG_MODES = {"position": "position", "damping": "damping", "none": "damping"}

#: Joint command interfaces this RobotHW offers, by kind.
KIND_INTERFACES = {
    "position": PositionJointInterface,
    "velocity": VelocityJointInterface,
    "effort": EffortJointInterface,
    "posvel": PosVelJointInterface,
}
#: command interface kind -> the motor mode it is sent in
KIND_MODE = {"position": ControlMode.POSITION, "posvel": ControlMode.POSITION,
             "velocity": ControlMode.VELOCITY, "effort": ControlMode.EFFORT}
#: interface ``TYPE_NAME`` or ``LOOKUP_NAME`` -> kind (``posvelacc``: known, never offered)
KIND_BY_NAME: Dict[str, str] = {}
for _kind, _cls in KIND_INTERFACES.items():
    KIND_BY_NAME[_cls.TYPE_NAME] = _kind
    KIND_BY_NAME[_cls.LOOKUP_NAME] = _kind
KIND_BY_NAME[PosVelAccJointInterface.TYPE_NAME] = "posvelacc"
KIND_BY_NAME[PosVelAccJointInterface.LOOKUP_NAME] = "posvelacc"
del _kind, _cls

_isfinite = math.isfinite


class Joint:
    __slots__ = ("name", "data", "state", "group", "kinds", "kind", "owner", "hold", "setpoint", "handles",
                 "limits", "soft")

    def __init__(self, name, data, state, group, kinds, limits, soft) -> None:
        self.name = name
        self.data = data
        self.state = state
        self.group = group
        self.kinds: List[str] = kinds
        self.kind: Optional[str] = None      # active command interface kind, None = held
        self.owner: Optional[str] = None     # controller commanding the joint
        self.hold = math.nan                 # position held while unclaimed (NaN: take the measured one)
        self.setpoint = math.nan             # last position command sent (joint space)
        self.handles: Dict[str, list] = {}
        self.limits = limits
        self.soft = soft

    def reseed(self, old_mode: ControlMode) -> None:
        """First command after a switch (or a recovery): hold.  Position commands = measured position,
        velocity and effort = 0; limit handles forget their previous command (ros_control#193).  A joint
        left unclaimed holds the position it was commanded to (if it was in position mode) or measured."""
        d = self.data
        p = d.position
        d.command_position = p
        d.command_velocity = 0.0
        d.command_effort = 0.0
        d.command_acceleration = 0.0
        for handles in self.handles.values():
            for h in handles:
                reset = getattr(h, "reset", None)
                if reset is not None:
                    reset()
        if self.kind is None:
            sp = self.setpoint
            self.hold = sp if old_mode == ControlMode.POSITION and _isfinite(sp) else p
        if old_mode != ControlMode.POSITION:
            self.setpoint = math.nan  # from another mode: not a position the motor was tracking


class Actuator:
    __slots__ = ("name", "motor", "data", "group", "fault", "fault_reason", "received", "hold", "state")

    def __init__(self, name: str, motor: ActuatorUnit, data: ActuatorData) -> None:
        self.name = name
        self.motor = motor
        self.data = data
        self.group: Optional[Group] = None
        self.fault = False
        self.fault_reason = ""
        self.received = False
        self.hold = math.nan
        self.state = None

    def send_neutral(self, mode: ControlMode) -> None:
        """The safe command of ``mode``: hold position, zero velocity/effort, damping, limp."""
        m = self.motor
        if mode == ControlMode.POSITION:
            m.request_mode(ControlMode.POSITION)
        elif mode == ControlMode.DAMPING:
            m.set_damping()
        else:
            m.set_command(mode, 0.0)


class Group:
    __slots__ = ("name", "where", "transmission", "joints", "actuators", "mode", "faulted", "ready", "reseed",
                 "buf", "ff", "simple")

    def __init__(self, name: str, where: str, transmission, joints: List[Joint],
                 actuators: List[Actuator], mode: ControlMode) -> None:
        self.name = name
        self.where = where
        self.transmission = transmission
        self.joints = joints
        self.actuators = actuators
        self.mode = mode
        self.faulted = False
        self.ready = False
        self.reseed = False
        self.buf = [0.0] * len(joints), [0.0] * len(joints)
        #: gravity feed-forward of each motor (actuator side, N m), None: none (see ._gravity)
        self.ff: Optional[List[float]] = None
        #: the write path's bound values for the common case (see ._writer.simple_plan), None: general
        self.simple: Optional[tuple] = None


class Records:
    """What one configuration built: the records, the sensor data and the transmission loader.

    Built whole by :func:`~rospy_control.robot_hw._build.build` and only then handed to the RobotHW, so
    a failed configuration leaves nothing behind.  The containers are not changed afterwards.
    """

    def __init__(self, hold_mode_name: str = "position") -> None:
        self.hold_mode_name = hold_mode_name
        self.hold_mode = HOLD_MODES[hold_mode_name]
        self.actuators: List[Actuator] = []
        self.acts_by_name: Dict[str, Actuator] = {}
        self.joints: Dict[str, Joint] = {}
        self.groups: List[Group] = []
        self.imus: List[Tuple[str, ImuSensorData]] = []
        self.fts: List[Tuple[str, ForceTorqueSensorData]] = []
        self.contacts: List[Tuple[str, ContactSensorData]] = []
        self.sensor_units: Dict[str, CanSensor] = {}
        self.loader: Optional[TransmissionInterfaceLoader] = None  # set once built
        self.gravity: Optional[Any] = None  # the GravityFeedForward (._gravity), None: off
