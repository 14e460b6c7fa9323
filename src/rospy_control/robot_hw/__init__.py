"""rospy_control.robot_hw: the RobotHW over the middleware (see docs/architecture.md).

:class:`MiddlewareRobotHW` turns the motors and sensors of a
:class:`~rospy_control.middleware.Middleware` into ros_control interfaces, through the URDF's
transmissions.  Registered in :data:`rospy_control.hardware_interface.ROBOT_HW` as
``rospy_control/MiddlewareRobotHW`` (importing this package registers it; the string
``rospy_control.robot_hw:MiddlewareRobotHW`` always works).

Construction (driver node)
--------------------------
::

    from rospy_control.robot_hw import MiddlewareRobotHW
    hw = MiddlewareRobotHW.from_config(hardware_xml_path_or_text, robot_description_text,
                                       params)       # builds + starts the middleware; ConfigError on
                                                     # any problem, nothing left running
    ...                                              # loop: hw.read(t, dt); cm.update(t, dt,
                                                     #   reset_controllers=hw.consume_reset_request());
                                                     #   hw.write(t, dt)
    hw.shutdown()                                    # stops the middleware (exit motor mode)

or, with a middleware built elsewhere (not shut down by the RobotHW)::

    mw = Middleware.from_xml(path); hw = MiddlewareRobotHW(mw, urdf_text, params); hw.start()

or through ``CombinedRobotHW`` / ``hw.init(root_nh, robot_hw_nh)`` with the parameters
``hardware_config`` (formerly ``hardware_xml``), ``simulate``, ``robot_description``,
``joint_limits``, ``hold_mode``, ``posvel_interface``, ``skip_unknown_actuators``, ``start`` (see
:meth:`MiddlewareRobotHW.init`).

``params`` (a plain dict, e.g. the robot_hw namespace)::

    joint_limits: {<joint>: {has_velocity_limits: true, max_velocity: 2.0, ...}}  # ros_control schema,
                                          # overrides the URDF <limit>/<safety_controller>
    hold_mode: position                   # position (default) | damping | none -- see "Holding"
    posvel_interface: false               # true: PosVelJointInterface on every joint offering
                                          # Position and Velocity (else only where the URDF lists it)
    skip_unknown_actuators: false         # true: ignore URDF transmissions none of whose actuators
                                          # is one of our motors (URDF shared by several RobotHWs)

Interfaces
----------
* every middleware motor: ``ActuatorStateInterface`` + Position/Velocity/EffortActuatorInterface
  (commands in ``ActuatorData.command_position`` / ``command_velocity`` / ``command_effort``);
* joints: ``JointStateInterface`` and exactly the Position/Velocity/EffortJointInterface their URDF
  transmission lists (BiDirectional names accepted), built by the TransmissionInterfaceLoader;
  ``PosVelJointInterface`` where the URDF lists it (with Position and Velocity) or with
  ``posvel_interface: true`` -- sent as one POSITION-mode MIT frame with velocity feed-forward
  (``p_des`` and ``v_des`` together), which lets a JointTrajectoryController track smoothly.
  ``PosVelAccJointInterface`` is refused (ConfigError): MIT motors take no acceleration.
* a motor no transmission names, with ``joint="..."`` in the hardware XML, drives that joint 1:1
  (reduction 1) with Position, Velocity and Effort interfaces; a motor both in a transmission and
  with a ``joint`` attribute must agree with it;
* ``ImuSensorInterface`` / ``ForceTorqueSensorInterface`` / ``ContactSensorInterface``: one handle per
  IMU / force-torque / contact unit, name = unit name, frame id = the unit's ``frame_id``.

Every configuration problem raises :class:`~rospy_control.exceptions.ConfigError` naming the source
(URDF transmission + line, hardware-XML unit + file:line, ``joint_limits/<joint>``): unknown actuators,
motors driving no joint, a needed joint whose transmission the parser skipped (with its reason),
disagreeing joint attributes, bad limits, unsupported interfaces.

Cycle
-----
``read()`` takes one middleware snapshot, copies motors into actuator data, propagates
actuator -> joint state, copies sensors (no logging except throttled, no per-cycle containers).
``write()`` per transmission: replaces non-finite commands by the hold value (never sent), enforces
the limits of the joint's active interface (saturation, or soft limits when ``<safety_controller>`` or
``joint_limits/<joint>/has_soft_limits`` give them), maps joint -> actuator with the transmission and
hands the commands to the motors (non-blocking).  Motors not answered yet get nothing.

Faults
------
A motor in FAULT gets no commands; the other motors of its transmission hold (hold mode, at the
actuator level).  ``faulted_joints()`` -> ``{joint: reason}``; an error is logged at the transition and
throttled while it lasts.  A motor in FAULT never blocks a controller switch: the controllers start,
their faulted joints get nothing until the fault is reset.  ``reset_faults()`` (the driver's
``~reset_faults`` service) resets every faulted unit and waits until each answered again or failed;
a recovered group restarts from the measured position (commands re-seeded, limit handles reset) and
``consume_reset_request()`` returns True once so the control loop passes ``reset_controllers=True``
to the controller manager (the running controllers restart holding).  While the control loop writes
nothing for ``command_timeout`` (hardware XML), the bus thread holds the motors by itself (the
middleware's command watchdog, in the mode matching ``hold_mode``).

Mode switching
--------------
A motor runs one mode at a time; a transmission's motors always share one mode (a differential
switches both).  The mode of a transmission follows the interfaces its joints are claimed through by
the running controllers: Position/PosVel -> POSITION, Velocity -> VELOCITY, Effort -> EFFORT, none ->
the hold mode.

* ``prepare_switch(start, stop)`` (no side effects) returns False, logging why, if after the switch a
  joint would be commanded through two interfaces (by one or two controllers), a controller needs an
  interface its joint's transmission does not offer, or joints of one coupled transmission would need
  different modes.  A started controller's motor in FAULT is only warned about.
* ``do_switch`` applies it: switched joints get their first command seeded to hold (position =
  measured position, velocity = effort = 0) and their stateful limit handles reset (ros_control#193);
  motors whose mode changes get a neutral frame in the new mode at once.
* ``switch_result()`` is ONGOING until every healthy motor whose mode changed confirmed it
  (``Motor.mode_confirmed``: a reply to a frame sent in that mode), else DONE; a motor in FAULT is
  not waited for (it takes the mode when its fault is reset).  ``switch_result(info)`` does
  the same for the motors of that controller's joints (``start_asap``).  If a switch is abandoned
  while ONGOING (controller-manager timeout), its started controllers are considered not running at
  the next switch.
* ``check_for_conflict`` is the base class's default rule.

Holding
-------
A joint no running controller commands *holds*: with ``hold_mode: position`` (default) its
transmission runs in POSITION mode at the position it was last commanded to when it was in position
mode, else at the position measured when it became unclaimed (at start-up: the first measured
position) -- gravity-safe, no jump.  ``damping`` runs the motors in ControlMode.DAMPING (MIT: kp = 0 and
kd = the motor's ``velocity_kd``; the joint can be pushed by hand); ``none`` leaves them limp
(zero torque).  Inside a coupled transmission whose other joint is commanded, an unclaimed joint gets
the neutral command of that mode instead (position: hold; velocity: 0 rad/s; effort: 0 N·m).

Diagnostics
-----------
``status()`` (plain dict: per joint interface, controller, mode, transmission, fault; per motor mode,
requested mode, enabled, fault + reason, temperature, error code; sensors; pending switch).  The node
turns it into ``/diagnostics`` with its one builder of motor statuses,
:mod:`rospy_control.adapter.diagnostics` (levels, the near-``max_temperature`` warning).
"""
from __future__ import annotations

from rospy_control.robot_hw.middleware_robot_hw import HOLD_MODES, MiddlewareRobotHW

__all__ = ["MiddlewareRobotHW", "HOLD_MODES"]
