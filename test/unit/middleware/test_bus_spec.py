"""Bus overrides: the middleware opens what it is given and knows nothing of the peer behind it."""
from __future__ import annotations

import dataclasses

import pytest

from rospy_control.bus.spec import BusSpec
from rospy_control.devices import HardwareUnit
from rospy_control.hardware_config.records import UnitConfig
from rospy_control.exceptions import HardwareError
from rospy_control.middleware import Middleware
from rospy_control.simulator import SimulatedRobot
from rospy_control.testing import wait_until

from middleware_testutil import motor_xml


class Peer:
    """A liveness policy that never excuses anything, and a log of the hooks called."""

    def __init__(self) -> None:
        self.calls = []

    def stalled(self, since, now, sent=None):
        return False

    def last_drop(self):
        return 0.0


def test_the_hooks_run_around_the_bus_and_the_channel_gets_the_policy():
    sim = SimulatedRobot(motor_xml(1), simulate=True)
    spec = sim.buses()["bus"]
    peer = Peer()
    mw = Middleware(sim.info, buses={"bus": spec._replace(
        liveness=peer, peer="test peer",
        before_open=lambda: (peer.calls.append("before_open"), spec.before_open()),
        after_open=lambda bus: peer.calls.append(("after_open", bus is not None)),
        after_close=lambda: (peer.calls.append("after_close"), spec.after_close()))})
    assert mw.buses()["bus"].peer == "test peer" and mw.channels["bus"].liveness is None
    mw.start()
    try:
        assert peer.calls == ["before_open", ("after_open", True)]
        assert mw.channels["bus"].liveness is peer
        assert mw.statistics()["simulator"] == "test peer" and mw.statistics()["simulated"] == ["bus"]
        assert wait_until(lambda: mw.snapshot()["m1"].received, 2.0)
    finally:
        mw.shutdown()
    assert peer.calls[-1] == "after_close"


def test_a_middleware_without_overrides_has_no_peer():
    mw = Middleware.from_xml(motor_xml(1))
    assert mw.buses() == {} and mw.channels["bus"].liveness is None
    assert mw.statistics()["simulator"] == "none" and mw.statistics()["simulated"] == []
    mw.shutdown()


def test_an_override_for_an_unknown_channel_is_refused():
    with pytest.raises(HardwareError, match="unknown channel 'nope'"):
        Middleware.from_xml(motor_xml(1), buses={"nope": BusSpec("virtual", "x")})


def test_the_bus_wide_switches_of_the_simulated_robot():
    sim = SimulatedRobot(motor_xml(2), simulate=True)
    firmware = sim.firmware("bus")
    sim.bus_off("bus")
    assert firmware.bus_off
    sim.bus_off("m2", on=False)      # named by a unit on it
    assert not firmware.bus_off
    sim.bus_errors("m1")
    assert firmware.bus_errors
    sim.bus_errors("bus", on=False)
    assert not firmware.bus_errors
    assert sim.firmware_of("m2") is firmware and sim.is_simulated("bus") and not sim.process
    with pytest.raises(HardwareError, match="not simulated"):
        SimulatedRobot(motor_xml(1), simulate=False).firmware("bus")


def test_the_simulator_is_built_from_the_configuration_records_never_the_drivers_units():
    mw = Middleware.from_xml(motor_xml(1))
    sim = SimulatedRobot(mw.config, simulate=True)
    mw.set_buses(sim.buses())
    record = sim.config.unit("m1")
    assert isinstance(record, UnitConfig) and record.simulation is not None
    assert (record.can_id, record.kinds[0]) == (mw.unit("m1").can_id, "Motor")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.can_id = 7                        # what the reader read stays as it read it
    model = sim.firmware("bus").by_name["m1"]
    assert model.unit is record
    # nothing the simulated firmware holds is one of the driver's devices
    assert not [k for k, v in vars(model).items() if isinstance(v, HardwareUnit)]
    assert not hasattr(mw.unit("m1"), "simulation")   # only the record carries <simulation>
    mw.shutdown()
