"""DamiaoMotor (units/damiao.py) against its simulated motor (simulation/damiao.py) on python-can's
virtual bus, through the real Middleware and CanChannel threads; and the frames it composes, byte for
byte, against the vectors of the DaMiao DM-J instruction manual as DM_Control_Python implements it."""
from __future__ import annotations

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ControlMode
from rospy_control.devices.damiao import codec as dm
from rospy_control.devices.damiao.device import DamiaoMotor
from rospy_control.devices.request_reply import Command

from middleware_testutil import wait_until


def dm_xml(units: str, rate: float = 500.0, fault_timeout: float = 0.05) -> str:
    return (f'<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="{rate}" '
            f'fault_timeout="{fault_timeout}"><simulation rate="2000"/></channel>{units}</hardware>')


def dm_unit(name: str, can_id: int, attrs: str = 'model="DM4310"', sim: str = 'inertia="0.01"',
            gains: str = '<gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/>') -> str:
    return (f'<unit name="{name}" type="rospy_control/DamiaoMotor" channel="bus" can_id="{can_id}" {attrs}>'
            f'{gains}<simulation {sim}/></unit>')


def commanding(command, predicate):
    def check():
        command()
        return predicate()
    return check


def device(mw, name):
    return sim_of(mw).firmware("bus").by_name[name].device


# -- start-up ----------------------------------------------------------------------------------------
def test_startup_reads_the_range_registers_and_motors_share_a_master_id_with_mit_beside(make_mw):
    mit_motor = ('<unit name="g" type="rospy_control/Motor" channel="bus" can_id="7">'
                 '<simulation inertia="0.01"/></unit>')
    mw = make_mw(dm_xml(dm_unit("a", 1, 'model="DM4310" master_id="0x10"')
                        + dm_unit("b", 2, 'model="DM4340" master_id="0x10"') + mit_motor))
    mw.start()
    assert wait_until(lambda: all(mw.snapshot()[n].enabled for n in "abg"), timeout=5.0)
    a, b = mw.unit("a"), mw.unit("b")
    assert a.registers[dm.RID_PMAX] == 12.5 and a.registers[dm.RID_VMAX] == 30.0
    assert b.registers[dm.RID_VMAX] == 8.0 and b.registers[dm.RID_TMAX] == 28.0
    assert a.ctrl_mode == dm.MODE_MIT
    assert device(mw, "a").enabled and device(mw, "b").enabled
    targets = (("a", 0.8), ("b", -0.6), ("g", 0.4))
    assert wait_until(commanding(
        lambda: [mw.unit(n).set_command(ControlMode.POSITION, t) for n, t in targets],
        lambda: all(abs(mw.snapshot()[n].position - t) < 0.02 for n, t in targets)), timeout=5.0)
    assert mw.mode_confirmed("a", ControlMode.POSITION)


def test_a_range_register_differing_from_the_xml_faults_naming_motor_register_and_both_values(make_mw):
    mw = make_mw(dm_xml(dm_unit("a", 1, 'model="DM4340"', 'inertia="0.01" v_max="10"')))
    mw.start()
    assert wait_until(lambda: mw.snapshot()["a"].fault, timeout=5.0)
    reason = mw.snapshot()["a"].fault_reason
    assert "motor 'a'" in reason and "VMAX" in reason and "10.0" in reason and "8.0" in reason, reason
    assert not device(mw, "a").enabled            # never enabled
    still = mw.reset_faults(["a"])
    assert "VMAX" in still["a"], still              # the reset reads the registers again


def test_a_motor_that_does_not_answer_at_start_faults_naming_motor_and_register(make_mw):
    mw = make_mw(dm_xml(dm_unit("a", 1, 'model="DM4310" master_id="0x11"')))
    sim_of(mw).firmware("bus").set_fault("a", "silent")
    mw.start()
    assert wait_until(lambda: mw.snapshot()["a"].fault, timeout=5.0)
    reason = mw.snapshot()["a"].fault_reason
    assert "motor 'a' did not answer" in reason and "PMAX" in reason and "0x011" in reason, reason
    sim_of(mw).firmware("bus").clear_fault("a")
    assert mw.reset_faults(["a"]) == {}
    assert wait_until(lambda: mw.snapshot()["a"].enabled, timeout=5.0)


