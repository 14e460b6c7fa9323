"""Simulated robot and rig for the JTC / gripper tests (no test functions here).

:class:`SimRobot` has joints in every joint command interface, with separate command storage per
interface, and simple dynamics selected per test: ``position`` (first-order lag towards the position
command), ``velocity`` (integrates the velocity command), ``effort`` (unit mass with viscous damping),
``posvel`` / ``posvelacc`` (lag towards the PosVel(Acc) position command).  ``stuck`` joints do not
move; ``speed`` scales the lag (a slow robot violates tolerances); ``wall`` stops joints at a
position (a gripper closing on an object).

:class:`JtcRig` = in-memory graph + controller manager + robot + a ROS-time clock stepped by
:meth:`JtcRig.cycle`.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Sequence

import genpy  # noqa: E402
from control_msgs.msg import (  # noqa: E402
    FollowJointTrajectoryGoal, GripperCommandGoal, JointTolerance, JointTrajectoryControllerState,
)
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from rospy_control.hardware_interface import (  # noqa: E402
    JointData, PosVelAccJointHandle, PosVelAccJointInterface, PosVelJointHandle, PosVelJointInterface,
)
from rospy_control.testing import InMemoryActionClient  # noqa: E402
from rospy_control.testing.cm_rig import ControllerManagerRig  # noqa: E402
from rospy_control.testing.robot_hw import JointsRobotHW  # noqa: E402

CONT_URDF_JOINT = '<joint name="{n}" type="continuous"><parent link="l{i}"/><child link="l{j}"/></joint>'
REV_URDF_JOINT = ('<joint name="{n}" type="revolute"><parent link="l{i}"/><child link="l{j}"/>'
                  '<limit lower="-10" upper="10" effort="10" velocity="10"/></joint>')


def make_urdf(joints: Dict[str, str]) -> str:
    """A URDF chain with the given ``{name: "continuous" | "revolute"}`` joints (+ a transmission)."""
    links = "".join(f'<link name="l{i}"/>' for i in range(len(joints) + 1))
    body = "".join((CONT_URDF_JOINT if kind == "continuous" else REV_URDF_JOINT).format(n=name, i=i, j=i + 1)
                   for i, (name, kind) in enumerate(joints.items()))
    trans = ('<transmission name="t0"><type>transmission_interface/SimpleTransmission</type>'
             '<joint name="ghost"><hardwareInterface>hardware_interface/PositionJointInterface'
             '</hardwareInterface></joint></transmission>')
    return f'<?xml version="1.0" encoding="utf-8"?>\n<robot name="sim">{links}{body}{trans}</robot>'


class SimRobot(JointsRobotHW):
    """Joints in all command interfaces; :meth:`step` integrates the selected dynamics."""

    def __init__(self, names: Sequence[str], mode: str = "position", tau: float = 0.01,
                 positions: Optional[Sequence[float]] = None) -> None:
        super().__init__(names, initial_positions=positions)
        self.names = list(names)
        self.mode = mode
        self.tau = tau
        self.speed = 1.0
        self.state: Dict[str, JointData] = self.data
        self.pv: Dict[str, JointData] = {}
        self.pva: Dict[str, JointData] = {}
        self.stuck: Dict[str, bool] = {n: False for n in names}
        self.wall: Dict[str, Optional[float]] = {n: None for n in names}
        pvi, pvai = PosVelJointInterface(), PosVelAccJointInterface()
        for name in self.names:
            x0 = self.state[name].position
            self.pv[name] = JointData(command_position=x0)
            self.pva[name] = JointData(command_position=x0)
            st = self.js.get_handle(name)
            pvi.register_handle(PosVelJointHandle(st, self.pv[name]))
            pvai.register_handle(PosVelAccJointHandle(st, self.pva[name]))
        for iface in (pvi, pvai):
            self.register_interface(iface)

    def positions(self) -> List[float]:
        return [self.state[n].position for n in self.names]

    def velocities(self) -> List[float]:
        return [self.state[n].velocity for n in self.names]

    def step(self, dt: float) -> None:
        for name in self.names:
            d = self.state[name]
            if self.stuck[name]:
                d.velocity = 0.0
                continue
            x = d.position
            if self.mode == "position":
                target = d.command_position
                x_new = x + (target - x) * min(1.0, self.speed * dt / self.tau)
            elif self.mode in ("posvel", "posvelacc"):
                src = self.pv[name] if self.mode == "posvel" else self.pva[name]
                x_new = x + (src.command_position - x) * min(1.0, self.speed * dt / self.tau)
            elif self.mode == "velocity":
                x_new = x + d.command_velocity * dt * self.speed
            elif self.mode == "effort":
                v = d.velocity + (d.command_effort - 2.0 * d.velocity) * dt
                x_new = x + v * dt
            else:  # pragma: no cover
                raise ValueError(self.mode)
            wall = self.wall[name]
            if wall is not None and x <= wall <= x_new or wall is not None and x >= wall >= x_new:
                x_new = wall
            d.velocity = (x_new - x) / dt
            d.position = x_new
            d.effort = d.command_effort


def pt(positions, t, velocities=None, accelerations=None) -> JointTrajectoryPoint:
    p = JointTrajectoryPoint()
    p.positions = list(positions)
    p.velocities = [] if velocities is None else list(velocities)
    p.accelerations = [] if accelerations is None else list(accelerations)
    p.time_from_start = genpy.Duration.from_sec(t)
    return p


def traj(names, points, stamp: float = 0.0) -> JointTrajectory:
    msg = JointTrajectory()
    msg.header.stamp = genpy.Time.from_sec(stamp)
    msg.joint_names = list(names)
    msg.points = list(points)
    return msg


def fjt_goal(trajectory, path=None, goal=None, goal_time=0.0) -> FollowJointTrajectoryGoal:
    """``path``/``goal``: {joint: position tolerance} (velocity/acceleration 0 = default)."""
    g = FollowJointTrajectoryGoal()
    g.trajectory = trajectory
    g.path_tolerance = [JointTolerance(name=n, position=v) for n, v in (path or {}).items()]
    g.goal_tolerance = [JointTolerance(name=n, position=v) for n, v in (goal or {}).items()]
    g.goal_time_tolerance = genpy.Duration.from_sec(goal_time)
    return g


def gripper_goal(position: float, max_effort: float) -> GripperCommandGoal:
    g = GripperCommandGoal()
    g.command.position = position
    g.command.max_effort = max_effort
    return g


def rrbot_params(joints, **extra) -> dict:
    """Upstream test settings: goal_time 0.5, goal 0.01, trajectory 0.05, state rate 100."""
    params = {"joints": list(joints), "state_publish_rate": 100.0,
              "constraints": {"goal_time": 0.5, "stopped_velocity_tolerance": 0.05}}
    for j in joints:
        params["constraints"][j] = {"goal": 0.01, "trajectory": 0.05}
    params.update(extra)
    return params


class JtcRig(ControllerManagerRig):
    """Robot + in-memory graph + controller manager; :meth:`cycle` = read, update, write, step."""

    check_switch = True

    def __init__(self, joints: Dict[str, str], mode: str = "position", positions=None,
                 tau: float = 0.01) -> None:
        self.robot = SimRobot(list(joints), mode, tau, positions)
        super().__init__(self.robot, t0=100.0, dt=0.01, robot_description=make_urdf(joints),
                         switch_wall_margin=0.5, switch_wait_limit=3.0)
        self.name: Optional[str] = None

    # -- controller management -------------------------------------------------------------------
    def load(self, name: str, type_name: str, params: Optional[dict] = None, **more_params):
        ctrl = super().load(name, type_name, params, **more_params)
        self.name = name
        return ctrl

    def start(self, name: str, type_name: str, params: dict):
        ctrl = self.load(name, type_name, params)
        self.switch(start=[name])
        return ctrl

    # -- time ------------------------------------------------------------------------------------
    def control(self, t: float, dt: float) -> None:
        self.robot.read(t, dt)
        self.cm.update(t, dt)
        self.robot.write(t, dt)
        self.robot.step(dt)

    def run(self, seconds: float, until=None) -> float:
        """Cycle for ``seconds`` (or until ``until()`` is true); returns the elapsed time."""
        n = int(round(seconds / self.dt))
        for k in range(n):
            self.cycle()
            if until is not None and until():
                return (k + 1) * self.dt
        return n * self.dt

    # -- ROS helpers -----------------------------------------------------------------------------
    def client(self, action: str = "follow_joint_trajectory") -> InMemoryActionClient:
        return InMemoryActionClient(self.root_nh, f"{self.name}/{action}")

    def publish(self, msg, topic: str = "command") -> None:
        self.root_nh.advertise(f"{self.name}/{topic}", type(msg), 1).publish(msg)

    def record_state(self) -> List[JointTrajectoryControllerState]:
        received: List[JointTrajectoryControllerState] = []
        self.root_nh.subscribe(f"{self.name}/state", JointTrajectoryControllerState, received.append)
        return received

    def close(self) -> None:
        self.cm.shutdown()


def angle_diff(a: float, b: float) -> float:
    return math.pi - ((math.pi - (a - b)) % (2 * math.pi))


RRBOT = {"joint1": "continuous", "joint2": "continuous"}
J = ["joint1", "joint2"]


def jtc_type(variant: str = "position") -> str:
    return f"{variant}_controllers/JointTrajectoryController"


def start_jtc(variant: str = "position", joints: Optional[Dict[str, str]] = None, mode: Optional[str] = None,
              positions=None, tau: float = 0.01, **params):
    """A rig with a running JTC ``arm`` (rrbot settings unless overridden); returns (rig, controller)."""
    joints = dict(RRBOT if joints is None else joints)
    if mode is None:
        mode = {"pos_vel": "posvel", "pos_vel_acc": "posvelacc"}.get(variant, variant)
    rig = JtcRig(joints, mode=mode, positions=positions, tau=tau)
    p = rrbot_params(list(joints))
    if variant in ("velocity", "effort"):
        gains = {"p": 50.0, "d": 0.0} if variant == "velocity" else {"p": 400.0, "d": 40.0}
        p["gains"] = {j: dict(gains) for j in joints}
        p["velocity_ff"] = {j: 1.0 for j in joints}
    for key, value in params.items():
        if isinstance(value, dict) and isinstance(p.get(key), dict):
            merged = dict(p[key])
            merged.update(value)
            p[key] = merged
        else:
            p[key] = value
    ctrl = rig.start("arm", jtc_type(variant), p)
    return rig, ctrl
