#!/usr/bin/env python3
"""Benchmark: this tree side by side with an earlier commit (and the C++ anchor), in ONE run.

Every figure is measured for both trees in the same run, alternating ``baseline, current, baseline,
current, ...`` so that a busy host weighs on both alike; what is reported is the **ratio**
current / baseline (or Python / C++): on a shared machine the absolute figures mean little.

* loop work (:func:`run`): :mod:`bench_control_loop`'s quadruped rig (12 MIT motors on 2 simulated
  buses, the simulator in its own process, joint_state_controller + position JTC executing a goal
  over all 12 joints), per part the median and p99 of the control-loop thread's CPU time per cycle:
  ``read`` (``MiddlewareRobotHW.read``), ``update`` (``ControllerManager.update``), ``write``
  (``MiddlewareRobotHW.write``), ``work`` (the three together, and its wall time, measured in runs of
  their own: the parts' probes cost a few microseconds each and are not counted in it);
* ratios (:func:`run_ratios`): the idle example arm under roslaunch (driver process CPU,
  :mod:`bench_node`), the quadruped under roslaunch at 320 Hz buses and a 500 Hz loop with a trajectory
  executing (driver CPU, worst bus rate, :mod:`bench_quadruped_node`), and ``cm.update`` for 12 joints
  back to back and paced at 1 kHz (:mod:`bench_controller_manager`), each tree's own bench code in a
  fresh interpreter, plus the C++ ``controller_manager`` anchor in the same rounds when its harness is
  built.

The baseline is a git revision (default :data:`BASELINE`, the main this work started from), checked
out as a ``git worktree`` under ``.ws/baseline/<rev>`` (created once, reused) and run against the
same catkin workspace (its messages are the same).  Without git history (a shallow copy), only the
current tree is measured and every ratio says so.

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_side_by_side.py [--baseline REV]
       [--duration 4] [--rounds 2] [--ratios] [--anchor PATH]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, ".."))

#: the main this performance work started from
BASELINE = "ea44b28"

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


def export(rev: str, into: str = "") -> Optional[str]:
    """The tree of ``rev``: a ``git worktree`` at ``.ws/baseline/<rev>`` (made once, then reused);
    None (said on stderr) without that revision.  ``into`` is ignored (kept for callers)."""
    path = os.path.join(ROOT, ".ws", "baseline", rev)
    if os.path.isdir(os.path.join(path, "src", "rospy_control")):
        return path
    try:
        subprocess.run(["git", "-C", ROOT, "worktree", "add", "--detach", path, rev], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError) as err:
        msg = err.stderr.decode(errors="replace").strip() if isinstance(err, subprocess.CalledProcessError) \
            else str(err)
        print(f"bench_side_by_side: baseline {rev} not available ({msg}); measuring this tree only",
              file=sys.stderr)
        return None
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
    trees = {"current": ROOT}
    old = export(baseline)
    if old is not None:
        trees = {f"baseline {baseline}": old, "current": ROOT}
    acc: Dict[str, Dict[str, List[float]]] = {name: {} for name in trees}
    for _ in range(rounds):
        for mode in ("work", "parts"):
            for name, root in trees.items():
                for key, v in probe(root, duration, mode).items():
                    acc[name].setdefault(key, []).extend(v)
    return {name: summary(s) for name, s in acc.items()}


# ``cm.update`` in a tree, with that tree's bench code: prints one JSON line of per-call CPU medians (us)
_CM_PROBE = r"""
import json, os, statistics, sys
root, cycles, paced = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "paced"
sys.path.insert(0, os.path.join(root, "bench")); sys.path.insert(0, os.path.join(root, "src"))
import logging; logging.basicConfig(level=logging.ERROR); logging.getLogger().setLevel(logging.ERROR)
import bench_controller_manager as b
cpu, wall, status = b.bench(12, cycles, "position", False, paced=paced)
cpu.sort()
print("RESULT " + json.dumps({"median": statistics.median(cpu), "p99": cpu[int(0.99 * (len(cpu) - 1))],
                              "goal_status": status}))
