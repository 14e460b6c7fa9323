"""The board program's TCP server: the full protocol (one host connection at a time) or the original
board program's.

Threads: an acceptor, one reader per connection, and the executor, which every ``tick`` checks the
host's heartbeat and the goals, generates the pulses up to ``now + lookahead`` on the board's clock,
sends the goal and fault reports and, at ``feedback_rate``, a Feedback.  The :class:`BoardCore` is
guarded by one lock; sockets are written outside it.
"""
from __future__ import annotations

import copy
import logging
import socket
import struct
import threading
import time
from typing import Callable, List, Optional

from . import wire
from .backends import PulseBackend, SimBackend
from .config import BoardConfig
from rospy_control.hardware_config.board import protocol_name
from .core import (BAD_REQUEST, BoardCore, Nack, OK, PROTOCOL_ERROR, START_MISMATCH, TrajPoint)
from .homing import FEATURE as HOME_FEATURE
from rospy_control.realtime import start_thread

log = logging.getLogger("rospy_control.board")

FIRMWARE = "rospy_control trajectory_board 1"
SEED_RECEIVE_TIMEOUT = 10.0      # s, as the original board program waits for a trajectory's bytes


class BoardClock:
    """The board's clock in seconds: monotonic, starting at 1 s (0 means "as soon as possible" on the
    wire), with an optional offset and drift so tests see a clock unlike the host's."""

    def __init__(self, offset: float = 0.0, drift_ppm: float = 0.0,
                 source: Callable[[], float] = time.monotonic) -> None:
        self._source = source
        self._base = source()
        self.offset = offset
        self.rate = 1.0 + drift_ppm * 1e-6

    def now(self) -> float:
        return 1.0 + self.offset + (self._source() - self._base) * self.rate


def to_us(t: float) -> int:
    return max(0, int(round(t * 1e6)))


def points_from_pb(msg) -> List[TrajPoint]:
    return [TrajPoint(p.time_frome_start, list(p.positions), list(p.velocities), list(p.accelerations))
            for p in msg.points]


