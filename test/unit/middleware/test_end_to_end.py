"""Middleware + CanChannel + simulated firmware, end to end over python-can's virtual bus."""
from __future__ import annotations

import logging
import threading
import time

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.exceptions import CommunicationError, HardwareError
from rospy_control.middleware import ControlMode, Middleware, MotorState

from middleware_testutil import motor_xml, wait_until


def cycles(mw, channel="bus"):
    return mw.channels[channel].cycles


def wait_cycles(mw, n, channel="bus"):
    start = cycles(mw, channel)
    assert wait_until(lambda: cycles(mw, channel) >= start + n, timeout=5.0)


def test_position_command_is_reached_and_mode_confirmed(make_mw):
    mw = make_mw(motor_xml(2))
    mw.start()
    snap = mw.snapshot()
    assert isinstance(snap["m1"], MotorState) and snap["m1"].enabled
    mw.set_command("m1", ControlMode.POSITION, 1.0)
    assert wait_until(lambda: abs(mw.snapshot()["m1"].position - 1.0) < 0.02, timeout=5.0)
    assert mw.mode_confirmed("m1", ControlMode.POSITION)
    s = mw.snapshot()["m1"]
    assert s.mode == ControlMode.POSITION and s.requested_mode == ControlMode.POSITION and not s.fault
    assert abs(mw.snapshot()["m2"].position) < 0.02  # the other motor was not commanded


def commanding(command, predicate):
    """A predicate for wait_until that also re-sends ``command`` (a controller that stays alive, so
    the command watchdog does not take over)."""
    def check():
        command()
        return predicate()
    return check


def test_velocity_and_effort_modes(make_mw):
    mw = make_mw(motor_xml(1))
    mw.start()
    m = mw.motor("m1")
    m.request_mode(ControlMode.VELOCITY)
    assert wait_until(lambda: m.mode_confirmed(ControlMode.VELOCITY))
    assert wait_until(commanding(lambda: m.set_command(ControlMode.VELOCITY, 2.0),
                                 lambda: abs(mw.snapshot()["m1"].velocity - 2.0) < 0.3), timeout=5.0)
    m.set_command(ControlMode.EFFORT, 1.5)
    assert wait_until(commanding(lambda: m.set_command(ControlMode.EFFORT, 1.5),
                                 lambda: m.mode_confirmed(ControlMode.EFFORT)))
    # the firmware reports the torque it applies: t_ff with kp = kd = 0
    assert wait_until(commanding(lambda: m.set_command(ControlMode.EFFORT, 1.5),
                                 lambda: abs(mw.snapshot()["m1"].effort - 1.5) < 0.02))
    assert wait_until(commanding(lambda: m.set_mit_command(0.0, 0.0, 30.0, 1.0, 0.0),
                                 lambda: abs(mw.snapshot()["m1"].position) < 0.05), timeout=5.0)
    assert mw.snapshot()["m1"].mode == ControlMode.MIT


def test_direction_and_zero_offset(make_mw):
    mw = make_mw(motor_xml(1, motor_attrs='direction="-1" zero_offset="0.5"',
                           sim_attrs='initial_position="0.2"'))
    mw.start()
    assert abs(mw.snapshot()["m1"].position - 0.2) < 0.01
    mw.set_command("m1", ControlMode.POSITION, 0.4)
    assert wait_until(lambda: abs(mw.snapshot()["m1"].position - 0.4) < 0.01, timeout=5.0)
    # motor frame: -1 * 0.4 + 0.5
    assert wait_until(lambda: abs(sim_of(mw).firmware("bus").by_name["m1"].p - 0.1) < 0.01, timeout=5.0)


