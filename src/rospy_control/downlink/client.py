"""Host side of the full trajectory downlink protocol (ROS-free): :class:`BoardClient`.

It connects, reads the board's hello, synchronises clocks (offset and drift from round trips),
validates a trajectory against the board's limits before anything is sent, streams it in goal-tagged
segments under the board's window, starts it at a scheduled board time (a ROS ``header.stamp``
converted through the clock sync), follows the board's feedback (the latest kept, thread-safe),
cancels, replaces, sends heartbeats and notices a silent board, and reconnects.

Times given to and returned by the client are host times (its ``clock``, by default ``time.time``,
the clock ROS wall time uses), converted to and from the board's clock by :class:`ClockSync`.
"""
from __future__ import annotations

import itertools
import logging
import math
import socket
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..board.backends import PulseBackend
from ..board.config import AxisConfig, BoardConfig
from ..board.core import BoardCore, Goal, Nack, TrajPoint
from ..board import wire
from ..board.homing import FEATURE as HOME_FEATURE
from .clock_sync import ClockSync
from .goals import BoardError, BoardUnavailable, Feedback, GoalHandle, TrajectoryInvalid
from rospy_control.realtime import start_thread, thread_name

log = logging.getLogger("rospy_control.downlink")

_HEARTBEAT = thread_name("downlink.heartbeat")


class _NullBackend(PulseBackend):
    def emit(self, axis, times, dirs) -> None:   # pragma: no cover - the validator never pulses
        pass


