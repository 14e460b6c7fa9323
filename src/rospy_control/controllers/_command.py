"""Base classes of the controllers that take their set point from a ``command`` topic.

Shared by the forward command controllers (:mod:`.forward_command_controller`) and the PID
controllers (:mod:`.pid_controllers`).  The subscriber callback stores the latest command with one
reference swap and ``update()`` reads it ("callbacks write, the loop reads"), so no lock is needed.

* :class:`JointCommandController` -- parameter ``joint`` (string, required; an unknown joint fails
  the load); subscribes ``command`` (``std_msgs/Float64``) in the controller namespace;
  :meth:`~JointCommandController.set_command` sets the same set point from code.
* :class:`JointGroupCommandController` -- parameter ``joints`` (non-empty list, required); subscribes
  ``command`` (``std_msgs/Float64MultiArray``); a message whose length differs from the number of
  joints is rejected with an error (throttled) and ignored.

A subclass reads its own parameters in ``configure(controller_nh)`` (called after the joint names
are read, before the joints are claimed) and implements ``starting`` and ``update``.  With
``ZERO_ON_STOP`` (the default) stopping and aborting write 0 to the joints.
"""
from __future__ import annotations

from typing import Any, List, Tuple

from std_msgs.msg import Float64, Float64MultiArray

from rospy_control.controller_interface import Controller
from rospy_control.controllers._common import joint_list_param, required_param
from rospy_control.log import Throttle, get_logger

logger = get_logger(__name__)

__all__ = ["JointCommandController", "JointGroupCommandController"]


class JointCommandController(Controller):
    """One joint and a ``std_msgs/Float64`` ``command`` topic (``INTERFACE`` set by subclasses)."""

    #: Write 0 when stopped or aborted (velocity/effort outputs); False leaves the last command.
    ZERO_ON_STOP = True

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.joint_name: str = required_param(controller_nh, "joint", str)
        self.configure(controller_nh)
        self.joint = hw.get_handle(self.joint_name)
        self.command: Any = None
        self.set_command(0.0)
        self.subscriber = controller_nh.subscribe("command", Float64, self._on_command, 1)
        return True

    def configure(self, controller_nh) -> None:
        """Read the subclass's own parameters (after ``joint``, before the joint is claimed)."""

    def set_command(self, value: float) -> None:
        """Set the set point (any thread: one reference swap)."""
        self.command = float(value)

    def _on_command(self, msg: Float64) -> None:
        self.set_command(msg.data)

    def stopping(self, time: float) -> None:
        if self.ZERO_ON_STOP:
            self.joint.set_command(0.0)

    def aborting(self, time: float) -> None:
        self.stopping(time)


class JointGroupCommandController(Controller):
    """A group of joints and a ``std_msgs/Float64MultiArray`` ``command`` topic."""

    ZERO_ON_STOP = True

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.joint_names: List[str] = joint_list_param(controller_nh, "joints")
        self.configure(controller_nh)
        self.joints = [hw.get_handle(name) for name in self.joint_names]
        self.commands: Tuple[float, ...] = (0.0,) * len(self.joints)
        self._throttle = Throttle(1.0)
        self.subscriber = controller_nh.subscribe("command", Float64MultiArray, self._on_command, 1)
        return True

    def configure(self, controller_nh) -> None:
        """Read the subclass's own parameters (after ``joints``, before the joints are claimed)."""

    def _on_command(self, msg: Float64MultiArray) -> None:
        if len(msg.data) != len(self.joints):
            if self._throttle.ready():
                logger.error("Dimension of command (%d) does not match number of joints (%d)! Not executing!",
                             len(msg.data), len(self.joints))
            return
        self.commands = tuple(float(v) for v in msg.data)   # one reference swap: atomic for the loop

    def stopping(self, time: float) -> None:
        if self.ZERO_ON_STOP:
            for joint in self.joints:
                joint.set_command(0.0)

    def aborting(self, time: float) -> None:
        self.stopping(time)
