"""RobStrideMotor (rospy_control/RobStrideMotor) against the simulated CyberGear / RobStride firmware on
a python-can virtual bus, through the real channel and middleware: start-up, the operation-control
(MIT-like) mode, the position and velocity run modes with a confirmed switch, parameters, active
reports, the motor's own faults by the manual's names, silence, resets, and bad XML.  Frame vectors
R1-R4 from the spec's RobStride captures."""
from __future__ import annotations

import struct
import uuid
from typing import List

import can
import pytest

from rospy_control.testing.sim_rig import sim_of, simulated_middleware
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ControlMode
from rospy_control.devices.robstride import codec as rs
from rospy_control.devices.request_reply import Command
from rospy_control.devices.robstride.device import RobStrideMotor

from middleware_testutil import drain_bus, wait_until


# commands are given once and left standing: no command watchdog (it is the base class's, tested there)
def robstride_xml(channel: str, unit_attrs: str = "", gains: str = 'position_kp="20" position_kd="0.5" '
                  'velocity_kd="0.5"', model: str = "cybergear", sim: str = 'inertia="0.01" damping="0.05" '
                  'friction="0.02"', can_id: str = "3") -> str:
    return (f'<hardware name="t"><channel name="bus" interface="virtual" channel="{channel}" rate="500" '
            f'fault_timeout="0.05" command_timeout="0"><simulation rate="2000"/></channel>'
            f'<unit name="m" type="rospy_control/RobStrideMotor" channel="bus" can_id="{can_id}" '
            f'model="{model}" {unit_attrs}><gains {gains}/><simulation {sim}/></unit></hardware>')


class Sniffer:
    """Every frame on the virtual channel, from a bus of its own.  Read when asked (drain_bus), never
    by a thread that could lag behind the driver."""

    def __init__(self, channel: str) -> None:
        self.bus = can.Bus(interface="virtual", channel=channel)
        self.frames: List[can.Message] = []

    def _drain(self) -> None:
        drain_bus(self.bus, self.frames)

    def close(self) -> None:
        self.bus.shutdown()

    def sent(self, comm_type: int) -> List[can.Message]:
        self._drain()
        return [m for m in self.frames if m.is_extended_id and (m.arbitration_id >> 24) == comm_type
                and (m.arbitration_id & 0xFF) != rs.DEFAULT_HOST_ID]


@pytest.fixture
def rig(make_mw):
    made = []

    def factory(**kw):
        mw = make_mw(robstride_xml(f"rs-{uuid.uuid4().hex[:8]}", **kw), simulate=True)
        # the in-process simulator's private virtual channel (Middleware.start)
        sniffer = Sniffer(mw.buses()["bus"].channel)
        made.append(sniffer)
        mw.start()
        unit = mw.unit("m")
        assert wait_until(lambda: mw.snapshot()["m"].enabled, timeout=10.0), mw.snapshot()["m"]
        return mw, unit, sniffer

    yield factory
    for s in made:
        s.close()


def test_frames_are_the_manuals_vectors():
    m = RobStrideMotor("m", 0x7F, model="cybergear")
    # R2: enable motor 0x7F from host 0xFD
    en = m.enable_frame()
    assert en.arb_id == 0x0300FD7F and bytes(en) == bytes(8)
    # R3: operation control, everything zero (torque 0 -> 0x7FFF in the id)
    m.run_mode = 0
    limp = m.encode_command(Command(ControlMode.NONE))
    assert limp.arb_id == 0x017FFF7F and bytes(limp) == bytes.fromhex("7FFF7FFF00000000")
    # R4: feedback of motor 0x7F to host 0xFD in run mode, no faults
    reply = m.decode_reply(0x02807FFD, bytes.fromhex("7FFF7FFF7FFF0136"))
    assert reply is not None and reply.error_code == 0 and m.device_mode == rs.MODE_RUN
    assert reply.temperature == pytest.approx(31.0)
    # a command in a run mode the motor is not in starts the switch: stop first
    m.run_mode = None
    assert m.encode_command(Command(ControlMode.NONE)).arb_id == 0x0400FD7F
    # replies are routed by type, motor id and host id; the status bits 23-16 vary
    routes = dict((v >> 24, mask) for mask, v in m.extended_routes())
    assert set(routes) == {rs.FEEDBACK, rs.ACTIVE_REPORT, rs.PARAM_READ, rs.FAULT_FEEDBACK}
    assert all(mask & 0x00FF0000 == 0 for mask in routes.values())


