"""``hw_check record XML --duration S --csv FILE [--plot FILE.png] [--step UNIT RAD] [--yes]``: what
the actuators do, at the bus rate, for tuning.

The motors are enabled and each holds where it is (as ``hw_check --hold``); every bus cycle's
snapshot is written to the CSV file, one row per snapshot: the time and, per actuator, the position,
velocity and effort measured, the position commanded, and the current, bus voltage and temperature
where its protocol reports them (empty where not).  With ``--step UNIT RAD`` the unit's position
command steps by RAD (joint side, as the driver's position) a quarter of the way into the recording,
and its response is measured and printed: rise time (10 % to 90 % of the step), overshoot, settling
time (into a band of 2 % of the step, or the position resolution, whichever is larger, and staying
there), and the error at the end.  ``--plot`` draws the positions and commands (and the step's
measures) with matplotlib, when it is installed.

A step moves a joint, so the command asks first (``--yes`` skips the question); it refuses while
frames to the units' command ids from another host are seen on the bus.

Exit status: 0 recorded; 1 configuration error, refused or a bad argument; 2 communication error; 3
a unit did not come up.
"""
from __future__ import annotations

import argparse
import csv
import math
import sys
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, TextIO, Tuple

from rospy_control.adapter.tools.hw_check_zero import _ask, _reading, run_started, sim_arguments, simulate_of
from rospy_control.devices import ActuatorUnit, ControlMode
from rospy_control.exceptions import HardwareError
from rospy_control.middleware.middleware import Middleware

__all__ = ["main", "StepResponse", "step_response"]

#: the values recorded per actuator, in the CSV's column order
FIELDS = ("position", "velocity", "effort", "command", "current", "bus_voltage", "temperature")


class StepResponse(NamedTuple):
    """A step's measures (s, %, rad); None where the response never got there."""

    step: float
    rise_time: Optional[float]
    overshoot: float
    settling_time: Optional[float]
    final_error: float


def step_response(t: Sequence[float], y: Sequence[float], t_step: float, start: float, target: float,
                  band: float = 0.02, resolution: float = 0.0) -> StepResponse:
    """The measures of the response ``y(t)`` to a step from ``start`` to ``target`` at ``t_step``."""
    step = target - start
    if step == 0.0:
        raise ValueError("a step of 0 rad has no response to measure")
    after = [(ti - t_step, (yi - start) / step) for ti, yi in zip(t, y) if ti >= t_step]
    if not after:
        raise ValueError("no sample after the step")
    rise10 = next((ti for ti, f in after if f >= 0.1), None)
    rise90 = next((ti for ti, f in after if f >= 0.9), None)
    rise = rise90 - rise10 if rise10 is not None and rise90 is not None else None
    overshoot = max(0.0, max(f for _t, f in after) - 1.0) * 100.0
    tol = max(band, resolution / abs(step))
    settling: Optional[float] = None
    for ti, f in reversed(after):
        if abs(f - 1.0) > tol:
            break
        settling = ti
    if settling is not None and abs(after[0][1] - 1.0) <= tol:
        settling = 0.0
    return StepResponse(step, rise, overshoot, settling, y[-1] - target)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hw_check record", description=__doc__.split("\n\n")[1])
    p.add_argument("config", help="hardware XML file")
    p.add_argument("--duration", type=float, required=True, help="seconds to record")
    p.add_argument("--csv", required=True, help="the CSV file to write")
    p.add_argument("--plot", help="also draw the recording into this PNG file (needs matplotlib)")
    p.add_argument("--step", nargs=2, metavar=("UNIT", "RAD"), help="step UNIT's position command by RAD")
    p.add_argument("--yes", action="store_true", help="do not ask before the step")
    sim_arguments(p)
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for the units to come up (default 10)")
    return p


def _num(value: Optional[float]) -> str:
    return "" if value is None or not math.isfinite(value) else f"{value:.6g}"


def main(argv: List[str], out: TextIO = sys.stdout, answer: Optional[Callable[[], str]] = None) -> int:
    args = _parser().parse_args(argv)
    ask = answer or sys.stdin.readline
    if not (math.isfinite(args.duration) and args.duration > 0):
        sys.stderr.write(f"hw_check record: --duration {args.duration} is not a positive number of seconds\n")
        return 1
    simulate = simulate_of(args)
    actuators: List[ActuatorUnit] = []
    stepping: List[Tuple[ActuatorUnit, float]] = []

    def prepare(mw: Middleware) -> Optional[int]:
        actuators.extend(u for u in mw.units() if isinstance(u, ActuatorUnit))
        if not args.step:
            return None
        what = f"hw_check record: --step {' '.join(args.step)}"
        try:
            found = mw.unit(args.step[0])
            step = float(args.step[1])
        except (HardwareError, ValueError) as err:
            sys.stderr.write(f"{what}: {err}\n")
            return 1
        if not isinstance(found, ActuatorUnit) or ControlMode.POSITION not in found.CAPABILITIES.modes \
                or not math.isfinite(step) or step == 0.0:
            sys.stderr.write(f"{what}: needs an actuator with a position command and a non-zero step in "
                             "rad\n")
            return 1
        stepping.append((found, step))
        return None

    def body(mw: Middleware) -> int:
        holds: Dict[str, float] = {}
        for u in actuators:
            p = _reading(mw, u, args.timeout)
            if p is None:
                sys.stderr.write(f"hw_check record: '{u.name}' did not come up within {args.timeout:g} s: "
                                 f"{mw.faults().get(u.name, 'no reply')}\n")
                return 3
            holds[u.name] = p
            if ControlMode.POSITION in u.CAPABILITIES.modes:
                u.set_command(ControlMode.POSITION, p)
        step_unit, step = stepping[0] if stepping else (None, 0.0)
        if step_unit is not None:
            start = holds[step_unit.name]
            question = (f"step '{step_unit.name}' from {start:.4f} to {start + step:.4f} rad during the "
                        "recording?")
            if not args.yes and not _ask(question, out, ask):
                out.write("nothing recorded\n")
                return 1
        rows, t_step = _record(mw, actuators, holds, args.duration, step_unit, step)
        _write_csv(args.csv, actuators, rows)
        out.write(f"{len(rows)} samples of {len(actuators)} actuator(s) in {args.duration:g} s written to "
                  f"{args.csv}\n")
        response = None
        if step_unit is not None:
            response = _report_step(out, step_unit, actuators, rows, t_step, holds[step_unit.name], step)
        if args.plot:
            _plot(args.plot, actuators, rows, step_unit, t_step, response, out)
        return 0

    return run_started("hw_check record", args.config, simulate, prepare, body)