def test_silent_motor_faults_within_timeout_and_gets_no_commands(make_mw):
    mw = make_mw(motor_xml(2, fault_timeout=0.03))
    mw.start()
    sim = sim_of(mw).firmware("bus")
    sim.set_fault("m1", "silent")
    assert wait_until(lambda: mw.snapshot()["m1"].fault)
    s = mw.snapshot()["m1"]
    assert s.fault_reason.startswith("no reply for ") and "(fault_timeout 30.0 ms)" in s.fault_reason
    silent_ms = float(s.fault_reason.split()[3])
    # N = 30 unanswered requests at 1 kHz and 30 ms since the first; cycles the host ran late do not
    # count, so on a loaded machine it takes longer (the exact bound is tested on a simulated clock)
    assert 30.0 <= silent_ms < 2000.0
    assert int(s.fault_reason.split(", ")[-1].split()[0]) >= 30
    assert s.fault_time > 0
    assert not s.enabled
    assert mw.faults() == {"m1": s.fault_reason}
    assert mw.statistics()["channels"]["bus"]["reply_timeouts"]["m1"] > 0
    # one exit-motor-mode frame after the fault, then nothing
    wait_cycles(mw, 3)
    frames = sim.by_name["m1"].frames
    wait_cycles(mw, 20)
    assert sim.by_name["m1"].frames == frames
    assert not mw.snapshot()["m2"].fault
    # stays in FAULT until an explicit reset, even when the device would answer again
    sim.clear_fault("m1")
    wait_cycles(mw, 20)
    assert mw.snapshot()["m1"].fault
    mw.reset_fault("m1")   # non-blocking request, same probe as reset_faults()
    assert wait_until(lambda: not mw.snapshot()["m1"].fault and mw.snapshot()["m1"].enabled)
    assert mw.snapshot()["m1"].requested_mode == ControlMode.NONE
    assert mw.snapshot()["m1"].fault_time == 0.0


@pytest.mark.parametrize("fault,value,reason", [
    ("error_flag", 7, "motor reported error code 0x07"),
    ("over_temperature", 120, "over-temperature: 120 C > max_temperature 90 C"),
])
def test_firmware_reported_faults(make_mw, fault, value, reason):
    mw = make_mw(motor_xml(1))
    mw.start()
    sim_of(mw).firmware("bus").set_fault("m1", fault, value)
    assert wait_until(lambda: mw.snapshot()["m1"].fault)
    assert mw.snapshot()["m1"].fault_reason == reason


def test_wrong_dlc_is_counted_and_leads_to_timeout_fault(make_mw):
    mw = make_mw(motor_xml(1, fault_timeout=0.03))
    mw.start()
    sim_of(mw).firmware("bus").set_fault("m1", "wrong_dlc")
    assert wait_until(lambda: mw.snapshot()["m1"].fault)
    assert mw.statistics()["channels"]["bus"]["bad_frames"] > 0
    assert "no reply" in mw.snapshot()["m1"].fault_reason


def test_garbage_is_counted_and_ignored(make_mw):
    mw = make_mw(motor_xml(1))
    mw.start()
    mw.set_command("m1", ControlMode.POSITION, 0.5)
    sim_of(mw).firmware("bus").set_fault("m1", "garbage")
    wait_cycles(mw, 30)
    st = mw.statistics()["channels"]["bus"]
    assert st["unknown_frames"] > 0 and st["bad_frames"] > 0
    assert wait_until(lambda: abs(mw.snapshot()["m1"].position - 0.5) < 0.02, timeout=5.0)
    assert not mw.snapshot()["m1"].fault


def test_late_replies_count_as_missed_but_do_not_fault(make_mw):
    # 200 Hz: period 5 ms, reply window 4 ms; replies 4.5 ms late miss the window but not the cycle:
    # drained at the start of the next one, each ends the miss streak.
    # (MIT replies carry no sequence number: a reply later than a whole period would simply be taken
    # as the next cycle's answer, as on the real bus.)
    mw = make_mw(motor_xml(1, rate=200, fault_timeout=0.2))
    mw.start()
    sim_of(mw).firmware("bus").set_fault("m1", "late", 0.0045)
    # (cycles in which a busy host held the simulator back are excused, not counted: wait for ten)
    assert wait_until(lambda: mw.statistics()["channels"]["bus"]["reply_timeouts"]["m1"] >= 10,
                      timeout=5.0)
    assert not mw.snapshot()["m1"].fault


def test_replies_later_than_fault_timeout_fault(make_mw):
    mw = make_mw(motor_xml(1, rate=500, fault_timeout=0.02))
    mw.start()
    sim_of(mw).firmware("bus").set_fault("m1", "late", 0.1)
    assert wait_until(lambda: mw.snapshot()["m1"].fault)
    assert "no reply" in mw.snapshot()["m1"].fault_reason


