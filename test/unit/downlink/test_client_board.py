"""BoardClient against the board program over loopback TCP (127.0.0.1), judged in board-clock terms."""
from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from rospy_control.board import core as C
from rospy_control.board.config import AxisConfig, BoardConfig, seed_config
from rospy_control.board.core import TrajPoint
from rospy_control.board.server import BoardClock
from rospy_control.board import wire
from rospy_control.downlink.client import BoardClient, BoardUnavailable, TrajectoryInvalid

from downlink_testutil import min_jerk, wait_until

JOINTS = [f"joint_{i}" for i in range(1, 7)]


@pytest.fixture
def clients():
    made = []

    def factory(server, **kw):
        c = BoardClient("127.0.0.1", server.address[1], **kw).connect()
        made.append(c)
        return c

    yield factory
    for c in made:
        c.close()


def board(board_factory, **cfg):
    clock = BoardClock(offset=1000.0, drift_ppm=100.0)       # a clock unlike the host's
    return board_factory(seed_config(6, **cfg), clock=clock)


def test_hello_and_clock_sync(board_factory, clients):
    server = board(board_factory)
    client = clients(server)
    assert client.axis_names == JOINTS and client.hello.buffer_capacity == 256
    assert client.sync.synced
    for _ in range(5):
        client.sync_once()
    # the estimate against the board's own clock, read at (nearly) the same instant
    errs = []
    for _ in range(5):
        before = server.clock.now()
        est = client.board_now()
        after = server.clock.now()
        errs.append(max(est - after, before - est, 0.0))
    assert min(errs) < 0.02, errs               # generous: the host is noisy
    assert client.sync.uncertainty < 0.1


def test_streamed_goal_executes_before_it_has_fully_arrived(board_factory, clients):
    # 0.8 s of buffer and a 0.3 s start lead: a host descheduled for 250 ms (as this one can be
    # while other tests start) must not starve the board, yet 3 s of points cannot fit at once
    server = board(board_factory, buffer_capacity=80)
    client = clients(server, chunk_points=10, start_lead=0.3)
    target = np.array([0.5, -0.3, 0.2, 0.0, 0.1, -0.6])
    pts = min_jerk(np.zeros(6), target, 3.0, n=301)          # 301 points, 10 ms apart
    handle = client.execute(JOINTS, pts)
    assert handle.wait(30.0) == "SUCCEEDED", (handle.result, handle.text)
    spr = server.config.axes[0].steps_per_unit
    now = server.clock.now()
    assert [server.backend.steps_at(i, now) for i in range(6)] == [round(x * spr) for x in target]
    first_pulse = min(server.backend.pulses(i)[0][0] for i in (0, 1, 2, 4, 5))
    # the first pulse went out (board clock) before the last segment was acked
    assert handle.stream_done_at is not None
    assert first_pulse < client.sync.board_time(handle.stream_done_at)
    assert handle.segments_sent > 20
    assert first_pulse >= handle.start_board_time


def test_stamp_schedules_the_start_on_the_boards_clock(board_factory, clients):
    server = board(board_factory)
    client = clients(server)
    stamp = client.clock() + 0.6
    handle = client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 0.1), 0.5, n=11), stamp=stamp)
    assert handle.start_board_time == pytest.approx(client.sync.board_time(stamp), abs=1e-5)
    assert handle.wait(15.0) == "SUCCEEDED"
    first = min(server.backend.pulses(i)[0][0] for i in range(6))
    assert first >= handle.start_board_time


def test_feedback_is_board_stamped_and_current(board_factory, clients):
    server = board(board_factory)
    client = clients(server)
    handle = client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 0.4), 2.0, n=41))
    assert wait_until(lambda: (client.latest_feedback() or None) is not None and
                      client.latest_feedback().state == "EXECUTING")
    fbs = []
    for _ in range(20):
        fbs.append(client.latest_feedback())
        time.sleep(0.02)
    assert all(fb.goal_id == handle.goal_id for fb in fbs if fb.state == "EXECUTING")
    times = [fb.board_time for fb in fbs]
    assert times == sorted(times) and times[-1] > times[0]
    fb = fbs[-1]
    assert len(fb.desired) == len(fb.actual) == len(fb.steps) == 6
    assert np.max(np.abs(np.array(fb.desired) - np.array(fb.actual))) < 2.0 / 2291.8
    assert abs(fb.time_from_start - (fb.board_time - handle.start_board_time)) < 1e-5
    assert client.hello.feedback_rate >= 100
    assert handle.wait(15.0) == "SUCCEEDED"