Row = Tuple[float, List[Tuple[float, ...]]]


def _record(mw: Middleware, actuators: List[ActuatorUnit], holds: Dict[str, float], duration: float,
            step_unit: Optional[ActuatorUnit], step: float) -> Tuple[List[Row], float]:
    """One row per new snapshot (each bus cycle), until ``duration``; the step a quarter in."""
    rows: List[Row] = []
    commands = dict(holds)
    t0 = time.monotonic()
    t_step = duration / 4.0 if step_unit is not None else math.inf
    stepped = False
    last = None
    period = 0.5 / max((ch.rate for ch in mw.channels.values()), default=500.0)
    while True:
        now = time.monotonic() - t0
        if now >= duration:
            break
        if not stepped and now >= t_step and step_unit is not None:
            commands[step_unit.name] = holds[step_unit.name] + step
            step_unit.set_command(ControlMode.POSITION, commands[step_unit.name])
            t_step, stepped = now, True
        snap = mw.snapshot()
        stamp = max((s.stamp for s in (snap.get(u.name) for u in actuators) if s is not None), default=0.0)
        if stamp != last:
            last = stamp
            values: List[Tuple[float, ...]] = []
            for u in actuators:
                s = snap[u.name]
                values.append((s.position, s.velocity, s.effort, commands.get(u.name, math.nan),
                               s.current if s.current is not None else math.nan,
                               s.bus_voltage if s.bus_voltage is not None else math.nan,
                               s.temperature if s.temperature is not None else math.nan))
            rows.append((now, values))
        time.sleep(period)
    return rows, t_step


def _write_csv(path: str, actuators: List[ActuatorUnit], rows: List[Row]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["time"] + [f"{u.name}.{field}" for u in actuators for field in FIELDS])
        for t, values in rows:
            w.writerow([f"{t:.6f}"] + [_num(v) for vs in values for v in vs])


def _report_step(out: TextIO, unit: ActuatorUnit, actuators: List[ActuatorUnit], rows: List[Row],
                 t_step: float, start: float, step: float) -> Optional[StepResponse]:
    i = actuators.index(unit)
    t = [r[0] for r in rows]
    y = [r[1][i][0] for r in rows]
    try:
        r = step_response(t, y, t_step, start, start + step,
                          resolution=getattr(unit, "POSITION_RESOLUTION", 0.0) or 0.0)
    except ValueError as err:
        out.write(f"step of '{unit.name}': {err}\n")
        return None

    def ms(x: Optional[float]) -> str:
        return "never" if x is None else f"{1000.0 * x:.1f} ms"
    out.write(f"step of '{unit.name}' by {step:g} rad: rise time (10-90 %) {ms(r.rise_time)}, overshoot "
              f"{r.overshoot:.1f} %, settling time (2 %) {ms(r.settling_time)}, error at the end "
              f"{r.final_error:+.4f} rad\n")
    return r


def _plot(path: str, actuators: List[ActuatorUnit], rows: List[Row], step_unit: Optional[ActuatorUnit],
          t_step: float, response: Optional[StepResponse], out: TextIO) -> None:
    try:
        import matplotlib  # type: ignore[import-not-found]
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt  # type: ignore[import-not-found]
    except ImportError:
        out.write(f"--plot {path}: matplotlib is not installed (python3-matplotlib); the CSV has the data\n")
        return
    shown = [step_unit] if step_unit is not None else actuators
    fig, ax = plt.subplots(figsize=(9, 5))
    t = [r[0] for r in rows]
    for u in shown:
        i = actuators.index(u)
        ax.plot(t, [r[1][i][0] for r in rows], label=f"{u.name} position")
        ax.plot(t, [r[1][i][3] for r in rows], "--", label=f"{u.name} command")
    if step_unit is not None and math.isfinite(t_step):
        ax.axvline(t_step, color="grey", lw=0.8)
    title = "hw_check record"
    if response is not None:
        rise = "never" if response.rise_time is None else f"{1000 * response.rise_time:.1f} ms"
        settle = "never" if response.settling_time is None else f"{1000 * response.settling_time:.1f} ms"
        title += f": rise {rise}, overshoot {response.overshoot:.1f} %, settling {settle}"
    ax.set_title(title)
    ax.set_xlabel("s")
    ax.set_ylabel("rad")
    ax.legend(fontsize="small")
    fig.savefig(path, dpi=100)
    plt.close(fig)
    out.write(f"plot written to {path}\n")
