"""The board's homing of axes against their limit switches (the protocol's Home, feature "home").

Driven by board times as :class:`~rospy_control.board.core.BoardCore` is (the core calls
:meth:`HomingRun.step` from its ``check``): no thread, no wall clock.  The axes asked for home one
after the other, in the board's axis order.  Per axis (its :class:`~rospy_control.board.config.HomingConfig`):

1. **search**: toward the configured switch (``min``: negative, ``max``: positive) at
   ``search_speed``, ramped within ``max_acceleration``, for at most ``max_travel``; an axis already
   on its switch skips this;
2. once the switch is seen closed, a ramp to a stop;
3. **back-off**: away from the switch at ``backoff_speed`` for at most ``max_backoff``, until the
   switch opens; the commanded position at that moment is the reference;
4. a ramp to a stop, then the axis's position is set so that the reference is ``position``: the
   plan, the step count and the back-end's count move together, no pulse is sent.

A switch that does not close within ``max_travel`` (or open within ``max_backoff``) ends the
homing with HOME_SWITCH_NOT_FOUND naming board, axis, switch and distance; the axis stops where
the search ended and keeps its former positions.  A Cancel, a fault or the host's connection lost
end it with HOMING_ABORTED.  The outcome is a ``("home_done", ok, code, text, axes homed, positions,
t)`` event of the core.

While no homing runs, :func:`watch_switches` turns a limit switch closing under a running goal into
the LIMIT_SWITCH fault.
"""
from __future__ import annotations

import math
from typing import TYPE_CHECKING, List, Sequence

import numpy as np

from .interpolation import Segment, hold, ramp_to_stop

if TYPE_CHECKING:     # pragma: no cover
    from .core import BoardCore

# Code / State numbers of trajectory_downlink.proto (test_board_homing checks they agree with it)
BAD_REQUEST, FAULTED, HOMING_ACTIVE, LIMIT_SWITCH = 1, 8, 9, 25
OK, HOME_SWITCH_NOT_FOUND, HOMING_ABORTED = 0, 29, 30
HOMING = 5
#: the feature a board announces in its hello when it understands Home
FEATURE = "home"


class HomingRefused(Exception):
    """A Home the board refuses: ``code`` and a reason naming board, axis and cause."""

    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def move(t0: float, p0: np.ndarray, axis: int, sign: int, speed: float, distance: float,
         amax: float) -> List[Segment]:
    """One axis from rest at ``p0`` (every axis's position) ``distance`` toward ``sign`` at ``speed``:
    accelerate at ``amax``, cruise, decelerate to rest; the others hold.  Ends with a hold."""
    ta = speed / amax
    if amax * ta * ta > distance:            # too short to reach the speed: a triangle
        ta = math.sqrt(distance / amax)
        speed = amax * ta
    da = 0.5 * amax * ta * ta
    tc = (distance - 2 * da) / speed
    p = float(p0[axis])
    segs = []
    t = t0
    for duration, start, v, a in ((ta, p, 0.0, amax), (tc, p + sign * da, speed, 0.0),
                                  (ta, p + sign * (da + speed * tc), speed, -amax)):
        if duration <= 0:
            continue
        coef = np.zeros((p0.shape[0], 6))
        coef[:, 0] = p0
        coef[axis, :3] = (start, sign * v, sign * a / 2)
        segs.append(Segment(t, t + duration, coef, "homing"))
        t += duration
    end = p0.copy()
    end[axis] = p + sign * distance
    segs.append(hold(t, end))
    return segs


