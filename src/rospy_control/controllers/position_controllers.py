"""``position_controllers/*``: forward position commands to a PositionJointInterface.

* ``position_controllers/JointPositionController`` -- ``joint``, ``command`` (``std_msgs/Float64``);
* ``position_controllers/JointGroupPositionController`` -- ``joints``, ``command``
  (``std_msgs/Float64MultiArray``).

Both start by commanding the current position; see :mod:`.forward_command_controller`.
"""
from __future__ import annotations

from rospy_control.controllers.forward_command_controller import (
    ForwardCommandController, ForwardJointGroupCommandController,
)
from rospy_control.hardware_interface import PositionJointInterface

__all__ = ["JointPositionController", "JointGroupPositionController"]


class JointPositionController(ForwardCommandController):
    INTERFACE = PositionJointInterface
    START_FROM_POSITION = True
    ZERO_ON_STOP = False


class JointGroupPositionController(ForwardJointGroupCommandController):
    INTERFACE = PositionJointInterface
    START_FROM_POSITION = True
    ZERO_ON_STOP = False
