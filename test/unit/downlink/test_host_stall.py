"""A host frozen mid-trajectory (SIGSTOP of the client's process for 0.4 s) does not disturb it."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

from rospy_control.board.config import seed_config

from downlink_testutil import wait_until

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

CLIENT = r"""
import sys
import numpy as np
from rospy_control.board.core import TrajPoint
from rospy_control.downlink.client import BoardClient
port = int(sys.argv[1])
c = BoardClient("127.0.0.1", port).connect()
pts = []
for k in range(61):
    u = k / 60
    pts.append(TrajPoint(3.0 * u, np.full(6, 0.5 * (10 * u**3 - 15 * u**4 + 6 * u**5)),
                         np.full(6, 0.5 * (30 * u**2 - 60 * u**3 + 30 * u**4) / 3.0),
                         np.full(6, 0.5 * (60 * u - 180 * u**2 + 120 * u**3) / 9.0)))
h = c.execute(["joint_%d" % i for i in range(1, 7)], pts)
print("started", flush=True)
print("result", h.wait(30.0), h.code, flush=True)
c.close()
"""


@pytest.mark.skipif(not hasattr(signal, "SIGSTOP"), reason="needs SIGSTOP")
def test_sigstop_of_the_host_does_not_disturb_a_running_trajectory(board_factory):
    server = board_factory(seed_config(6))       # heartbeat_timeout 1.5 s (the default)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(REPO, "src") + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.Popen([sys.executable, "-c", CLIENT, str(server.address[1])], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout.readline().strip() == "started", proc.stderr.read()
        assert wait_until(lambda: server.core.feedback(server.clock.now())["time_from_start"] > 0.8)
        proc.send_signal(signal.SIGSTOP)
        time.sleep(0.4)
        proc.send_signal(signal.SIGCONT)
        line = proc.stdout.readline().split()
        assert line == ["result", "SUCCEEDED", "OK"], (line, proc.stderr.read())
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGCONT)
            proc.kill()
        proc.wait(10)
        proc.stdout.close()
        proc.stderr.close()
    assert server.core.fault is None
    spr = server.config.axes[0].steps_per_unit
    assert [server.backend.steps_at(i, server.clock.now()) for i in range(6)] == [round(0.5 * spr)] * 6
