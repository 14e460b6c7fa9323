"""The standard hardware interfaces (ros_control names) and our :class:`ContactSensorInterface`."""
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

    TYPE_NAME = "hardware_interface::JointStateInterface"
    LOOKUP_NAME = "hardware_interface/JointStateInterface"
    CLAIMS = False
    HANDLE_TYPE = JointStateHandle


class JointCommandInterface(ResourceManager):
    """Command joints with one value each (claiming).  Use the Position/Velocity/Effort subclasses."""

    TYPE_NAME = "hardware_interface::JointCommandInterface"
    LOOKUP_NAME = "hardware_interface/JointCommandInterface"
    CLAIMS = True
    HANDLE_TYPE = JointHandle


class PositionJointInterface(JointCommandInterface):
    """Command joint positions (rad or m)."""

    TYPE_NAME = "hardware_interface::PositionJointInterface"
    LOOKUP_NAME = "hardware_interface/PositionJointInterface"


class VelocityJointInterface(JointCommandInterface):
    """Command joint velocities (rad/s or m/s)."""

    TYPE_NAME = "hardware_interface::VelocityJointInterface"
    LOOKUP_NAME = "hardware_interface/VelocityJointInterface"


class EffortJointInterface(JointCommandInterface):
    """Command joint efforts (N·m or N)."""

    TYPE_NAME = "hardware_interface::EffortJointInterface"
    LOOKUP_NAME = "hardware_interface/EffortJointInterface"


class PosVelJointInterface(ResourceManager):
    """Command joint position and velocity together (claiming)."""

    TYPE_NAME = "hardware_interface::PosVelJointInterface"
    LOOKUP_NAME = "hardware_interface/PosVelJointInterface"
    CLAIMS = True
    HANDLE_TYPE = PosVelJointHandle


class PosVelAccJointInterface(ResourceManager):
    """Command joint position, velocity and acceleration together (claiming)."""

    TYPE_NAME = "hardware_interface::PosVelAccJointInterface"
    LOOKUP_NAME = "hardware_interface/PosVelAccJointInterface"
    CLAIMS = True
    HANDLE_TYPE = PosVelAccJointHandle


class ActuatorStateInterface(ResourceManager):
    """Read actuator states (non-claiming)."""

    TYPE_NAME = "hardware_interface::ActuatorStateInterface"
    LOOKUP_NAME = "hardware_interface/ActuatorStateInterface"
    CLAIMS = False
    HANDLE_TYPE = ActuatorStateHandle


class ActuatorCommandInterface(ResourceManager):
    """Command actuators (actuator interfaces never claim, as in ros_control)."""

    TYPE_NAME = "hardware_interface::ActuatorCommandInterface"
    LOOKUP_NAME = "hardware_interface/ActuatorCommandInterface"
    CLAIMS = False
    HANDLE_TYPE = ActuatorHandle


class PositionActuatorInterface(ActuatorCommandInterface):
    TYPE_NAME = "hardware_interface::PositionActuatorInterface"
    LOOKUP_NAME = "hardware_interface/PositionActuatorInterface"


class VelocityActuatorInterface(ActuatorCommandInterface):
    TYPE_NAME = "hardware_interface::VelocityActuatorInterface"
    LOOKUP_NAME = "hardware_interface/VelocityActuatorInterface"


class EffortActuatorInterface(ActuatorCommandInterface):
    TYPE_NAME = "hardware_interface::EffortActuatorInterface"
    LOOKUP_NAME = "hardware_interface/EffortActuatorInterface"


class ImuSensorInterface(ResourceManager):
    """Read IMUs (non-claiming)."""

    TYPE_NAME = "hardware_interface::ImuSensorInterface"
    LOOKUP_NAME = "hardware_interface/ImuSensorInterface"
    CLAIMS = False
    HANDLE_TYPE = ImuSensorHandle


class ForceTorqueSensorInterface(ResourceManager):
    """Read force/torque sensors (non-claiming)."""

    TYPE_NAME = "hardware_interface::ForceTorqueSensorInterface"
    LOOKUP_NAME = "hardware_interface/ForceTorqueSensorInterface"
    CLAIMS = False
    HANDLE_TYPE = ForceTorqueSensorHandle


class JointModeInterface(ResourceManager):
    """Read and set joint command modes (non-claiming, as ros_control's ``DontClaimResources``)."""

    TYPE_NAME = "hardware_interface::JointModeInterface"
    LOOKUP_NAME = "hardware_interface/JointModeInterface"
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
