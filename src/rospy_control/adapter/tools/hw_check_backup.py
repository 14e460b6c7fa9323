"""``hw_check backup XML FILE.yaml`` and ``hw_check restore XML FILE.yaml [--save]``: every readable
parameter of every unit, to a YAML file and back.

The file is keyed by unit name; each unit records its protocol and id, so a restore onto another
device (another protocol, another id, a unit the XML does not have) is refused before anything is
sent.  Each parameter records its value, unit and whether it is restored: read-only ones and the
device's state (positions, targets) are backed up for the record and never written back, nor are
ids (that would clone a device's id).  A unit whose protocol cannot read parameters (MIT mode,
CubeMars, ODrive CAN Simple) is recorded with its protocol, id and why.

``restore`` writes to RAM; ``--save`` also stores every unit's parameters (asking first; ``--yes``
skips the question).  Exit statuses as ``hw_check params``.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Dict, List, Optional, TextIO

import yaml

from rospy_control.adapter.tools.hw_check_params import read_all, verify
from rospy_control.adapter.tools.hw_check_session import (
    Session, ask, common_arguments, run_command,
)
from rospy_control.devices.parameters import ParameterError, Refused, access_for

__all__ = ["main", "restore_main"]


def _parser(prog: str, save: bool) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    p.add_argument("config", help="hardware XML file")
    p.add_argument("file", help="the YAML file")
    if save:
        p.add_argument("--save", action="store_true", help="also store the parameters in each device's flash")
    common_arguments(p)
    return p


def main(argv: List[str], out: TextIO = sys.stdout, answer: Optional[Callable[[], str]] = None) -> int:
    """``hw_check backup``."""
    prog = "hw_check backup"
    args = _parser(prog, False).parse_args(argv)

    def body(session: Session) -> int:
        doc: Dict[str, Any] = {}
        for unit in session.mw.units():
            try:
                access = access_for(unit)
            except Refused:
                continue      # a sensor: no parameters
            entry: Dict[str, Any] = {"protocol": access.PROTOCOL, "id": access.device_id}
            readable = [p for p in access.parameters.values() if p.readable]
            if not readable:
                entry["note"] = (access.refusal("reading parameters") if not access.parameters else
                                 f"{access.PROTOCOL}: its parameters are write-only")
                entry["parameters"] = {}
                doc[unit.name] = entry
                out.write(f"{unit.name}: no readable parameters ({access.PROTOCOL})\n")
                continue
            values = read_all(session, access)
            entry["parameters"] = {
                name: {"value": value, "unit": access.parameters[name].unit,
                       "restore": access.parameters[name].writable and access.parameters[name].restore}
                for name, value in values.items()}
            doc[unit.name] = entry
            out.write(f"{unit.name}: {len(values)} parameters ({access.PROTOCOL} id {access.device_id})\n")
        with open(args.file, "w", encoding="utf-8") as f:
            f.write(f"# hw_check backup of {args.config}\n")
            yaml.safe_dump(doc, f, sort_keys=False, default_flow_style=False)
        out.write(f"written: {args.file}\n")
        return 0

    return run_command(prog, args, body)


def _load(path: str) -> Dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            doc = yaml.safe_load(f)
    except (OSError, yaml.YAMLError) as err:
        raise ParameterError(f"cannot read the backup {path}: {err}") from None
    if not isinstance(doc, dict):
        raise ParameterError(f"{path}: not a backup (expected units by name)")
    return doc


def restore_main(argv: List[str], out: TextIO = sys.stdout,
                 answer: Optional[Callable[[], str]] = None) -> int:
    """``hw_check restore``."""
    prog = "hw_check restore"
    args = _parser(prog, True).parse_args(argv)
    answer = answer or sys.stdin.readline

    def body(session: Session) -> int:
        doc = _load(args.file)
        plan = []   # (access, {name: value}, exchanges, save)
        for name, entry in doc.items():
            where = f"{args.file}: unit '{name}'"
            if not isinstance(entry, dict) or not isinstance(entry.get("parameters", {}), dict):
                raise ParameterError(f"{where}: expected protocol, id and parameters")
            try:
                access = session.access(name)
            except Exception as err:  # noqa: BLE001 - unknown unit or a unit without parameters
                raise ParameterError(f"{where}: refused: {err}") from None
            if entry.get("protocol") != access.PROTOCOL or entry.get("id") != access.device_id:
                raise ParameterError(
                    f"{where}: refused: the backup is of a {entry.get('protocol')} device with id "
                    f"{entry.get('id')}, but {args.config} has '{name}' as {access.PROTOCOL} "
                    f"{access.ID_ATTRIBUTE} {access.device_id}; nothing was sent")
            values = {}
            for pname, rec in (entry.get("parameters") or {}).items():
                p = access.parameter(pname)
                if not (isinstance(rec, dict) and rec.get("restore")) or not (p.writable and p.restore):
                    continue
                try:
                    values[p.name] = p.parse(rec["value"])
                except (KeyError, ParameterError) as err:
                    raise ParameterError(f"{where}: {err}") from None
            if not values:
                continue
            plan.append((access, values, access.writes(values), access.save() if args.save else None))
        if args.save and plan and not args.yes and not ask(
                f"restore {sum(len(v) for _, v, _, _ in plan)} parameters of {len(plan)} unit(s) and store "
                "them in flash?", out, answer):
            out.write("nothing sent\n")
            return 1
        problems = []
        for access, values, exchanges, save in plan:
            for ex in exchanges:
                session.run(access, ex)
            for pname, value in values.items():
                why = verify(session, access, access.parameters[pname], value)
                if why is not None:
                    problems.append(f"{access.unit.name}: {why}")
            if save is not None and not problems:
                session.run(access, save)
            out.write(f"{access.unit.name}: {len(values)} parameters restored"
                      + (f", {save.what} sent" if save is not None and not problems else "")
                      + "\n")
        if problems:
            sys.stderr.write("hw_check restore: " + "; ".join(problems) + "\n")
            return 1
        out.write("restored" + ("" if args.save else " to RAM (--save stores it)") + "\n")
        return 0

    return run_command(prog, args, body)
