"""The state the parts of :class:`~rospy_control.trajectory.executor.TrajectoryExecutor` share: declared
once here (the executor's ``__init__`` sets every one), so each part states what it reads."""
from __future__ import annotations

import threading
from typing import Any, Deque, List, Optional, Tuple

import numpy as np

from rospy_control.log import Throttle
from rospy_control.trajectory.limits import TrajectoryLimits
from rospy_control.trajectory.plan import GoalEvent, Plan
from rospy_control.trajectory.prepared import PreparedTrajectory
from rospy_control.trajectory.tolerances import Tolerances


class ExecutorState:
    """Attribute declarations only (no behaviour): see the executor's constructor for their meaning."""

    _names: List[str]
    _n: int
    _continuous: np.ndarray
    _default_tolerances: Tolerances
    _stop_duration: float
    _stop_reach: Any
    _allow_partial: bool
    hold_on_abort: bool
    _timeout_margin: Optional[float]
    _limits: TrajectoryLimits
    _cmd_lock: threading.Lock
    _state_lock: threading.Lock
    _events: Deque[GoalEvent]
    _running: bool
    _time_data: Tuple[float, float, float]
    _latest: Optional[tuple]
    _plan: Optional[Plan]
    _prepared: Optional[PreparedTrajectory]
    _zeros: np.ndarray
    _reject_throttle: Throttle
    _hold_throttle: Throttle
    _clip_throttle: Throttle

    def _preempt_locked(self, plan: Optional[Plan], reason: str, time: float) -> None:
        raise NotImplementedError

    def _hold_plan(self, plan: Plan, goal: Any) -> Plan:
        raise NotImplementedError
