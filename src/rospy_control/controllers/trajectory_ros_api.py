"""The ROS API of a trajectory executor, shared by the joint trajectory controller and the standalone
branch's FollowJointTrajectory server: the ``command`` topic, the ``state`` topic, the
``query_state`` service and the ``follow_joint_trajectory`` action, as ros_controllers' controller
offers them (see :mod:`rospy_control.controllers.joint_trajectory_controller`).
"""
from __future__ import annotations

import math
import threading
from collections import deque
from typing import Any, Callable, Optional, Sequence, Tuple

from rospy_control.controllers._common import PublishRate, to_stamp
from rospy_control.controllers._jtc_common import DeferredPublisher, PeriodicWorker, control_msgs_module
from rospy_control.exceptions import ControllerError
from rospy_control.log import Throttle, get_logger
from rospy_control.trajectory import (
    ABORTED, INVALID_GOAL, PREEMPTED, SUCCEEDED, TrajectoryError, TrajectoryExecutor,
)
from rospy_control.trajectory.message import to_sec

logger = get_logger("rospy_control.controllers.joint_trajectory_controller")

__all__ = ["TrajectoryRosApi", "DEFAULT_STATE_PUBLISH_RATE", "DEFAULT_ACTION_MONITOR_RATE"]

DEFAULT_STATE_PUBLISH_RATE = 50.0
DEFAULT_ACTION_MONITOR_RATE = 20.0

_TWO_PI = 2.0 * math.pi
_SINK: "deque[None]" = deque(maxlen=0)  # ``_SINK.extend(iterator)`` runs it to its end, keeping nothing


