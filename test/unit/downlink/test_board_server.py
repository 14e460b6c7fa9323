"""The board program over TCP (127.0.0.1): handshake, bad frames, and the original board program's
protocol."""
from __future__ import annotations

import socket
import struct

import pytest

from rospy_control.board.config import seed_config
from rospy_control.board import wire

from downlink_testutil import min_jerk, wait_until


def connect(server):
    sock = socket.create_connection(server.address, timeout=10.0)
    return sock


def read_env(sock):
    return wire.decode_envelope(wire.read_frame(sock, 1 << 20, "board"))


def read_until(sock, kind, limit=2000):
    for _ in range(limit):
        env = read_env(sock)
        if env.WhichOneof("body") == kind:
            return env
    raise AssertionError(f"no {kind} from the board")


def segment_env(goal_id, index, pts, last, seq):
    pb = wire.pb()
    env = pb.Envelope()
    env.seq = seq
    env.segment.goal_id = goal_id
    env.segment.index = index
    env.segment.last = last
    for pt in pts:
        p = env.segment.points.points.add()
        p.positions.extend(pt.p.tolist())
        if pt.v is not None:
            p.velocities.extend(pt.v.tolist())
        if pt.a is not None:
            p.accelerations.extend(pt.a.tolist())
        p.time_frome_start = pt.t
    return env


def send(sock, env):
    sock.sendall(wire.encode_frame(env.SerializeToString()))


def test_hello_describes_the_board(board_factory):
    server = board_factory(seed_config(6, name="arm_board"))
    with connect(server) as sock:
        env = read_env(sock)
    h = env.hello
    assert h.protocol_version == wire.PROTOCOL_VERSION
    assert h.board_name == "arm_board"
    assert [a.name for a in h.axes] == [f"joint_{i}" for i in range(1, 7)]
    assert h.axes[0].steps_per_unit == pytest.approx(2291.83, abs=0.01)
    assert h.axes[0].max_step_rate == 8000 and h.axes[0].unit == "rad"
    assert h.buffer_capacity == 256 and h.heartbeat_timeout == 1.5 and h.feedback_rate == 100
    assert h.board_time_us > 0


def test_requests_are_acked_or_nacked_with_a_reason(board_factory):
    server = board_factory(seed_config(1))
    with connect(server) as sock:
        read_env(sock)
        send(sock, segment_env(3, 0, min_jerk([0.0], [0.2], 1.0), True, seq=11))
        ack = read_until(sock, "ack").ack
        assert ack.seq == 11 and ack.ok and ack.buffer_free == 256 - 11
        env = wire.pb().Envelope()
        env.seq = 12
        env.start.goal_id = 99
        send(sock, env)
        ack = read_until(sock, "ack").ack
        assert ack.seq == 12 and not ack.ok and ack.code == wire.pb().UNKNOWN_GOAL
        assert "goal 99" in ack.reason
        env = wire.pb().Envelope()
        env.seq = 13
        env.feedback.goal_id = 1                  # a board message sent by the host
        send(sock, env)
        ack = read_until(sock, "ack").ack
        assert ack.seq == 13 and ack.code == wire.pb().BAD_REQUEST


def test_garbage_frame_is_reported_and_nothing_executes(board_factory):
    server = board_factory(seed_config(1))
    with connect(server) as sock:
        read_env(sock)
        sock.sendall(wire.encode_frame(b"\xff\xff\xff\xff garbage"))
        fault = read_until(sock, "fault").fault
        assert fault.code == wire.pb().PROTOCOL_ERROR and "garbage frame" in fault.text
        # the connection survives a garbage frame whose length was sound
        env = wire.pb().Envelope()
        env.seq = 5
        env.reset_faults.SetInParent()
        send(sock, env)
        assert read_until(sock, "ack").ack.ok
    assert server.backend.pulse_total == [0]


