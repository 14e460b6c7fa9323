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
