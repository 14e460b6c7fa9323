"""rospy_control.hardware_interface: ros_control's handles, interfaces and RobotHW in Python.

Provides (names as in ros_control, methods in snake_case; see docs/architecture.md):

* data objects the RobotHW owns and handles refer to: :class:`JointData`, :class:`ActuatorData`,
  :class:`ImuSensorData`, :class:`ForceTorqueSensorData`, :class:`ContactSensorData`,
  :class:`JointModeData`;
* handles: :class:`JointStateHandle`, :class:`JointHandle`, :class:`PosVelJointHandle`,
  :class:`PosVelAccJointHandle`, :class:`ActuatorStateHandle`, :class:`ActuatorHandle`,
  :class:`ImuSensorHandle`, :class:`ForceTorqueSensorHandle`, :class:`JointModeHandle`,
  :class:`ContactSensorHandle` (ours);
* interfaces (resource managers): JointState, Position/Velocity/Effort Joint (claiming), PosVel,
  PosVelAcc (claiming), ActuatorState, Position/Velocity/Effort Actuator (non-claiming), ImuSensor,
  ForceTorqueSensor, JointMode and our :class:`ContactSensorInterface`;
* for hardware that executes whole trajectories (UR-style pass-through):
  :class:`JointTrajectoryInterface` of :class:`TrajectoryJointHandle` s, the device contract
  :class:`TrajectoryDevice` and its messages :class:`TrajectoryRequest`, :class:`TrajectoryPointData`,
  :class:`ExecutionReport` / :class:`ExecutionState`, :class:`TrajectoryFeedback`;
* :class:`RobotHW`, :class:`InterfaceManager`, :class:`ControllerInfo`,
  :class:`InterfaceResources`, :class:`SwitchState`, :class:`CombinedRobotHW`;
* :data:`INTERFACES`, the registry of interface lookup names, and :func:`resolve_interface`.

Custom (robot-specific) interfaces: derive from :class:`ResourceManager` (handles)
or :class:`HardwareInterface` (anything else), give it ``TYPE_NAME``/``LOOKUP_NAME``/``CLAIMS``,
register an instance in your RobotHW with ``register_interface()`` and, so that URDF/YAML can name
it, ``INTERFACES.register(MyInterface.LOOKUP_NAME, MyInterface)`` (or ``"my_pkg.mod:MyInterface"``).
"""
from __future__ import annotations

from typing import Type

from rospy_control.exceptions import HardwareInterfaceError, PluginError
from rospy_control.hardware_interface.combined_robot_hw import (
    ROBOT_HW,
    CombinedRobotHW,
    ParamNodeHandle,
    filter_controller_list,
)
from rospy_control.hardware_interface.handles import (
    ActuatorData,
    ActuatorHandle,
    ActuatorStateHandle,
    ContactSensorData,
    ContactSensorHandle,
    ForceTorqueSensorData,
    ForceTorqueSensorHandle,
    ImuSensorData,
    ImuSensorHandle,
    JointCommandModes,
    JointData,
    JointHandle,
    JointModeData,
    JointModeHandle,
    JointStateHandle,
    NOT_READY,
    PosVelAccJointHandle,
    PosVelJointHandle,
    joint_fault_text,
)
from rospy_control.hardware_interface.interfaces import (
    ActuatorCommandInterface,
    ActuatorStateInterface,
    ContactSensorInterface,
    EffortActuatorInterface,
    EffortJointInterface,
    ForceTorqueSensorInterface,
    ImuSensorInterface,
    JointCommandInterface,
    JointModeInterface,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    PosVelAccJointInterface,
    PosVelJointInterface,
    VelocityActuatorInterface,
    VelocityJointInterface,
)
from rospy_control.hardware_interface.joint_trajectory_interface import (
    ExecutionReport,
    ExecutionState,
    JointTrajectoryInterface,
    TrajectoryDevice,
    TrajectoryFeedback,
    TrajectoryJointHandle,
    TrajectoryPointData,
    TrajectoryRequest,
)
from rospy_control.hardware_interface.resource_manager import HardwareInterface, ResourceManager
from rospy_control.hardware_interface.robot_hw import (
    ControllerInfo,
    InterfaceManager,
    InterfaceResources,
    RobotHW,
    SwitchState,
)
from rospy_control.log import get_logger
from rospy_control.plugins import Registry

