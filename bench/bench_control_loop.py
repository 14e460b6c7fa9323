#!/usr/bin/env python3
"""Benchmark: the quadruped in one process -- control loop work and CPU per thread.

The example quadruped (``config/quadruped_hardware.xml``: 12 MIT motors on 2 virtual buses, IMU and
contacts, simulated firmware) with its URDF and joint limits, a ``MiddlewareRobotHW`` and a
``ControllerManager`` on an in-memory graph running ``joint_state_controller`` (100 Hz) and
``legs_controller`` (position JTC, 12 joints, threaded state publisher and action monitor as under
rospy), driven by the real :class:`~rospy_control.control_loop.loop.ControlLoop` thread.  A
goal (a slow quintic of +-0.1 rad around the standing pose, longer than the run) executes during
the whole measurement, so every cycle samples the trajectory and checks the path tolerances.

Printed / returned (``run()``):

* control loop work (``read + cm.update + write``): median / p99 of the wall and CPU time per cycle;
* late cycles and overruns of the control loop (its own counters), faults, bus cycle rate reached
  vs. configured (each channel's own counters), missed replies;
* CPU % of one core over the measured window, per thread group: the simulated firmware
  (``rospy_control.sim.*``, the part that moves to its own process), the bus threads, the control
  loop, everything else (publisher / monitor threads); "driver" = everything but the simulator;
* action latency: goal accepted (the executor's ``accept`` returned; the action server calls
  ``set_accepted`` right after) -> first command frame on the bus carrying a changed position, median
  and max of 5 one-point goals before the window (the frames are watched at the motor's ``poll``);
  and the time ``accept`` took (validation and building the trajectory, in the action server's thread).

No ROS master and no rospy: ``/joint_states`` and the action go through the in-memory graph, so
serialisation and socket costs of a real node are not included (they live in rospy's threads).

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_control_loop.py
       [--duration 5] [--bus-rate 500] [--loop-rate 500] [--profile]
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
sys.path.insert(0, os.path.join(ROOT, "src"))

import genpy  # noqa: E402
import yaml  # noqa: E402
from control_msgs.msg import FollowJointTrajectoryGoal  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from rospy_control.testing.sim_rig import sim_of, simulated_middleware  # noqa: E402
from rospy_control.control_loop.loop import ControlLoop  # noqa: E402
from rospy_control.controller_manager import ControllerManager  # noqa: E402
from rospy_control.controllers.joint_trajectory_controller import JointTrajectoryController  # noqa: E402
from rospy_control.robot_hw import MiddlewareRobotHW  # noqa: E402
from rospy_control.testing import InMemoryActionClient, InMemoryGraph, InMemoryNodeHandle  # noqa: E402

CLK_TCK = os.sysconf("SC_CLK_TCK")


def thread_cpu() -> Dict[int, float]:
    """CPU seconds (user + system) of every thread of this process, by native thread id."""
    out: Dict[int, float] = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as f:
                out[int(tid)] = int(f.read().split()[0]) / 1e9
        except (OSError, ValueError, IndexError):
            continue
    return out


def group_of(name: str) -> str:
    if name.startswith("rospy_control.sim."):
        return "simulator"
    if name.startswith("rospy_control.channel."):
        return "bus threads"
    if name == "control_loop":
        return "control loop"
    return "other"


def make_goal(names: List[str], start: List[float], duration: float, amplitude: float = 0.1,
              n_points: int = 50) -> FollowJointTrajectoryGoal:
    msg = JointTrajectory()
    msg.joint_names = names
    for k in range(n_points):
        t = duration * k / (n_points - 1)
        u = t / duration
        s = 10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5
        ds = (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / duration
        sign = [1.0 if j % 2 == 0 else -1.0 for j in range(len(names))]
        p = JointTrajectoryPoint(positions=[x + amplitude * g * s for x, g in zip(start, sign)],
                                 velocities=[amplitude * g * ds for g in sign],
                                 accelerations=[0.0] * len(names))
        p.time_from_start = genpy.Duration.from_sec(t)
        msg.points.append(p)
    g = FollowJointTrajectoryGoal(trajectory=msg)
    return g


class Rig:
    """The quadruped in one process (see the module docstring)."""

    def __init__(self, bus_rate: float, loop_rate: float, sim_process: bool = False) -> None:
        with open(os.path.join(ROOT, "config", "quadruped_hardware.xml")) as f:
            xml = f.read()
        xml = re.sub(r'(<hardware [^>]*rate=")[0-9.]+(")', rf"\g<1>{bus_rate:g}\g<2>", xml, count=1)
        self.sim_proc = None
        if sim_process:  # the simulated firmware in a process of its own, as the launch file runs it
            fd, self._xml_path = tempfile.mkstemp(suffix=".xml", prefix="bench_quadruped_")
            with os.fdopen(fd, "w") as f:
                f.write(xml)
            key = f"bench-{os.getpid()}"
            self.sim_proc = subprocess.Popen(
                [sys.executable, "-m", "rospy_control.simulator.process", self._xml_path, "--key", key,
                 "--sim"], stdout=subprocess.PIPE, text=True)
            assert self.sim_proc.stdout is not None
            line = self.sim_proc.stdout.readline()
            assert line.startswith("ready"), f"simulator process did not start: {line!r}"
        with open(os.path.join(ROOT, "urdf", "quadruped.urdf")) as f:
            urdf = f.read()
        with open(os.path.join(ROOT, "config", "quadruped_joint_limits.yaml")) as f:
            limits = yaml.safe_load(f)["joint_limits"]
        with open(os.path.join(ROOT, "config", "quadruped_controllers.yaml")) as f:
            controllers = yaml.safe_load(f)
        # the simulated quadruped feels the URDF's weights (in this process; or in its own)
        self.mw = simulated_middleware(xml, simulate=True, urdf=urdf,
                                       process_key=key if self.sim_proc is not None else None, wait=10.0)
        self.graph = InMemoryGraph(time=100.0)
        self.root = InMemoryNodeHandle("/", self.graph)
        self.root.set_param("robot_description", urdf)
        self.root.set_param("joint_limits", limits)
        jsc = dict(controllers["joint_state_controller"])
        self.root.set_param("joint_state_controller", jsc)
        self.root.set_param("legs_controller", controllers["legs_controller"])
        self.joints = list(controllers["legs_controller"]["joints"])
        self.hw = MiddlewareRobotHW(self.mw, urdf, {"joint_limits": limits})
        self.hw.limit_command_steps(1.0 / loop_rate)
        self.hw.start()
        assert sim_of(self.mw).process == sim_process, "the simulator process did not answer"
        self.cm = ControllerManager(self.hw, self.root)
        t_start = time.monotonic()
        self.loop = ControlLoop(self.hw, self.cm, loop_rate, now=lambda: 100.0 + time.monotonic() - t_start)
        self.work: List[float] = []
        self.work_cpu: List[float] = []
        self._record = False
        cycle = self.loop.cycle
        perf, tcpu = time.perf_counter, time.thread_time

        #: while recording: wall time between cycle starts, and (time, desired, measured) of the
        #: first joint as the trajectory executor saw them (for the plots of ``run_all``)
        self.periods: List[float] = []
        self.trace: List[Any] = []
        last = {"t": 0.0}

        def timed_cycle(period: float) -> None:
            w0, c0 = perf(), tcpu()
            cycle(period)
            if self._record:
                self.work.append(perf() - w0)
                self.work_cpu.append(tcpu() - c0)
                if last["t"]:
                    self.periods.append(w0 - last["t"])
                latest = getattr(self._executor, "_latest", None) if self._executor else None
                if latest is not None:
                    desired = self._executor.desired_values
                    if desired:
                        self.trace.append((w0, float(desired[0]), float(latest[3][0])))
            last["t"] = w0

        self._executor = None

        self.loop.cycle = timed_cycle  # type: ignore[method-assign]

        #: thread CPU of each part of a cycle while recording (read, cm.update, write), seconds
        self.parts: Dict[str, List[float]] = {"read": [], "update": [], "write": []}
        for obj, attr, key in ((self.hw, "read", "read"), (self.cm, "update", "update"),
                               (self.hw, "write", "write")):
            setattr(obj, attr, self._timed_part(getattr(obj, attr), self.parts[key]))
        JointTrajectoryController.SYNCHRONOUS = False  # threads, as under rospy
        try:
            for name in ("joint_state_controller", "legs_controller"):
                result = self.cm.load_controller(name)
                assert result.ok, result.message
        finally:
            JointTrajectoryController.SYNCHRONOUS = None
        self.loop.start()
        result = self.cm.switch_controller(["joint_state_controller", "legs_controller"], [], 2, False, 5.0)
        assert result.ok, result.message
        self.client = InMemoryActionClient(self.root, "legs_controller/follow_joint_trajectory")
        self._executor = [spec.c for spec in self.cm._controllers if hasattr(spec.c, "executor")][0].executor

    def _timed_part(self, fn: Any, acc: List[float]) -> Any:
        """``fn`` that appends its thread CPU to ``acc`` while recording (the loop calls the instance
        attribute each cycle, so this wrapper is what it runs)."""
        tcpu = time.thread_time

        def timed(*args: Any, **kwargs: Any) -> Any:
            c0 = tcpu()
            result = fn(*args, **kwargs)
            if self._record:
                acc.append(tcpu() - c0)
            return result
        return timed

    def positions(self) -> List[float]:
        states = self.mw.snapshot().states
        return [states[j.replace("_joint", "_motor")].position for j in self.joints]

    def action_latency(self, sign: float = 1.0) -> float:
        """Goal sent -> first command frame (to any leg motor) whose position differs from the previous
        frame's by more than the hold jitter; seconds."""
        motors = [self.mw.motor(j.replace("_joint", "_motor")) for j in self.joints]
        # the goal moves every joint from its measured position; watch the first joint's frames
        m = motors[0]
        seen: Dict[str, Any] = {"t": None}
        orig = m.poll
        last = {"data": None}

        def poll(now: float):
            msg = orig(now)
            if msg is not None and seen["t"] is None and armed["on"]:
                data = bytes(msg.data)
                prev = last["data"]
                if prev is not None and data[:2] != prev[:2] and data[0] not in (0xFF,):
                    seen["t"] = time.perf_counter()
                last["data"] = data
            elif msg is not None:
                last["data"] = bytes(msg.data)
            return msg

        armed = {"on": False}
        m.poll = poll  # type: ignore[method-assign]
        # "accepted": the executor's accept() returned (the action server then calls set_accepted)
        ex = [spec.c for spec in self.cm._controllers if hasattr(spec.c, "executor")][0].executor
        accepted: Dict[str, float] = {}
        accept = ex.accept

        def timed_accept(*args: Any, **kwargs: Any):
            accepted["t0"] = time.perf_counter()
            result = accept(*args, **kwargs)
            accepted["t1"] = time.perf_counter()
            return result

        ex.accept = timed_accept  # type: ignore[method-assign]
        try:
            time.sleep(0.2)
            start = self.positions()
            # one position-only point: a linear segment (0.2 rad in 0.1 s), so the first command of the
            # new trajectory already differs from the hold by many quanta of the frame's position field
            msg = JointTrajectory(joint_names=self.joints)
            # (callers alternate ``sign``, so that repeated goals do not walk the legs to their limits)
            target = [x + sign * (0.2 if j % 2 == 0 else -0.2) for j, x in enumerate(start)]
            point = JointTrajectoryPoint(positions=target)
            point.time_from_start = genpy.Duration.from_sec(0.1)
            msg.points.append(point)
            goal = FollowJointTrajectoryGoal(trajectory=msg)
            armed["on"] = True
            t0 = time.perf_counter()
            handle = self.client.send_goal(goal)
            deadline = t0 + 1.0
            while seen["t"] is None and time.perf_counter() < deadline:
                time.sleep(0.0005)
            nan = float("nan")
            latency = (seen["t"] - accepted.get("t1", nan)) if seen["t"] is not None else nan
            accept_time = accepted.get("t1", nan) - accepted.get("t0", nan)
            handle.cancel()
            time.sleep(0.1)
        finally:
            m.poll = orig  # type: ignore[method-assign]
            del m.poll
            del ex.accept
        return latency, accept_time, t0

    def measure(self, duration: float, profile: bool = False) -> Dict[str, Any]:
        start = self.positions()
        handle = self.client.send_goal(make_goal(self.joints, start, duration + 2.0))
        time.sleep(0.3)
        chans = list(self.mw.channels.values())
        names = {t.native_id: t.name for t in threading.enumerate()}
        c0 = {ch.name: (ch.cycles, sum(u.reply_timeouts for u in ch.units)) for ch in chans}
        s0 = self.loop.stats()
        cpu0 = thread_cpu()
        sim0 = self.sim_cpu()
        p0 = time.process_time()
        t0 = time.perf_counter()
        prof = None
        if profile:
            import cProfile
            prof = cProfile.Profile()
            # profile the control-loop thread only: enable it from inside the loop's thread
            orig = self.loop.cycle

            def prof_cycle(period: float) -> None:
                prof.runcall(orig, period)

            self.loop.cycle = prof_cycle  # type: ignore[method-assign]
        self._record = True
        time.sleep(duration)
        self._record = False
        t1 = time.perf_counter()
        p1 = time.process_time()
        sim1 = self.sim_cpu()
        cpu1 = thread_cpu()
        s1 = self.loop.stats()
        if prof is not None:
            self.loop.cycle = orig  # type: ignore[method-assign]
        c1 = {ch.name: (ch.cycles, sum(u.reply_timeouts for u in ch.units)) for ch in chans}
        wall = t1 - t0
        groups: Dict[str, float] = {}
        for tid, c in cpu1.items():
            g = group_of(names.get(tid, ""))
            groups[g] = groups.get(g, 0.0) + (c - cpu0.get(tid, 0.0))
        pct = {g: 100.0 * v / wall for g, v in groups.items()}
        total = 100.0 * (p1 - p0) / wall
        faults = [u.name for ch in chans for u in ch.units if u.fault]
        loop_cycles = s1.cycles - s0.cycles
        late = (s1.late_cycles - s0.late_cycles) + (s1.overruns - s0.overruns)
        status = handle.get_goal_status()
        work = sorted(self.work)
        work_cpu = sorted(self.work_cpu)
        out = {
            "wall_s": wall,
            "loop_cycles": loop_cycles,
            "loop_rate": loop_cycles / wall,
            "late_cycles": late,
            "late_pct": 100.0 * late / max(1, loop_cycles),
            "stalls": s1.stalls - s0.stalls,
            "work_median_us": 1e6 * statistics.median(work) if work else float("nan"),
            "work_p99_us": 1e6 * work[min(len(work) - 1, int(0.99 * len(work)))] if work else float("nan"),
            "work_cpu_median_us": 1e6 * statistics.median(work_cpu) if work_cpu else float("nan"),
            "work_cpu_p99_us": 1e6 * work_cpu[min(len(work_cpu) - 1, int(0.99 * len(work_cpu)))]
            if work_cpu else float("nan"),
            **{f"{k}_cpu_median_us": 1e6 * statistics.median(v) if v else float("nan")
               for k, v in self.parts.items()},
            **{f"{k}_cpu_p99_us": 1e6 * sorted(v)[min(len(v) - 1, int(0.99 * len(v)))] if v else float("nan")
               for k, v in self.parts.items()},
            "bus_rate_pct": {ch.name: 100.0 * (c1[ch.name][0] - c0[ch.name][0]) / wall / ch.rate
                             for ch in chans},
            "missed_replies": sum(c1[n][1] - c0[n][1] for n in c1),
            "faults": faults,
            "cpu_pct": pct,
            "process_cpu_pct": total,
            "driver_cpu_pct": total - pct.get("simulator", 0.0),
            "simulator_process_cpu_pct": 100.0 * (sim1 - sim0) / wall if self.sim_proc else float("nan"),
            "sim_process": self.sim_proc is not None,
            "goal_status": status,
            "periods_ms": [1e3 * p for p in self.periods],
            "trace": [(t - self.trace[0][0], d, a) for t, d, a in self.trace] if self.trace else [],
        }
        handle.cancel()
        if prof is not None:
            import pstats
            pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return out

    def sim_cpu(self) -> float:
        """CPU seconds the simulator process used so far (0 without one)."""
        if self.sim_proc is None:
            return 0.0
        with open(f"/proc/{self.sim_proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK

    def shutdown(self) -> None:
        self.loop.stop()
        self.cm.shutdown()
        self.hw.shutdown()
        self.mw.shutdown()
        if self.sim_proc is not None:
            self.sim_proc.terminate()
            self.sim_proc.wait(5.0)
            os.unlink(self._xml_path)


def run(duration: float = 5.0, bus_rate: float = 500.0, loop_rate: float = 500.0,
        profile: bool = False, latency: bool = True, sim_process: bool = False) -> Dict[str, Any]:
    rig = Rig(bus_rate, loop_rate, sim_process)
    try:
        time.sleep(0.5)
        lats, accepts = [], []
        for k in range(5 if latency else 0):
            lat, acc, _ = rig.action_latency(1.0 if k % 2 == 0 else -1.0)
            lats.append(lat)
            accepts.append(acc)
        res = rig.measure(duration, profile)
        nan = float("nan")
        res["action_latency_ms"] = 1e3 * statistics.median(lats) if lats else nan
        res["action_latency_max_ms"] = 1e3 * max(lats) if lats else nan
        res["accept_ms"] = 1e3 * statistics.median(accepts) if accepts else nan
        res["bus_rate"] = bus_rate
        res["configured_loop_rate"] = loop_rate
        return res
    finally:
        rig.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=5.0)
    ap.add_argument("--bus-rate", type=float, default=500.0)
    ap.add_argument("--loop-rate", type=float, default=500.0)
    ap.add_argument("--profile", action="store_true", help="cProfile the control-loop cycles")
    ap.add_argument("--sim-process", action="store_true",
                    help="simulated firmware in a process of its own (udp_multicast), as bringup.launch "
                         "runs it")
    args = ap.parse_args()
    r = run(args.duration, args.bus_rate, args.loop_rate, args.profile, sim_process=args.sim_process)
    for k, v in r.items():
        print(f"{k:>20}: {v}")


if __name__ == "__main__":
    main()
