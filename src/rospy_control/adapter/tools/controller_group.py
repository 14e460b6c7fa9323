"""``controller_group`` command-line tool (drop-in for ros_control's).

Controller groups are read from the parameter ``controller_groups`` (relative to the tool's
namespace): a dict ``group -> [controller names]``.

* ``controller_group list`` prints ``Number of groups: N`` then, sorted by group name, ``  <group>``
  and ``      <controller>`` lines.
* ``controller_group spawn <group>`` loads every member, then starts each one (one STRICT switch per
  controller), printing ``Loaded '<n>'`` / ``Started ['<n>'] successfully`` lines.
* ``controller_group switch <group>`` makes the group the running one in a single STRICT switch:
  running controllers that belong only to *other* groups are stopped, missing members are loaded
  (``Loaded '<n>'``; a failed load prints ``Cancel group switching`` and changes nothing else), and
  members not running are started.  Prints ``Started [...] successfully`` / ``Stopped [...]
  successfully`` or ``Error when starting [...] and stopping [...]``.

Members keep the order in which the parameter lists them (upstream iterates a set, so its order is
arbitrary).  Exit status: 0 when the command ran (also when the manager refused, as upstream), 1 for
an unknown or empty group or an unreachable manager or master (one line on standard error), 2 for a
usage error.
"""
from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from rospy_control.adapter.tools.controller_manager_interface import (
    DEFAULT_TIMEOUT,
    ControllerManagerClient,
    ControllerManagerUnavailable,
    load_with,
    start_stop_with,
)

__all__ = ["main", "run", "group_members", "switch_plan", "format_groups"]

PARAM = "controller_groups"


class GroupError(ValueError):
    """The requested group does not exist or has no controllers."""


def _unique(names: Sequence[str]) -> List[str]:
    out: List[str] = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


def group_members(groups: Dict[str, Sequence[str]], group: str) -> Tuple[List[str], List[str]]:
    """``(members of group, controllers that belong only to other groups)``.

    :raises GroupError: unknown or empty group.
    """
    if not isinstance(groups, dict):
        raise GroupError(f"parameter '{PARAM}' must be a dict of group -> list of controllers, "
                         f"got {type(groups).__name__}")
    members = _unique(list(groups.get(group) or ()))
    if not members:
        raise GroupError(f"There is no controller defined in group {group}")
    others: List[str] = []
    for name, controllers in sorted(groups.items()):
        if name == group:
            continue
        for controller in controllers or ():
            if controller not in members and controller not in others:
                others.append(controller)
    return members, others


def switch_plan(members: Sequence[str], others: Sequence[str],
                loaded: Dict[str, str]) -> Tuple[List[str], List[str], List[str]]:
    """``(to_load, to_start, to_stop)`` for switching to a group.

    :param loaded: name -> state string of the loaded controllers.
    """
    to_stop = [c for c in others if loaded.get(c) == "running"]
    to_load = [c for c in members if c not in loaded]
    to_start = [c for c in members if loaded.get(c) != "running"]
    return to_load, to_start, to_stop


def format_groups(groups: Dict[str, Sequence[str]]) -> List[str]:
    """The ``list`` output lines."""
    lines = [f"Number of groups: {len(groups)}"]
    for group, controllers in sorted(groups.items()):
        lines.append(f"  {group}")
        lines.extend(f"      {c}" for c in controllers or ())
    return lines


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="controller_group", description="Controller Group Utility")
    parser.add_argument("--namespace", default="", metavar="NS",
                        help="namespace of the controller manager (default: this tool's namespace)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="T",
                        help=f"seconds to wait for the services (default {DEFAULT_TIMEOUT:g}; <= 0 forever)")
    sub = parser.add_subparsers(title="Commands", dest="command", metavar="")
    sub.add_parser("list", help="list available groups")
    spawn = sub.add_parser("spawn", help="load and start the controllers of a group")
    spawn.add_argument("group", help="name of the group to start")
    switch = sub.add_parser("switch", help="switch to the specified group")
    switch.add_argument("group", help="name of the group to switch to")
    return parser


def run(argv: Sequence[str], get_groups: Callable[[], Any], client: Optional[ControllerManagerClient] = None,
        out: Callable[[str], None] = print) -> int:
    """Run the tool; ``get_groups()`` returns the ``controller_groups`` parameter ({} if unset).

    :returns: the exit status.
    """
    parser = _parser()
    args = parser.parse_args(list(argv))
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        groups = get_groups()
    except Exception as err:  # noqa: BLE001 - master unreachable, ...: one clear line, no traceback
        print(f"controller_group: could not read the parameter '{PARAM}': {err}", file=sys.stderr)
        return 1
    if args.command == "list":
        if not isinstance(groups, dict):
            print(f"controller_group: parameter '{PARAM}' is not a dict", file=sys.stderr)
            return 1
        for line in format_groups(groups):
            out(line)
        return 0
    try:
        members, others = group_members(groups, args.group)
    except GroupError as err:
        print(f"controller_group: {err}", file=sys.stderr)
        return 1
    if client is None:
        client = ControllerManagerClient(args.namespace, args.timeout if args.timeout > 0 else None)
    try:
        if args.command == "spawn":
            _spawn(client, members, out)
        else:
            _switch(client, members, others, out)
    except ControllerManagerUnavailable as err:
        print(f"controller_group: {err}", file=sys.stderr)
        return 1
    return 0


def _spawn(client: ControllerManagerClient, members: List[str], out: Callable[[str], None]) -> None:
    for name in members:
        load_with(client, name, out)
    for name in members:
        start_stop_with(client, [name], None, report=out)


def _switch(client: ControllerManagerClient, members: List[str], others: List[str],
            out: Callable[[str], None]) -> None:
    loaded = {s.name: s.state for s in client.list_controllers()}
    to_load, to_start, to_stop = switch_plan(members, others, loaded)
    for name in to_load:
        if not load_with(client, name, out):
            out("Cancel group switching")
            return
    start_stop_with(client, to_start, to_stop, report=out)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Entry point of ``scripts/controller_group``."""
    import rospy

    if argv is None:
        argv = rospy.myargv(sys.argv)[1:]

    def get_groups() -> Any:
        try:
            return rospy.get_param(PARAM, {})
        except OSError as err:
            import rosgraph

            raise RuntimeError(f"the ROS master at {rosgraph.get_master_uri()} is not reachable "
                               f"({err}); is roscore running?") from err

    sys.exit(run(argv, get_groups, out=lambda line: print(line, flush=True)))
