"""The simulated CiA 402 drive's holding brake (``<simulation brake>``): closed whenever the power stage
does not hold the shaft, so the example arm on drives does not sag under the URDF's gravity while its
drives are still booting (their SDO start-up) -- and without it the same arm falls onto its end stop.

The drives are advanced in simulated time (``tick(now, dt)``), never started by a driver: the result
does not depend on how fast the host runs."""
from __future__ import annotations

import os

import pytest

from rospy_control.simulator import SimulatedRobot

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")
CONFIG = os.path.join(ROOT, "config", "arm_hardware_cia402.xml")
URDF = os.path.join(ROOT, "urdf", "arm.urdf")


def shoulder_after(xml: str, seconds: float) -> float:
    """The shoulder-lift drive's joint position after ``seconds`` of simulated time, its drive never
    enabled (as during a start-up's SDO configuration)."""
    with open(URDF, encoding="utf-8") as f:
        robot = SimulatedRobot(xml, simulate=True, urdf=f.read())
    firmware = robot.simulators()["can0"]
    peer = next(p for p in firmware.peers if p.name == "shoulder_lift_motor")
    dt, now = 0.0005, 100.0
    for _ in range(int(seconds / 0.002)):
        now += 0.002
        peer.tick(now, dt)
    return peer.joint_position()


@pytest.mark.parametrize("brake", [True, False])
def test_the_brake_holds_the_loaded_shoulder_while_its_drive_is_not_enabled(brake):
    with open(CONFIG, encoding="utf-8") as f:
        xml = f.read()
    assert 'brake="40"' in xml
    if not brake:
        xml = xml.replace('brake="40"', 'brake="0"')
    position = shoulder_after(xml, 2.0)
    if brake:
        assert position == pytest.approx(-1.5, abs=0.01), "the braked shoulder moved"
    else:
        assert position < -1.9, "without its brake the loaded shoulder should fall onto its stop (-2.0)"


def test_a_negative_brake_torque_is_named_with_its_file_and_line():
    with open(CONFIG, encoding="utf-8") as f:
        xml = f.read().replace('brake="40"', 'brake="-1"')
    with pytest.raises(Exception, match=r"attribute 'brake'='-1'"):
        SimulatedRobot(xml, simulate=True)
