"""A protocol-level simulated device on a simulated joint: what the simulator registers per motor.

:class:`JointModel` is the joint of :mod:`.motor` without MIT in it: the same integration (damping
implicit, so stable for any gain; Coulomb friction as a velocity impulse that can stop the joint;
inelastic hard stops; a constant load plus an optional pose-dependent one), driven at every step by
the torque law a :class:`~.device.SimulatedDevice` gives (:meth:`~.device.SimulatedDevice.impedance`)::

    tau   = clamp(kp (p_des - p) + kd (v_des - v) + t_ff, +-limit)     (0 when the device is off)
    J dv/dt = tau + load - damping v - friction sign(v)

:class:`SimulatedProtocolMotor` pairs a device with its joint and offers the simulated MIT motor's
shape to the firmware thread: ``handle_frame(msg, now, dt)`` advances the joint to the frame's
arrival and returns the device's answer; ``tick(now, dt)`` the device's own frames;
``joint_position()``; ``fault`` / ``frames`` / ``latency`` / ``name`` of the device.  Values are in
the motor's frame (rad, rad/s, N·m at the unit's side of any gear the device converts through: an
ODrive's ratio, a CiA 402 drive's gear); direction and zero offset stay with the unit.

Gravity: a joint model built for a unit (:func:`~.peers.joint_model`) is what the simulator's
:class:`~rospy_control.simulator.gravity.SimulatedGravity` loads, as it loads an MIT
:class:`~.motor.SimulatedMotor`: it reads :meth:`JointModel.joint_position` (the unit's radians as
the RobotHW sees them: direction, zero offset and the device's own zero applied) and ``unit``, and
writes ``gravity_load`` (N·m, motor frame), which the integration adds to ``load``; ``gravity`` is
asked to refresh before every integration.
"""
from __future__ import annotations

from typing import Any, Callable, List, Optional

import can

from rospy_control.simulator.device import Impedance, PhysicalState, SimulatedDevice
from rospy_control.simulator.physics import MAX_STEPS, move, steps_due

__all__ = ["JointModel", "DevicePeer", "SimulatedProtocolMotor"]


def _no_zero() -> float:
    return 0.0


