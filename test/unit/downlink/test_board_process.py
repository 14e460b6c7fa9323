"""scripts/trajectory_board as its own process, driven by BoardClient over 127.0.0.1."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import sys

import numpy as np
import pytest

from rospy_control.downlink.client import BoardClient, BoardError

from downlink_testutil import min_jerk

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
SCRIPT = os.path.join(REPO, "scripts", "trajectory_board")


@pytest.fixture
def board_process(tmp_path):
    procs = []

    def start(*args):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(REPO, "src") + os.pathsep + env.get("PYTHONPATH", "")
        proc = subprocess.Popen([sys.executable, SCRIPT, "--port", "0", *args], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True, env=env)
        procs.append(proc)
        line = proc.stdout.readline()
        m = re.search(r"listening on 127\.0\.0\.1:(\d+)", line)
        assert m, (line, proc.stderr.read() if proc.poll() is not None else "")
        return proc, int(m.group(1))

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()


def test_board_process_executes_goals_and_stops_on_sigterm(board_process, tmp_path):
    axes = tmp_path / "board.yaml"
    axes.write_text("board: {name: bench_board}\naxes: [{name: a}, {name: b, direction: -1}]\n")
    proc, port = board_process("--axes", str(axes))
    client = BoardClient("127.0.0.1", port).connect()
    try:
        assert client.hello.board_name == "bench_board" and client.axis_names == ["a", "b"]
        handle = client.execute(["b", "a"], min_jerk([0.0, 0.0], [-0.1, 0.2], 0.5, n=11))
        assert handle.wait(15.0) == "SUCCEEDED"
        fb = client.latest_feedback()
        assert fb is not None
        # steps follow the axis direction; positions stay in joint terms
        assert np.allclose(fb.actual, [0.2, -0.1], atol=1e-3)
        assert fb.steps[0] == round(0.2 * 2291.83) and fb.steps[1] == round(0.1 * 2291.83)
        with pytest.raises(BoardError) as err:      # does not start where the axes are
            client.execute(["a", "b"], min_jerk([0.5, 0.0], [0.6, 0.0], 0.5, n=5))
        assert err.value.code_name == "START_MISMATCH" and "axis 'a'" in str(err.value)
    finally:
        client.close()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(15) == 0


def test_bad_axes_file_is_reported(tmp_path):
    axes = tmp_path / "board.yaml"
    axes.write_text("axes: [{name: a, max_step_rate: -5}]\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, SCRIPT, "--axes", str(axes)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 2
    assert str(axes) in proc.stderr and "max_step_rate = -5.0" in proc.stderr


@pytest.mark.parametrize("flag", ["--hardware-config", "--hardware-xml"])
def test_the_hardware_config_flag_and_its_former_name_read_the_board_of_the_xml(tmp_path, flag):
    xml = tmp_path / "arm.xml"
    xml.write_text('<robot name="r"><board address="127.0.0.1:7700">'
                   '<axis name="a" joint="j" steps_per_rad="-3"/></board></robot>\n')
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, SCRIPT, flag, str(xml)], capture_output=True, text=True,
                          env=env, timeout=60)
    assert proc.returncode == 2 and str(xml) in proc.stderr, proc.stderr     # the XML's error, located
    deprecated = "--hardware-xml is deprecated; name the hardware XML with --hardware-config"
    assert (deprecated in proc.stderr) == (flag == "--hardware-xml")
