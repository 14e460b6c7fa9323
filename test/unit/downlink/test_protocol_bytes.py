"""The wire format, byte for byte, and its compatibility with the original board program's own .proto."""
from __future__ import annotations

import socket
import struct

import pytest

from rospy_control.board import wire

# Point{positions: [1.0], time_frome_start: 0.5}, computed by hand from the protobuf encoding rules:
#   field 1 (packed doubles): tag 0x0A, length 8, 1.0 as little-endian IEEE 754
#   field 4 (double):         tag 0x21 (4 << 3 | 1), 0.5 as little-endian IEEE 754
POINT = bytes.fromhex("0a08" "000000000000f03f" "21" "000000000000e03f")
# JointTrajectoryPoints{points: [that]}: field 1 (message), tag 0x0A, length 19
POINTS = bytes.fromhex("0a13") + POINT
# the frame: 4-byte little-endian length 21, then the bytes
FRAME = bytes.fromhex("15000000") + POINTS


def small_points(module):
    msg = module.JointTrajectoryPoints()
    p = msg.points.add()
    p.positions.append(1.0)
    p.time_frome_start = 0.5
    return msg


def test_seed_messages_byte_exact():
    msg = small_points(wire.pb())
    assert msg.points[0].SerializeToString() == POINT
    assert msg.SerializeToString() == POINTS
    assert wire.encode_frame(msg.SerializeToString()) == FRAME


def test_envelope_byte_exact():
    pb = wire.pb()
    env = pb.Envelope()
    env.seq = 1
    env.cancel.goal_id = 7
    # seq: field 1 varint (08 01); cancel: field 7 message (3a, length 2) holding goal_id 7 (08 07)
    assert env.SerializeToString() == bytes.fromhex("0801" "3a02" "0807")
    env = pb.Envelope()
    env.heartbeat.time_us = 300
    # heartbeat: field 8 message (42, length 3) holding time_us = 300 as a varint (08 ac 02)
    assert env.SerializeToString() == bytes.fromhex("4203" "08ac02")
    env = pb.Envelope()
    env.seq = 2
    env.segment.goal_id = 3
    env.segment.points.CopyFrom(small_points(pb))
    env.segment.last = True
    # segment: field 5 (2a); inside: goal_id (08 03), points (1a 15 + the 21 bytes), last (20 01)
    inner = bytes.fromhex("0803") + bytes.fromhex("1a15") + POINTS + bytes.fromhex("2001")
    assert env.SerializeToString() == bytes.fromhex("0802") + bytes([0x2A, len(inner)]) + inner


def test_the_seeds_own_proto_parses_what_we_send(seed_pb):
    ours = wire.pb().JointTrajectoryPoints()
    for k in range(3):
        p = ours.points.add()
        p.positions.extend([0.1 * k, -0.2 * k, 3.0])
        p.velocities.extend([0.5, 0.0, -1.0])
        p.accelerations.extend([1.0, 2.0, 3.0])
        p.time_frome_start = 0.25 * k
    data = ours.SerializeToString()
    theirs = seed_pb.JointTrajectoryPoints()
    theirs.ParseFromString(data)
    assert len(theirs.points) == 3
    for a, b in zip(ours.points, theirs.points):
        assert list(a.positions) == list(b.positions)
        assert list(a.velocities) == list(b.velocities)
        assert list(a.accelerations) == list(b.accelerations)
        assert a.time_frome_start == b.time_frome_start
    assert theirs.SerializeToString() == data          # and the same bytes back
    assert small_points(seed_pb).SerializeToString() == POINTS


def test_seed_size_per_point_matches_the_spec():
    """About 162 bytes per six-joint point with velocities and accelerations (spec section 0)."""
    msg = wire.pb().JointTrajectoryPoints()
    for k in range(1, 11):
        p = msg.points.add()
        p.positions.extend([0.1] * 6)
        p.velocities.extend([0.1] * 6)
        p.accelerations.extend([0.1] * 6)
        p.time_frome_start = k * 0.1
    assert msg.ByteSize() == 10 * 162
    from rospy_control.downlink.seed import seed_message_size
    assert seed_message_size(10, 6, derivatives=True) == 10 * 162
    assert wire.SEED_MAX_BYTES // 162 == 404


