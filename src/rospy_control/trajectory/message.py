"""Building a :class:`Trajectory` from JointTrajectory-shaped data, merged with the current one.

Input is duck-typed (no message import): an object with ``joint_names``, ``points`` (each with
``positions``, ``velocities``, ``accelerations`` and ``time_from_start``, a genpy Duration or a
float) and optionally ``header.stamp`` (genpy Time or float; 0 or missing means "now").  The
``effort`` field is ignored, as upstream.

:func:`init_joint_trajectory` follows ros_controllers' ``initJointTrajectory``:

1. times must be finite, within +-:data:`~rospy_control.trajectory.limits.MAX_TIME` and strictly
   increasing, and the stamp within ``MAX_TIME`` of now (INVALID_GOAL);
2. joint names are mapped onto the controller's joints (any order; a subset only if partial goals
   are allowed; unknown or duplicated names are refused with INVALID_JOINTS);
3. points at or before "now" are dropped; if none remains the message is refused with
   INVALID_GOAL ("Dropping all N trajectory point(s) ...", never OLD_HEADER_TIMESTAMP, as the ROS 1
   JTC).  Dropping only a first point with ``time_from_start == 0`` in a message stamped 0 (what
   MoveIt sends) is silent; any other drop is **one** throttled warning;
4. the remaining points must have at least one position per joint, and velocities/accelerations
   empty or as many as the point's positions, as upstream.  A point with **more** values than
   joints is accepted: the first ``len(joint_names)`` values are used and the rest ignored, as
   upstream (its partial-trajectory tests send such points), with one throttled warning.  The used
   values must be finite and respect the joints' :class:`~rospy_control.trajectory.limits.TrajectoryLimits`
   (position limits, a multiple of the velocity/acceleration limits, absolute bounds): INVALID_GOAL
   naming the point, the joint, the value and the bound.  Dropped points are not validated, as
   upstream;
5. the result, per joint in the message: the current trajectory's segments from the one active
   "now" up to the one active at ``T0 = max(message start, now)``, a **bridge** segment from the
   current trajectory's state at ``T0`` (position, velocity, acceleration) to the first remaining
   point, then one segment per consecutive pair of remaining points.  A joint whose current state
   is not usable (not finite, or one the limits would refuse as a point) bridges from its measured
   position at rest instead, so no goal inherits a broken state.  Joints absent from a partial
   message keep their current segments.  Segment type is the lowest common specification of both
   ends (linear/cubic/quintic), so a bridge to a positions-only point is linear, as upstream.
6. continuous joints: one offset (a multiple of 2 pi) is added to every point of the joint so that
   the bridge takes the shortest way from the current state (tie at exactly pi: in the direction
   of the raw difference).

Time bases: ``now`` is the ROS time of the next control update and ``uptime`` the controller's
internal time of the same instant; a stamp ``s`` maps to ``uptime + (s - now)``.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

import numpy as np

from rospy_control.log import Throttle, get_logger
from rospy_control.trajectory._typing import BoolSeq
from rospy_control.trajectory.codes import INVALID_GOAL, INVALID_JOINTS
from rospy_control.trajectory.limits import MAX_TIME, TrajectoryLimits
from rospy_control.trajectory.segment import CUBIC, LINEAR, QUINTIC, TrajectoryError, spline_coefficients
from rospy_control.trajectory.tolerances import shortest_angular_distance
from rospy_control.trajectory.trajectory import JointPieces, Trajectory

logger = get_logger(__name__)
_drop_throttle = Throttle(2.0)
_extra_values_throttle = Throttle(10.0)


class TrajectoryRejected(TrajectoryError):
    """A trajectory command was refused; ``code`` is the FollowJointTrajectory result code."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def to_sec(value: Any) -> float:
    """Seconds from a genpy Time/Duration (``to_sec()``), an object with secs/nsecs, or a number."""
    if value is None:
        return 0.0
    if hasattr(value, "to_sec"):
        return float(value.to_sec())
    if hasattr(value, "secs") and hasattr(value, "nsecs"):
        return float(value.secs) + 1e-9 * float(value.nsecs)
    return float(value)


