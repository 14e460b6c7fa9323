"""``hw_check zero XML UNIT [--save] [--yes]``: the unit's current position becomes its zero.

Where the device's maker documents a set-zero command (MIT mode ``FF..FE``, CubeMars V3's set
origin, DaMiao's ``FF..FE``, RobStride's communication type 6), hw_check enables the bus, sends it
once through the unit's own command cycle and reports the reading before and after.  Where the
device has none (an ODrive axis, a CiA 402 drive: their zero is a parameter of the device or of
the driver), nothing is sent: hw_check reads the position and prints the ``zero_offset`` that makes
it the joint's zero, to put on the unit's ``<unit>`` element in the hardware XML (the file named
there).

``--save`` is never implied, and refused: none of these set-zero commands has a documented
companion that stores it in flash separately (a DaMiao or RobStride zero set this way lasts until
the motor is switched off; the maker's tool stores it).  The command asks before it acts (``--yes``
skips the question), and refuses to act while frames to the unit's command ids from another host
are seen on the bus.

Exit status: 0 done; 1 configuration error or refused; 2 communication error; 3 the unit did not
answer or is in FAULT.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Callable, List, Optional, TextIO, Tuple

from rospy_control.bus.adapter import open_bus
from rospy_control.devices import ActuatorUnit
from rospy_control.exceptions import CommunicationError, ConfigError, HardwareError
from rospy_control.middleware.middleware import Middleware
from rospy_control.simulator import SimulatedRobot

__all__ = ["main", "foreign_commands", "command_ids"]

#: seconds hw_check listens for another host's command frames before it acts
LISTEN = 0.3


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hw_check zero", description=__doc__.split("\n\n")[1])
    p.add_argument("config", help="hardware XML file")
    p.add_argument("unit", help="the unit whose current position becomes its zero")
    p.add_argument("--save", action="store_true", help="also store the zero in the device's flash")
    p.add_argument("--yes", action="store_true", help="do not ask before acting")
    sim_arguments(p)
    p.add_argument("--timeout", type=float, default=3.0, help="seconds to wait for the unit (default 3)")
    return p


def command_ids(ch) -> set:
    """The command ids of the units of channel ``ch``: a frame to one from another host means that
    host is driving these devices."""
    return {i for u in ch.units for i in u.request_ids()}


def sim_arguments(p: argparse.ArgumentParser) -> None:
    """``--sim`` / ``--hardware``, as every subcommand has them."""
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--sim", action="store_true", help="against the simulated devices")
    mode.add_argument("--hardware", action="store_true",
                      help="use the real interfaces even where the XML enables <simulation>")


def simulate_of(args: argparse.Namespace) -> Optional[bool]:
    """What ``--sim`` / ``--hardware`` ask of the XML's ``<simulation>``: True, False or None (as it says)."""
    return True if args.sim else (False if args.hardware else None)


def foreign_commands(mw: Middleware, simulated: List[str], seconds: float = LISTEN) -> List[Tuple[str, int]]:
    """``(channel, id)`` of the frames to a unit's command id seen on the real buses of ``mw`` within
    ``seconds``, before this process sends anything: another host is driving these devices."""
    seen: List[Tuple[str, int]] = []
    for name, ch in mw.channels.items():
        if name in simulated:
            continue
        ids = command_ids(ch)
        bus = open_bus(ch.interface, ch.channel, ch.bitrate, where=f"channel '{name}'")
        try:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                msg = bus.recv(max(0.0, end - time.monotonic()))
                if msg is not None and not msg.is_error_frame and msg.arbitration_id in ids:
                    seen.append((name, msg.arbitration_id))
        finally:
            bus.shutdown()
    return seen


