"""The simulated firmware in a process of its own, as real firmware runs on its own processors.

:class:`SimulatorHost` reads the same hardware XML as the driver and runs every simulated channel's
:class:`~.firmware.SimulatedFirmware` on that channel's ``udp_multicast`` bus
(:mod:`.bus`: group and port derived from a bus key and the channel name).  A driver whose
:class:`~rospy_control.middleware.Middleware` was given the buses of ``SimulatedRobot.buses(key)``
(:mod:`.robot`) talks to it through its channels' ordinary code path.  A stall of the driver
process no longer stops the "motors": they keep running and holding their last command, as a real
robot's do.

Two front ends use it: the ROS node ``scripts/sim_node`` (:mod:`rospy_control.adapter.sim_node`,
started by ``launch/bringup.launch`` with ``sim:=true``) and, without ROS, this module's :func:`main`::

    python3 -m rospy_control.simulator.process config/arm_hardware.xml --key my-key [--sim] \
        [--urdf urdf/arm.urdf]

which prints one line ``ready <channel>=<group>:<port> ...`` once it answers, and runs until SIGTERM
or SIGINT (``hw_check --sim`` starts it that way and stops it at exit).
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from typing import Dict, List, Optional, Tuple

from rospy_control.exceptions import CommunicationError, ConfigError, HardwareError
from rospy_control.log import get_logger
from rospy_control.simulator.firmware import SimulatedFirmware
from rospy_control.simulator.robot import SimulatedRobot
from rospy_control.simulator.liveness import SharedLiveness, liveness_path
from rospy_control.simulator.bus import (
    SIM_INTERFACE, SimBusAddress, sim_bus_address,
)

__all__ = ["SimulatorHost", "apply_sim_fault", "main"]

logger = get_logger(__name__)


def apply_sim_fault(robot: SimulatedRobot, unit: str, fault: str, enable: bool,
                    value: Optional[float] = None) -> Tuple[bool, str]:
    """Switch a simulated fault as the ``set_fault`` services do; ``(success, message)``, never raises.

    ``unit`` may name a channel for the bus-wide ``bus_errors``; a ``value`` of 0 means "default".
    """
    target = unit
    channel = robot.channels.get(unit)
    if channel is not None and channel.units:  # a bus-wide fault named by its channel
        target = channel.units[0].name
    try:
        robot.set_fault(target, fault, bool(enable), value if value else None)
    except Exception as err:  # noqa: BLE001 - a bad request is answered, not raised
        return False, str(err)
    return True, f"simulated fault '{fault}' of '{unit}' switched {'on' if enable else 'off'}"


class SimulatorHost:
    """Every simulated channel of a hardware XML, each firmware on its ``udp_multicast`` bus.

    :param robot: the simulated robot of the XML (its firmware, fault switches and command statistics;
        the URDF's gravity is configured by it).
    :param key: the bus key (the driver must use the same).
    """

    def __init__(self, robot: SimulatedRobot, key: str) -> None:
        self.robot = robot
        self.key = key
        self.addresses: Dict[str, SimBusAddress] = {
            name: sim_bus_address(key, name) for name in robot.simulators()}
        self._started = False
        self._liveness: List[SharedLiveness] = []

    @classmethod
    def from_xml(cls, source: str, key: str, simulate: Optional[bool] = True, urdf: Optional[str] = None,
                 urdf_source: str = "robot_description") -> "SimulatorHost":
        """Build from a hardware XML path or text (and the URDF's text, for gravity).
        :raises ConfigError: as the driver would."""
        return cls(SimulatedRobot(source, simulate=simulate, urdf=urdf, urdf_source=urdf_source), key)

    @property
    def simulators(self) -> Dict[str, SimulatedFirmware]:
        return self.robot.simulators()

    def start(self) -> None:
        """Open every channel's bus and start answering.

        :raises CommunicationError: a bus cannot be opened (everything started is stopped again).
        """
        if self._started:
            return
        if not self.addresses:
            raise HardwareError(f"hardware '{self.robot.name}': no channel is simulated")
        try:
            for name, sim in self.simulators.items():
                address = self.addresses[name]
                try:  # the driver reads this to tell a starved simulator from silent motors
                    live = SharedLiveness.create(liveness_path(self.key, name))
                    self._liveness.append(live)
                    sim.liveness = live
                except OSError as err:
                    logger.warning("simulator: channel '%s': cannot share a sign of life (%s): a stall of "
                                   "this process will look like silent motors to the driver", name, err)
                try:
                    sim.start(address.group, interface=SIM_INTERFACE, **address.bus_kwargs())
                except Exception as err:  # noqa: BLE001 - python-can raises many kinds
                    raise CommunicationError(f"simulator: cannot open channel '{name}' on {address}: "
                                             f"{type(err).__name__}: {err}") from err
        except BaseException:
            self.stop()
            raise
        self._started = True
        logger.info("simulator: hardware '%s' simulated on %s (bus key '%s')", self.robot.name,
                    "; ".join(f"channel '{n}': {a}" for n, a in self.addresses.items()), self.key)

    def stop(self) -> None:
        """Stop every firmware thread and close the buses (idempotent)."""
        for sim in self.simulators.values():
            sim.stop()
        for live in self._liveness:
            live.close()
        self._liveness = []
        self._started = False

    def errors(self) -> Dict[str, str]:
        """``{channel: first error}`` the firmware threads recorded (empty: none)."""
        return {n: f"{type(s.error).__name__}: {s.error}" for n, s in self.simulators.items()
                if s.error is not None}

    def describe(self) -> str:
        """``<channel>=<group>:<port> ...`` (the CLI's ``ready`` line)."""
        return " ".join(f"{n}={a.group}:{a.port}" for n, a in self.addresses.items())


def main(argv: Optional[List[str]] = None) -> int:
    """The ROS-free simulator process; exit status 0 on SIGTERM/SIGINT, 1 bad XML, 2 bus unavailable."""
    p = argparse.ArgumentParser(prog="python3 -m rospy_control.simulator.process",
                                description="Run the simulated firmware of a hardware XML on udp_multicast "
                                            "buses until SIGTERM or SIGINT.")
    p.add_argument("config", help="hardware XML file")
    p.add_argument("--key", required=True, help="bus key (the driver or hw_check must use the same)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--sim", action="store_true", help="simulate every channel")
    mode.add_argument("--xml", action="store_true",
                      help="simulate the channels whose <simulation> is enabled (the default)")
    p.add_argument("--urdf", help="URDF file: the simulated motors feel its links' weights (gravity)")
    args = p.parse_args(argv)
    try:
        urdf = None
        if args.urdf:
            try:
                with open(args.urdf, encoding="utf-8") as f:
                    urdf = f.read()
            except OSError as err:
                raise ConfigError(f"cannot read the URDF: {err}", args.urdf) from err
        host = SimulatorHost.from_xml(args.config, args.key, simulate=True if args.sim else None, urdf=urdf,
                                      urdf_source=args.urdf or "robot_description")
        host.start()
    except ConfigError as err:
        sys.stderr.write(f"sim_process: configuration error: {err}\n")
        return 1
    except (CommunicationError, HardwareError) as err:
        sys.stderr.write(f"sim_process: {err}\n")
        return 2
    stop = threading.Event()

    def on_signal(_signum, _frame) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    sys.stdout.write(f"ready {host.describe()}\n")
    sys.stdout.flush()
    try:
        while not stop.wait(0.5):
            pass
    finally:
        host.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
