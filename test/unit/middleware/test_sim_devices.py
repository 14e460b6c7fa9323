"""The protocol-level simulated devices together: a mixed bus behind one DeviceRouter, id collisions
refused, closed-loop conversations through a joint model, and a conversation over a python-can bus."""
from __future__ import annotations

import math
from typing import Dict

import can
import pytest

from rospy_control.devices.cubemars import codec as cm
from rospy_control.devices.damiao import codec as dm
from rospy_control.devices.odrive import codec as od
from rospy_control.devices.mit.codec import MitLimits
from rospy_control.simulator.cubemars import SimulatedCubeMarsV3
from rospy_control.simulator.damiao import SimulatedDamiao
from rospy_control.simulator.device import (
    DeviceRouter, Impedance, PhysicalState, SimulatedDevice, advance_joint,
)
from rospy_control.simulator.odrive import SimulatedOdrive

DM4310 = dm.MODEL_RANGES["DM4310"]
AK = MitLimits(t_min=-12.0, t_max=12.0)


class Joints:
    """A minimal physics for the devices of a router: one rigid joint per device."""

    def __init__(self, router: DeviceRouter) -> None:
        self.router = router
        self.p: Dict[str, float] = {n: 0.0 for n in router.devices}
        self.v: Dict[str, float] = {n: 0.0 for n in router.devices}
        self.tau: Dict[str, float] = {n: 0.0 for n in router.devices}

    def state_of(self, dev: SimulatedDevice) -> PhysicalState:
        n = dev.name
        return PhysicalState(self.p[n], self.v[n], self.tau[n])

    def run(self, seconds: float, t0: float, dt: float = 0.0005) -> float:
        t = t0
        for _ in range(int(seconds / dt)):
            for n, dev in self.router.devices.items():
                imp = dev.impedance(self.p[n], self.v[n])
                self.p[n], self.v[n], self.tau[n] = advance_joint(imp, self.p[n], self.v[n], dt, inertia=0.01,
                                                                  damping=0.05)
            t += dt
        return t


def _std(aid: int, data: bytes = b"", remote: bool = False) -> can.Message:
    return can.Message(arbitration_id=aid, is_extended_id=False, data=data, is_remote_frame=remote)


def _ext(aid: int, data: bytes) -> can.Message:
    return can.Message(arbitration_id=aid, is_extended_id=True, data=data)


@pytest.fixture
def bus():
    r = DeviceRouter()
    r.register(SimulatedDamiao("dm1", slave_id=0x01, master_id=0x11, ranges=DM4310))
    r.register(SimulatedDamiao("dm2", slave_id=0x02, master_id=0x12, ranges=DM4310))
    r.register(SimulatedOdrive("od5", node_id=5, version=od.V06))
    r.register(SimulatedCubeMarsV3("ak", controller_id=0x01, limits=AK))
    return r


def test_mixed_bus_routes_each_frame_to_its_device(bus):
    j = Joints(bus)
    out = bus.route(_std(0x002, dm.ENABLE), j.state_of, 0.0)
    assert [m.arbitration_id for m in out] == [0x12]
    out = bus.route(_std(0x7FF, dm.pack_register_read(1, dm.RID_TMAX)), j.state_of, 0.0)
    assert len(out) == 1 and dm.parse_register_reply(out[0].data, 1, dm.RID_TMAX).value == 10.0
    out = bus.route(_std(od.arbitration_id(5, od.CMD_GET_ENCODER_ESTIMATES), remote=True), j.state_of, 0.0)
    assert [m.arbitration_id for m in out] == [0xA9]
    out = bus.route(_ext(0x801, cm.pack_command(0, 0, 0, 0, 0, AK)), j.state_of, 0.0)
    assert [(m.arbitration_id, m.is_extended_id) for m in out] == [(0x2901, True)]
    assert bus.route(_std(0x003, dm.ENABLE), j.state_of, 0.0) == []
    # only the ODrive sends on its own
    assert sorted(m.arbitration_id for m in bus.tick(j.state_of, 0.0)) == [0xA1, 0xA9]


def test_id_collisions_are_refused_naming_both_devices(bus):
    with pytest.raises(ValueError, match="'dm1' and 'od0' both use standard id 0x1"):
        bus.register(SimulatedOdrive("od0", node_id=0))
    with pytest.raises(ValueError, match="already registered"):
        bus.register(SimulatedDamiao("dm1", slave_id=0x05, master_id=0x15))
    # DaMiao motors may share a master id and always share 0x7FF
    bus.register(SimulatedDamiao("dm3", slave_id=0x03, master_id=0x12))


def test_damiao_reaches_an_mit_target(bus):
    j = Joints(bus)
    bus.route(_std(0x001, dm.ENABLE), j.state_of, 0.0)
    bus.route(_std(0x001, dm.pack_mit(1.0, 0.0, 20.0, 1.0, 0.0, DM4310)), j.state_of, 0.0)
    t = j.run(2.0, 0.0)
    out = bus.route(_std(0x7FF, dm.pack_refresh(1)), j.state_of, t)
    r = dm.unpack_reply(out[0].data, DM4310)
    assert r.enabled and r.position == pytest.approx(1.0, abs=0.01)
    assert j.p["dm2"] == 0.0  # the disabled neighbour stays limp


