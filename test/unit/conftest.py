"""Shared fixtures of the ROS-free unit suite.

* ``virtual_channel``: a unique python-can ``virtual`` channel name per test.
* ``pytest_sessionfinish``: the reports of figures collected by the fuzzing modules
  (``reports.register``), written under ``.ws/fuzz/``;
* autouse leak check (python-can's own test suite does the same): a test that leaves a virtual
  channel open, a non-daemon thread, or any of the package's threads (named ``rospy_control.*``,
  daemon or not: :mod:`rospy_control.testing.leaks`) running fails, because in the driver either
  would mean a bus or a read/write thread that outlives its shutdown.
"""
from __future__ import annotations

import itertools
import os
import sys
import threading
import time

import pytest

from rospy_control.testing.leaks import leaked_threads as leaked

_counter = itertools.count()

# control_msgs / controller_manager_msgs come from the catkin workspace: when the suite runs without
# tools/env.sh sourced, find them in .ws/ so the controller tests still import.
_WS_PYTHON = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".ws", "devel", "lib",
                                          "python3", "dist-packages"))
try:
    import control_msgs.msg  # noqa: F401
except ImportError:
    if os.path.isdir(os.path.join(_WS_PYTHON, "control_msgs")):
        sys.path.append(_WS_PYTHON)


def pytest_sessionfinish(session, exitstatus) -> None:
    from reports import write_all
    write_all(os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")))


@pytest.fixture
def virtual_channel(request) -> str:
    """A virtual CAN channel name no other test uses."""
    return f"test_{request.node.name}_{next(_counter)}"


def _open_virtual_channels():
    try:
        from can.interfaces import virtual
    except ImportError:  # pragma: no cover - python-can is a hard dependency
        return set()
    return {name for name, queues in virtual.channels.items() if queues}


@pytest.fixture(autouse=True)
def _no_leaks():
    channels_before = _open_virtual_channels()
    threads_before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 2.0
    while True:
        leaked_channels = _open_virtual_channels() - channels_before
        leaked_threads = leaked(threads_before)
        if not (leaked_channels or leaked_threads) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert not leaked_channels, f"test left virtual CAN channels open: {sorted(leaked_channels)}"
    assert not leaked_threads, f"test left threads running: {[t.name for t in leaked_threads]}"


@pytest.fixture
def make_hw():
    """Factory: ``make_hw(hardware_xml, urdf, params=None, start=True, **kw)`` -> MiddlewareRobotHW whose
    middleware is always shut down after the test (robot_hw and dynamics tests)."""
    from rospy_control.robot_hw import MiddlewareRobotHW
    made = []

    def factory(hardware_xml, urdf_xml, params=None, start=True, **kw):
        hw = MiddlewareRobotHW.from_config(hardware_xml, urdf_xml, params, start=start, **kw)
        made.append(hw)
        return hw

    yield factory
    for hw in made:
        hw.shutdown()
