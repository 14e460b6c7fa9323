"""``hw_check home XML [UNIT...] [--yes]``: home the units that can, as their ``<homing>`` says.

A CiA 402 drive with ``<homing>`` in the hardware XML homes by its own method (CiA 402-2 homing
mode 6: the method 0x6098, the home offset 0x607C, the speeds 0x6099 and the acceleration 0x609A
of the XML, written by SDO; then the drive runs it and reports attained or error).  Without UNITs,
every unit that can home does, one after the other in the XML's order.  The other protocols have no
homing in their makers' documents (MIT mode, CubeMars V3, DaMiao, RobStride, ODrive CAN Simple: a
zero is set where the joint is, ``hw_check zero``).  Given a trajectory board's hardware XML, it
homes the board's axes that have a ``<homing>`` against their limit switches
(:mod:`.hw_check_home_board`).

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

from rospy_control.adapter.tools.hw_check_home_board import home_board, is_board_xml
from rospy_control.adapter.tools.hw_check_zero import _ask, _reading, run_started, sim_arguments, simulate_of
from rospy_control.devices import ActuatorUnit, HomingState
from rospy_control.exceptions import HardwareError
from rospy_control.middleware.middleware import Middleware

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hw_check home", description=__doc__.split("\n\n")[1])
    p.add_argument("config", help="hardware XML file")
    p.add_argument("units", nargs="*", help="the units to home (default: every unit with <homing>)")
    p.add_argument("--yes", action="store_true", help="do not ask before moving the joints")
    sim_arguments(p)
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for the units to come up (default 10)")
    return p


def main(argv: List[str], out: TextIO = sys.stdout, answer: Optional[Callable[[], str]] = None) -> int:
    args = _parser().parse_args(argv)
    ask = answer or sys.stdin.readline
    if is_board_xml(args.config):   # a trajectory board's axes, against their limit switches
        return home_board(args.config, list(args.units), bool(args.sim), bool(args.yes), out,
                          lambda question: _ask(question, out, ask))
    simulate = simulate_of(args)
    units: List[ActuatorUnit] = []

    def prepare(mw: Middleware) -> Optional[int]:
        can = [u for u in mw.units() if isinstance(u, ActuatorUnit) and u.CAPABILITIES.home]
        try:
            picked = [mw.unit(n) for n in args.units] if args.units else list(can)
        except HardwareError as err:
            sys.stderr.write(f"hw_check home: {err}\n")
            return 1
        cannot = [u for u in picked if u not in can]
        units.extend(u for u in can if u in picked)
        if cannot or not units:
            names = ", ".join(f"'{u.name}' ({getattr(u, 'PROTOCOL', type(u).__name__)})" for u in cannot)
            what = names + " cannot home" if names else "no unit can home"
            sys.stderr.write(f"hw_check home: {what}: only a CiA 402 drive with <homing method=...> in the "
                             "hardware XML does (docs/commissioning.md); those that can here: "
                             f"{', '.join(u.name for u in can) or 'none'}\n")
            return 1
        return None

    def body(mw: Middleware) -> int:
        status = 0
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
                                         out, ask):
                out.write("nothing sent\n")
                return 1
            state = _home(unit, h.timeout + 5.0)
            if state is None:
                out.write(f"'{unit.name}': no outcome within {h.timeout + 5.0:g} s\n")
                status = 3
                continue
            time.sleep(0.05)
            after = float(mw.snapshot()[unit.name].position)
            out.write(f"'{unit.name}': {state.message}; now reads {after:.4f} rad\n")
            if not state.ok:
                status = 3
        return status

    return run_started("hw_check home", args.config, simulate, prepare, body)


def _home(unit: ActuatorUnit, timeout: float) -> Optional[HomingState]:
    """Start the unit's homing and wait for its outcome (None: none within ``timeout``)."""
    number = unit.request_home()
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        state = unit.homing_state()
        if state.number == number and not state.active:
            return state
        time.sleep(0.02)
    return None
