"""The :class:`Middleware`: units + channels built from the hardware XML.

The description is read into configuration records first (:mod:`.configuration`: every ``type``
resolved, every element read and checked by its class); the channels and devices are built from those
records and CAN ids are checked per bus -- all before anything is opened, so a bad file never starts
half-configured.  Who answers on a bus is not its business: a
composition root may hand it bus overrides (:mod:`rospy_control.bus.spec`).
"""
from __future__ import annotations

import threading
import time
from types import MappingProxyType
from typing import Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Tuple, Union

from rospy_control.exceptions import HardwareError
from rospy_control.log import get_logger
from rospy_control.bus.channel import CanChannel
from rospy_control.hardware_config.document import HardwareInfo, parse_hardware_xml
from rospy_control.hardware_config.records import RobotConfig
from rospy_control.bus.events import EventLog, FaultEvent
from rospy_control.bus.spec import BusSpec
from rospy_control.devices import WATCHDOG_MODES, ActuatorUnit, CanUnit, ControlMode, HardwareUnit, UnitGroup
# the registries are this module's surface too
from rospy_control.middleware.configuration import (  # noqa: F401
    CHANNEL_TYPES, UNIT_TYPES, channel_class, read_configuration, unit_class,
)

__all__ = ["Middleware", "Snapshot", "UNIT_TYPES", "CHANNEL_TYPES"]

logger = get_logger(__name__)


class Snapshot:
    """States of all units, each channel's from one complete cycle.

    Mapping-like: ``snap["elbow_motor"].position``, ``snap.get(name)``, ``for name in snap``.
    ``stamp`` is the ``time.perf_counter()`` of the newest cycle included.
    """

    __slots__ = ("stamp", "states")

    def __init__(self, stamp: float, states: Dict[str, Any]) -> None:
        self.stamp = stamp
        #: read-only ``{unit name: state}``; each state's type (MotorState, ImuState, ...) depends on its unit
        self.states = MappingProxyType(states)

    def __getitem__(self, name: str):
        return self.states[name]

    def get(self, name: str, default=None):
        return self.states.get(name, default)

    def __iter__(self) -> Iterator[str]:
        return iter(self.states)

    def __len__(self) -> int:
        return len(self.states)

    def items(self):
        return self.states.items()

    def faults(self) -> Dict[str, str]:
        """``{unit name: fault reason}`` of every unit in FAULT."""
        return {n: s.fault_reason for n, s in self.states.items() if s.fault}


