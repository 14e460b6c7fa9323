"""Fault resets, the command watchdog, host stalls and the simulator's command record, end to end on
the virtual bus with the real channel and simulator threads.

Everything waits on conditions with generous timeouts (this runs on a loaded 2-core machine); a
"process freeze" is produced by holding the GIL in one C call, which stops every Python thread of
the process -- the channel's and the simulator's -- like the host descheduling it.
"""
from __future__ import annotations

import threading
import time

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.exceptions import HardwareError
from rospy_control.middleware import ControlMode, FaultEvent
from rospy_control.devices.mit import codec as mit

from middleware_testutil import motor_xml, wait_until

L = mit.MitLimits()


def wait_cycles(mw, n, channel="bus"):
    start = mw.channels[channel].cycles
    assert wait_until(lambda: mw.channels[channel].cycles >= start + n, timeout=10.0)


def freeze_process(seconds: float) -> float:
    """Hold the GIL for about ``seconds`` in one C call (no Python thread of this process runs).

    Calibrated on the fastest of a few short runs, so a deschedule while calibrating makes the freeze
    longer, never shorter."""
    n = 1_000_000
    per = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        sum(range(n))
        per = min(per, (time.perf_counter() - t0) / n)
    t0 = time.perf_counter()
    sum(range(max(n, int(seconds / per))))
    return time.perf_counter() - t0


class FaultSampler:
    """Samples ``fault`` of a unit (published state and unit) in a thread while a reset runs."""

    def __init__(self, mw, name: str) -> None:
        self.mw, self.name = mw, name
        self.samples = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        unit = self.mw.unit(self.name)
        while not self._stop.is_set():
            self.samples.append((self.mw.snapshot()[self.name].fault, unit.fault))
            time.sleep(0.0005)

    def __enter__(self) -> "FaultSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


class Controller:
    """A control loop in a thread: calls ``command(k)`` every ``period`` until stopped."""

    def __init__(self, command, period: float = 0.005) -> None:
        self.command, self.period = command, period
        self.k = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            self.command(self.k)
            self.k += 1
            time.sleep(self.period)

    def start(self) -> "Controller":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def kinds(mw, unit, since=0):
    return [e.kind for e in mw.events(since) if e.unit == unit]


# -- faults and resets -------------------------------------------------------------------------------

def test_reset_of_a_still_silent_motor_fails_and_the_fault_never_flickers(make_mw):
    mw = make_mw(motor_xml(2, fault_timeout=0.03))
    mw.start()
    sim_of(mw).set_fault("m1", "silent")
    assert wait_until(lambda: mw.snapshot()["m1"].fault, timeout=5.0)
    fault_time = mw.snapshot()["m1"].fault_time
    assert abs(fault_time - time.time()) < 10.0
    with FaultSampler(mw, "m1") as sampler:
        result = mw.reset_faults()
    assert list(result) == ["m1"]
    assert result["m1"].startswith("reset failed: no reply to enter-motor-mode for ")
    assert float(result["m1"].split()[-2]) >= 30.0
    assert sampler.samples and all(a and b for a, b in sampler.samples)   # never fault=False
    s = mw.snapshot()["m1"]
    assert s.fault and s.fault_reason == result["m1"] and not s.enabled
    assert s.fault_time == fault_time                                     # the original fault
    assert kinds(mw, "m1") == ["fault", "reset_requested", "reset_failed"]
    assert mw.reset_faults(["m2"]) == {} and kinds(mw, "m2") == []        # not in FAULT: left alone
    # the motor is back: the next reset recovers it, it starts limp and runs again
    sim_of(mw).set_fault("m1", "silent", on=False)
    seq = mw.events()[-1].seq
    with FaultSampler(mw, "m1") as sampler:
        assert mw.reset_faults() == {}
    flips = [a for a, _ in sampler.samples]
    assert flips == sorted(flips, reverse=True)                  # True ... True False ... (one change)
    s = mw.snapshot()["m1"]
    assert not s.fault and s.enabled and s.fault_reason == "" and s.fault_time == 0.0
    assert s.requested_mode == ControlMode.NONE
    assert kinds(mw, "m1", seq) == ["reset_requested", "recovered"]
    event = mw.events(seq)[-1]
    assert isinstance(event, FaultEvent) and event.channel == "bus"
    assert event.message.startswith("recovered after reset (fault was: reset failed: no reply")
    ctl = Controller(lambda k: mw.set_command("m1", ControlMode.POSITION, 0.5)).start()
    try:
        assert wait_until(lambda: abs(mw.snapshot()["m1"].position - 0.5) < 0.02, timeout=10.0)
    finally:
        ctl.stop()
    assert mw.statistics()["faults"] == {}


