"""``hw_check set-id XML UNIT NEW_ID [--save] [--yes]``: give a device a new CAN id, by the command its
maker documents: DaMiao (register 8 ESC_ID through 0x7FF; ``--save`` stores it with 0xAA), RobStride /
CyberGear (communication type 7; ``--save`` sends type 22 on RobStride models), ODrive 0.5
(Set_Axis_Node_ID 0x06; kept in RAM).  MIT mode, CubeMars, ODrive 0.6 and CiA 402 are refused with
what their documents offer instead, and nothing is sent.

It asks first (``--yes`` skips the question), checks the new id against the protocol's range and the
other units of the channel, confirms the device answers at the new id, and prints the line of the
hardware XML to change.  Exit statuses as ``hw_check params``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, List, Optional, TextIO

from rospy_control.adapter.tools.hw_check_session import (
    NoAnswer, Session, ask, common_arguments, other_ids, run_command,
)
from rospy_control.devices.parameters import parse_id

__all__ = ["main"]

PROG = "hw_check set-id"


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("config", help="hardware XML file")
    p.add_argument("unit", help="the unit whose device gets the new id")
    p.add_argument("new_id", help="the new id (decimal or 0x hex)")
    p.add_argument("--save", action="store_true", help="also store the id in the device's flash")
    common_arguments(p)
    return p


def main(argv: List[str], out: TextIO = sys.stdout, answer: Optional[Callable[[], str]] = None) -> int:
    args = _parser().parse_args(argv)
    answer = answer or sys.stdin.readline

    def body(session: Session) -> int:
        access = session.access(args.unit)
        old = access.device_id
        access.set_id(access.ID_RANGE[0])   # builds a frame only: a protocol without the command refuses here
        new = parse_id(args.new_id, access.ID_RANGE[0], access.ID_RANGE[1], access.PROTOCOL)
        access.check_new_id(new, other_ids(session, access))
        ex = access.set_id(new)
        save = access.save(new) if args.save else None
        store = f" and store it ({save.what})" if save is not None else ""
        question = (f"give '{args.unit}' ({access.PROTOCOL}, {access.ID_ATTRIBUTE} {old}) the "
                    f"id {new} (0x{new:X}){store}?")
        if not args.yes and not ask(question, out, answer):
            out.write("nothing sent\n")
            return 1
        session.run(access, ex)
        out.write(f"'{args.unit}': {ex.what} sent\n")
        try:
            session.run(access, access.probe(new))
        except NoAnswer as err:
            sys.stderr.write(f"{PROG}: {err}: the device may still be at {old}\n")
            return 3
        out.write(f"'{args.unit}' answers at {new} (0x{new:X})\n")
        if save is not None:
            session.run(access, save)
            out.write(f"'{args.unit}': {save.what} sent\n")
        for note in access.id_notes(new):
            out.write(f"note: {note}\n")
        unit = access.unit
        out.write(f"in the hardware XML ({unit.where or args.config}): on <unit name=\"{unit.name}\"> change "
                  f"{access.ID_ATTRIBUTE}=\"{old}\" to {access.ID_ATTRIBUTE}=\"{new}\"\n")
        return 0

    return run_command(PROG, args, body)
