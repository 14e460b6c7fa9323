"""Hostile FollowJointTrajectory goals and ``command`` trajectories, with the outcome each must get.

Shared by the ROS-free fuzz layer (``test/unit/controllers/test_fuzz_jtc_goals.py``, thousands of
examples against the in-memory controller manager rig) and the rostest layer
(``test/integration/test_fuzz_goals.py``, against the driver node and the simulated arm in both
branches).  It imports no rospy: messages are plain genpy classes.

A :class:`Case` is drawn by :func:`cases` (a hypothesis strategy) as a *recipe*: its stamp is an
offset category resolved against the controller's clock only when it is sent
(:meth:`Case.materialize`), because "far in the past" means nothing before one knows "now".  The
oracle (:meth:`Case.expect`) follows the validation order of ros_controllers' JTC and the limits of
:mod:`rospy_control.trajectory.limits`:

1. joint names empty, unknown, duplicated, or not all the controller's joints -> INVALID_JOINTS
   (action goals only; a ``command`` message is checked the same way but has nobody to answer);
2. no points -> accepted (hold), the goal succeeds once the hold/stop segment has ended;
3. a non-finite time, ``|time| > MAX_TIME``, times not strictly increasing, ``|stamp - now| >
   MAX_TIME``, every point at or before now, a point without positions or with fewer positions than
   joints, velocities/accelerations neither empty nor as many as the positions, a non-finite value,
   a position outside the joint's limits, a velocity beyond 4x its limit or an acceleration beyond
   the absolute bound -> INVALID_GOAL;
4. anything else is accepted, then SUCCEEDED, PREEMPTED (a later goal, a cancel) or ABORTED with
   PATH/GOAL_TOLERANCE_VIOLATED (a jump the arm cannot follow).

Generated values are either clearly valid (inside the limits with a margin) or clearly invalid
(far beyond a bound), never on a boundary, so the oracle is exact.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Sequence, Tuple

import genpy
from control_msgs.msg import FollowJointTrajectoryGoal, JointTolerance
from hypothesis import strategies as st
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

SUCCESSFUL, INVALID_GOAL, INVALID_JOINTS = 0, -1, -2
PATH_TOLERANCE_VIOLATED, GOAL_TOLERANCE_VIOLATED = -4, -5
ACCEPT = 0  # the oracle's "must be accepted"
CODE_NAMES = {0: "accepted", -1: "INVALID_GOAL", -2: "INVALID_JOINTS", -3: "OLD_HEADER_TIMESTAMP",
              -4: "PATH_TOLERANCE_VIOLATED", -5: "GOAL_TOLERANCE_VIOLATED"}

MAX_TIME = 1.0e9
INT32_MAX = 2 ** 31 - 1
NON_FINITE = [math.nan, math.inf, -math.inf]
HUGE = [1.0e7, -1.0e7, 1.0e154, -1.0e154, 1.0e300, -1.0e300, 1.7976931348623157e308,
        -1.7976931348623157e308]

#: Categories of :func:`cases`, in the order of the figures.
CATEGORIES = (
    "valid", "valid_reordered", "valid_longer_points", "valid_effort_nan", "valid_tolerances",
    "partly_past", "future_stamp", "empty_points",
    "names_empty", "names_unknown", "names_duplicate", "names_subset",
    "nan_inf_value", "nan_inf_time", "huge_value", "outside_limits", "huge_time",
    "times_not_increasing", "times_all_negative", "no_positions", "positions_short",
    "size_mismatch", "past_stamp", "stamp_beyond_max_time", "long_10000", "long_10000_bad",
)


class Arm:
    """What the fuzzer knows of the controller: joints (controller order) and their limits."""

    def __init__(self, joints: Sequence[str], lower: Sequence[float], upper: Sequence[float],
                 max_velocity: Sequence[float], continuous: Sequence[bool]) -> None:
        self.joints = list(joints)
        self.lower = [float(v) for v in lower]
        self.upper = [float(v) for v in upper]
        self.max_velocity = [float(v) for v in max_velocity]
        self.continuous = [bool(c) for c in continuous]

    @classmethod
    def from_urdf(cls, urdf: str, joints: Sequence[str],
                  joint_limits: Optional[Dict[str, Any]] = None) -> "Arm":
        """Limits from a URDF string, tightened by ``joint_limits/<joint>`` parameters (a dict)."""
        import xml.etree.ElementTree as ET
        root = ET.fromstring(urdf)
        by_name = {j.get("name"): j for j in root.findall("joint")}
        lower, upper, vmax, cont = [], [], [], []
        for name in joints:
            j = by_name[name]
            lim = j.find("limit")
            is_cont = j.get("type") == "continuous"
            lo = -math.inf if is_cont or lim is None else float(lim.get("lower", "0"))
            hi = math.inf if is_cont or lim is None else float(lim.get("upper", "0"))
            v = float(lim.get("velocity", "inf")) if lim is not None else math.inf
            p = (joint_limits or {}).get(name) or {}
            if p.get("has_position_limits") and not is_cont:
                lo, hi = float(p.get("min_position", lo)), float(p.get("max_position", hi))
            if p.get("has_velocity_limits"):
                v = float(p.get("max_velocity", v))
            lower.append(lo)
            upper.append(hi)
            vmax.append(v)
            cont.append(is_cont)
        return cls(joints, lower, upper, vmax, cont)

    def safe_range(self, j: int) -> Tuple[float, float]:
        """A range of positions well inside joint ``j``'s limits (a 0.5 rad margin, at most +-1.5)."""
        lo, hi = self.lower[j], self.upper[j]
        lo = -1.5 if not math.isfinite(lo) else max(-1.5, lo + 0.5 * min(1.0, (hi - lo) / 4))
        hi = 1.5 if not math.isfinite(hi) else min(1.5, hi - 0.5 * min(1.0, (hi - lo) / 4))
        return lo, hi

    def outside(self, j: int, side: float) -> Optional[float]:
        """A position clearly outside joint ``j``'s limits (None for a continuous joint)."""
        if self.continuous[j] or not math.isfinite(self.lower[j]):
            return None
        return self.upper[j] + 0.5 if side > 0 else self.lower[j] - 0.5