def test_cancel_decelerates_and_is_acknowledged(board_factory, clients):
    server = board(board_factory)
    client = clients(server)
    # long, so that a stalled host does not see it finish before the cancel
    handle = client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 1.5), 8.0, n=161))
    assert wait_until(lambda: client.latest_feedback() is not None
                      and client.latest_feedback().time_from_start > 1.5)
    stop_host = client.cancel(handle.goal_id)
    assert handle.wait(10.0) == "CANCELED"
    stop_board = client.sync.board_time(stop_host)
    ramp = [s for s in list(server.core.history) + server.core.plan if s.kind == "ramp"][-1]
    assert ramp.t1 == pytest.approx(stop_board, abs=0.02)
    acc = ramp.eval(np.linspace(ramp.t0, ramp.t1, 20), 2)
    assert np.all(np.abs(acc) <= 10.0 + 1e-9)
    times, _ = server.backend.pulses(0)
    assert times[-1] <= ramp.t1 + 1e-6
    spr = server.config.axes[0].steps_per_unit
    assert server.backend.steps_at(0, server.clock.now()) < round(1.5 * spr)


def test_a_new_goal_replaces_the_running_one(board_factory, clients):
    server = board(board_factory)
    client = clients(server)
    first = client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 1.0), 8.0, n=161))
    assert wait_until(lambda: client.latest_feedback() is not None
                      and client.latest_feedback().time_from_start > 1.0)
    stamp = client.clock() + 0.3
    # no point at 0: the board leads in from its state at the splice to the first point, 1 s later
    pts = [TrajPoint(1.0, np.full(6, 0.6), np.zeros(6), np.zeros(6))] + \
        min_jerk(np.full(6, 0.6), np.full(6, -0.2), 2.0, n=41, t_offset=1.0)[1:]
    second = client.execute(JOINTS, pts, stamp=stamp)
    assert first.wait(5.0) == "PREEMPTED"
    assert second.wait(15.0) == "SUCCEEDED"
    spr = server.config.axes[0].steps_per_unit
    assert server.backend.steps_at(3, server.clock.now()) == round(-0.2 * spr)
    segs = list(server.core.history) + server.core.plan
    lead = [seg for seg in segs if abs(seg.t0 - second.start_board_time) < 1e-9 and seg.kind == "quintic"]
    assert len(lead) == 1 and lead[0].t1 == pytest.approx(second.start_board_time + 1.0)


def test_a_goal_still_streaming_is_replaced(board_factory, clients):
    server = board(board_factory, buffer_capacity=30)          # 0.6 s of these points
    client = clients(server, chunk_points=10, start_lead=0.3)   # room for a 250 ms host stall at start
    first = client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 1.0), 8.0, n=401))   # streams for 7 s
    assert wait_until(lambda: client.latest_feedback() is not None
                      and client.latest_feedback().time_from_start > 0.5)
    assert first.stream_done_at is None
    here = np.array(client.latest_feedback().desired)
    pts = [TrajPoint(1.0, np.full(6, 0.2), np.zeros(6), np.zeros(6)),
           TrajPoint(2.0, np.full(6, 0.1), np.zeros(6), np.zeros(6))]
    assert np.all(here < 0.2)
    second = client.execute(JOINTS, pts, stamp=client.clock() + 0.2)
    assert first.wait(5.0) == "PREEMPTED"
    assert second.wait(15.0) == "SUCCEEDED", (second.result, second.text)
    spr = server.config.axes[0].steps_per_unit
    assert server.backend.steps_at(0, server.clock.now()) == round(0.1 * spr)
    assert server.core.fault is None


def test_invalid_trajectories_are_refused_before_sending(board_factory, clients):
    # velocity allowed up to 10 rad/s: the step rate (8000 pulses/s = 3.5 rad/s) is the binding limit
    server = board_factory(BoardConfig([AxisConfig(j, max_velocity=10.0) for j in JOINTS]))
    client = clients(server)
    with pytest.raises(TrajectoryInvalid) as err:
        client.execute(JOINTS, min_jerk(np.zeros(6), np.array([0, 0, 5.0, 0, 0, 0]), 2.0))
    text = str(err.value)
    assert "axis 'joint_3'" in text and "max_step_rate 8000" in text
    assert "'trajectory_board' (127.0.0.1:" in text
    with pytest.raises(TrajectoryInvalid, match="joint 'elbow' is not an axis of board"):
        client.execute(JOINTS[:5] + ["elbow"], min_jerk(np.zeros(6), np.zeros(6), 1.0))
    with pytest.raises(TrajectoryInvalid, match="leaves axis/axes joint_6 out"):
        client.execute(JOINTS[:5], min_jerk(np.zeros(5), np.zeros(5), 1.0))
    dense = min_jerk(np.zeros(6), np.full(6, 0.01), 0.5, n=1000)    # 0.5 ms apart
    with pytest.raises(TrajectoryInvalid, match="buffer_capacity=256"):
        client.execute(JOINTS, dense)
    assert server.core.pending is None and server.core.active is None
    assert server.backend.pulse_total == [0] * 6