def test_bus_errors_are_counted(make_mw, caplog):
    mw = make_mw(motor_xml(1))
    mw.start()
    with caplog.at_level(logging.WARNING):
        sim_of(mw).firmware("bus").set_fault(None, "bus_errors")
        assert wait_until(lambda: mw.statistics()["channels"]["bus"]["bus_errors"] > 5)
    assert "CAN error frame received" in caplog.text
    assert not mw.faults()


def test_passive_only_listens(make_mw):
    mw = make_mw(motor_xml(2))
    mw.start(enable_motors=False)
    wait_cycles(mw, 10)
    st = mw.statistics()["channels"]["bus"]
    assert st["frames_sent"] == 0 and st["reply_timeouts"] == {"m1": 0, "m2": 0}
    assert not sim_of(mw).firmware("bus").by_name["m1"].enabled
    assert not mw.faults()


def shut_down_three_enabled_motors(make_mw):
    """Start three motors, shut down: every simulated motor left motor mode."""
    mw = make_mw(motor_xml(3))
    mw.start()
    sim = sim_of(mw).firmware("bus")
    assert all(sim.by_name[f"m{i}"].enabled for i in (1, 2, 3))
    mw.shutdown()
    assert not any(sim.by_name[f"m{i}"].enabled for i in (1, 2, 3))
    return mw


def test_shutdown_sends_exit_to_every_motor_and_is_idempotent(make_mw):
    mw = shut_down_three_enabled_motors(make_mw)
    mw.shutdown()
    assert not mw.running
    with pytest.raises(HardwareError, match="was shut down"):
        mw.start()


def test_every_motor_acts_on_its_exit_frame_however_late_the_simulator_runs(make_mw, monkeypatch):
    """A motor acts on the exit-motor-mode frame it was sent, whether or not the host waited for its
    answer: the simulator handles what is already on the bus when it is stopped, even when its thread
    runs late (here: a pause after every receive, and a driver that waits for no answer)."""
    from rospy_control.bus import channel as channel_module
    from rospy_control.simulator import firmware as firmware_module
    late = threading.Event()
    opened = firmware_module.enlarge_receive_buffer

    def with_late_receives(bus):
        opened(bus)
        recv = bus.recv

        def late_recv(timeout=None):
            msg = recv(timeout)
            if late.is_set():
                time.sleep(0.01)  # descheduled after each frame
            return msg
        bus.recv = late_recv

    stop_thread = channel_module.CanChannel.stop

    def stop_then_run_late(channel):
        stopped = stop_thread(channel)
        late.set()  # from the last command frame on
        return stopped

    monkeypatch.setattr(firmware_module, "enlarge_receive_buffer", with_late_receives)
    monkeypatch.setattr(channel_module.CanChannel, "stop", stop_then_run_late)
    monkeypatch.setattr(channel_module.CanChannel, "EXIT_REPLY_WAIT", 0.0)
    shut_down_three_enabled_motors(make_mw)


def test_context_manager(make_mw):
    with make_mw(motor_xml(1)) as mw:
        assert mw.running and mw.snapshot()["m1"].enabled
    assert not mw.running


def test_bus_that_cannot_be_opened_names_interface_and_channel_and_closes_the_rest(make_mw):
    xml = motor_xml(1).replace(
        "</hardware>",
        '<channel name="hw" interface="no_such_interface" channel="adapter7"/>'
        '<unit name="x" type="rospy_control/Motor" channel="hw" can_id="1"/></hardware>')
    mw = make_mw(xml)
    with pytest.raises(CommunicationError) as exc:
        mw.start()
    assert "interface='no_such_interface' channel='adapter7'" in str(exc.value)
    assert "channel 'hw' at <xml string>:1" in str(exc.value)
    mw.shutdown()  # safe after a failed start; leak check verifies the simulated bus was closed


def test_thread_errors_are_surfaced_not_lost(make_mw):
    mw = make_mw(motor_xml(1))
    mw.start()
    motor = mw.motor("m1")

    def broken(arb_id, data, now):
        raise RuntimeError("decoder exploded")

    motor.on_frame = broken
    assert wait_until(lambda: mw.channels["bus"].thread_errors > 0)
    with pytest.raises(CommunicationError, match="RuntimeError: decoder exploded"):
        mw.check()
    n = cycles(mw)
    assert wait_until(lambda: cycles(mw) > n + 5)  # the thread kept running
    del motor.on_frame