class Case:
    """One goal or command recipe; see the module docstring."""

    def __init__(self, category: str, via: str, names: List[str], points: List[Dict[str, Any]],
                 stamp: Tuple[str, float], expect_code: int, tolerances: Optional[Dict[str, Any]] = None,
                 cancel_after: Optional[float] = None, note: str = "") -> None:
        self.category = category
        self.via = via                    # "action" | "topic"
        self.names = names
        self.points = points              # dicts: positions, velocities, accelerations, effort, time
        # ("zero", 0) | ("offset" | "past", seconds from now) | ("absolute", s)
        self.stamp = stamp
        self.static_code = expect_code    # what the message alone decides (before "now" is known)
        self.tolerances = tolerances or {}
        self.cancel_after = cancel_after  # seconds after sending (action goals) or None
        self.note = note

    def __repr__(self) -> str:
        pts: list = list(self.points)
        if len(pts) > 4:
            pts = pts[:2] + [f"... {len(pts)} points"]
        return (f"Case({self.category}, {self.via}, names={self.names}, stamp={self.stamp}, "
                f"expect={CODE_NAMES[self.static_code]}, cancel_after={self.cancel_after}, points={pts})")

    def stamp_at(self, now: float) -> float:
        kind, value = self.stamp
        if kind == "zero":
            return 0.0
        if kind == "offset":
            return now + value
        if kind == "past":  # far in the past, but after the epoch (a stamp of 0 means "now")
            return max(1e-3, now - value)
        return value

    def expect(self, now: float) -> int:
        """Expected code when sent at ROS time ``now`` (SUCCESSFUL = accepted)."""
        if self.static_code != ACCEPT:
            return self.static_code
        if not self.points:
            return ACCEPT
        stamp = self.stamp_at(now)
        if stamp != 0.0 and abs(stamp - now) > MAX_TIME:
            return INVALID_GOAL
        return ACCEPT

    def materialize(self, now: float, wire: bool = True) -> JointTrajectory:
        """The JointTrajectory to send at ROS time ``now``.  ``wire``: times as genpy Durations (a
        float NaN/inf time cannot be serialised; ROS-free tests pass ``wire=False`` to send floats)."""
        msg = JointTrajectory()
        stamp = self.stamp_at(now)
        msg.header.stamp = _time(stamp)
        msg.joint_names = list(self.names)
        out = []
        for p in self.points:
            q = JointTrajectoryPoint()
            q.positions = list(p.get("positions", []))
            q.velocities = list(p.get("velocities", []))
            q.accelerations = list(p.get("accelerations", []))
            q.effort = list(p.get("effort", []))
            t = p["time"]
            if isinstance(t, tuple):            # (secs, nsecs) integers, e.g. INT32_MAX
                q.time_from_start = genpy.Duration(t[0], t[1])
            elif not math.isfinite(t):
                q.time_from_start = t if not wire else genpy.Duration(INT32_MAX)
            else:
                q.time_from_start = genpy.Duration.from_sec(t)
            out.append(q)
        msg.points = out
        return msg

    def goal(self, now: float, wire: bool = True) -> FollowJointTrajectoryGoal:
        g = FollowJointTrajectoryGoal()
        g.trajectory = self.materialize(now, wire)
        tol = self.tolerances
        g.path_tolerance = [JointTolerance(name=n, position=v, velocity=v, acceleration=v)
                            for n, v in tol.get("path", {}).items()]
        g.goal_tolerance = [JointTolerance(name=n, position=v, velocity=v, acceleration=v)
                            for n, v in tol.get("goal", {}).items()]
        g.goal_time_tolerance = genpy.Duration.from_sec(tol.get("goal_time", 0.0))
        return g


