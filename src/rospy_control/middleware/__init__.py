"""rospy_control.middleware -- the ROS-free hardware layer (see docs/architecture.md).

It owns the CAN buses, speaks the motors' wire protocol (MIT mode) and our sensor protocol, runs one
read/write thread per channel and hands upper layers a consistent snapshot of every unit's state
each cycle while sending the latest commands.  It opens every channel's bus as the hardware XML says
(any python-can interface), unless the composition root hands it a bus override for that channel
(``Middleware(info, buses={channel: BusSpec})``, :mod:`rospy_control.bus.spec`): what is on the other
side -- motors, or a peer such as the simulator -- it does not know.  A peer that shares the host
brings a liveness policy (:mod:`rospy_control.bus.liveness`) so that a cycle in which it did not run
is not blamed on the units.

API for robot_hw
----------------
Build, start, stop::

    from rospy_control.middleware import Middleware, ControlMode
    mw = Middleware.from_xml("config/arm_hardware.xml")   # path or XML text; ConfigError on any problem
    # buses={channel: BusSpec} opens channels elsewhere; Middleware.instance(src) = shared one
    mw.start()                  # opens buses (CommunicationError naming interface+channel), enables motors
    ...
    mw.shutdown()               # idempotent; exit-motor-mode to every motor, buses closed
    with Middleware.from_xml(src) as mw: ...                       # same, as a context manager

Units (configuration objects; look-ups raise HardwareError listing the known names)::

    mw.units()                      # leaf units in file order
    mw.unit(name)                   # unit or group (UnitGroup: children(), leaves(), find(name))
    mw.motor(name) -> ActuatorUnit  # the device contract (units/actuator.py): .joint (optional URDF
                                    # joint), .direction, .zero_offset, .effort_range, .CAPABILITIES
    mw.motors(), mw.groups(), mw.units_of_type(ImuSensor | "rospy_control/ImuSensor")

Cyclic path (cheap, non-blocking, callable at 1 kHz from the control thread)::

    snap = mw.snapshot()            # Snapshot: snap[name] -> MotorState / ImuState / ContactState /
                                    # ForceTorqueState / EncoderState (immutable, one cycle per channel)
    s = snap["elbow_motor"]         # s.position, s.velocity, s.effort, s.temperature, s.error_code,
                                    # s.enabled, s.mode, s.requested_mode, s.fault, s.fault_reason, s.stamp,
                                    # s.received, s.fault_time (time.time(), 0.0), s.watchdog
    m = mw.motor("elbow_motor")
    m.set_command(ControlMode.POSITION, 0.3)   # also VELOCITY (rad/s), EFFORT (N·m), NONE (limp)
    m.set_position(p, velocity_ff, effort_ff)
    m.set_mit_command(p, v, kp, kd, effort)    # ControlMode.MIT (= set_impedance, devices with gains)
    m.set_damping()                            # ControlMode.DAMPING: kd only (hold_mode damping)
    m.request_mode(ControlMode.VELOCITY)       # switch with a safe hold value (position: hold current)
    m.mode_confirmed(ControlMode.VELOCITY)     # True once the first reply after a frame in that mode
                                               # arrived: RobotHW switch ONGOING -> DONE
    mw.set_command(name, mode, value); mw.request_mode(name, mode); mw.mode_confirmed(name, mode)

Faults: a unit goes to FAULT when N consecutive requests that went out stayed unanswered
(N = max(3, ceil(fault_timeout / period))) *and* ``fault_timeout`` elapsed since the first of them --
cycles in which the host ran the bus thread late (a stall of this process) are not held against it --
or when it reports an error flag / over-temperature (``state.fault``, ``state.fault_reason``,
``state.fault_time``); a faulted motor gets one exit-motor-mode frame and no commands.  Faults latch::

    mw.reset_faults(names=None, timeout=None) -> {name: reason}   # blocks: probes every unit in FAULT
    mw.reset_fault(name=None)       # the same request, non-blocking
    mw.faults()                     # {name: reason} of units in FAULT
    mw.events(since=0)              # [FaultEvent(seq, wall_time, unit, channel, kind, message)]:
                                    # fault, reset_requested, recovered, reset_failed, watchdog_hold, ...

A reset probe re-enables the unit (enter-motor-mode) and succeeds only on a valid reply; meanwhile the
state keeps ``fault=True``.  Recovered motors start in ControlMode.NONE (no command of their own) and
hold as the command watchdog would until they are commanded.  ``mw.check()`` re-raises errors
recorded on channel threads.

Command watchdog: a motor that got no new command (any ``set_*`` / ``request_mode`` call) for the
channel's ``command_timeout`` (XML, default 0.05 s, 0 = off) is held by the bus thread
(``state.watchdog``; ``mw.set_watchdog_mode("position" | "damping" | "none")``,
``Motor.set_watchdog_mode``); the next command is sent at once.  See :class:`~.units.Motor`.

Diagnostics: ``mw.statistics()`` -> ``{"channels": {name: {cycles, late_cycles, overruns, stalls,
longest_stall, last_stall_time, excused_cycles, frames_sent, frames_received, unknown_frames, bad_frames,
bus_errors, tx_errors, rx_errors, reply_timeouts: {unit: n}, watchdog_trips: {unit: n},
bus_load_estimate, rate, bitrate, ...}}, "faults": {...}, "host": {...}, "watchdog": {...}, ...}``;
``mw.bus_load()``.

Simulation is composed from outside: ``rospy_control.simulator.SimulatedRobot(info).buses()`` gives
the bus overrides, and that object has the fault switches and the command record (``set_fault``,
``command_stats``, ``reset_command_stats``, ``bus_off``, ``bus_errors``); in tests
``rospy_control.testing.sim_rig.simulated_middleware(xml)`` and ``sim_of(mw)``.

Modules
-------
``rospy_control.devices`` (a folder per protocol: ``codec`` and ``device``; the unit bases),
``rospy_control.hardware_config`` (XML -> plain data), ``rospy_control.bus`` (``channel``: CanChannel
+ thread; ``timing``: host-lateness judgement of each cycle; ``events``: the event log; ``liveness``
and ``spec``: a peer's liveness policy and bus override), ``.middleware`` (:class:`Middleware`).
New unit types: subclass :class:`~.units.CanUnit`, implement ``read_settings`` (the one reader of its
element; :mod:`.configuration` turns what it returns into the unit's configuration record) and the
channel contract (its docstring), and either register it in ``UNIT_TYPES`` or name it
``module:Class`` in the XML.
"""
from __future__ import annotations

from rospy_control.bus.channel import CanChannel
from rospy_control.bus.events import FaultEvent
from rospy_control.bus.spec import BusSpec
from rospy_control.middleware.middleware import CHANNEL_TYPES, UNIT_TYPES, Middleware, Snapshot
from rospy_control.devices import (
    ActuatorState, ActuatorUnit, CanUnit, Capabilities, ContactSensor, ContactState, ControlMode, Encoder,
    EncoderState, ForceTorqueSensor, WATCHDOG_MODES, ForceTorqueState, HardwareUnit, ImuSensor, ImuState,
    Motor, MotorState, UnitGroup, UnsupportedCommand,
)

__all__ = [
    "Middleware", "Snapshot", "UNIT_TYPES", "CHANNEL_TYPES", "CanChannel", "BusSpec",
    "ControlMode", "HardwareUnit", "CanUnit", "UnitGroup", "Motor", "Encoder", "ImuSensor", "ContactSensor",
    "ForceTorqueSensor", "MotorState", "EncoderState", "ImuState", "ContactState", "ForceTorqueState",
    "FaultEvent", "WATCHDOG_MODES", "ActuatorUnit", "ActuatorState", "Capabilities", "UnsupportedCommand",
]
