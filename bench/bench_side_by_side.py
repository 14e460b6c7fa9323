#!/usr/bin/env python3
"""Benchmark: the quadruped's control-loop work, this tree side by side with an earlier commit.

Runs :mod:`bench_control_loop`'s quadruped rig (12 MIT motors on 2 simulated buses, the simulator
in its own process, joint_state_controller + position JTC executing a goal over all 12 joints) once
per tree, alternating ``baseline, current, baseline, current, ...`` so that a busy host weighs on
both alike, and prints per part the median and p99 of the control-loop thread's CPU time per cycle:

* ``read``: ``MiddlewareRobotHW.read`` (snapshot of the units, transmissions, handles);
* ``update``: ``ControllerManager.update`` (every running controller);
* ``write``: ``MiddlewareRobotHW.write`` (limits, transmissions, commands to the units);
* ``work``: the three together, and its wall time (which includes waiting for the GIL), measured in
  runs of their own: the parts' probes cost a few microseconds each and are not counted in it.

The baseline is a git revision (default :data:`BASELINE`, the code before the control loop moved
arrays instead of per-joint calls), exported with ``git archive`` into a temporary directory and run
against the same catkin workspace (its messages are the same).  Without git history (a shallow
copy), only the current tree is measured.

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_side_by_side.py [--baseline REV]
       [--duration 4] [--rounds 2]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
from typing import Any, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))

#: the last commit with the per-joint hot path (read/update/write of the quadruped about 220 us
#: of CPU per cycle on the development VM)
BASELINE = "0fb1cef"

PARTS = ("read", "update", "write", "work")

# Runs inside a fresh interpreter with the tree's src/ and bench/ first on sys.path: wraps the rig's
# read / update / write (attributes both old and new trees have) and prints one JSON line.
_PROBE = r"""
import json, os, sys, time
root = sys.argv[1]; duration = float(sys.argv[2]); mode = sys.argv[3]
sys.path.insert(0, os.path.join(root, "bench")); sys.path.insert(0, os.path.join(root, "src"))
import logging; logging.basicConfig(level=logging.ERROR); logging.getLogger().setLevel(logging.ERROR)
import bench_control_loop as b
rig = b.Rig(500.0, 500.0, sim_process=True)
tt, perf = time.thread_time, time.perf_counter
acc = {"read": [], "update": [], "write": [], "work": [], "work_wall": []}
rec = {"on": False, "cpu": 0.0, "wall": 0.0}
def wrap(obj, name, key):
    orig = getattr(obj, name)
    def f(*a, **k):
        c0 = tt(); r = orig(*a, **k); c = tt() - c0
        if rec["on"]:
            acc[key].append(c)
        return r
    setattr(obj, name, f)
if mode == "parts":
    wrap(rig.hw, "read", "read"); wrap(rig.cm, "update", "update"); wrap(rig.hw, "write", "write")
else:  # the whole cycle, without the parts' probes inside it
    cycle = rig.loop.cycle
    def timed(period):
        c0, w0 = tt(), perf(); cycle(period)
        if rec["on"]:
            acc["work"].append(tt() - c0); acc["work_wall"].append(perf() - w0)
    rig.loop.cycle = timed
acc = {k: v for k, v in acc.items() if (k in ("work", "work_wall")) == (mode == "work")}
start = rig.positions()
rig.client.send_goal(b.make_goal(rig.joints, start, duration + 3.0))
time.sleep(0.5)
rec["on"] = True
time.sleep(duration)
rec["on"] = False
print("RESULT " + json.dumps(acc))
sys.stdout.flush()
if rig.sim_proc is not None:  # the simulator process holds our stdout: end it before we go
    rig.sim_proc.terminate()
    rig.sim_proc.wait(5.0)
os._exit(0)
"""


def export(rev: str, into: str) -> Optional[str]:
    """The tree of ``rev`` (src/, bench/, config/, urdf/) under ``into``; None without that revision."""
    try:
        data = subprocess.run(["git", "-C", ROOT, "archive", "--format=tar", rev, "src", "bench", "config",
                               "urdf"], check=True, capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError) as err:
        msg = err.stderr.decode(errors="replace").strip() if isinstance(err, subprocess.CalledProcessError) \
            else str(err)
        print(f"bench_side_by_side: baseline {rev} not available ({msg}); measuring this tree only",
              file=sys.stderr)
        return None
    path = os.path.join(into, rev)
    os.makedirs(path)
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        with tarfile.open(fileobj=f) as tar:
            tar.extractall(path)
    return path


def probe(root: str, duration: float, mode: str) -> Dict[str, List[float]]:
    """One run of the rig in ``root``: ``mode`` "parts" times read, update and write each; "work"
    times the whole cycle only (so that the parts' own probes, a few microseconds each on a cold
    cache, are not counted in it)."""
    env = dict(os.environ)
    # the simulator process the rig starts (``-m rospy_control.simulator.process``) from the same tree
    paths = [os.path.join(root, "src")] + env.get("PYTHONPATH", "").split(os.pathsep)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    out = subprocess.run([sys.executable, "-c", _PROBE, root, str(duration), mode], capture_output=True,
                         text=True, timeout=120 + 2 * duration, env=env)
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    raise RuntimeError(f"probe of {root} printed no result (exit {out.returncode}): {out.stderr[-2000:]}")


def summary(samples: Dict[str, List[float]]) -> Dict[str, Any]:
    res: Dict[str, Any] = {}
    for key, v in samples.items():
        v = sorted(v)
        if not v:
            continue
        p99 = v[min(len(v) - 1, int(0.99 * len(v)))]
        res[key] = {"median_us": 1e6 * statistics.median(v), "p99_us": 1e6 * p99, "n": len(v)}
    return res


def run(baseline: str = BASELINE, duration: float = 4.0, rounds: int = 2) -> Dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-side-by-side-") as tmp:
        trees = {"current": ROOT}
        old = export(baseline, tmp)
        if old is not None:
            trees = {f"baseline {baseline}": old, "current": ROOT}
        acc: Dict[str, Dict[str, List[float]]] = {name: {} for name in trees}
        for _ in range(rounds):
            for mode in ("work", "parts"):
                for name, root in trees.items():
                    for key, v in probe(root, duration, mode).items():
                        acc[name].setdefault(key, []).extend(v)
        return {name: summary(s) for name, s in acc.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--duration", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args()
    res = run(args.baseline, args.duration, args.rounds)
    print(f"{'tree':<22} {'part':<10} {'median us':>10} {'p99 us':>10} {'cycles':>8}")
    for name, parts in res.items():
        for key in ("read", "update", "write", "work", "work_wall"):
            if key in parts:
                p = parts[key]
                print(f"{name:<22} {key:<10} {p['median_us']:>10.1f} {p['p99_us']:>10.1f} {p['n']:>8d}")


if __name__ == "__main__":
    main()
