"""Simulated firmware: answers on a python-can bus exactly like the real devices.

The simulator is a peer on the driver's buses and nothing else.  A composition root (driver node,
sim node, ``hw_check --sim``, benchmarks, tests) builds a :class:`SimulatedRobot` from the hardware
description and hands ``SimulatedRobot.buses()`` -- one :class:`~rospy_control.bus.spec.BusSpec` per
simulated channel, with the firmware's liveness policy -- to the driver's
:class:`~rospy_control.middleware.Middleware`, which opens them like any other bus::

    mw = Middleware.from_xml("config/arm_hardware.xml")    # the driver's checks first
    sim = SimulatedRobot(mw.config, simulate=True, urdf=urdf_text)
    mw.set_buses(sim.buses())                             # or sim.buses(process_key) (:mod:`.process`)
    mw.start(); sim.set_fault("elbow_motor", "silent"); sim.command_stats(); mw.shutdown()

The simulated devices are built from the configuration records (``mw.config``, or
:func:`~rospy_control.middleware.configuration.read_configuration` of the description: what each
device module's reader made of its ``<unit>``), never from the driver's devices (:mod:`.robot`); of
the device modules the simulator uses the codecs only.  The fault switches and the command record
below are its API.

Each simulated channel owns its own bus and one thread: a :class:`can.interfaces.virtual.VirtualBus` on the
channel's (private) virtual channel when it runs in the driver's process, or the channel's
``udp_multicast`` group when it runs in a process of its own (:mod:`.bus`,
:mod:`rospy_control.simulator.process`).  For every frame it receives it behaves like the
firmware:

* **MIT motors** (:class:`SimulatedMotor`): answer every 8-byte frame to their id (enter / exit /
  zero / command) with a reply of the configured DLC on the master id; commands are applied only in
  motor mode.  The joint model is integrated lazily, at the simulator's ``rate``, up to the arrival
  time of each frame (so an idle simulator costs nothing)::

      tau_motor = clamp(kp (p_des - p) + kd (v_des - v) + t_ff, +-torque_limit)     (0 when disabled)
      J dv/dt   = tau_motor + load_torque + gravity_load(q) - damping v - friction sign(v)
      p clamped to [stop_min, stop_max] (inelastic hard stops)

  ``gravity_load`` is the static gravity torque of the links the motor carries at the current pose of
  the whole robot (every simulated channel), from the URDF's ``<inertial>`` elements through its
  transmissions (:mod:`rospy_control.simulator.gravity`; 0 when the simulator was given no URDF); the
  hardware XML's root ``<simulation>`` sets the gravity vector and adds payloads the URDF does not
  know.  ``load_torque`` is a constant extra (joints outside the URDF model).  The protocol devices
  (:mod:`.peers`: DaMiao, CubeMars V3, ODrive, RobStride, CiA 402) drive the same joint model
  (:class:`~.joint.JointModel`) and feel the same ``gravity_load``
  (:meth:`SimulatedFirmware.gravity_joints` hands every actuator's joint to the gravity).
  Damping terms are integrated implicitly (stable for any gain), Coulomb friction as a velocity
  impulse that can stop the joint (stiction).  Reported values get Gaussian noise and the reply is
  delayed by ``latency``.
* **Sensors** speak :mod:`rospy_control.devices.sensors.codec`: the IMU reports gravity on +z
  at rest; a foot contact sensor computes foot depth from its leg's HFE/KFE motors (two-link leg) and
  is in contact when the foot reaches the ground (all feet touch in the standing pose).

**Fault switches** (:meth:`SimulatedFirmware.set_fault`), per unit: ``silent``, ``late`` (extra
delay), ``wrong_dlc`` (4-byte replies), ``garbage`` (adds junk frames), ``error_flag`` (error byte,
DLC 8), ``over_temperature``; per bus: ``bus_errors`` (an error frame after every reply).

**Firmware CAN timeout** (motor ``<simulation firmware_timeout="...">``, default the motor's own
``firmware_timeout`` attribute, 0 = off): when no frame arrived for that long while in motor mode,
the motor leaves motor mode (limp) at that moment, as firmwares with a CAN timeout do; it keeps
answering, ignores commands and needs enter-motor-mode again (``firmware_timeouts`` counts it).

**Command record** (:meth:`SimulatedFirmware.command_stats`): per motor, every *command* frame
received in motor mode (not enter / exit / zero) is counted, with the last ``p_des`` and the largest
``|p_des|`` step between two consecutive command frames that both have ``kp > 0`` (position-like),
in joint units (direction and zero offset applied), when it happened and between which values.  A
frame with ``kp = 0`` and entering or leaving motor mode break the chain.

Modules: :mod:`.robot` (:class:`SimulatedRobot`: the composition's side), :mod:`.liveness` (the
liveness policy the channels are given), :mod:`.base` (settings, fault switches, what every model
shares), :mod:`.motor`,
:mod:`.sensors` (the device models), :mod:`.firmware` (:class:`SimulatedFirmware`: the models of one
channel on one bus, and its thread), :mod:`.bus` (the cross-process bus: addresses, readiness probe).
"""
from __future__ import annotations

from rospy_control.simulator.base import FAULTS, SimulationSettings
from rospy_control.simulator.firmware import SimulatedFirmware
from rospy_control.simulator.motor import SimulatedMotor
from rospy_control.simulator.robot import BUS_FAULTS, SimulatedRobot

__all__ = ["SimulatedFirmware", "SimulatedMotor", "SimulationSettings", "FAULTS", "BUS_FAULTS",
           "SimulatedRobot"]