def test_can_timeout_is_written_to_the_timeout_register_or_read_from_it(make_mw):
    mw = make_mw(dm_xml(dm_unit("a", 1, 'model="DM4310" can_timeout="0.2"')
                        + dm_unit("b", 2, 'model="DM4310"', 'inertia="0.01" can_timeout="0.1"')))
    mw.start()
    assert wait_until(lambda: mw.snapshot()["a"].enabled and mw.snapshot()["b"].enabled, timeout=5.0)
    assert device(mw, "a").registers[dm.RID_TIMEOUT] == 4000        # 0.2 s in 50 us units
    assert mw.unit("a").firmware_timeout == pytest.approx(0.2)
    assert device(mw, "b").registers[dm.RID_TIMEOUT] == 2000        # kept: the motor's own
    assert mw.unit("b").firmware_timeout == pytest.approx(0.1)


def test_a_register_write_answered_with_the_read_command_byte_is_accepted(make_mw):
    attrs = 'model="DM4310" position_mode="position_velocity" can_timeout="0.2"'
    mw = make_mw(dm_xml(dm_unit("a", 1, attrs)))
    device(mw, "a").write_reply_cmd = dm.REG_READ          # byte 2 = 0x33 in the answer to a write
    mw.start()
    a = mw.unit("a")
    assert wait_until(lambda: mw.snapshot()["a"].enabled, timeout=5.0), mw.snapshot()["a"]
    assert device(mw, "a").registers[dm.RID_TIMEOUT] == 4000 and a.firmware_timeout == pytest.approx(0.2)
    assert wait_until(commanding(lambda: a.set_command(ControlMode.POSITION, 1.0),
                                 lambda: abs(mw.snapshot()["a"].position - 1.0) < 0.02), timeout=5.0)
    assert a.ctrl_mode == dm.MODE_POS_VEL and not mw.snapshot()["a"].fault


@pytest.mark.parametrize("answered", [True, False])
def test_clear_error_needs_no_answer_yet_a_silent_motor_still_faults(make_mw, answered):
    mw = make_mw(dm_xml(dm_unit("a", 1, 'model="DM4310"')))
    device(mw, "a").answer_clear = answered       # the manual documents no answer to FB
    mw.start()
    assert wait_until(lambda: mw.snapshot()["a"].enabled, timeout=5.0), mw.snapshot()["a"]
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("a", "over-current")
    assert wait_until(lambda: mw.snapshot()["a"].fault, timeout=5.0)
    assert "still reports over-current" in mw.reset_faults(["a"])["a"]
    sim.clear_fault("a")
    assert mw.reset_faults(["a"]) == {}
    assert wait_until(lambda: mw.snapshot()["a"].enabled, timeout=5.0), mw.snapshot()["a"]
    sim.set_fault("a", "silent")
    assert wait_until(lambda: mw.snapshot()["a"].fault, timeout=5.0)
    assert mw.reset_faults(["a"])["a"]
    assert mw.snapshot()["a"].fault and not mw.snapshot()["a"].enabled


# -- modes -------------------------------------------------------------------------------------------
def test_position_velocity_and_velocity_modes_switch_ctrl_mode(make_mw):
    attrs = 'model="DM4310" position_mode="position_velocity" velocity_mode="velocity" speed_limit="3"'
    mw = make_mw(dm_xml(dm_unit("a", 1, attrs)))
    mw.start()
    a = mw.unit("a")
    assert not a.CAPABILITIES.position_velocity_ff and not a.CAPABILITIES.velocity_effort_ff
    assert wait_until(commanding(lambda: a.set_command(ControlMode.POSITION, 1.0),
                                 lambda: abs(mw.snapshot()["a"].position - 1.0) < 0.02), timeout=5.0)
    assert device(mw, "a").mode == dm.MODE_POS_VEL and a.ctrl_mode == dm.MODE_POS_VEL
    assert mw.mode_confirmed("a", ControlMode.POSITION)
    assert wait_until(commanding(lambda: a.set_command(ControlMode.VELOCITY, 2.0),
                                 lambda: abs(mw.snapshot()["a"].velocity - 2.0) < 0.3), timeout=5.0)
    assert device(mw, "a").mode == dm.MODE_VEL
    assert mw.mode_confirmed("a", ControlMode.VELOCITY)
    assert wait_until(commanding(lambda: a.set_command(ControlMode.EFFORT, 0.0),
                                 lambda: device(mw, "a").mode == dm.MODE_MIT), timeout=5.0)
    assert a.mode_switches >= 3


