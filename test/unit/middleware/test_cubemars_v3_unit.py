"""The CubeMars "V3" firmware option of the MIT device (``rospy_control/Motor`` with
``firmware="cubemars_v3"``: MIT mode over 29-bit ids) against its simulated motor
(simulation/cubemars.py) on python-can's virtual bus, through the real Middleware and CanChannel;
beside a plain MIT motor with the same CAN id, which the firmware's own MIT model keeps simulating."""
from __future__ import annotations

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ControlMode
from rospy_control.devices.cubemars import codec as cm
from rospy_control.devices.mit.codec import MitLimits
from rospy_control.simulator import cubemars as sim_cubemars
from rospy_control.simulator.motor import SimulatedMotor
from rospy_control.devices import Motor

from middleware_testutil import wait_until

GAINS = '<gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/>'


def v3_xml(attrs: str = 'firmware="cubemars_v3"', extra: str = "", sim: str = 'inertia="0.01"') -> str:
    return ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="500" '
            'fault_timeout="0.05"><simulation rate="2000"/></channel>'
            f'<unit name="v3" type="rospy_control/Motor" channel="bus" can_id="1" {attrs}>{GAINS}'
            f'<simulation {sim}/></unit>{extra}</hardware>')


PLAIN = ('<unit name="mit" type="rospy_control/Motor" channel="bus" can_id="1">'
         '<simulation inertia="0.01"/></unit>')


def commanding(command, predicate):
    def check():
        command()
        return predicate()
    return check


def test_v3_and_plain_mit_with_the_same_id_share_a_bus(make_mw):
    mw = make_mw(v3_xml(extra=PLAIN))
    sim = sim_of(mw).firmware("bus")
    assert isinstance(sim.by_name["v3"].device, sim_cubemars.SimulatedCubeMarsV3)
    assert isinstance(sim.by_name["mit"], SimulatedMotor)
    mw.start()
    v3, plain = mw.unit("v3"), mw.unit("mit")
    assert v3.extended_routes() == ((0x1FFFFFFF, 0x2901),) and v3.request_ids() == ()
    targets = (("v3", 0.7), ("mit", -0.4))
    assert wait_until(commanding(
        lambda: [mw.unit(n).set_command(ControlMode.POSITION, t) for n, t in targets],
        lambda: all(abs(mw.snapshot()[n].position - t) < 0.02 for n, t in targets)), timeout=5.0)
    assert mw.mode_confirmed("v3", ControlMode.POSITION)
    assert mw.channels["bus"].bus_load() > 0
    assert v3.bits_per_cycle() > plain.bits_per_cycle()      # two 29-bit frames


def test_velocity_effort_and_impedance(make_mw):
    mw = make_mw(v3_xml())
    mw.start()
    m = mw.unit("v3")
    assert wait_until(commanding(lambda: m.set_command(ControlMode.VELOCITY, 2.0),
                                 lambda: abs(mw.snapshot()["v3"].velocity - 2.0) < 0.3), timeout=5.0)
    assert wait_until(commanding(lambda: m.set_impedance(-0.5, 0.0, 30.0, 1.0, 0.0),
                                 lambda: abs(mw.snapshot()["v3"].position + 0.5) < 0.03), timeout=5.0)
    assert mw.mode_confirmed("v3", ControlMode.MIT)


def test_the_motors_own_error_is_named_and_reset_only_once_gone(make_mw):
    mw = make_mw(v3_xml())
    mw.start()
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("v3", "over-current")
    assert wait_until(lambda: mw.snapshot()["v3"].fault, timeout=5.0)
    assert mw.snapshot()["v3"].fault_reason == "motor reported over-current (error code 2)"
    assert "still reports over-current" in mw.reset_faults(["v3"])["v3"]
    sim.clear_fault("v3")
    assert mw.reset_faults(["v3"]) == {}
    sim.set_fault("v3", "silent")
    assert wait_until(lambda: mw.snapshot()["v3"].fault, timeout=5.0)
    assert "no reply" in mw.snapshot()["v3"].fault_reason
    assert "v3" in mw.reset_faults(["v3"])
    sim.clear_fault("v3")
    assert mw.reset_faults(["v3"]) == {}


