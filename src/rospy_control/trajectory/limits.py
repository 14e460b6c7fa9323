"""What a trajectory point may ask of a joint, and which state a hold or stop may start from.

Why this exists: a finite but absurd point (an elbow at 1e6 rad, a velocity of 1e300 rad/s) used to
be accepted.  The robot could not follow it, the goal aborted, and the hold then started from that
absurd desired state.  Every later goal bridged from it and aborted at once, and values near the
float maximum overflowed into NaN.  So the engine checks the points it is going to execute, and it
never starts a hold, a stop ramp or a bridge from a desired state it would refuse as a point.

Rules for the executed points (a violation rejects the whole message with INVALID_GOAL and an
error string naming the point index, the joint, the value and the bound):

===============  ==================================================================================
position         inside the joint's position limits ``[lower, upper]`` (URDF ``<limit>`` of revolute
                 and prismatic joints; the controller lets ``joint_limits/<joint>`` parameters
                 override them as ros_control's joint_limits_interface does).  The check allows
                 :data:`POSITION_TOLERANCE` so that a limit that went through a decimal round trip
                 is not refused.  Continuous joints, and joints without a ``<limit>``, are not
                 position-limited, but their raw values must stay within ``+-``:data:`MAX_POSITION`.
                 A joint that rests a hair beyond a limit (on its end stop, or after a decimal round
                 trip of its zero): a point within :data:`START_STATE_TOLERANCE` of the measured start
                 and at most that far beyond the limit is accepted, as MoveIt accepts such a start
                 state (``start_state_max_bounds_error``, 0.05 by default), so a goal that begins or
                 ends where the robot is can always be sent; the executed command is kept inside the
                 limits.
velocity         ``|v| <=`` :data:`VELOCITY_LIMIT_FACTOR` times the joint's velocity limit, or
                 ``|v| <=`` :data:`MAX_VELOCITY` without one.
acceleration     ``|a| <=`` :data:`ACCELERATION_LIMIT_FACTOR` times ``max_acceleration`` when one is
                 configured (``joint_limits/<joint>/has_acceleration_limits``; a URDF has none),
                 else ``|a| <=`` :data:`MAX_ACCELERATION`.
time             ``|time_from_start|`` and ``|stamp - now|`` at most :data:`MAX_TIME`.
===============  ==================================================================================

Every bound is also capped at the absolute one, so a URDF that declares ``velocity="1e300"`` cannot
open the door again.

Why these numbers:

* **4x the velocity limit.**  A point's velocity is not a command that the hardware applies
  directly.  Planners and spline fits can overshoot the limit a little at the knots.  The planner's
  limits (MoveIt's ``joint_limits.yaml``) may also be looser than the limits the hardware layer
  enforces.  Upstream checks nothing at all.  A factor of 4 keeps all of those cases, and it still
  refuses unit mistakes (deg/s sent as rad/s is 57x) and garbage.
* **10x max_acceleration.**  Knot accelerations from spline fits and finite differences overshoot
  more than velocities do, so the margin is wider.  Without a configured limit the bound is
  **1e5 rad/s^2** (m/s^2).  A joint that reaches 10 rad/s in 10 ms needs only 1e3.  1e5 is far
  beyond any loaded robot joint, and still far from overflow.
* **1e4 rad/s (m/s)** without a velocity limit: about 95,000 rpm at the joint.
* **1e6 rad** for continuous joints: about 159,000 turns.  The bound applies to the raw values of
  the message only.  Points of continuous joints are shifted by whole turns to the current state
  before they are executed, so a client can always express a target in ``(-pi, pi]``.  MoveIt sends
  normalised angles anyway.  At 1e6 the float resolution is still 1e-10 rad.
* **1e9 s** (about 32 years) for times.  That is more than any real trajectory needs, and it keeps
  the spline arithmetic finite.

With these bounds the spline arithmetic cannot overflow.  Positions are at most 2e6 apart,
velocities at most 1e4, accelerations at most 1e5 and durations at most about 2e9 s.  So every
coefficient stays below about 1e101, even for the shortest duration that two distinct float times
near the controller's clock can have.  :class:`~rospy_control.trajectory.trajectory.Trajectory`
still refuses non-finite coefficients as a last line of defence (durations of about 1e-60 s from
float inputs).
"""
from __future__ import annotations

