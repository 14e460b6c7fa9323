"""The ROS-free core of the joint trajectory controller and of the FollowJointTrajectory server.

:class:`TrajectoryExecutor` owns everything ros_controllers' JointTrajectoryController does except
ROS: the time base, accepting trajectories (validation, replacement merge, wraparound, partial
goals), holding and stopping, path/goal tolerance checking and goal bookkeeping.  A ROS wrapper is
thin:

* control loop (one thread): ``start(time, positions, velocities)`` when the controller starts,
  then every cycle ``desired = update(time, period, positions, velocities)`` and write the desired
  ``(positions, velocities, accelerations)`` to the hardware; ``stopping()`` when it stops.
* ROS callbacks (any threads): ``accept(msg)`` for a ``command`` topic message;
  ``accept(goal.trajectory, goal_key=gh, path_tolerance=..., goal_tolerance=...,
  goal_time_tolerance=...)`` (or ``accept_goal(goal, gh)``) for an action goal, then
  ``set_rejected`` if the returned code is not 0, else ``set_accepted``; ``cancel(gh)`` for a
  cancel request; ``query_state(time)`` for the service.
* a timer at ``action_monitor_rate`` (not the loop): ``for ev in poll_events()`` set the goal
  ``ev.goal_key`` succeeded / aborted / canceled (``ev.status``) with ``ev.error_code`` and
  ``ev.error_string``; publish ``feedback()`` for the active goal and the ``state`` topic.

Behaviour follows ros_controllers' joint_trajectory_controller (Noetic) with these documented
additions, each with a safe default:

* ``hold_on_abort`` (default True): a goal aborted for a tolerance violation stops the robot (hold,
  or the stop ramp if ``stop_trajectory_duration > 0``).  Upstream keeps executing the aborted
  trajectory (ros_controllers#48); pass False for that.
* goal timeout: per joint the goal check is upstream's (a joint still outside its goal tolerance at
  ``end + goal_time`` aborts the goal -- with the default ``goal_time`` 0 that is the first cycle
  after the end).  On top of that a watchdog aborts any goal that has not finished
  ``goal_timeout_margin`` (default :data:`DEFAULT_GOAL_TIMEOUT_MARGIN` = 1 s) after the latest
  ``end + goal_time`` of its joints, whatever the reason, so a goal can never stay active forever.
* NaN/inf anywhere in the executed points are refused with INVALID_GOAL; duplicated joint names
  with INVALID_JOINTS.
* limits (:class:`~rospy_control.trajectory.limits.TrajectoryLimits`, given by the controller from
  the URDF and ``joint_limits``; absolute bounds only when none are given): executed points outside
  a joint's position limits, or with a velocity/acceleration far beyond its limits, are refused
  with INVALID_GOAL naming the point, joint, value and bound; see that module for the factors.
* a hold, stop ramp or bridge never starts from a desired state that is not finite or that the
  limits would refuse: such joints start from their measured position at rest.  Building a hold
  cannot fail, so a cancel or preemption is always answered at once.  A stop ramp's start velocity
  is scaled so that the ramp comes to rest inside the position limits.
* the desired position never leaves the position limits: where a spline between points inside them
  overshoots (a bridge from a fast or strongly accelerating state), the joint waits on the limit.
* points with more values than joints are accepted (the extra values are ignored, as upstream).
* one clear warning per dropped-point situation instead of upstream's "Dropping ..." messages.

Threading and lock order
------------------------
The loop never blocks on a ROS thread: the current *plan* (trajectory + tolerances + goal) is an
immutable object behind one reference.  ``update`` reads that reference once per cycle without a
lock.  ``accept``/``cancel``/``hold`` build the new plan **outside** any lock the loop takes
(``accept`` calls are serialised among themselves by ``_cmd_lock``), then swap the reference under
the short ``_state_lock`` with a compare-and-swap: if the plan was replaced meanwhile (the loop
aborted a goal and holds, or a cancel/hold came in), the command is rebuilt on the new plan.  The
loop takes ``_state_lock`` only for rare transitions (goal succeeded/aborted, abort-hold,
``start``/``stopping``), for a few assignments.  Lock order: ``_cmd_lock`` -> ``_state_lock``; only
``accept`` takes ``_cmd_lock``.  ``hold``, ``abort`` and ``cancel`` build cheap hold plans and only
take ``_state_lock``, so they may also be called from the loop thread (e.g. ``abort`` on a hardware
fault); ``accept`` must not be (it may spend milliseconds building a long trajectory).  Goal events
go through a ``collections.deque`` (atomic append/popleft) drained by ``poll_events``.
"""
from __future__ import annotations

