#!/usr/bin/env python3
"""Benchmark: the trajectory downlink, host client against the board program on simulated pulses.

The board runs in this process on its own threads (so its recorded pulses can be read) with a clock
offset by 1000 s and drifting 80 ppm against the host's, over loopback TCP.  Printed rows:

* goal accepted -> first pulse: host time of the Start's ack to the first pulse (board clock,
  converted through the clock sync); an unstamped goal starts ``start_lead`` (50 ms) after "now";
* cancel -> deceleration begins: host time of the Cancel request to the start of the stop ramp;
* feedback rate (Hz, received) and age (host receipt minus the board stamp converted to host time);
* executed vs planned position in steps along a MoveIt-shaped trajectory (6 joints, 0.1 s points
  with positions, velocities and accelerations): the pulse count against the host's own quintic
  interpolation of the goal, every 5 ms of board time;
* clock-sync error: estimated board time against the board clock read at the same instant, and the
  drift estimate against the true 80 ppm;
* seed mode: bytes of a long Cartesian path and what re-sampling makes of it.

With ``--plot FILE`` (needs matplotlib) planned against executed positions of joint 1 are drawn.

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_downlink.py [--json FILE] [--plot FILE]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import numpy as np  # noqa: E402

from rospy_control.board.config import seed_config  # noqa: E402
from rospy_control.board.core import BoardCore, TrajPoint  # noqa: E402
from rospy_control.board.server import BoardClock, BoardServer  # noqa: E402
from rospy_control.board import wire  # noqa: E402
from rospy_control.downlink.client import BoardClient  # noqa: E402
from rospy_control.downlink.seed import SeedSender  # noqa: E402

JOINTS = [f"joint_{i}" for i in range(1, 7)]
DRIFT_PPM = 80.0


def moveit_like(waypoints: np.ndarray, seg_time: float, dt: float = 0.1) -> List[TrajPoint]:
    """Through the waypoints with a smooth (min-jerk per leg) time law, sampled every dt as MoveIt's
    time parametrisation would: positions, velocities and accelerations at each point."""
    pts = []
    t_total = seg_time * (len(waypoints) - 1)
    for t in np.arange(0.0, t_total + 1e-9, dt):
        leg = min(int(t // seg_time), len(waypoints) - 2)
        u = (t - leg * seg_time) / seg_time
        s = 10 * u ** 3 - 15 * u ** 4 + 6 * u ** 5
        ds = (30 * u ** 2 - 60 * u ** 3 + 30 * u ** 4) / seg_time
        dds = (60 * u - 180 * u ** 2 + 120 * u ** 3) / seg_time ** 2
        d = waypoints[leg + 1] - waypoints[leg]
        pts.append(TrajPoint(t, waypoints[leg] + s * d, ds * d, dds * d))
    return pts


def stats(values: List[float], scale: float = 1e3) -> str:
    if not values:
        return "n/a"
    v = sorted(x * scale for x in values)
    return f"median {statistics.median(v):.2f}  max {v[-1]:.2f}  (n={len(v)})"


def run(goals: int = 5, plot: str = "") -> Dict[str, object]:
    results: Dict[str, object] = {}
    server = BoardServer(seed_config(6), clock=BoardClock(offset=1000.0, drift_ppm=DRIFT_PPM)).start()
    client = BoardClient("127.0.0.1", server.address[1]).connect()
    spr = server.config.axes[0].steps_per_unit
    feedback_ages: List[float] = []
    client.feedback_callbacks.append(lambda fb: feedback_ages.append(fb.received - fb.host_time))
    try:
        # -- goal accepted -> first pulse ---------------------------------------------------------
        latencies = []
        position = np.zeros(6)
        for k in range(goals):
            target = position + (0.05 if k % 2 == 0 else -0.05)
            before = [server.backend.pulse_total[i] for i in range(6)]
            handle = client.execute(JOINTS, moveit_like(np.stack([position, target]), 0.5))
            handle.wait(10.0)
            firsts = []
            for i in range(6):
                times, _ = server.backend.pulses(i)
                if len(times) > before[i]:
                    firsts.append(times[before[i]])
            latencies.append(client.sync.host_time(min(firsts)) - handle.accepted_at)
            position = target
        results["accepted_to_first_pulse_ms"] = [x * 1e3 for x in latencies]

        # -- executed vs planned along a MoveIt-shaped trajectory; feedback rate/age ---------------
        rng = np.random.default_rng(7)
        middle = [position + rng.uniform(-0.6, 0.6, 6) for _ in range(4)]
        waypoints = np.vstack([position] + middle + [position])
        pts = moveit_like(waypoints, 1.2)
        feedback_ages.clear()
        handle = client.execute(JOINTS, pts)
        time.sleep(1.0)
        rate = client.feedback_rate(1.0)
        handle.wait(30.0)
        results["goal_result"] = handle.result
        results["feedback_rate_hz"] = rate
        results["feedback_age_ms"] = [x * 1e3 for x in feedback_ages]
        origin = handle.start_board_time
        segs = [BoardCore._between(a, b) for a, b in zip(pts[:-1], pts[1:])]
        errs = []
        t_plot, planned_plot, executed_plot = [], [], []
        for t in np.arange(0.0, pts[-1].t, 0.005):
            seg = segs[min(int(t / 0.1), len(segs) - 1)]
            plan = seg.eval(t) * spr
            got = np.array([server.backend.steps_at(i, origin + t) for i in range(6)])
            errs.append(float(np.max(np.abs(got - plan))))
            t_plot.append(t)
            planned_plot.append(plan[0] / spr)
            executed_plot.append(got[0] / spr)
        results["executed_vs_planned_steps"] = {"max": max(errs),
                                                "rms": float(np.sqrt(np.mean(np.square(errs)))),
                                                "points": len(pts), "duration_s": pts[-1].t}
        results["late_executor_cycles"] = server.core.late_chunks

        # -- cancel -> deceleration begins ----------------------------------------------------------
        cancel_lat = []
        for k in range(goals):
            start = np.array([server.backend.steps_at(i, server.clock.now()) / spr for i in range(6)])
            goal = start + 0.8 * (1 if k % 2 else -1)
            handle = client.execute(JOINTS, moveit_like(np.stack([start, goal]), 2.0))
            time.sleep(0.8)
            t_cancel = client.clock()
            client.cancel(handle.goal_id)
            handle.wait(10.0)
            ramp = [s for s in list(server.core.history) + server.core.plan if s.kind == "ramp"][-1]
            cancel_lat.append(client.sync.host_time(ramp.t0) - t_cancel)
        results["cancel_to_decel_ms"] = [x * 1e3 for x in cancel_lat]

        # -- clock sync ------------------------------------------------------------------------------
        sync_err = []
        for _ in range(50):
            a = server.clock.now()
            est = client.board_now()
            b = server.clock.now()
            sync_err.append(max(est - b, a - est, 0.0))
            time.sleep(0.01)
        results["clock_sync_error_ms"] = [x * 1e3 for x in sync_err]
        results["clock_sync_uncertainty_ms"] = client.sync.uncertainty * 1e3
        results["clock_drift_ppm"] = {"estimated": client.sync.drift_ppm, "true": DRIFT_PPM}

        if plot:
            try:
                import matplotlib
                matplotlib.use("Agg")
                import matplotlib.pyplot as plt
                fig, ax = plt.subplots(figsize=(8, 4))
                ax.plot(t_plot, planned_plot, label="planned (host's interpolation)")
                ax.plot(t_plot, executed_plot, "--", label="executed (pulse count)")
                ax.set_xlabel("time from start [s]")
                ax.set_ylabel("joint_1 [rad]")
                ax.legend()
                fig.savefig(plot, dpi=100)
                results["plot"] = plot
            except ImportError:
                results["plot"] = "skipped: matplotlib missing"
    finally:
        client.close()
        server.stop()

    # -- seed mode: a long Cartesian path ------------------------------------------------------------
    seed_server = BoardServer(seed_config(6), protocol="seed").start()
    try:
        t = np.linspace(0.0, 30.0, 1500)             # 1 cm steps of a 15 m path at 0.5 m/s, 6 joints
        path = [TrajPoint(tk, 0.3 * np.sin(0.3 * tk + np.arange(6)) * (1 - np.exp(-tk))) for tk in t]
        sender = SeedSender("127.0.0.1", seed_server.address[1], JOINTS, path_tolerance=0.001)
        info = sender.send(JOINTS, path)
        results["seed_resampling"] = info
    except wire.DownlinkError as err:
        results["seed_resampling"] = {"refused": str(err)}
    finally:
        seed_server.stop()
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--goals", type=int, default=5)
    parser.add_argument("--json", default="")
    parser.add_argument("--plot", default="")
    args = parser.parse_args()
    r = run(args.goals, args.plot)
    ms = lambda key: stats([x / 1e3 for x in r[key]])   # noqa: E731
    print("trajectory downlink (board on simulated pulses, loopback TCP, clock +1000 s / 80 ppm)")
    print(f"  goal accepted -> first pulse [ms]     {ms('accepted_to_first_pulse_ms')}  "
          "(start_lead 50 ms included)")
    print(f"  cancel -> deceleration begins [ms]    {ms('cancel_to_decel_ms')}")
    print(f"  feedback rate [Hz]                    {r['feedback_rate_hz']:.1f}")
    print(f"  feedback age [ms]                     {ms('feedback_age_ms')}")
    ev = r["executed_vs_planned_steps"]
    print(f"  executed vs planned [steps]           max {ev['max']:.2f}  rms {ev['rms']:.2f}  "
          f"({ev['points']} points, {ev['duration_s']:.1f} s, result {r['goal_result']})")
    print(f"  clock-sync error [ms]                 {ms('clock_sync_error_ms')}  "
          f"(uncertainty {r['clock_sync_uncertainty_ms']:.2f} ms)")
    d = r["clock_drift_ppm"]
    print(f"  clock drift [ppm]                     estimated {d['estimated']:.1f}, true {d['true']:.1f}")
    print(f"  executor cycles late (> 50 ms)        {r['late_executor_cycles']}")
    print(f"  seed mode, 1500-point path            {r['seed_resampling']}")
    if r.get("plot"):
        print(f"  plot                                  {r['plot']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1, default=float)
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "bench_downlink"
    sys.exit(main())