sys.stdout.flush()
os._exit(0)
"""


def _tree_env(root: str) -> Dict[str, str]:
    env = dict(os.environ)
    paths = [os.path.join(root, "src")] + env.get("PYTHONPATH", "").split(os.pathsep)
    env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


def _result(out: "subprocess.CompletedProcess[str]", what: str) -> Dict[str, Any]:
    for line in out.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT "):])
    return {"error": f"{what} printed no result (exit {out.returncode}): {out.stderr[-500:]}"}


def probe_cm_update(root: str, cycles: int, paced: bool) -> Dict[str, Any]:
    """``cm.update`` of 12 joints (JSC + JTC executing) in ``root``: CPU median / p99 per call (us)."""
    out = subprocess.run([sys.executable, "-c", _CM_PROBE, root, str(cycles), "paced" if paced else "tight"],
                         capture_output=True, text=True, timeout=120 + cycles / 500, env=_tree_env(root))
    return _result(out, f"cm.update probe of {root}")


def node_pythonpath(root: str) -> Optional[str]:
    """A directory that, first on the nodes' PYTHONPATH, makes ``import rospy_control`` load ``root``'s
    code together with the messages and services generated into this workspace's devel space (as the
    devel space's own package does for this tree); None for this tree."""
    if os.path.abspath(root) == ROOT:
        return None
    devel = os.path.join(ROOT, ".ws", "devel", "lib", "python3", "dist-packages", "rospy_control")
    src = os.path.join(os.path.abspath(root), "src", "rospy_control")
    shim = os.path.abspath(root) + ".pythonpath"
    os.makedirs(os.path.join(shim, "rospy_control"), exist_ok=True)
    with open(os.path.join(shim, "rospy_control", "__init__.py"), "w") as f:
        f.write(f"__path__ = [{src!r}, {devel!r}]\n"
                f"__file__ = {os.path.join(src, '__init__.py')!r}\n"
                f"with open(__file__) as _f:\n    exec(compile(_f.read(), __file__, 'exec'))\n")
    return shim


def probe_node(root: str, idle: float, robot: str = "arm") -> Dict[str, Any]:
    """The example robot under roslaunch running ``root``'s code: idle CPU of the driver process."""
    cmd = [sys.executable, os.path.join(HERE, "bench_node.py"), "--idle", str(idle), "--robot", robot,
           "--json"]
    first = node_pythonpath(root)
    if first:
        cmd += ["--pythonpath", first]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180 + idle)
    return _result(out, f"roslaunch of {root}")


def probe_quadruped(root: str, window: float) -> Dict[str, Any]:
    """The quadruped under roslaunch (buses 320 Hz, loop 500 Hz, a trajectory executing) running
    ``root``'s code: driver CPU and each bus's rate (:mod:`bench_quadruped_node`)."""
    cmd = [sys.executable, os.path.join(HERE, "bench_quadruped_node.py"), "--window", str(window), "--json"]
    first = node_pythonpath(root)
    if first:
        cmd += ["--pythonpath", first]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=240 + window)
    return _result(out, f"roslaunch of the quadruped in {root}")


def _median(values: List[float]) -> float:
    return statistics.median(values) if values else float("nan")


