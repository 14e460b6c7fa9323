"""Forward command controllers (``forward_command_controller`` of ros_controllers).

The callback stores the latest command, ``update()`` writes it to the joint(s) every cycle
("callbacks write, the loop reads").  Concrete types live in :mod:`.position_controllers`,
:mod:`.velocity_controllers` and :mod:`.effort_controllers`.

ROS API
-------
Single joint (:class:`ForwardCommandController`):

* parameter ``joint`` (string, required; an unknown joint fails the load);
* subscribes ``command`` (``std_msgs/Float64``) in the controller namespace.

Joint group (:class:`ForwardJointGroupCommandController`):

* parameter ``joints`` (non-empty list, required);
* subscribes ``command`` (``std_msgs/Float64MultiArray``); a message whose length differs from the
  number of joints is rejected with an error and ignored.

Safe values:

* on start, position controllers command the current position (no jump), velocity and effort
  controllers command 0 -- a stale command from an earlier run is never replayed;
* on stop and on abort, velocity and effort controllers write 0 (ours: ros_controllers leaves the
  last command in place, which lets a velocity-controlled motor keep turning after its controller
  was stopped).  Position controllers leave the last position command (the motor holds).
"""
from __future__ import annotations

from typing import List, Tuple

from std_msgs.msg import Float64, Float64MultiArray

from rospy_control.controller_interface import Controller
from rospy_control.controllers._common import joint_list_param, required_param
from rospy_control.log import Throttle, get_logger

logger = get_logger(__name__)

__all__ = ["ForwardCommandController", "ForwardJointGroupCommandController"]


class ForwardCommandController(Controller):
    """Forwards a ``std_msgs/Float64`` command to one joint (``INTERFACE`` set by subclasses)."""

    #: Start by commanding the current position (position controllers); else 0.
    START_FROM_POSITION = False
    #: Write 0 when stopped or aborted (velocity/effort controllers).
    ZERO_ON_STOP = True

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.joint_name = required_param(controller_nh, "joint", str)
        self.joint = hw.get_handle(self.joint_name)
        self.command = 0.0
        self.subscriber = controller_nh.subscribe("command", Float64, self._on_command, 1)
        return True

    def _on_command(self, msg: Float64) -> None:
        self.command = float(msg.data)

    def starting(self, time: float) -> None:
        self.command = self.joint.get_position() if self.START_FROM_POSITION else 0.0

    def update(self, time: float, period: float) -> None:
        self.joint.set_command(self.command)

    def stopping(self, time: float) -> None:
        if self.ZERO_ON_STOP:
            self.joint.set_command(0.0)

    def aborting(self, time: float) -> None:
        self.stopping(time)


class ForwardJointGroupCommandController(Controller):
    """Forwards a ``std_msgs/Float64MultiArray`` command to a group of joints."""

    START_FROM_POSITION = False
    ZERO_ON_STOP = True

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.joint_names: List[str] = joint_list_param(controller_nh, "joints")
        self.joints = [hw.get_handle(name) for name in self.joint_names]
        self.commands: Tuple[float, ...] = (0.0,) * len(self.joints)
        self._throttle = Throttle(1.0)
        self.subscriber = controller_nh.subscribe("command", Float64MultiArray, self._on_command, 1)
        return True

    def _on_command(self, msg: Float64MultiArray) -> None:
        if len(msg.data) != len(self.joints):
            if self._throttle.ready():
                logger.error("Dimension of command (%d) does not match number of joints (%d)! Not executing!",
                             len(msg.data), len(self.joints))
            return
        self.commands = tuple(float(v) for v in msg.data)   # one reference swap: atomic for the loop

    def starting(self, time: float) -> None:
        if self.START_FROM_POSITION:
            self.commands = tuple(j.get_position() for j in self.joints)
        else:
            self.commands = (0.0,) * len(self.joints)

    def update(self, time: float, period: float) -> None:
        for joint, command in zip(self.joints, self.commands):
            joint.set_command(command)

    def stopping(self, time: float) -> None:
        if self.ZERO_ON_STOP:
            for joint in self.joints:
                joint.set_command(0.0)

    def aborting(self, time: float) -> None:
        self.stopping(time)