def run_started(prog: str, config: str, simulate: Optional[bool],
                prepare: Callable[[Middleware], Optional[int]], body: Callable[[Middleware], int]) -> int:
    """What ``zero``, ``home`` and ``record`` share: the hardware XML's middleware (and the simulated
    devices where channels are simulated), ``prepare(mw)`` (checks the arguments against it; an exit
    status stops there, nothing sent), the refusal while another host commands the devices, then the
    middleware started with the motors enabled and the watchdog off, ``body(mw)``'s exit status, and
    everything shut down.  Exit 1 configuration error or refused, 2 communication error, 130
    interrupted."""
    try:
        mw = Middleware.from_xml(config)
        robot = SimulatedRobot(mw.config, simulate=simulate)
    except ConfigError as err:
        sys.stderr.write(f"{prog}: configuration error: {err}\n")
        return 1
    status = prepare(mw)
    if status is not None:
        return status
    try:
        simulated = list(robot.simulators())
        foreign = foreign_commands(mw, simulated)
        if foreign:
            sys.stderr.write(f"{prog}: refused: another host is commanding these devices ("
                             + ", ".join(f"channel '{c}' id 0x{i:X}" for c, i in sorted(set(foreign)))
                             + "); stop it first\n")
            return 1
        if simulated:
            mw.set_buses(robot.buses())
        mw.set_watchdog_mode("none")
        mw.start(enable_motors=True)
        return body(mw)
    except CommunicationError as err:
        sys.stderr.write(f"{prog}: communication error: {err}\n")
        return 2
    except KeyboardInterrupt:
        return 130
    finally:
        mw.shutdown()
        robot.stop()


def _ask(question: str, out: TextIO, answer: Callable[[], str]) -> bool:
    out.write(question + " [y/N] ")
    out.flush()
    return answer().strip().lower() in ("y", "yes")


def main(argv: List[str], out: TextIO = sys.stdout, answer: Optional[Callable[[], str]] = None) -> int:
    args = _parser().parse_args(argv)
    ask = answer or sys.stdin.readline
    simulate = simulate_of(args)
    found: List[ActuatorUnit] = []

    def prepare(mw: Middleware) -> Optional[int]:
        try:
            unit = mw.unit(args.unit)
        except HardwareError as err:
            sys.stderr.write(f"hw_check zero: {err}\n")
            return 1
        if not isinstance(unit, ActuatorUnit):
            sys.stderr.write(f"hw_check zero: '{args.unit}' is a {type(unit).__name__}, not an actuator\n")
            return 1
        if args.save:
            sys.stderr.write(f"hw_check zero: --save refused: {_protocol(unit)} documents no command that "
                             "stores a zero set this way in flash; nothing was sent\n")
            return 1
        found.append(unit)
        return None

    def body(mw: Middleware) -> int:
        unit = found[0]
        protocol = _protocol(unit)
        before = _reading(mw, unit, args.timeout)
        if before is None:
            sys.stderr.write(f"hw_check zero: '{unit.name}' did not report its position within "
                             f"{args.timeout:g} s: {mw.faults().get(unit.name, 'no reply')}\n")
            return 3
        out.write(f"'{unit.name}' ({protocol}) reads {before:.6f} rad\n")
        if not unit.CAPABILITIES.set_zero:
            offset = unit.zero_offset + unit.direction * before
            out.write(f"{protocol} has no set-zero command in its maker's document: the zero stays in the "
                      f"hardware XML. For this position to be joint zero, set zero_offset=\"{offset:.6f}\" "
                      f"on <unit name=\"{unit.name}\"> ({unit.where}); nothing was sent\n")
            return 0
        if not args.yes and not _ask(f"make this position the zero of '{unit.name}' (the device's own "
                                     "zero, until it is switched off)?", out, ask):
            out.write("nothing sent\n")
            return 1
        unit.request_zero()
        after = _settled(mw, unit, before, args.timeout)
        out.write(f"set zero sent; '{unit.name}' now reads {after:.6f} rad (the device's zero, plus "
                  f"zero_offset {unit.zero_offset:g} of the XML)\n")
        return 0

    return run_started("hw_check zero", args.config, simulate, prepare, body)


def _protocol(unit: ActuatorUnit) -> str:
    return str(getattr(unit, "PROTOCOL", type(unit).__name__))


def _reading(mw: Middleware, unit: ActuatorUnit, timeout: float) -> Optional[float]:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        s = mw.snapshot().get(unit.name)
        if s is not None and s.received and not s.fault:
            return float(s.position)
        time.sleep(0.01)
    return None


def _settled(mw: Middleware, unit: ActuatorUnit, before: float, timeout: float) -> float:
    """The reading once it moved away from ``before`` (or at the timeout)."""
    end = time.monotonic() + timeout
    now = before
    while time.monotonic() < end:
        now = float(mw.snapshot()[unit.name].position)
        if abs(now - before) > 1e-3 or abs(now) < 1e-3:
            time.sleep(0.05)     # one more cycle for the reading to settle
            return float(mw.snapshot()[unit.name].position)
        time.sleep(0.01)
    return now if math.isfinite(now) else before