def test_mit_mode_effort_and_impedance(make_mw):
    mw = make_mw(dm_xml(dm_unit("a", 1)))
    mw.start()
    a = mw.unit("a")
    assert wait_until(commanding(lambda: a.set_command(ControlMode.EFFORT, 1.5),
                                 lambda: abs(mw.snapshot()["a"].effort - 1.5) < 0.05), timeout=5.0)
    assert wait_until(commanding(lambda: a.set_impedance(-0.5, 0.0, 30.0, 1.0, 0.0),
                                 lambda: abs(mw.snapshot()["a"].position + 0.5) < 0.03), timeout=5.0)
    assert mw.mode_confirmed("a", ControlMode.MIT)


# -- faults ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("fault", ["over-current", "coil over-temperature", "communication loss"])
def test_the_motors_own_error_is_named_as_the_manual_names_it(make_mw, fault):
    mw = make_mw(dm_xml(dm_unit("a", 1) + dm_unit("b", 2)))
    mw.start()
    assert wait_until(lambda: mw.snapshot()["a"].enabled, timeout=5.0)
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("a", fault)
    assert wait_until(lambda: mw.snapshot()["a"].fault, timeout=5.0)
    s = mw.snapshot()["a"]
    assert s.fault_reason == f"motor reported {fault} (state 0x{dm.fault_code(fault):X})"
    assert s.error_code == dm.fault_code(fault)
    assert not mw.snapshot()["b"].fault
    still = mw.reset_faults(["a"])
    assert f"still reports {fault}" in still["a"]
    sim.clear_fault("a")
    assert mw.reset_faults(["a"]) == {}
    assert not device(mw, "a").error and device(mw, "a").enabled
    assert wait_until(commanding(lambda: mw.unit("a").set_command(ControlMode.POSITION, 0.5),
                                 lambda: abs(mw.snapshot()["a"].position - 0.5) < 0.02), timeout=5.0)


def test_silence_faults_and_the_reset_works_once_it_answers(make_mw):
    mw = make_mw(dm_xml(dm_unit("a", 1)))
    mw.start()
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("a", "silent")
    assert wait_until(lambda: mw.snapshot()["a"].fault, timeout=5.0)
    assert "no reply" in mw.snapshot()["a"].fault_reason
    assert "a" in mw.reset_faults(["a"])
    sim.clear_fault("a")
    assert mw.reset_faults(["a"]) == {}
    assert wait_until(lambda: mw.snapshot()["a"].enabled and not mw.snapshot()["a"].fault, timeout=5.0)


def test_a_motor_that_disabled_itself_is_enabled_again(make_mw):
    mw = make_mw(dm_xml(dm_unit("a", 1)))
    mw.start()
    a = mw.unit("a")
    assert wait_until(lambda: device(mw, "a").enabled, timeout=5.0)
    device(mw, "a").enabled = False     # e.g. another tool sent disable
    assert wait_until(commanding(lambda: a.set_command(ControlMode.POSITION, 0.3),
                                 lambda: abs(mw.snapshot()["a"].position - 0.3) < 0.02), timeout=5.0)
    assert device(mw, "a").enabled and not mw.snapshot()["a"].fault


