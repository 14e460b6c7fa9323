"""The unit suite's own machinery: the thread-leak check catches the package's daemon threads (bus, loop,
publishers); fuzzing reports are written by a session hook, not by tests."""
from __future__ import annotations

import threading

from rospy_control.realtime import THREAD_PREFIX, start_thread
from rospy_control.testing.leaks import leaked_threads, wait_for_no_leaked_threads


def test_a_package_daemon_thread_left_running_is_a_leak():
    before = set(threading.enumerate())
    stop = threading.Event()
    ours = start_thread(stop.wait, "control_loop")  # daemon, as the real loop's
    foreign = threading.Thread(target=stop.wait, name="rosout-like", daemon=True)
    foreign.start()
    try:
        assert ours.daemon and ours.name == THREAD_PREFIX + "control_loop"
        assert leaked_threads(before) == [ours]   # a foreign daemon is not ours to stop
    finally:
        stop.set()
    ours.join(2.0)
    foreign.join(2.0)
    assert wait_for_no_leaked_threads(before) == []


def test_a_non_daemon_thread_of_anyone_is_a_leak():
    before = set(threading.enumerate())
    stop = threading.Event()
    t = threading.Thread(target=stop.wait, name="anything")
    t.start()
    try:
        assert leaked_threads(before) == [t]
    finally:
        stop.set()
        t.join(2.0)


def test_reports_are_written_by_the_session_hook_and_are_not_tests(tmp_path):
    import os
    import re

    import reports
    here = os.path.dirname(os.path.abspath(__file__))
    for folder, _, files in os.walk(here):
        for name in files:
            if name.endswith(".py"):
                with open(os.path.join(folder, name)) as f:
                    found = re.search(r"^def test_zz_report", f.read(), re.M)
                    assert not found, f"{name}: a report is not a test"
    reports.register("unit_test_probe", lambda: {"seen": 3})
    reports.register("unit_test_empty", lambda: {})
    try:
        written = reports.write_all(str(tmp_path))
    finally:
        reports._REPORTS.pop("unit_test_probe")
        reports._REPORTS.pop("unit_test_empty")
    probe = os.path.join(str(tmp_path), reports.REPORT_DIR, "unit_test_probe.json")
    assert probe in written and not any(p.endswith("unit_test_empty.json") for p in written)
    with open(probe) as f:
        assert f.read().replace(" ", "").replace("\n", "") == '{"seen":3}'
