"""``hw_check home XML [UNIT...] [--yes]``: home the units that can, as their ``<homing>`` says.

A CiA 402 drive with ``<homing>`` in the hardware XML homes by its own method (CiA 402-2 homing
mode 6: the method 0x6098, the home offset 0x607C, the speeds 0x6099 and the acceleration 0x609A
of the XML, written by SDO; then the drive runs it and reports attained or error).  Without UNITs,
every unit that can home does, one after the other in the XML's order.  The other protocols have no
homing in their makers' documents (MIT mode, CubeMars V3, DaMiao, RobStride, ODrive CAN Simple: a
zero is set where the joint is, ``hw_check zero``).  The stepper board of the trajectory downlink
homes an axis against its limit switch when the axis has a ``<homing>`` in the board's ``<axis>``, but
hw_check has no path to a board: home it through the driver (``rosservice call /driver/home``).

A homing moves the joint, so the command asks first (``--yes`` skips the question), and refuses to
act while frames to the units' command ids from another host are seen on the bus.  It prints each
unit's reading before and after and the drive's outcome.

Exit status: 0 every unit homed; 1 configuration error, refused, or nothing can home; 2
communication error; 3 a unit did not come up, or its homing failed.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Callable, List, Optional, TextIO

from rospy_control.adapter.tools.hw_check_zero import _ask, _reading, foreign_commands
from rospy_control.devices import ActuatorUnit
from rospy_control.exceptions import CommunicationError, ConfigError, HardwareError
from rospy_control.middleware.middleware import Middleware
from rospy_control.simulator import SimulatedRobot

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hw_check home", description=__doc__.split("\n\n")[1])
    p.add_argument("config", help="hardware XML file")
    p.add_argument("units", nargs="*", help="the units to home (default: every unit with <homing>)")
    p.add_argument("--yes", action="store_true", help="do not ask before moving the joints")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--sim", action="store_true", help="against the simulated devices")
    mode.add_argument("--hardware", action="store_true",
                      help="use the real interfaces even where the XML enables <simulation>")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for the units to come up (default 10)")
    return p


def main(argv: List[str], out: TextIO = sys.stdout, answer: Optional[Callable[[], str]] = None) -> int:
    args = _parser().parse_args(argv)
    answer = answer or sys.stdin.readline
    simulate = True if args.sim else (False if args.hardware else None)
    try:
        mw = Middleware.from_xml(args.config)
        robot = SimulatedRobot(mw.config, simulate=simulate)
    except ConfigError as err:
        sys.stderr.write(f"hw_check home: configuration error: {err}\n")
        return 1
    can: List[ActuatorUnit] = [u for u in mw.units() if isinstance(u, ActuatorUnit) and u.CAPABILITIES.home]
    try:
        picked = [mw.unit(n) for n in args.units] if args.units else list(can)
    except HardwareError as err:
        sys.stderr.write(f"hw_check home: {err}\n")
        return 1
    cannot = [u for u in picked if u not in can]
    units = [u for u in can if u in picked]
    if cannot or not units:
        names = ", ".join(f"'{u.name}' ({getattr(u, 'PROTOCOL', type(u).__name__)})" for u in cannot)
        what = names + " cannot home" if names else "no unit can home"
        sys.stderr.write(f"hw_check home: {what}: only a CiA 402 drive with <homing method=...> in the "
                         "hardware XML does (docs/commissioning.md); those that can here: "
                         f"{', '.join(u.name for u in can) or 'none'}\n"
                         "(a trajectory board's axes with <homing> home through the driver, "
                         "rosservice call /driver/home: hw_check has no path to a board)\n")
        return 1
    status = 0
    try:
        simulated = list(robot.simulators())
        foreign = foreign_commands(mw, simulated)
        if foreign:
            sys.stderr.write("hw_check home: refused: another host is commanding these devices ("
                             + ", ".join(f"channel '{c}' id 0x{i:X}" for c, i in sorted(set(foreign)))
                             + "); stop it first\n")
            return 1
        if simulated:
            mw.set_buses(robot.buses())
        mw.set_watchdog_mode("none")
        mw.start(enable_motors=True)
        for unit in units:
            before = _reading(mw, unit, args.timeout)
            if before is None:
                sys.stderr.write(f"hw_check home: '{unit.name}' did not come up within {args.timeout:g} s: "
                                 f"{mw.faults().get(unit.name, 'no reply')}\n")
                return 3
            h = unit.homing  # type: ignore[attr-defined]
            out.write(f"'{unit.name}' reads {before:.4f} rad; homing method {h.method}, offset {h.offset:g} "
                      f"rad, speeds {h.switch_speed:g} / {h.zero_speed:g} rad/s, timeout {h.timeout:g} s\n")
            if not args.yes and not _ask(f"home '{unit.name}'? The drive moves the joint by its method",
                                         out, answer):
                out.write("nothing sent\n")
                return 1
            number = unit.request_home()
            end = time.monotonic() + h.timeout + 5.0
            state = unit.homing_state()
            while time.monotonic() < end:
                state = unit.homing_state()
                if state.number == number and not state.active:
                    break
                time.sleep(0.02)
            if state.active or state.number != number:
                out.write(f"'{unit.name}': no outcome within {h.timeout + 5.0:g} s\n")
                status = 3
                continue
            time.sleep(0.05)
            after = float(mw.snapshot()[unit.name].position)
            out.write(f"'{unit.name}': {state.message}; now reads {after:.4f} rad\n")
            if not state.ok:
                status = 3
    except CommunicationError as err:
        sys.stderr.write(f"hw_check home: communication error: {err}\n")
        status = 2
    except KeyboardInterrupt:
        status = 130
    finally:
        mw.shutdown()
        robot.stop()
    return status
