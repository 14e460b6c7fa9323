#!/usr/bin/env python3
"""The driver under load: the figures of ``test/integration/test_load.py``.

Launches ``bringup.launch`` (simulated arm, ``rsp:=false``) on a private ROS master, then runs the
same :class:`LoadRunner` as the rostest -- warm-up, a baseline with the trajectory running, 1000 goal
preemptions at 50 Hz, and (ros_control branch) 10 000 ``list_controllers`` calls from 2 threads and
1000 ``switch_controller`` calls, each under a running trajectory -- and prints, per load: calls/s,
p50/p99/max latency, the preemption latency, the control loop's late cycles and host stalls during
the load vs. the baseline, a reference process's late wake-ups (the host), and the driver's thread
count and RSS before and after.

Usage::

    source tools/env.sh && /usr/bin/python3 bench/bench_load.py [--branch ros_control|standalone|both]
        [--preemptions N] [--lists N] [--switches N] [--json FILE]

Exit code 1 when a pass criterion failed (printed): the rostest's, and the control loop's missed
cycles under each load (``LATE_FRACTION_BOUND``, ``STALL_FRACTION_BOUND`` of ``test_load``), which
only this bench checks: run it on a machine left to it.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Dict, Iterator

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "test", "integration"))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return int(s.getsockname()[1])


def fmt(v: Any, digits: int = 1) -> str:
    return f"{v:.{digits}f}" if isinstance(v, float) else str(v)


def table(branch: str, figures: Dict[str, Any]) -> str:
    lines = [f"== {branch}"]
    base = figures.get("baseline (trajectory, no load)", {})
    rows = [("baseline (trajectory, no load)", base)]
    loads = ("preemptions", "list_controllers", "switch_controller")
    rows += [(k, figures[k]) for k in loads if k in figures]
    lines.append(f"{'load':32s} {'calls/s':>8s} {'p50 ms':>7s} {'p99 ms':>7s} {'max ms':>7s} "
                 f"{'loop cycles':>11s} {'late %':>7s} {'stalls':>6s} {'host late %':>11s} {'s':>5s}")
    for name, fig in rows:
        lat = fig.get("latency") or fig.get("preemption_latency") or {}
        rate = fig.get("calls_per_s", fig.get("sent_per_s", float("nan")))
        loop, host = fig.get("loop", {}), fig.get("host", {})
        lines.append(f"{name:32s} {fmt(rate):>8s} {fmt(lat.get('p50_ms', float('nan'))):>7s} "
                     f"{fmt(lat.get('p99_ms', float('nan'))):>7s} {fmt(lat.get('max_ms', float('nan'))):>7s} "
                     f"{fmt(loop.get('cycles', 0.0), 0):>11s} "
                     f"{fmt(100 * loop.get('late_fraction', 0.0), 2):>7s} "
                     f"{fmt(loop.get('stalls', 0.0), 0):>6s} "
                     f"{fmt(100 * host.get('late_fraction', 0.0), 2):>11s} "
                     f"{fmt(fig.get('elapsed_s', 0.0)):>5s}")
    pre = figures.get("preemptions")
    if pre:
        a = pre["accept_latency"]
        lines.append(f"preemption: goal sent -> previous goal PREEMPTED p50/p99/max "
                     f"{pre['preemption_latency']['p50_ms']:.1f}/{pre['preemption_latency']['p99_ms']:.1f}/"
                     f"{pre['preemption_latency']['max_ms']:.1f} ms; goal sent -> ACTIVE "
                     f"{a['p50_ms']:.1f}/{a['p99_ms']:.1f}/{a['max_ms']:.1f} ms")
    b, a = figures.get("process before", {}), figures.get("process after", {})
    lines.append(f"driver process: threads {b.get('threads')} -> {a.get('threads')}, RSS "
                 f"{b.get('rss_mb', 0.0):.1f} -> {a.get('rss_mb', 0.0):.1f} MB "
                 f"(growth {figures.get('rss_growth_mb', 0.0):.1f} MB)")
    return "\n".join(lines)


@contextlib.contextmanager
def launched(branch: str) -> Iterator[None]:
    """``bringup.launch`` for ``branch`` on a private master; this process's rospy node initialised."""
    port = free_port()
    os.environ["ROS_MASTER_URI"] = f"http://localhost:{port}"
    launch = subprocess.Popen(
        ["roslaunch", "-p", str(port), "rospy_control", "bringup.launch", "robot:=arm",
         f"use_ros_control:={'true' if branch == 'ros_control' else 'false'}", "rsp:=false",
         "diagnostics_period:=0.5", "sim_process:=false", "driver_output:=log"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        import rosgraph
        import rospy
        deadline = time.monotonic() + 60.0
        while True:
            try:
                rosgraph.Master("/bench_load").getPid()
                break
            except Exception:  # noqa: BLE001 - the master is starting
                if time.monotonic() > deadline:
                    raise RuntimeError("no ROS master after 60 s")
                time.sleep(0.3)
        rospy.set_param("/actionlib_client_pub_queue_size", 1000)
        rospy.init_node("bench_load", disable_signals=True)
        yield
    finally:
        os.killpg(launch.pid, signal.SIGINT)
        try:
            launch.wait(30.0)
        except subprocess.TimeoutExpired:
            os.killpg(launch.pid, signal.SIGKILL)


def run_branch(branch: str, args: argparse.Namespace) -> Dict[str, Any]:
    from test_load import LoadRunner
    with launched(branch):
        runner = LoadRunner("/driver", branch == "ros_control", log=lambda s: print(s, file=sys.stderr))
        try:
            runner.run(preemptions=args.preemptions, lists=args.lists, switches=args.switches)
            runner.check_loop()
        finally:
            runner.close()
        runner.figures["failures"] = runner.failures
        return runner.figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--branch", choices=("ros_control", "standalone"), default="ros_control",
                        help="one branch per run (rospy connects to one master per process)")
    parser.add_argument("--preemptions", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=10000)
    parser.add_argument("--switches", type=int, default=1000)
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    figures = run_branch(args.branch, args)
    print(table(args.branch, figures))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1, sort_keys=True)
    if figures["failures"]:
        print("FAILED:\n  " + "\n  ".join(figures["failures"]))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