def test_start_up_enters_operation_control_and_tracks_a_position(rig):
    mw, m, sniffer = rig()
    assert m.run_mode == 0
    # the start-up sequence: stop, run_mode 0 written and read back, enable
    assert sniffer.sent(rs.STOP) and sniffer.sent(rs.PARAM_READ) and sniffer.sent(rs.ENABLE)
    m.set_position(0.8)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position - 0.8) < 0.01, timeout=10.0), mw.snapshot()["m"]
    assert wait_until(lambda: m.mode_confirmed(ControlMode.POSITION), timeout=5.0)
    # type-1 frames carry the position gains: kp 20 on CyberGear's 0..500 range
    frames = sniffer.sent(rs.OPERATION_CONTROL)
    _id, p, _v, kp, kd, _t = rs.decode_operation_control(frames[-1].arbitration_id, frames[-1].data,
                                                         rs.limits_for("cybergear"))
    assert kp == pytest.approx(20.0, abs=0.01) and kd == pytest.approx(0.5, abs=0.001)
    assert p == pytest.approx(0.8, abs=0.001)


def test_mit_and_effort_commands(rig):
    mw, m, _ = rig(unit_attrs='direction="-1"')
    m.set_impedance(-0.5, 0.0, 30.0, 1.0, 0.0)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position + 0.5) < 0.01, timeout=10.0), mw.snapshot()["m"]
    assert wait_until(lambda: m.mode_confirmed(ControlMode.MIT), timeout=5.0)
    start = mw.snapshot()["m"].position
    m.set_command(ControlMode.EFFORT, 0.3)
    assert wait_until(lambda: mw.snapshot()["m"].position > start + 0.5, timeout=10.0), mw.snapshot()["m"]


def test_position_and_velocity_run_modes_switch_with_confirmation(rig):
    mw, m, sniffer = rig(unit_attrs='position_run_mode="position" velocity_run_mode="velocity" '
                                    'speed_limit="3" current_limit="10"')
    m.set_command(ControlMode.VELOCITY, 1.0)
    assert wait_until(lambda: m.mode_confirmed(ControlMode.VELOCITY), timeout=10.0)
    assert m.run_mode == 2 and m.parameters["run_mode"] == 2
    # the simulated speed loop is proportional only: friction and damping leave a small error
    assert wait_until(lambda: abs(mw.snapshot()["m"].velocity - 1.0) < 0.2, timeout=10.0), mw.snapshot()["m"]
    writes = [bytes(f.data) for f in sniffer.sent(rs.PARAM_WRITE)]
    assert bytes.fromhex("0570000002000000") in writes            # run_mode = 2
    n_stops = len(sniffer.sent(rs.STOP))
    m.set_position(1.5)
    assert wait_until(lambda: m.mode_confirmed(ControlMode.POSITION), timeout=10.0)
    assert m.run_mode == 1
    assert len(sniffer.sent(rs.STOP)) == n_stops + 1               # stopped once to switch
    # R1's layout: run_mode = 1 written to motor 3 from host 0xFD
    r1 = [f for f in sniffer.sent(rs.PARAM_WRITE) if bytes(f.data) == bytes.fromhex("0570000001000000")]
    assert r1 and r1[0].arbitration_id == 0x1200FD03
    assert wait_until(lambda: abs(mw.snapshot()["m"].position - 1.5) < 0.01, timeout=10.0), mw.snapshot()["m"]
    # the targets are loc_ref writes (0x7016), no type-1 frames any more
    assert rs.decode_param_request(sniffer.sent(rs.PARAM_WRITE)[-1].arbitration_id,
                                   sniffer.sent(rs.PARAM_WRITE)[-1].data)[3] == 0x7016


def test_parameters_read_and_write(rig):
    mw, m, _ = rig()
    m.write_parameter("limit_torque", 5.0)
    m.read_parameter("limit_torque")
    assert wait_until(lambda: m.parameters.get("limit_torque") is not None, timeout=5.0)
    assert m.parameters["limit_torque"] == pytest.approx(5.0)
    m.read_parameter("VBUS")
    assert wait_until(lambda: m.parameters.get("VBUS") is not None, timeout=5.0)
    with pytest.raises(ValueError, match="limit_torque=13.0 is outside"):
        m.write_parameter("limit_torque", 13.0)
    with pytest.raises(ValueError, match="run_mode follows the control mode"):
        m.write_parameter("run_mode", 1)
    with pytest.raises(ValueError, match="read-only"):
        m.write_parameter("VBUS", 1.0)


def test_active_reports_are_consumed(rig):
    mw, m, _ = rig(unit_attrs='active_report="true" report_interval="0.01"', model="rs01")
    assert wait_until(lambda: m.active_reports >= 20, timeout=5.0), m.active_reports
    m.set_position(0.3)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position - 0.3) < 0.01, timeout=10.0)


def test_the_motors_own_fault_is_named_and_reset_only_once_gone(rig):
    mw, m, _ = rig()
    m.set_position(0.2)
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("m", "undervoltage")
    assert wait_until(lambda: mw.snapshot()["m"].fault, timeout=5.0)
    reason = mw.snapshot()["m"].fault_reason
    assert "undervoltage" in reason, reason
    assert mw.reset_faults(["m"]), "reset must be refused while the motor reports undervoltage"
    assert "undervoltage" in m.fault_reason, m.fault_reason
    sim.clear_fault("m")
    assert mw.reset_faults(["m"]) == {}
    assert not mw.snapshot()["m"].fault
    m.set_position(0.4)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position - 0.4) < 0.01, timeout=10.0)


