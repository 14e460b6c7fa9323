"""Clock synchronisation: offset and drift of a board clock from noisy round trips."""
from __future__ import annotations

import random

import pytest

from rospy_control.downlink.clock_sync import ClockSync


def board_clock(host):
    return 12345.0 + host * (1 + 150e-6)         # offset and 150 ppm drift


def test_offset_and_drift_from_noisy_round_trips():
    rng = random.Random(4)
    sync = ClockSync()
    host = 1000.0
    for _ in range(40):
        up = 0.0002 + rng.expovariate(1 / 0.0005)
        down = 0.0002 + rng.expovariate(1 / 0.0005)
        if rng.random() < 0.15:
            down += 0.25                         # a host stall on the way back
        sync.add(host, host + up + down, board_clock(host + up))
        host += 0.98
    assert sync.rejected >= 1
    assert sync.drift_ppm == pytest.approx(150, abs=30)
    for probe in (host, host + 5.0):
        assert abs(sync.board_time(probe) - board_clock(probe)) < 0.002
        assert sync.host_time(sync.board_time(probe)) == pytest.approx(probe, abs=1e-6)
    assert sync.uncertainty < 0.005


def test_first_sample_gives_offset_with_half_the_round_trip_as_error():
    sync = ClockSync()
    assert not sync.synced
    with pytest.raises(RuntimeError):
        sync.board_time(0.0)
    sync.add(10.0, 10.002, board_clock(10.0015))
    assert abs(sync.board_time(10.001) - board_clock(10.001)) <= 0.001 + 1e-6
