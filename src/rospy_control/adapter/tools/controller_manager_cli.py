"""``controller_manager`` command-line tool (drop-in for ros_control's).

Usage: ``controller_manager <command> [names...]``

=========================  ===================================================================
``load <name>...``         load each controller
``unload <name>...``       unload each controller
``start <name>...``        start each controller (one STRICT switch per controller)
``stop <name>...``         stop each controller (one STRICT switch per controller)
``spawn|sp <name>...``     load all, then start each
``kill|kl <name>...``      stop each, then unload all
``list|lc``                list the loaded controllers
``list-types|lt``          list the controller types the manager can load
``reload-libraries``       reload the controller libraries (``force_kill``); ``--restore`` loads
                           and restarts what was loaded/running before
=========================  ===================================================================

Standard output is line-for-line upstream's, so scripts that parse it keep working::

    Loaded '<name>'                      Error when loading '<name>'
    Unloaded '<name>' successfully       Error when unloading '<name>'
    Started ['<name>'] successfully      Stopped ['<name>'] successfully
    Error when starting ['<name>'] and stopping []
    '<name>' - '<iface1+iface2>' ( <state> )
    No controllers are loaded in mechanism control
    Restore: False / Successfully reloaded libraries

Exit status: 0 when the command ran (also when the manager refused a request, as upstream -- the
output says so); 1 when the manager (or the ROS master) could not be reached within ``--timeout``
seconds (default 30, upstream waits forever), with one line on standard error saying which; 2 for a
usage error.  ``--namespace NS`` addresses
``NS/controller_manager/...`` (default: relative to the tool's namespace, as upstream).
"""
from __future__ import annotations

import argparse
import sys
from typing import Callable, List, Optional, Sequence

from rospy_control.adapter.tools.controller_manager_interface import (
    DEFAULT_TIMEOUT,
    ControllerManagerClient,
    ControllerManagerUnavailable,
    load_with,
    format_controller_line,
    reload_libraries_with,
    start_stop_with,
)

__all__ = ["main", "run", "COMMANDS"]

#: command -> canonical command (aliases included).
COMMANDS = {
    "load": "load", "unload": "unload", "start": "start", "stop": "stop", "spawn": "spawn", "sp": "spawn",
    "kill": "kill", "kl": "kill", "list": "list", "lc": "list", "list-types": "list-types",
    "lt": "list-types", "reload-libraries": "reload-libraries",
}

_USAGE = """Commands:
    load <name>...       - Load the controllers named <name>
    unload <name>...     - Unload the controllers named <name>
    start <name>...      - Start the controllers named <name>
    stop <name>...       - Stop the controllers named <name>
    spawn|sp <name>...   - Load and start the controllers named <name>
    kill|kl <name>...    - Stop and unload the controllers named <name>
    list|lc              - List loaded controllers and their state
    list-types|lt        - List controller types
    reload-libraries [--restore]
                         - Reload all controller libraries (and restore the controllers)"""


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="controller_manager", description="Talk to a controller manager's services.",
        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_USAGE)
    parser.add_argument("command", help="one of: " + ", ".join(sorted(COMMANDS)))
    parser.add_argument("names", nargs="*", help="controller names")
    parser.add_argument("--restore", action="store_true",
                        help="reload-libraries: load and restart the controllers afterwards")
    parser.add_argument("--namespace", default="", metavar="NS",
                        help="namespace of the controller manager (default: this tool's namespace)")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, metavar="T",
                        help=f"seconds to wait for the services (default {DEFAULT_TIMEOUT:g}; <= 0 forever)")
    return parser


def run(argv: Sequence[str], client: Optional[ControllerManagerClient] = None,
        out: Callable[[str], None] = print) -> int:
    """Run the tool with ``argv`` (without the program name); ``out(line)`` prints a line.

    :returns: the exit status.
    """
    parser = _parser()
    args = parser.parse_args(list(argv))
    command = COMMANDS.get(args.command)
    if command is None:
        parser.print_usage(sys.stderr)
        print(f"controller_manager: unknown command '{args.command}'\n{_USAGE}", file=sys.stderr)
        return 2
    if client is None:
        client = ControllerManagerClient(args.namespace, args.timeout if args.timeout > 0 else None)
    names: List[str] = list(args.names)
    try:
        _dispatch(command, names, args.restore, client, out)
    except ControllerManagerUnavailable as err:
        print(f"controller_manager: {err}", file=sys.stderr)
        return 1
    return 0


def _unload(client: ControllerManagerClient, name: str, out: Callable[[str], None]) -> bool:
    ok = client.unload_controller(name)
    out(f"Unloaded '{name}' successfully" if ok else f"Error when unloading '{name}'")
    return ok


def _dispatch(command: str, names: List[str], restore: bool, client: ControllerManagerClient,
              out: Callable[[str], None]) -> None:
    if command == "list":
        controllers = client.list_controllers()
        if not controllers:
            out("No controllers are loaded in mechanism control")
        for state in controllers:
            out(format_controller_line(state))
    elif command == "list-types":
        for type_name in client.list_controller_types()[0]:
            out(type_name)
    elif command == "reload-libraries":
        reload_libraries_with(client, True, restore, report=out)
    elif command == "load":
        for name in names:
            load_with(client, name, out)
    elif command == "unload":
        for name in names:
            _unload(client, name, out)
    elif command == "start":
        for name in names:
            start_stop_with(client, [name], None, report=out)
    elif command == "stop":
        for name in names:
            start_stop_with(client, None, [name], report=out)
    elif command == "spawn":
        for name in names:
            load_with(client, name, out)
        for name in names:
            start_stop_with(client, [name], None, report=out)
    elif command == "kill":
        for name in names:
            start_stop_with(client, None, [name], report=out)
        for name in names:
            _unload(client, name, out)


def main(argv: Optional[Sequence[str]] = None) -> None:
    """Entry point of ``scripts/controller_manager`` (ROS remapping arguments are ignored)."""
    if argv is None:
        import rospy

        argv = rospy.myargv(sys.argv)[1:]
    if not argv:
        print(_USAGE)
        sys.exit(0)
    sys.exit(run(argv, out=_print_flush))


def _print_flush(line: str) -> None:
    print(line, flush=True)