import threading
from bisect import bisect_right
from collections import deque
from typing import Any, Deque, List, Optional, Sequence, Tuple

import numpy as np

from rospy_control.exceptions import ConfigError
from rospy_control.log import Throttle, get_logger
from rospy_control.trajectory.codes import PATH_TOLERANCE_VIOLATED, SUCCESSFUL, code_name
from rospy_control.trajectory.limits import MAX_TIME, TrajectoryLimits
from rospy_control.trajectory.plan import (  # Goal/Plan: the executor's internals, hence private here
    ABORTED, PREEMPTED, FeedbackSnapshot, GoalEvent, QueryStateResult,
)
from rospy_control.trajectory.plan import Goal as _Goal, Plan as _Plan
from rospy_control.trajectory.segment import TrajectoryError
from rospy_control.trajectory.tolerances import (
    Tolerances, lookup_param, number_param, shortest_angular_distance, tolerances_from_params,
)
from rospy_control.trajectory.acceptance import GoalAcceptance
from rospy_control.trajectory.prepared import PreparedTrajectory  # noqa: F401 - accept()'s veto sees it
from rospy_control.trajectory.tracking import GoalTracking
from rospy_control.trajectory.trajectory import Trajectory

logger = get_logger(__name__)

#: Seconds after ``end + goal_time`` after which the watchdog aborts a goal that is still active.
DEFAULT_GOAL_TIMEOUT_MARGIN = 1.0

_TWO_PI = 2.0 * np.pi

# Per-cycle numpy calls that neither go through Python-level wrappers (``ndarray.any``,
# ``np.count_nonzero``) nor release the GIL (``ndarray.dot`` calls BLAS, which drops the GIL: the
# loop thread then waits for the bus and simulator threads to give it back, up to the 5 ms switch
# interval, and pays two thread switches per cycle).
_any = np.logical_or.reduce


_matvec = np.matmul


def _sample(matrix: np.ndarray, tau: float) -> np.ndarray:
    """The desired state ``matrix @ [1, tau, ..., tau^5]`` of one grid interval (np.matmul, which
    keeps the GIL; a fresh power vector, as feedback calls this from another thread too)."""
    t2 = tau * tau
    return _matvec(matrix, np.array((1.0, tau, t2, t2 * tau, t2 * t2, t2 * t2 * tau)))


def _raw_errors_within(desired: List[float], measured: List[float],
                       checks: List[Tuple[int, int, float]]) -> bool:
    """True if no raw error ``desired[k] - measured[j]`` exceeds its threshold, for each
    ``(k, j, threshold)`` of ``checks``.  |shortest angular distance| <= |raw difference|, so then
    there is no path violation (what the exact check would conclude); False means the exact check
    decides (also for a measured value that is not a number)."""
    try:
        for k, j, threshold in checks:
            if abs(desired[k] - measured[j]) > threshold:
                return False
    except TypeError:
        return False
    return True


_INF = float("inf")

Desired = Tuple[np.ndarray, np.ndarray, np.ndarray]


