"""Accepting a trajectory: validation in ros_controllers' order, the plan built outside the loop's
lock and swapped in with a compare-and-swap, the previous goal preempted.  A part of
:class:`~rospy_control.trajectory.executor.TrajectoryExecutor` (see its module docstring for the
threading and lock order); it holds no state of its own.
"""
from __future__ import annotations

import logging
from typing import Any, Callable, Iterable, Optional, Tuple

from rospy_control.log import get_logger
from rospy_control.trajectory._state import ExecutorState
from rospy_control.trajectory.codes import INVALID_GOAL, SUCCESSFUL, code_name
from rospy_control.trajectory.message import TrajectoryRejected, init_joint_trajectory, map_joints
from rospy_control.trajectory.plan import Goal as _Goal, Plan as _Plan
from rospy_control.trajectory.prepared import PreparedTrajectory
from rospy_control.trajectory.segment import TrajectoryError
from rospy_control.trajectory.tolerances import Tolerances

logger = get_logger("rospy_control.trajectory.executor")


class GoalAcceptance(ExecutorState):
    """The executor's :meth:`accept` and what it validates and builds (mixed into the executor)."""

    def accept(self, trajectory: Any, goal_key: Any = None, path_tolerance: Iterable[Any] = (),
               goal_tolerance: Iterable[Any] = (), goal_time_tolerance: Any = 0.0,
               veto: Optional[Callable[["PreparedTrajectory"], Optional[Tuple[int, str]]]] = None
               ) -> Tuple[int, str]:
        """Accept a trajectory (topic command when ``goal_key`` is None, else an action goal).

        Validation in the order of ros_controllers' ``goalCB`` / ``updateTrajectoryCommand``: the
        controller must be running (else INVALID_GOAL), a goal's joint names must match the
        controller's (INVALID_JOINTS), then the points are checked while the trajectory is built
        (INVALID_GOAL, e.g. all in the past, or outside the limits).  On success the new trajectory
        replaces the current one from the next cycle (time-based merge) and the previously active
        goal is preempted.  An empty trajectory holds (or stops, with a ramp); for an action goal it
        succeeds once the hold/stop segment has ended.  Topic commands carry no tolerances.

        :param veto: called once with the :class:`PreparedTrajectory` after validation and before
            anything is swapped in (e.g. to hand the trajectory to a device that executes it); it
            returns None to go on, or ``(code, error_string)`` to refuse the trajectory, which then
            changes nothing.
        :returns: ``(code, error_string)``; code 0 (SUCCESSFUL) means accepted.
        """
        vetted = False
        with self._cmd_lock:
            for _ in range(8):
                plan = self._plan
                try:
                    new_plan = self._build(trajectory, goal_key, path_tolerance, goal_tolerance,
                                           goal_time_tolerance, plan)
                except TrajectoryRejected as err:
                    # A goal's client gets the result; a topic command's sender learns only from the
                    # log, so that is an error.  Throttled: a client may repeat a bad message fast.
                    is_goal = goal_key is not None
                    if self._reject_throttle.ready((is_goal, err.code)):
                        what = "goal" if is_goal else ("command (nothing executed, the controller keeps its "
                                                       "trajectory)")
                        logger.log(logging.WARNING if is_goal else logging.ERROR,
                                   "Rejected trajectory %s (%s): %s", what, code_name(err.code), err.message)
                    return err.code, err.message
                except TrajectoryError as err:  # pragma: no cover - defensive: a bug, not the client's fault
                    logger.error("Could not build trajectory: %s", err)
                    return INVALID_GOAL, f"Could not build trajectory: {err}"
                if veto is not None and not vetted:
                    vetted = True  # a rebuild after a concurrent swap executes the same message
                    prepared = self._prepared
                    assert prepared is not None  # _build sets it
                    refusal = veto(prepared)
                    if refusal is not None:
                        return int(refusal[0]), str(refusal[1])
                with self._state_lock:
                    if self._plan is not plan:
                        continue
                    self._plan = new_plan
                    reason = "preempted by a new goal" if goal_key is not None else "preempted by a command"
                    self._preempt_locked(plan, reason, self._time_data[0])
                return SUCCESSFUL, ""
        return INVALID_GOAL, "The executed trajectory kept changing while accepting this one; try again"

    def accept_goal(self, goal: Any, goal_key: Any) -> Tuple[int, str]:
        """:meth:`accept` for a FollowJointTrajectoryGoal-shaped ``goal``."""
        return self.accept(getattr(goal, "trajectory", None), goal_key, getattr(goal, "path_tolerance", ()),
                           getattr(goal, "goal_tolerance", ()), getattr(goal, "goal_time_tolerance", 0.0))

    def _build(self, msg: Any, goal_key: Any, path_tolerance: Iterable[Any], goal_tolerance: Iterable[Any],
               goal_time_tolerance: Any, plan: Optional[_Plan]) -> _Plan:
        """Validate and build the plan (``_cmd_lock`` held); also sets :attr:`_prepared` for the veto."""
        if not self._running or plan is None:
            raise TrajectoryRejected(INVALID_GOAL, "Controller is not running")
        if msg is None:
            raise TrajectoryRejected(INVALID_GOAL, "No trajectory given")
        is_goal = goal_key is not None
        if is_goal:
            map_joints(getattr(msg, "joint_names", None) or (), self._names, self._allow_partial)
        goal = _Goal(goal_key, self._n) if is_goal else None
        t, period, uptime = self._time_data
        if not (getattr(msg, "points", None) or ()):
            hold = self._hold_plan(plan, goal)
            self._prepared = PreparedTrajectory(hold.trajectory, -1, uptime, t, uptime)
            return hold
        latest = self._latest
        result = init_joint_trajectory(msg, self._names, t + period, uptime + period, plan.trajectory,
                                       self._continuous, self._allow_partial, self._limits,
                                       None if latest is None else latest[3])
        if is_goal:
            new_tol = self._default_tolerances.with_goal(self._names, path_tolerance, goal_tolerance,
                                                         goal_time_tolerance)
        else:
            new_tol = Tolerances.none(self._n)
        tolerances = plan.tolerances.merged(new_tol, result.joints_in_message)
        self._prepared = PreparedTrajectory(result.trajectory, result.first_point, result.start_time,
                                            t + period, uptime + period)
        return _Plan(result.trajectory, tolerances, goal, self._timeout_margin, self._limits)
