"""``velocity_controllers/*`` on a VelocityJointInterface.

* ``velocity_controllers/JointVelocityController`` -- forwards ``command`` (``std_msgs/Float64``);
* ``velocity_controllers/JointGroupVelocityController`` -- forwards ``command``
  (``std_msgs/Float64MultiArray``);
* ``velocity_controllers/JointPositionController`` -- PID from a position set point to a velocity
  command (:class:`~.pid_controllers.JointPositionPidController`).

All start at 0 and write 0 when stopped or aborted.
"""
from __future__ import annotations

from rospy_control.controllers.forward_command_controller import (
    ForwardCommandController, ForwardJointGroupCommandController,
)
from rospy_control.controllers.pid_controllers import JointPositionPidController
from rospy_control.hardware_interface import VelocityJointInterface

__all__ = ["JointVelocityController", "JointGroupVelocityController", "JointPositionController"]


class JointVelocityController(ForwardCommandController):
    INTERFACE = VelocityJointInterface


class JointGroupVelocityController(ForwardJointGroupCommandController):
    INTERFACE = VelocityJointInterface


class JointPositionController(JointPositionPidController):
    INTERFACE = VelocityJointInterface
