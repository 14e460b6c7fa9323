#!/usr/bin/env python3
"""Benchmark: the example arm on each motor protocol (``config/arm_hardware*.xml``), bus side.

For every example arm configuration that ships (MIT mode, and each protocol's
``arm_hardware_<protocol>.xml``), the middleware runs the arm against its simulated devices on a
``virtual`` bus in this process (the simulated firmware's thread is measured apart), holding every
joint with position commands from a 100 Hz "controller", and prints per channel:

* **bus thread CPU per cycle** (µs): the channel's read/write thread's own CPU time (from
  ``/proc/self/task/<tid>/stat``) divided by its cycles, at the XML's rate;
* **highest rate reached** (Hz): the channel rate is raised step by step (the XML's, then 500, 1000,
  1500, 2000 Hz); the highest step whose cycles ran at >= 97 % of the nominal rate with under 1 %
  late cycles and no unit in FAULT.  The virtual bus has no bandwidth model, so this is where
  Python, not the wire, becomes the limit; the protocol's own bus-load estimate (``bus_load``, at
  1 Mbit/s) says where a real bus would be.

Usage: source tools/env.sh && /usr/bin/python3 bench/bench_protocols.py [--duration 2] [--xml FILE ...]
"""
from __future__ import annotations

import argparse
import glob
import logging
import os
import re
import sys
import time
from typing import Dict, List, Optional

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from rospy_control.testing.sim_rig import simulated_middleware  # noqa: E402
from rospy_control.exceptions import ConfigError  # noqa: E402
from rospy_control.middleware import ControlMode  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
RATES = (500.0, 1000.0, 1500.0, 2000.0)
_TICK = os.sysconf("SC_CLK_TCK")


def example_arms() -> List[str]:
    return sorted(glob.glob(os.path.join(ROOT, "config", "arm_hardware*.xml")))


def protocol_of(path: str) -> str:
    m = re.match(r"arm_hardware_?(.*)\.xml$", os.path.basename(path))
    return (m.group(1) if m and m.group(1) else "mit")


def thread_cpu(native_id: int) -> float:
    """CPU seconds (user + system) of one thread of this process."""
    with open(f"/proc/self/task/{native_id}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / _TICK


def with_rate(xml_text: str, rate: Optional[float]) -> str:
    """The XML with every channel's ``rate`` set (None: unchanged)."""
    if rate is None:
        return xml_text
    from lxml import etree
    root = etree.fromstring(xml_text.encode())
    for ch in root.iter("channel"):
        ch.set("rate", f"{rate:g}")
    return etree.tostring(root).decode()


def run_once(path: str, rate: Optional[float], duration: float) -> Dict[str, dict]:
    """Run the arm of ``path`` for ``duration`` s; per channel: rate, cpu_us, late %, faults."""
    with open(path) as f:
        text = f.read()
    mw = simulated_middleware(_parse(with_rate(text, rate), path), simulate=True)
    out: Dict[str, dict] = {}
    with mw:
        motors = mw.motors()
        snap = mw.snapshot()
        hold = {m.name: (snap[m.name].position if m.name in snap else 0.0) for m in motors}
        time.sleep(0.3)                                  # start-up done
        base = {}
        for name, ch in mw.channels.items():
            th = ch.thread
            base[name] = (th.native_id if th else None, ch.cycles, ch.late_cycles, time.perf_counter(),
                          thread_cpu(th.native_id) if th else 0.0)
        end = time.perf_counter() + duration
        while time.perf_counter() < end:
            for m in motors:
                try:
                    m.set_command(ControlMode.POSITION, hold[m.name])
                except Exception:  # noqa: BLE001 - a device without position mode is held by its watchdog
                    pass
            time.sleep(0.01)
        faults = mw.faults()
        for name, ch in mw.channels.items():
            tid, cycles0, late0, t0, cpu0 = base[name]
            wall = time.perf_counter() - t0
            cycles = ch.cycles - cycles0
            cpu = (thread_cpu(tid) - cpu0) if tid else float("nan")
            out[name] = {"nominal": ch.rate, "rate": cycles / wall, "cpu_us": cpu / max(1, cycles) * 1e6,
                         "late_pct": 100.0 * (ch.late_cycles - late0) / max(1, cycles),
                         "faults": sorted(u.name for u in ch.units if u.name in faults),
                         "bus_load": mw.bus_load().get(name, float("nan"))}
    return out


def _parse(text: str, path: str):
    from rospy_control.hardware_config.document import parse_hardware_xml
    # parse the text, but keep the file's folder for relative paths inside it (an EDS file, say)
    cwd = os.getcwd()
    os.chdir(os.path.dirname(os.path.abspath(path)))
    try:
        return parse_hardware_xml(text)
    finally:
        os.chdir(cwd)


def run(paths: Optional[List[str]] = None, duration: float = 2.0) -> List[dict]:
    rows = []
    for path in paths or example_arms():
        proto = protocol_of(path)
        try:
            nominal = run_once(path, None, duration)
        except (ConfigError, ImportError, OSError) as err:
            rows.append({"protocol": proto, "file": os.path.basename(path),
                         "error": str(err).splitlines()[0]})
            continue
        best: Dict[str, float] = {}
        for rate in RATES:
            res = run_once(path, rate, duration)
            for ch, r in res.items():
                if r["rate"] >= 0.97 * rate and r["late_pct"] < 1.0 and not r["faults"]:
                    best[ch] = max(best.get(ch, 0.0), rate)
        for ch, r in nominal.items():
            best.setdefault(ch, 0.0)
            rows.append({"protocol": proto, "file": os.path.basename(path), "channel": ch,
                         "nominal_hz": r["nominal"], "rate_hz": r["rate"], "cpu_us_per_cycle": r["cpu_us"],
                         "late_pct": r["late_pct"], "faults": r["faults"],
                         "bus_load_pct": 100.0 * r["bus_load"],
                         "highest_rate_hz": best[ch]})
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=2.0)
    ap.add_argument("--xml", nargs="*", help="hardware XML files (default: config/arm_hardware*.xml)")
    args = ap.parse_args()
    logging.basicConfig(level=logging.WARNING)
    print(f"{'protocol':10} {'channel':8} {'rate Hz':>9} {'reached':>8} {'bus µs/cyc':>10} {'late %':>7} "
          f"{'load %':>7} {'max Hz':>7}  faults")
    for r in run(args.xml, args.duration):
        if "error" in r:
            print(f"{r['protocol']:10} {r['file']}: {r['error']}")
            continue
        print(f"{r['protocol']:10} {r['channel']:8} {r['nominal_hz']:9.0f} {r['rate_hz']:8.1f} "
              f"{r['cpu_us_per_cycle']:10.1f} {r['late_pct']:7.2f} {r['bus_load_pct']:7.1f} "
              f"{r['highest_rate_hz']:7.0f}  {','.join(r['faults']) or '-'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