from typing import Optional, Sequence, Tuple

import numpy as np

from rospy_control.trajectory._typing import FloatSeq, IntSeq

__all__ = [
    "ACCELERATION_LIMIT_FACTOR", "MAX_ACCELERATION", "MAX_POSITION", "MAX_TIME", "MAX_VELOCITY",
    "POSITION_TOLERANCE", "START_STATE_TOLERANCE", "VELOCITY_LIMIT_FACTOR", "TrajectoryLimits",
]

#: A point's velocity may be this many times the joint's velocity limit (see the module docstring).
VELOCITY_LIMIT_FACTOR = 4.0
#: A point's acceleration may be this many times the joint's ``max_acceleration``.
ACCELERATION_LIMIT_FACTOR = 10.0
#: |position| bound (rad or m) for joints without position limits (continuous), and a cap on all.
MAX_POSITION = 1.0e6
#: |velocity| bound (rad/s or m/s) for joints without a velocity limit, and a cap on all.
MAX_VELOCITY = 1.0e4
#: |acceleration| bound (rad/s^2 or m/s^2) for joints without an acceleration limit, and a cap on all.
MAX_ACCELERATION = 1.0e5
#: |time_from_start| and |stamp - now| bound (s).
MAX_TIME = 1.0e9
#: Slack (rad or m) on position limits, for limits that went through a decimal round trip.
POSITION_TOLERANCE = 1e-9
#: How far (rad or m) beyond a position limit a point may lie when it is also within this distance of
#: the joint's measured start (MoveIt's ``start_state_max_bounds_error`` default).
START_STATE_TOLERANCE = 0.05


def _array(values: Optional[Sequence[float]], n: int, default: float, what: str) -> np.ndarray:
    if values is None:
        return np.full(n, default)
    arr = np.array(values, dtype=float).reshape(-1)
    if arr.shape[0] != n:
        raise ValueError(f"{what}: {arr.shape[0]} value(s) for {n} joint(s)")
    if np.isnan(arr).any():
        raise ValueError(f"{what} contains NaN: {arr.tolist()}")
    return arr


