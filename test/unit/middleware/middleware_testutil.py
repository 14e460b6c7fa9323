"""Helpers shared by the middleware tests (imported as a plain module)."""
from __future__ import annotations

import os

from rospy_control.testing import wait_until  # noqa: F401 - re-exported for the middleware tests

DATA = os.path.join(os.path.dirname(__file__), "..", "data", "middleware")
CONFIG = os.path.join(os.path.dirname(__file__), "..", "..", "..", "config")


def drain_bus(bus, frames: list) -> list:
    """Append every frame queued on ``bus`` to ``frames`` without waiting; returns ``frames``.

    python-can's virtual bus queues a frame for every other bus inside ``send()``, so a third-party
    bus drained when asked holds every frame already sent: no reader thread that could lag behind."""
    while True:
        msg = bus.recv(0)
        if msg is None:
            return frames
        frames.append(msg)


def data_file(name: str) -> str:
    return os.path.normpath(os.path.join(DATA, name))


def motor_xml(n_motors: int = 2, rate: float = 1000.0, fault_timeout: float = 0.05, extra: str = "",
              motor_attrs: str = "", sim_attrs: str = 'inertia="0.01" damping="0.05" friction="0.02"',
              simulation: str = '<simulation rate="2000"/>') -> str:
    """A one-channel simulated hardware description with motors m1..mN."""
    motors = "\n".join(
        f'<unit name="m{i}" type="rospy_control/Motor" channel="bus" can_id="{i}" {motor_attrs}>'
        f'<gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/><simulation {sim_attrs}/></unit>'
        for i in range(1, n_motors + 1))
    return (f'<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="{rate}" '
            f'fault_timeout="{fault_timeout}">{simulation}</channel>{motors}{extra}</hardware>')
