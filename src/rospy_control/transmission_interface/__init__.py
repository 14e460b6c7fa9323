"""rospy_control.transmission_interface: URDF transmissions between actuators and joints.

* :class:`TransmissionParser` (``parse(urdf_xml) -> ParseResult``, a list of
  :class:`TransmissionInfo` with ``.skipped`` / ``.summary()`` / ``.require_joint()``),
  :class:`JointInfo`, :class:`ActuatorInfo`;
* transmissions: :class:`SimpleTransmission`, :class:`DifferentialTransmission`,
  :class:`FourBarLinkageTransmission` (base :class:`Transmission`);
* :func:`load_transmission` and the open :data:`TRANSMISSION_LOADERS` registry;
* transmission handles / interfaces with ``propagate()`` and :class:`RobotTransmissions`;
* :class:`TransmissionInterfaceLoader` (+ :data:`REQUISITE_PROVIDERS`);
* :class:`TransmissionInterfaceError` (re-exported from :mod:`rospy_control.exceptions`).
"""
from __future__ import annotations

from rospy_control.exceptions import TransmissionInterfaceError
from rospy_control.transmission_interface.differential_transmission import DifferentialTransmission
from rospy_control.transmission_interface.four_bar_linkage_transmission import FourBarLinkageTransmission
from rospy_control.transmission_interface.parser import (
    ParseResult,
    TransmissionParseError,
    TransmissionParser,
)
from rospy_control.transmission_interface.simple_transmission import SimpleTransmission
from rospy_control.transmission_interface.transmission import Transmission
from rospy_control.transmission_interface.transmission_info import (
    ActuatorInfo,
    JointInfo,
    SkippedTransmission,
    TransmissionInfo,
)
from rospy_control.transmission_interface.transmission_interface import (
    ActuatorToJointEffortHandle,
    ActuatorToJointEffortInterface,
    ActuatorToJointPositionHandle,
    ActuatorToJointPositionInterface,
    ActuatorToJointStateHandle,
    ActuatorToJointStateInterface,
    ActuatorToJointVelocityHandle,
    ActuatorToJointVelocityInterface,
    JointToActuatorEffortHandle,
    JointToActuatorEffortInterface,
    JointToActuatorPositionHandle,
    JointToActuatorPositionInterface,
    JointToActuatorStateHandle,
    JointToActuatorStateInterface,
    JointToActuatorVelocityHandle,
    JointToActuatorVelocityInterface,
    RobotTransmissions,
    TransmissionHandle,
)
from rospy_control.transmission_interface.transmission_interface_loader import (
    REQUISITE_PROVIDERS,
    RequisiteProvider,
    TransmissionData,
    TransmissionInterfaceLoader,
    TransmissionLoaderData,
)
from rospy_control.transmission_interface.transmission_loader import (
    TRANSMISSION_LOADERS,
    DifferentialTransmissionLoader,
    FourBarLinkageTransmissionLoader,
    SimpleTransmissionLoader,
    TransmissionLoader,
    load_transmission,
)

__all__ = [
    "ActuatorInfo", "ActuatorToJointEffortHandle", "ActuatorToJointEffortInterface",
    "ActuatorToJointPositionHandle", "ActuatorToJointPositionInterface", "ActuatorToJointStateHandle",
    "ActuatorToJointStateInterface", "ActuatorToJointVelocityHandle", "ActuatorToJointVelocityInterface",
    "DifferentialTransmission", "DifferentialTransmissionLoader", "FourBarLinkageTransmission",
    "FourBarLinkageTransmissionLoader", "JointInfo", "JointToActuatorEffortHandle",
    "JointToActuatorEffortInterface", "JointToActuatorPositionHandle", "JointToActuatorPositionInterface",
    "JointToActuatorStateHandle", "JointToActuatorStateInterface", "JointToActuatorVelocityHandle",
    "JointToActuatorVelocityInterface", "ParseResult", "REQUISITE_PROVIDERS", "RequisiteProvider",
    "RobotTransmissions", "SimpleTransmission", "SimpleTransmissionLoader", "SkippedTransmission",
    "TRANSMISSION_LOADERS", "Transmission", "TransmissionData", "TransmissionHandle", "TransmissionInfo",
    "TransmissionInterfaceError", "TransmissionInterfaceLoader", "TransmissionLoader",
    "TransmissionLoaderData", "TransmissionParseError", "TransmissionParser", "load_transmission",
]