class TrajectoryLimits:
    """Per-joint bounds of trajectory points (see the module docstring for the rules).

    Arrays are in controller joint order.  ``inf`` (or None for the whole array) means "no such
    limit".  A velocity or acceleration limit ``<= 0`` counts as absent.

    :param joint_names: the controller's joints.
    :param lower: lower position limits (rad or m).
    :param upper: upper position limits (rad or m).
    :param max_velocity: velocity limits (rad/s or m/s).
    :param max_acceleration: acceleration limits (rad/s^2 or m/s^2).
    :raises ValueError: wrong sizes, NaN, or ``lower > upper``.
    """

    __slots__ = ("joint_names", "lower", "upper", "max_velocity", "max_acceleration", "position_low",
                 "position_high", "velocity_bound", "acceleration_bound")

    def __init__(self, joint_names: Sequence[str], lower: Optional[Sequence[float]] = None,
                 upper: Optional[Sequence[float]] = None, max_velocity: Optional[Sequence[float]] = None,
                 max_acceleration: Optional[Sequence[float]] = None) -> None:
        self.joint_names = [str(n) for n in joint_names]
        n = len(self.joint_names)
        self.lower = _array(lower, n, -np.inf, "lower position limits")
        self.upper = _array(upper, n, np.inf, "upper position limits")
        bad = np.flatnonzero(self.lower > self.upper)
        if bad.size:
            j = int(bad[0])
            raise ValueError(f"joint '{self.joint_names[j]}': lower position limit {self.lower[j]!r} > upper "
                             f"position limit {self.upper[j]!r}")
        self.max_velocity = _array(max_velocity, n, np.inf, "velocity limits")
        self.max_acceleration = _array(max_acceleration, n, np.inf, "acceleration limits")
        #: accepted position range (limits capped at +-MAX_POSITION, plus POSITION_TOLERANCE)
        self.position_low = np.maximum(self.lower, -MAX_POSITION) - POSITION_TOLERANCE
        self.position_high = np.minimum(self.upper, MAX_POSITION) + POSITION_TOLERANCE
        self.velocity_bound = self._bound(self.max_velocity, VELOCITY_LIMIT_FACTOR, MAX_VELOCITY)
        self.acceleration_bound = self._bound(self.max_acceleration, ACCELERATION_LIMIT_FACTOR,
                                              MAX_ACCELERATION)

    @staticmethod
    def _bound(limit: np.ndarray, factor: float, cap: float) -> np.ndarray:
        usable = np.isfinite(limit) & (limit > 0.0)
        return np.where(usable, np.minimum(factor * np.where(usable, limit, 0.0), cap), cap)

    @classmethod
    def unlimited(cls, joint_names: Sequence[str]) -> "TrajectoryLimits":
        """Only the absolute bounds (what an executor gets when nobody gives it limits)."""
        return cls(joint_names)

    @property
    def n_joints(self) -> int:
        """Number of joints."""
        return len(self.joint_names)

    # ------------------------------------------------------------------------------ point checks
    def violation(self, kind: str, values: np.ndarray, joints: IntSeq,
                  point_indices: Optional[IntSeq] = None,
                  start: Optional[Sequence[float]] = None) -> Optional[str]:
        """Why ``values`` break the rules (the first offending value, by point then joint), or None.

        :param kind: ``"position"``, ``"velocity"`` or ``"acceleration"``.
        :param values: ``(m, k)`` values of ``m`` points for ``k`` message joints.
        :param joints: ``(k,)`` controller index of each message joint.
        :param point_indices: ``(m,)`` message index of each row, for the error text (default 0..m-1).
        :param start: measured positions (controller order): a position at most
            :data:`START_STATE_TOLERANCE` beyond a limit and as near the joint's start is accepted.
        """
        vals = np.asarray(values, dtype=float)
        if vals.size == 0:
            return None
        idx = np.asarray(joints, dtype=int)
        if kind == "position":
            low, high = self.position_low[idx], self.position_high[idx]
            bad = (vals < low) | (vals > high)
            if start is not None and bad.any():
                begin = np.asarray(start, dtype=float)[idx]
                with np.errstate(invalid="ignore"):   # a joint not measured yet (NaN) gets no slack
                    near = ((np.abs(vals - begin) <= START_STATE_TOLERANCE)
                            & (vals >= low - START_STATE_TOLERANCE) & (vals <= high + START_STATE_TOLERANCE))
                bad &= ~near
        elif kind == "velocity":
            bad = np.abs(vals) > self.velocity_bound[idx]
        elif kind == "acceleration":
            bad = np.abs(vals) > self.acceleration_bound[idx]
        else:
            raise ValueError(f"unknown kind {kind!r}")
        rows, cols = np.nonzero(bad)
        if rows.size == 0:
            return None
        row, col = int(rows[0]), int(cols[0])
        point = row if point_indices is None else int(np.asarray(point_indices)[row])
        return f"Trajectory point {point}: {self._describe(kind, int(idx[col]), float(vals[row, col]))}"

    def _describe(self, kind: str, j: int, value: float) -> str:
        name = self.joint_names[j]
        if kind == "position":
            lo = max(float(self.lower[j]), -MAX_POSITION)
            hi = min(float(self.upper[j]), MAX_POSITION)
            if np.isfinite(self.lower[j]) or np.isfinite(self.upper[j]):
                return (f"position {value!r} of joint '{name}' is outside its position limits "
                        f"[{lo!r}, {hi!r}]")
            return (f"position {value!r} of joint '{name}' is outside [{lo!r}, {hi!r}], the bound for joints "
                    f"without position limits (continuous joints are wrapped to the current state: "
                    f"send angles in (-pi, pi])")
        limit = float(self.max_velocity[j] if kind == "velocity" else self.max_acceleration[j])
        bound = float(self.velocity_bound[j] if kind == "velocity" else self.acceleration_bound[j])
        factor = VELOCITY_LIMIT_FACTOR if kind == "velocity" else ACCELERATION_LIMIT_FACTOR
        if np.isfinite(limit) and limit > 0.0:
            return (f"{kind} {value!r} of joint '{name}' is beyond {factor:g} times its {kind} limit "
                    f"{limit!r} (|{kind}| <= {bound!r})")
        return (f"{kind} {value!r} of joint '{name}' is beyond {bound!r}, the bound for joints without "
                f"{'a velocity' if kind == 'velocity' else 'an acceleration'} limit")

    # ------------------------------------------------------------------------------ start states
    def usable(self, positions: np.ndarray, velocities: np.ndarray) -> np.ndarray:
        """Per joint: True if ``(positions, velocities)`` is finite and would pass as a point."""
        p = np.asarray(positions, dtype=float)
        v = np.asarray(velocities, dtype=float)
        with np.errstate(invalid="ignore"):
            return (np.isfinite(p) & np.isfinite(v) & (p >= self.position_low) & (p <= self.position_high)
                    & (np.abs(v) <= self.velocity_bound))

    def start_state(self, desired_positions: np.ndarray, desired_velocities: np.ndarray,
                    measured_positions: Optional[FloatSeq]) -> Tuple[np.ndarray, np.ndarray, np.ndarray]:
        """State a hold, stop ramp or bridge starts from: ``(positions, velocities, usable)``.

        Per joint: the desired state when :meth:`usable`.  Otherwise the measured position at rest,
        because continuing the motion of a state we would refuse is what must not happen.  If the
        measured position is not finite either (no sensor value yet), the desired position is
        clipped into the limits, or 0.0 clipped into them when that is not finite.  ``usable`` says
        which joints kept their desired state.
        """
        dp = np.asarray(desired_positions, dtype=float)
        dv = np.asarray(desired_velocities, dtype=float)
        ok = self.usable(dp, dv)
        if ok.all():
            return dp, dv, ok
        lo = np.maximum(self.lower, -MAX_POSITION)
        hi = np.minimum(self.upper, MAX_POSITION)
        fallback = np.clip(np.where(np.isfinite(dp), dp, 0.0), lo, hi)
        if measured_positions is not None:
            mp = np.asarray(measured_positions, dtype=float)
            fallback = np.where(np.isfinite(mp), mp, fallback)
        return np.where(ok, dp, fallback), np.where(ok, dv, 0.0), ok

    def stop_velocities(self, positions: np.ndarray, velocities: np.ndarray, reach: float) -> np.ndarray:
        """Velocities a stop ramp may start with from ``positions`` so that it stops inside the limits.

        A stop ramp travels ``reach * v`` before it comes to rest (``reach`` = travel per unit of start
        velocity, proportional to the ramp's duration) and its position is monotonic, so a joint
        heading for a limit at speed would cross it: its velocity is scaled down so that the ramp ends
        on the limit (0 when it already is there).  Positions are finite and inside the limits (as
        :meth:`start_state` gives them).
        """
        p = np.asarray(positions, dtype=float)
        v = np.asarray(velocities, dtype=float)
        travel = reach * v
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            room = np.where(travel > 0.0, self.upper - p, np.where(travel < 0.0, p - self.lower, np.inf))
            scale = np.where(np.abs(travel) > room, np.clip(room / np.abs(travel), 0.0, 1.0), 1.0)
        return v * scale

    def __repr__(self) -> str:
        return (f"TrajectoryLimits({self.joint_names}, lower={self.lower.tolist()}, "
                f"upper={self.upper.tolist()}, max_velocity={self.max_velocity.tolist()}, "
                f"max_acceleration={self.max_acceleration.tolist()})")
