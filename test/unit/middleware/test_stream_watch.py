"""The one rule that judges a stream a device sends by itself (ODrive's cyclic frames and heartbeat,
CiA 402's heartbeat) lost: silence counted over on-time cycles only, misses past the period, a limit."""
from __future__ import annotations

from rospy_control.devices.streamed import StreamWatch

CYCLE = 0.01


def run(watch, start, cycles, on_time=True):
    """End ``cycles`` cycles after ``start``; the time of the last and whether any said lost."""
    now, lost = start, False
    for _ in range(cycles):
        now += CYCLE
        lost = watch.end_cycle(now, on_time, CYCLE) or lost
    return now, lost


def test_a_silent_stream_is_lost_once_its_limit_and_its_misses_are_reached():
    watch = StreamWatch("heartbeat", period=0.1, limit=0.3, misses=3)
    watch.start(0.0)
    now, lost = run(watch, 0.0, 29)
    assert not lost and abs(watch.silence - 0.29) < 1e-9
    now, lost = run(watch, now, 1)
    assert lost and watch.streak >= 3


def test_a_frame_ends_the_silence():
    watch = StreamWatch("frames", period=0.02, limit=0.1, misses=3)
    watch.start(0.0)
    now, _ = run(watch, 0.0, 8)
    watch.heard(now)
    assert watch.silence == 0.0 and watch.streak == 0
    now, lost = run(watch, now, 9)
    assert not lost


def test_cycles_the_host_ran_late_add_no_silence_and_never_lose_the_stream():
    watch = StreamWatch("frames", period=0.02, limit=0.1, misses=3)
    watch.start(0.0)
    # a host descheduled for 250 ms: its cycles end late, frames queue up meanwhile
    now, lost = run(watch, 0.0, 25, on_time=False)
    assert not lost and watch.silence == 0.0 and watch.streak == 0
    watch.heard(now)            # the queued frames are consumed at the start of the next cycle
    now, lost = run(watch, now, 5)
    assert not lost


def test_the_streak_needs_misses_past_the_period_not_only_silence():
    # limit reached but the stream has been later than its period for fewer cycles than asked
    watch = StreamWatch("frames", period=0.05, limit=0.05, misses=5)
    watch.start(0.0)
    now, lost = run(watch, 0.0, 7)          # silence 0.07 > period + cycle after cycle 7: streak 1
    assert not lost and watch.streak == 1
    now, lost = run(watch, now, 4)
    assert lost and watch.streak == 5