def stamp_of(msg: Any) -> float:
    """``msg.header.stamp`` in seconds (0.0 when absent)."""
    header = getattr(msg, "header", None)
    return to_sec(getattr(header, "stamp", None)) if header is not None else 0.0


def wraparound_offset(previous, following, continuous) -> np.ndarray:
    """Offsets to add to ``following`` so continuous joints move the shortest way from ``previous``.

    Vectorised over joints; zero where ``continuous`` is False.  At a distance of exactly pi the
    direction of the raw difference wins (upstream's singularity rule).
    """
    prev = np.asarray(previous, dtype=float)
    nxt = np.asarray(following, dtype=float)
    dist = shortest_angular_distance(prev, nxt)
    tie = np.abs(np.abs(dist) - math.pi) < 1e-9
    dist = np.where(tie, np.where(nxt > prev, np.abs(dist), -np.abs(dist)), dist)
    return np.where(np.asarray(continuous, dtype=bool), prev + dist - nxt, 0.0)


def map_joints(msg_joint_names: Sequence[str], joint_names: Sequence[str], allow_partial: bool) -> np.ndarray:
    """Controller index of every message joint.

    :raises TrajectoryRejected: INVALID_JOINTS for an empty, incomplete (partial not allowed),
        unknown or duplicated joint list.
    """
    names = list(msg_joint_names or ())
    if not names:
        raise TrajectoryRejected(INVALID_JOINTS, "Trajectory has no joint names")
    index = {name: i for i, name in enumerate(joint_names)}
    unknown = [n for n in names if n not in index]
    if unknown:
        raise TrajectoryRejected(
            INVALID_JOINTS, f"Joint(s) {unknown} of the trajectory are not controlled by this controller "
            f"(controller joints: {list(joint_names)})")
    seen = set()
    for name in names:
        if name in seen:
            raise TrajectoryRejected(INVALID_JOINTS,
                                     f"Joint '{name}' appears more than once in the trajectory")
        seen.add(name)
    if not allow_partial and len(names) != len(joint_names):
        missing = [n for n in joint_names if n not in seen]
        raise TrajectoryRejected(
            INVALID_JOINTS, f"Trajectory does not contain the expected joints: missing {missing} "
            f"(partial joint goals are not allowed)")
    return np.array([index[n] for n in names], dtype=int)


def point_times(points: Sequence[Any]) -> np.ndarray:
    """``time_from_start`` of every point (s).

    :raises TrajectoryRejected: INVALID_GOAL for a non-finite or absurd (beyond +-``MAX_TIME``) time,
        or times not strictly increasing.
    """
    times = np.array([to_sec(getattr(p, "time_from_start", 0.0)) for p in points], dtype=float)
    bad = np.flatnonzero(~np.isfinite(times))
    if bad.size:
        i = int(bad[0])
        raise TrajectoryRejected(INVALID_GOAL,
                                 f"Trajectory point {i} has a non-finite time_from_start ({times[i]})")
    bad = np.flatnonzero(np.abs(times) > MAX_TIME)
    if bad.size:
        i = int(bad[0])
        raise TrajectoryRejected(INVALID_GOAL, f"Trajectory point {i} has a time_from_start of {times[i]!r} "
                                 f"s, beyond +-{MAX_TIME:g} s")
    if times.size > 1:
        steps = np.flatnonzero(np.diff(times) <= 0.0)
        if steps.size:
            i = int(steps[0]) + 1
            raise TrajectoryRejected(
                INVALID_GOAL, f"Trajectory points are not strictly increasing in time: point {i} "
                f"(time_from_start {times[i]:.6f} s) does not come after point {i - 1} "
                f"({times[i - 1]:.6f} s)")
    return times


def _field(point: Any, name: str) -> List[float]:
    values = getattr(point, name, None)
    return [] if values is None else list(values)