def test_odrive_reaches_a_position_and_reports_it_cyclically(bus):
    j = Joints(bus)
    node = 5
    bus.route(_std(od.arbitration_id(node, od.CMD_SET_CONTROLLER_MODE), od.pack_set_controller_mode(3, 1)),
              j.state_of, 0.0)
    bus.route(_std(od.arbitration_id(node, od.CMD_SET_AXIS_STATE), od.pack_set_axis_state(8)),
              j.state_of, 0.0)
    bus.route(_std(od.arbitration_id(node, od.CMD_SET_INPUT_POS), od.pack_set_input_pos(0.25)),
              j.state_of, 0.0)
    t = j.run(2.0, 0.0)
    frames = bus.tick(j.state_of, t)
    enc = [m for m in frames if m.arbitration_id == od.arbitration_id(node, od.CMD_GET_ENCODER_ESTIMATES)]
    pos, vel = od.unpack_encoder_estimates(enc[0].data)
    assert pos == pytest.approx(0.25, abs=0.002) and abs(vel) < 0.01
    assert j.p["od5"] == pytest.approx(0.25 * 2 * math.pi, abs=0.01)


def test_cubemars_reaches_an_mit_target(bus):
    j = Joints(bus)
    bus.route(_ext(0x801, cm.pack_command(-0.5, 0.0, 30.0, 1.0, 0.0, AK)), j.state_of, 0.0)
    t = j.run(2.0, 0.0)
    out = bus.route(_ext(0x801, cm.pack_command(-0.5, 0.0, 30.0, 1.0, 0.0, AK)), j.state_of, t)
    ak = bus.devices["ak"]
    assert isinstance(ak, SimulatedCubeMarsV3)
    fb = cm.unpack_feedback(out[0].arbitration_id, out[0].data, ak.scale)
    assert fb.position == pytest.approx(-0.5, abs=0.01)


def test_advance_joint_limp_and_saturated():
    p, v, tau = advance_joint(None, 0.0, 1.0, 0.1, inertia=1.0, damping=1.0)
    assert tau == 0.0 and v == pytest.approx(0.9) and p == pytest.approx(0.09)
    _, _, tau = advance_joint(Impedance(10.0, 0.0, 100.0, 0.0, 0.0, 5.0), 0.0, 0.0, 0.001, 1.0)
    assert tau == 5.0


def test_conversation_over_a_python_can_bus(virtual_channel):
    """Frames built by the codecs cross a real python-can bus to the simulated devices and back."""
    router = DeviceRouter()
    router.register(SimulatedDamiao("dm1", slave_id=0x01, master_id=0x11, ranges=DM4310))
    router.register(SimulatedOdrive("od2", node_id=2, version=od.V05))
    joints = Joints(router)
    host = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    dev = can.Bus(interface="virtual", channel=virtual_channel, receive_own_messages=False)
    try:
        def exchange(msg: can.Message):
            host.send(msg)
            got = dev.recv(timeout=2.0)
            assert got is not None
            for reply in router.route(got, joints.state_of, 0.0):
                dev.send(reply)
            replies = []
            while True:
                r = host.recv(timeout=0.2)
                if r is None:
                    return replies
                replies.append(r)

        out = exchange(_std(0x001, dm.ENABLE))
        assert [m.arbitration_id for m in out] == [0x11] and dm.unpack_reply(out[0].data, DM4310).enabled
        out = exchange(_std(0x7FF, dm.pack_register_read(1, dm.RID_VMAX)))
        assert dm.parse_register_reply(out[0].data, 1, dm.RID_VMAX).value == 30.0
        out = exchange(_std(od.arbitration_id(2, od.CMD_GET_ENCODER_ESTIMATES), remote=True))
        assert [m.arbitration_id for m in out] == [0x49]
        out = exchange(_std(od.arbitration_id(2, od.CMD_CLEAR_ERRORS), od.pack_clear_errors(od.V05)))
        assert out == []
    finally:
        host.shutdown()
        dev.shutdown()


def test_traffic_per_protocol():
    from rospy_control.devices.wire import Traffic, frame_bits
    from rospy_control.devices.unit import frame_bits as unit_frame_bits
    for dlc in range(9):
        for ext in (False, True):
            assert frame_bits(dlc, ext) == unit_frame_bits(dlc, ext)
    d = dm.traffic()
    assert d.bits_per_cycle() == 2 * frame_bits(8) and d.bits_per_second == 0.0
    assert dm.traffic(dm.MODE_VEL).bits_per_cycle() == frame_bits(4) + frame_bits(8)
    o = od.traffic(heartbeat_rate=0.1, encoder_rate=0.01)
    assert o.bits_per_cycle() == frame_bits(8)
    assert o.bits_per_second == pytest.approx(frame_bits(8) * 110)
    # cyclic feedback costs bus time whatever the control rate
    assert o.load(0.0, 1e6) == pytest.approx(frame_bits(8) * 110 / 1e6)
    assert o.max_rate(1e6) == pytest.approx((1e6 - frame_bits(8) * 110) / frame_bits(8))
    c = cm.traffic()
    assert c.bits_per_cycle() == 2 * frame_bits(8, True)
    assert Traffic((), 10.0).max_rate(1e6) == float("inf")
