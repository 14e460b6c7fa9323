"""The simulated firmware's sign of life: when a missing reply is the host's doing, not the motor's."""
from __future__ import annotations

import os

from rospy_control.simulator.liveness import (
    DEAD_AFTER, DUE_SLACK, GAP, Liveness, SharedLiveness, liveness_path,
)


def _live(t: float) -> Liveness:
    live = Liveness()
    live._last = t  # start the record at a chosen clock time
    live.beat(t)
    return live


def test_a_thread_that_keeps_passing_its_loop_is_never_stalled():
    live = _live(100.0)
    for k in range(1, 50):
        live.beat(100.0 + 0.02 * k)    # IDLE_WAKE passes
    now = 100.0 + 0.02 * 49 + 0.005
    assert not live.stalled(now - 0.01, now)


def test_silence_longer_than_a_gap_is_a_stall_until_the_simulator_counts_as_dead():
    live = _live(100.0)
    assert not live.stalled(100.0, 100.0 + GAP * 0.9)
    assert live.stalled(100.0, 100.0 + GAP * 1.5)
    assert live.stalled(100.0, 100.0 + DEAD_AFTER * 0.9)
    assert not live.stalled(100.0, 100.0 + DEAD_AFTER + 0.1)   # gone: its motors fault as usual


def test_a_gap_that_ended_during_or_just_before_the_cycle_excuses_it():
    live = _live(100.0)
    live.beat(100.25)                    # 250 ms without a pass: the host did not run the thread
    live.beat(100.26)
    assert live.stalled(100.20, 100.262)         # the cycle overlapped the gap
    assert live.stalled(100.27, 100.271)         # just after it: frames queued in the gap come late
    live.beat(100.28)
    live.beat(100.30)
    assert not live.stalled(100.25 + GAP + 0.01, 100.25 + GAP + 0.012)  # long after: the motor's own


def test_shared_record_is_read_by_another_mapping_and_removed_by_its_owner(tmp_path, monkeypatch):
    path = str(tmp_path / "alive")
    with open(path, "wb") as f:      # a stale record of an earlier run is replaced, never reused
        f.write(b"\xff" * 48)
    writer = SharedLiveness.create(path)
    reader = SharedLiveness.attach(path)
    assert reader is not None
    writer.beat(500.0)
    writer.beat(500.3)
    assert reader.read() == writer.read()
    assert reader.read()[0] == 500.3 and reader.read()[1:] == (500.0, 500.3)
    reader.beat(900.0)                   # the driver's side never writes
    assert reader.read()[0] == 500.3
    reader.close()
    writer.close()
    assert not os.path.exists(path)
    assert SharedLiveness.attach(path) is None


def test_paths_are_per_key_and_channel():
    assert liveness_path("k", "a") != liveness_path("k", "b") != liveness_path("k2", "a")
    assert liveness_path("k", "a") == liveness_path("k", "a")


def test_a_thread_working_through_an_old_backlog_counts_as_stalled():
    # It passes its loop on time, but the frame it handles arrived 120 ms ago: the host did not give
    # it the CPU to keep up, so the replies the driver misses meanwhile are not the motors' fault.
    live = _live(100.0)
    live.beat(100.01)
    live.lagging(100.01, 0.01)           # 10 ms behind: normal, nothing recorded
    assert not live.stalled(100.005, 100.012)
    live.lagging(100.02, 0.12)
    live.beat(100.02)
    assert live.stalled(99.95, 100.021)
    assert live.read()[1:] == (100.02 - 0.12, 100.02)


def test_a_cycle_whose_request_the_thread_has_not_taken_yet_is_not_the_devices():
    # Held back in bursts shorter than a gap, the thread passes its loop often enough, yet the
    # cycle's request still waits in its queue: the missing reply is the host's doing. Once it has
    # taken the request (and sent what fell due), a missing reply is the device's.
    live = _live(100.0)
    live.beat(100.010)
    live.progress(100.009, float("inf"))           # has taken what arrived up to 100.009
    assert live.stalled(100.010, 100.018, sent=100.0101)
    assert not live.stalled(100.010, 100.018)      # nothing awaited a reply: nothing to have taken
    live.beat(100.012)
    live.progress(100.0102, float("inf"))          # took the request; the device did not answer
    assert not live.stalled(100.010, 100.018, sent=100.0101)


def test_a_reply_held_back_past_its_due_time_is_the_hosts_doing():
    live = _live(100.0)
    live.beat(100.010)
    live.progress(100.0102, 100.0104)   # the reply, with its modelled latency, falls due at 100.0104
    assert not live.stalled(100.010, 100.0104 + DUE_SLACK * 0.5, sent=100.0101)
    assert live.stalled(100.010, 100.0104 + DUE_SLACK * 3, sent=100.0101)   # not sent: held back
    live.progress(100.0102, float("inf"))                                   # sent
    assert not live.stalled(100.010, 100.0104 + DUE_SLACK * 3, sent=100.0101)


def test_drops_are_recorded_as_a_gap_and_by_their_time():
    live = _live(100.0)
    assert live.last_drop() == 0.0
    live.beat(100.19)
    live.dropped(100.2, 0.08)
    assert live.last_drop() == 100.2
    assert live.read()[1:] == (100.2 - 0.08, 100.2)
    assert live.stalled(100.19, 100.205)