# -- bytes -------------------------------------------------------------------------------------------
def _started(unit: DamiaoMotor, registers=None):
    """Drive ``unit`` through its start-up sequence by hand, answering as a DM4310 with ``registers``."""
    regs = {dm.RID_PMAX: 12.5, dm.RID_VMAX: 30.0, dm.RID_TMAX: 10.0, dm.RID_CTRL_MODE: 1, dm.RID_TIMEOUT: 0}
    regs.update(registers or {})
    unit.activate(0.0, True, 0.1, 0.002)
    sent = []
    t = 0.0
    for _ in range(20):
        t += 0.002
        msg = unit.poll(t)
        if msg is None:      # in FAULT: nothing more is sent
            unit.end_cycle(t)
            continue
        sent.append((msg.arbitration_id, bytes(msg.data)))
        data = bytes(msg.data)
        if msg.arbitration_id == dm.REGISTER_ID:
            sid, cmd, rid, raw = dm.unpack_register_request(data)
            value = regs[rid] if cmd == dm.REG_READ else dm.decode_register_value(rid, raw)
            regs[rid] = value
            unit.on_frame(unit.master_id, dm.pack_register_reply(sid, cmd, rid, value), t)
        else:
            state = dm.STATE_DISABLED if data in (dm.CLEAR_ERROR, dm.DISABLE) else dm.STATE_ENABLED
            unit.on_frame(unit.master_id, dm.pack_reply(unit.can_id, state, 0, 0, 0, unit.ranges), t)
        unit.end_cycle(t)
        if data == dm.ENABLE:
            return sent, t
    raise AssertionError(f"never enabled: {sent}")


def test_frames_are_byte_exact():
    u = DamiaoMotor("a", 1, dm.MODEL_RANGES["DM4310"], master_id=0x11, position_kp=20.0, position_kd=0.5,
                    position_mode="position_velocity", velocity_mode="velocity")
    sent, t = _started(u)
    # D5: register reads on 0x7FF; clear error, then enable (D1) on the slave id
    assert sent[0] == (0x7FF, bytes.fromhex("01 00 33 15 00 00 00 00"))
    assert [s[1][3] for s in sent[:5]] == [21, 22, 23, 10, 9]
    assert sent[5] == (0x001, bytes.fromhex("FF FF FF FF FF FF FF FB"))
    assert sent[6] == (0x001, bytes.fromhex("FF FF FF FF FF FF FF FC"))
    # D2: limp in MIT mode (all zero, truncating: t 0 -> 0x7FF)
    t += 0.002
    msg = u.poll(t)
    assert (msg.arbitration_id, bytes(msg.data)) == (0x001, bytes.fromhex("7F FF 7F F0 00 00 07 FF"))
    # D3 as an impedance command
    u.set_impedance(1.0, 0.0, 20.0, 0.5, 0.0)
    assert u.encode_command(u.command) == bytes.fromhex("8A 3C 7F F0 A3 19 97 FF")
    # D5 write CTRL_MODE = 2 precedes the first position-velocity frame; D4 on 0x101
    u.set_position(1.0)
    u.speed_limit = 2.0
    msg = u.poll(t + 0.002)
    assert (msg.arbitration_id, bytes(msg.data)) == (0x7FF, bytes.fromhex("01 00 55 0A 02 00 00 00"))
    u.on_frame(0x11, dm.pack_register_reply(1, dm.REG_WRITE, 10, 2), t + 0.002)
    msg = u.poll(t + 0.004)
    assert (msg.arbitration_id, msg.dlc) == (0x101, 8)
    assert bytes(msg.data) == bytes.fromhex("00 00 80 3F 00 00 00 40")
    u.on_frame(0x11, dm.pack_reply(1, 1, 0, 0, 0, u.ranges), t + 0.004)
    # D4 velocity on 0x201, 4 bytes
    u.set_command(ControlMode.VELOCITY, 3.0)
    msg = u.poll(t + 0.006)
    assert bytes(msg.data) == bytes.fromhex("01 00 55 0A 03 00 00 00")
    u.on_frame(0x11, dm.pack_register_reply(1, dm.REG_WRITE, 10, 3), t + 0.006)
    msg = u.poll(t + 0.008)
    assert (msg.arbitration_id, bytes(msg.data), msg.dlc) == (0x201, bytes.fromhex("00 00 40 40"), 4)


