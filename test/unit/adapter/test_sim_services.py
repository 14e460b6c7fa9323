"""The ROS-free helpers behind the simulator's services: the bus_off switch and the command record."""
from __future__ import annotations

import math
import os

import pytest

from rospy_control.testing.sim_rig import sim_of, simulated_middleware
from rospy_control.adapter.sim_switches import command_stats, set_bus_off
from rospy_control.testing import wait_until

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ARM = os.path.join(ROOT, "config", "arm_hardware.xml")


@pytest.fixture
def arm():
    mw = simulated_middleware(ARM, simulate=True)
    yield mw
    mw.shutdown()


def test_bus_off_by_channel_or_by_unit(arm):
    sim = sim_of(arm).firmware("can0")
    ok, text = set_bus_off(sim_of(arm), "can0", True)
    assert ok and sim.bus_off and text == "simulated fault 'bus_off' of channel 'can0' switched on"
    ok, text = set_bus_off(sim_of(arm), "elbow_motor", False)
    assert ok and not sim.bus_off and "'can0' switched off" in text
    ok, text = set_bus_off(sim_of(arm), "can7", True)
    assert not ok and "'can7' is neither a simulated channel nor a unit on one" in text and "can0" in text


def test_command_stats_before_and_after_traffic(arm):
    table = command_stats(sim_of(arm))
    assert table["channels"] == ["can0"] and table["bus_off"] == [False] and table["frames_lost"] == [0]
    names = table["units"]
    assert "elbow_motor" in names and len(names) == len(table["frames"]) == len(table["last_p_des"])
    assert all(f == 0 for f in table["frames"]) and all(math.isnan(p) for p in table["last_p_des"])
    arm.start()
    assert wait_until(lambda: command_stats(sim_of(arm), "elbow_motor")["frames"][0] > 5, timeout=10.0)
    one = command_stats(sim_of(arm), "elbow_motor")
    assert one["units"] == ["elbow_motor"] and one["enabled"] == [True]
    with pytest.raises(ValueError, match="'nope' is not a motor simulated here"):
        command_stats(sim_of(arm), "nope")