class TrajectoryRosApi:
    """``command``, ``state``, ``query_state`` and ``follow_joint_trajectory`` for a
    :class:`~rospy_control.trajectory.TrajectoryExecutor` (see the module docstring).

    The owner calls :meth:`on_start` after ``executor.start``, :meth:`on_update` after every
    ``executor.update`` (loop thread; cheap) and :meth:`on_stop` after ``executor.stopping``.
    Everything is created through ``nh``, so ``nh.shutdown()`` removes it all (threads included).

    :param executor: the engine.
    :param nh: handle in the controller namespace.
    :param state_publish_rate: Hz of the ``state`` topic (<= 0: never).
    :param action_monitor_rate: Hz of result/feedback relaying.
    :param synchronous: None: as ``nh.SYNCHRONOUS_REALTIME_PUBLISH``; True: publish ``state`` and
        relay goal events from :meth:`on_update` (deterministic tests); False: threads.

    A subclass that decides goals elsewhere (the pass-through controller: its device and its loop)
    overrides :meth:`_poll_goals`, :meth:`_submit_goal` and :meth:`_goal_accepted`; ``_logger`` is the
    logger it reports through.
    """

    _logger = logger

    def __init__(self, executor: TrajectoryExecutor, nh,
                 state_publish_rate: float = DEFAULT_STATE_PUBLISH_RATE,
                 action_monitor_rate: float = DEFAULT_ACTION_MONITOR_RATE,
                 synchronous: Optional[bool] = None,
                 fault_check: Optional[Callable[[], Optional[str]]] = None) -> None:
        msgs = control_msgs_module("msg")
        srvs = control_msgs_module("srv")
        from trajectory_msgs.msg import JointTrajectory
        self._msgs = msgs
        self._srvs = srvs
        self.executor = executor
        self.nh = nh
        self.joint_names = executor.joint_names
        #: returns why a joint cannot move (hardware fault) or None; new trajectories are refused then
        self.fault_check = fault_check
        self._goal_lock = threading.RLock()
        self._throttle = Throttle(5.0)
        self.state_rate = PublishRate(state_publish_rate)
        self.state_publisher = DeferredPublisher(nh, "state", msgs.JointTrajectoryControllerState,
                                                 self._build_state, 1, synchronous)
        # the monitor thread sleeps while no action goal is active and no event waits (an idle
        # controller costs nothing); a goal accepted or an event posted by the loop wakes it
        self.monitor_worker = PeriodicWorker(nh, action_monitor_rate, self.monitor,
                                             f"ActionMonitor[{nh.resolve_name('follow_joint_trajectory')}]",
                                             synchronous, pending=self._monitor_pending)
        self.command_subscriber = nh.subscribe("command", JointTrajectory, self._on_command, 1)
        self.query_service = nh.advertise_service("query_state", srvs.QueryTrajectoryState,
                                                  self._on_query_state)
        self.action_server = nh.action_server("follow_joint_trajectory", msgs.FollowJointTrajectoryAction,
                                              self._on_goal, self._on_cancel)
        self.action_server.start()

    # -------------------------------------------------------------------------------- loop side
    def on_start(self, time: float) -> None:
        """After ``executor.start`` (loop thread): first ``state`` at the next update."""
        if self.state_rate.enabled:
            self.state_rate.reset(time - 1.001 * self.state_rate.period)
        self.monitor_worker.reset(time)

    def on_update(self, time: float) -> None:
        """After ``executor.update`` (loop thread): request ``state`` when due; synchronous monitor."""
        rate = self.state_rate
        if rate.last is not None and rate.last + rate.period < time and self.state_publisher.request():
            rate.last += rate.period
            if rate.last + rate.period < time:  # after a stall, do not burst to catch up
                rate.last = time - rate.period
        self.monitor_worker.poll(time)

    def on_stop(self, time: float) -> None:
        """After ``executor.stopping``: in synchronous mode relay the preemption at once."""
        if self.monitor_worker.synchronous:
            self.monitor_worker.run_once()

    # -------------------------------------------------------------------------------- messages
    def _fill(self, msg: Any, fb: Any) -> Any:
        msg.header.stamp = to_stamp(fb.time)
        msg.joint_names = list(fb.joint_names)
        msg.desired.positions = fb.desired_positions.tolist()
        msg.desired.velocities = fb.desired_velocities.tolist()
        msg.desired.accelerations = fb.desired_accelerations.tolist()
        msg.actual.positions = fb.actual_positions.tolist()
        msg.actual.velocities = fb.actual_velocities.tolist()
        msg.error.positions = fb.error_positions.tolist()
        msg.error.velocities = fb.error_velocities.tolist()
        return msg

    def _build_state(self) -> Any:
        fb = self.executor.feedback()
        if fb is None:
            return None
        return self._fill(self._msgs.JointTrajectoryControllerState(), fb)

    def _result(self, code: int, text: str) -> Any:
        return self._msgs.FollowJointTrajectoryResult(error_code=int(code), error_string=text)

    # -------------------------------------------------------------------------------- monitor
    def monitor(self) -> None:
        """Relay finished goals and publish feedback for the active one (monitor thread).

        Lock order: actionlib calls ``_on_goal``/``_on_cancel`` holding its server lock and they take
        ``_goal_lock``; so code that starts *outside* actionlib (this monitor, ``_on_command``) only
        polls under ``_goal_lock`` and calls goal-handle methods (which take actionlib's lock) after
        releasing it.  Polling under the lock is what keeps "a goal is accepted before any of its
        events is relayed": ``_on_goal`` accepts and marks a goal accepted in one critical section.
        """
        with self._goal_lock:
            events, gh, fb = self._poll_goals()
        self._apply_events(events)
        if gh is not None and fb is not None:
            gh.publish_feedback(self._fill(self._msgs.FollowJointTrajectoryFeedback(), fb))

    def _monitor_pending(self) -> bool:
        """Whether the monitor has work: an action goal to give feedback on, or events to relay."""
        return self.executor.active_goal_key is not None or self.executor.has_events()

    def _poll_goals(self) -> Tuple[Sequence[Any], Any, Any]:
        """Under ``_goal_lock``: the goal events to relay, the active goal's handle (None: no action goal
        active) and its feedback."""
        events = self.executor.poll_events()
        gh = self.executor.active_goal_key
        fb = self.executor.feedback() if gh is not None else None
        return events, gh, fb

    def _relay_events(self) -> None:
        """Inside an actionlib callback (its server lock and ``_goal_lock`` held): relay at once."""
        self._apply_events(self.executor.poll_events())

    def _apply_events(self, events: Sequence[Any]) -> None:
        """Turn executor goal events into goal-handle transitions."""
        for ev in events:
            gh = ev.goal_key
            if gh is None:
                continue
            result = self._result(ev.error_code, ev.error_string)
            if ev.status == SUCCEEDED:
                gh.set_succeeded(result, ev.error_string)
            elif ev.status == ABORTED:
                gh.set_aborted(result, ev.error_string)
            elif ev.status == PREEMPTED:
                gh.set_canceled(result, ev.error_string)

    # -------------------------------------------------------------------------------- callbacks
    def _fault(self) -> Optional[str]:
        return self.fault_check() if self.fault_check is not None else None

    def _command_refused(self) -> bool:
        """True (with a throttled error) while a hardware fault makes a ``command`` ignored."""
        fault = self._fault()
        if fault is None:
            return False
        if self._throttle.ready("command_fault"):
            self._logger.error("%s: trajectory command ignored: %s", self.nh.namespace, fault)
        return True

    def _on_command(self, msg: Any) -> None:
        if self._command_refused():
            return
        code, _ = self.executor.accept(msg)  # logs its own (throttled) warning on rejection
        if code == 0:
            with self._goal_lock:  # see monitor() for the lock order
                events = self.executor.poll_events()
            self._apply_events(events)  # the preempted goal, if any, learns it now

    def _on_goal(self, gh: Any) -> None:
        goal = gh.get_goal()
        with self._goal_lock:
            fault = self._fault()
            if fault is not None:
                text = f"Cannot execute the goal: {fault}"
                gh.set_rejected(self._result(INVALID_GOAL, text), text)
                return
            try:
                code, text = self._submit_goal(goal, gh)
            except Exception as err:  # noqa: BLE001 - a malformed goal must get an answer, not stay PENDING
                self._logger.exception("Could not process trajectory goal")
                code, text = INVALID_GOAL, f"Could not process the goal: {err}"
            if code != 0:
                gh.set_rejected(self._result(code, text), text)
                return
            gh.set_accepted()
            self._goal_accepted()
        self.monitor_worker.wake()

    def _submit_goal(self, goal: Any, gh: Any) -> Tuple[int, str]:
        """Validate ``goal`` (handle ``gh``) and execute it: ``(code, error_string)``, 0 = accepted."""
        return self.executor.accept_goal(goal, gh)

    def _goal_accepted(self) -> None:
        """Right after a goal is accepted (actionlib's lock and ``_goal_lock`` held): the goal it
        replaces learns at once that it was preempted."""
        self._relay_events()

    def _on_cancel(self, gh: Any) -> None:
        with self._goal_lock:
            try:
                self.executor.cancel(gh)  # ignored unless gh is the active goal; building a hold cannot fail
            except Exception as err:  # noqa: BLE001 - defensive: unanswered, the client stays PREEMPTING
                logger.exception("Canceling the trajectory goal failed")
                text = f"canceled (the controller could not switch to holding: {err})"
                gh.set_canceled(self._result(0, text), text)
            self._relay_events()

    def _on_query_state(self, request: Any) -> Any:
        try:
            result = self.executor.query_state(to_sec(request.time))
        except TrajectoryError as err:
            if self._throttle.ready("query"):
                logger.warning("query_state: %s", err)
            raise ControllerError(str(err)) from None
        response = self._srvs.QueryTrajectoryStateResponse()
        response.name = list(result.joint_names)
        response.position = result.positions.tolist()
        response.velocity = result.velocities.tolist()
        response.acceleration = result.accelerations.tolist()
        return response


# =================================================================================================
# Controller
# =================================================================================================