class BoardServer:
    def __init__(self, config: BoardConfig, backend: Optional[PulseBackend] = None, protocol: str = "full",
                 bind: str = "127.0.0.1", port: int = 0, clock: Optional[BoardClock] = None,
                 tick: float = 0.002, lookahead: float = 0.0, sample_dt: float = 50e-6) -> None:
        protocol = protocol_name(protocol)       # :raises ValueError: not a board protocol
        if protocol == "original":
            # the original board program holds a whole trajectory of up to 64 KiB (about 3000 points of
            # one axis, 1000 of six): that, not the streaming window, is its buffer
            min_capacity = wire.SEED_MAX_BYTES // 20
            if config.buffer_capacity < min_capacity:
                config = copy.copy(config)
                config.buffer_capacity = min_capacity
        self.config = config
        self.backend = backend if backend is not None else SimBackend(config.axes)
        self.protocol = protocol
        self.clock = clock if clock is not None else BoardClock()
        self.backend.clock = self.clock.now
        self.tick = tick
        self.lookahead = lookahead
        self.lock = threading.RLock()
        self.core = BoardCore(config, self.backend, t0=self.clock.now(), sample_dt=sample_dt)
        self.watch_host = protocol == "full"
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind((bind, port))
        self._sock.listen(4)
        self.address = self._sock.getsockname()
        self._stop = threading.Event()
        self._conn: Optional[socket.socket] = None
        self._conn_lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._threads: List[threading.Thread] = []
        self.errors: List[str] = []          # every protocol error seen (also logged)
        self._seed_goal = 0
        self._next_feedback = 0.0
        self.first_pulse_time: Optional[float] = None

    # ---- life cycle ------------------------------------------------------------------------------

    def start(self) -> "BoardServer":
        for target, name in ((self._accept_loop, "accept"), (self._executor_loop, "executor")):
            self._threads.append(start_thread(target, f"board.{name}"))
        return self

    def stop(self) -> None:
        self._stop.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)      # wakes the accept() of the acceptor thread
        except OSError:
            pass
        self._sock.close()
        with self._conn_lock:
            if self._conn is not None:
                self._close(self._conn)
        for th in list(self._threads):
            if th is not threading.current_thread():
                th.join(timeout=5.0)
        self.backend.close()

    def __enter__(self) -> "BoardServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @staticmethod
    def _close(conn: socket.socket) -> None:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        conn.close()

    def _error(self, text: str) -> None:
        self.errors.append(text)
        log.error("%s", text)

    def inject_fault(self, code: str, axis: str = "", text: str = "") -> None:
        """Latch a fault as the hardware would raise it (a limit switch, a driver alarm): for tests and
        bench checks of the fault path (``trajectory_board --fault-file``).  ``code`` is a fault name
        of the protocol's Code (LIMIT_SWITCH, DRIVER_ALARM, FOLLOWING_ERROR, STEP_RATE, ...)."""
        pb = wire.pb()
        try:
            value = pb.Code.Value(code)
        except ValueError:
            raise ValueError(f"unknown fault code {code!r}; expected one of "
                             f"{', '.join(pb.Code.keys())}") from None
        if axis and axis not in [a.name for a in self.config.axes]:
            raise ValueError(f"unknown axis {axis!r}; the board's axes: "
                             f"{', '.join(a.name for a in self.config.axes)}")
        what = text or f"{code.lower().replace('_', ' ')} (injected)"
        with self.lock:
            self.core.raise_fault(value, f"axis {axis!r}: {what}" if axis else what, self.clock.now(), axis)

    def drop_host(self) -> bool:
        """Cut the host's connection as a network drop would: ``shutdown(SHUT_RDWR)`` and close, with no
        goodbye on the wire.  A test hook (``trajectory_board --fault-file`` with ``DISCONNECT``) for the
        path a real drop takes: the board ramps a running goal to a stop and latches CONNECTION_LOST;
        the host sees the connection lost.  Returns whether a host was connected."""
        with self._conn_lock:
            conn, self._conn = self._conn, None
        if conn is None:
            return False
        self._close(conn)
        with self.lock:
            self.core.host_disconnected(self.clock.now())
        return True

    # ---- executor --------------------------------------------------------------------------------

    def _executor_loop(self) -> None:
        period = 1.0 / self.config.feedback_rate
        while not self._stop.is_set():
            out = []
            with self.lock:
                now = self.clock.now()
                if not self.watch_host:
                    self.core.last_host = now
                self.core.check(now)
                if now > self.core.t_done + 0.05:
                    self.core.late_chunks += 1           # a real back-end would have pulsed late
                self.core.advance(now + self.lookahead)
                events = self.core.take_events()
                if self.protocol == "full":
                    for ev in events:
                        out.append(self._event_envelope(ev))
                    # on a fixed grid of the board's clock: a late cycle is made up, not accumulated
                    if now >= self._next_feedback:
                        self._next_feedback = max(self._next_feedback + period, now - period)
                        out.append(self._feedback_envelope(now))
                else:
                    for ev in events:
                        if ev[0] == "fault":
                            log.error("original protocol (the host cannot be told): %s", ev[2])
            conn = self._conn
            if conn is not None:
                for env in out:
                    self._send(conn, env)
            self._stop.wait(self.tick)

    def _event_envelope(self, ev):
        pb = wire.pb()
        env = pb.Envelope()
        if ev[0] == "goal_done":
            _, gid, result, code, text, t = ev
            env.goal_done.goal_id = gid
            env.goal_done.result = result
            env.goal_done.code = code
            env.goal_done.text = text
            env.goal_done.board_time_us = to_us(t)
        elif ev[0] == "home_done":
            _, ok, code, text, axes, positions, t = ev
            done = env.home_done
            done.ok = ok
            done.code = code
            done.text = text
            done.axes.extend(axes)
            done.positions.extend(positions)
            done.board_time_us = to_us(t)
        else:
            _, code, text, axis, t = ev
            env.fault.code = code
            env.fault.text = text
            env.fault.axis = axis
            env.fault.board_time_us = to_us(t)
        return env

    def _feedback_envelope(self, now: float):
        fb = self.core.feedback(now)
        env = wire.pb().Envelope()
        f = env.feedback
        f.board_time_us = to_us(fb["board_time"])
        f.goal_id = fb["goal_id"]
        f.state = fb["state"]
        f.time_from_start = fb["time_from_start"]
        f.desired.extend(fb["desired"])
        f.actual.extend(fb["actual"])
        f.desired_velocity.extend(fb["desired_velocity"])
        f.steps.extend(fb["steps"])
        f.buffer_fill = fb["buffer_fill"]
        f.buffer_free = fb["buffer_free"]
        f.fault = fb["fault"]
        return env

    # ---- connections -----------------------------------------------------------------------------

    def _accept_loop(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self._sock.accept()
            except OSError:
                return
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            target = self._serve_full if self.protocol == "full" else self._serve_seed
            th = start_thread(target, "board.connection", args=(conn, f"{peer[0]}:{peer[1]}"))
            self._threads = [t for t in self._threads if t.is_alive()] + [th]

    def _send(self, conn: socket.socket, env) -> bool:
        data = wire.encode_frame(env.SerializeToString())
        with self._send_lock:
            try:
                conn.sendall(data)
                return True
            except OSError:
                return False

    def hello(self):
        pb = wire.pb()
        env = pb.Envelope()
        h = env.hello
        h.protocol_version = wire.PROTOCOL_VERSION
        h.board_name = self.config.name
        h.firmware = FIRMWARE + f" ({self.backend.name} pulses)"
        for ax in self.config.axes:
            a = h.axes.add()
            a.name = ax.name
            a.unit = ax.unit
            a.steps_per_unit = ax.steps_per_unit * ax.direction
            a.max_velocity = ax.max_velocity
            a.max_acceleration = ax.max_acceleration
            a.max_step_rate = ax.max_step_rate
            a.min_position = ax.min_position
            a.max_position = ax.max_position
            a.has_encoder = ax.encoder is not None
            a.homeable = ax.homing is not None
        h.buffer_capacity = self.config.buffer_capacity
        h.board_time_us = to_us(self.clock.now())
        h.heartbeat_timeout = self.config.heartbeat_timeout
        h.feedback_rate = self.config.feedback_rate
        h.max_frame_bytes = self.config.max_frame_bytes
        h.start_tolerance = self.config.start_tolerance
        h.features.append(HOME_FEATURE)
        return env

    def _serve_full(self, conn: socket.socket, peer: str) -> None:
        with self.lock:
            self.core.host_message(self.clock.now())
        self._send(conn, self.hello())            # first, before any feedback reaches this host
        with self._conn_lock:
            old, self._conn = self._conn, conn
        if old is not None:
            # a reconnecting host replaces a dead connection: that host gave up on what it sent over
            # the old one (it aborted its goals as lost), so a goal still running here ramps to a
            # stop as on any lost connection -- never runs on unsupervised under a host that
            # believes it stopped
            self._close(old)
            with self.lock:
                self.core.host_disconnected(self.clock.now())
        try:
            while not self._stop.is_set():
                try:
                    payload = wire.read_frame(conn, self.config.max_frame_bytes, f"host {peer}")
                    now = self.clock.now()
                    env = wire.decode_envelope(payload, f"host {peer}")
                except wire.ProtocolError as err:
                    self._error(f"board {self.config.name!r}: {err}")
                    reply = wire.pb().Envelope()
                    reply.fault.code = PROTOCOL_ERROR
                    reply.fault.text = f"board {self.config.name!r}: {err}; the frame was discarded"
                    reply.fault.board_time_us = to_us(self.clock.now())
                    self._send(conn, reply)
                    if "announces" in str(err):      # the stream cannot be re-synchronised
                        break
                    continue
                reply = self._handle(env, now)
                if reply is not None:
                    self._send(conn, reply)
        except wire.ConnectionClosed as err:
            if "short frame" in str(err):
                self._error(f"board {self.config.name!r}: {err}; nothing of it executes")
        except OSError:
            pass
        finally:
            with self._conn_lock:
                mine = self._conn is conn
                if mine:
                    self._conn = None
            self._close(conn)
            if mine:
                with self.lock:
                    self.core.host_disconnected(self.clock.now())

    def _ack(self, seq: int, ok: bool = True, code: int = OK, reason: str = "", time_us: int = 0):
        env = wire.pb().Envelope()
        env.ack.seq = seq
        env.ack.ok = ok
        env.ack.code = code
        env.ack.reason = reason
        env.ack.time_us = time_us
        with self.lock:
            env.ack.buffer_free = self.core.buffer_free(self.clock.now())
        return env

    def _handle(self, env, now: float):
        pb = wire.pb()
        kind = env.WhichOneof("body")
        seq = env.seq
        with self.lock:
            self.core.host_message(now)
        try:
            if kind == "heartbeat":
                reply = pb.Envelope()
                reply.heartbeat.time_us = to_us(self.clock.now())
                return reply
            if kind == "clock_request":
                reply = pb.Envelope()
                reply.seq = seq
                reply.clock_reply.host_time_ns = env.clock_request.host_time_ns
                reply.clock_reply.board_time_us = to_us(now)
                return reply
            with self.lock:
                if kind == "segment":
                    seg = env.segment
                    self.core.add_segment(seg.goal_id, seg.index, points_from_pb(seg.points), seg.last, now)
                    return self._ack(seq)
                if kind == "start":
                    ts = self.core.start(env.start.goal_id, env.start.start_time_us * 1e-6, self.clock.now())
                    return self._ack(seq, time_us=to_us(ts))
                if kind == "cancel":
                    t_end = self.core.cancel(env.cancel.goal_id, self.clock.now())
                    return self._ack(seq, time_us=to_us(t_end))
                if kind == "home":
                    self.core.home(list(env.home.axes), self.clock.now())
                    return self._ack(seq, time_us=to_us(self.clock.now()))
                if kind == "reset_faults":
                    self.core.reset_faults(self.clock.now())
                    return self._ack(seq)
            return self._ack(seq, False, BAD_REQUEST,
                             f"board {self.config.name!r}: {kind} is not a request a host sends")
        except Nack as nack:
            return self._ack(seq, False, nack.code, nack.reason)

    # ---- the original board program's protocol ------------------------------------------------------

    def _serve_seed(self, conn: socket.socket, peer: str) -> None:
        """One trajectory per connection: 4-byte LE length + JointTrajectoryPoints, nothing back."""
        name = self.config.name
        try:
            conn.settimeout(SEED_RECEIVE_TIMEOUT)
            try:
                head = wire.recv_exact(conn, 4, f"length from {peer}")
            except wire.ConnectionClosed:
                return
            (size,) = struct.unpack("<i", head)
            if size <= 0 or size > wire.SEED_MAX_BYTES:
                self._error(f"board {name!r} (original protocol): {peer} announces {size} bytes; the buffer "
                            f"holds {wire.SEED_MAX_BYTES} (buffer is not enough to hold the data); nothing "
                            f"executes")
                return
            try:
                payload = wire.recv_exact(conn, size, f"trajectory of {size} bytes from {peer}")
            except (wire.ConnectionClosed, socket.timeout) as err:
                self._error(f"board {name!r} (original protocol): {err or 'receive timed out'}; nothing "
                            "executes")
                return
            msg = wire.pb().JointTrajectoryPoints()
            try:
                msg.ParseFromString(payload)
            except Exception as err:
                self._error(f"board {name!r} (original protocol): deserialization failed for {size} bytes "
                            f"from {peer} ({err}); nothing executes")
                return
            points = points_from_pb(msg)
            with self.lock:
                now = self.clock.now()
                self._seed_goal += 1
                gid = self._seed_goal
                try:
                    core = self.core
                    begin = max(now, core.active.end) if core.active is not None and core.active.last else now
                    if points and points[0].t == 0.0 and len(points[0].p) == core.n:
                        final = core.plan[-1].eval(core.plan[-1].t0)
                        diff = abs(points[0].p - final)
                        i = int(diff.argmax())
                        if diff[i] > self.config.start_tolerance:
                            raise Nack(START_MISMATCH, f"board {name!r}, axis {self.config.axes[i].name!r}: "
                                       f"trajectory starts at {points[0].p[i]:.5g} but the axis will be at "
                                       f"{final[i]:.5g}")
                    core.add_segment(gid, 0, points, True, now)
                    core.start(gid, begin if begin > now else 0.0, now)
                    end = core.active.end if core.active is not None else now
                except Nack as nack:
                    self._error(f"board {name!r} (original protocol): trajectory of {len(points)} points "
                                f"from {peer} refused: {nack.reason}; nothing executes")
                    return
            # like the original board program, the connection stays open until the trajectory has run
            while not self._stop.is_set() and self.clock.now() < end:
                self._stop.wait(min(0.05, max(0.0, end - self.clock.now())))
        except OSError:
            pass
        finally:
            self._close(conn)
