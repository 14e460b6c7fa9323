"""The unit suite's thread-leak check catches the package's daemon threads (bus, loop, publishers)."""
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