def test_a_recovered_motor_holds_its_loaded_joint_until_it_is_commanded(make_mw):
    # A joint under a constant load (0.4 N m: limp, it falls at 38 rad/s^2) whose motor was silent
    # from power-on, so nothing has commanded it yet. After its recovery nothing commands it for
    # 0.3 s -- a control loop the host runs late: the motor holds where it was re-enabled (the
    # watchdog's "position" hold; sag = load / kp = 0.02 rad) at once, not only once the command
    # watchdog would trip (command_timeout, 0.5 s here), and the joint does not fall meanwhile; the
    # caller's first command ends that hold without a watchdog event.
    xml = motor_xml(1, sim_attrs='inertia="0.01" damping="0.05" friction="0.02" load_torque="0.4" '
                                 'stop_min="-3" stop_max="3" initial_position="0.5" fault="silent"')
    mw = make_mw(xml.replace('fault_timeout="0.05"', 'fault_timeout="0.05" command_timeout="0.5"'))
    mw.start()
    assert wait_until(lambda: mw.snapshot()["m1"].fault, timeout=5.0)
    sim_of(mw).set_fault("m1", "silent", on=False)
    seq = mw.events()[-1].seq
    assert mw.reset_faults() == {}
    found = mw.snapshot()["m1"].position
    time.sleep(0.3)
    s = mw.snapshot()["m1"]
    assert abs(s.position - found) < 0.04, (found, s.position)
    assert s.requested_mode == ControlMode.NONE and not s.fault   # the caller asked for nothing yet
    ctl = Controller(lambda k: mw.set_command("m1", ControlMode.POSITION, 0.2)).start()
    try:
        assert wait_until(lambda: abs(mw.snapshot()["m1"].position - 0.2) < 0.05, timeout=5.0)
    finally:
        ctl.stop()
    assert kinds(mw, "m1", seq) == ["reset_requested", "recovered"]


@pytest.mark.parametrize("fault,value,reason", [
    ("error_flag", 7, "reset failed: motor still reports error code 0x07"),
    ("over_temperature", 120,
     "reset failed: motor still reports over-temperature: 120 C > max_temperature 90 C"),
])
def test_reset_of_a_motor_still_reporting_its_error_fails_then_recovers(make_mw, fault, value, reason):
    mw = make_mw(motor_xml(1))
    mw.start()
    sim_of(mw).set_fault("m1", fault, value=value)
    assert wait_until(lambda: mw.snapshot()["m1"].fault, timeout=5.0)
    with FaultSampler(mw, "m1") as sampler:
        assert mw.reset_faults(["m1"]) == {"m1": reason}
    assert all(a and b for a, b in sampler.samples)
    assert mw.faults() == {"m1": reason}
    sim_of(mw).set_fault("m1", fault, on=False)
    assert mw.reset_fault() is None           # the non-blocking request still works
    assert wait_until(lambda: not mw.snapshot()["m1"].fault, timeout=5.0)
    assert mw.snapshot()["m1"].enabled and mw.snapshot()["m1"].error_code == 0


def test_sensor_reset(make_mw):
    extra = ('<unit name="ft" type="rospy_control/ForceTorqueSensor" channel="bus" can_id="0x40">'
             '<simulation fz="-20"/></unit>')
    mw = make_mw(motor_xml(1, fault_timeout=0.03, extra=extra))
    mw.start()
    sim_of(mw).set_fault("ft", "silent")
    assert wait_until(lambda: mw.snapshot()["ft"].fault, timeout=5.0)
    assert mw.reset_faults()["ft"].startswith("reset failed: no reply to poll for ")
    sim_of(mw).set_fault("ft", "silent", on=False)
    assert mw.reset_faults(["ft"]) == {}
    assert mw.snapshot()["ft"].force[2] == pytest.approx(-20.0, abs=0.1)


