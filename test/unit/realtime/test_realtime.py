"""rospy_control.realtime: the hand-off cell, ordered shutdown, the real-time threads' log queue."""
from __future__ import annotations

import logging
import threading
import time

import pytest

from rospy_control.control_loop.loop import ControlLoop
from rospy_control.realtime import LogQueue, RealtimeBuffer, ShutdownIncomplete, start_thread, stop_in_order


def test_buffer_hands_over_whole_values_with_their_sequence():
    buf: RealtimeBuffer = RealtimeBuffer((0, 0), "pair")
    assert buf.read_with_sequence() == (0, (0, 0))
    stop = threading.Event()
    torn = []

    def reader():
        while not stop.is_set():
            seq, (a, b) = buf.read_with_sequence()
            if b != -a or (seq and a != seq):
                torn.append((seq, a, b))

    t = start_thread(reader, "test.reader")
    try:
        for i in range(1, 20001):
            assert buf.write_from_non_rt((i, -i)) == i
    finally:
        stop.set()
        t.join(5.0)
    assert torn == [] and buf.sequence() == 20000 and buf.read_from_rt() == (20000, -20000)


def test_buffer_wait_newer_wakes_on_the_next_write_and_times_out_without_one():
    buf: RealtimeBuffer = RealtimeBuffer(None)
    assert buf.wait_newer(0, timeout=0.05) == (0, None)
    timer = threading.Timer(0.05, lambda: buf.write_from_rt("v"))
    timer.name = "rospy_control.test.timer"
    timer.start()
    assert buf.wait_newer(0, timeout=20.0) == (1, "v")
    timer.join()


def test_shutdown_stops_at_the_step_whose_thread_did_not_join_and_says_which(caplog):
    ran = []
    steps = [
        ("diagnostics", lambda: ran.append("diagnostics")),
        ("broken", lambda: 1 / 0),                       # an error: logged, the next step runs
        ("control loop", lambda: False),                  # its thread did not join
        ("controller manager", lambda: ran.append("controller manager")),
        ("middleware", lambda: ran.append("middleware")),
    ]
    with caplog.at_level(logging.ERROR):
        assert stop_in_order(steps, "driver") == "control loop"
    assert ran == ["diagnostics"]
    text = caplog.text
    assert "shutting down the broken failed" in text
    assert "the control loop did not stop; NOT shutting down what depends on it (controller manager, " \
           "middleware)" in text

    def incomplete():
        raise ShutdownIncomplete("thread 'rospy_control.channel.can0' still running")

    assert stop_in_order([("bus", incomplete), ("after", lambda: ran.append("after"))]) == "bus"
    assert "after" not in ran
    assert stop_in_order([("a", lambda: None), ("b", lambda: True)]) is None


class _BlockingHW:
    def __init__(self):
        self.block = threading.Event()
        self.inside = threading.Event()
        self.release = threading.Event()

    def read(self, t, dt):
        if self.block.is_set():
            self.inside.set()
            self.release.wait(30.0)

    def write(self, t, dt):
        pass

    def consume_reset_request(self):  # the RobotHW capability the loop calls after each read
        return False


def test_control_loop_stop_reports_a_thread_that_does_not_join(caplog):
    hw = _BlockingHW()
    loop = ControlLoop(hw, None, 200.0, now=time.monotonic)
    loop.start()
    hw.block.set()
    assert hw.inside.wait(20.0)
    try:
        with caplog.at_level(logging.ERROR):
            assert loop.stop(timeout=0.2) is False
        assert "did not stop within 0.2 s" in caplog.text
    finally:
        hw.release.set()
    assert loop.stop(timeout=20.0) is True


class _Updates:
    def __init__(self):
        self.resets = 0
        self.cycles = 0

    def update(self, t, dt, reset=False):
        self.cycles += 1
        self.resets += bool(reset)


def test_control_loop_reset_requests_cross_threads_without_being_lost():
    cm = _Updates()
    loop = ControlLoop(_BlockingHW(), cm, 100.0, now=lambda: 0.0)
    loop.request_reset()
    loop.request_reset()        # one request pending or two: one reset at the next cycle
    loop.cycle(0.01)
    loop.cycle(0.01)
    assert cm.resets == 1
    loop.request_reset()
    loop.cycle(0.01)
    assert (cm.resets, cm.cycles) == (2, 3)


class _Blocking(logging.Handler):
    def __init__(self):
        super().__init__()
        self.gate = threading.Event()
        self.records = []

    def emit(self, record):
        self.gate.wait(30.0)
        self.records.append((record.threadName, record.getMessage()))


def test_real_time_threads_only_enqueue_their_log_records():
    logger = logging.getLogger("rospy_control.test.log_queue")
    logger.propagate = False
    slow = _Blocking()
    logger.addHandler(slow)
    queue = LogQueue(logger, ("rospy_control.control_loop",)).start()
    returned = threading.Event()

    def rt():
        for i in range(3):
            logger.warning("cycle %d late", i)
        returned.set()

    try:
        t = start_thread(rt, "control_loop")
        # the handler blocks (a stalled stdout): the control thread is not held up by it
        assert returned.wait(10.0), "the real-time thread blocked in logging"
        t.join(5.0)
        assert slow.records == []
        slow.gate.set()
        logger.warning("from the main thread")      # not real-time: emitted directly, in this thread
        queue.stop()                                # emits what is queued
        assert ("rospy_control.control_loop", "cycle 2 late") in slow.records
        assert [m for n, m in slow.records if n == "rospy_control.control_loop"] == \
            ["cycle 0 late", "cycle 1 late", "cycle 2 late"]
        assert (threading.current_thread().name, "from the main thread") in slow.records
        assert len(slow.records) == 4                # each record exactly once
    finally:
        slow.gate.set()
        queue.stop()
        logger.removeHandler(slow)


@pytest.mark.parametrize("prefix", ["rospy_control.channel.", "rospy_control.sim."])
def test_bus_and_simulator_threads_are_real_time_too(prefix):
    from rospy_control.realtime.log_queue import RT_THREADS
    assert prefix in RT_THREADS