def test_oversized_frame_closes_the_connection(board_factory):
    server = board_factory(seed_config(1))
    with connect(server) as sock:
        read_env(sock)
        sock.sendall(struct.pack("<i", 50_000_000))
        fault = read_until(sock, "fault").fault
        assert "announces 50000000 bytes; the limit is 1048576" in fault.text
        with pytest.raises(wire.ConnectionClosed):
            for _ in range(1000):
                read_env(sock)
    assert server.backend.pulse_total == [0]


def test_short_frame_executes_nothing(board_factory):
    server = board_factory(seed_config(1))
    env = segment_env(1, 0, min_jerk([0.0], [0.2], 1.0), True, seq=1)
    data = wire.encode_frame(env.SerializeToString())
    with connect(server) as sock:
        read_env(sock)
        sock.sendall(data[:len(data) // 2])
        # end the stream there (FIN): a bare close with the board's feedback still unread would
        # reset the connection, and a reset may discard the half frame before the board reads it
        sock.shutdown(socket.SHUT_WR)
        assert wait_until(lambda: any("short frame" in e for e in server.errors))
    assert server.core.pending is None and server.core.active is None
    assert server.backend.pulse_total == [0]


# ---- original protocol -------------------------------------------------------------------------------

def seed_bytes(seed_pb, pts, with_derivatives=False):
    msg = seed_pb.JointTrajectoryPoints()
    for pt in pts:
        p = msg.points.add()
        p.positions.extend(pt.p.tolist())
        if with_derivatives:
            p.velocities.extend(pt.v.tolist())
            p.accelerations.extend(pt.a.tolist())
        p.time_frome_start = pt.t
    return msg.SerializeToString()


def test_seed_protocol_executes_one_trajectory_per_connection(board_factory, seed_pb):
    server = board_factory(seed_config(2), protocol="seed")
    spr = server.config.axes[0].steps_per_unit
    payload = seed_bytes(seed_pb, min_jerk([0.0, 0.0], [0.3, -0.1], 1.0, n=41))
    with connect(server) as sock:
        sock.sendall(struct.pack("<i", len(payload)) + payload)
        # nothing comes back; the board closes once the trajectory has run
        assert sock.recv(100) == b""
    assert server.backend.steps_at(0, server.clock.now()) == round(0.3 * spr)
    assert server.backend.steps_at(1, server.clock.now()) == round(-0.1 * spr)
    # a second trajectory continues from there
    payload = seed_bytes(seed_pb, min_jerk([0.3, -0.1], [0.0, 0.0], 1.0, n=41), with_derivatives=True)
    with connect(server) as sock:
        sock.sendall(struct.pack("<i", len(payload)) + payload)
        assert sock.recv(100) == b""
    assert server.backend.steps_at(0, server.clock.now()) == 0
    assert server.errors == []


@pytest.mark.parametrize("case", ["oversized", "garbage", "short", "negative"])
def test_seed_protocol_bad_frames_execute_nothing(board_factory, seed_pb, case):
    server = board_factory(seed_config(1), protocol="seed")
    good = seed_bytes(seed_pb, min_jerk([0.0], [0.3], 1.0, n=11))
    with connect(server) as sock:
        if case == "oversized":
            sock.sendall(struct.pack("<i", 65537) + b"\0" * 100)
        elif case == "negative":
            sock.sendall(struct.pack("<i", -5))
        elif case == "garbage":
            junk = b"\xff" * 40
            sock.sendall(struct.pack("<i", len(junk)) + junk)
        else:
            sock.sendall(struct.pack("<i", len(good)) + good[:-7])
            sock.shutdown(socket.SHUT_WR)
        sock.settimeout(15.0)
        assert sock.recv(100) == b""            # the board closes the connection
    expected = {"oversized": "buffer is not enough", "negative": "announces -5 bytes",
                "garbage": "deserialization failed", "short": "short frame"}[case]
    assert wait_until(lambda: any(expected in e for e in server.errors)), server.errors
    assert server.backend.pulse_total == [0] and server.core.active is None
