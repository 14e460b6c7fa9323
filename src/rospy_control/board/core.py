"""The board's executor: goals, streaming window, scheduled start and splice, cancel ramps, faults,
and the conversion of one continuous position function of time per axis into step pulses.

Everything here is driven by explicit board times (seconds on the board's clock): no thread, no
socket, no wall clock.  :class:`~rospy_control.board.server.BoardServer` calls it from its threads
under one lock; tests call it directly, so the timing they check is the board's, exactly.

Pulses: the commanded position in steps, ``s(t) = position(t) * steps_per_unit * direction``, is
sampled every ``sample_dt`` (50 us) and a pulse is emitted where ``round(s)`` changes, at the time
``s`` crosses the half-step between the two counts (linear interpolation between samples).  The
count is a function of the absolute position, never of a segment's increment, so fractional steps
are carried from segment to segment and nothing drifts.
"""
from __future__ import annotations

import bisect
import math
from collections import deque
from typing import Deque, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .backends import PulseBackend
from .config import BoardConfig
from .homing import HOMING, HOMING_ACTIVE, HomingRun, HomingRefused, start_homing, watch_switches
from .interpolation import Segment, crossings, hermite, hold, ramp_to_stop

# Code / State / GoalResult numbers of trajectory_downlink.proto (kept here so that the core does
# not need the generated module; test_board_core checks they agree with it).
OK, BAD_REQUEST, UNKNOWN_GOAL, OUT_OF_ORDER, BUFFER_FULL = 0, 1, 2, 3, 4
INVALID_TRAJECTORY, LIMIT_VIOLATION, START_MISMATCH, FAULTED = 5, 6, 7, 8
HOST_TIMEOUT, CONNECTION_LOST, BUFFER_UNDERRUN, STEP_RATE = 20, 21, 22, 23
FOLLOWING_ERROR, LIMIT_SWITCH, DRIVER_ALARM, PROTOCOL_ERROR, INTERNAL = 24, 25, 26, 27, 28
IDLE, WAITING, EXECUTING, STOPPING, FAULT = 0, 1, 2, 3, 4
SUCCEEDED, CANCELED, PREEMPTED, ABORTED = 1, 2, 3, 4

_LIMIT_SLACK = 1e-6          # relative: rounding of a trajectory computed exactly at the limit
_MIN_LEAD_IN = 1e-4          # s: a splice closer than this to the next point skips that point
_MAX_LEAD_IN = 0.25          # s: how far past the first point ahead a lead-in may aim (see _lead_in)