def test_set_zero_uses_the_set_origin_frame(make_mw):
    mw = make_mw(v3_xml())
    mw.start()
    m = mw.unit("v3")
    assert wait_until(commanding(lambda: m.set_command(ControlMode.POSITION, 0.6),
                                 lambda: abs(mw.snapshot()["v3"].position - 0.6) < 0.02), timeout=5.0)
    peer = sim_of(mw).firmware("bus").by_name["v3"]
    m.request_zero()
    assert wait_until(commanding(lambda: m.set_command(ControlMode.POSITION, 0.6),
                                 lambda: peer.device.zero != 0.0), timeout=5.0)
    zero = peer.device.zero
    assert abs(zero - 0.6) < 0.05
    # position 0 is now where the zero was set
    assert wait_until(commanding(lambda: m.set_command(ControlMode.POSITION, 0.0),
                                 lambda: abs(peer.joint.p - zero) < 0.02
                                 and abs(mw.snapshot()["v3"].position) < 0.02), timeout=5.0)
    assert not mw.snapshot()["v3"].fault


def test_frames_are_those_of_the_v3_codec():
    limits = MitLimits(-12.5, 12.5, -50.0, 50.0, 0.0, 500.0, 0.0, 5.0, -25.0, 25.0)
    m = Motor("m", 0x68, limits, position_kp=20.0, position_kd=0.5, firmware="cubemars_v3")
    m.activate(0.0, True, 0.1, 0.002)
    msg = m.poll(0.002)                         # enable: a limp MIT frame on 0x800 + id
    assert msg.is_extended_id and msg.arbitration_id == 0x868
    assert bytes(msg.data) == cm.pack_command(0, 0, 0, 0, 0, limits)
    m.on_frame(0x2968, cm.pack_feedback(0.0, 0.0, 0.0, m.scale), 0.002)
    m.end_cycle(0.003)
    m.set_impedance(1.0, 2.0, 20.0, 0.5, 3.0)
    msg = m.poll(0.004)
    assert (msg.arbitration_id, msg.dlc) == (0x868, 8)
    assert bytes(msg.data) == cm.pack_command(1.0, 2.0, 20.0, 0.5, 3.0, limits, cm.LAYOUT_V3)
    # gains first: kp 20 of 0..500 in 12 bits (truncating) is 0x0A3:
    # byte 0 = 0x0A, high nibble of byte 1 = 3
    assert msg.data[0] == 0x0A and msg.data[1] >> 4 == 0x3
    m.on_frame(0x2968, cm.pack_feedback(0.5, 0.0, 0.0, m.scale), 0.004)
    m.end_cycle(0.005)
    m.request_zero()
    msg = m.poll(0.006)
    assert (msg.arbitration_id, bytes(msg.data), msg.dlc) == (0x568, b"\x00", 1)
    assert m.awaited_replies() == 0             # set-origin is not answered
    m.end_cycle(0.007)
    msg = m.poll(0.008)
    assert msg.arbitration_id == 0x868          # back on the command id
    reply = m.decode_reply(0x2968, cm.pack_feedback(0.5, 1.0, 0.2, m.scale, 40.0, 6))
    assert reply.position == pytest.approx(0.5, abs=0.002) and reply.error_code == 6
    assert m.error_name(6) == "MOSFET over-temperature (error code 6)"


def test_plain_mit_motor_is_unchanged_and_left_to_the_mit_model():
    m = Motor("m", 3)
    assert m.firmware == "mit" and not m.EXTENDED_IDS and m.request_ids() == (3,)
    assert sim_cubemars.peer_for_unit(m) is None
    assert m.shared_reply(0) is not None and m.extended_routes() == ()


@pytest.mark.parametrize("attrs, words", [
    ('firmware="cubemars_v4"', ["firmware", "cubemars_v4"]),
    ('pole_pairs="14"', ["pole_pairs", "cubemars_v3"]),
    ('firmware="cubemars_v3" pole_pairs="0"', ["pole_pairs", "0"]),
    ('firmware="cubemars_v3" frame_layout="odd"', ["frame_layout", "odd"]),
    ('firmware="cubemars_v3" reply_dlc="6"', ["reply_dlc", "8"]),
    ('firmware="cubemars_v3" can_id="0x100"', ["can_id"]),
])
def test_bad_attributes_are_clear_config_errors(make_mw, attrs, words):
    xml = v3_xml(attrs)
    if "can_id=" in attrs:
        xml = xml.replace('can_id="1" ', "", 1)
    with pytest.raises(ConfigError) as err:
        make_mw(xml)
    for word in words:
        assert word in str(err.value), str(err.value)


def test_gains_beyond_the_frame_are_refused(make_mw):
    with pytest.raises(ConfigError, match="position_kp"):
        make_mw(v3_xml().replace('position_kp="20"', 'position_kp="600"'))