class TrajectoryExecutor(GoalAcceptance, GoalTracking):
    """Trajectory execution for a fixed set of joints (see the module docstring).

    :param joint_names: controlled joints, in controller order (non-empty, unique).
    :param continuous: per joint, True for continuous joints (angle wraparound); default none.
    :param tolerances: default tolerances (see :func:`tolerances_from_params`); default none enforced
        except the stopped velocity tolerance 0.01 rad/s.
    :param stop_trajectory_duration: 0 = hold at the measured position; > 0 = stop ramp of this
        duration (s) from the desired state.
    :param allow_partial_joints_goal: accept goals and commands for a subset of the joints.
    :param hold_on_abort: stop the robot when a goal is aborted (upstream: False).
    :param goal_timeout_margin: watchdog margin (s) after ``end + goal_time``; None disables it.
    :param limits: bounds of accepted points and of usable hold start states (default: only the
        absolute bounds of :mod:`~rospy_control.trajectory.limits`).
    :raises ConfigError: invalid joint list or parameters.
    """

    def __init__(self, joint_names: Sequence[str], continuous: Optional[Sequence[bool]] = None,
                 tolerances: Optional[Tolerances] = None, stop_trajectory_duration: float = 0.0,
                 allow_partial_joints_goal: bool = False, hold_on_abort: bool = True,
                 goal_timeout_margin: Optional[float] = DEFAULT_GOAL_TIMEOUT_MARGIN,
                 limits: Optional[TrajectoryLimits] = None) -> None:
        names = [str(n) for n in joint_names]
        if not names:
            raise ConfigError("'joints' must be a non-empty list of joint names")
        if len(set(names)) != len(names):
            raise ConfigError(f"'joints' contains duplicated names: {names}")
        n = len(names)
        self._names = names
        self._n = n
        cont = [False] * n if continuous is None else [bool(c) for c in continuous]
        if len(cont) != n:
            raise ConfigError(f"'continuous' has {len(cont)} entries for {n} joints")
        self._continuous = np.array(cont, dtype=bool)
        if tolerances is None:
            tolerances = tolerances_from_params({}, names)
        if tolerances.n_joints != n:
            raise ConfigError(f"tolerances are for {tolerances.n_joints} joints, expected {n}")
        self._default_tolerances = tolerances
        self._stop_duration = float(stop_trajectory_duration)
        if not np.isfinite(self._stop_duration) or not 0.0 <= self._stop_duration <= MAX_TIME:
            raise ConfigError(f"'stop_trajectory_duration' must be >= 0 and <= {MAX_TIME:g} s, got "
                              f"{stop_trajectory_duration!r}")
        self._allow_partial = bool(allow_partial_joints_goal)
        self.hold_on_abort = bool(hold_on_abort)
        if goal_timeout_margin is not None and not goal_timeout_margin >= 0.0:
            raise ConfigError(f"'goal_timeout_margin' must be >= 0, got {goal_timeout_margin!r}")
        self._timeout_margin = goal_timeout_margin
        if limits is None:
            limits = TrajectoryLimits.unlimited(names)
        if limits.joint_names != names:
            raise ConfigError(f"limits are for joints {limits.joint_names}, expected {names}")
        self._limits = limits
        # travel of the stop ramp per unit of start velocity (its quintic is linear in the velocity)
        self._stop_reach = (float(Trajectory.stop_ramp(0.0, [0.0], [1.0], self._stop_duration)
                                  .sample(self._stop_duration)[0][0]) if self._stop_duration > 0.0 else 0.0)

        self._cmd_lock = threading.Lock()
        self._state_lock = threading.Lock()
        self._events: Deque[GoalEvent] = deque()
        self._running = False
        self._uptime = 0.0
        self._time_data = (0.0, 0.0, 0.0)  # (ROS time, period, uptime) of the last update
        # (time, uptime, desired (3n,), positions, velocities); measured ones as lists or arrays
        self._latest: Optional[tuple] = None
        self._plan: Optional[_Plan] = None
        self._prepared: Optional[PreparedTrajectory] = None  # set by _build, read by accept (_cmd_lock)
        #: the desired positions of the latest cycle as Python floats: the first ``n`` values (what
        #: follows them differs by path); what a controller writes to its handles, no conversion needed
        self.desired_values: List[float] = []
        self._zeros = np.zeros(n)
        self._reject_throttle = Throttle(1.0)
        self._hold_throttle = Throttle(5.0)
        self._clip_throttle = Throttle(5.0)

    @classmethod
    def from_params(cls, joint_names: Sequence[str], params: Any, continuous: Optional[Sequence[bool]] = None,
                    source: Optional[str] = None,
                    limits: Optional[TrajectoryLimits] = None) -> "TrajectoryExecutor":
        """Executor configured from the controller namespace.

        Reads ``constraints/...`` (see :mod:`~rospy_control.trajectory.tolerances`),
        ``stop_trajectory_duration`` (0.0), ``allow_partial_joints_goal`` (False) and ours,
        ``hold_on_abort`` (True) and ``goal_timeout_margin`` (1.0 s; negative disables).

        :param params: dict (flat or nested) or object with ``get_param(key, default)``.
        :param limits: see the class (not a parameter of the namespace: the controller reads them
            from the URDF and ``joint_limits``).
        """
        tol = tolerances_from_params(params, joint_names, source)
        stop = number_param(params, "stop_trajectory_duration", 0.0, source)
        margin_value = number_param(params, "goal_timeout_margin", DEFAULT_GOAL_TIMEOUT_MARGIN, source)
        margin: Optional[float] = None if margin_value < 0.0 else margin_value
        flags = {}
        for key, default in (("allow_partial_joints_goal", False), ("hold_on_abort", True)):
            value = lookup_param(params, key, default)
            if not isinstance(value, (bool, int)):
                raise ConfigError(f"parameter '{key}' must be a boolean, got {value!r}", source)
            flags[key] = bool(value)
        return cls(joint_names, continuous, tol, stop, flags["allow_partial_joints_goal"],
                   flags["hold_on_abort"], margin, limits)

    # ------------------------------------------------------------------------------ properties
    @property
    def joint_names(self) -> List[str]:
        """Controlled joints, in order."""
        return list(self._names)

    @property
    def running(self) -> bool:
        """True between :meth:`start` and :meth:`stopping`."""
        return self._running

    @property
    def uptime(self) -> float:
        """Internal time (s): 0 at :meth:`start`, plus ``period`` at every :meth:`update`."""
        return self._uptime

    @property
    def limits(self) -> TrajectoryLimits:
        """Bounds of accepted points (and of usable hold start states)."""
        return self._limits

    @property
    def default_tolerances(self) -> Tolerances:
        """Tolerances applied to action goals before their own overrides."""
        return self._default_tolerances

    @property
    def trajectory(self) -> Optional[Trajectory]:
        """The trajectory being executed (internal time base), None before :meth:`start`."""
        plan = self._plan
        return None if plan is None else plan.trajectory

    @property
    def active_goal_key(self) -> Any:
        """Key of the goal being executed, or None."""
        plan = self._plan
        goal = None if plan is None else plan.goal
        return goal.key if goal is not None and goal.active else None

    def has_events(self) -> bool:
        """Whether goal events wait for :meth:`poll_events` (thread-safe, cheap)."""
        return bool(self._events)

    def poll_events(self) -> List[GoalEvent]:
        """Goal events since the last call, oldest first (thread-safe)."""
        out: List[GoalEvent] = []
        events = self._events
        while True:
            try:
                out.append(events.popleft())
            except IndexError:
                return out

    # ------------------------------------------------------------------------------ control loop
    def start(self, time: float, positions: Sequence[float],
              velocities: Optional[Sequence[float]] = None) -> None:
        """Controller ``starting()``: uptime := 0, hold the measured state (loop thread).

        With a stop ramp configured the robot decelerates from the measured velocity (a joint whose
        measured state the limits would refuse as a point starts at rest instead).
        An active goal (restart) is preempted.

        :raises TrajectoryError: a measured position is not finite (nothing safe to hold).
        """
        pos = self._measured(positions, "positions")
        vel = self._zeros.copy() if velocities is None else self._measured(velocities, "velocities")
        vel = np.where(self._limits.usable(pos, vel), vel, 0.0)
        vel = self._limits.stop_velocities(np.clip(pos, self._limits.lower, self._limits.upper), vel,
                                           self._stop_reach)
        traj = Trajectory.stop_ramp(0.0, pos, vel, self._stop_duration)
        plan = _Plan(traj, Tolerances.none(self._n), None, self._timeout_margin, self._limits)
        with self._state_lock:
            self._preempt_locked(self._plan, "controller restarted", float(time))
            self._uptime = 0.0
            self._time_data = (float(time), 0.0, 0.0)
            self._latest = (float(time), 0.0, np.concatenate((pos, vel, self._zeros)), pos, vel)
            self._plan = plan
            self._running = True

    def stopping(self, time: Optional[float] = None) -> None:
        """Controller ``stopping()``: the active goal is preempted; nothing is commanded."""
        with self._state_lock:
            self._preempt_locked(self._plan, "controller stopped",
                                 self._time_data[0] if time is None else float(time))
            self._running = False

    def update(self, time: float, period: float, positions: Sequence[float],
               velocities: Optional[Sequence[float]] = None) -> Desired:
        """One control cycle: advance uptime by ``period``, sample, check tolerances.

        :param time: ROS time (s) of this cycle.
        :param period: seconds since the previous cycle.
        :param positions: measured joint positions (controller order).
        :param velocities: measured joint velocities (None: zeros).
        :returns: desired ``(positions, velocities, accelerations)``: views of one array made
            fresh every cycle and also kept for :meth:`feedback` -- copy before modifying in place.
        """
        if not self._running:
            self.start(time, positions, velocities)
        n = self._n
        measured = np.empty(2 * n)
        measured[:n] = positions
        measured[n:] = 0.0 if velocities is None else velocities
        r = self._step(time, period, measured.tolist())
        assert r is not None  # full: always the whole sample
        return r[:n], r[n:2 * n], r[2 * n:]

    def update_stacked(self, time: float, period: float, measured: Sequence[float]) -> np.ndarray:
        """:meth:`update` for a controller that reads its joints into one list per cycle.

        :param measured: a list of the ``n`` measured positions followed by the ``n`` measured
            velocities (not kept: the executor copies what it keeps).
        :returns: the desired ``[positions, velocities, accelerations]`` as one array of ``3n``
            values (fresh every cycle, also kept for :meth:`feedback`).
        """
        if not self._running:
            n = self._n
            self.start(time, measured[:n], measured[n:])
        values: List[float] = (measured if isinstance(measured, list)
                               else np.asarray(measured, dtype=float).tolist())
        r = self._step(time, period, values)
        assert r is not None  # full: always the whole sample
        return r

    def update_positions(self, time: float, period: float, measured: Sequence[float]) -> List[float]:
        """:meth:`update_stacked` for a controller that commands positions only (the position
        trajectory controller): returns the desired positions (``n`` floats, also
        :attr:`desired_values`), with the same tolerance checks and events.

        The common cycle (inside the limits, not yet at the goal's end) evaluates only the rows of
        the sample it needs in Python and leaves the rest of the desired state to whoever asks
        (:meth:`feedback`): no numpy call at all, which on a host whose caches went cold while the
        loop slept is what a cycle costs most.
        """
        if not self._running:
            n = self._n
            self.start(time, measured[:n], measured[n:])
        values: List[float] = (measured if isinstance(measured, list)
                               else np.asarray(measured, dtype=float).tolist())
        self._step(time, period, values, False)
        return self.desired_values

    def _step(self, time: float, period: float, measured: List[float],
              full: bool = True) -> Optional[np.ndarray]:
        """The cycle after the measured state became one list ``[positions, velocities]`` (2n).

        Cheap while a goal runs: what the cycle needs of the current grid interval (the path
        thresholds where a joint is inside a piece, whether the desired positions can leave the
        limits at all, the polynomial rows to evaluate) is computed once per interval and kept on
        the plan (:meth:`_loop_facts`).  A cycle then costs one mat-vec for the sample (or, without
        ``full``, the positions and checked rows evaluated in Python) and, with path tolerances, a
        comparison of the raw errors of the checked joints against their thresholds, on Python floats
        (for a dozen joints cheaper than numpy's per-call overhead); only when that comparison fires
        (or near the goal's end) does the exact check of :meth:`_check` run, with upstream's
        semantics.  The measured state is kept as lists (:meth:`feedback` and the hold builders
        convert).

        :param full: return the whole desired state as an array; without it the return value is
            None when the cycle took the positions-only way (:attr:`desired_values` holds the
            desired positions either way).
        """
        uptime = self._uptime + period
        self._uptime = uptime
        self._time_data = (time, period, uptime)
        plan = self._plan
        if plan is None:  # pragma: no cover - start() always sets one
            raise TrajectoryError("TrajectoryExecutor.update() without a plan")
        traj = plan.trajectory
        knots = traj.knots
        i = bisect_right(knots, uptime)  # as Trajectory.sample_interval, without a call
        tau = uptime - knots[i - 1] if i else 0.0
        cache = plan.loop_cache
        if cache is None or cache[0] != i:
            cache = plan.loop_cache = (i,) + self._loop_facts(plan, i)
        n = self._n
        pos = measured[:n]
        vel = measured[n:2 * n]
        goal = plan.goal
        active = goal is not None and goal.active
        if not full and cache[1] and not (active and (cache[3] or uptime >= plan.deadline)):
            # inside the limits and no exact check due: the rows this cycle needs (positions, then
            # the velocities a path tolerance checks), by Horner's rule on Python floats
            t = tau
            values = [((((c5 * t + c4) * t + c3) * t + c2) * t + c1) * t + c0
                      for c0, c1, c2, c3, c4, c5 in cache[4]]
            self.desired_values = values
            self._latest = (time, uptime, (traj.matrices[i], tau), pos, vel)  # sampled when asked
            checks = cache[5]
            if not (active and checks) or _raw_errors_within(values, measured, checks):
                return None
            r = _sample(traj.matrices[i], tau)
            self._latest = (time, uptime, r, pos, vel)
            self._check_measured(plan, goal, i, uptime, r, pos, vel, time)
            return None
        r = _sample(traj.matrices[i], tau)
        if not cache[1]:  # the interval's desired positions may leave the limits: check this sample
            lower, upper = self._limits.lower, self._limits.upper
            p = r[:n]
            if _any(p < lower) or _any(p > upper):
                r = self._clip_to_limits(r, lower, upper)
        self._latest = (time, uptime, r, pos, vel)
        desired = self.desired_values = r.tolist()
        if active:
            checks = cache[2]
            if cache[3] or uptime >= plan.deadline:
                self._check_measured(plan, goal, i, uptime, r, pos, vel, time)
            elif checks and not _raw_errors_within(desired, measured, checks):
                self._check_measured(plan, goal, i, uptime, r, pos, vel, time)
        return r

    def _check_measured(self, plan: _Plan, goal: Optional[_Goal], i: int, uptime: float, r: np.ndarray,
                        pos: Sequence[float], vel: Sequence[float], time: float) -> None:
        assert goal is not None  # only called while a goal is active
        self._check(plan, goal, i, uptime, r, np.array(pos, dtype=float), np.array(vel, dtype=float), time)

    # ------------------------------------------------------------------------------ commands

    def _preempt_locked(self, plan: Optional[_Plan], reason: str, time: float) -> None:
        """With ``_state_lock`` held: preempt ``plan``'s goal if still active."""
        goal = None if plan is None else plan.goal
        if goal is not None and goal.active:
            goal.active = False
            self._events.append(GoalEvent(goal.key, PREEMPTED, SUCCESSFUL, reason, float(time)))

    def _replace(self, make, condition=None, on_swap=None) -> bool:
        """Build a plan from the current one with ``make(plan)`` and swap it in (CAS, retried).

        ``condition(plan)`` (checked before building and again under the state lock) can veto;
        ``on_swap(old_plan)`` runs under the state lock right after the swap.  Does not take
        ``_cmd_lock``: hold/stop plans are cheap to build, so this is safe from the loop thread too
        (an ``accept`` building concurrently notices the swap and rebuilds).
        """
        for _ in range(8):
            plan = self._plan
            if plan is None or not self._running:
                return False
            if condition is not None and not condition(plan):
                return False
            new_plan = make(plan)
            with self._state_lock:
                if self._plan is not plan:
                    continue
                if condition is not None and not condition(plan):
                    return False
                self._plan = new_plan
                if on_swap is not None:
                    on_swap(plan)
                return True
        return False  # pragma: no cover - the plan was replaced 8 times in a row

    def cancel(self, goal_key: Any) -> bool:
        """Cancel request: if ``goal_key`` is the active goal, hold and preempt it (else ignored).

        :returns: True if the goal was active and is now preempted.
        """
        def is_active(plan: _Plan) -> bool:
            return plan.goal is not None and plan.goal.active and plan.goal.key == goal_key

        return self._replace(lambda plan: self._hold_plan(plan, None), is_active,
                             lambda old: self._preempt_locked(old, "canceled", self._time_data[0]))

    def hold(self, reason: str = "hold requested") -> bool:
        """Hold (or stop with the ramp) now; the active goal, if any, is preempted with ``reason``.

        :returns: False if the executor is not running.
        """
        return self._replace(lambda plan: self._hold_plan(plan, None), None,
                             lambda old: self._preempt_locked(old, reason, self._time_data[0]))

    def abort(self, error_string: str, error_code: int = PATH_TOLERANCE_VIOLATED,
              hold: Optional[bool] = None, goal_key: Any = None) -> bool:
        """Abort the active goal (e.g. hardware fault, stale feedback); hold unless ``hold`` is False.

        ``hold`` defaults to ``hold_on_abort``.  With ``goal_key`` only that goal is aborted, if it
        is the active one.  :returns: True if a goal was aborted.
        """
        do_hold = self.hold_on_abort if hold is None else hold

        def has_goal(plan: _Plan) -> bool:
            return (plan.goal is not None and plan.goal.active
                    and (goal_key is None or plan.goal.key is goal_key or plan.goal.key == goal_key))

        def make(plan: _Plan) -> _Plan:
            return self._hold_plan(plan, None) if do_hold else plan

        def on_swap(old: _Plan) -> None:
            goal = old.goal
            if goal is None:  # pragma: no cover - has_goal() held for ``old``
                return
            goal.active = False
            self._events.append(GoalEvent(goal.key, ABORTED, int(error_code), error_string,
                                          self._time_data[0]))

        if not self._replace(make, has_goal, on_swap):
            return False
        logger.warning("Trajectory goal aborted (%s): %s", code_name(error_code), error_string)
        return True

    # ------------------------------------------------------------------------------ queries
    def query_state(self, time: float) -> QueryStateResult:
        """Desired state at ROS time ``time`` (the ``query_state`` service).

        :raises TrajectoryError: controller not running, or ``time`` precedes the trajectory.
        """
        plan = self._plan
        if not self._running or plan is None:
            raise TrajectoryError("Can't sample trajectory: controller is not running")
        t, _, uptime = self._time_data
        sample_time = uptime + (float(time) - t)
        if sample_time < plan.trajectory.start_time:
            raise TrajectoryError("Requested sample time precedes trajectory start time")
        p, v, a = plan.trajectory.sample(sample_time)
        return QueryStateResult(list(self._names), p.copy(), v.copy(), a.copy())

    def feedback(self) -> Optional[FeedbackSnapshot]:
        """Desired/actual/error of the last update (None before :meth:`start`)."""
        latest = self._latest
        if latest is None:
            return None
        time, uptime, r, pos, vel = latest
        if type(r) is tuple:  # a positions-only cycle: (interval matrix, tau), sampled now
            r = _sample(*r)
        n = self._n
        dp, dv, da = r[:n].copy(), r[n:2 * n].copy(), r[2 * n:].copy()
        pos = np.array(pos, dtype=float)  # a list from the loop, or an array (copied either way)
        vel = np.array(vel, dtype=float)
        return FeedbackSnapshot(list(self._names), time, uptime, dp, dv, da, pos, vel,
                                shortest_angular_distance(pos, dp), dv - vel)

    def _measured(self, values: Sequence[float], what: str) -> np.ndarray:
        arr = np.array(values, dtype=float).reshape(-1)
        if arr.shape[0] != self._n:
            raise TrajectoryError(f"{what}: {arr.shape[0]} value(s) for {self._n} joints")
        return arr
