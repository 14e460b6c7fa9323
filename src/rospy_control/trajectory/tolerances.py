"""Path and goal tolerances: parameter parsing, action-goal overrides and vectorised checks.

Parameters (controller namespace, as ros_controllers' ``tolerances.h``)::

    constraints:
      goal_time: 0.0                   # s after the last segment's end to reach the goal tolerances
      stopped_velocity_tolerance: 0.01 # becomes the goal velocity tolerance of *every* joint
      <joint>:
        trajectory: 0.0                # path position tolerance (0 = not enforced)
        goal: 0.0                      # goal position tolerance (0 = not enforced)

Entries for joints the controller does not have are ignored.  Velocity and acceleration path
tolerances can only come from an action goal.  A tolerance of 0 means "not enforced".

Action goal overrides (``path_tolerance``/``goal_tolerance`` lists of objects with ``name``,
``position``, ``velocity``, ``acceleration``; ``goal_time_tolerance``): a value > 0 replaces the
default, < 0 disables it (0), 0 keeps the default.  Unknown joint names are ignored.

Checks use the errors ``desired - actual`` (position error as the shortest angular distance for
every joint, as upstream); acceleration errors are always 0 upstream, so acceleration tolerances
never trigger and are not evaluated.
"""
from __future__ import annotations

import math
from typing import Any, Iterable, List, Optional, Sequence

import numpy as np

from rospy_control.exceptions import ConfigError
from rospy_control.trajectory._typing import BoolSeq

DEFAULT_GOAL_TIME = 0.0
DEFAULT_STOPPED_VELOCITY_TOLERANCE = 0.01

_MISSING = object()


def _to_sec(value: Any) -> float:
    if hasattr(value, "to_sec"):
        return float(value.to_sec())
    if hasattr(value, "secs") and hasattr(value, "nsecs"):
        return float(value.secs) + 1e-9 * float(value.nsecs)
    return float(value)


class StateTolerances:
    """Per-joint position/velocity/acceleration tolerances (arrays of length n; 0 = not enforced)."""

    __slots__ = ("position", "velocity", "acceleration")

    def __init__(self, n: int, position=None, velocity=None, acceleration=None) -> None:
        self.position = np.zeros(n) if position is None else np.array(position, dtype=float).reshape(n)
        self.velocity = np.zeros(n) if velocity is None else np.array(velocity, dtype=float).reshape(n)
        self.acceleration = (np.zeros(n) if acceleration is None
                             else np.array(acceleration, dtype=float).reshape(n))

    def copy(self) -> "StateTolerances":
        """Deep copy."""
        return StateTolerances(len(self.position), self.position, self.velocity, self.acceleration)

    def __repr__(self) -> str:
        return (f"StateTolerances(position={self.position.tolist()}, velocity={self.velocity.tolist()}, "
                f"acceleration={self.acceleration.tolist()})")


class Tolerances:
    """Tolerances of a trajectory, per joint: ``path`` and ``goal`` state tolerances, ``goal_time``.

    ``goal_time`` is stored per joint (s) because joints untouched by a partial goal keep the
    tolerances of the trajectory they continue.
    """

    __slots__ = ("path", "goal", "goal_time")

    def __init__(self, n: int, path: Optional[StateTolerances] = None, goal: Optional[StateTolerances] = None,
                 goal_time=0.0) -> None:
        self.path = StateTolerances(n) if path is None else path
        self.goal = StateTolerances(n) if goal is None else goal
        self.goal_time = np.broadcast_to(np.asarray(goal_time, dtype=float), (n,)).copy()

    @property
    def n_joints(self) -> int:
        """Number of joints."""
        return int(self.goal_time.shape[0])

    @classmethod
    def none(cls, n: int) -> "Tolerances":
        """No tolerance enforced (topic commands, hold and stop trajectories)."""
        return cls(n)

    def copy(self) -> "Tolerances":
        """Deep copy."""
        return Tolerances(self.n_joints, self.path.copy(), self.goal.copy(), self.goal_time)

    def merged(self, other: "Tolerances", mask: BoolSeq) -> "Tolerances":
        """Tolerances of ``other`` for joints where ``mask`` is True, ours elsewhere."""
        m = np.asarray(mask, dtype=bool)
        out = self.copy()
        for mine, theirs in ((out.path, other.path), (out.goal, other.goal)):
            mine.position[m] = theirs.position[m]
            mine.velocity[m] = theirs.velocity[m]
            mine.acceleration[m] = theirs.acceleration[m]
        out.goal_time[m] = other.goal_time[m]
        return out

    def with_goal(self, joint_names: Sequence[str], path_tolerance: Iterable[Any] = (),
                  goal_tolerance: Iterable[Any] = (), goal_time_tolerance: Any = 0.0) -> "Tolerances":
        """These (default) tolerances overridden by an action goal (see the module docstring)."""
        out = self.copy()
        index = {name: i for i, name in enumerate(joint_names)}
        for entries, state in ((path_tolerance, out.path), (goal_tolerance, out.goal)):
            for entry in entries or ():
                name = getattr(entry, "name", None)
                i = index.get(name) if isinstance(name, str) else None
                if i is None:
                    continue
                for field in ("position", "velocity", "acceleration"):
                    value = float(getattr(entry, field, 0.0) or 0.0)
                    if value > 0.0:
                        getattr(state, field)[i] = value
                    elif value < 0.0:
                        getattr(state, field)[i] = 0.0
        gt = _to_sec(goal_time_tolerance) if goal_time_tolerance is not None else 0.0
        if gt > 0.0:
            out.goal_time[:] = gt
        elif gt < 0.0:
            out.goal_time[:] = 0.0
        return out

    def __repr__(self) -> str:
        return f"Tolerances(path={self.path!r}, goal={self.goal!r}, goal_time={self.goal_time.tolist()})"


