#!/usr/bin/env python3
"""Holding and tracking accuracy of the example arm under gravity, with and without the driver's
gravity feed-forward, and with a 0.5 kg payload the URDF does not know (docs/gravity.md).

Without ROS: the Middleware with the in-process simulated firmware (which applies the URDF's gravity at
the current pose), ``MiddlewareRobotHW`` and a 200 Hz loop commanding the six arm joints through the
PositionJointInterface, as a position JointTrajectoryController does.  For each configuration:

* **steady error** at 5 poses (outstretched included): a 2 s quintic move, 1.5 s of settling, then
  the largest |measured - target| over the joints (and which joint);
* **tracking error** along a MoveIt-shaped trajectory (quintic, 3 s, from "reaching down" through the
  outstretched pose): the largest and RMS |measured - desired| over the joints while it runs;
* **per-cycle cost** of the feed-forward: ``write()`` with and without it, and the model pass alone.

Run: ``source tools/env.sh && python3 bench/bench_gravity.py`` (about 2 minutes).
"""
from __future__ import annotations

import math
import os
import statistics
import sys
import time
from typing import Dict, List, Optional, Tuple

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
sys.path.insert(0, os.path.join(ROOT, "src"))

from rospy_control.hardware_interface import (  # noqa: E402
    ControllerInfo, InterfaceResources, JointStateInterface, PositionJointInterface,
)
from rospy_control.robot_hw import MiddlewareRobotHW  # noqa: E402

RATE = 200.0
JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
          "wrist_3_joint"]
POSES: Dict[str, List[float]] = {
    "outstretched": [0.0, math.pi / 2, 0.0, 0.0, 0.0, 0.0],
    "reaching down": [0.6, -0.9, 1.3, -0.7, 0.4, 0.3],
    "folded forward": [-0.7, 1.0, -1.6, 1.1, -0.5, -0.4],
    "elbow out": [0.3, 0.6, 0.9, 0.5, 0.0, 0.0],
    "leaning back": [0.0, -1.2, -0.5, 0.0, 0.0, 0.0],
}
PAYLOAD = '<payload link="tool_link" mass="0.5" xyz="0 0 0.05"/>'
CONFIGS: List[Tuple[str, bool, bool]] = [
    ("no compensation", False, False),
    ("compensation", True, False),
    ("no compensation, +0.5 kg unknown", False, True),
    ("compensation, +0.5 kg unknown", True, True),
]


def hardware_xml(compensate: bool, payload: bool) -> str:
    with open(os.path.join(ROOT, "config", "arm_hardware.xml"), encoding="utf-8") as f:
        xml = f.read()
    xml = xml.replace('<gravity_compensation enabled="true"',
                      f'<gravity_compensation enabled="{"true" if compensate else "false"}"')
    if payload:
        xml = xml.replace('<simulation gravity="0 0 -9.80665"/>',
                          f'<simulation gravity="0 0 -9.80665">{PAYLOAD}</simulation>')
    return xml


def quintic(a: List[float], b: List[float], s: float) -> List[float]:
    s = min(max(s, 0.0), 1.0)
    k = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
    return [x + (y - x) * k for x, y in zip(a, b)]


class Rig:
    def __init__(self, compensate: bool, payload: bool) -> None:
        with open(os.path.join(ROOT, "urdf", "arm.urdf"), encoding="utf-8") as f:
            urdf = f.read()
        self.hw = MiddlewareRobotHW.from_config(hardware_xml(compensate, payload), urdf, {})
        info = ControllerInfo("bench", "bench/Position",
                              [InterfaceResources(PositionJointInterface.TYPE_NAME, set(JOINTS))])
        assert self.hw.prepare_switch([info], [])
        self.hw.do_switch([info], [])
        iface = self.hw.get(PositionJointInterface)
        self.handles = [iface.get_handle(j) for j in JOINTS]
        js = self.hw.get(JointStateInterface)
        self.state = [js.get_handle(j) for j in JOINTS]
        self.t = 0.0
        self.write_times: List[float] = []
        self.shoulder: List[float] = []   # |error| of shoulder_lift while tracking
        self.cycle(0.3, lambda t: [h.get_position() for h in self.state])

    def positions(self) -> List[float]:
        return [h.get_position() for h in self.state]

    def cycle(self, seconds: float, desired, track: Optional[List[float]] = None) -> None:
        dt = 1.0 / RATE
        start = time.perf_counter()
        next_t = start
        hw = self.hw
        while True:
            now = time.perf_counter()
            el = now - start
            if el >= seconds:
                break
            hw.read(self.t, dt)
            q = self.positions()
            d = desired(el)
            if track is not None:
                track.append(max(abs(a - b) for a, b in zip(q, d)))
                self.shoulder.append(abs(q[1] - d[1]))
            for h, v in zip(self.handles, d):
                h.set_command(v)
            w0 = time.perf_counter()
            hw.write(self.t, dt)
            self.write_times.append(time.perf_counter() - w0)
            self.t += dt
            next_t += dt
            time.sleep(max(0.0, next_t - time.perf_counter()))

    def move(self, target: List[float], duration: float, track: Optional[List[float]] = None) -> None:
        start = self.positions()
        self.cycle(duration, lambda t: quintic(start, target, t / duration), track)

    def close(self) -> None:
        self.hw.shutdown()