def test_feedback_is_decoded_as_the_manual_says():
    # D1: the reply to enable, on master id 0x011, DM4340 ranges
    u = DamiaoMotor("a", 1, dm.MODEL_RANGES["DM4340"], master_id=0x11)
    reply = u.decode_reply(0x11, bytes.fromhex("11 83 27 7F F7 FF 00 00"))
    assert reply.error_code == 0
    assert reply.position == pytest.approx(0.3080, abs=1e-3)
    assert reply.velocity == pytest.approx(-0.0024, abs=1e-3)
    assert reply.effort == pytest.approx(-0.0068, abs=1e-3)
    over_current = u.decode_reply(0x11, bytes.fromhex("A1 83 27 7F F7 FF 00 00"))
    assert over_current.error_code == 0xA and u.error_name(0xA) == "over-current (state 0xA)"
    assert u.shared_reply(0).arbitration_id == 0x11 and u.shared_reply(0).key == 1
    assert u.request_ids() == (0x001, 0x101, 0x201)


def test_a_mismatch_is_a_fault_without_enable():
    u = DamiaoMotor("arm_1", 1, dm.MODEL_RANGES["DM4310"])
    with pytest.raises(AssertionError, match="never enabled"):
        _started(u, {dm.RID_TMAX: 12.0})
    assert u.fault
    assert "register TMAX (rid 23) is 12.0 on the motor, 10.0 configured" in u.fault_reason
    assert "motor 'arm_1'" in u.fault_reason


def test_the_late_answer_to_the_disable_sent_on_fault_does_not_fail_the_reset():
    """Replies carry no sequence number: on a host that runs the motor's side late, the answer to the
    disable frame sent on FAULT (still in the fault state) can arrive after the reset's clear-error
    went out.  It is not the motor's answer to clear-error, and the reset must not fail on it."""
    u = DamiaoMotor("a", 1, dm.MODEL_RANGES["DM4310"])
    _, t = _started(u)
    ranges = u.ranges
    under_voltage = dm.pack_reply(1, 0x9, 0, 0, 0, ranges)
    t += 0.002
    u.poll(t)
    u.on_frame(u.master_id, under_voltage, t)        # the motor reports under-voltage: FAULT
    u.end_cycle(t)
    assert u.fault and "under-voltage" in u.fault_reason
    t += 0.002
    assert bytes(u.poll(t).data) == dm.DISABLE       # the disable on FAULT; its answer is late
    u.end_cycle(t)
    ticket = u.reset_fault()                          # the cause is gone; the user resets
    t += 0.002
    assert bytes(u.poll(t).data) == dm.CLEAR_ERROR
    u.on_frame(u.master_id, under_voltage, t)        # the disable's answer, from before the reset
    u.end_cycle(t)
    assert u.reset_outcome(ticket) is None            # judged nothing on it
    assert not u.fault_reason.startswith("reset failed")
    for _ in range(10):                               # clear-error needs no answer: the rest follows
        if u.reset_outcome(ticket) is not None:
            break
        t += 0.002
        msg = u.poll(t)
        data = bytes(msg.data)
        if msg.arbitration_id == dm.REGISTER_ID:
            sid, cmd, rid, raw = dm.unpack_register_request(data)
            value = dm.decode_register_value(rid, raw)
            u.on_frame(u.master_id, dm.pack_register_reply(sid, cmd, rid, value), t)
        else:
            u.on_frame(u.master_id, dm.pack_reply(1, dm.STATE_ENABLED, 0, 0, 0, ranges), t)
        u.end_cycle(t)
    assert u.reset_outcome(ticket) == (True, ""), u.fault_reason
    assert not u.fault