def _point_arrays(points: Sequence[Any], first: int, msg_joint_names: Sequence[str]):
    """Positions (m, k), velocities/accelerations (m, k, zero where absent) and presence masks.

    Sizes follow upstream: positions at least one per joint (extra values ignored),
    velocities/accelerations empty or as many as the point's positions.
    """
    k = len(msg_joint_names)
    m = len(points) - first
    pos = np.zeros((m, k))
    vel = np.zeros((m, k))
    acc = np.zeros((m, k))
    has_v = np.zeros(m, dtype=bool)
    has_a = np.zeros(m, dtype=bool)
    longer = None
    for row, i in enumerate(range(first, len(points))):
        point = points[i]
        p = _field(point, "positions")
        if not p:
            raise TrajectoryRejected(INVALID_GOAL, f"Trajectory point {i} has no positions")
        if len(p) < k:
            raise TrajectoryRejected(
                INVALID_GOAL, f"Trajectory point {i} has {len(p)} position value(s) for {k} joint(s) "
                f"{list(msg_joint_names)}")
        if len(p) > k and longer is None:
            longer = (i, len(p))
        for label, values, out in (("position", p, pos), ("velocity", _field(point, "velocities"), vel),
                                   ("acceleration", _field(point, "accelerations"), acc)):
            if label != "position" and not values:
                continue
            if len(values) != len(p):
                raise TrajectoryRejected(
                    INVALID_GOAL, f"Trajectory point {i} has {len(values)} {label} value(s) for {len(p)} "
                    f"position value(s) (joints {list(msg_joint_names)})")
            try:
                out[row] = values[:k]
            except (TypeError, ValueError):
                raise TrajectoryRejected(INVALID_GOAL, f"Trajectory point {i} has non-numeric {label} values "
                                         f"{values!r}") from None
            bad = np.flatnonzero(~np.isfinite(out[row]))
            if bad.size:
                j = int(bad[0])
                raise TrajectoryRejected(
                    INVALID_GOAL, f"Trajectory point {i}: {label} of joint '{msg_joint_names[j]}' is "
                    f"{out[row, j]} (values must be finite)")
            if label == "velocity":
                has_v[row] = True
            elif label == "acceleration":
                has_a[row] = True
    if longer is not None and _extra_values_throttle.ready(tuple(msg_joint_names)):
        logger.warning("Trajectory point %d has %d value(s) per field for %d joint(s) %s: using the first %d "
                       "and ignoring the rest (as upstream)", longer[0], longer[1], k, list(msg_joint_names),
                       k)
    return pos, vel, acc, has_v, has_a


def _check_limits(limits: Optional[TrajectoryLimits], mapping: np.ndarray, first: int, pos: np.ndarray,
                  vel: np.ndarray, acc: np.ndarray, has_v: np.ndarray, has_a: np.ndarray,
                  measured: Optional[Sequence[float]] = None) -> None:
    """:raises TrajectoryRejected: INVALID_GOAL when a used value breaks ``limits`` (positions near the
    ``measured`` start get its tolerance: see :data:`~.limits.START_STATE_TOLERANCE`)."""
    if limits is None:
        return
    rows = np.arange(pos.shape[0])
    for kind, values, present in (("position", pos, rows), ("velocity", vel[has_v], np.flatnonzero(has_v)),
                                  ("acceleration", acc[has_a], np.flatnonzero(has_a))):
        problem = limits.violation(kind, values, mapping, first + present,
                                   measured if kind == "position" else None)
        if problem is not None:
            raise TrajectoryRejected(INVALID_GOAL, problem)


def _segment_coefficients(times, pos, vel, acc, has_v, has_a) -> np.ndarray:
    """Coefficients ``(m-1, k, 6)`` of the segments between consecutive points (lowest common spec)."""
    m = times.shape[0]
    if m < 2:
        return np.zeros((0, pos.shape[1], 6))
    dur = np.diff(times)[:, None]
    both_v = has_v[:-1] & has_v[1:]
    both_a = both_v & has_a[:-1] & has_a[1:]
    out = spline_coefficients(LINEAR, dur, pos[:-1], pos[1:])
    if both_v.any():
        cubic = spline_coefficients(CUBIC, dur, pos[:-1], pos[1:], vel[:-1], vel[1:])
        sel = both_v & ~both_a
        out[sel] = cubic[sel]
    if both_a.any():
        quintic = spline_coefficients(QUINTIC, dur, pos[:-1], pos[1:], vel[:-1], vel[1:], acc[:-1], acc[1:])
        out[both_a] = quintic[both_a]
    return out


