"""What every protocol-level simulated device shares (DaMiao, ODrive, CubeMars V3, ...).

A :class:`SimulatedDevice` is the firmware of one device, nothing else: it takes a received
``can.Message`` and the current simulated :class:`PhysicalState` of its shaft and returns the frames
the real device sends in answer (:meth:`SimulatedDevice.handle_frame`); devices that transmit on
their own (ODrive's cyclic heartbeat and encoder estimates) return those from
:meth:`SimulatedDevice.tick`.  It holds the device's own state machine (enabled, axis state, errors,
registers, CAN timeout, watchdog) and tells the joint model what torque law to apply through
:meth:`SimulatedDevice.impedance` -- an MIT-style ``tau = kp (p_des - p) + kd (v_des - v) + t_ff`` at
the current state, or None when the output is off -- so the existing joint integrator of
:mod:`.motor` (implicit in ``kd``) drives every protocol.

Positions are in the device's own frame (the rotor side, rad), **before** the device's zero offset:
the device subtracts the zero it was told to set.

Shape, next to :class:`rospy_control.simulator.motor.SimulatedMotor`: ``name``,
``fault`` / ``fault_value`` (fault switches, :meth:`set_fault`), ``latency`` (None = the channel's),
``frames`` (frames received for this device) and :meth:`listen_ids` (the ids the firmware routes to
it; an id may be shared by several devices, e.g. DaMiao's 0x7FF, and each returns no frame for a
request addressed to another one).  No I/O, no threads, no clock of its own: ``now`` is passed in.
"""
from __future__ import annotations

from typing import Callable, Dict, List, NamedTuple, Optional, Set, Tuple

import can

__all__ = ["PhysicalState", "Impedance", "SimulatedDevice", "DeviceRouter", "advance_joint"]


class PhysicalState(NamedTuple):
    """The simulated shaft as the device's sensors see it (rad, rad/s, N·m, deg C)."""

    position: float = 0.0
    velocity: float = 0.0
    torque: float = 0.0
    temperature: float = 30.0
    #: power-stage temperature (deg C)
    mos_temperature: float = 30.0
    #: DC bus voltage (V)
    bus_voltage: float = 24.0


class Impedance(NamedTuple):
    """The torque law the device applies now: ``tau = kp (p_des - p) + kd (v_des - v) + t_ff``,
    saturated at ``torque_limit`` (N·m, None = the joint model's own limit)."""

    p_des: float
    v_des: float
    kp: float
    kd: float
    t_ff: float
    torque_limit: Optional[float] = None


class SimulatedDevice:
    """Base of the protocol-level simulated devices (see the module docstring)."""

    #: fault switches of :meth:`set_fault` every device understands
    COMMON_FAULTS: Tuple[str, ...] = ("silent",)
    #: the device's own fault switches (a subclass lists them, e.g. the manual's error names)
    DEVICE_FAULTS: Tuple[str, ...] = ()

    def __init__(self, name: str) -> None:
        self.name = name
        self.fault: Optional[str] = None
        self.fault_value: Optional[float] = None
        self.latency: Optional[float] = None
        self.frames = 0

    # -- what the firmware calls -------------------------------------------------------------------
    def listen_ids(self) -> List[Tuple[int, bool]]:
        """``(arbitration_id, is_extended_id)`` of every frame this device reads."""
        raise NotImplementedError

    def reply_ids(self) -> List[Tuple[int, bool]]:
        """``(arbitration_id, is_extended_id)`` of every frame this device sends."""
        raise NotImplementedError

    def shared_ids(self) -> Set[Tuple[int, bool]]:
        """Ids of :meth:`listen_ids`/:meth:`reply_ids` that devices of the same protocol may share
        (DaMiao's register id 0x7FF, a common master id); none by default."""
        return set()

    def handle_frame(self, msg: can.Message, state: PhysicalState, now: float) -> List[can.Message]:
        """Process one received frame; return the frames the device sends in answer (maybe none).

        A ``silent`` device counts the frame and answers nothing (it may still act on it: use the
        fault to model a broken transmitter; :meth:`set_fault` docs).
        """
        self.frames += 1
        self.expire(state, now)
        out = self._handle(msg, state, now)
        return [] if self.fault == "silent" else out

    def tick(self, state: PhysicalState, now: float) -> List[can.Message]:
        """Frames the device sends on its own by ``now`` (cyclic messages); none by default."""
        self.expire(state, now)
        return []

    def impedance(self, position: float, velocity: float) -> Optional[Impedance]:
        """The torque law at this shaft state (None: output off, the joint is limp)."""
        raise NotImplementedError

    def step(self, position: float, velocity: float, dt: float) -> None:
        """Advance the device's own controller state (e.g. a velocity integrator) by one joint
        integration step of ``dt``; called before :meth:`impedance` at every step.  Nothing by default."""

    def zero_position(self) -> float:
        """The shaft position (motor frame, rad) the device reports as 0: its own zero, moved by a
        set-zero command; 0 by default."""
        return 0.0

    def expire(self, state: PhysicalState, now: float) -> None:
        """Apply the device's own timeouts (CAN timeout, watchdog) up to ``now``."""

    # -- fault switches ----------------------------------------------------------------------------
    @property
    def faults(self) -> Tuple[str, ...]:
        return self.COMMON_FAULTS + self.DEVICE_FAULTS

    def set_fault(self, fault: str, value: Optional[float] = None) -> None:
        """Switch a fault on: ``silent`` (the device stops transmitting) or one of the device's own
        error conditions (:attr:`DEVICE_FAULTS`), which the device reports as the real one does and
        which stays until :meth:`clear_fault` (while it lasts, the device's clear-error command does
        not clear it: the condition trips again)."""
        if fault not in self.faults:
            raise ValueError(f"device '{self.name}': unknown fault '{fault}'; "
                             f"known: {', '.join(self.faults)}")
        self.fault = fault
        self.fault_value = value
        self._fault_changed()

    def clear_fault(self) -> None:
        """The fault condition is gone (the device's latched error stays until cleared on the bus)."""
        self.fault = None
        self.fault_value = None
        self._fault_changed()

    # -- for subclasses ----------------------------------------------------------------------------
    def _handle(self, msg: can.Message, state: PhysicalState, now: float) -> List[can.Message]:
        raise NotImplementedError

    def _fault_changed(self) -> None:
        """Called after the fault switch changed."""

    @staticmethod
    def _message(arbitration_id: int, data: bytes, extended: bool = False) -> can.Message:
        return can.Message(arbitration_id=arbitration_id, is_extended_id=extended, data=data)