def test_a_fault_still_there_after_clear_error_fails_the_reset_naming_it():
    u = DamiaoMotor("a", 1, dm.MODEL_RANGES["DM4310"])
    _, t = _started(u)
    under_voltage = dm.pack_reply(1, 0x9, 0, 0, 0, u.ranges)
    t += 0.002
    u.poll(t)
    u.on_frame(u.master_id, under_voltage, t)
    u.end_cycle(t)
    t += 0.002
    assert bytes(u.poll(t).data) == dm.DISABLE
    u.on_frame(u.master_id, under_voltage, t)        # answered on time
    u.end_cycle(t)
    ticket = u.reset_fault()
    t += 0.002
    assert bytes(u.poll(t).data) == dm.CLEAR_ERROR
    u.on_frame(u.master_id, under_voltage, t)        # the cause is still there
    u.end_cycle(t)
    assert u.reset_outcome(ticket) == (False, "reset failed: motor still reports under-voltage (state 0x9)")
    assert u.fault


# -- configuration -----------------------------------------------------------------------------------
@pytest.mark.parametrize("attrs, gains, words", [
    ('', '', ["needs its MIT ranges", "model"]),
    ('model="DM9999"', '', ["model", "DM9999"]),
    ('model="DM4310"', '<gains position_kp="600"/>', ["position_kp", "600", "500"]),
    ('model="DM4310"', '<gains position_kd="6"/>', ["position_kd", "6", "5"]),
    ('model="DM4310" position_mode="servo"', '', ["position_mode", "servo"]),
    ('model="DM4310" velocity_mode="pid"', '', ["velocity_mode", "pid"]),
    ('model="DM4310" firmware_timeout="0.1"', '', ["firmware_timeout", "can_timeout"]),
    ('model="DM4310" can_timeout="-1"', '', ["can_timeout", "-1"]),
    ('model="DM4310" master_id="0x801"', '', ["master_id"]),
    ('p_max="12.5" v_max="30"', '', ["t_max"]),
    ('model="DM4310" t_max="0"', '', ["t_max", "0"]),
])
def test_bad_attributes_are_clear_config_errors(make_mw, attrs, gains, words):
    with pytest.raises(ConfigError) as err:
        make_mw(dm_xml(dm_unit("a", 1, attrs, gains=gains)))
    for word in words:
        assert word in str(err.value), str(err.value)


def test_slave_ids_and_shared_master_ids_are_checked(make_mw):
    with pytest.raises(ConfigError, match="can_id"):
        make_mw(dm_xml(dm_unit("a", 0x100)))
    # two motors answering on one master id must differ in the slave id's low nibble
    with pytest.raises(ConfigError, match="cannot be told"):
        make_mw(dm_xml(dm_unit("a", 0x01, 'model="DM4310" master_id="0x10"')
                       + dm_unit("b", 0x11, 'model="DM4310" master_id="0x10"')))


def test_command_is_limp_until_commanded():
    u = DamiaoMotor("a", 1, dm.MODEL_RANGES["DM4310"])
    assert u.command == Command(ControlMode.NONE)
    assert u.effort_range == (-10.0, 10.0)


def test_a_reset_restores_the_ram_registers_a_power_cycle_reset(make_mw):
    mw = make_mw(dm_xml(dm_unit("a", 1, 'model="DM4310" can_timeout="0.5"')))
    mw.start()
    a = mw.unit("a")
    assert wait_until(lambda: mw.snapshot()["a"].enabled, timeout=5.0)
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("a", "under-voltage")
    assert wait_until(lambda: mw.snapshot()["a"].fault, timeout=5.0)
    dev = device(mw, "a")
    dev.registers[dm.RID_CTRL_MODE] = dm.MODE_VEL    # powered up with other RAM values
    dev.registers[dm.RID_TIMEOUT] = 0
    sim.clear_fault("a")
    assert mw.reset_faults(["a"]) == {}
    assert dev.registers[dm.RID_TIMEOUT] == 10000
    assert wait_until(commanding(lambda: a.set_command(ControlMode.POSITION, 0.4),
                                 lambda: abs(mw.snapshot()["a"].position - 0.4) < 0.02), timeout=5.0)
    assert dev.mode == dm.MODE_MIT and a.ctrl_mode == dm.MODE_MIT
