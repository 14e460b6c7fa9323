"""The action monitor's worker: ticks at its rate while there is work, sleeps without a timer when idle."""
import threading
import time

from rospy_control.controllers._jtc_common import PeriodicWorker
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle


def _nh():
    return InMemoryNodeHandle("/ctrl", InMemoryGraph())


def _wait(cond, timeout=2.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return True
        time.sleep(0.005)
    return cond()


def test_without_pending_it_ticks_at_its_rate():
    calls = []
    worker = PeriodicWorker(_nh(), 100.0, lambda: calls.append(1), "w", synchronous=False)
    try:
        assert _wait(lambda: len(calls) >= 3)
        assert not worker.idle
    finally:
        worker.shutdown()


def test_idle_worker_sleeps_until_the_loop_sees_work():
    busy = threading.Event()
    calls = []
    worker = PeriodicWorker(_nh(), 100.0, lambda: calls.append(1), "w", synchronous=False,
                            pending=busy.is_set)
    try:
        assert _wait(lambda: worker.idle)
        n = len(calls)
        time.sleep(0.1)  # ten periods: no work while idle
        assert len(calls) == n
        worker.poll(1.0)  # the loop: nothing pending, stays asleep
        time.sleep(0.05)
        assert len(calls) == n and worker.idle
        busy.set()
        worker.poll(2.0)  # the loop: a goal became active
        assert _wait(lambda: len(calls) >= n + 3)  # ticks at its rate while busy
        assert not worker.idle
        busy.clear()
        assert _wait(lambda: worker.idle)
    finally:
        worker.shutdown()
    assert not worker._thread.is_alive()


def test_shutdown_ends_an_idle_sleep():
    worker = PeriodicWorker(_nh(), 100.0, lambda: None, "w", synchronous=False, pending=lambda: False)
    assert _wait(lambda: worker.idle)
    worker.shutdown()
    assert not worker._thread.is_alive()


def test_an_idle_worker_asks_the_loop_at_most_at_its_rate_and_again_when_the_clock_goes_back():
    asked = []
    busy = threading.Event()

    def pending():
        asked.append(1)
        return busy.is_set()

    worker = PeriodicWorker(_nh(), 10.0, lambda: None, "w", synchronous=False, pending=pending)
    try:
        assert _wait(lambda: worker.idle)
        n = len(asked)
        for i in range(100):            # 100 loop cycles within 0.099 s of ROS time: one question
            worker.poll(5.0 + i * 0.001)
        assert len(asked) == n + 1
        worker.poll(1.0)                # ROS time went back (a restarted simulation): asked again
        assert len(asked) == n + 2
        busy.set()
        worker.poll(5.2)                # one period later: asked, and woken
        assert _wait(lambda: not worker.idle)
    finally:
        worker.shutdown()
