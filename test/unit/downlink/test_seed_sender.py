"""The original-protocol sender: the original board program's framing and message, axis order, the
64 KiB limit."""
from __future__ import annotations

import socket
import struct
import threading

import numpy as np
import pytest

from rospy_control.board.config import seed_config
from rospy_control.board.core import TrajPoint
from rospy_control.board import wire
from rospy_control.downlink.seed import SeedSender, SeedTooLarge, resample

from downlink_testutil import min_jerk, wait_until

AXES = [f"joint_{i}" for i in range(1, 7)]


class Listener:
    """A plain TCP server that keeps what each connection sent (an original board that only reads)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.received = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            data = b""
            while True:
                chunk = conn.recv(1 << 16)
                if not chunk:
                    break
                data += chunk
            conn.close()
            self.received.append(data)

    def close(self):
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()
        self.thread.join(5)


@pytest.fixture
def listener():
    lis = Listener()
    yield lis
    lis.close()


def test_one_connection_per_trajectory_in_the_boards_order(listener, seed_pb):
    sender = SeedSender("127.0.0.1", listener.port, AXES)
    joints = list(reversed(AXES))                   # the goal names the joints in another order
    pts = min_jerk(np.arange(6) * 0.1, np.arange(6) * 0.1 + 0.2, 1.0, n=5)
    sender.send(joints, pts)
    sender.send(joints, pts)
    assert wait_until(lambda: len(listener.received) == 2)
    data = listener.received[0]
    (size,) = struct.unpack("<i", data[:4])
    assert size == len(data) - 4
    msg = seed_pb.JointTrajectoryPoints()
    msg.ParseFromString(data[4:])
    assert len(msg.points) == 5
    # reversed back into the board's axis order, radians as given, positions only (as the seed)
    assert list(msg.points[0].positions) == pytest.approx(list(reversed(np.arange(6) * 0.1)))
    assert list(msg.points[4].positions) == pytest.approx(list(reversed(np.arange(6) * 0.1 + 0.2)))
    assert len(msg.points[2].velocities) == 0
    assert msg.points[4].time_frome_start == 1.0


def test_missing_or_unknown_joint(listener):
    sender = SeedSender("127.0.0.1", listener.port, AXES)
    with pytest.raises(wire.DownlinkError, match="leaves axis/axes joint_6 out"):
        sender.send(AXES[:5], [TrajPoint(0, [0.0] * 5)])
    with pytest.raises(wire.DownlinkError, match="joint 'elbow' is not an axis of the original board"):
        sender.send(AXES[:5] + ["elbow"], [TrajPoint(0, [0.0] * 6)])
    assert listener.received == []


def long_path(n):
    t = np.linspace(0, 60, n)
    return [TrajPoint(tk, 0.5 * np.sin(0.2 * tk + np.arange(6))) for tk in t]


def test_oversized_trajectory_is_resampled_within_the_tolerance(listener, seed_pb):
    pts = long_path(1500)                           # 61 B a point: 91 kB
    sender = SeedSender("127.0.0.1", listener.port, AXES, path_tolerance=0.002)
    info = sender.send(AXES, pts)
    assert info["bytes"] > wire.SEED_MAX_BYTES and info["resampled"]
    assert info["bytes_sent"] <= wire.SEED_MAX_BYTES and info["max_deviation"] <= 0.002
    assert wait_until(lambda: len(listener.received) == 1)
    msg = seed_pb.JointTrajectoryPoints()
    msg.ParseFromString(listener.received[0][4:])
    kept_t = np.array([p.time_frome_start for p in msg.points])
    kept_p = np.array([list(p.positions) for p in msg.points])
    # the straight lines between what was sent pass within the tolerance of every original point
    for j in range(6):
        orig = np.array([p.p[j] for p in pts])
        line = np.interp([p.t for p in pts], kept_t, kept_p[:, j])
        assert np.max(np.abs(line - orig)) <= 0.002 + 1e-12
    assert kept_t[0] == 0.0 and kept_t[-1] == 60.0


def test_too_large_even_resampled_is_refused_and_nothing_is_sent(listener):
    rng = np.random.default_rng(1)
    pts = [TrajPoint(0.01 * k, rng.uniform(-1, 1, 6)) for k in range(1500)]   # no smooth shape
    sender = SeedSender("127.0.0.1", listener.port, AXES, path_tolerance=0.001)
    with pytest.raises(SeedTooLarge) as err:
        sender.send(AXES, pts)
    text = str(err.value)
    assert "1500 points is 91" in text and "at most 65536 bytes" in text and "not sent" in text
    assert listener.received == []


def test_resample_keeps_the_ends():
    pts = [TrajPoint(k, [float(k)]) for k in range(10)]       # a straight line: only the ends stay
    keep, dev = resample(pts, 1e-9)
    assert keep == [0, 9] and dev < 1e-9


def test_seed_sender_drives_the_seed_protocol_board(board_factory):
    server = board_factory(seed_config(6), protocol="seed")
    sender = SeedSender("127.0.0.1", server.address[1], AXES)
    target = np.array([0.2, -0.1, 0.05, 0.0, 0.3, -0.3])
    sender.send(AXES, min_jerk(np.zeros(6), target, 1.0, n=51))
    spr = server.config.axes[0].steps_per_unit
    expected = [round(x * spr) for x in target]
    assert wait_until(lambda: [server.backend.steps_at(i, server.clock.now()) for i in range(6)] == expected,
                      timeout=15.0)
    assert server.errors == []