def _time(stamp: float) -> genpy.Time:
    if stamp <= 0.0:
        return genpy.Time(0)
    secs = int(stamp)
    if secs > INT32_MAX:  # uint32 on the wire; stay representable
        return genpy.Time(2 ** 32 - 1)
    return genpy.Time(secs, int((stamp - secs) * 1e9))


# -- strategies -----------------------------------------------------------------------------------
def _valid_points(draw, arm: Arm, n_points: int, spec: str, t0: float = 0.0) -> List[Dict[str, Any]]:
    """Points inside the limits: positions in the safe ranges, gentle velocities, increasing times."""
    n = len(arm.joints)
    points = []
    t = t0
    for _ in range(n_points):
        t += draw(st.floats(0.05, 0.6))
        p: Dict[str, Any] = {"time": round(t, 6)}
        p["positions"] = [draw(st.floats(*arm.safe_range(j))) for j in range(n)]
        if spec in ("pv", "pva"):
            p["velocities"] = [draw(st.floats(-0.5, 0.5)) for _ in range(n)]
        if spec == "pva":
            p["accelerations"] = [draw(st.floats(-2.0, 2.0)) for _ in range(n)]
        points.append(p)
    return points


def _bad_value(draw) -> float:
    return draw(st.sampled_from(NON_FINITE + HUGE))