def test_board_fault_aborts_the_goal_with_its_code(board_factory, clients):
    server = board(board_factory)
    client = clients(server)
    handle = client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 1.0), 3.0, n=61))
    assert wait_until(lambda: client.latest_feedback() is not None
                      and client.latest_feedback().state == "EXECUTING")
    with server.lock:
        server.core.raise_fault(C.LIMIT_SWITCH, "limit switch of axis 'joint_2' tripped", server.clock.now(),
                                "joint_2")
    assert handle.wait(10.0) == "ABORTED"
    assert handle.code == "LIMIT_SWITCH" and "joint_2" in handle.text
    assert wait_until(lambda: any(f[0] == "LIMIT_SWITCH" and f[2] == "joint_2" for f in client.faults))
    with pytest.raises(wire.DownlinkError) as err:
        client.execute(JOINTS, min_jerk(np.full(6, 0.5), np.full(6, 0.6), 1.0))
    assert "FAULTED" == getattr(err.value, "code_name", "") or "holds fault" in str(err.value)
    assert wait_until(lambda: client.latest_feedback().state == "FAULT", timeout=10.0)
    client.reset_faults()
    assert wait_until(lambda: client.latest_feedback().state == "IDLE")


def test_host_silence_stops_the_board(board_factory):
    server = board_factory(seed_config(1, heartbeat_timeout=0.5))
    client = BoardClient("127.0.0.1", server.address[1], heartbeat_period=0.1).connect()
    try:
        handle = client.execute(["joint_1"], min_jerk([0.0], [1.0], 4.0, n=41))
        assert wait_until(lambda: client.latest_feedback() is not None
                          and client.latest_feedback().state == "EXECUTING")
        client._closing.set()                   # the host's heartbeats stop; the socket stays open
        assert handle.wait(10.0) == "ABORTED" and handle.code == "HOST_TIMEOUT"
        assert "host silent" in handle.text
        spr = server.config.axes[0].steps_per_unit
        assert wait_until(lambda: server.core.state_code(server.clock.now()) == C.FAULT)
        assert server.backend.steps_at(0, server.clock.now()) < round(spr)
    finally:
        client.close()


def test_silent_board_is_detected(clients):
    """A board that sends its hello and answers clock requests, then falls silent."""
    from rospy_control.board.server import BoardServer
    helper = BoardServer(seed_config(1))            # only to build a real hello; never started
    hello = helper.hello().SerializeToString()
    helper.stop()
    lsock = socket.socket()
    lsock.bind(("127.0.0.1", 0))
    lsock.listen(1)
    stop = threading.Event()

    def fake_board():
        conn, _ = lsock.accept()
        conn.sendall(wire.encode_frame(hello))
        t_end = time.monotonic() + 0.5
        conn.settimeout(0.1)
        while time.monotonic() < t_end:
            try:
                env = wire.decode_envelope(wire.read_frame(conn, 1 << 20))
            except socket.timeout:
                continue
            if env.WhichOneof("body") == "clock_request":
                reply = wire.pb().Envelope()
                reply.seq = env.seq
                reply.clock_reply.host_time_ns = env.clock_request.host_time_ns
                reply.clock_reply.board_time_us = int(time.monotonic() * 1e6)
                conn.sendall(wire.encode_frame(reply.SerializeToString()))
        stop.wait(10)                               # silent, connection open
        conn.close()

    th = threading.Thread(target=fake_board, daemon=True)
    th.start()
    client = BoardClient("127.0.0.1", lsock.getsockname()[1], board_timeout=0.6,
                         heartbeat_period=0.05).connect()
    try:
        assert client.connected
        assert wait_until(lambda: not client.connected, timeout=10.0)
        assert any(f[0] == "CONNECTION_LOST" and "silent for more than 0.60 s" in f[1] for f in client.faults)
        with pytest.raises(BoardUnavailable):
            client.cancel()
    finally:
        client.close()
        stop.set()
        lsock.close()
        th.join(5)


def test_reconnects_after_the_board_restarts(board_factory):
    server = board_factory(seed_config(2))
    port = server.address[1]
    # board_timeout stays at its default (1 s): shorter, a loaded host's scheduling gaps would drop the
    # connection spuriously; the board's restart is seen at once anyway (the socket closes)
    client = BoardClient("127.0.0.1", port, auto_reconnect=True, heartbeat_period=0.05).connect()
    try:
        server.stop()
        assert wait_until(lambda: not client.connected, timeout=10.0)
        again = board_factory(seed_config(2), port=port)
        assert wait_until(lambda: client.connected, timeout=15.0)
        handle = client.execute(["joint_1", "joint_2"], min_jerk([0, 0], [0.1, 0.1], 0.5, n=11))
        assert handle.wait(10.0) == "SUCCEEDED", (handle.result, handle.text, client.faults)
        spr = again.config.axes[0].steps_per_unit
        assert again.backend.steps_at(0, again.clock.now()) == round(0.1 * spr)
    finally:
        client.close()


