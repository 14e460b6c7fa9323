"""A unit's state is its device's from the first snapshot on: ``received`` only once a position came.

Answers that carry no position (a DaMiao register reply, a CANopen SDO answer or heartbeat, an
ODrive heartbeat, a RobStride parameter reply or fault report) prove a device alive, but if they
marked its state received, the first snapshot after ``Middleware.start`` would show position 0 for
real, and a RobotHW holding "where the joint was found" would drive the joint to 0 when it enables.
"""
from __future__ import annotations

import os
import re
import time

import pytest

from rospy_control.testing.sim_rig import simulated_middleware

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
PROTOCOLS = ["", "_damiao", "_cubemars", "_odrive", "_robstride", "_cia402"]


def initial_positions(xml: str):
    """{motor name: <simulation initial_position>} of the example arm's motors (0 where absent)."""
    out = {}
    for m in re.finditer(r'<(\w+) name="(\w+_motor)"(.*?)(?:/>\s*\n\s*(?=<\w+ name=)|</\1>)', xml, re.S):
        pos = re.search(r'initial_position="([-0-9.]+)"', m.group(3))
        out[m.group(2)] = float(pos.group(1)) if pos else 0.0
    return out


@pytest.mark.parametrize("suffix", PROTOCOLS)
def test_the_first_snapshot_after_start_holds_the_devices_positions(suffix):
    path = os.path.join(ROOT, "config", f"arm_hardware{suffix}.xml")
    with open(path, encoding="utf-8") as f:
        xml = f.read()
    want = initial_positions(xml)
    assert any(abs(v) > 1.0 for v in want.values()), f"{path}: the example arm starts away from 0"
    mw = simulated_middleware(path, simulate=True)   # no URDF: no gravity, the arm stays where it starts
    try:
        mw.start()
        first = mw.snapshot().states
        deadline = time.monotonic() + 10.0
        while not all(s.received or s.fault for s in mw.snapshot().states.values()):
            assert time.monotonic() < deadline, "not every unit answered within 10 s"
            time.sleep(0.01)
        for name, s in first.items():
            if name not in want or not s.received:
                continue  # not answered yet: the RobotHW leaves it limp until it has
            assert abs(s.position - want[name]) < 0.02, \
                f"{suffix or 'mit'}: {name} received at {s.position:.4f}, the device is at {want[name]}"
    finally:
        mw.shutdown()
