"""What ``hw_check params``, ``backup``, ``restore`` and ``set-id`` share: the hardware XML, the buses
(real, or the simulated devices with ``--sim``), the refusal while another host commands the devices,
the question before anything that writes flash or changes an id, and one request/answer exchange at a
time on a unit's channel.

The motors are not enabled: these commands talk to the devices' parameter services only, with every
other frame on the bus ignored while an answer is awaited.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Any, Callable, Dict, List, Optional, TextIO

import can

from rospy_control.adapter.tools.hw_check_zero import foreign_commands, sim_arguments, simulate_of
from rospy_control.bus.adapter import open_bus
from rospy_control.devices.parameters import Exchange, ParameterAccess, ParameterError, Refused, access_for
from rospy_control.exceptions import CommunicationError, ConfigError, HardwareError
from rospy_control.middleware.middleware import Middleware
from rospy_control.simulator import SimulatedRobot

__all__ = ["Session", "NoAnswer", "common_arguments", "open_session", "ask", "format_value"]

#: exit statuses of these subcommands
OK, REFUSED, COMMUNICATION, NO_ANSWER = 0, 1, 2, 3


class NoAnswer(Exception):
    """The device did not answer an exchange in time."""


def common_arguments(p: argparse.ArgumentParser) -> None:
    """``--sim`` / ``--hardware``, ``--yes`` and ``--timeout``."""
    sim_arguments(p)
    p.add_argument("--yes", action="store_true", help="do not ask before writing flash or changing an id")
    p.add_argument("--timeout", type=float, default=0.5,
                   help="seconds to wait for each answer of a device (default 0.5)")


def ask(question: str, out: TextIO, answer: Callable[[], str]) -> bool:
    out.write(question + " [y/N] ")
    out.flush()
    return answer().strip().lower() in ("y", "yes")


def format_value(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.7g}"
    return str(value)


class Session:
    """The hardware XML's middleware (configuration and units only: it is never started), the simulated
    robot where channels are simulated, and the buses this process opened (see the module docstring)."""

    def __init__(self, prog: str, mw: Middleware, robot: SimulatedRobot, timeout: float) -> None:
        self.prog, self.mw, self.robot, self.timeout = prog, mw, robot, timeout
        self.simulated = list(robot.simulators())
        self._specs = robot.buses() if self.simulated else {}
        self._buses: Dict[str, can.BusABC] = {}

    def access(self, unit_name: str) -> ParameterAccess:
        """:raises HardwareError: unknown unit.  :raises Refused: a unit type without parameters."""
        return access_for(self.mw.unit(unit_name))

    def foreign(self) -> Optional[str]:
        """Why not to act (another host commands the devices), or None."""
        seen = foreign_commands(self.mw, self.simulated)
        if not seen:
            return None
        return ("refused: another host is commanding these devices ("
                + ", ".join(f"channel '{c}' id 0x{i:X}" for c, i in sorted(set(seen))) + "); stop it first")

    def _bus(self, channel: str) -> can.BusABC:
        bus = self._buses.get(channel)
        if bus is not None:
            return bus
        ch = self.mw.channels[channel]
        spec = self._specs.get(channel)
        if spec is None:
            bus = open_bus(ch.interface, ch.channel, ch.bitrate, where=f"channel '{channel}'")
        else:
            if spec.before_open is not None:
                spec.before_open()
            bus = open_bus(spec.interface, spec.channel, ch.bitrate, where=f"channel '{channel}'",
                           **spec.kwargs)
            if spec.after_open is not None:
                spec.after_open(bus)
        self._buses[channel] = bus
        return bus

    def run(self, access: ParameterAccess, ex: Exchange) -> Any:
        """Send ``ex`` on the unit's channel; its decoded answer (None when it has none).

        :raises NoAnswer: no answer within the timeout.
        :raises ParameterError: the device answered with a refusal.
        """
        unit = access.unit
        bus = self._bus(unit.channel_name)
        f = ex.frame
        while bus.recv(0.0) is not None:   # what came before this request answers nothing of it
            pass
        bus.send(can.Message(arbitration_id=f.arbitration_id, is_extended_id=f.is_extended_id, data=f.data))
        if ex.answer is None:
            return None
        end = time.monotonic() + self.timeout
        while True:
            left = end - time.monotonic()
            msg = bus.recv(max(0.0, left)) if left > 0 else None
            if msg is None:
                raise NoAnswer(f"'{unit.name}' ({access.PROTOCOL}) did not answer {ex.what} within "
                               f"{self.timeout:g} s")
            if msg.is_error_frame or msg.is_remote_frame:
                continue
            value = ex.answer(msg.arbitration_id, bool(msg.is_extended_id), bytes(msg.data))
            if value is not None:
                return value

    def close(self) -> None:
        for name, bus in self._buses.items():
            bus.shutdown()
            spec = self._specs.get(name)
            if spec is not None and spec.after_close is not None:
                spec.after_close()
        self._buses.clear()
        self.robot.stop()


def open_session(prog: str, args: argparse.Namespace) -> Session:
    """The session of ``args`` (``config``, ``sim``, ``hardware``, ``timeout``).

    :raises ConfigError: the XML is invalid.
    """
    simulate = simulate_of(args)
    mw = Middleware.from_xml(args.config)
    robot = SimulatedRobot(mw.config, simulate=simulate)
    return Session(prog, mw, robot, args.timeout)


def run_command(prog: str, args: argparse.Namespace, body: Callable[[Session], int]) -> int:
    """Open the session, refuse while another host commands the devices, run ``body``, map errors
    to exit statuses (0 done, 1 refused or configuration error, 2 communication error, 3 no answer)."""
    try:
        session = open_session(prog, args)
    except ConfigError as err:
        sys.stderr.write(f"{prog}: configuration error: {err}\n")
        return REFUSED
    try:
        why = session.foreign()
        if why is not None:
            sys.stderr.write(f"{prog}: {why}\n")
            return REFUSED
        return body(session)
    except (Refused, ParameterError, HardwareError) as err:
        if isinstance(err, CommunicationError):
            sys.stderr.write(f"{prog}: communication error: {err}\n")
            return COMMUNICATION
        sys.stderr.write(f"{prog}: {err}\n")
        return REFUSED
    except NoAnswer as err:
        sys.stderr.write(f"{prog}: {err}\n")
        return NO_ANSWER
    except can.CanError as err:
        sys.stderr.write(f"{prog}: communication error: {err}\n")
        return COMMUNICATION
    except KeyboardInterrupt:
        return 130
    finally:
        session.close()


def other_ids(session: Session, access: ParameterAccess) -> List[int]:
    """The ids of the other units of the same protocol on the unit's channel."""
    out = []
    for u in session.mw.units():
        if u is access.unit or getattr(u, "channel_name", None) != access.unit.channel_name:
            continue
        if isinstance(u, type(access.unit)) and isinstance(access.unit, type(u)):
            out.append(int(getattr(u, access.ID_ATTRIBUTE)))
    return out
