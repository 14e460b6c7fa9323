"""``hw_check record``: the actuators at the bus rate into a CSV file, and a position step's rise time,
overshoot and settling time, against the simulated arm; the measures themselves on known responses."""
from __future__ import annotations

import csv
import io
import math
import os

import pytest

from rospy_control.adapter.tools import hw_check, hw_check_record
from rospy_control.adapter.tools.hw_check_record import step_response

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ARM = os.path.join(ROOT, "config", "arm_hardware.xml")


def test_a_first_order_response_has_its_textbook_measures():
    tau = 0.05
    t = [i * 0.001 for i in range(1000)]
    y = [0.0 if ti < 0.1 else 1.0 - math.exp(-(ti - 0.1) / tau) for ti in t]
    r = step_response(t, y, 0.1, 0.0, 1.0)
    assert r.rise_time == pytest.approx(tau * math.log(9), abs=0.002)     # 10 % -> 90 %
    assert r.overshoot == 0.0
    assert r.settling_time == pytest.approx(-tau * math.log(0.02), abs=0.002)
    assert abs(r.final_error) < 1e-4


def test_an_underdamped_response_shows_its_overshoot_and_a_negative_step_measures_alike():
    zeta, wn = 0.3, 40.0
    wd = wn * math.sqrt(1 - zeta * zeta)
    t = [i * 0.0005 for i in range(4000)]
    k = zeta / math.sqrt(1 - zeta * zeta)
    y = [1 - math.exp(-zeta * wn * ti) * (math.cos(wd * ti) + k * math.sin(wd * ti)) for ti in t]
    r = step_response(t, [-v for v in y], 0.0, 0.0, -1.0)
    assert r.overshoot == pytest.approx(100 * math.exp(-zeta * math.pi / math.sqrt(1 - zeta * zeta)), abs=0.3)
    assert r.settling_time is not None and 0.25 < r.settling_time < 0.4


def test_a_response_that_never_arrives_has_no_rise_or_settling_time():
    r = step_response([0.0, 0.1, 0.2], [0.0, 0.05, 0.06], 0.0, 0.0, 1.0)
    assert r.rise_time is None and r.settling_time is None and r.final_error == pytest.approx(-0.94)


def test_record_with_a_step_on_the_simulated_arm(tmp_path):
    out = io.StringIO()
    path = str(tmp_path / "rec.csv")
    code = hw_check.main(["record", ARM, "--sim", "--duration", "1.2", "--csv", path, "--step",
                          "wrist_1_motor", "0.2", "--yes"], out)
    text = out.getvalue()
    assert code == 0, text
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    head = rows[0]
    assert head[0] == "time" and "wrist_1_motor.position" in head and "gripper_motor.temperature" in head
    assert len(rows) > 100, len(rows)           # about the bus rate (400 Hz) for 1.2 s
    i, c = head.index("wrist_1_motor.position"), head.index("wrist_1_motor.command")
    start, end = float(rows[1][c]), float(rows[-1][c])
    assert end - start == pytest.approx(0.2, abs=1e-5)   # the CSV's 6 digits
    assert float(rows[-1][i]) == pytest.approx(end, abs=0.02)        # it followed the step
    assert "rise time (10-90 %)" in text and "overshoot" in text and "settling time" in text, text


def test_the_step_asks_first_and_a_no_records_nothing(tmp_path):
    path = tmp_path / "rec.csv"
    code = hw_check_record.main([ARM, "--sim", "--duration", "0.5", "--csv", str(path), "--step",
                                 "wrist_1_motor", "0.2"], io.StringIO(), answer=lambda: "n\n")
    assert code == 1 and not path.exists()


def test_a_step_on_a_unit_that_is_not_there_is_named(tmp_path, capsys):
    code = hw_check_record.main([ARM, "--sim", "--duration", "0.5", "--csv", str(tmp_path / "r.csv"),
                                 "--step", "nobody", "0.1"], io.StringIO())
    assert code == 1 and "nobody" in capsys.readouterr().err
