"""Test controllers for the controller manager rostests (ros_control's controller_manager_tests plugins).

Loaded by type ``cm_test_controllers:<Class>`` (a ``module:Class`` type string needs no registration;
``cm_test_node`` runs from this folder, so the module is importable there).  The classes are the
shared ones of :mod:`rospy_control.testing.controllers` (also used by the unit tests):

* :class:`EffortTestController` -- claims the joints of param ``joints`` (default joint1+joint2)
  through the EffortJointInterface and commands zero effort.
* :class:`VelocityTestController` -- the same through the VelocityJointInterface.
* :class:`StateTestController` -- reads every joint state, claims nothing.
* :class:`VelEffController` -- multi-interface: velocity joint1+joint2, effort joint3.
* :class:`PositionEffortController` -- multi-interface position + effort on joint1 (self-conflict).
"""
from __future__ import annotations

from rospy_control.testing.controllers import (
    EffortTestController,
    PositionEffortController,
    StateTestController,
    VelEffController,
    VelocityTestController,
)

__all__ = ["EffortTestController", "VelocityTestController", "StateTestController", "VelEffController",
           "PositionEffortController"]
