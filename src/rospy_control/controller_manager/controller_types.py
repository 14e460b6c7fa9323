"""The registry of controller types (ros_control's pluginlib loader for ``controller_interface``).

Lookup names keep ros_controllers' spelling (``<package>/<Class>``) so controller YAML written for
ros_control works unchanged; every entry is a lazy ``"module:Class"`` string, so listing the types
(``list_controller_types``) imports nothing.  A ``type`` containing ``:`` is always accepted as a
Python class path (``my_pkg.controllers:MyController``) -- user controllers need no registration.

Third parties may add names: ``CONTROLLER_TYPES.register("my_pkg/MyController", "my_pkg.ctrl:MyController")``.
"""
from __future__ import annotations

from rospy_control.controller_interface.controller_base import ControllerBase
from rospy_control.plugins import Registry

__all__ = ["CONTROLLER_TYPES", "BASE_CLASS_NAME", "JOINT_TRAJECTORY_CONTROLLER_VARIANTS",
           "GRIPPER_ACTION_CONTROLLER_VARIANTS"]

#: What ``list_controller_types`` reports as ``base_classes[i]`` (pluginlib's base class name).
BASE_CLASS_NAME = "controller_interface::ControllerBase"

_C = "rospy_control.controllers."

#: ``<package>/JointTrajectoryController`` -> class name in ``controllers/joint_trajectory_controller.py``.
JOINT_TRAJECTORY_CONTROLLER_VARIANTS = {
    "position_controllers": "PositionJointTrajectoryController",
    "velocity_controllers": "VelocityJointTrajectoryController",
    "effort_controllers": "EffortJointTrajectoryController",
    "pos_vel_controllers": "PosVelJointTrajectoryController",
    "pos_vel_acc_controllers": "PosVelAccJointTrajectoryController",
}

#: ``<package>/GripperActionController`` -> class name in ``controllers/gripper_action_controller.py``.
GRIPPER_ACTION_CONTROLLER_VARIANTS = {
    "position_controllers": "PositionGripperActionController",
    "effort_controllers": "EffortGripperActionController",
}

_BUILTIN = {
    "joint_state_controller/JointStateController": _C + "joint_state_controller:JointStateController",
    # forward command controllers
    "position_controllers/JointPositionController": _C + "position_controllers:JointPositionController",
    "position_controllers/JointGroupPositionController":
        _C + "position_controllers:JointGroupPositionController",
    "velocity_controllers/JointVelocityController": _C + "velocity_controllers:JointVelocityController",
    "velocity_controllers/JointGroupVelocityController":
        _C + "velocity_controllers:JointGroupVelocityController",
    "effort_controllers/JointEffortController": _C + "effort_controllers:JointEffortController",
    "effort_controllers/JointGroupEffortController": _C + "effort_controllers:JointGroupEffortController",
    # PID controllers
    "velocity_controllers/JointPositionController": _C + "velocity_controllers:JointPositionController",
    "effort_controllers/JointPositionController": _C + "effort_controllers:JointPositionController",
    "effort_controllers/JointVelocityController": _C + "effort_controllers:JointVelocityController",
    "effort_controllers/JointGroupPositionController":
        _C + "effort_controllers:JointGroupPositionController",
    # sensors
    "imu_sensor_controller/ImuSensorController": _C + "imu_sensor_controller:ImuSensorController",
    "force_torque_sensor_controller/ForceTorqueSensorController":
        _C + "force_torque_sensor_controller:ForceTorqueSensorController",
    "contact_sensor_controller/ContactSensorController":
        _C + "contact_sensor_controller:ContactSensorController",
    # trajectories executed by the hardware (JointTrajectoryInterface)
    "pass_through_controllers/JointTrajectoryController":
        _C + "pass_through_controllers:JointTrajectoryController",
}
for _pkg, _cls in JOINT_TRAJECTORY_CONTROLLER_VARIANTS.items():
    _BUILTIN[f"{_pkg}/JointTrajectoryController"] = _C + "joint_trajectory_controller:" + _cls
for _pkg, _cls in GRIPPER_ACTION_CONTROLLER_VARIANTS.items():
    _BUILTIN[f"{_pkg}/GripperActionController"] = _C + "gripper_action_controller:" + _cls

#: The default registry used by every ControllerManager (shared, like pluginlib's loader).
CONTROLLER_TYPES = Registry("controller type", ControllerBase)
for _name, _target in sorted(_BUILTIN.items()):
    CONTROLLER_TYPES.register(_name, _target)
del _name, _target, _pkg, _cls
