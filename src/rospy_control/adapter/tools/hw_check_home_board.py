"""``hw_check home BOARD_XML [AXIS...]``: home a trajectory board's axes against their limit switches.

The hardware XML of a trajectory board (``<robot_hardware>`` with a ``<board>``) names the board's
address and, per ``<axis>``, its ``<homing>`` (docs/trajectory_downlink.md, "Homing").  hw_check
connects to the board program as the driver does, asks (``--yes`` skips the question), sends one
``Home`` request for the axes (none named: every axis with a ``<homing>``) and prints what the board
answers: each axis homed with its position, or the board's code and text (a switch not found within
``max_travel``, a board busy with a goal, a board program that predates homing).  With ``--sim`` it
runs the board program in this process on its simulated back-end, whose switches sit where the XML's
``<homing>`` puts the home positions.

Exit status as ``hw_check home``: 0 homed; 1 configuration error, refused or nothing can home; 2 the
board cannot be reached; 3 a homing failed.
"""
from __future__ import annotations

import sys
from typing import Callable, List, TextIO

from rospy_control.exceptions import ConfigError

__all__ = ["is_board_xml", "home_board"]


def is_board_xml(path: str) -> bool:
    """True when ``path`` describes a trajectory board (its root holds a ``<board>``)."""
    try:
        with open(path, encoding="utf-8") as f:
            head = f.read(65536)
    except OSError:
        return False
    return "<board" in head and "<robot_hardware" in head


def home_board(path: str, axes: List[str], sim: bool, yes: bool, out: TextIO,
               ask: Callable[[str], bool], timeout: float = 120.0) -> int:
    from rospy_control.board import wire
    from rospy_control.downlink.client import BoardClient
    from rospy_control.hardware_config.board import parse_board_xml
    try:
        desc = parse_board_xml(path)
    except ConfigError as err:
        sys.stderr.write(f"hw_check home: configuration error: {err}\n")
        return 1
    can = [a.name for a in desc.axes if a.homing is not None]
    unknown = [a for a in axes if a not in can]
    wanted = axes or can
    if unknown or not wanted:
        sys.stderr.write(f"hw_check home: {', '.join(repr(a) for a in unknown) or 'no axis'} of board "
                         f"'{desc.name}' can home: the axes with a <homing> are {', '.join(can) or 'none'}\n")
        return 1
    server = None
    host, port = desc.host, desc.port
    if sim:
        from rospy_control.board.backends import SimBackend
        from rospy_control.board.server import BoardServer
        from rospy_control.downlink.hardware_xml import board_config
        cfg = board_config(desc)
        server = BoardServer(cfg, backend=SimBackend(cfg.axes), bind="127.0.0.1", port=0).start()
        host, port = server.address[0], server.address[1]
    client = BoardClient(host, port, joint_map={a.joint: a.name for a in desc.axes},
                         heartbeat_period=desc.heartbeat_period, board_timeout=desc.board_timeout,
                         auto_reconnect=False)
    try:
        try:
            client.connect()
        except wire.DownlinkError as err:
            sys.stderr.write(f"hw_check home: {err}\n")
            return 2
        out.write(f"board '{desc.name}' at {host}:{port}: homing {', '.join(wanted)} against their limit "
                  "switches\n")
        if not yes and not ask(f"home {', '.join(wanted)}? The board moves each axis to its switch"):
            out.write("nothing sent\n")
            return 1
        try:
            done = client.home(wanted, timeout)
        except wire.DownlinkError as err:
            sys.stderr.write(f"hw_check home: board '{desc.name}': {err}\n")
            return 3
        names = [a.name for a in desc.axes]
        for a in wanted:
            if a in done.axes:
                k = names.index(a)
                out.write(f"'{a}': homed; now at {done.positions[k]:.4f} rad\n")
            else:
                out.write(f"'{a}': not homed: {wire.code_name(done.code)}: {done.text}\n")
        return 0 if done.ok and all(a in done.axes for a in wanted) else 3
    finally:
        client.close()
        if server is not None:
            server.stop()
