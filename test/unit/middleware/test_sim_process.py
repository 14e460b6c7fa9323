"""The simulated firmware in its own process: bus addresses, the readiness probe, the middleware's
switch to a udp_multicast bus (and its in-process fallback), the simulator host, hw_check's use of it."""
from __future__ import annotations

import io
import logging
import os
import subprocess
import sys
import uuid

import can
import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.exceptions import HardwareError
from rospy_control.adapter.tools.hw_check import main as hw_check
from rospy_control.simulator.process import SimulatorHost, apply_sim_fault
from rospy_control.devices import ControlMode
from rospy_control.simulator.bus import (
    PORT_MAX, PORT_MIN, default_bus_key, sim_bus_address, wait_for_simulator,
)

from middleware_testutil import CONFIG, motor_xml, wait_until


def _key() -> str:
    return f"unit-{os.getpid()}-{uuid.uuid4().hex[:8]}"


def _udp_available() -> bool:
    try:
        can.Bus(interface="udp_multicast", channel="239.255.0.1", port=PORT_MIN, hop_limit=0).shutdown()
        return True
    except Exception:  # noqa: BLE001 - whatever python-can raises here means "not on this machine"
        return False


needs_udp = pytest.mark.skipif(not _udp_available(), reason="udp_multicast unavailable on this machine")


@pytest.fixture
def hosts():
    made = []

    def factory(xml: str, key: str) -> SimulatorHost:
        host = SimulatorHost.from_xml(xml, key, simulate=None)
        made.append(host)
        host.start()
        return host

    yield factory
    for h in made:
        h.stop()


# -- addresses ------------------------------------------------------------------------------------
def test_address_is_deterministic_scoped_and_per_key_and_channel():
    a = sim_bus_address("11311/", "can0")
    assert a == sim_bus_address("11311/", "can0")
    assert a.group.startswith("239.255.") and PORT_MIN <= a.port <= PORT_MAX
    last = int(a.group.rsplit(".", 1)[1])
    assert 1 <= last <= 254
    others = {sim_bus_address("11312/", "can0"), sim_bus_address("11311/", "can1"),
              sim_bus_address("11311/robot2/", "can0")}
    assert a not in others and len(others) == 3
    ports = {sim_bus_address(f"{p}/", "can0").port for p in range(40000, 40200)}
    assert len(ports) > 195   # spread over the range: collisions are rare
    assert a.bus_kwargs() == {"port": a.port, "hop_limit": 0}
    assert str(a) == f"udp_multicast {a.group} port {a.port}"


def test_default_key_is_master_port_and_namespace():
    assert default_bus_key("http://localhost:11311/", "/") == "11311/"
    assert default_bus_key("http://127.0.0.1:45678", "/robot2") == "45678/robot2/"
    assert default_bus_key("http://host/", "robot2/") == "11311/robot2/"
    assert default_bus_key("", "/") == "11311/"


# -- the middleware on a simulator host ---------------------------------------------------------
@needs_udp
def test_driver_side_talks_to_the_host_over_udp_multicast(make_mw, hosts):
    key = _key()
    host = hosts(motor_xml(2), key)
    mw = make_mw(motor_xml(2), process_key=key, wait=5.0)
    mw.start()
    assert sim_of(mw).process
    assert sim_of(mw).addresses() == host.addresses
    assert mw.statistics()["simulator"] == "process"
    assert not mw.faults()
    snap = mw.snapshot()
    assert snap["m1"].received and snap["m2"].received
    # the fault switches and command statistics live in the simulator process
    with pytest.raises(HardwareError, match="its own process"):
        sim_of(mw).set_fault("m1", "silent")
    assert sim_of(mw).command_stats() == {}
    assert wait_until(lambda: host.robot.command_stats()["m1"]["count"] > 0, 2.0)
    ok, text = apply_sim_fault(host.robot, "m1", "silent", True)
    assert ok and "switched on" in text
    assert wait_until(lambda: "m1" in mw.faults(), 2.0)
    assert apply_sim_fault(host.robot, "m1", "silent", False)[0]
    assert mw.reset_faults() == {}
    ok, text = apply_sim_fault(host.robot, "nope", "silent", True)
    assert not ok and "nope" in text
    # bus_errors may be named by the channel
    assert apply_sim_fault(host.robot, "bus", "bus_errors", True)[0]
    assert wait_until(lambda: mw.statistics()["channels"]["bus"]["bus_errors"] > 3, 2.0)
    assert apply_sim_fault(host.robot, "bus", "bus_errors", False)[0]


