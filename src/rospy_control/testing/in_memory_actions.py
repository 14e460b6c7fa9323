"""In-memory actionlib: goal handles, action server and a test action client, for tests.

Part of the in-memory graph of :mod:`rospy_control.testing.in_memory`:
:meth:`~rospy_control.testing.in_memory.InMemoryNodeHandle.action_server` creates an
:class:`InMemoryActionServer` whose goal handles follow actionlib's ``ServerGoalHandle`` state machine
(:class:`InMemoryServerGoalHandle`); :class:`InMemoryActionClient` sends goals and cancel requests in
the caller's thread (the server's callbacks run before ``send_goal`` / ``cancel`` return, with the
server's lock held, as in actionlib) and observes status, feedback and result through
:class:`ClientGoal`.
"""
from __future__ import annotations

import copy
import itertools
import threading
from typing import TYPE_CHECKING, Any, Callable, Dict, List, Optional, Tuple

from rospy_control.controller_interface.node_handle import ActionServer, NodeHandleError, ServerGoalHandle
from rospy_control.log import get_logger

if TYPE_CHECKING:
    from rospy_control.testing.in_memory import InMemoryGraph, InMemoryNodeHandle

logger = get_logger(__name__)

__all__ = [
    "GoalStatus", "InMemoryActionServer", "InMemoryServerGoalHandle", "InMemoryActionClient", "ClientGoal",
]


class GoalStatus:
    """``actionlib_msgs/GoalStatus`` constants (same values)."""

    PENDING = 0
    ACTIVE = 1
    PREEMPTED = 2
    SUCCEEDED = 3
    ABORTED = 4
    REJECTED = 5
    PREEMPTING = 6
    RECALLING = 7
    RECALLED = 8
    LOST = 9

    TERMINAL = frozenset({PREEMPTED, SUCCEEDED, ABORTED, REJECTED, RECALLED, LOST})
    NAMES = {
        0: "PENDING", 1: "ACTIVE", 2: "PREEMPTED", 3: "SUCCEEDED", 4: "ABORTED", 5: "REJECTED",
        6: "PREEMPTING", 7: "RECALLING", 8: "RECALLED", 9: "LOST",
    }


def type_name(cls: Optional[type]) -> str:
    """A message class's ROS type (``pkg/Name``) for error messages, else its Python name."""
    if cls is None:
        return "None"
    return getattr(cls, "_type", None) or cls.__name__


def _make_stamp(seconds: float) -> Any:
    try:
        import genpy
    except ImportError:  # pragma: no cover - genpy ships with every ROS install
        return seconds
    return genpy.Time.from_sec(seconds)


class _SimpleGoalID:
    __slots__ = ("id", "stamp")

    def __init__(self, id: str = "", stamp: Any = 0.0) -> None:  # noqa: A002 - message field name
        self.id = id
        self.stamp = stamp


class _SimpleGoalStatus:
    __slots__ = ("goal_id", "status", "text")

    def __init__(self, goal_id: Any = None, status: int = 0, text: str = "") -> None:
        self.goal_id = goal_id
        self.status = status
        self.text = text


def _goal_id_msg(goal_id: str, stamp: float) -> Any:
    try:
        from actionlib_msgs.msg import GoalID
    except ImportError:  # pragma: no cover - actionlib_msgs ships with every ROS install
        return _SimpleGoalID(goal_id, stamp)
    return GoalID(stamp=_make_stamp(stamp), id=goal_id)


def _goal_status_msg(goal_id: Any, status: int, text: str) -> Any:
    try:
        from actionlib_msgs.msg import GoalStatus as GoalStatusMsg
    except ImportError:  # pragma: no cover
        return _SimpleGoalStatus(goal_id, status, text)
    return GoalStatusMsg(goal_id=copy.deepcopy(goal_id), status=status, text=text)


# ---------------------------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------------------------
def _action_types(action_class: type) -> Tuple[Optional[type], Optional[type], Optional[type]]:
    """(goal class, result class, feedback class) of a genpy action class, Nones if unknown."""
    try:
        action = action_class()
        return (type(action.action_goal.goal), type(action.action_result.result),
                type(action.action_feedback.feedback))
    except Exception:  # noqa: BLE001 - a test double may pass any class
        return None, None, None