class InitResult:
    """What :func:`init_joint_trajectory` built.

    :ivar trajectory: the merged :class:`Trajectory` (controller joint order).
    :ivar joints_in_message: bool per controller joint, True for joints the message commands.
    :ivar start_time: message start in the internal time base.
    :ivar first_point: index of the first point executed (earlier ones were dropped).
    :ivar end_time: time of the last point in the internal time base.
    """

    __slots__ = ("trajectory", "joints_in_message", "start_time", "first_point", "end_time")

    def __init__(self, trajectory: Trajectory, joints_in_message: np.ndarray, start_time: float,
                 first_point: int, end_time: float) -> None:
        self.trajectory = trajectory
        self.joints_in_message = joints_in_message
        self.start_time = start_time
        self.first_point = first_point
        self.end_time = end_time


def init_joint_trajectory(msg: Any, joint_names: Sequence[str], now: float, uptime: Optional[float] = None,
                          current: Optional[Trajectory] = None, continuous: Optional[BoolSeq] = None,
                          allow_partial_joints_goal: bool = False, limits: Optional[TrajectoryLimits] = None,
                          measured: Optional[Sequence[float]] = None) -> InitResult:
    """Build the trajectory to execute from ``msg`` (see the module docstring for the rules).

    :param msg: JointTrajectory-shaped object with at least one point.
    :param joint_names: controller joints, in order.
    :param now: ROS time (s) of the next control update.
    :param uptime: internal time of that same update (defaults to ``now``); the result and
        ``current`` are expressed in this time base.
    :param current: the trajectory being executed (None: the message alone, no bridge).
    :param continuous: per controller joint, True for continuous (wrapping) joints.
    :param allow_partial_joints_goal: accept a subset of the joints (needs ``current``).
    :param limits: bounds of the executed points (None: only finiteness is checked).  They also
        decide whether ``current``'s state can start the bridge.
    :param measured: measured positions (controller order): where a joint whose current state is
        not usable bridges from.
    :raises TrajectoryRejected: with the result code and an error string naming the problem.
    """
    points = list(getattr(msg, "points", None) or ())
    if not points:
        raise TrajectoryRejected(INVALID_GOAL, "Trajectory has no points")
    n = len(joint_names)
    o_now = float(now if uptime is None else uptime)
    times = point_times(points)
    msg_names = list(getattr(msg, "joint_names", None) or ())
    mapping = map_joints(msg_names, joint_names, allow_partial_joints_goal)
    if current is None and len(mapping) != n:
        raise TrajectoryRejected(INVALID_JOINTS, "A partial joint trajectory needs a current trajectory to "
                                 "keep the other joints on")
    stamp = stamp_of(msg)
    if not (stamp == 0.0 or abs(stamp - float(now)) <= MAX_TIME):
        raise TrajectoryRejected(INVALID_GOAL, f"The trajectory's header.stamp ({stamp!r} s) is more than "
                                 f"{MAX_TIME:g} s away from the current time ({float(now)!r} s)")
    o_start = o_now if stamp == 0.0 else o_now + (stamp - float(now))
    abs_times = o_start + times

    # Points at or before "now" are dropped (upstream findPoint: last point with time <= now).
    first = int(np.searchsorted(abs_times, o_now, side="right"))
    if first >= len(points):
        raise TrajectoryRejected(
            INVALID_GOAL, f"Dropping all {len(points)} trajectory point(s), as they occur before the current "
            f"time. Last point is {o_now - abs_times[-1]:.3f} s in the past. (Stamp the trajectory 0 "
            f"to start it now, or in the future.)")
    if first > 0:
        if first == 1 and times[0] == 0.0 and stamp == 0.0:
            logger.debug("Skipping the first trajectory point (time_from_start 0 in a trajectory stamped 0: "
                         "it is the current state)")
        elif _drop_throttle.ready(tuple(joint_names)):
            logger.warning("Trajectory starts in the past: skipping its first %d of %d point(s); execution "
                           "starts at point %d, reached in %.3f s", first, len(points), first,
                           abs_times[first] - o_now)

    pos, vel, acc, has_v, has_a = _point_arrays(points, first, msg_names)
    _check_limits(limits, mapping, first, pos, vel, acc, has_v, has_a, measured)
    t_pts = abs_times[first:]
    t0 = max(o_start, o_now)

    offsets = np.zeros(len(mapping))
    bridge_start = None
    usable = np.ones(n, dtype=bool)
    if current is not None:
        bridge_start = current.sample(t0)
        if limits is not None:
            # A broken current state (not finite, or one we would refuse as a point) must not leak
            # into this trajectory: such joints bridge from the measured position, at rest, now.
            p0, v0, usable = limits.start_state(bridge_start[0], bridge_start[1], measured)
            if not usable.all():
                bridge_start = (p0, v0, np.where(usable, bridge_start[2], 0.0))
        if continuous is not None:
            wrap = np.asarray(continuous, dtype=bool)[mapping]
            if wrap.any():
                offsets = wraparound_offset(bridge_start[0][mapping], pos[0], wrap)
                pos = pos + offsets
    new_coefs = _segment_coefficients(t_pts, pos, vel, acc, has_v, has_a)  # (m-1, k, 6)

    pieces: List[Optional[JointPieces]] = [None] * n
    in_msg = np.zeros(n, dtype=bool)
    for c, j in enumerate(mapping):
        in_msg[j] = True
        starts = [t_pts[:-1]]
        ends = [t_pts[1:]]
        coefs = [new_coefs[:, c, :]]
        if current is not None and bridge_start is not None:   # (set together above)
            cur = current.joints[j]
            lo = max(cur.find(o_now), 0)
            hi = cur.find(t0)
            t_bridge = t0
            if not usable[j]:
                t_bridge = o_now  # do not keep executing a broken trajectory until t0
            elif hi >= lo:
                starts.insert(0, cur.starts[lo:hi + 1])
                ends.insert(0, cur.ends[lo:hi + 1])
                coefs.insert(0, cur.coefficients[lo:hi + 1])
            order = QUINTIC if (has_v[0] and has_a[0]) else (CUBIC if has_v[0] else LINEAR)
            bridge = spline_coefficients(order, t_pts[0] - t_bridge, bridge_start[0][j], pos[0, c],
                                         bridge_start[1][j], vel[0, c], bridge_start[2][j], acc[0, c])
            starts.insert(len(starts) - 1, np.array([t_bridge]))
            ends.insert(len(ends) - 1, np.array([t_pts[0]]))
            coefs.insert(len(coefs) - 1, bridge.reshape(1, 6))
        elif len(t_pts) == 1:
            starts = [t_pts[:1]]
            ends = [t_pts[:1]]
            row = np.zeros((1, 6))
            row[0, 0] = pos[0, c]
            coefs = [row]
        pieces[j] = JointPieces(np.concatenate(starts), np.concatenate(ends), np.concatenate(coefs))
    for j in range(n):
        if pieces[j] is None:
            cur = current.joints[j]  # type: ignore[union-attr]
            pieces[j] = cur.slice(max(cur.find(o_now), 0))
    try:
        trajectory = Trajectory(pieces)  # type: ignore[arg-type]
    except TrajectoryError as err:  # the last line of defence (see limits.py): e.g. a 1e-300 s segment
        raise TrajectoryRejected(INVALID_GOAL, f"The trajectory cannot be executed: {err}") from None
    return InitResult(trajectory, in_msg, o_start, first, float(t_pts[-1]))
