#!/usr/bin/env python3
"""Benchmark: CPU time of ``TrajectoryExecutor.update()`` (the JTC's per-cycle work without ROS).

For 2, 6 and 12 joints, an action goal of a MoveIt-like trajectory (stamp 0, 50 points with
positions, velocities and accelerations -> quintic segments, path and goal tolerances set, so every
cycle samples *and* checks tolerances) is executed at 1 kHz against a trivial simulated robot.
Printed: median / p99 / max of ``update()`` in microseconds (``time.perf_counter_ns`` around the
call), plus the one-off cost of ``accept()`` (validation + merge + precomputation, off the loop).

The C++ anchor (ros_controllers JTC, whole ``update`` of controller_manager) measures ~5.9 us median
for 12 joints; the project's target for the Python controller manager update is a median < 60 us.

Usage: PYTHONPATH=src python3 bench/bench_trajectory.py [--cycles 20000] [--joints 2 6 12]
"""
from __future__ import annotations

import argparse
import gc
import os
import statistics
import sys
import time
from types import SimpleNamespace
from typing import List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import numpy as np  # noqa: E402

from rospy_control.trajectory import TrajectoryExecutor  # noqa: E402


def _goal(names: List[str], duration: float, n_points: int = 50):
    start = np.zeros(len(names))
    delta = np.linspace(0.5, 1.5, len(names))
    points = []
    for t in np.linspace(0.0, duration, n_points):
        u = t / duration
        s = 10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5
        ds = (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / duration
        dds = (60 * u - 180 * u ** 2 + 120 * u ** 3) / duration ** 2
        points.append(SimpleNamespace(positions=list(start + s * delta), velocities=list(delta * ds),
                                      accelerations=list(delta * dds), time_from_start=float(t)))
    traj = SimpleNamespace(header=SimpleNamespace(stamp=0.0), joint_names=names, points=points)
    tol = [SimpleNamespace(name=n, position=0.05, velocity=0.0, acceleration=0.0) for n in names]
    return SimpleNamespace(trajectory=traj, path_tolerance=tol, goal_tolerance=[], goal_time_tolerance=1.0)


def bench(n_joints: int, cycles: int, period: float = 0.001):
    names = [f"joint_{i}" for i in range(n_joints)]
    params = {"constraints": {"goal_time": 0.5, "stopped_velocity_tolerance": 0.01}}
    for n in names:
        params["constraints"][n] = {"trajectory": 0.1, "goal": 0.01}
    ex = TrajectoryExecutor.from_params(names, params)
    t = 1000.0
    x = np.zeros(n_joints)
    v = np.zeros(n_joints)
    ex.start(t, x, v)
    duration = cycles * period * 0.9  # the goal is active (path checks) for most of the run
    t0 = time.perf_counter_ns()
    code, text = ex.accept_goal(_goal(names, duration), "bench")
    accept_us = (time.perf_counter_ns() - t0) / 1000.0
    assert code == 0, text
    samples = []
    clock = time.perf_counter_ns
    gc.disable()
    try:
        for _ in range(cycles):
            t += period
            t0 = clock()
            p, dv, _ = ex.update(t, period, x, v)
            samples.append(clock() - t0)
            x = p  # perfect tracking
            v = dv
    finally:
        gc.enable()
    events = ex.poll_events()
    samples.sort()
    us = [s / 1000.0 for s in samples]
    return {
        "median": statistics.median(us),
        "p99": us[int(0.99 * (len(us) - 1))],
        "max": us[-1],
        "accept": accept_us,
        "events": [e.status for e in events],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=20000)
    parser.add_argument("--joints", type=int, nargs="+", default=[2, 6, 12])
    args = parser.parse_args()
    print(f"TrajectoryExecutor.update(), {args.cycles} cycles at 1 kHz, goal active with path tolerances, "
          f"python {sys.version.split()[0]}, numpy {np.__version__}")
    print(f"{'joints':>6} {'median us':>10} {'p99 us':>8} {'max us':>8} {'accept ms':>10}  goal")
    for n in args.joints:
        r = bench(n, args.cycles)
        print(f"{n:>6} {r['median']:>10.1f} {r['p99']:>8.1f} {r['max']:>8.1f} {r['accept'] / 1000.0:>10.2f}  "
              f"{','.join(r['events']) or 'active'}")


if __name__ == "__main__":
    main()
