#!/usr/bin/env python3
"""Benchmark: the quadruped under roslaunch, faster than its defaults, with a trajectory executing.

Starts a ROS master on a free port and ``roslaunch rospy_control bringup.launch robot:=quadruped``
with the hardware XML's ``<hardware rate>`` raised to ``--bus-rate`` (320 Hz: both buses) and the
control loop at ``--loop-rate`` (500 Hz), the simulated firmware in its own node as by default.  Once
the spawner has started the controllers, ``demo_trajectory legs_controller`` sends a MoveIt-shaped
goal over all 12 joints that lasts longer than the window; during ``--window`` seconds of it this
measures:

* the CPU of the driver process (and, apart, of the simulator process), % of a core;
* each bus's cycle rate, from the ``cycles`` counters of the driver's ``/diagnostics`` at the
  window's ends, as % of ``--bus-rate``.

``--pythonpath`` goes first on the nodes' PYTHONPATH, so another tree's code runs
(:func:`bench_side_by_side.node_pythonpath`); ``--json`` prints one line ``RESULT <json>``.

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_quadruped_node.py [--window 10]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any, Dict, List, Optional, Tuple

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

from bench_node import free_port, node_pid, proc_cpu, wait_master  # noqa: E402


def hardware_xml(rate: float, into: str) -> str:
    """The quadruped's hardware XML with ``<hardware rate>`` set to ``rate``, written under ``into``."""
    with open(os.path.join(ROOT, "config", "quadruped_hardware.xml")) as f:
        text = f.read()
    text, n = re.subn(r'(<hardware\b[^>]*\brate=")[^"]*(")', rf"\g<1>{rate:g}\g<2>", text, count=1)
    if n != 1:
        raise RuntimeError("quadruped_hardware.xml: no <hardware rate=...> to change")
    path = os.path.join(into, "quadruped_hardware.xml")
    with open(path, "w") as f:
        f.write(text)
    return path


class ChannelCycles:
    """The latest ``cycles`` counter of each ``channel <name>`` status in ``/diagnostics``, with the
    message's stamp."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.latest: Dict[str, Tuple[float, int]] = {}

    def __call__(self, msg: Any) -> None:
        stamp = msg.header.stamp.to_sec()
        for status in msg.status:
            m = re.search(r"channel (\S+)", status.name)
            if not m:
                continue
            for kv in status.values:
                if kv.key == "cycles":
                    with self.lock:
                        self.latest[m.group(1)] = (stamp, int(float(kv.value)))

    def snapshot(self) -> Dict[str, Tuple[float, int]]:
        with self.lock:
            return dict(self.latest)


def _stop(procs: List[Optional[subprocess.Popen]]) -> None:
    for p in procs:
        if p is not None and p.poll() is None:
            os.killpg(p.pid, signal.SIGINT)
            try:
                p.wait(20.0)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()


def run(window: float = 10.0, bus_rate: float = 320.0, loop_rate: float = 500.0,
        pythonpath: Optional[str] = None) -> Dict[str, Any]:
    port = free_port()
    master = f"http://localhost:{port}"
    env = dict(os.environ, ROS_MASTER_URI=master)
    node_env = dict(env)
    if pythonpath:
        node_env["PYTHONPATH"] = os.pathsep.join(
            [pythonpath] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    out: Dict[str, Any] = {"bus_rate": bus_rate, "loop_rate": loop_rate}
    core = subprocess.Popen(["roscore", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    launch = demo = None
    with tempfile.TemporaryDirectory(prefix="bench-quadruped-") as tmp:
        try:
            if not wait_master(master):
                out["error"] = "the ROS master did not start"
                return out
            os.environ["ROS_MASTER_URI"] = master
            import rospy
            from diagnostic_msgs.msg import DiagnosticArray
            rospy.init_node("bench_node", anonymous=False, disable_signals=True)
            cycles = ChannelCycles()
            sub = rospy.Subscriber("/diagnostics", DiagnosticArray, cycles, queue_size=10)
            launch = subprocess.Popen(
                ["roslaunch", "rospy_control", "bringup.launch", "robot:=quadruped", "driver_output:=log",
                 f"hardware_config:={hardware_xml(bus_rate, tmp)}", f"control_rate:={loop_rate:g}",
                 "diagnostics_period:=1.0"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=node_env, start_new_session=True)
            driver = node_pid(master, "/driver", 60.0)
            sim = node_pid(master, "/sim", 10.0)
            if driver is None:
                out["error"] = "driver node not found"
                return out
            time.sleep(10.0)  # the spawner starts the controllers
            demo = subprocess.Popen(["rosrun", "rospy_control", "demo_trajectory", "legs_controller",
                                     "--duration", f"{window + 12.0:g}", "--timeout", f"{window + 40.0:g}"],
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                                    start_new_session=True)
            time.sleep(4.0)  # accepted and executing
            if demo.poll() is not None:
                said = demo.stdout.read()[-500:] if demo.stdout else ""
                out["error"] = f"demo_trajectory ended early: {said}"
                return out
            c0, w0 = cycles.snapshot(), time.monotonic()
            d0, s0 = proc_cpu(driver), proc_cpu(sim) if sim else 0.0
            time.sleep(window)
            c1, w1 = cycles.snapshot(), time.monotonic()
            d1, s1 = proc_cpu(driver), proc_cpu(sim) if sim else 0.0
            out["driver_cpu_pct"] = 100.0 * (d1 - d0) / (w1 - w0)
            out["sim_cpu_pct"] = 100.0 * (s1 - s0) / (w1 - w0) if sim else float("nan")
            rates: Dict[str, float] = {}
            for name, (t1, n1) in c1.items():
                if name in c0 and t1 > c0[name][0]:
                    rates[name] = 100.0 * (n1 - c0[name][1]) / (t1 - c0[name][0]) / bus_rate
            out["bus_rate_pct"] = rates
            out["goal_running"] = demo.poll() is None
            if not rates:
                out["error"] = "no channel cycles in /diagnostics"
            sub.unregister()
            return out
        finally:
            _stop([demo, launch, core])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--window", type=float, default=10.0)
    ap.add_argument("--bus-rate", type=float, default=320.0)
    ap.add_argument("--loop-rate", type=float, default=500.0)
    ap.add_argument("--pythonpath", default=None,
                    help="first on the nodes' PYTHONPATH (another tree's code)")
    ap.add_argument("--json", action="store_true", help="print one line: RESULT <json>")
    args = ap.parse_args()
    res = run(args.window, args.bus_rate, args.loop_rate, args.pythonpath)
    if args.json:
        print("RESULT " + json.dumps(res))
        sys.stdout.flush()
        os._exit(0)
    for k, v in res.items():
        print(f"{k:>16}: {v}")
    sys.stdout.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