class BoardClient:
    """One board over the full protocol.

    :param host, port: the board's address.
    :param joint_map: joint name -> axis name where they differ (default: the same names).
    :param clock: host clock (s), ``time.time`` by default.
    :param heartbeat_period: s between heartbeats (also the board-silence check period).
    :param board_timeout: s without any message from the board before it counts as silent.
    :param start_lead: s ahead of now that an unstamped goal starts (room for the first segments).
    :param chunk_points: points per streamed segment.
    :param auto_reconnect: reconnect by itself after the connection is lost.
    """

    def __init__(self, host: str, port: int, joint_map: Optional[Dict[str, str]] = None,
                 clock: Callable[[], float] = time.time, heartbeat_period: float = 0.2,
                 board_timeout: float = 1.0,
                 sync_period: float = 0.98, connect_timeout: float = 3.0, request_timeout: float = 3.0,
                 start_lead: float = 0.05, chunk_points: int = 32, min_window_time: float = 0.3,
                 auto_reconnect: bool = False) -> None:
        self.host = host
        self.port = port
        self.joint_map = dict(joint_map or {})
        self.clock = clock
        self.heartbeat_period = heartbeat_period
        self.board_timeout = board_timeout
        self.sync_period = sync_period
        self.connect_timeout = connect_timeout
        self.request_timeout = request_timeout
        self.start_lead = start_lead
        self.chunk_points = chunk_points
        self.min_window_time = min_window_time
        self.auto_reconnect = auto_reconnect
        self.sync = ClockSync()
        self.hello: Any = None
        self.board_name = f"{host}:{port}"
        self._sock: Optional[socket.socket] = None
        self._send_lock = threading.Lock()
        self._lock = threading.Lock()
        self._seq = itertools.count(1)
        self._goal_ids = itertools.count(int(time.time()) % 100000 * 1000 + 1)
        self._waiters: Dict[int, Any] = {}
        self._feedback: Optional[Feedback] = None
        self._feedback_times: List[float] = []
        self._handles: Dict[int, GoalHandle] = {}
        self._last_rx = 0.0
        self._closing = threading.Event()
        self._threads: List[threading.Thread] = []
        self._connected = threading.Event()
        self.faults: List[Tuple[str, str, str]] = []        # (code, text, axis)
        self.fault_callbacks: List[Callable[[str, str, str], None]] = []
        self.feedback_callbacks: List[Callable[[Feedback], None]] = []     # called in the reader thread
        self._validator: Optional[BoardCore] = None
        self.last_error = ""
        self._home_waiter: Any = None          # [Event, HomeDone or None] while a Home is answered

    # ---- connection ------------------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    @property
    def axis_names(self) -> List[str]:
        return [a.name for a in self.hello.axes] if self.hello is not None else []

    def connect(self) -> "BoardClient":
        """Connect, read the hello, synchronise clocks; :class:`BoardUnavailable` on failure."""
        self._closing.clear()
        self._connect_once()
        if not any(t.name == _HEARTBEAT and t.is_alive() for t in self._threads):
            self._threads.append(start_thread(self._heartbeat_loop, _HEARTBEAT))
        return self

    def _connect_once(self) -> None:
        try:
            sock = socket.create_connection((self.host, self.port), timeout=self.connect_timeout)
        except OSError as err:
            raise BoardUnavailable(f"board at {self.host}:{self.port}: cannot connect ({err})") from err
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        try:
            peer = f"board {self.host}:{self.port}"
            env = wire.decode_envelope(wire.read_frame(sock, wire.DEFAULT_MAX_FRAME_BYTES, peer), peer)
        except (OSError, wire.DownlinkError) as err:
            sock.close()
            raise BoardUnavailable(f"board at {self.host}:{self.port}: no hello ({err})") from err
        if env.WhichOneof("body") != "hello":
            sock.close()
            raise BoardUnavailable(f"board at {self.host}:{self.port}: first message is "
                                   f"{env.WhichOneof('body')}, "
                                   "not a hello (is it a board running the original board program? use "
                                   "protocol original)")
        hello = env.hello
        if hello.protocol_version != wire.PROTOCOL_VERSION:
            sock.close()
            raise BoardUnavailable(f"board {hello.board_name!r} at {self.host}:{self.port} speaks protocol "
                                   f"version {hello.protocol_version}; this host speaks "
                                   f"{wire.PROTOCOL_VERSION}")
        sock.settimeout(None)
        self.hello = hello
        self.board_name = f"{hello.board_name!r} ({self.host}:{self.port})"
        self._validator = self._make_validator(hello)
        self._sock = sock
        self._last_rx = time.monotonic()
        self.sync = ClockSync()  # before the reader starts: its feedback is converted with this one
        th = start_thread(self._reader, "downlink.reader", args=(sock,))
        self._threads = [t for t in self._threads if t.is_alive()] + [th]
        # connected only once the clocks are synchronised: a goal sent the moment a reconnect is seen
        # needs the board's time
        try:
            for _ in range(8):
                self.sync_once()
        except wire.DownlinkError as err:
            self._drop_connection("clock synchronisation failed", notify=False)
            raise BoardUnavailable(f"board {self.board_name}: clock synchronisation failed ({err})") from err
        with self._lock:
            if self._sock is sock:
                self._connected.set()
        if not self._connected.is_set():
            raise BoardUnavailable(f"board {self.board_name}: connection lost during clock synchronisation")

    @staticmethod
    def _make_validator(hello) -> BoardCore:
        axes = []
        for a in hello.axes:
            axes.append(AxisConfig(a.name, abs(a.steps_per_unit) or 1.0, a.unit or "rad",
                                   a.max_velocity or math.inf, a.max_acceleration or math.inf,
                                   a.max_step_rate or math.inf, a.min_position,
                                   a.max_position))
        cfg = BoardConfig.__new__(BoardConfig)          # limits as the board announced them, unchecked
        cfg.axes = axes
        cfg.name = hello.board_name
        cfg.buffer_capacity = hello.buffer_capacity
        cfg.heartbeat_timeout = hello.heartbeat_timeout
        cfg.feedback_rate = hello.feedback_rate
        cfg.start_tolerance = hello.start_tolerance
        cfg.max_frame_bytes = hello.max_frame_bytes
        cfg.source = "hello"
        return BoardCore(cfg, _NullBackend(axes))

    def close(self) -> None:
        self._closing.set()
        self._drop_connection("client closed", notify=False)
        for th in list(self._threads):
            if th is not threading.current_thread():
                th.join(timeout=5.0)

    def __enter__(self) -> "BoardClient":
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()

    def _drop_connection(self, why: str, notify: bool = True) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
            was = self._connected.is_set()
            if was and notify:       # said and listed before anyone can see the connection gone
                self.last_error = f"board {self.board_name}: {why}"
                self.faults.append(("CONNECTION_LOST", self.last_error, ""))
            self._connected.clear()
            waiters = list(self._waiters.values()) + ([self._home_waiter] if self._home_waiter else [])
            self._waiters.clear()
            handles = [h for h in self._handles.values() if not h.done]
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        for w in waiters:
            w[1] = None
            w[0].set()
        if was and notify:
            log.error("%s", self.last_error)
            self._notify_fault("CONNECTION_LOST", self.last_error, "")
            for h in handles:
                h._finish("ABORTED", "CONNECTION_LOST", f"board {self.board_name}: {why} during goal "
                          f"{h.goal_id}; the board ramps to a stop by itself")

    # ---- threads ---------------------------------------------------------------------------------

    def _reader(self, sock: socket.socket) -> None:
        peer = f"board {self.board_name}"
        try:
            while True:
                env = wire.decode_envelope(wire.read_frame(sock, wire.DEFAULT_MAX_FRAME_BYTES, peer), peer)
                self._last_rx = time.monotonic()
                self._dispatch(env, self.clock())
        except wire.ProtocolError as err:
            if self._sock is sock:
                self._drop_connection(f"protocol error: {err}")
        except (OSError, wire.DownlinkError) as err:
            if self._sock is sock:
                self._drop_connection(f"connection lost ({err})")

    def _dispatch(self, env, now: float) -> None:
        kind = env.WhichOneof("body")
        if kind in ("ack", "clock_reply"):
            seq = env.ack.seq if kind == "ack" else env.seq
            with self._lock:
                w = self._waiters.pop(seq, None)
            if w is not None:
                w[1] = env
                w[2] = now
                w[0].set()
        elif kind == "feedback":
            host_t = self.sync.host_time(env.feedback.board_time_us * 1e-6) if self.sync.synced else now
            fb = Feedback(env.feedback, host_t, now)
            with self._lock:
                self._feedback = fb
                self._feedback_times.append(now)
                if len(self._feedback_times) > 1000:
                    del self._feedback_times[:500]
            for cb in list(self.feedback_callbacks):
                try:
                    cb(fb)
                except Exception:     # a faulty callback must not stop the reader
                    log.exception("feedback callback failed")
        elif kind == "goal_done":
            gd = env.goal_done
            pb = wire.pb()
            with self._lock:
                h = self._handles.get(gd.goal_id)
            if h is not None:
                h._finish(pb.GoalResult.Name(gd.result), wire.code_name(gd.code), gd.text)
        elif kind == "fault":
            f = env.fault
            self._record_fault(wire.code_name(f.code), f.text, f.axis)
        elif kind == "home_done":
            with self._lock:
                w = self._home_waiter
            if w is not None:
                w[1] = env.home_done
                w[0].set()

    def _record_fault(self, code: str, text: str, axis: str) -> None:
        self.faults.append((code, text, axis))
        self._notify_fault(code, text, axis)

    def _notify_fault(self, code: str, text: str, axis: str) -> None:
        for cb in list(self.fault_callbacks):
            try:
                cb(code, text, axis)
            except Exception:     # a faulty callback must not stop the reader
                log.exception("fault callback failed")

    def _heartbeat_loop(self) -> None:
        next_sync = time.monotonic() + self.sync_period
        while not self._closing.is_set():
            if self._connected.is_set():
                if time.monotonic() - self._last_rx > self.board_timeout:
                    self._drop_connection(f"silent for more than {self.board_timeout:.2f} s")
                else:
                    env = wire.pb().Envelope()
                    env.heartbeat.time_us = int(self.clock() * 1e6)
                    try:
                        self._send(env)
                        if time.monotonic() >= next_sync:
                            next_sync = time.monotonic() + self.sync_period
                            self.sync_once()
                    except wire.DownlinkError:
                        pass          # the reader notices the lost connection
            elif self.auto_reconnect:
                try:
                    self._connect_once()
                    log.info("board %s: reconnected", self.board_name)
                except wire.DownlinkError:
                    pass
            self._closing.wait(self.heartbeat_period)

    # ---- requests --------------------------------------------------------------------------------

    def _send(self, env) -> None:
        sock = self._sock
        if sock is None:
            raise BoardUnavailable(f"board {self.board_name}: not connected")
        data = wire.encode_frame(env.SerializeToString())
        with self._send_lock:
            try:
                sock.sendall(data)
            except OSError as err:
                raise BoardUnavailable(f"board {self.board_name}: send failed ({err})") from err

    def _request(self, env, timeout: Optional[float] = None):
        seq = next(self._seq)
        env.seq = seq
        w: Any = [threading.Event(), None, 0.0]
        with self._lock:
            self._waiters[seq] = w
        try:
            self._send(env)
        except BoardUnavailable:
            with self._lock:
                self._waiters.pop(seq, None)
            raise
        if not w[0].wait(self.request_timeout if timeout is None else timeout):
            with self._lock:
                self._waiters.pop(seq, None)
            raise BoardUnavailable(f"board {self.board_name}: no answer to {env.WhichOneof('body')} "
                                   f"within {self.request_timeout:.1f} s")
        if w[1] is None:
            raise BoardUnavailable(f"board {self.board_name}: connection lost before the answer to "
                                   f"{env.WhichOneof('body')}")
        reply = w[1]
        if reply.WhichOneof("body") == "ack" and not reply.ack.ok:
            raise BoardError(reply.ack.reason or f"board {self.board_name}: {env.WhichOneof('body')} refused",
                             reply.ack.code)
        return reply, w[2]

    def sync_once(self) -> bool:
        """One clock round trip (the heartbeat thread runs one every ``sync_period``)."""
        env = wire.pb().Envelope()
        t_send = self.clock()
        env.clock_request.host_time_ns = int(t_send * 1e9)
        reply, t_recv = self._request(env)
        return self.sync.add(t_send, t_recv, reply.clock_reply.board_time_us * 1e-6)

    def board_now(self) -> float:
        return self.sync.board_time(self.clock())

    # ---- trajectories ----------------------------------------------------------------------------

    def validate(self, joint_names: Sequence[str], points: Sequence[TrajPoint]) -> List[TrajPoint]:
        """The points in the board's axis order, or :class:`TrajectoryInvalid` naming joint, board, cause.

        The board's own checks are run here first (same code): sizes, NaN, increasing times, step
        rate, velocity, acceleration, position limits, velocity steps; then the capacity: every
        ``buffer_capacity`` consecutive points must span at least ``min_window_time`` so the stream can
        stay ahead of execution.
        """
        if self.hello is None or self._validator is None:
            raise BoardUnavailable(f"board {self.board_name}: not connected (no hello yet)")
        axes = self.axis_names
        names = [self.joint_map.get(j, j) for j in joint_names]
        for j, axis in zip(joint_names, names):
            if axis not in axes:
                raise TrajectoryInvalid(f"joint {j!r} is not an axis of board {self.board_name} "
                                        f"(axes: {', '.join(axes)})")
        missing = [a for a in axes if a not in names]
        if missing:
            raise TrajectoryInvalid(f"board {self.board_name}: the trajectory leaves axis/axes "
                                    f"{', '.join(missing)} out; the board executes whole trajectories of all "
                                    f"{len(axes)} axes")
        if len(set(names)) != len(names):
            raise TrajectoryInvalid(f"board {self.board_name}: a joint appears twice in {list(joint_names)}")
        if not points:
            raise TrajectoryInvalid(f"board {self.board_name}: the trajectory has no point")
        order = [names.index(a) for a in axes]

        def pick(arr):
            if arr is None:
                return None
            arr = np.asarray(arr, float)
            if arr.shape != (len(names),):
                raise TrajectoryInvalid(f"board {self.board_name}: a point has {arr.size} values for "
                                        f"{len(names)} joints")
            return arr[order]
        ordered = [TrajPoint(p.t, pick(p.p), pick(p.v), pick(p.a)) for p in points]
        goal = Goal(0)
        try:
            self._validator._check_points(goal, ordered)
            segs = [BoardCore._between(a, b) for a, b in zip(ordered[:-1], ordered[1:])]
            self._validator.check_segments(segs, 0, 0.0, None, np.zeros(len(axes)))
        except Nack as nack:
            raise TrajectoryInvalid(self._rename(nack.reason)) from None
        cap = self.hello.buffer_capacity
        if len(ordered) > cap:
            times = np.array([p.t for p in ordered])
            spans = times[cap:] - times[:-cap]
            k = int(np.argmin(spans))
            if spans[k] < self.min_window_time:
                raise TrajectoryInvalid(
                    f"board {self.board_name}: {cap + 1} points within {spans[k]:.3f} s from "
                    f"t={times[k]:.3f} s; "
                    f"the board holds buffer_capacity={cap} points, which must cover at least "
                    f"{self.min_window_time:.2f} s for streaming -- resample the trajectory more coarsely")
        return ordered

    def _rename(self, reason: str) -> str:
        """The board's validator names axes; say the joint too where the names differ."""
        inverse = {a: j for j, a in self.joint_map.items()}
        for axis, joint in inverse.items():
            reason = reason.replace(f"axis {axis!r}", f"axis {axis!r} (joint {joint!r})")
        return reason.replace(f"board {self.hello.board_name!r}", f"board {self.board_name}", 1)

    def execute(self, joint_names: Sequence[str], points: Sequence[TrajPoint],
                stamp: float = 0.0) -> GoalHandle:
        """Validate, stream and start a trajectory; a goal already running is replaced at its start.

        :param stamp: host time of ``time_from_start`` 0 (a goal's ``header.stamp``); 0 = now.
        :returns: a :class:`GoalHandle` once the board has acked the first segment and the Start.
        :raises TrajectoryInvalid, BoardError, BoardUnavailable:
        """
        ordered = self.validate(joint_names, points)
        goal_id = next(self._goal_ids)
        handle = GoalHandle(goal_id, joint_names, ordered[-1].t)
        with self._lock:
            self._handles[goal_id] = handle
            if len(self._handles) > 200:
                for gid in [g for g, h in self._handles.items() if h.done][:100]:
                    del self._handles[gid]
        cap = self.hello.buffer_capacity
        first = min(len(ordered), max(1, min(self.chunk_points * 2, cap // 2)))
        try:
            self._send_segment(goal_id, 0, ordered[:first], first == len(ordered))
            handle.segments_sent = 1
            env = wire.pb().Envelope()
            env.start.goal_id = goal_id
            if stamp > 0:
                board_start = self.sync.board_time(stamp)
            else:
                board_start = self.board_now() + self.start_lead
            env.start.start_time_us = max(1, int(round(board_start * 1e6)))
            reply, t_ack = self._request(env)
        except wire.DownlinkError:
            with self._lock:
                self._handles.pop(goal_id, None)
            raise
        handle.start_board_time = reply.ack.time_us * 1e-6
        handle.start_host_time = self.sync.host_time(handle.start_board_time)
        handle.accepted_at = t_ack
        if first == len(ordered):
            handle.stream_done_at = t_ack
        else:
            th = start_thread(self._stream, "downlink.stream", args=(handle, ordered, first))
            self._threads = [t for t in self._threads if t.is_alive()] + [th]
        return handle

    def _send_segment(self, goal_id: int, index: int, pts: Sequence[TrajPoint], last: bool):
        env = wire.pb().Envelope()
        seg = env.segment
        seg.goal_id = goal_id
        seg.index = index
        seg.last = last
        for pt in pts:
            p = seg.points.points.add()
            p.positions.extend(pt.p.tolist())
            if pt.v is not None:
                p.velocities.extend(pt.v.tolist())
                if pt.a is not None:
                    p.accelerations.extend(pt.a.tolist())
            p.time_frome_start = pt.t
        reply, _ = self._request(env)
        return reply.ack.buffer_free

    def _stream(self, handle: GoalHandle, ordered: Sequence[TrajPoint], sent: int) -> None:
        index = 1
        free = 0
        while sent < len(ordered) and not handle.done and self.connected:
            fb = self.latest_feedback()
            if fb is not None:
                free = max(free, fb.buffer_free)
            n = min(self.chunk_points, len(ordered) - sent)
            if free < n:
                time.sleep(0.01)
                fb = self.latest_feedback()
                free = fb.buffer_free if fb is not None else 0
                continue
            try:
                free = self._send_segment(handle.goal_id, index, ordered[sent:sent + n],
                                          sent + n == len(ordered))
            except BoardError as err:
                if err.code == wire.pb().BUFFER_FULL:
                    free = 0
                    time.sleep(0.01)
                    continue
                if err.code == wire.pb().UNKNOWN_GOAL:
                    return            # the goal ended on the board (replaced, canceled): GoalDone says how
                log.error("board %s: goal %d: segment %d refused: %s", self.board_name, handle.goal_id,
                          index, err)
                try:
                    self.cancel(handle.goal_id)
                except wire.DownlinkError:
                    pass
                handle._finish("ABORTED", err.code_name, str(err))
                return
            except wire.DownlinkError as err:
                handle._finish("ABORTED", "CONNECTION_LOST", str(err))
                return
            sent += n
            index += 1
            handle.segments_sent = index
        if sent == len(ordered):
            handle.stream_done_at = self.clock()

    def cancel(self, goal_id: int = 0) -> float:
        """Decelerate to a stop within the axis limits; returns the host time the stop is reached."""
        env = wire.pb().Envelope()
        env.cancel.goal_id = goal_id
        reply, _ = self._request(env)
        return self.sync.host_time(reply.ack.time_us * 1e-6)

    def reset_faults(self) -> None:
        env = wire.pb().Envelope()
        env.reset_faults.SetInParent()
        self._request(env)

    @property
    def can_home(self) -> bool:
        """The connected board announces the protocol feature "home" (a board program that predates
        homing discards a Home frame, so none is sent to it)."""
        return self.hello is not None and HOME_FEATURE in list(self.hello.features)

    def home(self, axes: Sequence[str] = (), timeout: float = 60.0):
        """Home ``axes`` (empty: every axis with a homing switch) and wait for the board's HomeDone
        (``ok``, ``code``, ``text``, ``axes`` homed, every axis's ``positions`` after).

        :raises BoardError: the board refuses (a goal runs, a fault, an axis without a switch), or it
            does not announce homing.
        :raises BoardUnavailable: not connected, the connection lost, no HomeDone within ``timeout``.
        """
        if not self.connected:
            raise BoardUnavailable(f"board {self.board_name}: not connected")
        if not self.can_home:
            raise BoardError(f"board {self.board_name} (firmware {self.hello.firmware!r}) does not announce "
                             f"the protocol feature {HOME_FEATURE!r}: its board program predates homing; "
                             "update it")
        env = wire.pb().Envelope()
        env.home.axes.extend(axes)
        waiter: Any = [threading.Event(), None]
        with self._lock:
            self._home_waiter = waiter
        try:
            self._request(env)
            if not waiter[0].wait(timeout):
                raise BoardUnavailable(f"board {self.board_name}: homing not done within {timeout:g} s")
        finally:
            with self._lock:
                self._home_waiter = None
        if waiter[1] is None:
            raise BoardUnavailable(f"board {self.board_name}: connection lost during the homing")
        return waiter[1]

    # ---- state -----------------------------------------------------------------------------------

    def latest_feedback(self) -> Optional[Feedback]:
        with self._lock:
            return self._feedback

    def feedback_rate(self, window: float = 1.0) -> float:
        """Feedback messages per second received over the last ``window`` seconds (host clock)."""
        now = self.clock()
        with self._lock:
            recent = [t for t in self._feedback_times if now - t <= window]
        return len(recent) / window
