"""The simulated CiA 402 drive's holding brake (``<simulation brake>``): closed whenever the power stage
does not hold the shaft, so the example arm on drives starts where it was, under the URDF's gravity,
through the drives' SDO start-up -- and without it the same arm sags onto its end stop."""
from __future__ import annotations

import os
import time

import pytest

from rospy_control.testing.sim_rig import simulated_middleware

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
CONFIG = os.path.join(ROOT, "config", "arm_hardware_cia402.xml")
URDF = os.path.join(ROOT, "urdf", "arm.urdf")


def when_enabled(xml: str, urdf: str):
    """The shoulder-lift drive's state when it first reports OPERATION ENABLED (its SDO start-up done),
    the moment a control loop takes the arm over from where it finds it."""
    mw = simulated_middleware(xml, simulate=True, urdf=urdf)
    try:
        mw.start()
        deadline = time.monotonic() + 15.0
        while True:
            state = mw.snapshot().states["shoulder_lift_motor"]
            if state.enabled or state.fault:
                return state
            assert time.monotonic() < deadline, "the shoulder drive was not enabled within 15 s"
            time.sleep(0.002)
    finally:
        mw.shutdown()


@pytest.mark.parametrize("brake", [True, False])
def test_the_brake_holds_the_arm_through_the_drives_start_up(brake):
    with open(CONFIG, encoding="utf-8") as f:
        xml = f.read()
    with open(URDF, encoding="utf-8") as f:
        urdf = f.read()
    assert 'brake="40"' in xml
    if not brake:
        xml = xml.replace('brake="40"', 'brake="0"')
    state = when_enabled(xml, urdf)
    assert not state.fault, state.fault_reason
    if brake:
        assert state.position == pytest.approx(-1.5, abs=0.05), "the braked shoulder moved during start-up"
    else:
        assert state.position < -1.6, "without its brake the loaded shoulder should sag toward its stop"
