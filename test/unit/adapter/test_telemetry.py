"""~telemetry and ~set_gains: every actuator's temperature, voltage, current, mode and errors in one
message; gains changed at run time within what the frame carries, never saved unasked."""
from __future__ import annotations

import math
import os

import pytest

from rospy_control.adapter.telemetry import TelemetryThread, set_gains, telemetry_message
from rospy_control.testing import wait_until
from rospy_control.testing.sim_rig import sim_of, simulated_middleware

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
NAN = float("nan")


def _fields():
    """The array fields of msg/ActuatorTelemetry.msg, as the message defines them."""
    out = []
    with open(os.path.join(ROOT, "msg", "ActuatorTelemetry.msg")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line and line.split()[0].endswith("[]"):
                out.append(line.split()[1])
    return out


class _Header:
    stamp = None


class ActuatorTelemetry:
    """The message's fields as the generated class has them (the unit tests run without the
    workspace's generated modules): a header and one list per array field."""

    def __init__(self):
        self.header = _Header()
        for name in _fields():
            setattr(self, name, [])


def _xml(reply_dlc: int = 8) -> str:
    return ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="500" '
            'fault_timeout="0.05"><simulation rate="2000"/></channel>'
            '<unit name="m1" type="rospy_control/Motor" channel="bus" can_id="1" joint="j1" '
            f'reply_dlc="{reply_dlc}">'
            '<gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/></unit>'
            '<unit name="m2" type="rospy_control/Motor" channel="bus" can_id="2" firmware="cubemars_v3"/>'
            '</hardware>')


@pytest.fixture
def mw():
    made = []

    def build(xml):
        m = simulated_middleware(xml)
        m.start()
        made.append(m)
        assert wait_until(lambda: all(s.received for s in m.snapshot().states.values()), timeout=5.0)
        return m
    yield build
    for m in made:
        m.shutdown()


def test_the_message_carries_what_each_protocol_reports_and_nan_for_the_rest(mw):
    m = mw(_xml())
    sim_of(m).set_fault("m1", "error_flag", value=3)
    assert wait_until(lambda: m.motor("m1").state().error_code == 3, timeout=5.0)
    msg = telemetry_message(ActuatorTelemetry, [m])
    assert len(_fields()) >= 15 and all(len(getattr(msg, f)) == 2 for f in _fields())   # every field filled
    assert msg.name == ["m1", "m2"] and msg.joint == ["j1", ""]
    assert msg.temperature[0] == pytest.approx(35.0, abs=1.0)      # DLC 8: the simulated 35 C
    assert math.isnan(msg.bus_voltage[0])                            # DLC 8 carries no voltage
    assert msg.error_code[0] == 3 and msg.error[0] != "" and msg.fault[0]
    assert not math.isnan(msg.current[1])                            # CubeMars V3 reports its current
    assert msg.position_kp[0] == 20.0 and len(msg.mode) == 2
    # a DLC 7 motor (the original firmware) reports its bus voltage instead of a temperature
    m7 = mw(_xml(reply_dlc=7))
    msg = telemetry_message(ActuatorTelemetry, [m7])
    assert msg.bus_voltage[0] == pytest.approx(24.0) and math.isnan(msg.temperature[0])


def test_the_thread_publishes_at_its_rate_only_while_someone_listens(mw):
    m = mw(_xml())
    got = []
    listening = [False]
    thread = TelemetryThread(lambda: telemetry_message(ActuatorTelemetry, [m]), got.append,
                             lambda: listening[0], rate=50.0)
    thread.start()
    try:
        assert not wait_until(lambda: got, timeout=0.3)
        listening[0] = True
        assert wait_until(lambda: len(got) >= 3, timeout=3.0)
    finally:
        assert thread.stop()
    with pytest.raises(ValueError):
        TelemetryThread(lambda: None, got.append, lambda: True, rate=0.0)


def test_gains_change_at_run_time_within_the_frame_and_are_not_saved(mw):
    m = mw(_xml())
    ok, text = set_gains([m], "m1", (35.0, NAN, NAN))
    assert ok, text
    assert m.motor("m1").position_kp == 35.0 and m.motor("m1").position_kd == 0.5
    m.motor("m1").set_command(m.motor("m1").state().mode.POSITION, 0.1)
    assert wait_until(lambda: sim_of(m).firmware_of("m1").motors[1].cmd[2] == pytest.approx(35.0, abs=0.2),
                      timeout=3.0)   # the next frames carry the new kp
    ok, text = set_gains([m], "m1", (600.0, NAN, NAN))     # the MIT frame carries kp 0..500
    assert not ok and "position_kp" in text and "500" in text and m.motor("m1").position_kp == 35.0
    ok, text = set_gains([m], "m1", (30.0, NAN, NAN), save=True)
    assert not ok and "flash" in text and m.motor("m1").position_kp == 35.0
    ok, text = set_gains([m], "nope", (1.0, NAN, NAN))
    assert not ok and "m1" in text


def test_a_device_that_keeps_its_gains_itself_is_refused_with_the_reason(mw):
    m = mw(os.path.join(ROOT, "config", "arm_hardware_odrive.xml"))
    name = m.motors()[0].name
    ok, text = set_gains([m], name, (10.0, NAN, NAN))
    assert not ok and "keeps its gains on the device" in text
