"""``hw_check``: bring-up tool for a hardware XML (``scripts/hw_check`` only calls :func:`main`).

Loads the description, prints units, channels and the bus-load estimate, starts the middleware
(enabling the motors unless ``--passive``), shows a live table of every unit's state and fault for
``--duration`` seconds, optionally resets the units in FAULT (``--reset``: each is re-enabled and
must answer validly, else it is reported with the reason), prints the statistics -- including how
late this host ran the bus threads (late cycles, stalls, the longest stall), which is a host problem,
not a hardware one -- and shuts down cleanly (exit-motor-mode to every motor).

The command watchdog is off here (``watchdog_mode`` none): ``--hold`` gives each motor one command
that is meant to stay.

Simulated channels (``--sim``, or ``<simulation enabled="true">`` in the XML) talk to simulated
firmware in a process of its own, as real firmware runs on its own processors and as the driver does
with ``sim:=true``: hw_check starts ``python3 -m rospy_control.simulator.process`` with a bus key
of its own (``hw_check-<pid>``) and stops it at exit; if that process cannot run or does not answer,
hw_check says so and falls back to the in-process simulator.  ``--sim-in-process`` runs the firmware
inside hw_check on a ``virtual`` bus instead.  ``--urdf <file>`` gives the simulated motors the
static gravity load of the URDF's links at the current pose (without it, only constant loads).

Subcommands: ``hw_check zero XML UNIT [--save] [--yes] [--sim]`` makes a unit's current position its
zero (:mod:`.hw_check_zero`); ``hw_check home XML [UNIT...] [--yes] [--sim]`` homes the units that
can (:mod:`.hw_check_home`); ``hw_check scan XML [--sim] [--listen S]`` lists what answers on each
channel and names every difference from the XML (:mod:`.hw_check_scan`); ``params``, ``backup`` /
``restore`` and ``set-id`` read and write a device's parameters and id (:mod:`.hw_check_params`,
:mod:`.hw_check_backup`, :mod:`.hw_check_set_id`); ``hw_check record XML --duration S --csv FILE
[--step UNIT RAD]`` records the actuators at the bus rate and measures a step (:mod:`.hw_check_record`).

Exit status: 0 all good; 1 configuration error; 2 communication error (bus cannot be opened, error on
a channel thread); 3 units in FAULT at the end (also after a failed ``--reset``); 130 interrupted.
"""
from __future__ import annotations

import argparse
import importlib
import os
import select
import subprocess
import sys
import time
from typing import Dict, List, Optional, TextIO

from rospy_control.exceptions import CommunicationError, ConfigError, HardwareError
from rospy_control.middleware.middleware import Middleware
from rospy_control.simulator import SimulatedRobot
from rospy_control.devices import (
    ActuatorUnit, CanUnit, ContactSensor, ControlMode, Encoder, ForceTorqueSensor, ImuSensor, Motor,
)

#: ``hw_check SUBCOMMAND ...``: the module of this package whose ``main(argv, out)`` runs it (or
#: ``module:function`` for another function of that module)
SUBCOMMANDS = {
    "zero": "hw_check_zero",
    "home": "hw_check_home",
    "scan": "hw_check_scan",
    "params": "hw_check_params",
    "backup": "hw_check_backup",
    "restore": "hw_check_backup:restore_main",
    "set-id": "hw_check_set_id",
    "record": "hw_check_record",
}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hw_check", description=__doc__.split("\n\n")[1],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("config", help="hardware XML file (e.g. config/arm_hardware.xml)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--sim", action="store_true", help="simulate every channel (no hardware needed)")
    mode.add_argument("--hardware", action="store_true",
                      help="use the real interfaces even where the XML enables <simulation>")
    p.add_argument("--sim-process", action="store_true",
                   help="run the simulated firmware in a process of its own (udp_multicast bus; the default)")
    p.add_argument("--sim-in-process", action="store_true",
                   help="run the simulated firmware inside hw_check (virtual bus)")
    p.add_argument("--urdf", help="URDF file: the simulated motors feel its links' weights (gravity)")
    p.add_argument("--passive", action="store_true", help="do not enable motors or poll sensors; only listen")
    p.add_argument("--hold", action="store_true",
                   help="after enabling, hold each motor at its current position")
    p.add_argument("--reset", action="store_true",
                   help="after the live table, reset every unit in FAULT and report which recovered "
                        "(exit status 3 if some still fail; ignored with --passive)")
    p.add_argument("--duration", type=float, default=3.0, help="seconds to show the live table (default 3)")
    p.add_argument("--refresh", type=float, default=0.25, help="table refresh period in seconds")
    return p


