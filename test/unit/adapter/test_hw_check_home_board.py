"""``hw_check home`` given a trajectory board's hardware XML: the board's axes with a ``<homing>`` home
against their (simulated) limit switches; it asks first; an axis without a ``<homing>`` is named; a
switch not found within ``max_travel`` is the board's error and exit 3."""
from __future__ import annotations

import io
import os

from rospy_control.adapter.tools import hw_check_home

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
BOARD = os.path.join(ROOT, "config", "stepper_arm_hardware.xml")


def _run(argv, answer="y\n"):
    out = io.StringIO()
    return hw_check_home.main(argv, out, answer=lambda: answer), out.getvalue()


def test_the_board_homes_joint_6_on_its_switch_and_it_reads_the_home_position():
    code, text = _run([BOARD, "--sim", "--yes"])
    assert code == 0, text
    now = float(text.split("'joint_6': homed; now at ")[1].split()[0])
    assert abs(now + 2.9) < 0.01, text


def test_it_asks_first_and_a_no_sends_nothing():
    code, text = _run([BOARD, "--sim"], answer="n\n")
    assert code == 1 and "[y/N]" in text and "nothing sent" in text


def test_an_axis_without_homing_is_named_with_those_that_have_one(capsys):
    code, _ = _run([BOARD, "joint_2", "--sim", "--yes"])
    err = capsys.readouterr().err
    assert code == 1 and "'joint_2'" in err and "joint_6" in err, err


def test_a_switch_not_found_within_max_travel_is_the_board_s_error(tmp_path):
    with open(BOARD) as f:
        text = f.read().replace('max_travel="6.3"', 'max_travel="0.5"')
    path = tmp_path / "board.xml"
    path.write_text(text)
    code, out = _run([str(path), "--sim", "--yes"])
    assert code == 3 and "not homed" in out and "HOME_SWITCH_NOT_FOUND" in out, out
