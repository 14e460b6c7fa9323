"""``effort_controllers/*`` on an EffortJointInterface.

* ``effort_controllers/JointEffortController`` -- forwards ``command`` (``std_msgs/Float64``);
* ``effort_controllers/JointGroupEffortController`` -- forwards ``command``
  (``std_msgs/Float64MultiArray``);
* ``effort_controllers/JointPositionController`` -- PID position -> effort, ``state`` topic;
* ``effort_controllers/JointVelocityController`` -- PID velocity -> effort, ``state`` topic;
* ``effort_controllers/JointGroupPositionController`` -- one PID per joint, position -> effort.

All start at 0 effort (or at the current position set point) and write 0 when stopped or aborted.
"""
from __future__ import annotations

from rospy_control.controllers.forward_command_controller import (
    ForwardCommandController, ForwardJointGroupCommandController,
)
from rospy_control.controllers.pid_controllers import (
    JointGroupPositionPidController, JointPositionPidController, JointVelocityPidController,
)
from rospy_control.hardware_interface import EffortJointInterface

__all__ = ["JointEffortController", "JointGroupEffortController", "JointPositionController",
           "JointVelocityController", "JointGroupPositionController"]


class JointEffortController(ForwardCommandController):
    INTERFACE = EffortJointInterface


class JointGroupEffortController(ForwardJointGroupCommandController):
    INTERFACE = EffortJointInterface


class JointPositionController(JointPositionPidController):
    INTERFACE = EffortJointInterface


class JointVelocityController(JointVelocityPidController):
    INTERFACE = EffortJointInterface


class JointGroupPositionController(JointGroupPositionPidController):
    INTERFACE = EffortJointInterface