class DeviceRouter:
    """The simulated devices of one bus, routed by id: what a simulator registers them in.

    :meth:`register` refuses a device whose ids collide with another's (a frame both would read or
    send), unless both declare the id shared (:meth:`SimulatedDevice.shared_ids`): on a real bus two
    such devices could not coexist either -- for instance ODrive node 0 (ids 0x000-0x01F) next to a
    DaMiao answering on master id 0x011.
    """

    def __init__(self) -> None:
        self.devices: Dict[str, SimulatedDevice] = {}
        self._readers: Dict[Tuple[int, bool], List[SimulatedDevice]] = {}
        self._owners: Dict[Tuple[int, bool], List[SimulatedDevice]] = {}

    def register(self, device: SimulatedDevice) -> None:
        """Add ``device``.

        :raises ValueError: the name is taken, or an id collides (naming both devices and the id).
        """
        if device.name in self.devices:
            raise ValueError(f"a simulated device named '{device.name}' is already registered")
        mine = set(device.listen_ids()) | set(device.reply_ids())
        for key in sorted(mine):
            for other in self._owners.get(key, []):
                if key in device.shared_ids() and key in other.shared_ids():
                    continue
                aid, ext = key
                raise ValueError(f"simulated devices '{other.name}' and '{device.name}' both use "
                                 f"{'extended' if ext else 'standard'} id 0x{aid:X}")
        self.devices[device.name] = device
        for key in mine:
            self._owners.setdefault(key, []).append(device)
        for key in device.listen_ids():
            self._readers.setdefault(key, []).append(device)

    def route(self, msg: can.Message, state_of: Callable[[SimulatedDevice], PhysicalState],
              now: float) -> List[can.Message]:
        """Hand ``msg`` to every device that reads its id; the frames they send in answer."""
        out: List[can.Message] = []
        for dev in self._readers.get((msg.arbitration_id, bool(msg.is_extended_id)), ()):
            out.extend(dev.handle_frame(msg, state_of(dev), now))
        return out

    def tick(self, state_of: Callable[[SimulatedDevice], PhysicalState], now: float) -> List[can.Message]:
        """The frames every device sends on its own by ``now``."""
        out: List[can.Message] = []
        for dev in self.devices.values():
            out.extend(dev.tick(state_of(dev), now))
        return out


def advance_joint(imp: Optional[Impedance], position: float, velocity: float, dt: float, inertia: float,
                  damping: float = 0.0) -> Tuple[float, float, float]:
    """One semi-implicit Euler step of a rigid joint driven by ``imp`` (None: limp):
    ``(position, velocity, torque)`` after ``dt``.  A minimal model for protocol tests; the
    simulator's joint model (:mod:`.motor`) integrates the same law with gravity and friction."""
    tau = 0.0
    if imp is not None:
        tau = imp.kp * (imp.p_des - position) + imp.kd * (imp.v_des - velocity) + imp.t_ff
        lim = imp.torque_limit
        if lim is not None:
            tau = lim if tau > lim else (-lim if tau < -lim else tau)
    velocity += (tau - damping * velocity) / inertia * dt
    position += velocity * dt
    return position, velocity, tau