class HomingRun:
    """The homing of ``axes`` (indices) of ``core``, started at board time ``now``."""

    def __init__(self, core: "BoardCore", axes: Sequence[int], now: float) -> None:
        self.axes = list(axes)
        self.k = 0
        self.phase = "start"
        self.t_end = now           # when the move or ramp of the phase ends
        self.origin = 0.0          # where the search (or back-off) began
        self.offset = 0.0          # what the position moves by once the axis stopped
        self.homed: List[str] = []
        self.started = now
        del core

    # ---- helpers ---------------------------------------------------------------------------------

    def _where(self, core: "BoardCore", i: int) -> str:
        return f"board {core.config.name!r}, axis {core.config.axes[i].name!r}"

    @staticmethod
    def _replan(core: "BoardCore", t: float, segs: List[Segment]) -> float:
        core._truncate(t)
        core.plan.extend(segs)
        return segs[-1].t0

    def _stop(self, core: "BoardCore", t: float) -> float:
        p, v, _ = core.state_at(t)
        return self._replan(core, t, ramp_to_stop(t, p, v, core.amax))

    def _finish(self, core: "BoardCore", ok: bool, code: int, text: str, now: float) -> None:
        core.homing = None
        p = core.state_at(max(now, core.t_done))[0]
        core.events.append(("home_done", ok, code, text, list(self.homed), p.tolist(), now))

    # ---- the sequence ----------------------------------------------------------------------------

    def step(self, core: "BoardCore", now: float) -> None:
        i = self.axes[self.k]
        ax = core.config.axes[i]
        h = ax.homing
        assert h is not None
        t_sw = min(now, core.t_done)                     # what the switch reports and the pulses agree on
        t_move = max(now, core.t_done)                   # where a new motion may begin
        closed = bool(core.backend.switch_closed(i, h.switch, t_sw))
        if self.phase in ("start", "settle") and now >= self.t_end:
            p = core.state_at(t_move)[0]
            self.origin = float(p[i])
            if self.phase == "start" and not closed:
                self.t_end = self._replan(core, t_move, move(t_move, p, i, h.sign, h.search_speed,
                                                             h.max_travel, float(core.amax[i])))
                self.phase = "search"
            else:
                self.t_end = self._replan(core, t_move, move(t_move, p, i, -h.sign, h.backoff_speed,
                                                             h.max_backoff, float(core.amax[i])))
                self.phase = "backoff"
        elif self.phase == "search":
            if closed:
                self.t_end = self._stop(core, t_move)
                self.phase = "settle"
            elif now >= self.t_end:
                self._finish(core, False, HOME_SWITCH_NOT_FOUND,
                             f"{self._where(core, i)}: the {h.switch} limit switch did not close within "
                             f"max_travel {h.max_travel:g} {ax.unit} of search (from {self.origin:.4g} to "
                             f"{self.origin + h.sign * h.max_travel:.4g} {ax.unit}); the axis is not homed",
                             now)
        elif self.phase == "backoff":
            if not closed:
                self.offset = h.position - float(core.state_at(t_sw)[0][i])
                self.t_end = self._stop(core, t_move)
                self.phase = "set"
            elif now >= self.t_end:
                self._finish(core, False, HOME_SWITCH_NOT_FOUND,
                             f"{self._where(core, i)}: the {h.switch} limit switch did not open within "
                             f"max_backoff {h.max_backoff:g} {ax.unit} of back-off; the axis is not homed",
                             now)
        elif self.phase == "set" and now >= self.t_end and core.t_done >= self.t_end:
            set_position(core, i, float(core.state_at(core.t_done)[0][i]) + self.offset, core.t_done)
            self.homed.append(ax.name)
            self.k += 1
            self.phase = "start"
            if self.k == len(self.axes):
                self._finish(core, True, OK, f"board {core.config.name!r}: homed "
                             f"{', '.join(self.homed)} in {now - self.started:.2f} s", now)

    def abort(self, core: "BoardCore", why: str, now: float) -> float:
        """End the homing (a Cancel, a fault, the host lost): every axis ramps to a stop."""
        t_end = self._stop(core, max(now, core.t_done))
        i = self.axes[self.k]
        self._finish(core, False, HOMING_ABORTED, f"{self._where(core, i)}: homing {why}; "
                     f"homed before: {', '.join(self.homed) or 'none'}", now)
        return t_end


def start_homing(core: "BoardCore", names: Sequence[str], now: float) -> None:
    """Begin homing the named axes (empty: every axis with a homing switch); :class:`HomingRefused`."""
    board = f"board {core.config.name!r}"
    if core.homing is not None:
        raise HomingRefused(HOMING_ACTIVE, f"{board} is homing already")
    if core.fault is not None:
        raise HomingRefused(FAULTED, f"{board} holds fault {core.fault[0]} ({core.fault[1]}); reset faults "
                            "first")
    if core.active is not None or core.pending is not None or core.stopping is not None:
        raise HomingRefused(BAD_REQUEST, f"{board}: a goal runs; homing moves the axes and their zero, so it "
                            "is refused until the goal ended (or cancel it)")
    axes = core.config.axes
    can = [a.name for a in axes if a.homing is not None]
    for name in names:
        if name not in [a.name for a in axes]:
            raise HomingRefused(BAD_REQUEST, f"{board}: no axis {name!r}; its axes: "
                                f"{', '.join(a.name for a in axes)}")
        if name not in can:
            raise HomingRefused(BAD_REQUEST, f"{board}, axis {name!r}: no homing switch configured; axes "
                                f"that home: {', '.join(can) or 'none'}")
    picked = [i for i, a in enumerate(axes) if a.homing is not None and (not names or a.name in names)]
    if not picked:
        raise HomingRefused(BAD_REQUEST, f"{board}: no axis has a homing switch configured")
    for i in picked:
        h = axes[i].homing
        assert h is not None
        if core.backend.switch_closed(i, h.switch, min(now, core.t_done)) is None:
            raise HomingRefused(BAD_REQUEST, f"{board}, axis {axes[i].name!r}: the {core.backend.name} "
                                f"back-end has no input for its {h.switch} limit switch")
    core.homing = HomingRun(core, picked, now)


def set_position(core: "BoardCore", axis: int, value: float, t: float) -> None:
    """From board time ``t`` (every pulse up to it sent, the axis at rest) the axis's position is
    ``value``: the plan, the step count and the back-end's count move together; no pulse."""
    p = core.state_at(t)[0].copy()
    p[axis] = value
    core._truncate(t)
    core.plan.append(hold(t, p))
    core.s_prev[axis] = value * core.spu[axis]
    count = int(np.floor(core.s_prev[axis] + 0.5))
    core.backend.rebase(axis, count - int(core.count[axis]), t)
    core.count[axis] = count


def watch_switches(core: "BoardCore", now: float) -> None:
    """A limit switch closed while a goal moves the axes: the LIMIT_SWITCH fault, naming the axis."""
    t = min(now, core.t_done)
    for i, ax in enumerate(core.config.axes):
        for side in ("min", "max"):
            if core.backend.switch_closed(i, side, t):
                p = float(core.state_at(t)[0][i])
                core.raise_fault(LIMIT_SWITCH, f"axis {ax.name!r}: {side} limit switch closed at {p:.4g} "
                                 f"{ax.unit}; ramped to a stop", now, ax.name)
                return
