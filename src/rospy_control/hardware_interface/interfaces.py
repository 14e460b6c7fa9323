"""The standard hardware interfaces (ros_control names) and our :class:`ContactSensorInterface`.

Each standard interface is named as ros_control names it: ``TYPE_NAME`` ``hardware_interface::<Class>``
(the demangled C++ name), ``LOOKUP_NAME`` ``hardware_interface/<Class>`` (URDF and YAML).
"""
from __future__ import annotations

from rospy_control.hardware_interface.handles import (
    ActuatorHandle,
    ActuatorStateHandle,
    ContactSensorHandle,
    ForceTorqueSensorHandle,
    ImuSensorHandle,
    JointHandle,
    JointModeHandle,
    JointStateHandle,
    PosVelAccJointHandle,
    PosVelJointHandle,
)
from rospy_control.hardware_interface.resource_manager import ResourceManager

__all__ = [
    "JointStateInterface",
    "JointCommandInterface",
    "PositionJointInterface",
    "VelocityJointInterface",
    "EffortJointInterface",
    "PosVelJointInterface",
    "PosVelAccJointInterface",
    "ActuatorStateInterface",
    "ActuatorCommandInterface",
    "PositionActuatorInterface",
    "VelocityActuatorInterface",
    "EffortActuatorInterface",
    "ImuSensorInterface",
    "ForceTorqueSensorInterface",
    "JointModeInterface",
    "ContactSensorInterface",
]


class JointStateInterface(ResourceManager):
    """Read joint states (non-claiming)."""

    CLAIMS = False
    HANDLE_TYPE = JointStateHandle


class JointCommandInterface(ResourceManager):
    """Command joints with one value each (claiming).  Use the Position/Velocity/Effort subclasses."""

    CLAIMS = True
    HANDLE_TYPE = JointHandle


class PositionJointInterface(JointCommandInterface):
    """Command joint positions (rad or m)."""


class VelocityJointInterface(JointCommandInterface):
    """Command joint velocities (rad/s or m/s)."""


class EffortJointInterface(JointCommandInterface):
    """Command joint efforts (N·m or N)."""


class PosVelJointInterface(ResourceManager):
    """Command joint position and velocity together (claiming)."""

    CLAIMS = True
    HANDLE_TYPE = PosVelJointHandle


class PosVelAccJointInterface(ResourceManager):
    """Command joint position, velocity and acceleration together (claiming)."""

    CLAIMS = True
    HANDLE_TYPE = PosVelAccJointHandle


class ActuatorStateInterface(ResourceManager):
    """Read actuator states (non-claiming)."""

    CLAIMS = False
    HANDLE_TYPE = ActuatorStateHandle


class ActuatorCommandInterface(ResourceManager):
    """Command actuators (actuator interfaces never claim, as in ros_control)."""

    CLAIMS = False
    HANDLE_TYPE = ActuatorHandle


class PositionActuatorInterface(ActuatorCommandInterface):
    """ros_control's ``hardware_interface::PositionActuatorInterface``."""


class VelocityActuatorInterface(ActuatorCommandInterface):
    """ros_control's ``hardware_interface::VelocityActuatorInterface``."""


class EffortActuatorInterface(ActuatorCommandInterface):
    """ros_control's ``hardware_interface::EffortActuatorInterface``."""


class ImuSensorInterface(ResourceManager):
    """Read IMUs (non-claiming)."""

    CLAIMS = False
    HANDLE_TYPE = ImuSensorHandle


class ForceTorqueSensorInterface(ResourceManager):
    """Read force/torque sensors (non-claiming)."""

    CLAIMS = False
    HANDLE_TYPE = ForceTorqueSensorHandle


class JointModeInterface(ResourceManager):
    """Read and set joint command modes (non-claiming, as ros_control's ``DontClaimResources``)."""

    CLAIMS = False
    HANDLE_TYPE = JointModeHandle


class ContactSensorInterface(ResourceManager):
    """Read foot contact sensors: in contact or not, normal force (N), frame (ours, non-claiming).

    A robot-specific interface, made as :mod:`rospy_control.hardware_interface` describes for custom
    interfaces: registered in a RobotHW like any other interface and in
    :data:`rospy_control.hardware_interface.INTERFACES` under ``rospy_control/ContactSensorInterface``.
    """

    TYPE_NAME = "rospy_control::ContactSensorInterface"
    LOOKUP_NAME = "rospy_control/ContactSensorInterface"
    CLAIMS = False
    HANDLE_TYPE = ContactSensorHandle


# the standard interfaces: named as ros_control names them
for _cls in (JointStateInterface, JointCommandInterface, PositionJointInterface, VelocityJointInterface,
             EffortJointInterface, PosVelJointInterface, PosVelAccJointInterface, ActuatorStateInterface,
             ActuatorCommandInterface, PositionActuatorInterface, VelocityActuatorInterface,
             EffortActuatorInterface, ImuSensorInterface, ForceTorqueSensorInterface, JointModeInterface):
    _cls.TYPE_NAME = "hardware_interface::" + _cls.__name__
    _cls.LOOKUP_NAME = "hardware_interface/" + _cls.__name__
del _cls