def test_set_zero(make_mw):
    mw = make_mw(motor_xml(1, sim_attrs='initial_position="1.0"'))
    mw.start()
    assert abs(mw.snapshot()["m1"].position - 1.0) < 0.01
    mw.motor("m1").request_zero()
    assert wait_until(lambda: abs(mw.snapshot()["m1"].position) < 0.01)


def test_snapshot_is_immutable_and_advances(make_mw):
    mw = make_mw(motor_xml(2))
    mw.start()
    a = mw.snapshot()
    wait_cycles(mw, 2)
    b = mw.snapshot()
    assert set(a) == {"m1", "m2"} and len(b) == 2
    assert b.stamp > a.stamp
    with pytest.raises(AttributeError):
        a["m1"].position = 3.0


def test_bus_load_warning_at_start(make_mw, caplog):
    mw = make_mw(motor_xml(6, rate=1000))
    assert mw.bus_load()["bus"] == pytest.approx(6 * 270 * 1000 / 1e6)
    with caplog.at_level(logging.WARNING):
        mw.start()
    assert "estimated bus load 162 % at 1000 Hz with 6 units exceeds 80 %" in caplog.text


def test_statistics(make_mw):
    mw = make_mw(motor_xml(2))
    mw.start()
    wait_cycles(mw, 10)
    st = mw.statistics()
    ch = st["channels"]["bus"]
    assert st["simulated"] == ["bus"] and st["faults"] == {}
    assert ch["cycles"] >= 10 and ch["frames_sent"] >= 20 and ch["frames_received"] >= 18
    assert set(ch["reply_timeouts"]) == {"m1", "m2"} == set(ch["watchdog_trips"])
    assert {"late_cycles", "overruns", "bus_errors", "bus_load_estimate", "stalls", "longest_stall",
            "longest_stall_time", "last_stall_time", "excused_cycles", "command_timeout"} <= set(ch)
    assert ch["command_timeout"] == 0.05
    assert {"late_cycles", "stalls", "longest_stall", "last_stall_time"} <= set(st["host"])
    assert st["watchdog"] == {"trips": {}, "active": []} and st["events"] == 0


def test_shared_instance():
    Middleware.release_instance()
    with pytest.raises(HardwareError, match="not configured yet"):
        Middleware.instance()
    mw = Middleware.instance(motor_xml(1))
    try:
        assert Middleware.instance() is mw
    finally:
        Middleware.release_instance()
    assert not mw.running


def test_quadruped_imu_and_contacts(make_mw):
    from middleware_testutil import CONFIG
    import os
    mw = make_mw(os.path.join(CONFIG, "quadruped_hardware.xml"))
    mw.start()
    snap = mw.snapshot()
    imu = snap["imu"]
    assert imu.frame_id == "imu_link"
    assert imu.linear_acceleration[2] == pytest.approx(9.81, abs=0.2)
    assert abs(imu.linear_acceleration[0]) < 0.2 and abs(imu.angular_velocity[2]) < 0.05
    assert imu.orientation == pytest.approx((0, 0, 0, 1), abs=1e-3)
    feet = [f"{leg}_foot_contact" for leg in ("lf", "rf", "lh", "rh")]
    assert all(snap[f].in_contact and snap[f].force > 0 for f in feet)
    assert snap["lf_foot_contact"].frame_id == "lf_foot"
    assert [u.name for u in mw.unit("lh")] == [
        "lh_haa_motor", "lh_hfe_motor", "lh_kfe_motor", "lh_foot_contact"]
    assert mw.motor("rh_kfe_motor").joint == "rh_kfe_joint"
    mw.set_command("lf_kfe_motor", ControlMode.POSITION, -2.2)  # fold the knee: the foot lifts
    assert wait_until(lambda: not mw.snapshot()["lf_foot_contact"].in_contact, timeout=5.0)
    assert mw.snapshot()["rf_foot_contact"].in_contact
    mw.set_command("lf_kfe_motor", ControlMode.POSITION, -1.4)
    assert wait_until(lambda: mw.snapshot()["lf_foot_contact"].in_contact, timeout=5.0)


