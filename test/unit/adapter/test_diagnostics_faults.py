"""/diagnostics for a bus-off channel and for controllers aborted after raising."""
from __future__ import annotations

import time
from types import SimpleNamespace

from rospy_control.adapter.diagnostics import ERROR, OK, DriverDiagnostics


class _Mw:
    name = "arm"
    channels: dict = {}

    def is_simulated(self, name):
        return True


def test_a_bus_off_channel_is_an_error_naming_it():
    d = DriverDiagnostics(_Mw(), "/driver")
    st = d.channel_status("can0", {"interface": "socketcan", "channel": "can0", "bus_off": True,
                                   "bus_off_count": 1, "bus_off_since": time.time(), "bus_errors": 3}, 1.0)
    assert st.level == ERROR and st.name == "driver: channel can0"
    assert st.message.startswith("BUS-OFF since ") and "every unit on it is in FAULT" in st.message
    values = {kv.key: kv.value for kv in st.values}
    assert values["bus_off"] == "True" and values["bus_off_count"] == "1"
    st = d.channel_status("can0", {"interface": "socketcan", "channel": "can0", "bus_off": False,
                                   "bus_off_count": 1, "bus_errors": 3}, 1.0)
    assert st.level == OK


class _Ctrl:
    def __init__(self, aborted):
        self.aborted = aborted

    def is_aborted(self):
        return self.aborted


def test_controller_failures_error_while_the_controller_stays_aborted():
    ctrls = {"bad": _Ctrl(True), "good": _Ctrl(False)}
    failures = [(time.time(), "bad", "update", "RuntimeError: boom")]
    cm = SimpleNamespace(controller_failures=lambda: failures, get_controller_by_name=ctrls.get)
    d = DriverDiagnostics(_Mw(), "/driver", loop=SimpleNamespace(controller_manager=cm))
    st = d.controller_failures_status()
    assert st.level == ERROR and st.name == "driver: controller failures"
    assert st.message == ("aborted after raising: bad (update(): RuntimeError: boom); the control loop and "
                          "the other controllers go on")
    ctrls["bad"].aborted = False   # started again
    st = d.controller_failures_status()
    assert st.level == OK and st.message.startswith("1 failure(s)")
    failures.clear()
    assert d.controller_failures_status().message == "no controller failed"
    assert DriverDiagnostics(_Mw(), "/driver").controller_failures_status() is None


class Motor:  # the type name selects the motor status, as for the middleware's Motor
    name = "elbow_motor"
    channel_name = "can0"
    can_id = 3
    max_temperature = 90.0
    reply_timeouts = 0


def _motor_state(temperature, **kw):
    from collections import namedtuple
    fields = dict(name="elbow_motor", stamp=0.0, position=0.0, temperature=temperature, fault=False,
                  fault_reason="", received=True, error_code=0, watchdog=False, mode="POSITION",
                  requested_mode="POSITION", enabled=True)
    fields.update(kw)
    return namedtuple("MotorState", fields)(**fields)


def test_a_motor_near_its_max_temperature_is_a_warning_on_the_published_status():
    from rospy_control.adapter.diagnostics import WARN
    d = DriverDiagnostics(_Mw(), "/driver")
    st = d.unit_status(Motor(), _motor_state(85.0))
    assert st.level == WARN and st.name == "driver: motor elbow_motor"
    assert "temperature 85 C close to max_temperature 90 C" in st.message
    assert d.unit_status(Motor(), _motor_state(60.0)).level == OK
    # a fault still wins
    faulted = _motor_state(95.0, fault=True, fault_reason="over-temperature")
    assert d.unit_status(Motor(), faulted).level == ERROR
