"""Stand-ins for trajectory_msgs / control_msgs messages and a simulated joint (no ROS needed)."""
from __future__ import annotations

from types import SimpleNamespace
from typing import List, Optional, Sequence

import numpy as np

from rospy_control.trajectory import TrajectoryExecutor


class Duration:
    """genpy.Duration look-alike (only ``to_sec``)."""

    def __init__(self, sec: float) -> None:
        self._sec = float(sec)

    def to_sec(self) -> float:
        return self._sec


class Time(Duration):
    """genpy.Time look-alike (only ``to_sec``)."""


def point(positions, t, velocities=None, accelerations=None, wrap=Duration):
    """A JointTrajectoryPoint stand-in (``time_from_start`` as a Duration by default)."""
    return SimpleNamespace(positions=list(positions),
                           velocities=[] if velocities is None else list(velocities),
                           accelerations=[] if accelerations is None else list(accelerations),
                           effort=[],
                           time_from_start=wrap(t) if wrap is not None else t)


def trajectory(joint_names: Sequence[str], points: List, stamp: float = 0.0):
    """A JointTrajectory stand-in."""
    return SimpleNamespace(header=SimpleNamespace(stamp=Time(stamp), frame_id=""),
                           joint_names=list(joint_names), points=list(points))


def tolerance(name: str, position: float = 0.0, velocity: float = 0.0, acceleration: float = 0.0):
    """A control_msgs/JointTolerance stand-in."""
    return SimpleNamespace(name=name, position=position, velocity=velocity, acceleration=acceleration)


def goal(traj, path_tolerance=(), goal_tolerance=(), goal_time_tolerance=0.0):
    """A FollowJointTrajectoryGoal stand-in."""
    return SimpleNamespace(trajectory=traj, path_tolerance=list(path_tolerance),
                           goal_tolerance=list(goal_tolerance),
                           goal_time_tolerance=Duration(goal_time_tolerance))


#: rrbot_controllers.yaml of the upstream tests (goal_time 0.5, goal 0.01, trajectory 0.05).
def rrbot_params(joints=("joint1", "joint2"), goal_time=0.5, goal=0.01, path=0.05, stopped=0.01, **extra):
    params = {"constraints": {"goal_time": goal_time, "stopped_velocity_tolerance": stopped}}
    for j in joints:
        params["constraints"][j] = {"goal": goal, "trajectory": path}
    params.update(extra)
    return params


def make_executor(joints=("joint1", "joint2"), continuous=None, **params) -> TrajectoryExecutor:
    return TrajectoryExecutor.from_params(list(joints), rrbot_params(joints, **params), continuous)


class LagJoint:
    """Simulated position-controlled joints: first-order lag towards the command.

    ``x' = (cmd - x) / tau`` plus a velocity feed-forward fraction; ``stuck`` joints do not move.
    """

    def __init__(self, positions, tau: float = 0.02, feed_forward: float = 1.0,
                 stuck: Optional[Sequence[bool]] = None, speed_scale: float = 1.0) -> None:
        self.x = np.array(positions, dtype=float)
        self.v = np.zeros_like(self.x)
        self.tau = tau
        self.ff = feed_forward
        self.stuck = np.zeros_like(self.x, dtype=bool) if stuck is None else np.array(stuck, dtype=bool)
        self.speed_scale = speed_scale

    def step(self, cmd_pos, cmd_vel, dt: float) -> None:
        v = ((np.asarray(cmd_pos) - self.x) / self.tau + self.ff * np.asarray(cmd_vel)) * self.speed_scale
        v = np.where(self.stuck, 0.0, v)
        self.x = self.x + v * dt
        self.v = v


class Loop:
    """Drives an executor against a simulated robot with a fixed period; collects events."""

    def __init__(self, executor: TrajectoryExecutor, robot: LagJoint, t0: float = 1000.0, dt: float = 0.01):
        self.ex = executor
        self.robot = robot
        self.t = t0
        self.dt = dt
        self.events: List = []
        self.desired: List = []
        executor.start(self.t, robot.x, robot.v)

    def step(self):
        self.t += self.dt
        p, v, a = self.ex.update(self.t, self.dt, self.robot.x, self.robot.v)
        self.desired.append((self.t, p.copy(), v.copy(), a.copy()))
        self.robot.step(p, v, self.dt)
        self.events.extend(self.ex.poll_events())
        return p, v, a

    def run(self, seconds: float, until_event: bool = False):
        for _ in range(int(round(seconds / self.dt))):
            self.step()
            if until_event and self.events:
                break
        return self.events

    def events_for(self, key):
        return [e for e in self.events if e.goal_key == key]