def describe(mw: Middleware, out: TextIO, simulator: Optional[SimulatedRobot] = None) -> None:
    """Print channels, units and the bus-load estimate (channels of ``simulator`` said simulated)."""
    out.write(f"hardware '{mw.name}' from {mw.source}\n\nchannels:\n")
    for name, ch in mw.channels.items():
        simulated = simulator is not None and simulator.is_simulated(name)
        sim = "simulated" if simulated else f"{ch.interface}/{ch.channel}"
        load = ch.bus_load()
        warn = "  <-- exceeds max_bus_load %.0f %%, fits up to %.0f Hz" % (
            100 * ch.max_bus_load, ch.max_rate(ch.max_bus_load)) if load > ch.max_bus_load else ""
        out.write(f"  {name:<8} {sim:<26} {ch.bitrate / 1000:.0f} kbit/s  {ch.rate:.0f} Hz  "
                  f"{len(ch.units)} units  bus load ~{100 * load:.0f} %{warn}\n")
    out.write("\nunits:\n")
    for u in mw.units():
        extra = ""
        if isinstance(u, ActuatorUnit):
            extra = f"joint={u.joint}" if u.joint else ""
            if isinstance(u, Motor):  # the MIT ranges, motor side
                extra += f" P[{u.limits.p_min:g},{u.limits.p_max:g}] T[{u.limits.t_min:g},{u.limits.t_max:g}]"
            else:
                lo, hi = u.effort_range
                extra += f" T[{lo:g},{hi:g}]"
        elif isinstance(u, CanUnit) and hasattr(u, "frame_id"):
            extra = f"frame_id={u.frame_id}"
        can_id = f"0x{u.can_id:03X}" if isinstance(u, CanUnit) else "-"
        group = u.group.name if u.group is not None else "-"
        out.write(f"  {u.name:<22} {type(u).__name__:<18} {u.channel_name or '-':<6} id={can_id} "
                  f"group={group:<6} {extra}\n")
    out.write("\n")


def _row(u, s) -> str:
    status = f"FAULT: {s.fault_reason}" if s.fault else ("ok" if s.received else "no data")
    if isinstance(u, ActuatorUnit):
        temp = "-" if s.temperature is None else f"{s.temperature:.0f}"
        en = "on " if s.enabled else "off"
        return (f"{u.name:<22} pos {s.position:+8.3f} vel {s.velocity:+8.3f} eff {s.effort:+7.2f} "
                f"T {temp:>3} {en} {s.mode.name:<8} {status}")
    if isinstance(u, ImuSensor):
        a = s.linear_acceleration
        return (f"{u.name:<22} acc {a[0]:+6.2f} {a[1]:+6.2f} {a[2]:+6.2f}  "
                f"q {s.orientation[3]:+.3f}w  {status}")
    if isinstance(u, ContactSensor):
        return f"{u.name:<22} contact {'yes' if s.in_contact else 'no ':<3} force {s.force:7.1f} N  {status}"
    if isinstance(u, ForceTorqueSensor):
        return (f"{u.name:<22} F {s.force[0]:+7.1f} {s.force[1]:+7.1f} {s.force[2]:+7.1f} "
                f"T {s.torque[0]:+6.2f} {s.torque[1]:+6.2f} {s.torque[2]:+6.2f}  {status}")
    if isinstance(u, Encoder):
        return f"{u.name:<22} pos {s.position:+8.3f} vel {s.velocity:+8.3f}  {status}"
    return f"{u.name:<22} {status}"


