"""The simulated firmware of one channel: every simulated device on one bus (a private ``virtual``
channel in the driver's process, or a ``udp_multicast`` group in a simulator process of its own)."""
from __future__ import annotations

import heapq
import itertools
import random
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.simulator.base import FAULTS, SimulationSettings, SimUnit
from rospy_control.simulator.bus import PING_ID, PONG_ID, drop_own_echoes, enlarge_receive_buffer
from rospy_control.simulator.liveness import GAP as LAG_GAP, Liveness
from rospy_control.simulator.motor import CommandStats, SimulatedMotor
from rospy_control.simulator.mismatch import as_built, silent
from rospy_control.simulator.peers import peer_for
from rospy_control.simulator.sensors import SENSOR_MODELS, SimSensor
from rospy_control.bus.channel import CAN_ERR_BUSOFF, CAN_ERR_RESTARTED
from rospy_control.hardware_config.records import UnitConfig

__all__ = ["SimulatedFirmware"]

logger = get_logger(__name__)

INF = float("inf")

#: :data:`SENSOR_MODELS` as :class:`SimulatedFirmware` uses it: each model is built only for a unit
#: whose configuring class (or a base of it) has the name it is paired with
_SENSOR_MODELS: Tuple[Tuple[str, Callable[..., SimSensor]], ...] = SENSOR_MODELS