@needs_udp
def test_two_robots_do_not_hear_each_other(make_mw, hosts):
    key_a, key_b = _key(), _key()
    xml_silent = motor_xml(1, sim_attrs='fault="silent"')
    hosts(xml_silent, key_a)
    hosts(motor_xml(1), key_b)
    b = make_mw(motor_xml(1), process_key=key_b, wait=5.0)
    b.start()
    assert sim_of(b).process and not b.faults()
    a = make_mw(motor_xml(1), process_key=key_a, wait=5.0)
    a.start()
    assert sim_of(a).process
    assert wait_until(lambda: "m1" in a.faults(), 2.0)   # its own simulator's motor is silent
    assert not b.faults()


@pytest.fixture
def sim_proc(make_mw, tmp_path):
    """Start ``python3 -m ...sim_process`` on a 2-motor XML; yields a started driver-side Middleware
    talking to it, and the process (terminated after the test, which must exit 0)."""
    cfg = tmp_path / "hw.xml"
    cfg.write_text(motor_xml(2))
    key = _key()
    cmd = [sys.executable, "-m", "rospy_control.simulator.process", str(cfg), "--key", key]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        why = proc.stderr.read() if proc.poll() is not None else ""
        assert line.startswith("ready bus=239.255."), (line, why)
        mw = make_mw(str(cfg), process_key=key, wait=10.0)
        mw.start()
        assert sim_of(mw).process
        yield mw, proc
        mw.shutdown()
    finally:
        proc.terminate()
        assert proc.wait(5.0) == 0


@needs_udp
def test_round_trip_with_a_simulator_in_another_process(sim_proc):
    mw, _ = sim_proc
    assert not mw.faults()
    m1 = mw.motor("m1")
    start = mw.snapshot()["m1"].position
    m1.set_command(ControlMode.POSITION, start + 0.3)
    assert wait_until(lambda: abs(mw.snapshot()["m1"].position - (start + 0.3)) < 0.05, 5.0)


@needs_udp
@pytest.mark.skipif(not hasattr(os, "kill") or sys.platform != "linux", reason="needs SIGSTOP")
def test_a_stopped_simulator_process_is_not_blamed_on_its_motors_but_a_dead_one_is(sim_proc):
    # The host may not schedule the simulator process for 100-250 ms; real firmware never stops like
    # that, so those silent cycles are excused through the shared sign of life. A simulator that
    # stays gone (here: SIGSTOP for 2 s > DEAD_AFTER) is like unplugged motors: they fault.
    import signal
    import time
    mw, proc = sim_proc
    assert mw.channels["bus"].liveness is not None
    for _ in range(3):
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(0.3)
        resumed = time.perf_counter()
        os.kill(proc.pid, signal.SIGCONT)
        assert wait_until(lambda: all(s.stamp > resumed for s in mw.snapshot().states.values()), 5.0)
        time.sleep(0.2)
    assert mw.faults() == {}
    assert mw.channels["bus"].statistics()["simulator_stalls"] > 0
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        assert wait_until(lambda: set(mw.faults()) == {"m1", "m2"}, 5.0)
    finally:
        os.kill(proc.pid, signal.SIGCONT)


