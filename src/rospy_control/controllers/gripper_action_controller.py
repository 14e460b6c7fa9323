"""``<package>/GripperActionController``: ros_controllers' gripper action controller in Python.

Variants: ``position_controllers/GripperActionController`` (PositionJointInterface: writes the goal
position, reports the goal's ``max_effort`` as the effort) and
``effort_controllers/GripperActionController`` (EffortJointInterface: writes
``PID(position error, velocity error)`` clamped to ``±|max_effort|`` -- so ``max_effort`` 0 exerts no
force).

ROS API
-------
Parameters (controller namespace; upstream names and defaults):

* ``joint`` (string, required) -- must be in the URDF (``robot_description`` on the controller
  manager's namespace, else global) and in the hardware interface;
* ``goal_tolerance`` (0.01) -- success when ``|goal position - position| < goal_tolerance``;
* ``max_effort`` (0.0) -- effort limit of holds (start and cancel), as upstream;
* ``stall_velocity_threshold`` (0.001), ``stall_timeout`` (1.0 s) -- a goal not reached whose joint
  moved no faster than the threshold for longer than the timeout is ABORTED with ``stalled`` true;
* ``action_monitor_rate`` (20 Hz) -- rate at which results are relayed from the control loop;
* effort variant: ``gains/<joint>/{p, i, d, i_clamp, ...}`` (``p`` required).

Action ``gripper_cmd`` (``control_msgs/GripperCommandAction``): goal ``command.position`` and
``command.max_effort``; result ``position``, ``effort``, ``stalled``, ``reached_goal``; no feedback.
Goals are rejected while the controller is not running.  A new goal preempts (cancels) the previous
one.  Cancel of the active goal holds the current position with the default ``max_effort`` and
reports PREEMPTED.  ``stopping()`` preempts the active goal and leaves the joint safe (ours): the
effort variant writes 0, the position variant holds the measured position.

Threading: the control loop only compares numbers and, when a goal finishes, appends an event to a
queue; the results are sent by the action monitor (a thread at ``action_monitor_rate``; with
in-memory node handles it runs from ``update()`` in ROS time, for deterministic tests).
"""
from __future__ import annotations

import threading
from collections import deque
from typing import Any, Deque, NamedTuple, Optional, Tuple

from rospy_control.controller_interface import Controller
from rospy_control.controllers._common import required_param
from rospy_control.controllers._jtc_common import (
    PeriodicWorker, control_msgs_module, number_param, urdf_joint_types,
)
from rospy_control.controllers.pid import Pid
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import EffortJointInterface, PositionJointInterface
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["GripperActionController", "PositionGripperActionController", "EffortGripperActionController"]

SUCCEEDED = "succeeded"
ABORTED = "aborted"
CANCELED = "canceled"


class _Goal:
    __slots__ = ("handle", "active", "last_movement")

    def __init__(self, handle: Any, time: float) -> None:
        self.handle = handle
        self.active = True
        self.last_movement = time


class _Command(NamedTuple):
    position: float
    max_effort: float
    goal: Optional[_Goal]