def run_ratios(baseline: str = BASELINE, rounds: int = 2, idle: float = 8.0, cycles: int = 10000,
               anchor: Optional[Callable[[int], Dict[str, float]]] = None,
               node: bool = True, quadruped: float = 10.0) -> Dict[str, Any]:
    """Idle arm (driver process CPU), the quadruped at 320 Hz buses and a 500 Hz loop with a trajectory
    executing (driver CPU, worst bus rate; ``quadruped`` s of window, 0: skipped) and ``cm.update`` (12
    joints, tight and paced) for the baseline and this tree, alternating per round; the C++ anchor
    (``anchor(cycles)`` -> ``{"tight": us, "paced": us}``) in the same rounds. Per figure: each tree's
    per-round values, their median and the ratio current / baseline (and / C++); a figure missing in
    this run is None, with ``why``."""
    trees: Dict[str, str] = {"current": ROOT}
    old = export(baseline)
    if old is not None:
        trees = {"baseline": old, "current": ROOT}
    raw: Dict[str, Dict[str, List[float]]] = {name: {} for name in list(trees) + ["cpp"]}
    errors: List[str] = []

    def add(name: str, key: str, value: Any) -> None:
        if isinstance(value, (int, float)) and value == value:
            raw[name].setdefault(key, []).append(float(value))

    for _ in range(rounds):
        if anchor is not None:
            cpp = anchor(cycles // 2)
            add("cpp", "cm_tight", cpp.get("tight"))
            add("cpp", "cm_paced", cpp.get("paced"))
        for name, root in trees.items():
            for key, paced in (("cm_tight", False), ("cm_paced", True)):
                r = probe_cm_update(root, cycles if not paced else cycles // 2, paced)
                if "error" in r:
                    errors.append(f"{name} {key}: {r['error']}")
                add(name, key, r.get("median"))
            if node:
                r = probe_node(root, idle)
                if "error" in r:
                    errors.append(f"{name} idle arm: {r['error']}")
                add(name, "idle_driver_cpu_pct", r.get("idle_driver_cpu_pct"))
                add(name, "idle_sim_cpu_pct", r.get("idle_sim_cpu_pct"))
                add(name, "startup_s", r.get("startup_s"))
            if node and quadruped > 0:
                r = probe_quadruped(root, quadruped)
                if "error" in r:
                    errors.append(f"{name} quadruped: {r['error']}")
                add(name, "quad_driver_cpu_pct", r.get("driver_cpu_pct"))
                add(name, "quad_sim_cpu_pct", r.get("sim_cpu_pct"))
                rates = r.get("bus_rate_pct") or {}
                add(name, "quad_worst_bus_pct", min(rates.values()) if rates else None)
    med = {name: {k: _median(v) for k, v in keys.items()} for name, keys in raw.items()}
    out: Dict[str, Any] = {"baseline": baseline if old is not None else None, "rounds": rounds,
                           "raw": raw, "median": med, "errors": errors, "ratios": {}}
    for key in ("idle_driver_cpu_pct", "quad_driver_cpu_pct", "cm_tight", "cm_paced"):
        now, base = med["current"].get(key), med.get("baseline", {}).get(key)
        out["ratios"][f"{key} / baseline"] = now / base if now and base else None
    for key in ("cm_tight", "cm_paced"):
        now, cpp = med["current"].get(key), med["cpp"].get(key)
        out["ratios"][f"{key} / C++"] = now / cpp if now and cpp else None
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default=BASELINE)
    ap.add_argument("--duration", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ratios", action="store_true",
                    help="idle arm and cm.update ratios (and the C++ anchor) instead of the loop work")
    ap.add_argument("--no-node", action="store_true", help="--ratios without the roslaunch of the arm")
    ap.add_argument("--idle", type=float, default=8.0)
    ap.add_argument("--quadruped", type=float, default=10.0, help="s of the quadruped's window (0: skip)")
    ap.add_argument("--anchor", default=os.environ.get("ANCHOR_BENCH", ""),
                    help="path of the C++ anchor_bench harness (run_all.run_anchor)")
    args = ap.parse_args()
    if args.ratios:
        anchor = None
        if args.anchor and os.path.exists(args.anchor):
            import run_all
            path = args.anchor
            anchor = lambda cycles: run_all.run_anchor(path, cycles)  # noqa: E731
        res = run_ratios(args.baseline, args.rounds, args.idle, anchor=anchor, node=not args.no_node,
                         quadruped=args.quadruped)
        print(json.dumps(res, indent=2))
        return
    res = run(args.baseline, args.duration, args.rounds)
    print(f"{'tree':<22} {'part':<10} {'median us':>10} {'p99 us':>10} {'cycles':>8}")
    for name, parts in res.items():
        for key in ("read", "update", "write", "work", "work_wall"):
            if key in parts:
                p = parts[key]
                print(f"{name:<22} {key:<10} {p['median_us']:>10.1f} {p['p99_us']:>10.1f} {p['n']:>8d}")


if __name__ == "__main__":
    main()
