#!/usr/bin/env python3
"""Benchmark: the real nodes under roslaunch -- start-up time and idle CPU of the example arm.

Starts a ROS master on a free port, waits until it answers, then runs ``roslaunch rospy_control
bringup.launch`` (the arm at its default rates, ros_control branch, simulated firmware in its own
node as by default) and measures:

* **start-up**: master up and ``roslaunch`` started -> first ``/joint_states`` message received here
  (roslaunch's own start, the driver's imports, the hardware XML and URDF, the simulator handshake
  and the first bus cycles are all inside this figure);
* **idle CPU** of the driver process and, apart, of the simulator process, over ``--idle`` seconds
  after the spawner has started the controllers (nothing is commanded: joint_state_controller at
  100 Hz, the trajectory controller holding, the bus polling every motor at the hardware rate).

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_node.py [--idle 10] [--robot arm]
"""
from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import xmlrpc.client
from typing import Any, Dict, Optional

CLK_TCK = os.sysconf("SC_CLK_TCK")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


def proc_cpu(pid: int) -> float:
    """CPU seconds (user + system) of process ``pid`` so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def node_pid(master: str, node: str, timeout: float = 30.0) -> Optional[int]:
    """The pid of ROS node ``node`` (None if it does not register within ``timeout`` s)."""
    m = xmlrpc.client.ServerProxy(master)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            code, _, uri = m.lookupNode("/bench_node", node)
            if code == 1:
                code, _, pid = xmlrpc.client.ServerProxy(uri).getPid("/bench_node")
                if code == 1:
                    return int(pid)
        except (OSError, xmlrpc.client.Error):
            pass
        time.sleep(0.1)
    return None


def wait_master(master: str, timeout: float = 30.0) -> bool:
    m = xmlrpc.client.ServerProxy(master)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if m.getPid("/bench_node")[0] == 1:
                return True
        except (OSError, xmlrpc.client.Error):
            pass
        time.sleep(0.05)
    return False


def run(idle: float = 10.0, robot: str = "arm", pythonpath: Optional[str] = None) -> Dict[str, Any]:
    """One launch; ``pythonpath``: put first on the nodes' PYTHONPATH, e.g. to run another tree's code
    (``bench_side_by_side.node_pythonpath``; the launch files and messages stay this workspace's).
    rospy allows one ``init_node`` per process: run it in a fresh interpreter per launch (``--json``)."""
    port = free_port()
    master = f"http://localhost:{port}"
    env = dict(os.environ, ROS_MASTER_URI=master)
    if pythonpath:
        paths = [pythonpath] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(paths)
    out: Dict[str, Any] = {"robot": robot}
    core = subprocess.Popen(["roscore", "-p", str(port)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    launch = None
    try:
        if not wait_master(master):
            out["error"] = "the ROS master did not start"
            return out
        os.environ["ROS_MASTER_URI"] = master
        import rospy
        from sensor_msgs.msg import JointState
        rospy.init_node("bench_node", anonymous=False, disable_signals=True)
        first = threading.Event()
        stamp: Dict[str, float] = {}

        def on_js(_msg: JointState) -> None:
            if not first.is_set():
                stamp["t"] = time.monotonic()
                first.set()

        sub = rospy.Subscriber("/joint_states", JointState, on_js, queue_size=1)
        t0 = time.monotonic()
        launch = subprocess.Popen(["roslaunch", "rospy_control", "bringup.launch", f"robot:={robot}",
                                   "driver_output:=log"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                                  start_new_session=True)
        if not first.wait(60.0):
            out["error"] = "no /joint_states within 60 s"
            return out
        out["startup_s"] = stamp["t"] - t0
        driver, sim = node_pid(master, "/driver"), node_pid(master, "/sim", 5.0)
        out["sim_process"] = sim is not None
        # let the spawner start the controllers and everything settle before the idle window
        time.sleep(8.0)
        if driver is None:
            out["error"] = "driver node not found"
            return out
        d0, s0, w0 = proc_cpu(driver), proc_cpu(sim) if sim else 0.0, time.monotonic()
        time.sleep(idle)
        d1, s1, w1 = proc_cpu(driver), proc_cpu(sim) if sim else 0.0, time.monotonic()
        out["idle_driver_cpu_pct"] = 100.0 * (d1 - d0) / (w1 - w0)
        out["idle_sim_cpu_pct"] = 100.0 * (s1 - s0) / (w1 - w0) if sim else float("nan")
        out["driver_threads"] = len(os.listdir(f"/proc/{driver}/task"))
        sub.unregister()
        return out
    finally:
        for p in (launch, core):
            if p is not None and p.poll() is None:
                os.killpg(p.pid, signal.SIGINT)
                try:
                    p.wait(20.0)
                except subprocess.TimeoutExpired:
                    os.killpg(p.pid, signal.SIGKILL)
                    p.wait()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--idle", type=float, default=10.0)
    ap.add_argument("--robot", default="arm")
    ap.add_argument("--pythonpath", default=None,
                    help="first on the nodes' PYTHONPATH (another tree's code)")
    ap.add_argument("--json", action="store_true", help="print one line: RESULT <json>")
    args = ap.parse_args()
    res = run(args.idle, args.robot, args.pythonpath)
    if args.json:
        print("RESULT " + json.dumps(res))
        sys.stdout.flush()
        os._exit(0)  # rospy's threads: do not wait for them
    for k, v in res.items():
        print(f"{k:>22}: {v}")
    sys.exit(0)


if __name__ == "__main__":
    main()