logger = get_logger(__name__)

#: Lookup name (``hardware_interface/PositionJointInterface``) → interface class.  Open to third
#: parties: ``INTERFACES.register("my_pkg/MyInterface", "my_pkg.hw:MyInterface")``.
INTERFACES = Registry("hardware interface", HardwareInterface)
for _cls in (
    JointStateInterface, JointCommandInterface, PositionJointInterface, VelocityJointInterface,
    EffortJointInterface, PosVelJointInterface, PosVelAccJointInterface, ActuatorStateInterface,
    ActuatorCommandInterface, PositionActuatorInterface, VelocityActuatorInterface,
    EffortActuatorInterface, ImuSensorInterface, ForceTorqueSensorInterface, JointModeInterface,
    ContactSensorInterface, JointTrajectoryInterface,
):
    INTERFACES.register(_cls.LOOKUP_NAME, _cls)
del _cls


def resolve_interface(name: str, warn_bare: bool = True) -> Type[HardwareInterface]:
    """The interface class for a lookup name, a ``TYPE_NAME`` or a ``module:Class`` string.

    A bare name (``PositionJointInterface``, as older URDFs write it) is accepted as
    ``hardware_interface/<name>`` with a deprecation warning, like ros_control.

    :raises HardwareInterfaceError: the name matches no interface.
    """
    if name in INTERFACES or (":" in name and "::" not in name):
        try:
            return INTERFACES.resolve(name)
        except PluginError as err:
            raise HardwareInterfaceError(str(err)) from err
    if "::" in name:
        candidate = name.replace("::", "/")
        if candidate in INTERFACES:
            return INTERFACES.resolve(candidate)
    elif "/" not in name and f"hardware_interface/{name}" in INTERFACES:
        if warn_bare:
            logger.warning(
                "Deprecated syntax, please prepend 'hardware_interface/' to '%s' within the "
                "<hardwareInterface> tag.", name,
            )
        return INTERFACES.resolve(f"hardware_interface/{name}")
    raise HardwareInterfaceError(
        f"Unknown hardware interface '{name}'. Known interfaces: {', '.join(INTERFACES.names())}"
    )


__all__ = [
    "ActuatorCommandInterface", "ActuatorData", "ActuatorHandle", "ActuatorStateHandle",
    "ActuatorStateInterface", "CombinedRobotHW", "ContactSensorData", "ContactSensorHandle",
    "ContactSensorInterface", "ControllerInfo", "EffortActuatorInterface", "EffortJointInterface",
    "ExecutionReport", "ExecutionState", "JointTrajectoryInterface", "TrajectoryDevice", "TrajectoryFeedback",
    "TrajectoryJointHandle", "TrajectoryPointData", "TrajectoryRequest",
    "ForceTorqueSensorData", "ForceTorqueSensorHandle", "ForceTorqueSensorInterface", "HardwareInterface",
    "HardwareInterfaceError", "ImuSensorData", "ImuSensorHandle", "ImuSensorInterface", "INTERFACES",
    "InterfaceManager", "InterfaceResources", "JointCommandInterface", "JointCommandModes", "JointData",
    "JointHandle", "JointModeData", "JointModeHandle", "JointModeInterface", "JointStateHandle",
    "JointStateInterface", "NOT_READY",
    "ParamNodeHandle", "PositionActuatorInterface", "PositionJointInterface",
    "PosVelAccJointHandle", "PosVelAccJointInterface", "PosVelJointHandle", "PosVelJointInterface",
    "ResourceManager", "ROBOT_HW", "RobotHW", "SwitchState", "VelocityActuatorInterface",
    "VelocityJointInterface", "filter_controller_list", "joint_fault_text", "resolve_interface",
]