def test_the_fault_frame_is_taken_in_both_id_layouts():
    m = RobStrideMotor("m", 5, model="cybergear")
    routes = m.extended_routes()
    data = struct.pack("<II", 0x1, 0)                       # undervoltage
    # motor id in bits 15-8 as in every reply; the manual's table puts the host id there
    for tail in ((0x05 << 8) | 0xFD, (0xFD << 8) | 0x05):
        aid = (rs.FAULT_FEEDBACK << 24) | tail
        assert any(aid & mask == value for mask, value in routes), hex(aid)
        before = m.fault_frames
        m.on_frame(aid, data, 1.0)
        assert m.fault_frames == before + 1 and m.fault_word == 1
    other = (rs.FAULT_FEEDBACK << 24) | (0x06 << 8) | 0xFD      # another motor's fault frame
    assert not any(other & mask == value for mask, value in routes)


def test_every_fault_bit_has_the_manuals_name():
    m = RobStrideMotor("m", 1, model="rs03")
    assert m.error_name(0x3F).startswith("undervoltage, overcurrent, over temperature, magnetic encoder "
                                         "fault, HALL encoder fault / stall overload, not calibrated")
    m.fault_word = 0x1FFBF
    text = m.error_name(1)
    for name in rs.FAULT_BITS.values():
        assert name in text


def test_silence_faults_and_a_reset_recovers_once_it_answers(rig):
    mw, m, _ = rig()
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("m", "silent")
    assert wait_until(lambda: mw.snapshot()["m"].fault, timeout=5.0)
    assert "no reply" in mw.snapshot()["m"].fault_reason
    assert mw.reset_faults(["m"])
    sim.clear_fault("m")
    assert mw.reset_faults(["m"]) == {}
    m.set_position(-0.3)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position + 0.3) < 0.01, timeout=10.0)


@pytest.mark.parametrize("attrs, words", [
    (dict(model="rs09"), ["model", "rs09", "cybergear"]),
    (dict(can_id="300"), ["can_id", "300", "0..255"]),
    (dict(gains='position_kp="600" position_kd="1" velocity_kd="1"'), ["position_kp", "600", "500"]),
    (dict(model="rs03", gains='position_kp="600" position_kd="120" velocity_kd="1"'),
     ["position_kd", "120", "100"]),
    (dict(unit_attrs='speed_limit="40"'), ["speed_limit", "40", "30"]),
    (dict(unit_attrs='position_run_mode="torque"'), ["position_run_mode", "torque"]),
    (dict(unit_attrs='position_run_mode="csp"'), ["csp", "CyberGear"]),
    (dict(model="rs01", unit_attrs='report_interval="0.001"'), ["report_interval", "0.001"]),
    (dict(unit_attrs='active_report="true"'), ["active_report", "CyberGear", "rs0x"]),
    (dict(unit_attrs='report_interval="0.01"'), ["report_interval=0.01", "CyberGear"]),
])
def test_bad_attributes_are_clear_config_errors(make_mw, attrs, words):
    with pytest.raises(ConfigError) as err:
        make_mw(robstride_xml("unused", **attrs), simulate=True)
    for w in words:
        assert w in str(err.value), str(err.value)


def test_model_is_required():
    xml = robstride_xml("unused").replace('model="cybergear"', "")
    with pytest.raises(ConfigError, match="required attribute 'model'"):
        simulated_middleware(xml, simulate=True)


def test_a_motor_that_left_run_mode_by_itself_is_enabled_again(rig):
    mw, m, sniffer = rig()
    m.set_position(0.5)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position - 0.5) < 0.01, timeout=10.0)
    enables = len(sniffer.sent(rs.ENABLE))
    # a stop the unit did not send (as the motor's own CAN timeout would): it reports reset mode
    stop = rs.encode_stop(3)
    sniffer.bus.send(can.Message(arbitration_id=stop.arbitration_id, is_extended_id=True, data=stop.data))
    assert wait_until(lambda: len(sniffer.sent(rs.ENABLE)) > enables, timeout=5.0)
    assert not mw.snapshot()["m"].fault
    m.set_position(-0.5)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position + 0.5) < 0.01, timeout=10.0), mw.snapshot()["m"]


def test_set_zero_makes_the_present_position_zero(rig):
    mw, m, sniffer = rig(sim='inertia="0.01" damping="0.05" friction="0.02" initial_position="0.7"')
    assert wait_until(lambda: abs(mw.snapshot()["m"].position - 0.7) < 0.01, timeout=5.0), mw.snapshot()["m"]
    m.request_zero()
    assert wait_until(lambda: sniffer.sent(rs.SET_ZERO), timeout=5.0)
    zero = sniffer.sent(rs.SET_ZERO)[0]
    assert zero.arbitration_id == 0x0600FD03 and bytes(zero.data) == b"\x01" + bytes(7)
    assert wait_until(lambda: abs(mw.snapshot()["m"].position) < 0.01, timeout=5.0), mw.snapshot()["m"]
