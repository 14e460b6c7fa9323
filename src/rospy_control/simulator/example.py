""":class:`ExampleMotorPeer`: devices speaking the example protocol
(:mod:`rospy_control.devices.example.codec`), simulated as a peer on a python-can bus.

It is not part of the driver: it opens its own bus (``interface``/``channel`` as python-can means them,
for instance the ``virtual`` interface in-process) and answers frame for frame like the devices would,
so the driver sees no difference from hardware.  ``docs/writing_a_device.md`` uses it to test the
example device end to end.

Each device: a unit inertia ``J`` driven by the commanded torque, integrated at every frame it
receives (semi-implicit Euler over the time since its previous frame, at most 10 ms)::

    position  tau = kp (p - q) + kd (v - dq)      velocity  tau = kd (v - dq)
    effort    tau = effort                        damping   tau = -kd dq            limp / disabled  0
    J ddq = clamp(tau, +-torque_limit) - damping dq

Fault switches: :meth:`ExampleMotorPeer.set_error` (the device reports an error code; enable clears
it once the switch is off again) and :meth:`ExampleMotorPeer.set_silent` (it stops answering).
"""
from __future__ import annotations

import threading
import time
from typing import Dict, List, Optional

import can

from rospy_control.devices.example import codec as example
from rospy_control.realtime import start_thread

__all__ = ["ExampleMotorPeer", "ExampleDeviceModel"]


class ExampleDeviceModel:
    """One simulated device (its state is read and written under the peer's lock)."""

    def __init__(self, can_id: int, position: float = 0.0, inertia: float = 0.01, damping: float = 0.01,
                 torque_limit: float = 20.0, temperature: float = 30.0) -> None:
        self.can_id = can_id
        self.position = position
        self.velocity = 0.0
        self.effort = 0.0
        self.inertia = inertia
        self.damping = damping
        self.torque_limit = torque_limit
        self.temperature = temperature
        self.enabled = False
        self.command = example.ExampleCommand(example.MODE_LIMP)
        self.error = 0          # latched error code reported
        self.error_switch = 0   # the cause (fault switch); 0 = none
        self.silent = False
        self.frames = 0         # frames received
        self.commands: List[example.ExampleCommand] = []  # command frames received, newest last
        self._last: Optional[float] = None

    def step(self, now: float) -> None:
        dt = 0.0 if self._last is None else min(now - self._last, 0.01)
        self._last = now
        if dt <= 0.0:
            return
        c = self.command
        tau = 0.0
        if self.enabled and not self.error:
            q, dq = self.position, self.velocity
            if c.mode == example.MODE_POSITION:
                tau = c.kp * (c.position - q) + c.kd * (c.velocity - dq)
            elif c.mode == example.MODE_VELOCITY:
                tau = c.kd * (c.velocity - dq)
            elif c.mode == example.MODE_EFFORT:
                tau = c.effort
            elif c.mode == example.MODE_DAMPING:
                tau = -c.kd * dq
        lim = self.torque_limit
        tau = max(-lim, min(lim, tau))
        self.effort = tau
        self.velocity += dt * (tau - self.damping * self.velocity) / self.inertia
        self.position += dt * self.velocity

    def handle(self, data: bytes, now: float) -> Optional[bytes]:
        """Apply one frame; the reply's data (None: silent)."""
        self.frames += 1
        self.step(now)
        op = data[0] if len(data) == 8 else -1
        if self.error_switch:
            self.error = self.error_switch
        if op == example.OP_ENABLE:
            if not self.error_switch:
                self.error = 0
            self.enabled = not self.error
            self.command = example.ExampleCommand(example.MODE_LIMP)
        elif op == example.OP_DISABLE:
            self.enabled = False
            self.command = example.ExampleCommand(example.MODE_LIMP)
        elif op == example.OP_SET_ZERO:
            self.position = 0.0
        elif op == example.OP_COMMAND:
            cmd = example.unpack_command(data)
            self.commands.append(cmd)
            del self.commands[:-1000]
            if self.enabled and not self.error:
                self.command = cmd
        if self.silent:
            return None
        return example.pack_reply(example.ExampleReply(
            self.enabled, self.command.mode, self.error, self.position, self.velocity, self.effort,
            self.temperature))


class ExampleMotorPeer:
    """Example-protocol devices answering on a python-can bus, in a thread of their own.

    :param interface, channel: the bus, as python-can means them (``virtual`` + any name in-process).
    :param devices: the simulated devices, by CAN id.
    """

    def __init__(self, interface: str, channel: str, devices: List[ExampleDeviceModel]) -> None:
        self.devices: Dict[int, ExampleDeviceModel] = {d.can_id: d for d in devices}
        self._bus = can.Bus(interface=interface, channel=channel,  # type: ignore[abstract]
                            receive_own_messages=False)
        self._lock = threading.Lock()
        self._running = True
        self._thread = start_thread(self._run, f"sim.example.{channel}")

    def set_error(self, can_id: int, code: int) -> None:
        """The device reports error ``code`` from its next frame on (0: the cause is gone; the error
        stays latched until the host enables the device again)."""
        with self._lock:
            self.devices[can_id].error_switch = code

    def set_silent(self, can_id: int, silent: bool) -> None:
        """The device stops (or resumes) answering."""
        with self._lock:
            self.devices[can_id].silent = silent

    def _run(self) -> None:
        bus = self._bus
        while self._running:
            try:
                msg = bus.recv(0.05)
            except can.CanError:
                continue
            if msg is None or msg.is_error_frame:
                continue
            with self._lock:
                dev = self.devices.get(msg.arbitration_id)
                if dev is None:
                    continue
                reply = dev.handle(bytes(msg.data), time.monotonic())
            if reply is not None:
                try:
                    bus.send(can.Message(arbitration_id=example.REPLY_ID_BASE + dev.can_id,
                                         is_extended_id=False, data=reply))
                except can.CanError:
                    pass

    def close(self) -> None:
        """Stop the thread and close the bus (idempotent)."""
        if not self._running:
            return
        self._running = False
        self._thread.join(2.0)
        self._bus.shutdown()

    def __enter__(self) -> "ExampleMotorPeer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
