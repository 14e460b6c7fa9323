"""Test controllers, as ros_control's controller_manager_tests plugins, for unit tests and rostests.

Load them by ``module:Class`` type string (``rospy_control.testing.controllers:EffortTestController``)
or register them in a :class:`~rospy_control.plugins.Registry` under names of your choice.

* :class:`EffortTestController` -- claims the joints of param ``joints`` (default joint1, joint2)
  through the EffortJointInterface and commands :attr:`~EffortTestController.COMMAND` (0) on each
  update.
* :class:`VelocityTestController` -- the same through the VelocityJointInterface.
* :class:`StateTestController` -- reads every joint state, claims nothing.
* :class:`VelEffController` -- multi-interface: velocity on joint1 and joint2, effort on joint3;
  commands 0.
* :class:`PositionEffortController` -- multi-interface position + effort on joint1: it claims one
  joint twice, which the controller manager must refuse when starting it.
"""
from __future__ import annotations

from typing import Optional, Type

from rospy_control.controller_interface import Controller, MultiInterfaceController
from rospy_control.hardware_interface import (
    EffortJointInterface,
    HardwareInterface,
    JointStateInterface,
    PositionJointInterface,
    VelocityJointInterface,
)

__all__ = ["EffortTestController", "VelocityTestController", "StateTestController", "VelEffController",
           "PositionEffortController"]


class EffortTestController(Controller):
    """Claims param ``joints`` (default joint1, joint2) and commands :attr:`COMMAND` every update."""

    INTERFACE: Optional[Type[HardwareInterface]] = EffortJointInterface
    #: Written to every claimed joint on each update.
    COMMAND = 0.0

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.handles = [hw.get_handle(j) for j in controller_nh.get_param("joints", ["joint1", "joint2"])]
        return True

    def update(self, time: float, period: float) -> None:
        for handle in self.handles:
            handle.set_command(self.COMMAND)


class VelocityTestController(EffortTestController):
    INTERFACE = VelocityJointInterface


class StateTestController(Controller):
    """Reads every joint state; claims nothing."""

    INTERFACE = JointStateInterface

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.handles = [hw.get_handle(n) for n in hw.get_names()]
        return True

    def update(self, time: float, period: float) -> None:
        pass


class VelEffController(MultiInterfaceController):
    """Velocity on joint2 and joint1, effort on joint3 (two claimed interfaces); commands 0."""

    INTERFACES = (VelocityJointInterface, EffortJointInterface)

    def init(self, robot_hw, root_nh, controller_nh) -> bool:
        velocity = robot_hw.get(VelocityJointInterface)
        effort = robot_hw.get(EffortJointInterface)
        self.handles = [velocity.get_handle("joint2"), velocity.get_handle("joint1"),
                        effort.get_handle("joint3")]
        return True

    def update(self, time: float, period: float) -> None:
        for handle in self.handles:
            handle.set_command(0.0)


class PositionEffortController(MultiInterfaceController):
    """Claims joint1 through both the position and the effort interface (a self-conflict)."""

    INTERFACES = (PositionJointInterface, EffortJointInterface)

    def init(self, robot_hw, root_nh, controller_nh) -> bool:
        robot_hw.get(PositionJointInterface).get_handle("joint1")
        robot_hw.get(EffortJointInterface).get_handle("joint1")
        return True

    def update(self, time: float, period: float) -> None:
        pass