class _SlowSyncClient(BoardClient):
    """Each clock round trip takes 20 ms longer; records whether the client said it was connected
    while one ran."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.connected_while_syncing = []

    def sync_once(self):
        self.connected_while_syncing.append(self.connected)
        time.sleep(0.02)
        return super().sync_once()


def test_connected_only_once_the_clocks_are_synchronised(board_factory):
    """A goal sent the moment a (re)connection is seen needs the board's time: ``connected`` waits for
    the clock synchronisation, on the first connection and on a reconnection alike."""
    server = board_factory(seed_config(2))
    port = server.address[1]
    client = _SlowSyncClient("127.0.0.1", port, auto_reconnect=True, heartbeat_period=0.05).connect()
    try:
        assert client.connected and client.sync.synced
        server.stop()
        assert wait_until(lambda: not client.connected, timeout=10.0)
        client.connected_while_syncing.clear()
        board_factory(seed_config(2), port=port)
        assert wait_until(lambda: client.connected, timeout=15.0)
        assert client.sync.synced
        client.board_now()  # the board's time is known
        assert len(client.connected_while_syncing) >= 8
        assert not any(client.connected_while_syncing[:8]), client.connected_while_syncing
    finally:
        client.close()


def test_connection_cut_mid_goal_aborts_the_board_ramps_to_a_stop_and_the_host_reconnects(board_factory):
    server = board(board_factory)
    client = BoardClient("127.0.0.1", server.address[1], auto_reconnect=True, heartbeat_period=0.05).connect()
    try:
        handle = client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 1.0), 4.0, n=81))
        assert wait_until(lambda: client.latest_feedback() is not None
                          and client.latest_feedback().time_from_start > 0.3)
        assert server.drop_host()                # the network drops: the socket goes, no goodbye
        assert handle.wait(10.0) == "ABORTED" and handle.code == "CONNECTION_LOST"
        assert f"board '{server.config.name}'" in handle.text, handle.text
        assert "connection lost" in handle.text, handle.text
        # the board ramped to a stop by itself, short of the goal, and latched the fault
        with server.lock:
            assert server.core.fault is not None and server.core.fault[0] == C.CONNECTION_LOST
            assert server.core.active is None
        spr = server.config.axes[0].steps_per_unit
        assert wait_until(lambda: server.core.state_code(server.clock.now()) == C.FAULT)
        stopped = server.backend.steps_at(0, server.clock.now())
        assert 0 < stopped < round(0.9 * spr)
        # the host reconnects by itself and sees the latched fault; a reset clears it; goals run again
        assert wait_until(lambda: client.connected, timeout=15.0)
        assert wait_until(lambda: client.latest_feedback().fault == "CONNECTION_LOST", timeout=10.0)
        assert server.backend.steps_at(0, server.clock.now()) == stopped
        assert wait_until(lambda: _reset(client), timeout=10.0)
        here = np.array(client.latest_feedback().actual)
        again = client.execute(JOINTS, min_jerk(here, here - 0.1, 0.5, n=11))
        assert again.wait(10.0) == "SUCCEEDED", (again.result, again.text)
    finally:
        client.close()


def _reset(client) -> bool:
    try:
        client.reset_faults()                   # refused while the board still decelerates
    except wire.DownlinkError:
        return False
    return True


def test_a_host_reconnecting_over_a_dead_connection_stops_the_goal_it_left(board_factory, clients):
    """A host that gave up on a connection the board still thinks alive (a network drop: no FIN reached
    the board) has aborted its goals; when it reconnects, the board ramps them to a stop rather than
    running on unsupervised."""
    server = board(board_factory)
    client = clients(server)
    client.execute(JOINTS, min_jerk(np.zeros(6), np.full(6, 1.0), 4.0, n=81))
    assert wait_until(lambda: client.latest_feedback() is not None
                      and client.latest_feedback().time_from_start > 0.3)
    new = socket.create_connection(server.address)     # the host again, over a new connection
    try:
        env = wire.decode_envelope(wire.read_frame(new, 1 << 20))
        assert env.WhichOneof("body") == "hello"
        assert wait_until(lambda: server.core.state_code(server.clock.now()) == C.FAULT)
        with server.lock:
            assert server.core.fault[0] == C.CONNECTION_LOST and server.core.active is None
        spr = server.config.axes[0].steps_per_unit
        assert server.backend.steps_at(0, server.clock.now()) < round(0.9 * spr)
    finally:
        new.close()


def test_unreachable_board():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    with pytest.raises(BoardUnavailable, match=f"board at 127.0.0.1:{port}: cannot connect"):
        BoardClient("127.0.0.1", port, connect_timeout=1.0).connect()
