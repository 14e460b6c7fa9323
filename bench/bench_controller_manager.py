#!/usr/bin/env python3
"""Benchmark: CPU time of ``ControllerManager.update()`` with joint_state_controller and a JTC executing.

For 2, 6 and 12 joints: an in-memory graph (``InMemoryNodeHandle``), a fake RobotHW whose joints
follow their position commands, ``joint_state_controller`` (publish_rate 50) and a
``<variant>_controllers/JointTrajectoryController`` executing a MoveIt-like action goal (stamp 0,
quintic segments, path and goal tolerances set, so every cycle samples *and* checks tolerances).
The state publisher and action monitor run in their real, threaded mode (as under rospy), so the
loop only requests publishes (``--synchronous`` builds and publishes inside ``update()`` instead).
CPU time excludes the time the loop thread waits for the GIL while the publisher thread builds a
``state`` message (50 Hz); wall time includes it (that is the p99 difference).
Each cycle ``cm.update(t, dt)`` is timed with
``time.thread_time_ns`` (CPU time of the loop thread) and ``perf_counter_ns`` (wall); printed are
median / p99 / max in microseconds.

Target: median < 60 us for 12 joints (the C++ anchor measures ~5.9 us).

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_controller_manager.py
       [--cycles 20000] [--joints 2 6 12] [--variant position] [--profile]
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import genpy  # noqa: E402
import numpy as np  # noqa: E402
from control_msgs.msg import FollowJointTrajectoryGoal, JointTolerance  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from rospy_control.controllers.joint_trajectory_controller import JointTrajectoryController  # noqa: E402
from rospy_control.controller_manager import ControllerManager  # noqa: E402
from rospy_control.testing import InMemoryActionClient, InMemoryGraph, InMemoryNodeHandle  # noqa: E402
from rospy_control.testing.robot_hw import JointsRobotHW  # noqa: E402


class FakeRobot(JointsRobotHW):
    """Joints that follow their position command with a first-order lag."""

    def step(self, dt: float, mode: str) -> None:
        for d in self.data.values():
            x = d.position
            if mode == "velocity":
                d.position = x + d.command_velocity * dt
            else:
                d.position = x + (d.command_position - x) * 0.5
            d.velocity = (d.position - x) / dt


def urdf(names: List[str]) -> str:
    links = "".join(f'<link name="l{i}"/>' for i in range(len(names) + 1))
    joints = "".join(f'<joint name="{n}" type="continuous"><parent link="l{i}"/>'
                     f'<child link="l{i + 1}"/></joint>' for i, n in enumerate(names))
    return f'<robot name="bench">{links}{joints}</robot>'


def goal(names: List[str], duration: float, n_points: int = 50) -> FollowJointTrajectoryGoal:
    delta = np.linspace(0.5, 1.5, len(names))
    msg = JointTrajectory()
    msg.joint_names = names
    for t in np.linspace(0.0, duration, n_points):
        u = t / duration
        s = 10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5
        ds = (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / duration
        dds = (60 * u - 180 * u ** 2 + 120 * u ** 3) / duration ** 2
        p = JointTrajectoryPoint(positions=list(s * delta), velocities=list(delta * ds),
                                 accelerations=list(delta * dds))
        p.time_from_start = genpy.Duration.from_sec(float(t))
        msg.points.append(p)
    g = FollowJointTrajectoryGoal(trajectory=msg)
    g.path_tolerance = [JointTolerance(name=n, position=0.5) for n in names]
    g.goal_tolerance = [JointTolerance(name=n, position=0.05) for n in names]
    g.goal_time_tolerance = genpy.Duration.from_sec(1.0)
    return g


def pct(values: List[float], q: float) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


def bench(n_joints: int, cycles: int, variant: str, profile: bool, synchronous: bool = False,
          period: float = 0.001, paced: bool = False):
    """Returns the per-call CPU and wall times (us) and the goal status; ``paced``: each call waits for
    an absolute deadline ``period`` of real time after the previous one (else back to back)."""
    names = [f"joint_{i}" for i in range(n_joints)]
    graph = InMemoryGraph(time=10.0)
    root = InMemoryNodeHandle("/", graph)
    root.set_param("robot_description", urdf(names))
    root.set_param("joint_state_controller", {"type": "joint_state_controller/JointStateController",
                                              "publish_rate": 50.0})
    params = {"type": f"{variant}_controllers/JointTrajectoryController", "joints": names}
    if variant in ("velocity", "effort"):
        params["gains"] = {n: {"p": 100.0} for n in names}
        params["velocity_ff"] = {n: 1.0 for n in names}
    root.set_param("arm_controller", params)
    robot = FakeRobot(names)
    cm = ControllerManager(robot, root)
    # real (threaded) state publisher and action monitor, as under rospy, unless --synchronous
    JointTrajectoryController.SYNCHRONOUS = bool(synchronous)
    try:
        for name in ("joint_state_controller", "arm_controller"):
            result = cm.load_controller(name)
            assert result.ok, result.message
    finally:
        JointTrajectoryController.SYNCHRONOUS = None
    t = 10.0
    # start both controllers: the switch is applied by update(), drive it from here
    import threading
    worker = threading.Thread(target=cm.switch_controller,
                              args=(["joint_state_controller", "arm_controller"], [], 2))
    worker.start()
    while worker.is_alive():
        t += period
        graph.set_time(t)
        cm.update(t, period)
        time.sleep(0.0001)
    client = InMemoryActionClient(root, "arm_controller/follow_joint_trajectory")
    duration = cycles * period + 1.0
    handle = client.send_goal(goal(names, duration))
    mode = "velocity" if variant in ("velocity", "effort") else "position"
    cpu: List[float] = []
    wall: List[float] = []
    prof = None
    if profile:
        import cProfile
        prof = cProfile.Profile()
    gc.collect()
    gc.disable()
    deadline = time.perf_counter()
    try:
        for _ in range(cycles):
            if paced:
                deadline += period
                delay = deadline - time.perf_counter()
                if delay > 0:
                    time.sleep(delay)
            t += period
            graph.set_time(t)
            if prof is not None:
                prof.enable()
            c0 = time.thread_time_ns()
            w0 = time.perf_counter_ns()
            cm.update(t, period)
            w1 = time.perf_counter_ns()
            c1 = time.thread_time_ns()
            if prof is not None:
                prof.disable()
            cpu.append((c1 - c0) / 1000.0)
            wall.append((w1 - w0) / 1000.0)
            robot.step(period, mode)
    finally:
        gc.enable()
    status = handle.get_goal_status()
    cm.shutdown()
    if prof is not None:
        import pstats
        pstats.Stats(prof).sort_stats("tottime").print_stats(18)
    return cpu, wall, status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cycles", type=int, default=20000)
    parser.add_argument("--joints", type=int, nargs="+", default=[2, 6, 12])
    parser.add_argument("--variant", default="position",
                        choices=["position", "velocity", "effort", "pos_vel", "pos_vel_acc"])
    parser.add_argument("--profile", action="store_true", help="cProfile the update calls (slows them)")
    parser.add_argument("--synchronous", action="store_true",
                        help="build/publish state and relay goals inside update() (no threads)")
    args = parser.parse_args()
    print(f"controller_manager.update(): joint_state_controller + {args.variant}_controllers/"
          f"JointTrajectoryController executing, {args.cycles} cycles at 1 kHz")
    print(f"{'joints':>6} | {'CPU median':>10} {'p99':>8} {'max':>8} | {'wall median':>11} {'p99':>8}  (us)")
    for n in args.joints:
        cpu, wall, status = bench(n, args.cycles, args.variant, args.profile, args.synchronous)
        print(f"{n:>6} | {statistics.median(cpu):>10.1f} {pct(cpu, 0.99):>8.1f} {max(cpu):>8.1f} | "
              f"{statistics.median(wall):>11.1f} {pct(wall, 0.99):>8.1f}  (goal status {status})")


if __name__ == "__main__":
    main()