def table(mw: Middleware) -> List[str]:
    """Current state of every unit, one line each."""
    snap = mw.snapshot()
    return [_row(u, snap[u.name]) for u in mw.units() if snap.get(u.name) is not None]


def _when(wall: Optional[float]) -> str:
    return time.strftime("%H:%M:%S", time.localtime(wall)) if wall else "-"


def statistics_lines(mw: Middleware) -> List[str]:
    """One line per channel: cycles, host lateness, frames, errors, missed replies, watchdog trips."""
    lines = []
    for name, st in mw.statistics()["channels"].items():
        missed = {k: v for k, v in st["reply_timeouts"].items() if v}
        trips = {k: v for k, v in st["watchdog_trips"].items() if v}
        stalls = f"{st['stalls']} host stalls"
        if st["stalls"]:
            stalls += (f" (longest {st['longest_stall']:.0f} ms at {_when(st['longest_stall_time'])}, "
                       f"last at {_when(st['last_stall_time'])})")
        lines.append(
            f"  {name}: {st['cycles']} cycles, {st['late_cycles']} late (> {st['late_threshold']:.1f} ms), "
            f"{stalls}, {st['excused_cycles']} not held against the units, {st['overruns']} overruns, "
            f"{st['frames_sent']} frames sent, {st['frames_received']} received, "
            f"{st['bad_frames']} bad, {st['unknown_frames']} unknown, {st['bus_errors']} bus errors, "
            f"missed replies {missed or 'none'}, watchdog trips {trips or 'none'}")
    return lines


def reset_report(mw: Middleware, out: TextIO) -> Dict[str, str]:
    """Reset every unit in FAULT, print which recovered and which still fail; returns the failures."""
    before = mw.faults()
    if not before:
        out.write("\nreset: no unit in FAULT\n")
        return {}
    out.write(f"\nreset: {len(before)} unit(s) in FAULT, probing ...\n")
    out.flush()
    still = mw.reset_faults(before)
    for name in before:
        out.write(f"  {name}: " + (f"STILL IN FAULT: {still[name]}" if name in still else "recovered") + "\n")
    return still