class Middleware:
    """Hardware units and CAN channels of one robot; see the package docstring for the API.

    Plain construction (``Middleware(info)`` or :meth:`from_xml`) for tests; :meth:`instance`
    for the one shared per process.

    :param info: parsed hardware description.
    :param buses: ``{channel: BusSpec}`` -- channels to open other than as the XML says (a peer such
        as the simulator, see :mod:`rospy_control.bus.spec`); the others open their configured
        interfaces.  Also settable with :meth:`set_buses` before :meth:`start`.
    """

    _instance: Optional["Middleware"] = None
    _instance_lock = threading.Lock()
    #: entries kept by the event log (:meth:`events`)
    EVENT_LOG_SIZE = 200

    def __init__(self, info: Union[HardwareInfo, RobotConfig],
                 buses: Optional[Mapping[str, BusSpec]] = None) -> None:
        self.name = info.name
        self.source = info.source
        #: the parsed hardware description or its records (robot-level elements such as the gravity
        #: options are read from its root ``element`` by rospy_control.dynamics, without parsing again)
        self.info = info
        self.channels: Dict[str, CanChannel] = {}
        self._state_readers: Tuple[Callable[[], Tuple[float, Dict[str, Any]]], ...] = ()  # see states()
        self._units: Dict[str, HardwareUnit] = {}
        self._leaves: List[HardwareUnit] = []
        self._buses: Dict[str, BusSpec] = {}
        self._started = False
        self._closed = False
        self._events = EventLog(self.EVENT_LOG_SIZE)
        #: the description as configuration records (what the simulator builds its devices from too)
        self.config = info if isinstance(info, RobotConfig) else read_configuration(info)
        for cc in self.config.channels:
            self.channels[cc.name] = channel_class(cc.type_name).from_config(cc)
        for uc in self.config.units:
            unit = unit_class(uc).from_config(uc)
            self._units[uc.name] = unit
            if uc.group is not None:
                parent = self._units[uc.group]
                assert isinstance(parent, UnitGroup)  # a <group> (built before its members; checked)
                parent.add(unit)
            if not isinstance(unit, UnitGroup):
                self._leaves.append(unit)
            if isinstance(unit, CanUnit):
                assert uc.channel is not None  # read_configuration requires one
                self.channels[uc.channel].add_unit(unit)
        for ch in self.channels.values():
            ch.set_event_log(self._events)
        if buses:
            self.set_buses(buses)

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_xml(cls, source: str, buses: Optional[Mapping[str, BusSpec]] = None) -> "Middleware":
        """Build from a file path or XML text.  :raises ConfigError: on any configuration problem."""
        return cls(parse_hardware_xml(source), buses=buses)

    @classmethod
    def instance(cls, source: Optional[str] = None,
                 buses: Optional[Mapping[str, BusSpec]] = None) -> "Middleware":
        """The process-wide shared middleware, built from ``source`` on first use.

        :raises HardwareError: no instance yet and no ``source`` given.
        """
        with cls._instance_lock:
            if cls._instance is None:
                if source is None:
                    raise HardwareError("the shared Middleware is not configured yet: call "
                                        "Middleware.instance(<hardware xml path or text>) first")
                cls._instance = cls.from_xml(source, buses=buses)
            return cls._instance

    @classmethod
    def release_instance(cls) -> None:
        """Shut down and forget the shared instance (tests, node restart)."""
        with cls._instance_lock:
            inst, cls._instance = cls._instance, None
        if inst is not None:
            inst.shutdown()

    # -- units --------------------------------------------------------------------------------------
    def units(self) -> List[HardwareUnit]:
        """All non-group units in configuration order."""
        return list(self._leaves)

    def unit(self, name: str) -> HardwareUnit:
        """The unit or group called ``name``.  :raises HardwareError: unknown name (lists known ones)."""
        try:
            return self._units[name]
        except KeyError:
            raise HardwareError(f"Could not find unit '{name}' in middleware '{self.name}'; known units: "
                                f"{', '.join(self._units)}") from None

    def motor(self, name: str) -> ActuatorUnit:
        """The actuator called ``name`` (any :class:`ActuatorUnit`: MIT :class:`Motor` or another device)."""
        u = self.unit(name)
        if not isinstance(u, ActuatorUnit):
            raise HardwareError(f"unit '{name}' is a {type(u).__name__}, not a Motor")
        return u

    def units_of_type(self, kind: Union[type, str]) -> List[HardwareUnit]:
        """Units (and groups) that are instances of ``kind`` (a class or a registered type name)."""
        cls = UNIT_TYPES.resolve(kind) if isinstance(kind, str) else kind
        return [u for u in self._units.values() if isinstance(u, cls)]

    def motors(self) -> List[ActuatorUnit]:
        """Every actuator (:class:`ActuatorUnit`), whatever its protocol, in file order."""
        return [u for u in self._leaves if isinstance(u, ActuatorUnit)]

    def groups(self) -> List[UnitGroup]:
        return [u for u in self._units.values() if isinstance(u, UnitGroup)]

    def __contains__(self, name: str) -> bool:
        return name in self._units

    # -- bus overrides ------------------------------------------------------------------------------
    def set_buses(self, buses: Mapping[str, BusSpec]) -> None:
        """Open the named channels as ``buses`` says (see :mod:`rospy_control.bus.spec`); before
        :meth:`start`.  :raises HardwareError: started already, or an unknown channel."""
        if self._started:
            raise HardwareError("set_buses() must be called before start()")
        for name, spec in buses.items():
            if name not in self.channels:
                raise HardwareError(f"bus override for unknown channel '{name}'; channels: "
                                    f"{', '.join(self.channels)}")
            self._buses[name] = spec

    def buses(self) -> Dict[str, BusSpec]:
        """``{channel: BusSpec}`` of the channels opened other than as the XML says."""
        return dict(self._buses)

    # -- lifecycle ----------------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._started and not self._closed

    def start(self, enable_motors: bool = True, wait: bool = True) -> None:
        """Open every bus (overrides: :meth:`set_buses`), start one read/write thread per channel.

        :param enable_motors: send enter-motor-mode and commands; ``False`` only listens.
        :param wait: return once every unit has answered and every actuator confirmed it is enabled
            (or faulted), at most after 1 s or the actuators' longest ``startup_timeout``, so the first
            :meth:`snapshot` holds real values and the motors can follow a command.
        :raises CommunicationError: a bus cannot be opened (everything opened so far is closed again).
        """
        if self._closed:
            raise HardwareError(f"middleware '{self.name}' was shut down; build a new one")
        if self._started:
            return
        self._started = True
        try:
            for name, ch in self.channels.items():
                load = ch.bus_load()
                if load > ch.max_bus_load:
                    logger.warning(
                        "channel '%s': estimated bus load %.0f %% at %.0f Hz with %d units exceeds %.0f %%; "
                        "highest rate that fits: %.0f Hz", name, 100 * load, ch.rate, len(ch.units),
                        100 * ch.max_bus_load, ch.max_rate(ch.max_bus_load))
                else:
                    logger.info("channel '%s': estimated bus load %.0f %% at %.0f Hz", name, 100 * load,
                                ch.rate)
            for name, ch in self.channels.items():
                spec = self._buses.get(name)
                if spec is None:
                    ch.open()
                    continue
                if spec.before_open is not None:
                    spec.before_open()
                ch.open(interface=spec.interface, channel=spec.channel, **spec.kwargs)
                if spec.after_open is not None:
                    spec.after_open(ch._bus)
                ch.liveness = spec.liveness  # a peer that did not run blames no unit
            for ch in self.channels.values():
                ch.start(enable_motors)
            if wait:
                self._wait_ready(enable_motors)
        except BaseException:
            self.shutdown()
            raise
        peers = sorted({spec.peer for spec in self._buses.values() if spec.peer})
        where = f" (peer: {', '.join(peers)})" if peers else ""
        logger.info("middleware '%s' started: %d units on %d channel(s)%s", self.name, len(self._leaves),
                    len(self.channels), where)

    def _wait_ready(self, enabled: bool, timeout: float = 1.0) -> None:
        """Wait until each channel published a cycle in which every unit had answered or faulted and,
        with ``enabled``, every actuator confirmed it is enabled (or faulted): ``timeout`` at most, or
        the longest ``startup_timeout`` of the actuators (a CANopen drive's boot-up and SDO
        configuration take longer than a request/reply motor's enable).  An actuator still starting
        after that is named in a warning; its joints take no trajectory until it is enabled."""
        start = time.monotonic()
        end = start + timeout
        for ch in self.channels.values():
            ch.wait_first_cycle(max(0.0, end - time.monotonic()))
        if not enabled:
            return
        motors = self.motors()
        actuators = {u.name for u in motors}
        end = start + max([timeout] + [u.startup_timeout for u in motors])

        def starting(name: str, s: Any) -> bool:
            if s is None or s.fault:
                return False
            return not s.received or (name in actuators and not s.enabled)

        waiting: List[str] = []
        while True:
            waiting = [n for n, s in self.snapshot().states.items() if starting(n, s)]
            if not waiting or time.monotonic() >= end:
                break
            time.sleep(0.002)
        if waiting:
            logger.warning("middleware '%s': %s not enabled %.1f s after start-up; their joints take no "
                           "trajectory until they are", self.name, ", ".join(f"'{n}'" for n in waiting),
                           time.monotonic() - start)

    def shutdown(self) -> None:
        """Stop the threads, send exit-motor-mode to every motor, close buses (and release their peers).

        Idempotent; safe after a failed or missing :meth:`start`.
        """
        if self._closed:
            return
        self._closed = True
        for ch in self.channels.values():
            try:
                if not ch.shutdown():
                    # its bus thread still runs: the bus stays open and untouched (said by the channel);
                    # the other channels' buses are their own and are shut down regardless
                    logger.error("channel '%s': left running (its bus thread did not stop)", ch.name)
            except Exception as err:  # noqa: BLE001 - shut down the rest regardless
                logger.error("channel '%s': shutdown failed: %s", ch.name, err)
        for name, spec in self._buses.items():
            if spec.after_close is not None:
                try:
                    spec.after_close()
                except Exception as err:  # noqa: BLE001 - release the rest regardless
                    logger.error("channel '%s': releasing its bus peer failed: %s", name, err)

    def __enter__(self) -> "Middleware":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    def check(self) -> None:
        """Re-raise the first error recorded by any channel thread (CommunicationError)."""
        for ch in self.channels.values():
            ch.check()

    # -- cyclic API ---------------------------------------------------------------------------------
    def snapshot(self) -> Snapshot:
        """States of every unit; each channel's states come from one complete cycle."""
        chans = list(self.channels.values())
        if len(chans) == 1:
            stamp, states = chans[0].published  # one value: stamp and states of the same cycle
            return Snapshot(stamp, states)
        merged: Dict[str, Any] = {}
        latest = 0.0
        for ch in chans:
            stamp, states = ch.published
            merged.update(states)
            if stamp > latest:
                latest = stamp
        return Snapshot(latest, merged)

    def states(self) -> Dict[str, Any]:
        """``{unit name: state record}`` of every unit, each channel's from one complete cycle: what
        :meth:`snapshot` holds, for the control loop (no stamp, no Snapshot object)."""
        readers = self._state_readers
        if len(readers) != len(self.channels):
            readers = self._state_readers = tuple(ch.states_reader() for ch in self.channels.values())
        if len(readers) == 1:
            return readers[0]()[1]
        merged: Dict[str, Any] = {}
        for read in readers:
            merged.update(read()[1])
        return merged

    def set_command(self, name: str, mode: ControlMode, value: float = 0.0) -> None:
        """Non-blocking: command motor ``name`` (see :meth:`Motor.set_command`)."""
        self.motor(name).set_command(mode, value)

    def request_mode(self, name: str, mode: ControlMode) -> None:
        """Non-blocking mode switch with a safe hold value (see :meth:`Motor.request_mode`)."""
        self.motor(name).request_mode(mode)

    def mode_confirmed(self, name: str, mode: ControlMode) -> bool:
        return self.motor(name).mode_confirmed(mode)  # see Motor.mode_confirmed

    def _can_units(self, names: Optional[Iterable[str]]) -> List[CanUnit]:
        if names is None:
            leaves = self._leaves
        else:
            if isinstance(names, str):
                names = [names]
            leaves = []
            for n in names:
                u = self.unit(n)
                leaves.extend(u.leaves() if isinstance(u, UnitGroup) else [u])
        return [u for u in leaves if isinstance(u, CanUnit)]

    def reset_fault(self, name: Optional[str] = None) -> None:
        """Request a fault reset of unit (or group) ``name``, or of every unit in FAULT; non-blocking.

        Same mechanism as :meth:`reset_faults`: the channel thread probes each unit, which stays in
        FAULT until a valid reply confirms the recovery (motors then start in ``ControlMode.NONE``).
        """
        for u in self._can_units(None if name is None else [name]):
            if name is not None or u.fault:
                u.reset_fault()

    def reset_faults(self, names: Optional[Iterable[str]] = None,
                     timeout: Optional[float] = None) -> Dict[str, str]:
        """Reset units in FAULT and wait until each recovered or failed; ``{name: reason}`` of those still
        in FAULT (empty: all recovered).

        :param names: units or groups (default: every unit currently in FAULT); units not in FAULT are
            left alone.
        :param timeout: longest wait (s); default ``max(2 s, 10 x`` the slowest unit's probe window).
            A unit whose probe did not finish in time is reported with ``"reset not confirmed ..."``.

        A motor recovers when it answers the enter-motor-mode frame sent after the reset with a valid
        reply (no error byte, temperature below ``max_temperature``); a sensor on a valid answer.  It
        fails when it stays silent for its probe window (N unanswered requests on on-time cycles and
        ``fault_timeout``) or still reports the error.  Until then its published state keeps
        ``fault=True``.  Blocks the calling thread (never call it from a channel thread).

        :raises HardwareError: unknown name, or called from a channel thread.
        """
        me = threading.current_thread()
        if any(ch.thread is me for ch in self.channels.values()):
            raise HardwareError("reset_faults() blocks: do not call it from a channel thread")
        targets = [u for u in self._can_units(names) if u.fault]
        if not targets:
            return {}
        tickets = [(u, u.reset_fault()) for u in targets]
        if timeout is None:
            bound = 0.0
            for u in targets:
                ch = self.channels.get(u.channel_name) if u.channel_name is not None else None
                period = ch.period if ch is not None else 0.01
                bound = max(bound, u.detection_time + 2 * period)
            timeout = max(2.0, 10.0 * bound)
        running = self.running and all(
            self.channels[u.channel_name].thread is not None
            for u in targets if u.channel_name in self.channels)
        end = time.monotonic() + max(0.0, timeout)
        while running:
            if all(u.reset_outcome(t) is not None for u, t in tickets):
                break
            if time.monotonic() >= end:
                break
            time.sleep(0.002)
        out: Dict[str, str] = {}
        for u, t in tickets:
            if not u.fault:
                continue
            if u.reset_outcome(t) is None:
                why = "middleware not running" if not running else f"not confirmed within {timeout:.2f} s"
                out[u.name] = f"reset {why}: {u.fault_reason}"
            else:
                out[u.name] = u.fault_reason
        return out

    def events(self, since: int = 0) -> List[FaultEvent]:
        """Fault / reset / watchdog events with ``seq > since``, oldest first (the last
        :attr:`EVENT_LOG_SIZE` are kept).  Kinds: ``fault``, ``reset_requested``, ``recovered``,
        ``reset_failed``, ``watchdog_hold``, ``watchdog_released``."""
        return self._events.since(since)

    def set_watchdog_mode(self, mode: str, names: Optional[Iterable[str]] = None) -> None:
        """Set :meth:`Motor.set_watchdog_mode` of every motor (or of the named motors / groups).

        :raises ValueError: unknown mode.  :raises HardwareError: unknown name.
        """
        if mode not in WATCHDOG_MODES:
            raise ValueError(f"unknown watchdog_mode {mode!r}; expected one of {', '.join(WATCHDOG_MODES)}")
        for u in self._can_units(names):
            if isinstance(u, ActuatorUnit):
                u.set_watchdog_mode(mode)

    def faults(self) -> Dict[str, str]:
        """``{unit name: reason}`` of units currently in FAULT."""
        return self.snapshot().faults()

    def bus_load(self) -> Dict[str, float]:
        """Estimated load (fraction) per channel."""
        return {n: ch.bus_load() for n, ch in self.channels.items()}

    def statistics(self) -> dict:
        """Diagnostics: per channel counters (see :meth:`CanChannel.statistics`), current faults, and
        summaries: ``host`` (``late_cycles``, ``excused_cycles``, ``stalls`` summed over channels,
        ``longest_stall`` ms with ``longest_stall_time``, latest ``last_stall_time``), ``watchdog``
        (``{motor: trips}`` of motors that tripped, ``active``: motors held now) and ``events`` (seq of
        the newest event, 0 if none)."""
        channels = {n: ch.statistics() for n, ch in self.channels.items()}
        host = {"late_cycles": 0, "excused_cycles": 0, "stalls": 0, "longest_stall": 0.0,
                "longest_stall_time": None, "last_stall_time": None}
        trips: Dict[str, int] = {}
        for st in channels.values():
            host["late_cycles"] += st["late_cycles"]
            host["excused_cycles"] += st["excused_cycles"]
            host["stalls"] += st["stalls"]
            if st["longest_stall"] > host["longest_stall"]:
                host["longest_stall"] = st["longest_stall"]
                host["longest_stall_time"] = st["longest_stall_time"]
            last = st["last_stall_time"]
            if last is not None and (host["last_stall_time"] is None or last > host["last_stall_time"]):
                host["last_stall_time"] = last
            trips.update({n: k for n, k in st["watchdog_trips"].items() if k})
        events = self._events.since(0)
        return {
            "name": self.name,
            "running": self.running,
            # the channels opened on a bus override, and what their peer says it is
            "simulated": sorted(self._buses),
            "simulator": next((b.peer for b in self._buses.values() if b.peer), "none"),
            "channels": channels,
            "faults": self.faults(),
            "host": host,
            "watchdog": {"trips": trips, "active": [m.name for m in self.motors() if m.watchdog_active]},
            "events": events[-1].seq if events else 0,
        }