@st.composite
def cases(draw, arm: Arm, categories: Sequence[str] = CATEGORIES, via: Optional[str] = None,
          long_ok: bool = True) -> Case:
    """One :class:`Case` of one of ``categories`` (the 10 000-point ones only if ``long_ok``)."""
    cats = [c for c in categories if long_ok or not c.startswith("long_")]
    category = draw(st.sampled_from(cats))
    via = via or draw(st.sampled_from(["action", "action", "topic"]))
    n = len(arm.joints)
    names = list(arm.joints)
    spec = draw(st.sampled_from(["p", "pv", "pva"]))
    points = _valid_points(draw, arm, draw(st.integers(1, 4)), spec)
    stamp: Tuple[str, float] = ("zero", 0.0)
    code = ACCEPT
    tolerances: Dict[str, Any] = {}
    note = ""

    def pick_point() -> Dict[str, Any]:
        return points[draw(st.integers(0, len(points) - 1))]

    if category == "valid_reordered":
        order = draw(st.permutations(range(n)))
        names = [arm.joints[k] for k in order]
        for p in points:
            for field in ("positions", "velocities", "accelerations"):
                if field in p:
                    p[field] = [p[field][k] for k in order]
    elif category == "valid_longer_points":
        extra = draw(st.integers(1, 3))
        for p in points:
            for field in ("positions", "velocities", "accelerations"):
                if field in p:  # extra values, even absurd ones, are ignored (upstream)
                    p[field] = p[field] + [draw(st.sampled_from([0.0, 1e300, math.nan]))] * extra
    elif category == "valid_effort_nan":
        for p in points:
            p["effort"] = [_bad_value(draw) for _ in range(draw(st.integers(0, n + 2)))]
    elif category == "valid_tolerances":
        values = st.sampled_from([math.nan, math.inf, -1.0, 0.0, 0.5, 1e300, -math.inf])
        chosen = draw(st.lists(st.sampled_from(arm.joints + ["no_such_joint", ""]), max_size=3))
        tolerances = {"path": {j: draw(values) for j in chosen},
                      "goal": {j: draw(values) for j in chosen},
                      "goal_time": draw(st.sampled_from([0.0, 0.5, -1.0, 30.0]))}
    elif category == "partly_past":
        past = [{"time": -1.0 - k, "positions": [1e300] * n} for k in range(draw(st.integers(1, 3)))]
        points = list(reversed(past)) + points  # dropped points are not validated (upstream)
    elif category == "future_stamp":
        stamp = ("offset", draw(st.floats(0.2, 3.0)))
    elif category == "empty_points":
        points = []
    elif category == "names_empty":
        names = []
        code = INVALID_JOINTS
    elif category == "names_unknown":
        k = draw(st.integers(0, n - 1))
        names[k] = draw(st.sampled_from(["no_such_joint", "", " ", arm.joints[k].upper(),
                                         "gripper_finger_joint",
                                         arm.joints[k] + "\x00", "\u00e9l\u00e9phant"]))
        code = INVALID_JOINTS
    elif category == "names_duplicate":
        k, m = draw(st.lists(st.integers(0, n - 1), min_size=2, max_size=2, unique=True))
        names[m] = names[k]
        code = INVALID_JOINTS
    elif category == "names_subset":
        keep = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n - 1, unique=True))
        names = [arm.joints[k] for k in sorted(keep)]
        for p in points:
            for field in ("positions", "velocities", "accelerations"):
                if field in p:
                    p[field] = [p[field][k] for k in sorted(keep)]
        code = INVALID_JOINTS
    elif category in ("nan_inf_value", "huge_value"):
        p = pick_point()
        field = draw(st.sampled_from(["positions", "velocities", "accelerations"]))
        if field not in p:
            p[field] = [0.0] * n
            if field == "accelerations" and "velocities" not in p:
                p["velocities"] = [0.0] * n
        k = draw(st.integers(0, n - 1))
        p[field][k] = draw(st.sampled_from(NON_FINITE if category == "nan_inf_value" else HUGE))
        code = INVALID_GOAL
        note = f"{field}[{k}]"
    elif category == "outside_limits":
        limited = [j for j in range(n) if arm.outside(j, 1) is not None]
        k = draw(st.sampled_from(limited))
        pick_point()["positions"][k] = arm.outside(k, draw(st.sampled_from([-1, 1])))
        code = INVALID_GOAL
    elif category == "nan_inf_time":
        pick_point()["time"] = draw(st.sampled_from(NON_FINITE))
        code = INVALID_GOAL
    elif category == "huge_time":
        p = pick_point()
        p["time"] = draw(st.sampled_from([(INT32_MAX, 0), (-2 ** 31, 0), (INT32_MAX, 999999999)]))
        code = INVALID_GOAL
    elif category == "times_not_increasing":
        if len(points) < 2:
            points.append(dict(points[0]))
        k = draw(st.integers(1, len(points) - 1))
        points[k] = dict(points[k], time=points[k - 1]["time"] - draw(st.sampled_from([0.0, 0.1, 5.0])))
        code = INVALID_GOAL
    elif category == "times_all_negative":
        for i, p in enumerate(points):
            p["time"] = -10.0 + 0.1 * i
        code = INVALID_GOAL
    elif category == "no_positions":
        p = pick_point()
        p["positions"] = []
        p.pop("velocities", None)
        p.pop("accelerations", None)
        code = INVALID_GOAL
    elif category == "positions_short":
        p = pick_point()
        cut = draw(st.integers(1, n - 1))
        for field in ("positions", "velocities", "accelerations"):
            if field in p:
                p[field] = p[field][:n - cut]
        code = INVALID_GOAL
    elif category == "size_mismatch":
        p = pick_point()
        field = draw(st.sampled_from(["velocities", "accelerations"]))
        size = draw(st.sampled_from([1, n - 1, n + 1, 2 * n]))
        p[field] = [0.0] * size
        code = INVALID_GOAL
    elif category == "past_stamp":
        stamp = ("past", draw(st.floats(1000.0, 1.0e8)))
        code = INVALID_GOAL
    elif category == "stamp_beyond_max_time":
        stamp = draw(st.sampled_from([("offset", 2.0e9), ("offset", 1.5e9), ("absolute", 4294967295.0)]))
        code = ACCEPT  # decided by expect(now): beyond MAX_TIME of now -> INVALID_GOAL
    elif category in ("long_10000", "long_10000_bad"):
        points = []
        lo = [arm.safe_range(j) for j in range(n)]
        for i in range(10000):
            s = 0.5 - 0.5 * math.cos(math.pi * i / 9999)
            points.append({"time": 0.2 + 0.0005 * i,
                           "positions": [lo[j][0] + 0.1 + 0.1 * s for j in range(n)]})
        if category == "long_10000_bad":
            k = draw(st.integers(0, 9999))
            field = draw(st.sampled_from(["positions", "time"]))
            if field == "positions":
                points[k]["positions"][draw(st.integers(0, n - 1))] = draw(st.sampled_from(NON_FINITE + HUGE))
            else:
                points[k]["time"] = points[max(0, k - 1)]["time"] if k else -1e12
            code = INVALID_GOAL
    cancel = None
    if via == "action" and draw(st.integers(0, 9)) == 0:
        cancel = draw(st.floats(0.0, 0.3))
    return Case(category, via, names, points, stamp, code, tolerances, cancel, note)


def bursts(arm: Arm, max_size: int = 6, **kwargs: Any):
    """Lists of cases sent back to back (each accepted one preempts the previous)."""
    return st.lists(cases(arm, **kwargs), min_size=1, max_size=max_size)