class InMemoryServerGoalHandle(ServerGoalHandle):
    """actionlib ``ServerGoalHandle`` semantics on an in-memory goal."""

    def __init__(self, server: "InMemoryActionServer", goal: Any, goal_id: str, stamp: float) -> None:
        self._server = server
        self._goal = goal
        self._goal_id = _goal_id_msg(goal_id, stamp)
        self.id = goal_id
        self.stamp = stamp
        # actionlib's goal handles take their server's lock: share it, so that lock-order bugs in
        # controllers (callbacks run under that lock, see InMemoryActionServer) show up in unit tests.
        self._lock = server._lock
        self.status = GoalStatus.PENDING
        self.text = ""
        self.result: Any = None
        self.feedback: List[Any] = []

    # -- getters -------------------------------------------------------------------------------
    def get_goal(self) -> Any:
        return self._goal

    def get_goal_id(self) -> Any:
        return self._goal_id

    def get_goal_status(self) -> Any:
        return _goal_status_msg(self._goal_id, self.status, self.text)

    # -- transitions ---------------------------------------------------------------------------
    def _transition(self, allowed: Dict[int, int], what: str, text: str, result: Any = None,
                    terminal: bool = False) -> bool:
        with self._lock:
            target = allowed.get(self.status)
            if target is None:
                logger.error(
                    "To transition to %s, the goal must be in a %s state, it is currently in state: %d",
                    what, " or ".join(GoalStatus.NAMES[s] for s in allowed), self.status)
                return False
            self.status = target
            self.text = text
            if terminal:
                self.result = copy.deepcopy(result) if result is not None else self._server._new_result()
        return True

    def set_accepted(self, text: str = "") -> None:
        self._transition({GoalStatus.PENDING: GoalStatus.ACTIVE, GoalStatus.RECALLING: GoalStatus.PREEMPTING},
                         "an active state", text)

    def set_rejected(self, result: Any = None, text: str = "") -> None:
        self._transition({GoalStatus.PENDING: GoalStatus.REJECTED, GoalStatus.RECALLING: GoalStatus.REJECTED},
                         "a rejected state", text, result, terminal=True)

    def set_succeeded(self, result: Any = None, text: str = "") -> None:
        self._transition({GoalStatus.ACTIVE: GoalStatus.SUCCEEDED,
                          GoalStatus.PREEMPTING: GoalStatus.SUCCEEDED},
                         "a succeeded state", text, result, terminal=True)

    def set_aborted(self, result: Any = None, text: str = "") -> None:
        self._transition({GoalStatus.ACTIVE: GoalStatus.ABORTED, GoalStatus.PREEMPTING: GoalStatus.ABORTED},
                         "an aborted state", text, result, terminal=True)

    def set_canceled(self, result: Any = None, text: str = "") -> None:
        self._transition({GoalStatus.PENDING: GoalStatus.RECALLED, GoalStatus.RECALLING: GoalStatus.RECALLED,
                          GoalStatus.ACTIVE: GoalStatus.PREEMPTED,
                          GoalStatus.PREEMPTING: GoalStatus.PREEMPTED},
                         "a cancelled state", text, result, terminal=True)

    def set_cancel_requested(self) -> bool:
        """PENDING -> RECALLING, ACTIVE -> PREEMPTING; True if it transitioned (actionlib)."""
        with self._lock:
            if self.status == GoalStatus.PENDING:
                self.status = GoalStatus.RECALLING
                return True
            if self.status == GoalStatus.ACTIVE:
                self.status = GoalStatus.PREEMPTING
                return True
            return False

    def publish_feedback(self, feedback: Any) -> None:
        with self._lock:
            self.feedback.append(copy.deepcopy(feedback))

    def is_terminal(self) -> bool:
        """True once the goal reached a terminal status."""
        return self.status in GoalStatus.TERMINAL

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, InMemoryServerGoalHandle):
            return NotImplemented
        return self.id == other.id

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"<InMemoryServerGoalHandle {self.id} {GoalStatus.NAMES.get(self.status, self.status)}>"