class Nack(Exception):
    """A request the board refuses: ``code`` and a reason naming board, axis and cause."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class TrajPoint:
    __slots__ = ("t", "p", "v", "a")

    def __init__(self, t: float, p: Sequence[float], v: Optional[Sequence[float]] = None,
                 a: Optional[Sequence[float]] = None) -> None:
        self.t = float(t)
        self.p = np.asarray(p, float)
        self.v = None if v is None or len(v) == 0 else np.asarray(v, float)
        self.a = None if a is None or len(a) == 0 or self.v is None else np.asarray(a, float)


class Goal:
    def __init__(self, goal_id: int) -> None:
        self.goal_id = goal_id
        self.points: List[TrajPoint] = []
        self.rel_segments: List[Segment] = []     # between consecutive points, relative time
        self.next_index = 0
        self.last = False
        self.origin: Optional[float] = None       # board time of time_from_start 0
        self.abs_times: List[float] = []          # of the points still to run (for the buffer fill)

    @property
    def end(self) -> float:
        assert self.origin is not None
        return self.origin + self.points[-1].t


class BoardCore:
    def __init__(self, config: BoardConfig, backend: PulseBackend, t0: float = 0.0,
                 sample_dt: float = 50e-6, initial_positions: Optional[Sequence[float]] = None) -> None:
        self.config = config
        self.backend = backend
        self.n = len(config.axes)
        self.sample_dt = sample_dt
        self.spu = np.array([a.steps_per_unit * a.direction for a in config.axes], float)
        self.amax = np.array([a.max_acceleration for a in config.axes], float)
        p0 = np.zeros(self.n) if initial_positions is None else np.asarray(initial_positions, float)
        self.plan: List[Segment] = [hold(t0, p0)]
        self.history: Deque[Segment] = deque(maxlen=20000)
        self.t_done = t0
        self.s_prev = p0 * self.spu
        self.count = np.floor(self.s_prev + 0.5).astype(np.int64)
        self.goals: Dict[int, Goal] = {}
        self.finished: Deque[int] = deque(maxlen=256)     # ids of recent goals that have ended
        self.active: Optional[Goal] = None
        self.pending: Optional[Goal] = None
        self.stopping: Optional[Tuple[int, int, int, str, float]] = None   # goal, result, code, text, t_end
        self.fault: Optional[Tuple[int, str, str]] = None                  # code, text, axis
        self.homing: Optional[HomingRun] = None
        self.last_host = t0
        # ("goal_done", id, result, code, text, t) / ("fault", code, text, axis, t)
        self.events: List[tuple] = []
        self.late_chunks = 0                   # pulses computed after their time had passed (server)

    # ---- plan helpers ----------------------------------------------------------------------------

    def _segment_at(self, t: float) -> Segment:
        starts = [s.t0 for s in self.plan]
        i = max(0, bisect.bisect_right(starts, t) - 1)
        return self.plan[i]

    def state_at(self, t: float) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        return self._segment_at(t).state(t)

    def _truncate(self, t: float) -> None:
        keep = [s for s in self.plan if s.t0 < t]
        if not keep:
            keep = [self.plan[0]]
        last = keep[-1]
        keep[-1] = Segment(last.t0, t, last.coef, last.kind)
        self.plan = keep

    def _positions(self, times: np.ndarray) -> np.ndarray:
        out = np.empty((self.n, times.size))
        starts = np.array([s.t0 for s in self.plan])
        idx = np.clip(np.searchsorted(starts, times, side="right") - 1, 0, len(self.plan) - 1)
        for i in np.unique(idx):
            mask = idx == i
            out[:, mask] = self.plan[i].eval(times[mask])
        return out

    def plan_end(self) -> float:
        return self.plan[-1].t1

    # ---- validation ------------------------------------------------------------------------------

    def _where(self, axis: int) -> str:
        return f"board {self.config.name!r}, axis {self.config.axes[axis].name!r}"

    def check_segments(self, segs: Sequence[Segment], goal_id: int, origin: float = 0.0,
                       v_before: Optional[np.ndarray] = None,
                       v_after_end: Optional[np.ndarray] = None) -> None:
        """Raise :class:`Nack` (LIMIT_VIOLATION) if a segment leaves an axis's limits.

        ``origin`` turns segment times into the goal's time for the message; ``v_before`` is the
        velocity the first segment starts from (a step there is checked), ``v_after_end`` the one
        after the last (zero when the goal ends).
        """
        axes = self.config.axes
        prev_v = v_before
        for seg in segs:
            T = seg.duration
            taus = seg.t0 + np.linspace(0.0, T, 17)
            p = seg.eval(taus)
            v = seg.eval(taus, 1)
            a = seg.eval(taus, 2)
            for i, ax in enumerate(axes):
                vmax = np.max(np.abs(v[i]))
                k = int(np.argmax(np.abs(v[i])))
                tk = taus[k] - origin
                rate = vmax * abs(ax.steps_per_unit)
                if rate > ax.max_step_rate * (1 + _LIMIT_SLACK):
                    raise Nack(LIMIT_VIOLATION, f"{self._where(i)}: step rate {rate:.0f} pulses/s at "
                                                f"t={tk:.3f} s "
                               f"of goal {goal_id} exceeds max_step_rate {ax.max_step_rate:.0f} pulses/s "
                               f"({vmax:.4g} {ax.unit}/s)")
                if vmax > ax.max_velocity * (1 + _LIMIT_SLACK):
                    raise Nack(LIMIT_VIOLATION, f"{self._where(i)}: velocity {vmax:.4g} {ax.unit}/s at "
                                                f"t={tk:.3f} s "
                               f"of goal {goal_id} exceeds max_velocity {ax.max_velocity:.4g} {ax.unit}/s")
                amax = np.max(np.abs(a[i]))
                if amax > ax.max_acceleration * (1 + _LIMIT_SLACK):
                    k = int(np.argmax(np.abs(a[i])))
                    raise Nack(LIMIT_VIOLATION, f"{self._where(i)}: acceleration {amax:.4g} {ax.unit}/s^2 at "
                               f"t={taus[k] - origin:.3f} s of goal {goal_id} exceeds max_acceleration "
                               f"{ax.max_acceleration:.4g} {ax.unit}/s^2")
                if ax.position_limited:
                    lo, hi = float(np.min(p[i])), float(np.max(p[i]))
                    if lo < ax.min_position - 1e-9 or hi > ax.max_position + 1e-9:
                        bad = lo if lo < ax.min_position else hi
                        raise Nack(LIMIT_VIOLATION, f"{self._where(i)}: position {bad:.4g} {ax.unit} in goal "
                                   f"{goal_id} is outside [{ax.min_position:.4g}, {ax.max_position:.4g}]")
            if prev_v is not None:
                self._check_step(prev_v, v[:, 0], seg.t0 - origin, goal_id)
            prev_v = v[:, -1]
        if v_after_end is not None and prev_v is not None and segs:
            self._check_step(prev_v, v_after_end, segs[-1].t1 - origin, goal_id)

    def _check_step(self, v0: np.ndarray, v1: np.ndarray, t: float, goal_id: int) -> None:
        for i, ax in enumerate(self.config.axes):
            dv = abs(float(v1[i] - v0[i]))
            if dv > ax.max_velocity_step * (1 + _LIMIT_SLACK) + 1e-12:
                raise Nack(LIMIT_VIOLATION, f"{self._where(i)}: velocity jumps by {dv:.4g} {ax.unit}/s at "
                           f"t={t:.3f} s of goal {goal_id} (a straight-line knot or an end with velocity); "
                           f"the axis takes at most max_velocity_step {ax.max_velocity_step:.4g} {ax.unit}/s "
                           "without a ramp -- send velocities (cubic) or accelerations (quintic)")

    def _check_points(self, goal: Goal, points: Sequence[TrajPoint]) -> None:
        name = self.config.name
        t_prev = goal.points[-1].t if goal.points else -math.inf
        for k, pt in enumerate(points):
            where = f"board {name!r}: goal {goal.goal_id}, point {len(goal.points) + k}"
            for label, arr in (("positions", pt.p), ("velocities", pt.v), ("accelerations", pt.a)):
                if arr is None:
                    continue
                if arr.shape != (self.n,):
                    raise Nack(INVALID_TRAJECTORY, f"{where}: {arr.size} {label}; the board has {self.n} "
                               f"axes ({', '.join(a.name for a in self.config.axes)})")
                if not np.all(np.isfinite(arr)):
                    raise Nack(INVALID_TRAJECTORY, f"{where}: {label} hold NaN or infinity")
            if not math.isfinite(pt.t) or pt.t < 0:
                raise Nack(INVALID_TRAJECTORY, f"{where}: time_frome_start {pt.t!r} is not a finite time "
                                               f">= 0")
            if pt.t <= t_prev:
                raise Nack(INVALID_TRAJECTORY, f"{where}: time_frome_start {pt.t:.6f} s does not increase "
                           f"(previous {t_prev:.6f} s)")
            t_prev = pt.t

    # ---- requests --------------------------------------------------------------------------------

    def buffer_fill(self, now: float) -> int:
        """Points of the running goal not executed yet (of the waiting one when none runs).

        The window holds ``buffer_capacity`` points of the running goal, and a goal waiting for its
        Start (a replacement) may hold as many again: starting it drops the running goal's points
        after the splice, so memory stays bounded by twice the capacity.
        """
        if self.active is not None:
            return len(self.active.abs_times) - bisect.bisect_right(self.active.abs_times, now)
        return len(self.pending.points) if self.pending is not None else 0

    def buffer_free(self, now: float) -> int:
        return max(0, self.config.buffer_capacity - self.buffer_fill(now))

    def add_segment(self, goal_id: int, index: int, points: Sequence[TrajPoint], last: bool,
                    now: float) -> None:
        """A streamed piece of a goal (Nack on refusal; a refused piece changes nothing)."""
        self._refuse_goals()
        if goal_id == 0:
            raise Nack(BAD_REQUEST, f"board {self.config.name!r}: goal_id 0 is reserved")
        goal = self.goals.get(goal_id)
        if goal is None or (goal is not self.active and goal is not self.pending):
            if goal is not None or goal_id in self.finished:
                raise Nack(UNKNOWN_GOAL, f"board {self.config.name!r}: goal {goal_id} has ended (replaced, "
                           "canceled or aborted); its segment is discarded")
            if index != 0:
                raise Nack(OUT_OF_ORDER, f"board {self.config.name!r}: segment {index} of goal {goal_id} "
                           f"arrived before its segment 0 (out of order); nothing of it executes")
            goal = Goal(goal_id)
        elif index != goal.next_index:
            raise Nack(OUT_OF_ORDER, f"board {self.config.name!r}: segment {index} of goal {goal_id} is "
                       f"out of order: expected {goal.next_index}")
        elif goal.last:
            raise Nack(OUT_OF_ORDER, f"board {self.config.name!r}: segment {index} of goal {goal_id} follows "
                       "the segment marked last")
        if not points:
            raise Nack(INVALID_TRAJECTORY, f"board {self.config.name!r}: segment {index} of goal {goal_id} "
                       "holds no point")
        self._check_points(goal, points)
        if goal is self.active:
            fill = self.buffer_fill(now)
        else:                # a goal waiting for its Start (a new one replaces the one waiting)
            fill = len(goal.points)
        if fill + len(points) > self.config.buffer_capacity:
            raise Nack(BUFFER_FULL, f"board {self.config.name!r}: {len(points)} more points of goal "
                       f"{goal_id} would hold {fill + len(points)} points; buffer_capacity is "
                       f"{self.config.buffer_capacity} (wait for the window)")
        # the segments between consecutive points, in the goal's own time
        chain = ([goal.points[-1]] if goal.points else []) + list(points)
        new_segs = [self._between(a, b) for a, b in zip(chain[:-1], chain[1:])]
        v_before = goal.rel_segments[-1].eval(goal.rel_segments[-1].t1, 1) if goal.rel_segments else None
        v_end = np.zeros(self.n) if last else None
        if new_segs:
            self.check_segments(new_segs, goal_id, 0.0, v_before, v_end)
        elif last and points[-1].v is not None:
            self._check_step(points[-1].v, np.zeros(self.n), points[-1].t, goal_id)
        # accepted
        goal.points.extend(points)
        goal.rel_segments.extend(new_segs)
        goal.next_index = index + 1
        goal.last = last
        if goal is self.active:
            assert goal.origin is not None
            self._extend_active(new_segs, points)
        elif goal is not self.pending:
            if self.pending is not None:
                self.goals.pop(self.pending.goal_id, None)
            self.pending = goal
            self.goals[goal_id] = goal

    def _refuse_goals(self) -> None:
        if self.fault is not None:
            raise Nack(FAULTED, f"board {self.config.name!r} holds fault {self.fault[0]} ({self.fault[1]}); "
                       "reset faults first")
        if self.homing is not None:
            raise Nack(HOMING_ACTIVE, f"board {self.config.name!r} is homing; goals wait until it ends")

    def home(self, axes: Sequence[str], now: float) -> None:
        """Begin homing ``axes`` (empty: every axis with a homing switch); Nack on refusal
        (:mod:`.homing`)."""
        try:
            start_homing(self, axes, now)
        except HomingRefused as refused:
            raise Nack(refused.code, refused.reason) from None

    @staticmethod
    def _between(a: TrajPoint, b: TrajPoint) -> Segment:
        return hermite(a.t, b.t, a.p, a.v if a.v is not None else np.zeros_like(a.p),
                       a.a if a.a is not None else np.zeros_like(a.p), b.p, b.v, b.a)

    def _extend_active(self, new_segs: Sequence[Segment], points: Sequence[TrajPoint]) -> None:
        goal = self.active
        assert goal is not None and goal.origin is not None
        origin = goal.origin
        for pt in points:
            goal.abs_times.append(origin + pt.t)
        # the plan of an active goal without its last segment ends at its last point (no hold yet)
        self.plan.extend(s.shifted(origin) for s in new_segs if s.t1 + origin > self.plan[-1].t0)
        if goal.last:
            self.plan.append(hold(goal.end, goal.points[-1].p))

    def start(self, goal_id: int, start_time: float, now: float) -> float:
        """Start (or splice in) a goal; returns the board time it takes over.  Nack on refusal."""
        name = self.config.name
        self._refuse_goals()
        goal = self.pending
        if goal is None or goal.goal_id != goal_id:
            raise Nack(UNKNOWN_GOAL, f"board {name!r}: goal {goal_id} has no segment waiting to start")
        ts = max(start_time, self.t_done, now) if start_time > 0 else max(self.t_done, now)
        origin = start_time if start_time > 0 else ts
        moving = self.active is not None or self.stopping is not None
        p, v, a = self.state_at(ts)
        pts = goal.points
        if not moving and pts[0].t == 0.0 and origin >= ts:
            diff = np.abs(pts[0].p - p)
            i = int(np.argmax(diff))
            if diff[i] > self.config.start_tolerance:
                raise Nack(START_MISMATCH, f"{self._where(i)}: goal {goal_id} starts at {pts[0].p[i]:.5g} "
                                           f"but the axis is at {p[i]:.5g} "
                                           f"(start_tolerance {self.config.start_tolerance:.4g})")
        k = 0
        while k < len(pts) and origin + pts[k].t <= ts + _MIN_LEAD_IN:
            k += 1
        if k == len(pts):
            if not goal.last:
                raise Nack(INVALID_TRAJECTORY, f"board {name!r}: goal {goal_id} has no point after its "
                                               "start time yet; send more segments before Start")
            if not moving and np.max(np.abs(pts[-1].p - p)) <= self.config.start_tolerance:
                segs: List[Segment] = []        # over before it began, and already there: hold
            else:
                raise Nack(INVALID_TRAJECTORY, f"board {name!r}: every point of goal {goal_id} lies before "
                                               f"its start ({(ts - origin):.3f} s into it)")
        else:
            segs = self._lead_in(goal, k, origin, ts, p, v, a, np.zeros(self.n) if goal.last else None)
        # accepted: splice
        if self.active is not None:
            self._done(self.active.goal_id, PREEMPTED, OK,
                       f"replaced by goal {goal_id} at board time {ts:.6f} s", now)
        if self.stopping is not None:
            gid, result, code, text, _ = self.stopping
            self._done(gid, result, code, text, now)
            self.stopping = None
        self._truncate(ts)
        self.plan.extend(segs)
        goal.origin = origin
        goal.abs_times = [origin + pt.t for pt in pts[k:]]
        if goal.last:
            end = max(goal.end, ts)
            self.plan.append(hold(end, pts[-1].p))
        self.pending = None
        self.active = goal
        return ts

    def _lead_in(self, goal: Goal, k: int, origin: float, ts: float, p: np.ndarray, v: np.ndarray,
                 a: np.ndarray, v_end: Optional[np.ndarray]) -> List[Segment]:
        """The segments from the state ``(p, v, a)`` at ``ts`` into ``goal``, from its point ``k`` on.

        The lead-in aims at the first point after ``ts``.  When that point is so close that joining
        it breaks an axis limit -- a start that arrived late, a few milliseconds before the next
        point, with the goal's first point a fraction of a step from where the axis rests -- the
        lead-in aims at the next point instead, as long as it lies within :data:`_MAX_LEAD_IN` of
        ``ts`` (the points skipped are as close as the lead-in is short).  A late host thus never
        turns a feasible goal into a limit violation; if no point in reach can be joined within the
        limits, the first refusal is raised.
        """
        pts = goal.points
        first: Optional[Nack] = None
        j = k
        while j < len(pts) and (j == k or origin + pts[j].t - ts <= _MAX_LEAD_IN):
            target = pts[j]
            segs = [hermite(ts, origin + target.t, p, v, a, target.p, target.v, target.a)]
            segs += [s.shifted(origin) for s in goal.rel_segments[j:]]
            try:
                self.check_segments(segs, goal.goal_id, origin, v, v_end)
                return segs
            except Nack as nack:
                if first is None:
                    first = nack
                if nack.code != LIMIT_VIOLATION or not self._lead_only(segs[0], goal.goal_id, origin, v):
                    break
            j += 1
        assert first is not None
        raise first

    def _lead_only(self, lead: Segment, goal_id: int, origin: float, v: np.ndarray) -> bool:
        """Whether the lead-in segment alone breaks a limit (so a later target may do better)."""
        try:
            self.check_segments([lead], goal_id, origin, v, None)
        except Nack:
            return True
        return False

    def cancel(self, goal_id: int, now: float) -> float:
        """Decelerate to a stop within the axis limits; returns the board time the stop is reached."""
        if self.homing is not None:
            return self.homing.abort(self, f"canceled at board time {now:.6f} s", now)
        current = self.active.goal_id if self.active is not None else None
        if goal_id and goal_id != current:
            if self.pending is not None and self.pending.goal_id == goal_id:
                self.goals.pop(goal_id, None)
                self.pending = None
                self._done(goal_id, CANCELED, OK, "canceled before it started", now)
                return now
            if self.stopping is not None and self.stopping[0] == goal_id:
                return self.stopping[4]
            raise Nack(UNKNOWN_GOAL, f"board {self.config.name!r}: goal {goal_id} is not running")
        if self.active is None:
            if self.pending is not None:
                self._done(self.pending.goal_id, CANCELED, OK, "canceled before it started", now)
                self.goals.pop(self.pending.goal_id, None)
                self.pending = None
            return self.stopping[4] if self.stopping is not None else now
        return self._ramp(CANCELED, OK, f"canceled at board time {max(now, self.t_done):.6f} s", now)

    def _ramp(self, result: int, code: int, text: str, now: float, t_from: Optional[float] = None) -> float:
        ts = max(self.t_done, now) if t_from is None else t_from
        p, v, _ = self.state_at(ts)
        self._truncate(ts)
        segs = ramp_to_stop(ts, p, v, self.amax)
        self.plan.extend(segs)
        t_end = segs[-1].t0
        gid = self.active.goal_id if self.active is not None else 0
        if self.active is not None:
            self.active = None
            self.stopping = (gid, result, code, text, t_end)
        if self.pending is not None:
            self._done(self.pending.goal_id, ABORTED if result == ABORTED else CANCELED, code, text, now)
            self.pending = None
        return t_end

    def raise_fault(self, code: int, text: str, now: float, axis: str = "",
                    t_from: Optional[float] = None) -> None:
        """Latch a fault: ramp every axis to a stop and abort the goal with the code."""
        if self.fault is not None:
            return
        full = f"board {self.config.name!r}: {text}"
        self.fault = (code, full, axis)
        self.events.append(("fault", code, full, axis, now))
        if self.homing is not None:
            self.homing.abort(self, f"ended by the fault: {text}", now)
        if self.active is not None or self.pending is not None:
            self._ramp(ABORTED, code, full, now, t_from)

    def reset_faults(self, now: float) -> None:
        if self.fault is None:
            return
        if self.stopping is not None and now < self.stopping[4]:
            raise Nack(FAULTED, f"board {self.config.name!r} is still decelerating; reset after "
                       f"{self.stopping[4] - now:.3f} s")
        self.fault = None

    def host_message(self, now: float) -> None:
        self.last_host = max(self.last_host, now)

    def host_disconnected(self, now: float) -> None:
        """The host's connection closed: a running goal ramps to a stop (fault); a waiting one is dropped."""
        if self.homing is not None:
            self.homing.abort(self, "ended: connection to the host lost", now)
        if self.active is not None:
            self.raise_fault(CONNECTION_LOST, "connection to the host lost during a goal; ramped to a stop",
                             now)
        elif self.pending is not None:
            self._done(self.pending.goal_id, CANCELED, CONNECTION_LOST, "host gone before the goal started",
                       now)
            self.pending = None

    def _done(self, goal_id: int, result: int, code: int, text: str, now: float) -> None:
        self.goals.pop(goal_id, None)
        self.finished.append(goal_id)
        self.events.append(("goal_done", goal_id, result, code, text, now))

    def take_events(self) -> List[tuple]:
        ev, self.events = self.events, []
        return ev

    # ---- execution -------------------------------------------------------------------------------

    def check(self, now: float) -> None:
        """Host silence, encoder following error, goal completion (call with the board's now)."""
        if self.homing is not None:
            self.homing.step(self, now)
        elif self.active is not None and self.fault is None:
            watch_switches(self, now)
        if self.active is not None and now - self.last_host > self.config.heartbeat_timeout:
            self.raise_fault(HOST_TIMEOUT, f"host silent for {now - self.last_host:.3f} s (heartbeat_timeout "
                             f"{self.config.heartbeat_timeout:.3f} s); ramped to a stop", now)
        if self.active is not None and self.active.last and now >= self.active.end:
            self._done(self.active.goal_id, SUCCEEDED, OK, "", now)
            self.active = None
        if self.stopping is not None and now >= self.stopping[4]:
            gid, result, code, text, _ = self.stopping
            self.stopping = None
            if gid:
                self._done(gid, result, code, text, now)
        if self.fault is None:
            for i, ax in enumerate(self.config.axes):
                if ax.encoder is None:
                    continue
                enc = self.backend.encoder_at(i, min(now, self.t_done))
                if enc is None:
                    continue
                desired = float(self._segment_at(min(now, self.t_done)).eval(min(now, self.t_done))[i])
                err = enc - desired
                if abs(err) > ax.encoder.max_following_error + 1.0 / abs(ax.encoder.counts_per_unit) \
                        + 1.0 / abs(ax.steps_per_unit):
                    self.raise_fault(FOLLOWING_ERROR, f"axis {ax.name!r}: encoder {enc:.5g} vs commanded "
                                     f"{desired:.5g} {ax.unit}: following error {err:.4g} beyond "
                                     f"{ax.encoder.max_following_error:.4g}", now, ax.name)
                    break

    def advance(self, t_to: float) -> None:
        """Generate every pulse up to board time ``t_to`` (later calls continue seamlessly)."""
        if t_to <= self.t_done:
            return
        # a streamed goal whose points ran out: underrun, ramp to a stop from where the points end
        if self.active is not None and not self.active.last and self.plan[-1].t1 < t_to:
            t_end = self.plan[-1].t1
            self.raise_fault(BUFFER_UNDERRUN, f"goal {self.active.goal_id}: trajectory points ran out at "
                             f"board time {t_end:.6f} s before its last segment arrived; ramped to a stop",
                             t_end, t_from=max(t_end, self.t_done))
        ta = self.t_done
        m = max(1, int(math.ceil((t_to - ta) / self.sample_dt)))
        times = ta + (t_to - ta) * np.arange(1, m + 1) / m
        steps = self._positions(times) * self.spu[:, None]
        tt = np.concatenate(([ta], times))
        for i in range(self.n):
            s = np.concatenate(([self.s_prev[i]], steps[i]))
            c = np.floor(s + 0.5).astype(np.int64)
            c[0] = self.count[i]
            d = np.diff(c)
            nz = np.nonzero(d)[0]
            if nz.size:
                ptimes, pdirs = crossings(s, c, d, nz, tt)
                self.backend.emit(i, ptimes, pdirs)
                self.count[i] = c[-1]
            self.s_prev[i] = s[-1]
        self.t_done = t_to
        self.backend.flush(t_to)
        # keep the executed segments for inspection, drop them from the plan
        while len(self.plan) > 1 and self.plan[0].t1 <= t_to - 1.0:
            self.history.append(self.plan.pop(0))

    # ---- feedback --------------------------------------------------------------------------------

    def state_code(self, now: float) -> int:
        if self.stopping is not None and now < self.stopping[4]:
            return STOPPING
        if self.fault is not None:
            return FAULT
        if self.homing is not None:
            return HOMING
        if self.active is not None:
            assert self.active.origin is not None
            return WAITING if now < self.active.origin else EXECUTING
        return IDLE

    def feedback(self, now: float) -> dict:
        t = min(now, self.t_done)
        seg = self._segment_at(t)
        desired = seg.eval(t)
        vel = seg.eval(t, 1)
        steps = []
        actual = []
        for i, ax in enumerate(self.config.axes):
            n = self.backend.steps_at(i, t)
            if n is None:      # open loop: the commanded count at t is the pulses sent by then
                n = int(np.floor(desired[i] * self.spu[i] + 0.5))
            steps.append(int(n))
            enc = self.backend.encoder_at(i, t) if ax.encoder is not None else None
            actual.append(float(enc) if enc is not None else n / self.spu[i])
        goal = self.active
        gid = goal.goal_id if goal is not None else (self.stopping[0] if self.stopping is not None else 0)
        tfs = (t - goal.origin) if goal is not None and goal.origin is not None else 0.0
        return {
            "board_time": t, "goal_id": gid, "state": self.state_code(now), "time_from_start": tfs,
            "desired": desired.tolist(), "actual": actual, "desired_velocity": vel.tolist(), "steps": steps,
            "buffer_fill": self.buffer_fill(t), "buffer_free": self.buffer_free(t),
            "fault": self.fault[0] if self.fault is not None else OK,
        }