def test_reset_faults_without_running_middleware_and_from_a_channel_thread(make_mw):
    mw = make_mw(motor_xml(1))
    mw.motor("m1").set_fault("injected")
    assert mw.reset_faults(timeout=0.1) == {"m1": "reset middleware not running: injected"}
    mw.start()
    errors = []
    ch = mw.channels["bus"]
    real = ch.units[0].end_cycle

    def from_bus_thread(now, on_time=True):
        ch.units[0].end_cycle = real
        try:
            mw.reset_faults()
        except HardwareError as err:
            errors.append(str(err))
        return real(now, on_time)

    ch.units[0].end_cycle = from_bus_thread
    assert wait_until(lambda: errors, timeout=5.0)
    assert "do not call it from a channel thread" in errors[0]


# -- host stalls ---------------------------------------------------------------------------------------

def test_a_process_freeze_faults_nobody_and_is_reported_as_a_stall(make_mw):
    # 1 kHz, fault_timeout 50 ms: the old rule faulted both motors after any freeze over 50 ms
    mw = make_mw(motor_xml(2, rate=1000, fault_timeout=0.05))
    mw.start()
    wait_cycles(mw, 20)
    frozen = freeze_process(0.3)
    assert frozen > 0.1
    wait_cycles(mw, 100)
    assert mw.faults() == {}
    host = mw.statistics()["host"]
    assert host["stalls"] >= 1 and host["longest_stall"] >= 80.0
    assert host["longest_stall_time"] is not None and host["last_stall_time"] is not None
    assert mw.events() == []


# -- command watchdog ------------------------------------------------------------------------------------

def test_watchdog_holds_the_last_position_without_a_jump_and_releases_on_a_new_command(make_mw, caplog):
    mw = make_mw(motor_xml(1, fault_timeout=0.1))
    mw.start()
    m = mw.motor("m1")
    sim = sim_of(mw).firmware("bus").by_name["m1"]
    m.set_position(0.0)
    assert wait_until(lambda: sim.cmd[2] > 0, timeout=5.0)
    sim_of(mw).reset_command_stats()
    ctl = Controller(lambda k: m.set_position(0.002 * k, 0.4)).start()   # 0.4 rad/s ramp, 200 Hz
    assert wait_until(lambda: ctl.k > 60, timeout=10.0)
    ctl.stop()
    last = 0.002 * (ctl.k - 1)
    assert wait_until(lambda: mw.snapshot()["m1"].watchdog, timeout=5.0)
    assert wait_until(lambda: abs(sim.cmd[1]) < 0.05, timeout=5.0)       # v_des zeroed by the hold
    p_des, v_des, kp, kd, _ = sim.cmd
    assert p_des == pytest.approx(last, abs=1e-3) and kp == pytest.approx(20.0, abs=0.2)
    stats = sim_of(mw).command_stats("m1")
    assert stats["max_step"] < 0.01                                        # no jump, neither at the hold
    assert stats["last_p_des"] == pytest.approx(last, abs=1e-3)
    assert mw.statistics()["watchdog"] == {"trips": {"m1": 1}, "active": ["m1"]}
    assert "m1': no new command for" in caplog.text
    m.set_position(last + 0.002, 0.4)
    assert wait_until(lambda: not mw.snapshot()["m1"].watchdog, timeout=5.0)
    assert kinds(mw, "m1") == ["watchdog_hold", "watchdog_released"]
    hold = [e for e in mw.events() if e.kind == "watchdog_hold"][0]
    assert "no new command for" in hold.message and "holding the commanded position" in hold.message
    assert sim_of(mw).command_stats("m1")["max_step"] < 0.01


def test_watchdog_is_not_fooled_by_a_process_freeze(make_mw):
    mw = make_mw(motor_xml(1, rate=1000, fault_timeout=0.1))
    mw.start()
    m = mw.motor("m1")
    ctl = Controller(lambda k: m.set_command(ControlMode.VELOCITY, 0.2)).start()
    try:
        wait_cycles(mw, 50)
        assert freeze_process(0.3) > 0.1
        wait_cycles(mw, 100)
    finally:
        ctl.stop()
    assert m.watchdog_trips == 0 and mw.faults() == {}


