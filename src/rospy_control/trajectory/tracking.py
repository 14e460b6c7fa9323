"""Tracking a goal against its tolerances, and what ends it: the exact path/goal tolerance check of
the control loop, the desired state kept inside the position limits, the goal's end (succeeded or
aborted, holding on abort) and the hold and stop-ramp plans a cancel, an abort or an empty trajectory
executes.  A part of :class:`~rospy_control.trajectory.executor.TrajectoryExecutor` (see its module
docstring for the threading and lock order); it holds no state of its own.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from rospy_control.log import get_logger
from rospy_control.trajectory._state import ExecutorState
from rospy_control.trajectory.codes import (
    GOAL_TOLERANCE_VIOLATED, PATH_TOLERANCE_VIOLATED, SUCCESSFUL, code_name,
)
from rospy_control.trajectory.plan import ABORTED, SUCCEEDED, GoalEvent
from rospy_control.trajectory.plan import Goal as _Goal, Plan as _Plan
from rospy_control.trajectory.segment import TrajectoryError
from rospy_control.trajectory.tolerances import Tolerances
from rospy_control.trajectory.trajectory import Trajectory

logger = get_logger("rospy_control.trajectory.executor")

_TWO_PI = 2.0 * np.pi
_INF = float("inf")


class GoalTracking(ExecutorState):
    """The executor's tolerance checks, goal ends and hold plans (mixed into the executor)."""

    def _loop_facts(self, plan: _Plan, i: int) -> tuple:
        """What :meth:`_step` needs to know of grid interval ``i`` of ``plan``'s trajectory (cheap:
        a few list look-ups, as the loop calls it whenever it enters an interval).

        * ``inside``: True if every sample of the interval is certainly within the position limits
          (:attr:`Plan.inside`, computed with the plan from the trajectory's ``position_bounds``);
          then the per-cycle limit check is skipped.
        * ``checks``: ``(index, index, threshold)`` of the enforced path tolerances of the joints
          inside a piece (index ``j < n``: position of joint ``j``; ``n + j``: its velocity; twice,
          as the desired and the measured index of :func:`_raw_errors_within`), None when none
          applies in this interval;
        * ``full``: True if the goal tolerances apply (a joint has finished its last piece): every
          cycle then runs the exact check;
        * ``rows``: the coefficient rows (constant term first) of the desired positions, then of the
          velocities that ``checks`` compares, as tuples of Python floats;
        * ``row_checks``: ``checks`` as ``(index into the values of rows, index, threshold)``.
        """
        traj = plan.trajectory
        inside = plan.inside[i] if plan.inside is not None else False
        checks = None
        n = self._n
        if plan.check_path and traj.any_path[i]:
            in_path = traj.in_path[i].tolist()
            checks = [(j, j, t) for j, t in enumerate(plan.path_limits)
                      if t < _INF and in_path[j % n]] or None
        matrix = traj.matrices[i].tolist()
        rows = [tuple(matrix[j]) for j in range(n)]
        row_checks = []
        for _, j, threshold in checks or ():
            if j >= n:
                rows.append(tuple(matrix[j]))
            row_checks.append((j if j < n else len(rows) - 1, j, threshold))
        return inside, checks, bool(traj.any_end[i]), rows, row_checks or None

    def _clip_to_limits(self, r: np.ndarray, lower: np.ndarray, upper: np.ndarray) -> np.ndarray:
        """Desired state with positions beyond the limits put on the limit, at rest there.

        Every executed point lies inside the limits, but a spline between them can overshoot: a
        bridge from a state with a large velocity or acceleration (points 50 ms apart that ask for
        tens of rad/s, then a replacement) swings far out before it reaches its first point.  The
        joint waits on the limit instead, so no command ever leaves the limits (the RobotHW's limit
        handles, if any, would clip it too; path tolerances see the clipped desired state).
        """
        n = self._n
        p = r[:n]
        out = (p < lower) | (p > upper)
        r = r.copy()
        r[:n] = np.clip(p, lower, upper)
        r[n:2 * n][out] = 0.0
        r[2 * n:][out] = 0.0
        far = (p < lower - 1e-3) | (p > upper + 1e-3)  # a hold where the joint rests a hair outside: quiet
        if far.any() and self._clip_throttle.ready():
            logger.warning("Desired position of %s lies beyond the position limits (spline overshoot "
                           "between points, or a hold where the joint rests beyond a limit): commanding "
                           "the limit instead", [self._names[j] for j in np.flatnonzero(far)])
        return r

    def _check(self, plan: _Plan, goal: _Goal, i: int, uptime: float, r: np.ndarray, pos: np.ndarray,
               vel: np.ndarray, time: float) -> None:
        traj = plan.trajectory
        check_path = plan.check_path and traj.any_path[i]
        check_end = traj.any_end[i]
        timed_out = uptime >= plan.deadline
        if not (check_path or check_end or timed_out):
            return
        n = self._n
        ep = np.pi - np.remainder(np.pi - (r[:n] - pos), _TWO_PI)
        ev = r[n:2 * n] - vel
        aep = np.abs(ep)
        aev = np.abs(ev)
        bad = None
        path_bad = None
        if check_path:
            path_bad = aep > plan.path_pos
            if plan.check_path_vel:
                path_bad |= aev > plan.path_vel
            path_bad &= traj.in_path[i]
            bad = path_bad
        if check_end:
            end_mask = traj.at_end[i]
            inside = (aep <= plan.goal_pos) & (aev <= plan.goal_vel)
            goal.done |= inside & end_mask
            late = end_mask & ~inside & (uptime >= plan.goal_deadlines)
            bad = late if bad is None else (bad | late)
        if bad is not None and bad.any():
            j = int(np.argmax(bad))
            if path_bad is not None and path_bad[j]:
                text = self._error_text(j, "path", ep[j], ev[j], plan.path_pos[j], plan.path_vel[j])
                self._finish(plan, goal, ABORTED, PATH_TOLERANCE_VIOLATED, text, time, uptime, r, pos)
            else:
                text = self._error_text(j, "goal", ep[j], ev[j], plan.goal_pos[j], plan.goal_vel[j])
                self._finish(plan, goal, ABORTED, GOAL_TOLERANCE_VIOLATED, text, time, uptime, r, pos)
        elif goal.done.all():
            self._finish(plan, goal, SUCCEEDED, SUCCESSFUL, "", time, uptime, r, pos)
        elif timed_out:
            j = int(np.argmin(goal.done))
            waiting = [self._names[k] for k in np.flatnonzero(~goal.done)]
            text = (f"{self._names[j]} goal error {ep[j]:f}: goal timed out, joint(s) {waiting} not within "
                    f"the goal tolerance {self._timeout_margin:.3f} s after the trajectory end plus "
                    f"goal_time")
            self._finish(plan, goal, ABORTED, GOAL_TOLERANCE_VIOLATED, text, time, uptime, r, pos)

    def _error_text(self, j: int, kind: str, ep: float, ev: float, tol_p: float, tol_v: float) -> str:
        text = f"{self._names[j]} {kind} error {ep:f}"
        if abs(ep) > tol_p:
            return text + f" (position error exceeds the {kind} tolerance {tol_p:f})"
        return text + f" (velocity error {ev:f} exceeds the {kind} velocity tolerance {tol_v:f})"

    def _finish(self, plan: _Plan, goal: _Goal, status: str, code: int, text: str, time: float, uptime: float,
                r: np.ndarray, pos: np.ndarray) -> None:
        """Loop thread: end ``goal`` (and hold on abort if configured)."""
        hold = None
        if status == ABORTED and self.hold_on_abort:
            n = self._n
            hold = self._hold_plan_from(uptime, pos, r[:n], r[n:2 * n], None)
        with self._state_lock:
            if not goal.active:
                return
            goal.active = False
            if hold is not None and self._plan is plan:
                self._plan = hold
            self._events.append(GoalEvent(goal.key, status, code, text, float(time)))
        if status == ABORTED:
            logger.warning("Trajectory goal aborted (%s): %s%s", code_name(code), text,
                           "; holding position" if hold is not None else "; trajectory continues")
        else:
            logger.debug("Trajectory goal succeeded")

    def _hold_plan(self, plan: _Plan, goal: Optional[_Goal]) -> _Plan:
        """Hold/stop plan at the last update's uptime, built from the latest state."""
        latest = self._latest
        uptime = self._time_data[2]
        desired = plan.trajectory.sample(uptime)
        # Not running yet: nothing measured, so the hold starts from the desired state.
        measured = np.array(latest[3], dtype=float) if latest is not None else np.full(self._n, np.nan)
        return self._hold_plan_from(uptime, measured, desired[0], desired[1], goal)

    def _hold_plan_from(self, uptime: float, measured: np.ndarray, desired_pos: np.ndarray,
                        desired_vel: np.ndarray, goal: Optional[_Goal]) -> _Plan:
        """Hold (stop duration 0: at the measured position) or stop ramp (from the desired state).

        Joints whose desired state is not usable (not finite, or refused by the limits) start
        from their measured position at rest, whatever the stop duration.  Never raises.
        """
        measured = np.asarray(measured, dtype=float)
        if self._stop_duration > 0.0:
            pos, vel, usable = self._limits.start_state(desired_pos, desired_vel, measured)
            if not usable.all() and self._hold_throttle.ready():
                bad = [self._names[j] for j in np.flatnonzero(~usable)]
                logger.warning("Desired state of %s is not usable (not finite or outside the limits): "
                               "stopping at the measured position instead", bad)
            vel = self._limits.stop_velocities(pos, vel, self._stop_reach)
        else:  # upstream: hold the measured position (the desired one only if there is no measurement)
            fallback, _, _ = self._limits.start_state(desired_pos, self._zeros, None)
            meas = np.asarray(measured, dtype=float)
            pos, vel = np.where(np.isfinite(meas), meas, fallback), self._zeros
        return _Plan(self._hold_trajectory(uptime, pos, vel), Tolerances.none(self._n), goal,
                     self._timeout_margin, self._limits)

    def _hold_trajectory(self, uptime: float, pos: np.ndarray, vel: np.ndarray) -> Trajectory:
        """Stop ramp (or hold) from a sanitised state; falls back to a plain hold, never raises."""
        try:
            return Trajectory.stop_ramp(uptime, pos, vel, self._stop_duration)
        except TrajectoryError as err:  # pragma: no cover - defensive: inputs are finite and bounded
            logger.error("Could not build the stop ramp (%s): holding the position", err)
            return Trajectory.hold(uptime, pos)
