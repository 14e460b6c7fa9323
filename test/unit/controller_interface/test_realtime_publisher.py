"""RealtimePublisher: synchronous with the in-memory handle, threaded hand-off with busy skipping."""
from __future__ import annotations

import threading
import time

import pytest
from std_msgs.msg import Float64

from rospy_control.controller_interface import RealtimePublisher
from rospy_control.testing import InMemoryNodeHandle, wait_until


@pytest.fixture
def nh():
    return InMemoryNodeHandle("/")


def test_synchronous_by_default_with_in_memory_handle(nh):
    got = []
    nh.subscribe("out", Float64, got.append)
    pub = RealtimePublisher(nh, "out", Float64)
    assert pub.synchronous and pub.topic == "/out"
    assert threading.active_count() >= 1
    for value in (1.0, 2.0):
        assert pub.try_publish(Float64(data=value))
    assert [m.data for m in got] == [1.0, 2.0]
    pub.shutdown()
    assert not pub.try_publish(Float64(data=3.0))
    assert nh.graph.num_publishers("/out") == 0


def test_threaded_hand_off_publishes_in_another_thread(nh):
    threads = []
    nh.subscribe("out", Float64, lambda m: threads.append(threading.current_thread().name))
    pub = RealtimePublisher(nh, "out", Float64, synchronous=False)
    try:
        assert pub.try_publish(Float64(data=1.0))
        assert wait_until(lambda: threads)
        assert threads == ["rospy_control.RealtimePublisher[/out]"]
    finally:
        pub.shutdown()
    assert not pub._thread.is_alive()


def test_busy_publisher_skips_the_cycle(nh):
    release = threading.Event()
    entered = threading.Event()
    got = []

    def slow(msg):
        entered.set()
        release.wait(2.0)
        got.append(msg.data)

    nh.subscribe("out", Float64, slow)
    pub = RealtimePublisher(nh, "out", Float64, synchronous=False)
    try:
        assert pub.try_publish(Float64(data=1.0))
        assert entered.wait(2.0)
        assert pub.is_busy()
        t0 = time.perf_counter()
        assert not pub.try_publish(Float64(data=2.0))       # skipped, and without blocking
        assert time.perf_counter() - t0 < 0.05
        release.set()
        assert wait_until(lambda: not pub.is_busy())
        assert pub.try_publish(Float64(data=3.0))
        assert wait_until(lambda: got == [1.0, 3.0]), got
    finally:
        release.set()
        pub.shutdown()


def test_publish_errors_are_logged_not_raised(nh, caplog):
    pub = RealtimePublisher(nh, "out", Float64)
    assert pub.try_publish("not a Float64")
    assert "publish failed" in caplog.text
    pub.shutdown()


def test_node_handle_shutdown_stops_the_thread(nh):
    child = nh.child("ctrl")
    pub = RealtimePublisher(child, "out", Float64, synchronous=False)
    thread = pub._thread
    nh.shutdown()
    assert not thread.is_alive()
    assert nh.graph.num_publishers("/ctrl/out") == 0
    pub.shutdown()   # idempotent
