"""Test controllers for the controller manager rostests (ros_control's controller_manager_tests plugins).

Loaded by type ``cm_test_controllers:<Class>`` (a ``module:Class`` type string needs no registration;
``cm_test_node`` runs from this folder, so the module is importable there).

* :class:`EffortTestController` -- claims the joints of param ``joints`` (default joint1+joint2)
  through the EffortJointInterface and commands zero effort.
* :class:`VelocityTestController` -- the same through the VelocityJointInterface.
* :class:`StateTestController` -- reads every joint state, claims nothing.
* :class:`VelEffController` -- multi-interface: velocity joint1+joint2, effort joint3.
* :class:`PositionEffortController` -- multi-interface position + effort on joint1 (self-conflict).
"""
from __future__ import annotations

from rospy_control.controller_interface import Controller, MultiInterfaceController
from rospy_control.hardware_interface import (
    EffortJointInterface,
    JointStateInterface,
    PositionJointInterface,
    VelocityJointInterface,
)


class EffortTestController(Controller):
    INTERFACE = EffortJointInterface

    def init(self, hw, root_nh, controller_nh):
        self.handles = [hw.get_handle(j) for j in controller_nh.get_param("joints", ["joint1", "joint2"])]
        return True

    def update(self, time, period):
        for handle in self.handles:
            handle.set_command(0.0)


class VelocityTestController(EffortTestController):
    INTERFACE = VelocityJointInterface


class StateTestController(Controller):
    INTERFACE = JointStateInterface

    def init(self, hw, root_nh, controller_nh):
        self.handles = [hw.get_handle(n) for n in hw.get_names()]
        return True

    def update(self, time, period):
        pass


class VelEffController(MultiInterfaceController):
    INTERFACES = (VelocityJointInterface, EffortJointInterface)

    def init(self, robot_hw, root_nh, controller_nh):
        velocity = robot_hw.get(VelocityJointInterface)
        effort = robot_hw.get(EffortJointInterface)
        self.handles = [velocity.get_handle("joint2"), velocity.get_handle("joint1"),
                        effort.get_handle("joint3")]
        return True

    def update(self, time, period):
        for handle in self.handles:
            handle.set_command(0.0)


class PositionEffortController(MultiInterfaceController):
    INTERFACES = (PositionJointInterface, EffortJointInterface)

    def init(self, robot_hw, root_nh, controller_nh):
        robot_hw.get(PositionJointInterface).get_handle("joint1")
        robot_hw.get(EffortJointInterface).get_handle("joint1")
        return True

    def update(self, time, period):
        pass
