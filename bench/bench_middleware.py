#!/usr/bin/env python3
"""Benchmark: middleware + simulated firmware vs. the plain python-can floor.

For 6, 12 and 24 simulated MIT motors on one virtual channel at 500 Hz and 1 kHz it prints the
achieved cycle rate, cycle-period jitter (|period - nominal|: p50 / p99 / max), late cycles (started
more than max(half a period, 2 ms) late, the middleware's rule), host stalls (held up >= 20 ms, the
middleware's count), CPU time of the whole process per cycle, and frames/s -- and, in the
same run, the *floor*: a bare python-can loop with the same schedule sending the same N command
frames and receiving N 8-byte replies from a bare echo responder thread (no middleware, no codec,
no physics).  "ratio" is middleware CPU per cycle / floor CPU per cycle.

The virtual bus has no bandwidth model: at 1 Mbit/s the wire itself fits ~4000/N Hz (a request and
its reply are two frames of ~125 bits with stuffing, ~0.25 ms per motor), so 12 motors at 1 kHz are
far beyond a real single bus; the point here is that Python is not the limit.

Usage: PYTHONPATH=src python3 bench/bench_middleware.py [--duration 3] [--motors 6 12 24] [--rates 500 1000]
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from typing import Dict, List

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import can  # noqa: E402

from rospy_control.testing.sim_rig import simulated_middleware  # noqa: E402
from rospy_control.middleware import ControlMode  # noqa: E402
from rospy_control.devices.mit import codec as mit  # noqa: E402
from rospy_control.bus.timing import late_threshold  # noqa: E402


def hardware_xml(n: int, rate: float, sim_rate: float) -> str:
    units = "".join(
        f'<unit name="m{i}" type="rospy_control/Motor" channel="bus" can_id="{i}">'
        f'<simulation inertia="0.01" damping="0.05" friction="0.02"/></unit>' for i in range(1, n + 1))
    return (f'<hardware name="bench"><channel name="bus" interface="socketcan" channel="can0" rate="{rate}" '
            f'fault_timeout="0.5"><simulation rate="{sim_rate}"/></channel>{units}</hardware>')


def percentile(sorted_values: List[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    k = min(len(sorted_values) - 1, max(0, int(round(q * (len(sorted_values) - 1)))))
    return sorted_values[k]


def summarise(starts: List[float], rate: float, cpu: float, wall: float, cycles: int, late: int,
              frames: int) -> Dict[str, float]:
    period = 1.0 / rate
    dev = sorted(abs((b - a) - period) for a, b in zip(starts, starts[1:]))
    return {
        "rate": cycles / wall, "p50": percentile(dev, 0.5) * 1e6, "p99": percentile(dev, 0.99) * 1e6,
        "max": (dev[-1] if dev else float("nan")) * 1e6, "late": late,
        "late_pct": 100.0 * late / max(1, cycles),
        "cpu_us": cpu / max(1, cycles) * 1e6, "fps": frames / wall, "cycles": cycles,
    }


def run_middleware(n: int, rate: float, duration: float, sim_rate: float) -> Dict[str, float]:
    mw = simulated_middleware(hardware_xml(n, rate, sim_rate))
    with mw:
        ch = mw.channels["bus"]
        motors = mw.motors()

        def control(seconds: float, k: int = 0) -> int:
            """A 100 Hz "controller" changing the setpoints (it keeps the command watchdog quiet)."""
            end = time.perf_counter() + seconds
            while time.perf_counter() < end:
                k += 1
                for i, m in enumerate(motors):
                    m.set_command(ControlMode.POSITION, 0.1 * i + 0.001 * (k % 100))
                mw.snapshot()
                time.sleep(0.01)
            return k

        k = control(0.3)  # settle
        c0, late0, stalls0 = ch.cycles, ch.late_cycles, ch.timing.stalls
        trips0 = sum(m.watchdog_trips for m in motors)
        f0 = ch.frames_sent + ch.frames_received
        cpu0, t0 = time.process_time(), time.perf_counter()
        control(duration, k)
        cpu1, t1 = time.process_time(), time.perf_counter()
        c1, late1, stalls1 = ch.cycles, ch.late_cycles, ch.timing.stalls
        f1 = ch.frames_sent + ch.frames_received
        starts = ch.cycle_starts()[-(c1 - c0):]
        st = mw.statistics()
        timeouts = sum(st["channels"]["bus"]["reply_timeouts"].values())
        trips = sum(m.watchdog_trips for m in motors) - trips0
    res = summarise(starts, rate, cpu1 - cpu0, t1 - t0, c1 - c0, late1 - late0, f1 - f0)
    res["timeouts"] = timeouts
    res["stalls"] = stalls1 - stalls0
    res["watchdog_trips"] = trips
    return res


def run_floor(n: int, rate: float, duration: float) -> Dict[str, float]:
    """Plain python-can: same schedule, N sends + N receives per cycle, bare echo responder."""
    chan = f"bench_floor_{n}_{rate}_{time.monotonic_ns()}"
    master = can.Bus(interface="virtual", channel=chan, receive_own_messages=False)
    echo = can.Bus(interface="virtual", channel=chan, receive_own_messages=False)
    lim = mit.MitLimits()
    cmds = [can.Message(arbitration_id=i, is_extended_id=False,
                        data=mit.pack_command(0.1 * i, 0, 20, 0.5, 0, lim)) for i in range(1, n + 1)]
    replies = {i: can.Message(arbitration_id=0, is_extended_id=False,
                              data=mit.pack_reply(i, 0.1 * i, 0, 0, lim, 8)) for i in range(1, n + 1)}
    running = True

    def responder():
        recv, send = echo.recv, echo.send
        while running:
            msg = recv(0.02)
            if msg is not None:
                send(replies[msg.arbitration_id])

    th = threading.Thread(target=responder, daemon=True)
    th.start()
    period = 1.0 / rate
    window = 0.8 * period
    perf, sleep = time.perf_counter, time.sleep
    send, recv = master.send, master.recv
    starts: List[float] = []
    cycles = late = frames = 0
    warm_until = perf() + 0.3
    cpu0 = t_start = None
    next_t = perf()
    end = None
    while True:
        delay = next_t - perf()
        if delay > 0:
            sleep(delay)
        t0 = perf()
        if cpu0 is None and t0 >= warm_until:
            cpu0, t_start, end = time.process_time(), t0, t0 + duration
        if end is not None and t0 >= end:
            break
        measuring = cpu0 is not None
        if measuring:
            if t0 - next_t > late_threshold(period):
                late += 1
            starts.append(t0)
        while recv(0.0) is not None:
            frames += measuring
        for m in cmds:
            send(m, 0.001)
        pending = n
        deadline = t0 + window
        while pending:
            remaining = deadline - perf()
            if remaining <= 0:
                break
            msg = recv(remaining)
            if msg is None:
                break
            pending -= 1
        if measuring:
            cycles += 1
            frames += n + (n - pending)
        next_t += period
        now = perf()
        if now > next_t:
            next_t = now
    cpu1, t1 = time.process_time(), perf()
    running = False
    th.join()
    master.shutdown()
    echo.shutdown()
    return summarise(starts, rate, cpu1 - cpu0, t1 - t_start, cycles, late, frames)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--duration", type=float, default=3.0, help="measured seconds per run (default 3)")
    ap.add_argument("--motors", type=int, nargs="+", default=[6, 12, 24])
    ap.add_argument("--rates", type=float, nargs="+", default=[500.0, 1000.0])
    ap.add_argument("--sim-rate", type=float, default=2000.0, help="simulator integration rate (Hz)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # the bus-load warning is expected here (virtual bus)
    print(f"python {sys.version.split()[0]}, python-can {can.__version__}, {os.cpu_count()} CPUs, "
          f"{args.duration:g} s per run, simulator at {args.sim_rate:.0f} Hz")
    hdr = (f"{'N':>3} {'Hz':>5} {'what':<10} {'rate':>7} {'p50us':>6} {'p99us':>6} {'maxus':>7} {'late':>5} "
           f"{'late%':>6} {'cpu us/cyc':>10} {'frames/s':>9} {'ratio':>6} {'stalls':>6}")
    print(hdr)
    print("-" * len(hdr))
    for n in args.motors:
        for rate in args.rates:
            floor = run_floor(n, rate, args.duration)
            mwr = run_middleware(n, rate, args.duration, args.sim_rate)
            for label, r in (("floor", floor), ("middleware", mwr)):
                ratio = r["cpu_us"] / floor["cpu_us"]
                stalls = str(r["stalls"]) if "stalls" in r else "-"
                print(f"{n:>3} {rate:>5.0f} {label:<10} {r['rate']:>7.1f} {r['p50']:>6.0f} {r['p99']:>6.0f} "
                      f"{r['max']:>7.0f} {r['late']:>5d} {r['late_pct']:>6.2f} {r['cpu_us']:>10.1f} "
                      f"{r['fps']:>9.0f} {ratio:>6.2f} {stalls:>6}")
            if mwr["watchdog_trips"] or mwr["timeouts"]:
                print(f"    middleware: {mwr['timeouts']} missed replies, "
                      f"{mwr['watchdog_trips']} watchdog trips")
            sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