def run_config(compensate: bool, payload: bool) -> dict:
    rig = Rig(compensate, payload)
    try:
        steady = {}
        for name, pose in POSES.items():
            rig.move(pose, 2.0)
            rig.cycle(1.5, lambda t, p=pose: p)
            err = [abs(a - b) for a, b in zip(rig.positions(), pose)]
            k = max(range(len(err)), key=lambda i: err[i])
            steady[name] = (err[k], JOINTS[k])
        rig.move(POSES["reaching down"], 2.0)
        rig.cycle(1.0, lambda t: POSES["reaching down"])
        track: List[float] = []
        rig.move(POSES["outstretched"], 3.0, track)
        ff = rig.hw.gravity_feed_forward
        model_us = float("nan")
        if ff is not None:
            n = 5000
            t0 = time.perf_counter()
            for _ in range(n):
                ff.update()
            model_us = (time.perf_counter() - t0) / n * 1e6
        sh = rig.shoulder
        return {"steady": steady, "track_max": max(track), "sh_max": max(sh),
                "sh_rms": math.sqrt(sum(e * e for e in sh) / len(sh)),
                "track_rms": math.sqrt(sum(e * e for e in track) / len(track)),
                "write_us": statistics.median(rig.write_times) * 1e6, "ff_update_us": model_us}
    finally:
        rig.close()


def results_ff(results: dict, labels: List[str]) -> List[str]:
    return ["-" if math.isnan(results[lb]["ff_update_us"]) else f"{results[lb]['ff_update_us']:.1f}"
            for lb in labels]


def main() -> int:
    results = {}
    for label, compensate, payload in CONFIGS:
        sys.stderr.write(f"bench_gravity: {label} ...\n")
        results[label] = run_config(compensate, payload)
    labels = [c[0] for c in CONFIGS]
    print("Steady error (largest over the 6 arm joints, rad; joint in brackets)\n")
    print("| pose | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    for name in POSES:
        cells = []
        for lb in labels:
            e, j = results[lb]["steady"][name]
            cells.append(f"{e:.4f} ({j.replace('_joint', '')})")
        print(f"| {name} | " + " | ".join(cells) + " |")
    print("\nTracking error along a MoveIt-shaped trajectory (quintic, 3 s, reaching down -> outstretched;"
          " position commands only, as a position JointTrajectoryController sends)\n")
    print("| | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    print("| max (rad) | " + " | ".join(f"{results[lb]['track_max']:.4f}" for lb in labels) + " |")
    print("| RMS (rad) | " + " | ".join(f"{results[lb]['track_rms']:.4f}" for lb in labels) + " |")
    print("| shoulder_lift max (rad) | " + " | ".join(f"{results[lb]['sh_max']:.4f}" for lb in labels) + " |")
    print("| shoulder_lift RMS (rad) | " + " | ".join(f"{results[lb]['sh_rms']:.4f}" for lb in labels) + " |")
    print("\nPer-cycle cost (7 motors, 9 URDF joints)\n")
    print("| | " + " | ".join(labels) + " |")
    print("|---|" + "---|" * len(labels))
    print("| write() median (µs) | " + " | ".join(f"{results[lb]['write_us']:.1f}" for lb in labels) + " |")
    ff_us = results_ff(results, labels)
    print("| feed-forward update alone (µs) | " + " | ".join(ff_us) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