def test_watchdog_damping_mode(make_mw):
    mw = make_mw(motor_xml(1))
    mw.start()
    mw.set_watchdog_mode("damping")
    with pytest.raises(ValueError, match="unknown watchdog_mode"):
        mw.set_watchdog_mode("limp")
    sim = sim_of(mw).firmware("bus").by_name["m1"]
    ctl = Controller(lambda k: mw.set_command("m1", ControlMode.VELOCITY, 1.0)).start()
    assert wait_until(lambda: abs(mw.snapshot()["m1"].velocity - 1.0) < 0.3, timeout=10.0)
    ctl.stop()
    assert wait_until(lambda: mw.snapshot()["m1"].watchdog, timeout=5.0)
    assert wait_until(lambda: sim.cmd[2] == 0.0 and abs(sim.cmd[1]) < 0.05, timeout=5.0)
    assert sim.cmd[3] == pytest.approx(0.5, abs=0.01) and abs(sim.cmd[4]) < 0.01   # kd = velocity_kd
    assert mw.snapshot()["m1"].mode == ControlMode.VELOCITY     # the caller's mode, held by the watchdog


def test_command_timeout_zero_disables_the_watchdog(make_mw):
    xml = motor_xml(1).replace('<hardware name="t">', '<hardware name="t" command_timeout="0">')
    mw = make_mw(xml)
    assert mw.channels["bus"].command_timeout == 0.0
    mw.start()
    mw.set_command("m1", ControlMode.VELOCITY, 0.5)
    wait_cycles(mw, 150)
    assert not mw.snapshot()["m1"].watchdog and mw.motor("m1").watchdog_trips == 0


# -- simulator instrumentation -----------------------------------------------------------------------------

def test_command_stats_record_steps_in_joint_units(make_mw):
    mw = make_mw(motor_xml(1, motor_attrs='direction="-1" zero_offset="0.3"'))
    mw.start()
    m = mw.motor("m1")
    m.set_command(ControlMode.POSITION, 0.1)
    assert wait_until(lambda: sim_of(mw).command_stats("m1")["last_p_des"] is not None
                      and abs(sim_of(mw).command_stats("m1")["last_p_des"] - 0.1) < 1e-3, timeout=5.0)
    sim_of(mw).reset_command_stats()
    assert sim_of(mw).command_stats() == {"m1": {
        "count": 0, "last_p_des": None, "max_step": 0.0, "max_step_time": None, "max_step_from": None,
        "max_step_to": None, "firmware_timeouts": 0, "enabled": True}}
    before = time.time()
    m.set_command(ControlMode.POSITION, 0.6)
    assert wait_until(lambda: sim_of(mw).command_stats("m1")["max_step"] > 0.4, timeout=5.0)
    st = sim_of(mw).command_stats()["m1"]
    assert st["max_step"] == pytest.approx(0.5, abs=1e-3)
    assert st["max_step_from"] == pytest.approx(0.1, abs=1e-3)
    assert st["max_step_to"] == pytest.approx(0.6, abs=1e-3)
    # the step chain survives the reset, so the first frame after it may already be the 0.6 one
    assert before <= st["max_step_time"] <= time.time() and st["count"] >= 1
    # velocity frames (kp = 0) break the chain: going back to position is no "step"
    m.set_command(ControlMode.VELOCITY, 0.0)
    wait_cycles(mw, 5)
    sim_of(mw).reset_command_stats()
    m.set_command(ControlMode.POSITION, -0.4)
    wait_cycles(mw, 5)
    assert sim_of(mw).command_stats("m1")["max_step"] == 0.0


def test_set_sim_fault_errors(make_mw):
    xml = motor_xml(1).replace(
        "</hardware>", '<channel name="hw" interface="socketcan" channel="can3"/>'
                       '<unit name="x" type="rospy_control/Motor" channel="hw" can_id="1"/></hardware>')
    mw = make_mw(xml)
    with pytest.raises(HardwareError, match="Could not find unit 'nope'"):
        sim_of(mw).set_fault("nope", "silent")
    with pytest.raises(ValueError, match="unknown simulated fault 'smoke'"):
        sim_of(mw).set_fault("m1", "smoke")
    with pytest.raises(HardwareError, match="channel 'hw' is not simulated"):
        sim_of(mw).set_fault("x", "silent")
    with pytest.raises(HardwareError, match="channel 'hw' is not simulated"):
        sim_of(mw).command_stats("x")
    with pytest.raises(ValueError, match="has no unit 'zz'; simulated units: m1"):
        sim_of(mw).firmware("bus").set_fault("zz", "silent")
    sim_of(mw).set_fault("m1", "late", value=0.01)
    assert sim_of(mw).firmware("bus").fault_of("m1") == "late"
    sim_of(mw).set_fault("m1", "silent", on=False)               # not the current switch: unchanged
    assert sim_of(mw).firmware("bus").fault_of("m1") == "late"
    sim_of(mw).set_fault("m1", "late", on=False)
    assert sim_of(mw).firmware("bus").fault_of("m1") is None
    sim_of(mw).set_fault("m1", "bus_errors")
    assert sim_of(mw).firmware("bus").bus_errors
    sim_of(mw).set_fault("m1", "bus_errors", on=False)
    assert not sim_of(mw).firmware("bus").bus_errors