# -- fallback -------------------------------------------------------------------------------------
@needs_udp
def test_no_simulator_answering_falls_back_in_process_with_one_warning(make_mw, caplog):
    with caplog.at_level(logging.WARNING):
        mw = make_mw(motor_xml(2), process_key=_key(), wait=0.3)
        mw.start()
    assert not sim_of(mw).process and mw.statistics()["simulator"] == "in-process"
    assert not mw.faults()
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING
                and "simulator" in r.getMessage()]
    assert len(warnings) == 1, warnings
    assert "falling back to the in-process simulator" in warnings[0]
    assert "no simulator answered within 0.3 s" in warnings[0]
    sim_of(mw).set_fault("m1", "silent")   # the fault switches are here again
    assert wait_until(lambda: "m1" in mw.faults(), 2.0)


def test_unavailable_bus_falls_back_in_process(make_mw, caplog, monkeypatch):
    import rospy_control.simulator.link as mwmod

    def unavailable(*_a, **_k):
        raise can.CanInitializationError("could not connect to a multicast IP network")

    monkeypatch.setattr(mwmod, "wait_for_simulator", unavailable)
    with caplog.at_level(logging.WARNING):
        mw = make_mw(motor_xml(1), process_key="k", wait=5.0)
        mw.start()
    assert not sim_of(mw).process and not mw.faults()
    text = " ".join(r.getMessage() for r in caplog.records)
    assert "cannot open the bus: CanInitializationError: could not connect" in text
    assert "falling back to the in-process simulator" in text


def test_bus_overrides_after_start_are_refused(make_mw):
    mw = make_mw(motor_xml(1))
    mw.start()
    with pytest.raises(HardwareError):
        mw.set_buses({})


@needs_udp
def test_wait_for_simulator_false_when_nobody_answers():
    assert wait_for_simulator(sim_bus_address(_key(), "c"), 0.1) is False


# -- hw_check ---------------------------------------------------------------------------------------
def test_hw_check_sim_in_process(capsys):
    out = io.StringIO()
    args = [os.path.join(CONFIG, "arm_hardware.xml"), "--sim", "--sim-in-process", "--duration", "0.1"]
    rc = hw_check(args, out=out)
    assert rc == 0, capsys.readouterr().err
    assert "simulator: in this process (virtual bus)" in out.getvalue()


def test_hw_check_falls_back_when_the_simulator_process_fails(capsys, monkeypatch):
    import rospy_control.adapter.tools.hw_check as hw

    monkeypatch.setattr(hw.SimProcess, "wait_ready",
                        lambda self, timeout=0.0: "it exited with status 2: boom")
    out = io.StringIO()
    rc = hw_check([os.path.join(CONFIG, "arm_hardware.xml"), "--sim", "--sim-process", "--duration", "0.1"],
                  out=out)
    err = capsys.readouterr().err
    assert rc == 0, err
    assert "the simulator process is unavailable (it exited with status 2: boom); running the simulated " \
           "firmware in this process (virtual bus) instead" in err
    assert "simulator: in this process (virtual bus)" in out.getvalue()


@needs_udp
def test_simulated_buses_get_a_large_receive_buffer():
    # a simulator (or driver) process stalled for 250 ms must not lose the frames sent meanwhile
    from rospy_control.simulator.bus import enlarge_receive_buffer, open_sim_bus
    bus = open_sim_bus(sim_bus_address(_key(), "c"))
    try:
        granted = enlarge_receive_buffer(bus)
    finally:
        bus.shutdown()
    try:
        with open("/proc/sys/net/core/rmem_max") as f:
            cap = int(f.read())
    except OSError:
        cap = 0
    # root may exceed rmem_max (SO_RCVBUFFORCE); others get up to rmem_max (Linux reports it doubled)
    assert granted >= (2 * 1024 * 1024 if os.geteuid() == 0 else min(cap, 1024 * 1024))
    virtual = can.Bus(interface="virtual", channel=_key())
    try:
        assert enlarge_receive_buffer(virtual) == 0
    finally:
        virtual.shutdown()