class InMemoryActionServer(ActionServer):
    """actionlib ``ActionServer`` in memory; goals come from :class:`InMemoryActionClient`."""

    def __init__(self, graph: "InMemoryGraph", name: str, action_class: type,
                 goal_cb: Callable[[ServerGoalHandle], None],
                 cancel_cb: Optional[Callable[[ServerGoalHandle], None]]) -> None:
        self.graph = graph
        self.name = name
        self.action_class = action_class
        self.goal_class, self.result_class, self.feedback_class = _action_types(action_class)
        self.goal_cb = goal_cb
        self.cancel_cb = cancel_cb
        self.started = False
        self._closed = False
        self._lock = threading.RLock()
        self.goals: List[InMemoryServerGoalHandle] = []
        graph._add_action_server(self)

    def start(self) -> None:
        self.started = True

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self.started = False
            self.graph._remove_action_server(self)

    def _new_result(self) -> Any:
        return self.result_class() if self.result_class is not None else None

    def _receive_goal(self, goal: Any, goal_id: str, stamp: float) -> InMemoryServerGoalHandle:
        if not self.started:
            raise NodeHandleError(f"action server [{self.name}] is not started")
        if self.goal_class is not None and not isinstance(goal, self.goal_class):
            raise NodeHandleError(
                f"action server [{self.name}] expects goals of '{type_name(self.goal_class)}', "
                f"got '{type(goal).__name__}'")
        handle = InMemoryServerGoalHandle(self, copy.deepcopy(goal), goal_id, stamp)
        # As actionlib: the goal callback runs with the server's lock held.
        with self._lock:
            self.goals.append(handle)
            try:
                self.goal_cb(handle)
            except Exception:  # noqa: BLE001 - actionlib logs exceptions of user callbacks
                logger.exception("Exception in goal callback of action server '%s'", self.name)
        return handle

    def _receive_cancel(self, goal_id: str, stamp: float) -> None:
        if not self.started:
            raise NodeHandleError(f"action server [{self.name}] is not started")
        # As actionlib: cancel callbacks run with the server's lock held.
        with self._lock:
            for handle in list(self.goals):
                hit = ((not goal_id and stamp == 0.0) or handle.id == goal_id
                       or (stamp != 0.0 and handle.stamp <= stamp))
                if hit and handle.set_cancel_requested() and self.cancel_cb is not None:
                    try:
                        self.cancel_cb(handle)
                    except Exception:  # noqa: BLE001
                        logger.exception("Exception in cancel callback of action server '%s'", self.name)


class ClientGoal:
    """What :meth:`InMemoryActionClient.send_goal` returns: a view of the server-side goal."""

    def __init__(self, client: "InMemoryActionClient", handle: InMemoryServerGoalHandle) -> None:
        self._client = client
        self._handle = handle
        self.goal_id = handle.id

    def get_goal_status(self) -> int:
        """Current ``actionlib_msgs/GoalStatus`` value (e.g. ``GoalStatus.SUCCEEDED``)."""
        return self._handle.status

    def get_goal_status_text(self) -> str:
        return self._handle.text

    def get_result(self) -> Any:
        """The result once terminal, else None."""
        return self._handle.result if self._handle.is_terminal() else None

    @property
    def feedback(self) -> List[Any]:
        """Every feedback message published for this goal, in order."""
        return list(self._handle.feedback)

    def is_done(self) -> bool:
        return self._handle.is_terminal()

    def cancel(self) -> None:
        """Request cancellation of this goal."""
        self._client.cancel(self.goal_id)


class InMemoryActionClient:
    """Test client for an :class:`InMemoryActionServer`.

    :param nh: handle used to resolve ``name`` (and to read the clock for goal stamps).
    :param name: action namespace, as a controller would pass it to ``action_server``.
    """

    _ids = itertools.count(1)

    def __init__(self, nh: "InMemoryNodeHandle", name: str) -> None:
        self.nh = nh
        self.name = nh.resolve_name(name)

    def server(self) -> InMemoryActionServer:
        server = self.nh.graph.action_server(self.name)
        if server is None:
            raise NodeHandleError(f"no action server at [{self.name}]")
        return server

    def server_ready(self) -> bool:
        server = self.nh.graph.action_server(self.name)
        return server is not None and server.started

    def send_goal(self, goal: Any, goal_id: Optional[str] = None,
                  stamp: Optional[float] = None) -> ClientGoal:
        """Send ``goal``; the server's goal callback runs before this returns.

        :param goal_id: defaults to a unique id; :param stamp: defaults to the graph's now().
        """
        if goal_id is None:
            goal_id = f"{self.nh.node_name}-{next(self._ids)}"
        if stamp is None:
            stamp = self.nh.now()
        return ClientGoal(self, self.server()._receive_goal(goal, goal_id, float(stamp)))

    def cancel(self, goal_id: str) -> None:
        """Cancel the goal with ``goal_id``."""
        self.server()._receive_cancel(goal_id, 0.0)

    def cancel_all(self) -> None:
        """Cancel every goal (empty id, zero stamp)."""
        self.server()._receive_cancel("", 0.0)

    def cancel_before(self, stamp: float) -> None:
        """Cancel every goal stamped at or before ``stamp``."""
        self.server()._receive_cancel("", float(stamp))