class SimulatedFirmware:
    """All simulated devices of one channel, answering on a virtual bus.

    Build it (this validates every ``<simulation>`` element), then :meth:`start` it on the channel id
    the middleware's channel opens, and :meth:`stop` it after the channel is closed.

    :param units: the configuration records of the channel's units
        (:mod:`rospy_control.hardware_config.records`), never the driver's devices; their ``simulation``
        element configures the model.
    :param settings: the channel's :class:`SimulationSettings`.
    :param master_id: id replies are sent to.
    """

    #: seconds the thread waits for a frame before it loops anyway (its idle sign of life)
    IDLE_WAKE = 0.02
    #: after :meth:`stop`, how long the thread keeps handling frames already on the bus (s): a device
    #: acts on every frame it was sent (the exit-motor-mode frames of a driver's shutdown), however late
    #: this thread runs
    STOP_DRAIN = 0.5
    #: a frame that waited longer than this for the thread (a host that starved the simulator) is
    #: dropped unanswered, as a CAN controller's full receive FIFO drops what it cannot take: a real
    #: device never answers a frame seconds old, and a simulator working through a backlog would
    #: run every device that much behind the driver (s; above liveness.GAP, so every such drop is
    #: excused as the stall it is)
    STALE_AFTER = 0.06
    #: how often protocol devices are asked for the frames they send on their own (s)
    PEER_TICK = 0.001
    #: while the simulated bus is off, a CAN_ERR_BUSOFF error frame this often (s): a controller whose
    #: automatic restart (socketcan ``restart-ms``) finds the bus still broken goes bus-off again
    BUS_OFF_REPEAT = 0.1

    def __init__(self, name: str, units: List[UnitConfig], settings: SimulationSettings,
                 master_id: int = 0) -> None:
        self.name = name
        self.settings = settings
        self.master_id = master_id
        self.dt = 1.0 / settings.rate
        self.motors: Dict[int, SimulatedMotor] = {}
        self.sensors: Dict[int, SimSensor] = {}
        self.by_name: Dict[str, SimUnit] = {}
        self.bus_errors = False
        #: the switch ``bus_off``: while True the bus carries no frame (see :meth:`set_bus_off`)
        self.bus_off = False
        self._off = False           # the thread's view of bus_off (it sends the state changes)
        self._off_next = 0.0        # when the next CAN_ERR_BUSOFF frame is due
        #: CAN_ERR_BUSOFF error frames sent, and data frames lost because the bus was off
        self.bus_off_frames = 0
        self.frames_lost = 0
        self.frames_handled = 0
        #: frames that waited longer than :attr:`STALE_AFTER` for this thread and were dropped unanswered
        self.frames_stale = 0
        #: the thread's sign of life for the channel (a shared one when the simulator has its own process)
        self.liveness: Liveness = Liveness()
        #: protocol devices (DaMiao, ODrive, ...: :mod:`.peers`), and who reads which frame id
        self.peers: List[Any] = []
        self._peer_readers: Dict[Tuple[int, bool], List[Any]] = {}
        #: (mask, value, peer) of peers reading 29-bit ids that carry data (``listen_routes()``, optional:
        #: RobStride puts the torque of its operation-control frame in the id)
        self._peer_routes: List[Tuple[int, int, Any]] = []
        for u in units:
            u = as_built(u)
            try:
                peer = peer_for(u)
                if peer is not None:
                    peer.listen_ids()   # validates the ids (routed by _route below)
            except ConfigError:
                raise
            except ValueError as err:  # a value the device's frames cannot carry
                raise ConfigError(f"unit '{u.name}' ({u.type_name}) cannot be simulated: {err}",
                                  u.element.source, u.element.line) from None
            if peer is not None:
                self.peers.append(peer)
                self.by_name[u.name] = peer
            elif u.is_a("Motor"):
                m = SimulatedMotor(u, u.simulation)
                self.motors[u.can_id] = m
                self.by_name[u.name] = m
            else:
                for kind, model in _SENSOR_MODELS:
                    if u.is_a(kind):
                        s = model(u, u.simulation)
                        self.sensors[u.can_id] = s
                        self.by_name[u.name] = s
                        break
                else:
                    if settings.enabled:  # (built on hardware too, to validate the <simulation> elements)
                        logger.warning("simulation '%s': no model for unit '%s' (%s); it will stay silent",
                                       name, u.name, u.type_name)
        self._route()
        for u in units:
            if silent(u) and u.name in self.by_name:   # the mismatch switch (:mod:`.mismatch`)
                self.set_fault(u.name, "silent")
        for s in self.sensors.values():  # validate motor references now, not on the first poll
            for ref in ("hfe_motor", "kfe_motor", "follows"):
                target = getattr(s, ref, None)
                if target is not None:
                    self.motor_model(target, s)
        self._bus: Optional[can.BusABC] = None
        self._thread: Optional[threading.Thread] = None
        self._running = False
        self._heap: List[Tuple[float, int, can.Message]] = []
        self._counter = itertools.count()
        self._reply = can.Message(arbitration_id=master_id, is_extended_id=False, data=bytearray(8))
        self.error: Optional[BaseException] = None

    def _route(self) -> None:
        """Who reads which frame id, from every peer's ``listen_ids()`` / ``listen_routes()``; filled in
        place (the bus thread holds these containers).  Again after a device took a new id (its
        ``ids_changed``: DaMiao ESC_ID, RobStride type 7, ODrive Set_Axis_Node_ID)."""
        self._peer_readers.clear()
        self._peer_routes.clear()
        for peer in self.peers:
            for key in peer.listen_ids():
                self._peer_readers.setdefault((int(key[0]), bool(key[1])), []).append(peer)
            for mask, value in getattr(peer, "listen_routes", lambda: ())():
                self._peer_routes.append((int(mask), int(value), peer))

    def gravity_joints(self) -> List[Any]:
        """The simulated joints of this channel's actuators, in unit order, each offering what the
        simulator's gravity (:mod:`rospy_control.simulator.gravity`) needs: ``unit`` (name, direction,
        joint), ``joint_position()`` (the unit's radians as the RobotHW sees them), ``gravity_load``
        (N·m, motor frame, added to the load it integrates) and ``gravity`` (asked to refresh before
        each integration).  Every model's ``joint``: an MIT :class:`SimulatedMotor` is its own joint,
        a protocol peer gives its :class:`~.joint.JointModel`."""
        out: List[Any] = []
        for model in self.by_name.values():
            joint = getattr(model, "joint", None)
            if joint is not None and getattr(joint, "unit", None) is not None:
                out.append(joint)
        return out

    def alive_time(self) -> float:
        """perf_counter time of the thread's latest loop pass (it loops at least every IDLE_WAKE s)."""
        return self.liveness.alive

    def motor_model(self, name: str, referrer: Optional[SimUnit] = None) -> SimulatedMotor:
        """The simulated motor called ``name`` (ConfigError naming the referrer if unknown)."""
        m = self.by_name.get(name)
        if not isinstance(m, SimulatedMotor):
            where = referrer._reader.element if referrer is not None else None
            who = referrer.name if referrer else "?"
            msg = (f"<simulation> of '{who}' refers to motor '{name}', which is "
                   f"not a motor on channel '{self.name}'; motors there: "
                   + ", ".join(sorted(n for n, u in self.by_name.items() if isinstance(u, SimulatedMotor))))
            raise ConfigError(msg, where.source if where else None, where.line if where else None)
        return m

    # -- fault switches -----------------------------------------------------------------------------
    def set_fault(self, unit: Optional[str], fault: str, value: Optional[float] = None) -> None:
        """Switch a fault on.  ``unit=None, fault='bus_errors'`` makes the bus report error frames,
        ``unit=None, fault='bus_off'`` takes the bus off (:meth:`set_bus_off`).

        ``value``: extra delay in s for ``late`` (default 0.05), error code for ``error_flag``
        (default 1), temperature for ``over_temperature`` (default 120).
        """
        if unit is None:
            if fault == "bus_off":
                self.set_bus_off(True)
                return
            if fault != "bus_errors":
                raise ValueError("only 'bus_errors' and 'bus_off' are bus-wide faults")
            self.bus_errors = True
            return
        m = self._sim_unit(unit)
        if hasattr(m, "set_fault"):      # a protocol device: "silent" and its own error conditions
            m.set_fault(fault, value)
            return
        if fault not in FAULTS:
            raise ValueError(f"unknown fault '{fault}'; known: {', '.join(FAULTS)}")
        m.fault_value = value
        m.fault = fault

    def clear_fault(self, unit: Optional[str] = None) -> None:
        """Clear the fault of ``unit`` (None: of every unit and the bus)."""
        targets = self.by_name.values() if unit is None else [self._sim_unit(unit)]
        for m in targets:
            if hasattr(m, "clear_fault"):
                m.clear_fault()
            else:
                m.fault = None
        if unit is None:
            self.bus_errors = False
            self.bus_off = False

    def set_bus_off(self, on: bool = True) -> None:
        """Take the whole bus off (``on``) or let it recover, as a CAN controller's bus-off does.

        While off, no frame reaches any device (they are counted in :attr:`frames_lost`, not in the
        devices' own counters), nothing is answered, delayed replies are dropped, and the bus delivers
        an error frame with ``CAN_ERR_BUSOFF`` in its id every :attr:`BUS_OFF_REPEAT` s -- what Linux
        socketcan gives a python-can bus (``is_error_frame``, ``arbitration_id & 0x40``) when its
        controller is bus-off and its automatic restart keeps failing.  Switched off: one error frame
        with ``CAN_ERR_RESTARTED`` (0x100, the controller restarted), and traffic resumes.
        """
        self.bus_off = bool(on)

    def fault_of(self, unit: str) -> Optional[str]:
        """The fault switch currently on for ``unit`` (None: none)."""
        return self._sim_unit(unit).fault

    def _sim_unit(self, unit: str) -> SimUnit:
        try:
            return self.by_name[unit]
        except KeyError:
            raise ValueError(f"simulation '{self.name}' has no unit '{unit}'; simulated units: "
                             f"{', '.join(self.by_name) or '(none)'}") from None

    # -- command record -------------------------------------------------------------------------------
    def command_stats(self, unit: Optional[str] = None) -> dict:
        """What the simulated motors received in motor mode (see the module docstring).

        For one motor: ``{"count", "last_p_des", "max_step", "max_step_time" (time.time()),
        "max_step_from", "max_step_to", "firmware_timeouts", "enabled"}`` (joint units, None before the
        first frame / step); without ``unit``: ``{motor name: that dict}`` for every simulated motor.

        :raises ValueError: ``unit`` is not a simulated motor here.
        """
        if unit is not None:
            m = self._sim_unit(unit)
            if not isinstance(m, SimulatedMotor):
                raise ValueError(f"simulation '{self.name}': unit '{unit}' is not a motor")
            return self._stats_of(m)
        return {n: self._stats_of(m) for n, m in self.by_name.items() if isinstance(m, SimulatedMotor)}

    @staticmethod
    def _stats_of(m: "SimulatedMotor") -> dict:
        d = m.cstats.as_dict()
        d["firmware_timeouts"] = m.firmware_timeouts
        d["enabled"] = m.enabled
        return d

    def reset_command_stats(self, unit: Optional[str] = None) -> None:
        """Start the command record afresh (of ``unit``, or of every motor).  The chain of consecutive
        frames is kept: a step between the last frame before and the first after the reset counts."""
        targets = self.by_name.values() if unit is None else [self._sim_unit(unit)]
        for m in targets:
            if isinstance(m, SimulatedMotor):
                fresh = CommandStats()
                fresh.prev = m.cstats.prev
                m.cstats = fresh

    # -- lifecycle ------------------------------------------------------------------------------------
    def start(self, channel: str, interface: str = "virtual", **bus_kwargs: Any) -> None:
        """Open the bus (``interface`` on ``channel``: the channel's private ``virtual`` channel, or a
        ``udp_multicast`` group with ``port=...`` when the firmware runs in its own process, see
        :mod:`.bus`) and start answering.

        :raises can.CanError, OSError: the bus cannot be opened (nothing is started then).
        """
        if self._thread is not None:
            return
        if self.settings.seed is not None:
            random.seed(self.settings.seed)
        # can.Bus is declared as an abstract BusABC subclass; its __new__ returns the interface's bus
        self._bus = drop_own_echoes(can.Bus(interface=interface, channel=channel,  # type: ignore[abstract]
                                            receive_own_messages=False, **bus_kwargs))
        enlarge_receive_buffer(self._bus)  # a stalled simulator process loses no command frame
        self._running = True
        self._thread = threading.Thread(target=self._run, name=f"rospy_control.sim.{self.name}", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        """True while the thread answers frames."""
        return self._thread is not None

    def stop(self) -> None:
        """Stop the thread and close the bus (idempotent).  Frames already on the bus are handled first
        (for at most :attr:`STOP_DRAIN` s)."""
        self._running = False
        if self._thread is not None:
            self._thread.join(2.0)
            self._thread = None
        if self._bus is not None:
            self._bus.shutdown()
            self._bus = None

    def _latency(self, unit: SimUnit) -> float:
        lat = unit.latency if unit.latency is not None else self.settings.latency
        if unit.fault == "late":
            lat += unit.fault_value if unit.fault_value is not None else 0.05
        return lat

    def _run(self) -> None:
        bus = self._bus
        assert bus is not None, "start() opens the bus before it starts this thread"
        recv, send = bus.recv, bus.send
        perf = time.perf_counter
        heap = self._heap
        motors, sens = self.motors, self.sensors
        dt = self.dt
        reply = self._reply
        master = self.master_id
        reply_due: Dict[int, float] = {}  # per motor id: when its latest delayed reply goes out
        beat = self.liveness.beat
        lagging = self.liveness.lagging
        dropped = self.liveness.dropped
        progress = self.liveness.progress
        last_taken = perf()
        taken = last_taken
        wall = time.time  # python-can stamps received frames with the wall clock
        peers = self.peers
        peer_readers = self._peer_readers
        peer_routes = self._peer_routes
        next_tick = 0.0
        stale_after = self.STALE_AFTER
        drain_end = None  # set once stop() is asked: the frames already on the bus are still handled
        while True:
            if not self._running:
                if drain_end is None:
                    drain_end = perf() + self.STOP_DRAIN
                elif perf() > drain_end:
                    break
            beat(perf())  # wakes at least every IDLE_WAKE s, also with nothing to do
            try:
                timeout = self.IDLE_WAKE
                if drain_end is not None:
                    timeout = 0.0
                elif heap:
                    timeout = max(0.0, min(timeout, heap[0][0] - perf()))
                if peers and drain_end is None:
                    timeout = max(0.0, min(timeout, next_tick - perf()))
                msg = recv(timeout)
                if msg is None and drain_end is not None:
                    break  # every frame sent before stop() has been answered
                now = perf()
                if msg is None:
                    taken = now          # nothing waited: every frame that came has been taken
                elif msg.timestamp:      # queued long ago: this thread is not keeping up
                    lag = wall() - msg.timestamp
                    taken = now - lag
                    if lag > LAG_GAP:
                        if lag > stale_after and drain_end is None:
                            # Dropped unanswered; the frames queued behind it that are fresh enough
                            # are still taken (a stop frame sent just now reaches its motor).  A
                            # thread that stays at the limit drops some frames of every cycle: each
                            # drop is recorded, so the driver excuses the silence it causes.
                            self.frames_stale += 1
                            dropped(now, lag)
                            if not msg.is_extended_id:
                                m = motors.get(msg.arbitration_id)
                                if m is not None:
                                    # the chain of commands it received is broken by this drop, not
                                    # by the driver: the next step is not measured across it
                                    m.cstats.prev = None
                            msg = None
                            taken = last_taken   # dropped unanswered: not taken
                        else:
                            lagging(now, lag)
                else:
                    taken = now
                if (self.bus_off or self._off) and self._bus_off_pass(msg, now, send):
                    last_taken = taken   # lost on a bus that is off, as on a real one
                    progress(taken, INF)
                    continue
                if peers and now >= next_tick:
                    next_tick = now + self.PEER_TICK
                    for p in peers:
                        out = p.tick(now, dt)
                        if out and p.fault != "silent":
                            self._send_peer(p, out, now, send)
                readers = None
                if peers and msg is not None and not msg.is_error_frame:
                    readers = peer_readers.get((msg.arbitration_id, bool(msg.is_extended_id)))
                    if readers is None and peer_routes and msg.is_extended_id:
                        aid = msg.arbitration_id
                        readers = [p for m, v, p in peer_routes if aid & m == v] or None
                if msg is not None and msg.is_extended_id and msg.arbitration_id == PING_ID:
                    # readiness probe of a driver in another process (.bus.wait_for_simulator)
                    send(can.Message(arbitration_id=PONG_ID, is_extended_id=True, data=bytes(msg.data)))
                elif readers is not None:
                    self.frames_handled += 1
                    for p in readers:
                        out = p.handle_frame(msg, now, dt)
                        if out and p.fault != "silent":
                            self._send_peer(p, out, now, send)
                        device = getattr(p, "device", p)
                        if getattr(device, "ids_changed", False):
                            device.ids_changed = False
                            self._route()
                elif msg is not None and not msg.is_error_frame and not msg.is_extended_id:
                    self.frames_handled += 1
                    aid = msg.arbitration_id
                    m = motors.get(aid)
                    if m is not None:
                        m.frames += 1
                        if m.fault != "silent":
                            payload = m.handle(msg.data, now, dt)
                            if payload is not None:
                                lat = self._latency(m) if (m.latency or m.fault or self.settings.latency) \
                                    else 0.0
                                # a device answers in order: a reply never overtakes an earlier,
                                # longer-delayed one (switching 'late' off must not reorder them)
                                due = now + lat
                                if due < reply_due.get(aid, 0.0):
                                    due = reply_due[aid]
                                if due > now:
                                    reply_due[aid] = due
                                    heapq.heappush(heap, (due, next(self._counter), can.Message(
                                        arbitration_id=master, is_extended_id=False, data=payload)))
                                else:
                                    # bytes, not bytearray: the virtual bus deep-copies every frame
                                    reply.data = payload  # type: ignore[assignment]
                                    reply.dlc = len(payload)
                                    send(reply)
                                self._after_reply(m, send)
                    else:
                        s = sens.get(aid)
                        if s is not None:
                            s.frames += 1
                        if s is not None and s.fault != "silent" and len(msg.data) == 0:
                            lat = self._latency(s)
                            for rid, payload in s.answer(self):
                                if s.fault == "wrong_dlc":
                                    payload = payload[:3]
                                out = can.Message(arbitration_id=rid, is_extended_id=False, data=payload)
                                if lat > 0.0:
                                    heapq.heappush(heap, (now + lat, next(self._counter), out))
                                else:
                                    send(out)
                            self._after_reply(s, send)
                while heap and heap[0][0] <= now:
                    send(heapq.heappop(heap)[2])
                last_taken = taken
                progress(taken, heap[0][0] if heap else INF)
            except Exception as err:  # noqa: BLE001 - keep simulating; tests read .error
                if self.error is None:
                    self.error = err
                    logger.error("simulation '%s': %s: %s", self.name, type(err).__name__, err)
                if not self._running:
                    break
                time.sleep(0.001)  # never spin on a persistent error

    def _send_peer(self, peer: Any, frames: List[can.Message], now: float, send) -> None:
        lat = self._latency(peer) if (peer.latency or peer.fault or self.settings.latency) else 0.0
        for out in frames:
            if lat > 0.0:
                heapq.heappush(self._heap, (now + lat, next(self._counter), out))
            else:
                send(out)

    def _bus_off_pass(self, msg: Optional[can.Message], now: float, send) -> bool:
        """One loop pass while the bus is off or just came back; True: ``msg`` never reached the bus."""
        if self.bus_off:
            if not self._off:
                self._off = True
                self._heap.clear()  # a bus-off controller aborts what it had queued
                self._off_next = now
            if msg is not None and not msg.is_error_frame:
                self.frames_lost += 1
            if now >= self._off_next:
                send(can.Message(is_error_frame=True, arbitration_id=CAN_ERR_BUSOFF, is_extended_id=False,
                                 data=bytes(8)))
                self.bus_off_frames += 1
                self._off_next = now + self.BUS_OFF_REPEAT
            return True
        self._off = False  # the automatic bus-off recovery: the controller restarted
        send(can.Message(is_error_frame=True, arbitration_id=CAN_ERR_RESTARTED, is_extended_id=False,
                         data=bytes(8)))
        return False

    def _after_reply(self, unit: SimUnit, send) -> None:
        if unit.fault == "garbage":
            # a too-short reply carrying the motor's id, and a frame on an id nobody uses
            send(can.Message(arbitration_id=self.master_id, is_extended_id=False,
                             data=bytes((getattr(unit, "motor_id", 0), 0xA5, 0x5A))))
            junk = bytes(random.getrandbits(8) for _ in range(8))
            send(can.Message(arbitration_id=0x7EE, is_extended_id=False, data=junk))
        if self.bus_errors:
            send(can.Message(is_error_frame=True, arbitration_id=0, data=b""))