class JointModel:
    """One rigid joint (motor frame).  ``load`` is a constant torque (N·m); ``gravity_load`` the
    pose-dependent one the simulator's gravity keeps up to date (see the module docstring);
    ``load_fn(p)`` an optional pose-dependent one of the caller's, added to both.

    ``unit`` (the simulated unit, set by :func:`~.peers.joint_model`; None for a bare joint) gives
    :meth:`joint_position` its direction and zero offset; ``zero()`` returns the device's own zero
    (the motor-frame position it reports as 0 after a set-zero command), set by the peer.
    """

    #: steps integrated at most per call (a long silence is not caught up over seconds)
    MAX_STEPS = MAX_STEPS

    def __init__(self, inertia: float = 0.01, damping: float = 0.05, friction: float = 0.05,
                 torque_limit: float = 1e9, stop_min: float = -1e9, stop_max: float = 1e9,
                 position: float = 0.0, load: float = 0.0, temperature: float = 35.0,
                 load_fn: Optional[Callable[[float], float]] = None) -> None:
        if not inertia > 0.0:
            raise ValueError(f"inertia must be positive, got {inertia!r}")
        if not stop_min < stop_max:
            raise ValueError(f"stop_min={stop_min!r} must be below stop_max={stop_max!r}")
        self.inertia = inertia
        self.damping = damping
        self.friction = friction
        self.torque_limit = torque_limit
        self.stop_min, self.stop_max = stop_min, stop_max
        self.p = min(max(position, stop_min), stop_max)
        self.v = 0.0
        self.tau = 0.0
        self.load = load
        self.load_fn = load_fn
        self.temperature = temperature
        self.t: Optional[float] = None
        #: the unit this joint simulates (name, direction, zero_offset, joint), None: a bare joint
        self.unit: Optional[Any] = None
        #: the reader of the unit's ``<simulation>`` element, left open for the protocol's own
        #: attributes (None: the unit has none)
        self.reader: Optional[Any] = None
        #: the device's own zero in the motor frame (rad), as a callable the peer sets
        self.zero: Callable[[], float] = _no_zero
        #: shared gravity (:class:`rospy_control.simulator.gravity.SimulatedGravity`, None: none) and
        #: the load it computed for this joint (motor frame, N·m)
        self.gravity: Optional[Any] = None
        self.gravity_load = 0.0

    def joint_position(self) -> float:
        """The unit's position as the RobotHW sees it (rad, or m): direction, the unit's zero offset and
        the device's zero applied to the motor-frame position."""
        u = self.unit
        if u is None:
            return self.p - self.zero()
        return u.direction * (self.p - self.zero() - u.zero_offset)

    def state(self) -> PhysicalState:
        return PhysicalState(self.p, self.v, self.tau, self.temperature, self.temperature)

    def advance(self, now: float, dt: float, law: Callable[[float, float], Optional[Impedance]],
                step: Optional[Callable[[float, float, float], None]] = None) -> None:
        """Integrate up to ``now`` in steps of ``dt`` under the torque law ``law(p, v)``; ``step(p, v,
        dt)`` is called before ``law`` at every step (the device's own controller state)."""
        n, self.t = steps_due(self.t, now, dt, self.MAX_STEPS)
        if n == 0:
            return
        gravity = self.gravity
        if gravity is not None:
            gravity.refresh(now)
        p, v, tau = self.p, self.v, self.tau
        J, b, f_imp = self.inertia, self.damping, self.friction * dt / self.inertia
        h = dt / J
        inv_free = 1.0 / (1.0 + h * b)
        smin, smax = self.stop_min, self.stop_max
        const = self.load + self.gravity_load
        load_fn = self.load_fn
        for _ in range(n):
            load = const + load_fn(p) if load_fn is not None else const
            if step is not None:
                step(p, v, dt)
            imp = law(p, v)
            if imp is None:
                tau = 0.0
                v = (v + h * load) * inv_free
            else:
                lim = self.torque_limit
                if imp.torque_limit is not None and imp.torque_limit < lim:
                    lim = imp.torque_limit
                tau = imp.kp * (imp.p_des - p) + imp.kd * (imp.v_des - v) + imp.t_ff
                if -lim <= tau <= lim:
                    v = (v + h * (imp.kp * (imp.p_des - p) + imp.kd * imp.v_des + imp.t_ff + load)) \
                        / (1.0 + h * (imp.kd + b))
                else:
                    tau = lim if tau > 0 else -lim
                    v = (v + h * (tau + load)) * inv_free
            p, v = move(p, v, dt, f_imp, smin, smax)
        self.p, self.v, self.tau = p, v, tau


class DevicePeer:
    """What every peer (:mod:`.peers`) reads from its simulated device and its joint: ``name``,
    ``frames`` and ``latency`` are those of :attr:`device`, ``joint_position()`` that of :attr:`joint`."""

    #: the simulated device answering the frames
    device: Any
    #: the joint it moves
    joint: JointModel

    @property
    def name(self) -> str:
        return self.device.name

    @property
    def frames(self) -> int:
        return self.device.frames

    @property
    def latency(self) -> Optional[float]:
        return self.device.latency

    def joint_position(self) -> float:
        return self.joint.joint_position()


class SimulatedProtocolMotor(DevicePeer):
    """A :class:`SimulatedDevice` driving a :class:`JointModel` (see the module docstring)."""

    def __init__(self, device: SimulatedDevice, joint: JointModel) -> None:
        self.device = device
        self.joint = joint
        joint.zero = device.zero_position

    @property
    def fault(self) -> Optional[str]:
        return self.device.fault

    @property
    def faults(self):
        return self.device.faults

    def listen_ids(self):
        return self.device.listen_ids()

    def set_fault(self, fault: str, value: Optional[float] = None) -> None:
        self.device.set_fault(fault, value)

    def clear_fault(self) -> None:
        self.device.clear_fault()

    def advance(self, now: float, dt: float) -> None:
        self.joint.advance(now, dt, self.device.impedance, self.device.step)

    def handle_frame(self, msg: can.Message, now: float, dt: float) -> List[can.Message]:
        """Advance the joint to ``now``, then let the device answer ``msg``."""
        self.advance(now, dt)
        return self.device.handle_frame(msg, self.joint.state(), now)

    def tick(self, now: float, dt: float) -> List[can.Message]:
        """Advance the joint to ``now``; the frames the device sends on its own."""
        self.advance(now, dt)
        return self.device.tick(self.joint.state(), now)
