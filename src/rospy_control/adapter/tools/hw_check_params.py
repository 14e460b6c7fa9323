"""``hw_check params XML UNIT get [NAME] | set NAME VALUE [NAME VALUE ...] [--save] | save``: a device's
documented parameters by the maker's names and units.

``get`` without NAME lists every parameter with its value and unit (write-only ones are listed as
such, and objects the device does not offer with its refusal).  ``set`` writes to RAM where the
protocol keeps RAM and flash apart (DaMiao 0x55, RobStride type 18; a CiA 402 object as the drive
keeps it), then reads the value back where the device can report it; ``--save`` also stores it (it
asks first; ``--yes`` skips the question).  ``save`` stores what is in RAM.  Per protocol: DaMiao
registers (0x7FF), RobStride / CyberGear parameters (types 17/18, save type 22 on RobStride models),
CiA 402 objects (SDO, store through 0x1010), ODrive CAN Simple's set-only messages; MIT mode and
CubeMars are refused (their documents have no parameter commands).  See ``docs/commissioning.md``.

Nothing is sent while another host commands the devices.  Exit status: 0 done; 1 refused
(configuration, unknown parameter, value out of range, read-only, the protocol has no such command);
2 communication error; 3 the device did not answer.
"""
from __future__ import annotations

import argparse
import math
import sys
from typing import Callable, List, Optional, TextIO

from rospy_control.adapter.tools.hw_check_session import (
    NoAnswer, Session, ask, common_arguments, format_value, run_command,
)
from rospy_control.devices.parameters import Parameter, ParameterAccess, ParameterError, Refused

__all__ = ["main", "read_all", "verify"]

PROG = "hw_check params"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("config", help="hardware XML file")
    p.add_argument("unit", help="the unit whose parameters to read or write")
    p.add_argument("action", choices=("get", "set", "save"))
    p.add_argument("items", nargs="*", help="get: [NAME]; set: NAME VALUE [NAME VALUE ...]")
    p.add_argument("--save", action="store_true", help="set: also store the values in the device's flash")
    common_arguments(p)
    return p


def _line(p: Parameter, value: str) -> str:
    unit = f" {p.unit}" if p.unit else ""
    ro = "" if p.writable else "  (read-only)"
    desc = f"  -- {p.description}" if p.description else ""
    return f"  {p.name:<32} {value}{unit}{ro}{desc}\n"


def read_all(session: Session, access: ParameterAccess, out: Optional[TextIO] = None) -> dict:
    """``{name: value}`` of every readable parameter the device answers (printed to ``out``)."""
    values = {}
    for p in access.parameters.values():
        if not p.readable:
            if out is not None:
                out.write(_line(p, "(write-only: the protocol cannot read it)"))
            continue
        try:
            values[p.name] = session.run(access, access.read(p))
        except ParameterError as err:   # the device does not offer this one
            if out is not None:
                out.write(_line(p, f"(not offered: {err})"))
            continue
        if out is not None:
            out.write(_line(p, format_value(values[p.name])))
    return values


def verify(session: Session, access: ParameterAccess, p: Parameter, wanted: float) -> Optional[str]:
    """Read ``p`` back; None if the device holds ``wanted`` (float32 precision), else what it holds."""
    if not p.readable:
        return None
    got = session.run(access, access.read(p))
    if math.isclose(float(got), float(wanted), rel_tol=1e-6, abs_tol=1e-6):
        return None
    return f"{p.name} reads {format_value(got)} after writing {format_value(wanted)}: the device refused it"


def main(argv: List[str], out: TextIO = sys.stdout, answer: Optional[Callable[[], str]] = None) -> int:
    args = _parser().parse_args(argv)
    answer = answer or sys.stdin.readline

    def body(session: Session) -> int:
        access = session.access(args.unit)
        if args.action == "get":
            return _get(session, access, args.items, out)
        if args.action == "save":
            if args.items:
                raise ParameterError("save takes no NAME")
            ex = access.save()
            if not args.yes and not ask(f"store the parameters of '{args.unit}' in its flash ({ex.what})?",
                                        out, answer):
                out.write("nothing sent\n")
                return 1
            session.run(access, ex)
            out.write(f"'{args.unit}': {ex.what} sent\n")
            return 0
        return _set(session, access, args, out, answer)

    return run_command(PROG, args, body)


def _get(session: Session, access: ParameterAccess, items: List[str], out: TextIO) -> int:
    if len(items) > 1:
        raise ParameterError("get takes at most one NAME")
    if not items and not access.parameters:
        raise Refused(access.refusal("reading parameters"))
    out.write(f"'{access.unit.name}' ({access.PROTOCOL}, {access.ID_ATTRIBUTE} {access.device_id}):\n")
    if items:
        p = access.parameter(items[0])
        if not p.readable:
            access.read(p)   # the protocol's refusal, naming why
        out.write(_line(p, format_value(session.run(access, access.read(p)))))
        return 0
    read_all(session, access, out)
    return 0


def _set(session: Session, access: ParameterAccess, args: argparse.Namespace, out: TextIO,
         answer: Callable[[], str]) -> int:
    items = args.items
    if not items or len(items) % 2:
        raise ParameterError("set takes NAME VALUE [NAME VALUE ...]")
    values = {access.parameter(items[i]).name: items[i + 1] for i in range(0, len(items), 2)}
    exchanges = access.writes(values)        # every value checked before anything is sent
    save = access.save() if args.save else None
    if save is not None and not args.yes and not ask(
            f"write {', '.join(f'{n}={v}' for n, v in values.items())} to '{args.unit}' and store it in its "
            f"flash ({save.what})?", out, answer):
        out.write("nothing sent\n")
        return 1
    for ex in exchanges:
        session.run(access, ex)
        out.write(f"'{args.unit}': {ex.what} sent\n")
    problems = []
    for name, text in values.items():
        p = access.parameter(name)
        try:
            why = verify(session, access, p, p.parse(text))
        except NoAnswer as err:
            why = str(err)
        if why is not None:
            problems.append(why)
        elif p.readable:
            out.write(f"  {p.name} = {text}{' ' + p.unit if p.unit else ''} (read back)\n")
    if problems:
        sys.stderr.write(f"{PROG}: " + "; ".join(problems) + "\n")
        return 1
    if save is not None:
        session.run(access, save)
        out.write(f"'{args.unit}': {save.what} sent\n")
    else:
        out.write("in RAM only where the device separates RAM and flash (--save stores it)\n")
    return 0