class GripperActionController(Controller):
    """Base of both variants; subclasses set :attr:`INTERFACE` and implement the adapter methods."""

    #: None: follow the node handle (synchronous monitor for in-memory handles); True/False force it.
    SYNCHRONOUS: Optional[bool] = None

    def init(self, hw, root_nh, controller_nh) -> bool:
        self._msgs = control_msgs_module("msg")
        self.joint_name: str = required_param(controller_nh, "joint", str)
        urdf_joint_types(root_nh, [self.joint_name])
        self.handle = hw.get_handle(self.joint_name)
        self._data = self.handle.get_data()
        self.goal_tolerance = abs(number_param(controller_nh, "goal_tolerance", 0.01))
        self.default_max_effort = number_param(controller_nh, "max_effort", 0.0)
        self.stall_velocity_threshold = number_param(controller_nh, "stall_velocity_threshold", 0.001)
        self.stall_timeout = number_param(controller_nh, "stall_timeout", 1.0)
        rate = number_param(controller_nh, "action_monitor_rate", 20.0)
        if rate <= 0.0:
            raise ConfigError(f"Parameter 'action_monitor_rate' must be > 0, got {rate}",
                              controller_nh.resolve_name("action_monitor_rate"))
        self._init_adapter(controller_nh)
        self._nh = controller_nh
        self._lock = threading.Lock()
        self._events: Deque[Tuple[Any, str, Any]] = deque()
        self._command = _Command(self._data.position, self.default_max_effort, None)
        self.computed_command = 0.0
        self.monitor_worker = PeriodicWorker(controller_nh, rate, self.monitor,
                                             f"GripperMonitor[{controller_nh.namespace}]", self.SYNCHRONOUS)
        self.action_server = controller_nh.action_server("gripper_cmd", self._msgs.GripperCommandAction,
                                                         self._on_goal, self._on_cancel)
        self.action_server.start()
        return True

    # -------------------------------------------------------------------------------- loop side
    def starting(self, time: float) -> None:
        self._command = _Command(self._data.position, self.default_max_effort, None)
        self._start_adapter()
        self.monitor_worker.reset(time)

    def update(self, time: float, period: float) -> None:
        cmd = self._command
        data = self._data
        position = data.position
        velocity = data.velocity
        error = cmd.position - position
        self.computed_command = effort = self._write(cmd.position, error, -velocity, cmd.max_effort, period)
        goal = cmd.goal
        if goal is not None and goal.active:
            if abs(error) < self.goal_tolerance:
                self._finish(goal, SUCCEEDED, position, effort, reached=True, stalled=False)
            elif abs(velocity) > self.stall_velocity_threshold:
                goal.last_movement = time
            elif time - goal.last_movement > self.stall_timeout:
                self._finish(goal, ABORTED, position, effort, reached=False, stalled=True)
        self.monitor_worker.poll(time)

    def stopping(self, time: float) -> None:
        goal = self._command.goal
        if goal is not None and goal.active:
            self._finish(goal, CANCELED, self._data.position, self.computed_command, reached=False,
                         stalled=False)
        self._safe_command()
        if self.monitor_worker.synchronous:
            self.monitor_worker.run_once()

    def aborting(self, time: float) -> None:
        self._safe_command()

    def _finish(self, goal: _Goal, status: str, position: float, effort: float, reached: bool,
                stalled: bool) -> None:
        with self._lock:
            if not goal.active:
                return
            goal.active = False
            self._events.append((goal.handle, status, (position, effort, stalled, reached)))

    # -------------------------------------------------------------------------------- monitor / callbacks
    def _result(self, position: float, effort: float, stalled: bool, reached: bool) -> Any:
        return self._msgs.GripperCommandResult(position=float(position), effort=float(effort),
                                               stalled=bool(stalled), reached_goal=bool(reached))

    def monitor(self) -> None:
        """Send the results of goals the loop finished (monitor thread)."""
        events = self._events
        while events:
            handle, status, values = events.popleft()
            result = self._result(*values)
            if status == SUCCEEDED:
                handle.set_succeeded(result)
            elif status == ABORTED:
                handle.set_aborted(result)
            else:
                handle.set_canceled(result)

    def _on_goal(self, gh: Any) -> None:
        if not self.is_running():
            text = "Can't accept new action goals. Controller is not running."
            logger.error(text)
            gh.set_rejected(self._result(self._data.position, 0.0, False, False), text)
            return
        goal = gh.get_goal()
        target = float(goal.command.position)
        max_effort = float(goal.command.max_effort)
        gh.set_accepted()
        new = _Goal(gh, self._nh.now())
        with self._lock:
            previous = self._command.goal
            if previous is not None and not previous.active:
                previous = None                       # finished already: nothing to preempt
            if previous is not None:
                previous.active = False
            self._command = _Command(target, max_effort, new)
        if previous is not None:
            result = self._result(self._data.position, self.computed_command, False, False)
            previous.handle.set_canceled(result, "preempted by a new goal")

    def _on_cancel(self, gh: Any) -> None:
        with self._lock:
            goal = self._command.goal
            if goal is None or not goal.active or goal.handle != gh:
                return
            goal.active = False
            position = self._data.position
            self._command = _Command(position, self.default_max_effort, None)
        gh.set_canceled(self._result(position, self.computed_command, False, False), "canceled")

    # -------------------------------------------------------------------------------- adapters
    def _init_adapter(self, nh) -> None:
        """Read adapter parameters."""

    def _start_adapter(self) -> None:
        """Commands at ``starting()``."""

    def _write(self, position: float, error: float, error_velocity: float, max_effort: float,
               period: float) -> float:
        """Write the command; return the effort reported in results."""
        raise NotImplementedError

    def _safe_command(self) -> None:
        raise NotImplementedError


class PositionGripperActionController(GripperActionController):
    """``position_controllers/GripperActionController``: forwards the goal position."""

    INTERFACE = PositionJointInterface

    def _start_adapter(self) -> None:
        self.handle.set_command(self._data.position)

    def _write(self, position, error, error_velocity, max_effort, period) -> float:
        self.handle.set_command(position)
        return max_effort

    def _safe_command(self) -> None:
        self.handle.set_command(self._data.position)


class EffortGripperActionController(GripperActionController):
    """``effort_controllers/GripperActionController``: PID clamped to ``±|max_effort|``."""

    INTERFACE = EffortJointInterface

    def _init_adapter(self, nh) -> None:
        self.pid = Pid.from_params(nh.child(f"gains/{self.joint_name}"))

    def _start_adapter(self) -> None:
        self.pid.reset()
        self.handle.set_command(0.0)

    def _write(self, position, error, error_velocity, max_effort, period) -> float:
        limit = abs(max_effort)
        command = self.pid.compute_command(error, period, error_velocity)
        command = max(-limit, min(limit, command))
        self.handle.set_command(command)
        return command

    def _safe_command(self) -> None:
        self.handle.set_command(0.0)