def test_frames_over_a_socket():
    a, b = socket.socketpair()
    with a, b:
        a.sendall(FRAME[:3])
        a.sendall(FRAME[3:10])
        a.sendall(FRAME[10:])                  # a frame may arrive in pieces: read until complete
        assert wire.read_frame(b, 100) == POINTS
        a.sendall(struct.pack("<i", 101))
        with pytest.raises(wire.ProtocolError, match="announces 101 bytes; the limit is 100"):
            wire.read_frame(b, 100, "host x")
        a.sendall(struct.pack("<i", -1))
        with pytest.raises(wire.ProtocolError, match="announces -1 bytes"):
            wire.read_frame(b, 100)
        a.sendall(struct.pack("<i", 10) + b"12345")
        a.shutdown(socket.SHUT_WR)
        with pytest.raises(wire.ConnectionClosed, match="after 5 of 10 bytes"):
            wire.read_frame(b, 100)


def test_a_peer_that_resets_the_connection_ends_the_stream_as_a_close_does():
    """A host that closes with the board's frames unread makes its kernel reset the connection; the
    reader gets that as ConnectionClosed (what it handles), never as a bare socket error."""
    import select
    import time
    with socket.create_server(("127.0.0.1", 0)) as server:
        host = socket.create_connection(server.getsockname())
        board, _ = server.accept()
        with board:
            board.sendall(b"feedback the host never reads")
            select.select([host], [], [], 5.0)           # it has arrived: unread at the close below
            host.sendall(struct.pack("<i", 10) + b"12345")
            host.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            host.close()                                  # RST, not FIN
            time.sleep(0.05)
            with pytest.raises(wire.ConnectionClosed, match="connection reset|short frame"):
                for _ in range(3):
                    wire.read_frame(board, 100)


def test_garbage_and_empty_envelopes():
    with pytest.raises(wire.ProtocolError, match="garbage frame from board"):
        wire.decode_envelope(b"\xff\xff\xff", "board")
    with pytest.raises(wire.ProtocolError, match="carries no known message"):
        wire.decode_envelope(b"", "board")


def test_generated_code_is_not_newer_than_the_runtime():
    import google.protobuf
    module = wire.pb()
    runtime = tuple(int(x) for x in google.protobuf.__version__.split(".")[:2])
    src = open(module.__file__).read()
    # protoc >= 26 writes a runtime_version check; the system protoc of our targets never does
    assert "runtime_version" not in src or runtime >= (5, 26)
    assert module.DESCRIPTOR.package == "rospy_control.downlink"


def test_homing_frames_byte_exact():
    """Home / HomeDone and the hello's homing fields, computed by hand from the encoding rules."""
    pb = wire.pb()
    env = pb.Envelope()
    env.seq = 3
    env.home.axes.append("j1")
    # seq (08 03); home: field 14 message (tag 14 << 3 | 2 = 0x72, length 4) holding axes "j1" (0a 02 6a 31)
    assert env.SerializeToString() == bytes.fromhex("0803" "7204" "0a026a31")
    env = pb.Envelope()
    env.seq = 4
    env.home.SetInParent()          # every axis with a homing switch: an empty Home
    assert env.SerializeToString() == bytes.fromhex("0804" "7200")
    env = pb.Envelope()
    done = env.home_done
    done.ok = True
    done.code = pb.HOME_SWITCH_NOT_FOUND
    done.text = "x"
    done.axes.append("j1")
    done.positions.append(0.5)
    done.board_time_us = 300
    # ok (08 01), code 29 (10 1d), text (1a 01 78), axes (22 02 6a 31), positions packed (2a 08 + 0.5),
    # board_time_us 300 (30 ac 02); home_done is field 15 (0x7a)
    inner = bytes.fromhex("0801" "101d" "1a0178" "22026a31" "2a08000000000000e03f" "30ac02")
    assert env.SerializeToString() == bytes([0x7A, len(inner)]) + inner
    assert wire.encode_frame(env.SerializeToString())[:4] == struct.pack("<i", 2 + len(inner))
    hello = pb.Hello()
    hello.features.append("home")
    axis = hello.axes.add()
    axis.homeable = True
    # axes: field 4 (22 02) holding homeable, field 10 varint (50 01); features: field 11 (5a 04 "home")
    assert hello.SerializeToString() == bytes.fromhex("2202" "5001" "5a04") + b"home"
    assert (pb.Code.Value("HOMING_ACTIVE"), pb.Code.Value("HOMING_ABORTED"),
            pb.State.Value("HOMING")) == (9, 30, 5)