def test_force_torque_and_encoder_sensors(make_mw):
    extra = ('<unit name="ft" type="rospy_control/ForceTorqueSensor" channel="bus" can_id="0x40" '
             'frame_id="tool">'
             '<simulation fz="-20" tx="0.5"/></unit>'
             '<unit name="enc" type="rospy_control/Encoder" channel="bus" can_id="0x42">'
             '<simulation follows="m1" ratio="-1"/></unit>')
    mw = make_mw(motor_xml(1, extra=extra))
    mw.start()
    mw.set_command("m1", ControlMode.POSITION, 0.8)
    assert wait_until(lambda: abs(mw.snapshot()["enc"].position + 0.8) < 0.02, timeout=5.0)
    ft = mw.snapshot()["ft"]
    assert ft.force == pytest.approx((0, 0, -20), abs=0.05) and ft.torque[0] == pytest.approx(0.5, abs=0.01)
    sim_of(mw).firmware("bus").set_fault("ft", "silent")
    assert wait_until(lambda: mw.snapshot()["ft"].fault)
    assert "no reply" in mw.snapshot()["ft"].fault_reason


def test_bus_dying_at_run_time_faults_the_units_and_is_reported(make_mw):
    mw = make_mw(motor_xml(2, fault_timeout=0.03))
    mw.start()
    mw.channels["bus"]._bus.shutdown()  # the adapter disappears under the running thread
    assert wait_until(lambda: mw.snapshot()["m1"].fault and mw.snapshot()["m2"].fault)
    assert "no reply" in mw.snapshot()["m1"].fault_reason
    with pytest.raises(CommunicationError, match=r"channel 'bus' \(socketcan/can9\): CanOperationError"):
        mw.check()
    st = mw.statistics()["channels"]["bus"]
    assert st["tx_errors"] + st["rx_errors"] > 0
    mw.shutdown()  # still clean


def test_shutdown_leaves_the_bus_of_a_bus_thread_that_does_not_stop_alone(make_mw, caplog):
    """A bus thread stuck in the bus (a driver's send that hangs) is named, and shutdown then neither
    sends exit frames nor closes that bus from the calling thread, while the bus thread may be in it."""
    import threading

    mw = make_mw(motor_xml(1))
    mw.start()
    ch = mw.channels["bus"]
    bus_thread = ch.thread
    bus = ch._bus
    real_send, real_shutdown = bus.send, bus.shutdown
    stuck, release = threading.Event(), threading.Event()
    foreign: list = []

    def send(msg, timeout=None):
        if threading.current_thread() is bus_thread:
            stuck.set()
            release.wait(30.0)
        else:
            foreign.append(("send", threading.current_thread().name))
        return real_send(msg, timeout)

    def shutdown():
        foreign.append(("shutdown", threading.current_thread().name))
        return real_shutdown()

    bus.send, bus.shutdown = send, shutdown
    ch.JOIN_TIMEOUT = 0.2
    try:
        assert stuck.wait(10.0), "the bus thread never sent"
        with caplog.at_level(logging.ERROR):
            mw.shutdown()
        assert foreign == [], "the bus was used from another thread while its bus thread still ran"
        assert bus_thread.is_alive() and ch.thread is bus_thread, "the stuck thread was forgotten"
        assert bus_thread.name in caplog.text and "NOT closing the bus" in caplog.text
    finally:
        release.set()
    bus_thread.join(10.0)
    assert not bus_thread.is_alive()
    assert ch.shutdown() is True  # once the thread has stopped, a later shutdown closes the bus
    assert ("shutdown", threading.current_thread().name) in foreign and not ch.is_open


def test_snapshot_stamp_and_states_come_from_one_cycle(make_mw):
    """A channel publishes a cycle's stamp and states as one value: a reader racing the bus thread
    never pairs one cycle's stamp with another cycle's states (each state's reply is no newer than the
    stamp of the cycle that published it)."""
    mw = make_mw(motor_xml(2))
    mw.start()
    ch = mw.channels["bus"]
    seen = 0
    while seen < 300:
        stamp, states = ch.published
        snap = mw.snapshot()
        assert all(s.stamp <= stamp for s in states.values())
        assert all(s.stamp <= snap.stamp for s in snap.states.values())
        seen += 1
