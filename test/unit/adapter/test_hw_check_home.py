"""``hw_check home``: a CiA 402 drive with ``<homing>`` homes by its method against the simulated drive;
it asks first; a unit that cannot home is named with those that can; a homing error is exit 3."""
from __future__ import annotations

import io
import os

import pytest

from rospy_control.adapter.tools import hw_check, hw_check_home

pytest.importorskip("canopen", reason="tools/bootstrap.sh installs canopen into .ws/venv")

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _xml(tmp_path, homing: str, sim: str = 'initial_position="0.4" limit_switch_min="-0.5"') -> str:
    text = ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="500" '
            'fault_timeout="0.05"><simulation rate="2000"/></channel>'
            '<unit name="d3" type="rospy_control/Cia402Drive" channel="bus" node_id="3">'
            f'{homing}<simulation inertia="0.01" damping="0.05" friction="0.02" {sim}/></unit>'
            '<unit name="m1" type="rospy_control/Motor" channel="bus" can_id="1"/></hardware>')
    path = tmp_path / "hw.xml"
    path.write_text(text)
    return str(path)


def _run(argv, answer="y\n"):
    out = io.StringIO()
    code = hw_check_home.main(argv, out, answer=lambda: answer)
    return code, out.getvalue()


def test_the_drive_homes_on_its_limit_switch_and_reads_minus_the_offset_there(tmp_path):
    out = io.StringIO()
    path = _xml(tmp_path, '<homing method="17" offset="0.5" switch_speed="2" zero_speed="0.5"/>')
    code = hw_check.main(["home", path, "--sim", "--yes"], out)
    text = out.getvalue()
    assert code == 0, text
    assert "'d3' reads 0.4" in text and "homing completed" in text, text
    after = float(text.split("now reads ")[1].split()[0])
    assert abs(after + 0.5) < 0.05, text


def test_it_asks_first_and_a_no_moves_nothing(tmp_path):
    code, text = _run([_xml(tmp_path, '<homing method="35"/>'), "--sim"], answer="n\n")
    assert code == 1 and "[y/N]" in text and "nothing sent" in text


def test_a_unit_that_cannot_home_is_named_with_those_that_can(tmp_path, capsys):
    code, _ = _run([_xml(tmp_path, '<homing method="35"/>'), "m1", "--sim", "--yes"])
    err = capsys.readouterr().err
    assert code == 1 and "'m1' (MIT" in err and "can here: d3" in err, err


def test_the_example_mit_arm_has_nothing_to_home(capsys):
    code, _ = _run([os.path.join(ROOT, "config", "arm_hardware.xml"), "--sim", "--yes"])
    assert code == 1 and "no unit can home" in capsys.readouterr().err


def test_a_homing_error_is_exit_3(tmp_path):
    code, text = _run([_xml(tmp_path, '<homing method="18"/>'), "--sim", "--yes"])   # no positive switch
    assert code == 3 and "homing error" in text, text
