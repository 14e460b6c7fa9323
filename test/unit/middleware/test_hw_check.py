"""scripts/hw_check (rospy_control.adapter.tools.hw_check.main)."""
from __future__ import annotations

import io
import os
import stat

from rospy_control.adapter.tools.hw_check import main

from middleware_testutil import CONFIG, motor_xml

ROOT = os.path.normpath(os.path.join(CONFIG, ".."))


def run(args, capsys):
    out = io.StringIO()
    rc = main(args, out=out)
    return rc, out.getvalue(), capsys.readouterr().err


def test_script_is_thin_and_executable():
    path = os.path.join(ROOT, "scripts", "hw_check")
    assert os.stat(path).st_mode & stat.S_IXUSR
    text = open(path).read()
    assert text.startswith("#!/usr/bin/env python3")
    assert "from rospy_control.adapter.tools.hw_check import main" in text


def test_sim_run_prints_units_channels_load_and_table(capsys):
    rc, out, err = run([os.path.join(CONFIG, "arm_hardware.xml"), "--sim", "--duration", "0.2"], capsys)
    assert rc == 0, err
    assert "bus load ~76 %" in out and "simulated" in out
    assert "simulator: own process, can0: udp_multicast 239.255." in out, err  # the default, as real firmware
    assert "shoulder_pan_motor" in out and "gripper_motor" in out
    assert "POSITION" not in out or "ok" in out
    assert "statistics:" in out and "shut down" in out
    assert " late (> 2.0 ms), " in out and " host stalls" in out and "watchdog trips none" in out


def test_reset_without_faults(capsys):
    rc, out, err = run([os.path.join(CONFIG, "arm_hardware.xml"), "--sim", "--duration", "0.1", "--reset"],
                       capsys)
    assert rc == 0, err
    assert "reset: no unit in FAULT" in out


def test_passive_sends_nothing(capsys):
    cfg = os.path.join(CONFIG, "quadruped_hardware.xml")
    rc, out, err = run([cfg, "--passive", "--duration", "0.1"], capsys)
    assert rc == 0, err
    assert "0 frames sent" in out and "no data" in out


def test_config_error_exits_1(tmp_path, capsys):
    bad = tmp_path / "bad.xml"
    bad.write_text("<hardware><unit name='x' type='nope/Nope' channel='c'/></hardware>")
    rc, out, err = run([str(bad)], capsys)
    assert rc == 1
    assert f"hw_check: configuration error: {bad}:1: <unit name='x'>" in err


def test_missing_bus_exits_2(tmp_path, capsys):
    cfg = tmp_path / "hw.xml"
    cfg.write_text('<hardware><channel name="c" interface="no_such_interface" channel="x"/>'
                   '<unit name="m" type="rospy_control/Motor" channel="c" can_id="1"/></hardware>')
    rc, out, err = run([str(cfg), "--duration", "0"], capsys)
    assert rc == 2
    assert "interface='no_such_interface' channel='x'" in err


def test_faults_exit_3(tmp_path, capsys):
    cfg = tmp_path / "hw.xml"
    gains = '<gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/>'
    cfg.write_text(motor_xml(2, fault_timeout=0.02).replace(
        f'can_id="2" >{gains}<simulation ', f'can_id="2" >{gains}<simulation fault="silent" '))
    rc, out, err = run([str(cfg), "--duration", "0.1", "--hold"], capsys)
    assert rc == 3
    assert "units in FAULT" in err and "m2: no reply" in err


def test_reset_reports_units_that_still_fail_and_exits_3(tmp_path, capsys):
    cfg = tmp_path / "hw.xml"
    gains = '<gains position_kp="20" position_kd="0.5" velocity_kd="0.5"/>'
    cfg.write_text(motor_xml(2, fault_timeout=0.02).replace(
        f'can_id="2" >{gains}<simulation ', f'can_id="2" >{gains}<simulation fault="silent" '))
    rc, out, err = run([str(cfg), "--duration", "0.1", "--hold", "--reset"], capsys)
    assert rc == 3
    assert "reset: 1 unit(s) in FAULT, probing" in out
    assert "  m2: STILL IN FAULT: reset failed: no reply to enter-motor-mode for " in out
    assert "m2: reset failed: no reply to enter-motor-mode" in err


def test_sim_in_process_runs_the_firmware_inside_hw_check(capsys):
    args = [os.path.join(CONFIG, "arm_hardware.xml"), "--sim", "--sim-in-process", "--duration", "0.2"]
    rc, out, err = run(args, capsys)
    assert rc == 0, err
    assert "simulator: in this process (virtual bus)" in out, err
    assert "shut down" in out
