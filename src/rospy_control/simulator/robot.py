"""The simulated robot: every simulated channel's firmware, started as a peer on the driver's buses.

A composition root (the driver node, ``hw_check --sim``, the benchmarks, the tests) builds a
:class:`SimulatedRobot` from the same hardware description as the driver's
:class:`~rospy_control.middleware.Middleware` and hands the middleware the bus of every simulated
channel (:meth:`SimulatedRobot.buses`, a :class:`~rospy_control.bus.spec.BusSpec` each): the
middleware opens them like any other bus and never learns who answers.  The simulated devices are
built from the configuration records (:attr:`SimulatedRobot.config`: what each device module's reader
made of its ``<unit>``, :mod:`rospy_control.middleware.configuration`), never from the driver's
device objects, which the simulator neither sees nor writes into.

Where the firmware runs: by default in this process, each channel on a private python-can
``virtual`` bus, started when the driver's channel opens and stopped after it closed.  With
``process_key`` the channels are on ``udp_multicast`` buses of a simulator in another process
(:mod:`.process`, the ``sim`` node); :meth:`SimulatedRobot.buses` then waits for it and falls back to
the in-process firmware (one warning) when it does not answer.  Either way the spec carries the
firmware's liveness policy (:mod:`.liveness`), so a starved simulator is not blamed on its motors.

Fault switches and the command record are this object's API: :meth:`set_fault`, :meth:`bus_off`,
:meth:`bus_errors`, :meth:`command_stats`, :meth:`reset_command_stats`, :meth:`firmware_of`.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Union

from rospy_control.bus.spec import BusSpec
from rospy_control.exceptions import HardwareError
from rospy_control.hardware_config.document import HardwareInfo, parse_hardware_xml
from rospy_control.hardware_config.records import ChannelConfig, RobotConfig
from rospy_control.middleware.configuration import read_configuration
from rospy_control.simulator.base import FAULTS, SimulationSettings
from rospy_control.simulator.bus import SIM_INTERFACE, SimBusAddress, enlarge_receive_buffer
from rospy_control.simulator.firmware import SimulatedFirmware
from rospy_control.simulator.link import SimLink, connect_simulator_process

__all__ = ["SimulatedRobot", "BUS_FAULTS"]

#: simulated faults of a whole bus (named by any unit on it)
BUS_FAULTS = ("bus_errors", "bus_off")


class SimulatedRobot:
    """The simulated firmware of every simulated channel of one hardware description.

    :param info: the configuration records
        (:func:`~rospy_control.middleware.configuration.read_configuration`), the parsed description,
        or a hardware XML path or text.
    :param simulate: ``None`` = as each channel's ``<simulation>`` says, ``True`` = every channel,
        ``False`` = none (every ``<simulation>`` element is validated all the same).
    :param urdf: URDF text: the simulated actuators (every protocol) feel its links' weights, with the
        root ``<simulation>`` gravity options (:mod:`.gravity`); None: constant loads only.
    """

    def __init__(self, info: Union[RobotConfig, HardwareInfo, str], simulate: Optional[bool] = None,
                 urdf: Optional[str] = None, urdf_source: str = "robot_description") -> None:
        if isinstance(info, str):
            info = parse_hardware_xml(info)
        if not isinstance(info, RobotConfig):
            info = read_configuration(info)
        #: the configuration records every simulated device is built from
        self.config: RobotConfig = info
        self.info = info   # what the gravity options are read from (its root ``element``)
        self.name = info.name
        self._firmware: Dict[str, SimulatedFirmware] = {}
        for cc in info.channels:
            settings = SimulationSettings.from_element(cc.simulation)
            if simulate is not None:
                settings.enabled = simulate
            # validates every <simulation> element, on hardware too
            firmware = SimulatedFirmware(cc.name, list(cc.units), settings, cc.master_id)
            if settings.enabled:
                self._firmware[cc.name] = firmware
        self._links: Dict[str, SimLink] = {}
        #: the URDF's gravity on the simulated actuators (None: no URDF, or switched off)
        self.gravity: Any = None
        if urdf:
            self.attach_gravity(urdf, urdf_source)

    def attach_gravity(self, urdf: str, urdf_source: str = "robot_description") -> Any:
        """Let every simulated actuator (every protocol) feel the weights of the URDF text ``urdf``,
        with the root ``<simulation>`` options (:mod:`.gravity`).  :raises ConfigError: a bad URDF."""
        from rospy_control.simulator.gravity import attach_to_middleware
        self.gravity = attach_to_middleware(self, urdf, source=urdf_source)
        return self.gravity

    # -- what the composition root asks --------------------------------------------------------------
    @property
    def channels(self) -> Dict[str, ChannelConfig]:
        """The channels' configuration records by name (each with its ``units``)."""
        return {c.name: c for c in self.config.channels}

    def channel_of(self, unit: str) -> Optional[str]:
        """The channel of unit ``unit`` (None: a group, or a unit on no channel).

        :raises HardwareError: no unit of that name.
        """
        try:
            return self.config.unit(unit).channel
        except KeyError:
            raise HardwareError(f"Could not find unit '{unit}' in simulated robot '{self.name}'; known "
                                f"units: {', '.join(u.name for u in self.config.units)}") from None

    def simulators(self) -> Dict[str, SimulatedFirmware]:
        """``{channel: firmware}`` of every simulated channel (when the firmware runs in another
        process these are only its configuration)."""
        return dict(self._firmware)

    def is_simulated(self, channel: str) -> bool:
        return channel in self._firmware

    @property
    def process(self) -> bool:
        """True when the simulated channels talk to a simulator in another process."""
        return bool(self._links)

    def addresses(self) -> Dict[str, SimBusAddress]:
        """``{channel: (group, port)}`` of the cross-process buses in use (empty: none)."""
        return {n: link.address for n, link in self._links.items()}

    def buses(self, process_key: Optional[str] = None, wait: float = 10.0) -> Dict[str, BusSpec]:
        """``{channel: BusSpec}`` of every simulated channel, for ``Middleware(info, buses=...)``.

        :param process_key: the bus key of a simulator process (:func:`.bus.sim_bus_address`); waits
            up to ``wait`` s for it and falls back to the in-process firmware when it does not answer.
        """
        if process_key is not None and self._firmware and not self._links:
            self._links = connect_simulator_process(str(process_key), self._firmware, max(0.0, float(wait)))
        out: Dict[str, BusSpec] = {}
        for name, firmware in self._firmware.items():
            link = self._links.get(name)
            if link is not None:
                out[name] = BusSpec(SIM_INTERFACE, link.address.group, link.address.bus_kwargs(),
                                    liveness=link.liveness,
                                    # replies queued during a stall are not lost
                                    after_open=_enlarge,
                                    after_close=_closer(link.liveness), peer="process")
            else:
                vch = f"rospy_control.sim.{self.name}.{name}.{id(self):x}"
                out[name] = BusSpec("virtual", vch, {}, liveness=firmware.liveness,
                                    before_open=_starter(firmware, vch), after_close=firmware.stop,
                                    peer="in-process")
        return out

    # -- fault switches and the command record ------------------------------------------------------
    def firmware(self, channel: str) -> SimulatedFirmware:
        """The simulated firmware on ``channel``.

        :raises HardwareError: the channel is not simulated, or its firmware runs in another process.
        """
        try:
            firmware = self._firmware[channel]
        except KeyError:
            raise HardwareError(f"channel '{channel}' is not simulated") from None
        if channel in self._links:
            raise HardwareError(f"the simulated firmware of channel '{channel}' runs in its own process "
                                f"({self._links[channel].address}); switch its faults there (sim node "
                                "services ~set_fault, ~reset_command_stats)")
        return firmware

    def firmware_of(self, unit: str) -> SimulatedFirmware:
        """The simulated firmware answering for ``unit``."""
        channel = self.channel_of(unit)
        if channel is None:
            raise HardwareError(f"unit '{unit}' is on no channel, so it is not simulated")
        return self.firmware(channel)

    def set_fault(self, unit: str, fault: str, on: bool = True, value: Optional[float] = None) -> None:
        """Switch a simulated fault of ``unit`` on or off (tests, demos).

        ``fault``: one of :data:`~.base.FAULTS`, a protocol device's own, or ``"bus_errors"`` /
        ``"bus_off"`` (the unit's whole bus); ``value`` as for :meth:`SimulatedFirmware.set_fault`.
        Switching off clears ``fault`` only if it is the unit's current one.

        :raises HardwareError: unknown unit, or its channel is not simulated.
        :raises ValueError: unknown fault.
        """
        sim = self.firmware_of(unit)
        # a protocol device (peers.py) has fault switches of its own (the manual's error names)
        own = tuple(getattr(sim.by_name.get(unit), "faults", ()))
        if fault not in FAULTS and fault not in BUS_FAULTS and fault not in own:
            raise ValueError(f"unknown simulated fault '{fault}'; known: "
                             f"{', '.join(FAULTS + BUS_FAULTS + tuple(f for f in own if f not in FAULTS))}")
        if fault == "bus_off":
            sim.set_bus_off(on)
            return
        if fault == "bus_errors":
            if on:
                sim.set_fault(None, "bus_errors")
            else:
                sim.bus_errors = False
            return
        if on:
            sim.set_fault(unit, fault, value)
        elif sim.fault_of(unit) == fault:
            sim.clear_fault(unit)

    def bus_off(self, unit: str, on: bool = True) -> None:
        """Take the bus of ``unit`` (a unit or channel name) off, or let it recover."""
        if unit in self._firmware:
            self.firmware(unit).set_bus_off(on)
        else:
            self.set_fault(unit, "bus_off", on)

    def bus_errors(self, unit: str, on: bool = True) -> None:
        """Make the bus of ``unit`` (a unit or channel name) report error frames, or stop."""
        if unit in self._firmware:
            firmware = self.firmware(unit)
            if on:
                firmware.set_fault(None, "bus_errors")
            else:
                firmware.bus_errors = False
            return
        self.set_fault(unit, "bus_errors", on)

    def local(self) -> Dict[str, SimulatedFirmware]:
        """``{channel: firmware}`` of the simulated channels whose firmware runs in this process."""
        return {n: s for n, s in self._firmware.items() if n not in self._links}

    def command_stats(self, unit: Optional[str] = None):
        """The record of the command frames each motor received (see
        :meth:`SimulatedFirmware.command_stats`): ``{unit: stats}`` over every channel simulated in
        this process, or the stats of ``unit``.

        :raises HardwareError: ``unit`` unknown or not simulated here.
        """
        if unit is not None:
            return self.firmware_of(unit).command_stats(unit)
        out: Dict[str, dict] = {}
        for sim in self.local().values():
            out.update(sim.command_stats())
        return out

    def reset_command_stats(self) -> None:
        """Forget what :meth:`command_stats` recorded so far (every channel simulated here)."""
        for sim in self.local().values():
            sim.reset_command_stats()

    def stop(self) -> None:
        """Stop every in-process firmware thread (idempotent; the middleware's shutdown does it too)."""
        for sim in self.local().values():
            sim.stop()
        for link in self._links.values():
            if link.liveness is not None:
                link.liveness.close()


def _enlarge(bus: Any) -> None:
    enlarge_receive_buffer(bus)


def _starter(firmware: SimulatedFirmware, channel: str):
    return lambda: firmware.start(channel)


def _closer(liveness: Any):
    return liveness.close if liveness is not None else None