class SimProcess:
    """The simulator process hw_check runs (``python3 -m rospy_control.simulator.process``)."""

    #: seconds to wait for its ``ready`` line
    START_TIMEOUT = 20.0

    def __init__(self, config: str, simulate: Optional[bool], urdf: Optional[str] = None) -> None:
        self.key = f"hw_check-{os.getpid()}"
        cmd = [sys.executable, "-m", "rospy_control.simulator.process", config, "--key", self.key]
        if simulate:
            cmd.append("--sim")
        if urdf:
            cmd += ["--urdf", urdf]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     stdin=subprocess.DEVNULL)

    def wait_ready(self, timeout: float = START_TIMEOUT) -> Optional[str]:
        """None once it printed ``ready``, else why not (it exited, or timed out)."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        end = time.monotonic() + timeout
        line = b""
        while time.monotonic() < end:
            ready, _, _ = select.select([fd], [], [], max(0.0, end - time.monotonic()))
            if not ready:
                break
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            line += chunk
            if b"\n" in line:
                if line.startswith(b"ready"):
                    return None
                break
        if self.proc.poll() is not None:
            assert self.proc.stderr is not None
            err = self.proc.stderr.read().decode("utf-8", "replace").strip().splitlines()
            return f"it exited with status {self.proc.returncode}" + (f": {err[-1]}" if err else "")
        return f"it did not answer within {timeout:g} s"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(3.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr):
            if f is not None:
                f.close()


def _start_sim_process(config: str, simulate: Optional[bool],
                       urdf: Optional[str] = None) -> Optional[SimProcess]:
    """Start the simulator process; None (in-process fallback, said on stderr) if it does not come up."""
    sim: Optional[SimProcess] = None
    try:
        sim = SimProcess(config, simulate, urdf)
        why = sim.wait_ready()
    except OSError as err:
        why = f"{type(err).__name__}: {err}"
    if sim is None or why is not None:
        sys.stderr.write(f"hw_check: the simulator process is unavailable ({why}); running the simulated "
                         "firmware in this process (virtual bus) instead\n")
        if sim is not None:
            sim.stop()
        return None
    return sim


def _simulator_line(simulator: SimulatedRobot) -> str:
    addresses = simulator.addresses()
    if addresses:
        return "simulator: own process, " + "; ".join(f"{n}: {a}" for n, a in addresses.items()) + "\n"
    return "simulator: in this process (virtual bus)\n"


def main(argv: Optional[List[str]] = None, out: TextIO = sys.stdout) -> int:
    """Run the tool; returns the exit status (see the module docstring).  ``hw_check SUBCOMMAND ...``
    runs the subcommand's module of :data:`SUBCOMMANDS` (``main(argv, out)``)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in SUBCOMMANDS:
        name, _, function = SUBCOMMANDS[argv[0]].partition(":")
        module = importlib.import_module(f"rospy_control.adapter.tools.{name}")
        return int(getattr(module, function or "main")(argv[1:], out))
    args = _parser().parse_args(argv)
    simulate = True if args.sim else (False if args.hardware else None)
    try:
        urdf = None
        if args.urdf:  # the in-process simulator (also the fallback) feels the URDF's weights
            with open(args.urdf, encoding="utf-8") as f:
                urdf = f.read()
        # the driver's middleware checks the configuration first; the simulated robot (if any channel
        # is simulated), built from the same records, is a peer on its buses
        mw = Middleware.from_xml(args.config)
        robot = SimulatedRobot(mw.config, simulate=simulate, urdf=urdf, urdf_source=args.urdf or "")
    except OSError as err:
        sys.stderr.write(f"hw_check: cannot read the URDF: {err}\n")
        return 1
    except ConfigError as err:
        sys.stderr.write(f"hw_check: configuration error: {err}\n")
        return 1
    simulator = robot if robot.simulators() else None
    describe(mw, out, simulator)
    live = out.isatty()
    status = 0
    sim: Optional[SimProcess] = None
    try:
        if simulator is not None:
            if not args.sim_in_process:
                sim = _start_sim_process(args.config, simulate, args.urdf)
            mw.set_buses(simulator.buses(sim.key if sim is not None else None, wait=5.0))
        mw.set_watchdog_mode("none")
        mw.start(enable_motors=not args.passive)
        if simulator is not None:
            out.write(_simulator_line(simulator))
        if args.hold and not args.passive:
            snap = mw.snapshot()
            for m in mw.motors():
                m.set_command(ControlMode.POSITION, snap[m.name].position)
        end = time.monotonic() + max(0.0, args.duration)
        while True:
            mw.check()
            lines = table(mw)
            if live:
                out.write("\x1b[J" + "\n".join(lines) + "\n" + f"\x1b[{len(lines)}A")
            out.flush()
            if time.monotonic() >= end:
                break
            time.sleep(min(args.refresh, max(0.0, end - time.monotonic())))
        if live:
            out.write(f"\x1b[{len(lines)}B")
        out.write("\n".join(table(mw)) + "\n")
        if args.reset and not args.passive and mw.faults():
            reset_report(mw, out)
            out.write("\n".join(table(mw)) + "\n")
        elif args.reset and not args.passive:
            out.write("\nreset: no unit in FAULT\n")
        out.write("\nstatistics:\n" + "\n".join(statistics_lines(mw)) + "\n")
        faults = mw.faults()
        if faults:
            sys.stderr.write("hw_check: units in FAULT:\n" + "".join(
                f"  {n}: {r}\n" for n, r in faults.items()))
            status = 3
    except CommunicationError as err:
        sys.stderr.write(f"hw_check: communication error: {err}\n")
        status = 2
    except HardwareError as err:
        sys.stderr.write(f"hw_check: hardware error: {err}\n")
        status = 2
    except KeyboardInterrupt:
        sys.stderr.write("hw_check: interrupted\n")
        status = 130
    finally:
        mw.shutdown()
        if sim is not None:
            sim.stop()
    out.write("shut down: exit-motor-mode sent, buses closed\n")
    return status
