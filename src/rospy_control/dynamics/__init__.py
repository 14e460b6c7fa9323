"""rospy_control.dynamics: the robot's static dynamics from the URDF (ROS-free, numpy).

* :class:`GravityModel` (:mod:`.gravity`): links' ``<inertial>`` + joints of any kinematic tree ->
  the holding torque of every joint at a pose (recursive Newton-Euler at zero velocity and
  acceleration), with a configurable gravity vector and extra payloads;
* :func:`bind_actuators` (:mod:`.actuation`): the model's joints paired with motors through the
  actuator <-> joint binding the RobotHW uses too
  (:mod:`rospy_control.transmission_interface.actuator_binding`);
* :mod:`.options`: the hardware XML's ``<simulation>`` and ``<gravity_compensation>`` (robot level);
* :mod:`.sim_load`: the simulated firmware's pose-dependent gravity load.

The driver's feed-forward lives in :mod:`rospy_control.robot_hw` (``_gravity.py``); see
docs/gravity.md.
"""
from __future__ import annotations

from rospy_control.dynamics.actuation import ActuatorBinding, bind_actuators
from rospy_control.dynamics.gravity import STANDARD_GRAVITY, GravityModel, Payload, rpy_matrix
from rospy_control.dynamics.options import (
    GravityOptions, compensation_options, configuration_root, hardware_root, read_gravity_options,
    simulation_options,
)

__all__ = ["GravityModel", "Payload", "STANDARD_GRAVITY", "rpy_matrix", "ActuatorBinding", "bind_actuators",
           "GravityOptions", "read_gravity_options", "simulation_options", "compensation_options",
           "hardware_root", "configuration_root"]
