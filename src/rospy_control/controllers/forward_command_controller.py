"""Forward command controllers (``forward_command_controller`` of ros_controllers).

The callback stores the latest command, ``update()`` writes it to the joint(s) every cycle
("callbacks write, the loop reads"; parameters and topics in :mod:`._command`, shared with the PID
controllers).  Concrete types live in :mod:`.position_controllers`, :mod:`.velocity_controllers`
and :mod:`.effort_controllers`.

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

from rospy_control.controllers._command import JointCommandController, JointGroupCommandController

__all__ = ["ForwardCommandController", "ForwardJointGroupCommandController"]


class ForwardCommandController(JointCommandController):
    """Forwards a ``std_msgs/Float64`` command to one joint (``INTERFACE`` set by subclasses)."""

    #: Start by commanding the current position (position controllers); else 0.
    START_FROM_POSITION = False

    def starting(self, time: float) -> None:
        self.command = self.joint.get_position() if self.START_FROM_POSITION else 0.0

    def update(self, time: float, period: float) -> None:
        self.joint.set_command(self.command)


class ForwardJointGroupCommandController(JointGroupCommandController):
    """Forwards a ``std_msgs/Float64MultiArray`` command to a group of joints."""

    START_FROM_POSITION = False

    def starting(self, time: float) -> None:
        if self.START_FROM_POSITION:
            self.commands = tuple(j.get_position() for j in self.joints)
        else:
            self.commands = (0.0,) * len(self.joints)

    def update(self, time: float, period: float) -> None:
        for joint, command in zip(self.joints, self.commands):
            joint.set_command(command)
