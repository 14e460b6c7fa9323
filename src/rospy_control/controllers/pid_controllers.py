"""PID joint controllers (ros_controllers' ``effort_controllers`` / ``velocity_controllers`` PID types).

The output interface (effort or velocity) is chosen by the concrete subclass in
:mod:`.effort_controllers` / :mod:`.velocity_controllers`.

ROS API
-------
:class:`JointPositionPidController` (``effort_controllers/JointPositionController``,
``velocity_controllers/JointPositionController``):

* parameters ``joint`` (required), ``pid/{p, i, d, i_clamp, i_clamp_min, i_clamp_max, antiwindup}``
  (``p`` required) and ``robot_description`` (searched upwards from the controller namespace; the
  joint must be in it);
* subscribes ``command`` (``std_msgs/Float64``): the position set point, clamped to the URDF limits of
  revolute and prismatic joints;
* publishes ``state`` (``control_msgs/JointControllerState``) every 10th update;
* error: shortest angular distance within the limits (revolute), shortest angular distance
  (continuous), plain difference (prismatic and others); with a velocity set point
  (:meth:`JointPositionPidController.set_command`) the derivative term uses the velocity error,
  otherwise the finite difference of the position error.

:class:`JointVelocityPidController` (``effort_controllers/JointVelocityController``): ``joint``,
``pid``; ``command`` is the velocity set point; ``state`` every 10th update; no URDF needed.

:class:`JointGroupPositionPidController` (``effort_controllers/JointGroupPositionController``):
``joints`` (list), ``<joint>/pid`` per joint, ``robot_description``; ``command`` is a
``std_msgs/Float64MultiArray`` (wrong length rejected with an error); no state topic.

Parameters ``joint`` / ``joints`` and the ``command`` topics come from :mod:`._command` (shared with
the forward command controllers).  On start the set point is the current position (clamped) or zero
velocity and the PIDs are reset; on stop and abort the output is set to 0 (ours, see
:mod:`.forward_command_controller`).
"""
from __future__ import annotations

from typing import Optional

from rospy_control.angles import shortest_angular_distance, shortest_angular_distance_with_large_limits
from rospy_control.controller_interface import RealtimePublisher
from rospy_control.controllers._command import JointCommandController, JointGroupCommandController
from rospy_control.controllers._common import to_stamp
from rospy_control.controllers._urdf import UrdfJoint, clamp_to_limits, load_urdf_joint
from rospy_control.controllers.pid import Pid
from rospy_control.exceptions import ControllerError

__all__ = ["JointPositionPidController", "JointVelocityPidController", "JointGroupPositionPidController",
           "position_error"]

#: ros_controllers publish the controller state every this many updates.
STATE_DECIMATION = 10


def joint_controller_state_class():
    """``control_msgs.msg.JointControllerState`` (imported here so the rest works without it)."""
    try:
        from control_msgs.msg import JointControllerState
    except ImportError as err:
        raise ControllerError(
            "control_msgs is not importable; build the catkin workspace (make build) and source "
            ".ws/devel/setup.bash") from err
    return JointControllerState


def position_error(joint: UrdfJoint, current: float, command: float) -> float:
    """Position error as ros_controllers computes it for the joint's URDF type."""
    if joint.type == "revolute":
        return shortest_angular_distance_with_large_limits(current, command, joint.lower, joint.upper)
    if joint.type == "continuous":
        return shortest_angular_distance(current, command)
    return command - current


class _StatePublishing:
    """``state`` (``control_msgs/JointControllerState``) every :data:`STATE_DECIMATION` updates."""

    pid: Pid
    state_publisher: RealtimePublisher
    loop_count: int

    def _init_state(self, controller_nh) -> None:
        self.state_publisher = RealtimePublisher(controller_nh, "state", joint_controller_state_class(), 1)
        self.loop_count = 0

    def _publish_state(self, time: float, period: float, set_point: float, process_value: float,
                       process_value_dot: float, error: float, command: float) -> None:
        if self.loop_count % STATE_DECIMATION == 0:
            msg = joint_controller_state_class()()
            msg.header.stamp = to_stamp(time)
            msg.set_point = set_point
            msg.process_value = process_value
            msg.process_value_dot = process_value_dot
            msg.error = error
            msg.time_step = period
            msg.command = command
            gains = self.pid.get_gains()
            msg.p, msg.i, msg.d, msg.i_clamp, msg.antiwindup = gains.p, gains.i, gains.d, gains.i_max, \
                gains.antiwindup
            self.state_publisher.try_publish(msg)
        self.loop_count += 1


class JointPositionPidController(_StatePublishing, JointCommandController):
    """Position set point -> PID -> effort or velocity command (``INTERFACE`` set by subclasses)."""

    def configure(self, controller_nh) -> None:
        self.pid = Pid.from_params(controller_nh.child("pid"))
        self.urdf = load_urdf_joint(controller_nh, self.joint_name)
        self._init_state(controller_nh)

    def set_command(self, position: float, velocity: Optional[float] = None) -> None:
        """Set point (thread-safe); a velocity makes the D term act on the velocity error."""
        self.command = (float(position), None if velocity is None else float(velocity))

    def starting(self, time: float) -> None:
        self.command = (clamp_to_limits(self.urdf, self.joint.get_position()), None)
        self.pid.reset()

    def update(self, time: float, period: float) -> None:
        position, velocity = self.command
        position = clamp_to_limits(self.urdf, position)
        current = self.joint.get_position()
        error = position_error(self.urdf, current, position)
        if velocity is not None:
            output = self.pid.compute_command(error, period, velocity - self.joint.get_velocity())
        else:
            output = self.pid.compute_command(error, period)
        self.joint.set_command(output)
        self._publish_state(time, period, position, current, self.joint.get_velocity(), error, output)


class JointVelocityPidController(_StatePublishing, JointCommandController):
    """Velocity set point -> PID -> effort command."""

    def configure(self, controller_nh) -> None:
        self.pid = Pid.from_params(controller_nh.child("pid"))
        self._init_state(controller_nh)

    def starting(self, time: float) -> None:
        self.command = 0.0
        self.pid.reset()

    def update(self, time: float, period: float) -> None:
        command = self.command
        velocity = self.joint.get_velocity()
        error = command - velocity
        output = self.pid.compute_command(error, period)
        self.joint.set_command(output)
        self._publish_state(time, period, command, velocity, velocity, error, output)


class JointGroupPositionPidController(JointGroupCommandController):
    """Position set points for a group -> one PID per joint -> effort commands."""

    def configure(self, controller_nh) -> None:
        self.pids = [Pid.from_params(controller_nh.child(f"{name}/pid")) for name in self.joint_names]
        self.urdf = [load_urdf_joint(controller_nh, name) for name in self.joint_names]

    def starting(self, time: float) -> None:
        self.commands = tuple(clamp_to_limits(u, j.get_position()) for u, j in zip(self.urdf, self.joints))
        for pid in self.pids:
            pid.reset()

    def update(self, time: float, period: float) -> None:
        for joint, pid, urdf, command in zip(self.joints, self.pids, self.urdf, self.commands):
            command = clamp_to_limits(urdf, command)
            error = position_error(urdf, joint.get_position(), command)
            joint.set_command(pid.compute_command(error, period))
