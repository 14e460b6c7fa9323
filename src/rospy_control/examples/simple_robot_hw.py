"""``SimpleRobotHW``: a complete RobotHW for a robot that is not on CAN -- a plain simulated one.

Every joint is a position servo: in position mode it moves towards its command (first order, time
constant ``time_constant``) no faster than its velocity limit; in velocity mode it moves at its
command; it never leaves its position limits.  The servos stand for what a real robot has on the
other side of a cable (a serial servo chain, an EtherCAT master, a simulator): :meth:`write` hands
them the commands, :meth:`read` takes their state back.  ``docs/writing_a_robot_hw.md`` walks
through this file; copy it to start your own.

Loaded by the driver node from its private parameters (``config/simple_robot_hw.yaml``)::

    robot_hardware: [servos]
    servos:
      type: rospy_control.examples.simple_robot_hw:SimpleRobotHW
      joints: [shoulder_pan_joint, ...]     # optional; default every movable, non-mimic URDF joint
      initial_positions: {elbow_joint: 0.5} # optional; default 0 (inside the limits)
      time_constant: 0.02                   # optional, s
      default_max_velocity: 2.0             # optional, rad/s (m/s) for joints without a limit

Interfaces: ``hardware_interface::JointStateInterface``, ``hardware_interface::PositionJointInterface``
and ``hardware_interface::VelocityJointInterface`` on every joint.  Limits: the URDF ``<limit>`` of
each joint, overridden by ``joint_limits/<joint>/...`` in the node's namespace (ros_control's
schema), enforced in :meth:`write` with the joint_limits saturation handles.

Threads: the driver calls :meth:`init`, :meth:`prepare_switch` from its own threads and
:meth:`read`, :meth:`write`, :meth:`do_switch` from the control loop only; this class keeps no
thread of its own and needs no lock (:meth:`prepare_switch` reads nothing the loop writes).
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Sequence

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import (
    ControllerInfo, JointData, JointHandle, JointStateHandle, JointStateInterface, PositionJointInterface,
    RobotHW, VelocityJointInterface,
)
from rospy_control.joint_limits import (
    JointLimits, PositionJointSaturationHandle, VelocityJointSaturationHandle,
)
from rospy_control.joint_limits import params as limits_from_params
from rospy_control.joint_limits import urdf as limits_from_urdf
from rospy_control.log import get_logger
from rospy_control.urdf import find_robot_description, parse_urdf

logger = get_logger(__name__)

__all__ = ["SimpleRobotHW"]

POSITION = PositionJointInterface.TYPE_NAME
VELOCITY = VelocityJointInterface.TYPE_NAME
_MOVABLE = ("revolute", "continuous", "prismatic")


class _Servo:
    """The hardware of one joint (what a real robot has behind its cable)."""

    __slots__ = ("position", "velocity", "target", "velocity_mode", "limits")

    def __init__(self, position: float, limits: JointLimits) -> None:
        self.position = position
        self.velocity = 0.0
        self.target = position          # position set-point, or velocity set-point in velocity mode
        self.velocity_mode = False
        self.limits = limits

    def step(self, dt: float, time_constant: float) -> None:
        lim = self.limits
        if self.velocity_mode:
            v = self.target
        else:
            v = (self.target - self.position) / max(time_constant, dt, 1e-9)
        v = max(-lim.max_velocity, min(lim.max_velocity, v))
        p = self.position + v * dt
        if lim.has_position_limits:
            p = max(lim.min_position, min(lim.max_position, p))
        self.velocity = (p - self.position) / dt if dt > 0.0 else 0.0
        self.position = p


class SimpleRobotHW(RobotHW):
    """A plain simulated robot (see the module docstring).  Constructed without arguments, configured
    by :meth:`init`, as every RobotHW the driver loads from ``robot_hardware``."""

    #: s, default ``time_constant``
    TIME_CONSTANT = 0.02
    #: rad/s (m/s), default ``default_max_velocity`` for joints whose URDF has no velocity limit
    DEFAULT_MAX_VELOCITY = 2.0

    def __init__(self) -> None:
        super().__init__()
        self.joint_names: List[str] = []
        self.time_constant = self.TIME_CONSTANT
        self._data: Dict[str, JointData] = {}
        self._servos: Dict[str, _Servo] = {}
        # joint -> TYPE_NAME of the interface its running controller claimed; absent: hold position
        self._mode: Dict[str, str] = {}
        self._position_limits: Dict[str, PositionJointSaturationHandle] = {}
        self._velocity_limits: Dict[str, VelocityJointSaturationHandle] = {}
        self._js = JointStateInterface()
        self._pos = PositionJointInterface()
        self._vel = VelocityJointInterface()

    # -- configuration (non-real-time) ------------------------------------------------------------
    def init(self, root_nh: Any, robot_hw_nh: Any) -> bool:
        """Read the parameters and the URDF, register every joint in the three interfaces.

        :param root_nh: the node's namespace (``robot_description``, ``joint_limits``, controllers).
        :param robot_hw_nh: this RobotHW's own namespace (``~<name>``): ``joints``,
            ``initial_positions``, ``time_constant``, ``default_max_velocity``.
        :returns: True.  Bad parameters raise :class:`ConfigError` naming the parameter (the driver
            prints it as one FATAL line and exits 1).
        """
        text, urdf_where = find_robot_description(root_nh)
        if text is None:
            raise ConfigError("no URDF: load one into 'robot_description'", urdf_where)
        elements = {j.get("name"): j for j in parse_urdf(text, urdf_where).findall("joint")}
        # movable and not a <mimic> of another joint (a mimic joint has no actuator of its own)
        movable = [n for n, j in elements.items() if j.get("type") in _MOVABLE and j.find("mimic") is None]

        joints = robot_hw_nh.get_param("joints", None)
        if joints is None:
            joints = movable
        if not isinstance(joints, list) or not joints or not all(isinstance(j, str) for j in joints):
            raise ConfigError(f"expected a non-empty list of joint names, got {joints!r}",
                              robot_hw_nh.resolve_name("joints"))
        unknown = [j for j in joints if j not in movable]
        if unknown:
            raise ConfigError(f"not a movable joint of the URDF ({urdf_where}): {', '.join(unknown)}",
                              robot_hw_nh.resolve_name("joints"))
        initial = robot_hw_nh.get_param("initial_positions", {})
        if not isinstance(initial, dict):
            raise ConfigError(f"expected a dict joint: position, got {initial!r}",
                              robot_hw_nh.resolve_name("initial_positions"))
        self.time_constant = _positive(robot_hw_nh, "time_constant", self.TIME_CONSTANT)
        default_velocity = _positive(robot_hw_nh, "default_max_velocity", self.DEFAULT_MAX_VELOCITY)
        limit_params = {"joint_limits": root_nh.get_param("joint_limits", {})}

        for name in joints:
            limits = JointLimits()
            limits_from_urdf.get_joint_limits(elements[name], limits)   # URDF <limit>
            limits_from_params.get_joint_limits(name, limit_params, limits)  # joint_limits/<name>/...
            if not limits.has_velocity_limits or not math.isfinite(limits.max_velocity):
                limits.has_velocity_limits, limits.max_velocity = True, default_velocity
            start = float(initial.get(name, 0.0))
            if limits.has_position_limits:
                start = max(limits.min_position, min(limits.max_position, start))
            # the live data the handles refer to; read() writes the state, controllers the commands
            data = JointData(position=start, command_position=start)
            state = JointStateHandle(name, data)
            position = JointHandle(state, data, "command_position")
            velocity = JointHandle(state, data, "command_velocity")
            self._js.register_handle(state)
            self._pos.register_handle(position)
            self._vel.register_handle(velocity)
            self._position_limits[name] = PositionJointSaturationHandle(position, limits)
            self._velocity_limits[name] = VelocityJointSaturationHandle(velocity, limits)
            self._data[name] = data
            self._servos[name] = _Servo(start, limits)
            self.joint_names.append(name)
        self.register_interface(self._js)
        self.register_interface(self._pos)
        self.register_interface(self._vel)
        logger.info("SimpleRobotHW '%s': %d simulated servo(s): %s", robot_hw_nh.namespace, len(joints),
                    ", ".join(joints))
        return True

    # -- the control loop (real-time: never block, never raise) -----------------------------------
    def read(self, time: float, period: float) -> None:
        """The servos' state -> the joints' data (what the controllers see this cycle)."""
        for name, servo in self._servos.items():
            servo.step(period, self.time_constant)   # on a real robot: take the latest reply
            data = self._data[name]
            data.position = servo.position
            data.velocity = servo.velocity
            data.effort = 0.0

    def write(self, time: float, period: float) -> None:
        """The controllers' commands, limited, -> the servos.  A joint no controller drives holds."""
        for name, servo in self._servos.items():
            data = self._data[name]
            mode = self._mode.get(name)
            if mode == VELOCITY:
                self._velocity_limits[name].enforce_limits(period)
                servo.velocity_mode, servo.target = True, data.command_velocity
            elif mode == POSITION:
                self._position_limits[name].enforce_limits(period)
                servo.velocity_mode, servo.target = False, data.command_position
            else:  # unclaimed: hold where it is (the command was set to the position at the switch)
                servo.velocity_mode, servo.target = False, data.command_position

    # -- controller switches ----------------------------------------------------------------------
    def prepare_switch(self, start_list: Sequence[ControllerInfo],
                       stop_list: Sequence[ControllerInfo]) -> bool:
        """Non-real-time veto: every joint claimed must be ours (the controller manager already
        refused two controllers on one joint)."""
        for info in start_list:
            for claimed in info.claimed_resources:
                unknown = set(claimed.resources) - set(self._servos)
                if unknown:
                    logger.error("SimpleRobotHW: controller '%s' claims unknown joint(s) %s", info.name,
                                 ", ".join(sorted(unknown)))
                    return False
        return True

    def do_switch(self, start_list: Sequence[ControllerInfo], stop_list: Sequence[ControllerInfo]) -> None:
        """Real-time: change the joints' modes.  Stopped joints hold their measured position; started
        ones start from the measured state (position command = position, velocity command = 0)."""
        for info in stop_list:
            for name in info.all_resources():
                if name in self._mode:
                    del self._mode[name]
                    self._hold(name)
        for info in start_list:
            for claimed in info.claimed_resources:
                if claimed.hardware_interface not in (POSITION, VELOCITY):
                    continue
                for name in claimed.resources:
                    self._mode[name] = claimed.hardware_interface
                    self._hold(name)

    def _hold(self, name: str) -> None:
        data = self._data[name]
        data.command_position = data.position
        data.command_velocity = 0.0
        self._position_limits[name].reset()
        self._velocity_limits[name].reset()

    # -- what the driver reports on /diagnostics (optional) ---------------------------------------
    def status(self) -> dict:
        """Plain data for the driver's ``robot_hw`` diagnostics status."""
        return {"hold_mode": "position",
                "joints": {n: {"interface": self._mode.get(n),
                               "mode": "velocity" if s.velocity_mode else "position"}
                           for n, s in self._servos.items()}}


def _positive(nh: Any, key: str, default: float) -> float:
    value = nh.get_param(key, default)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0.0:
        raise ConfigError(f"expected a number > 0, got {value!r}", nh.resolve_name(key))
    return float(value)