def lookup_param(params: Any, key: str, default: Any) -> Any:
    """``key`` ("a/b/c") from a flat or nested dict, or from an object with ``get_param(key, default)``."""
    if hasattr(params, "get_param") and not isinstance(params, dict):
        return params.get_param(key, default)
    if key in params:
        return params[key]
    node = params
    for part in key.split("/"):
        if isinstance(node, dict) and part in node:
            node = node[part]
        else:
            return default
    return node


def number_param(params: Any, key: str, default: float, source: Optional[str] = None) -> float:
    """A finite number parameter (see :func:`lookup_param`); :raises ConfigError: otherwise."""
    value = lookup_param(params, key, default)
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"parameter '{key}' must be a number, got {value!r}", source) from None
    if not math.isfinite(number):
        raise ConfigError(f"parameter '{key}' must be finite, got {value!r}", source)
    return number


def tolerances_from_params(params: Any, joint_names: Sequence[str],
                           source: Optional[str] = None) -> Tolerances:
    """Default tolerances from the controller namespace (see the module docstring).

    :param params: a dict (flat ``"constraints/goal_time"`` keys or nested), or any object with
        ``get_param(key, default)`` relative to the controller namespace (a NodeHandle).
    :param joint_names: controller joints, in order.
    :param source: namespace named in error messages.
    :raises ConfigError: a value is not a finite number.
    """
    n = len(joint_names)
    goal_time = number_param(params, "constraints/goal_time", DEFAULT_GOAL_TIME, source)
    stopped = number_param(params, "constraints/stopped_velocity_tolerance",
                           DEFAULT_STOPPED_VELOCITY_TOLERANCE, source)
    path_pos: List[float] = []
    goal_pos: List[float] = []
    for name in joint_names:
        path_pos.append(number_param(params, f"constraints/{name}/trajectory", 0.0, source))
        goal_pos.append(number_param(params, f"constraints/{name}/goal", 0.0, source))
    return Tolerances(n, StateTolerances(n, position=path_pos),
                      StateTolerances(n, position=goal_pos, velocity=[stopped] * n), goal_time)


def enforced(values: np.ndarray) -> np.ndarray:
    """Tolerances as thresholds: values <= 0 (not enforced) become +inf."""
    return np.where(values > 0.0, values, np.inf)


def shortest_angular_distance(from_angle, to_angle):
    """``to - from`` normalised to (-pi, pi] (vectorised; as ``angles::shortest_angular_distance``)."""
    d = np.asarray(to_angle, dtype=float) - np.asarray(from_angle, dtype=float)
    return math.pi - np.remainder(math.pi - d, 2.0 * math.pi)


def check_state_tolerance(position_error, velocity_error, tolerance: StateTolerances) -> np.ndarray:
    """Per joint: True where the errors are within the (enforced) tolerances."""
    ok = ~(np.abs(position_error) > enforced(tolerance.position))
    ok &= ~(np.abs(velocity_error) > enforced(tolerance.velocity))
    return ok