def test_simulated_firmware_timeout_model(make_mw):
    mw = make_mw(motor_xml(2, motor_attrs='firmware_timeout="0.2"',
                           sim_attrs='inertia="0.01"').replace(
        'can_id="2" firmware_timeout="0.2"><gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/>'
        '<simulation inertia="0.01"/>',
        'can_id="2" firmware_timeout="0.2"><gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/>'
        '<simulation inertia="0.01" firmware_timeout="0.1"/>'))
    sim = sim_of(mw).firmware("bus")
    a, b = sim.by_name["m1"], sim.by_name["m2"]
    assert a.firmware_timeout == 0.2 and b.firmware_timeout == 0.1   # default: the motor's attribute
    dt = sim.dt
    cmd = mit.pack_command(0.5, 0, 20, 0.5, 0, L)
    b.handle(mit.ENTER_MOTOR_MODE, 1.0, dt)
    b.handle(cmd, 1.05, dt)
    assert b.enabled
    b.handle(cmd, 1.2, dt)                 # 150 ms without a frame: it left motor mode at 1.15
    assert not b.enabled and b.firmware_timeouts == 1
    b.handle(cmd, 1.21, dt)                # commands are ignored until enter-motor-mode
    assert not b.enabled
    b.handle(mit.ENTER_MOTOR_MODE, 1.22, dt)
    assert b.enabled


def test_motor_re_enters_motor_mode_after_a_freeze_longer_than_the_firmware_timeout(make_mw):
    mw = make_mw(motor_xml(1, rate=1000, fault_timeout=0.1, motor_attrs='firmware_timeout="0.1"'))
    mw.start()
    sim = sim_of(mw).firmware("bus").by_name["m1"]
    ctl = Controller(lambda k: mw.set_command("m1", ControlMode.POSITION, 0.3)).start()
    try:
        assert wait_until(lambda: abs(mw.snapshot()["m1"].position - 0.3) < 0.02, timeout=10.0)
        assert freeze_process(0.3) > 0.12
        # the firmware timed out during the freeze; the driver saw the send gap and re-entered
        assert wait_until(lambda: sim.firmware_timeouts >= 1 and sim.enabled, timeout=5.0)
        ctl.command = lambda k: mw.set_command("m1", ControlMode.POSITION, -0.3)
        assert wait_until(lambda: abs(mw.snapshot()["m1"].position + 0.3) < 0.02, timeout=10.0)
    finally:
        ctl.stop()
    assert mw.faults() == {}


def test_a_starved_in_process_simulator_is_not_blamed_on_its_motors(make_mw):
    # The firmware thread shares the host (and the interpreter) with the bus thread: when the host
    # starves it, its silence is the host's, not the motor's. Once it runs again, silence is the motor's.
    mw = make_mw(motor_xml(1))
    mw.start()
    ch = mw.channels["bus"]
    policy = ch.liveness
    assert policy is not None

    class Stopped:
        def stalled(self, since, now, sent=None):
            return True

        def last_drop(self):
            return 0.0

    ch.liveness = Stopped()   # the firmware thread stops running ...
    sim_of(mw).firmware("bus").set_fault("m1", "silent")   # ... so no replies come
    end = time.monotonic() + 0.4
    while time.monotonic() < end:
        time.sleep(0.01)
    assert not mw.faults()
    assert ch.statistics()["simulator_stalls"] > 0
    ch.liveness = policy                    # it runs again and still does not answer: the motor's fault
    assert wait_until(lambda: "m1" in mw.faults(), timeout=5.0)
