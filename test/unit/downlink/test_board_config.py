"""The board's axes file (YAML or XML) and the pigpio waveform conversion (the part testable off a Pi)."""
from __future__ import annotations

import math

import pytest

from rospy_control.board.backends import make_backend, waveform_pulses
from rospy_control.board.config import load_config
from rospy_control.exceptions import ConfigError

YAML = """
board: {name: arm_board, buffer_capacity: 128, heartbeat_timeout: 2.0}
axes:
  - {name: shoulder, steps_per_rad: 2291.83, max_velocity: 2.0, max_acceleration: 5,
     max_step_rate: 6000, min_position: -1.5, max_position: 1.5, direction: -1,
     pins: {step: 17, dir: 27}, encoder: {counts_per_rad: 4000, pins: {a: 5, b: 6}}}
  - {name: elbow}
"""

XML = """<board name="arm_board" buffer_capacity="128">
  <axis name="shoulder" steps_per_rad="2291.83" max_step_rate="6000" direction="-1">
    <pins step="17" dir="27"/>
    <encoder counts_per_rad="4000" a="5" b="6"/>
  </axis>
  <axis name="elbow"/>
</board>"""


def test_yaml(tmp_path):
    path = tmp_path / "board.yaml"
    path.write_text(YAML)
    cfg = load_config(str(path))
    assert cfg.name == "arm_board" and cfg.buffer_capacity == 128 and cfg.heartbeat_timeout == 2.0
    sh, el = cfg.axes
    assert sh.steps_per_unit == 2291.83 and sh.direction == -1 and sh.step_pin == 17 and sh.dir_pin == 27
    assert sh.encoder.counts_per_unit == 4000 and sh.encoder.pin_a == 5
    assert sh.velocity_limit == pytest.approx(2.0)
    assert el.steps_per_unit == pytest.approx(14400 / (2 * math.pi)) and el.encoder is None


def test_xml(tmp_path):
    path = tmp_path / "board.xml"
    path.write_text(XML)
    cfg = load_config(str(path))
    assert [a.name for a in cfg.axes] == ["shoulder", "elbow"]
    assert cfg.axes[0].max_step_rate == 6000 and cfg.axes[0].encoder.pin_b == 6


@pytest.mark.parametrize("text,message", [
    ("axes: [{name: a, max_step_rate: fast}]", "axis 'a': max_step_rate = 'fast'; expected a number"),
    ("axes: [{name: a, steps_per_rev: 3}]", "axis 'a': unknown key(s) ['steps_per_rev']"),
    ("axes: [{name: a}, {name: a}]", "axis name 'a' appears twice"),
    ("axes: [{name: a, max_acceleration: -1}]", "max_acceleration = -1.0; expected a finite positive"),
    ("board: {heartbeat_timeout: 0}\naxes: [{name: a}]", "heartbeat_timeout = 0.0"),
    ("axes: {}", "expected a mapping with an 'axes' list"),
])
def test_bad_files_name_file_and_key(tmp_path, text, message):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as err:
        load_config(str(path))
    assert str(path) in str(err.value) and message in str(err.value)


def test_unknown_backend():
    with pytest.raises(ValueError, match="unknown pulse back-end 'gpio'"):
        make_backend("gpio", [])


def test_waveform_pulses():
    # two pulses: the first changes the direction pin (GPIO 27 set), the second does not
    entries = waveform_pulses([(1.000100, 1 << 17, 1 << 27), (1.000300, 1 << 17, 0)], t_start=1.0)
    assert entries == [
        (0, 0, 95), (1 << 27, 0, 0),                 # direction 5 us ahead of the step
        (0, 0, 5), (1 << 17, 0, 5), (0, 1 << 17, 0),  # step high at 100 us for 5 us
        (0, 0, 195), (1 << 17, 0, 5), (0, 1 << 17, 0),
    ]
    assert sum(e[2] for e in entries) == 305
