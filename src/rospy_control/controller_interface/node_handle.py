"""The NodeHandle facade: everything ROS a controller (or the controller manager) may use.

Controllers never import rospy.  ros_control hands every controller two ``ros::NodeHandle`` objects
(``root_nh`` in the controller manager's namespace and ``controller_nh`` in ``<ns>/<name>``); we do
the same with :class:`NodeHandle`, an abstract facade with two implementations:

* :class:`rospy_control.testing.in_memory.InMemoryNodeHandle` -- a shared in-process
  "ROS graph" for unit tests (params, synchronous topics, in-process services and actions);
* ``rospy_control.adapter.ros_node_handle.RosNodeHandle`` -- rospy (written in the adapter).

Contract for an implementation
------------------------------
The public methods of :class:`NodeHandle` are implemented here once (name resolution, bookkeeping
of created handles, :meth:`NodeHandle.shutdown`).  An implementation provides the protected
primitives, which always receive **resolved** (absolute) names:

=====================================  =========================================================
``_make_child(namespace)``             a new handle of the same implementation in ``namespace``
``_get_param(key)``                    value (dicts deep-copied), ``KeyError`` if absent
``_has_param(key)``                    bool; true for a namespace that has children
``_set_param(key, value)``             dict values replace the whole sub-tree
``_delete_param(key)``                 ``KeyError`` if absent
``_advertise(topic, cls, q, latch)``   a :class:`Publisher`
``_subscribe(topic, cls, cb, q)``      a :class:`Subscriber`; ``cb(msg)`` from any thread
``_advertise_service(n, cls, h)``      a :class:`ServiceServer`; ``h(request) -> response``
``_action_server(n, cls, g, c)``       an :class:`ActionServer` (not started; see below)
``now()``                              ROS time in float seconds (sim time when enabled)
``ok()``                               ``False`` once the node is shutting down
=====================================  =========================================================

Name resolution (:meth:`NodeHandle.resolve_name`), as rospy does it for a node whose private
namespace is ``node_name``: ``/abs`` is kept, ``~priv`` becomes ``<node_name>/priv``, anything else
is relative to this handle's :attr:`NodeHandle.namespace`.  Remapping, if any, is the
implementation's business and is applied to the resolved name.

Lifetime: every publisher, subscriber, service, action server (and anything passed to
:meth:`NodeHandle.track`, e.g. a
:class:`~rospy_control.controller_interface.realtime_publisher.RealtimePublisher`)
created through a handle or any of its children is remembered; :meth:`NodeHandle.shutdown` closes
all of them, newest first (like ``ros::NodeHandle::shutdown``).  The controller manager gives each
controller its own handles and shuts them down when the controller is unloaded, so an unloaded
controller stops receiving messages and its topics/services disappear.

Action servers follow actionlib's ``ActionServer`` (not the simple one): ``goal_cb(goal_handle)`` for
every new goal, ``cancel_cb(goal_handle)`` when a cancel request hits a goal; goal handles offer
:class:`ServerGoalHandle`'s methods.  The server is created stopped (no racy ``auto_start``); call
:meth:`ActionServer.start` once the callbacks may run.
"""
from __future__ import annotations

import abc
import re
import threading
from typing import Any, Callable, List, Optional

from rospy_control.exceptions import ControllerError
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = [
    "NodeHandle", "NodeHandleError", "Publisher", "Subscriber", "ServiceServer", "ActionServer",
    "ServerGoalHandle", "canonical_name", "join_names", "RAISE",
]


class NodeHandleError(ControllerError):
    """A ROS-communication operation through a :class:`NodeHandle` failed (closed handle, duplicate
    service, wrong message type, failed service call)."""


class _Raise:
    """Sentinel: :meth:`NodeHandle.get_param` without a default raises ``KeyError``."""

    def __repr__(self) -> str:
        return "<raise>"


RAISE = _Raise()

_SLASHES = re.compile(r"/+")


def canonical_name(name: str) -> str:
    """Collapse repeated slashes and drop a trailing one (``'//a//b/'`` -> ``'/a/b'``; ``'/'`` stays)."""
    name = _SLASHES.sub("/", name)
    if len(name) > 1 and name.endswith("/"):
        name = name[:-1]
    return name


def join_names(namespace: str, name: str) -> str:
    """Join ``name`` (relative) onto ``namespace`` (absolute); an empty name gives the namespace."""
    if not name:
        return canonical_name(namespace)
    return canonical_name(namespace + "/" + name)


# ---------------------------------------------------------------------------------------------
# Handle types returned by a NodeHandle (documented contract for every implementation)
# ---------------------------------------------------------------------------------------------
class Publisher(abc.ABC):
    """Returned by :meth:`NodeHandle.advertise`.  ``name`` is the resolved topic."""

    name: str = ""

    @abc.abstractmethod
    def publish(self, msg: Any) -> None:
        """Publish ``msg`` (an instance of the advertised class; :class:`NodeHandleError` otherwise or
        after :meth:`unregister`).  May block in rospy: never call it from the control loop, use a
        :class:`~rospy_control.controller_interface.realtime_publisher.RealtimePublisher`."""

    @abc.abstractmethod
    def get_num_connections(self) -> int:
        """Number of subscribers currently connected."""

    @abc.abstractmethod
    def unregister(self) -> None:
        """Stop publishing; idempotent."""


class Subscriber(abc.ABC):
    """Returned by :meth:`NodeHandle.subscribe`.  ``name`` is the resolved topic."""

    name: str = ""

    @abc.abstractmethod
    def unregister(self) -> None:
        """Stop receiving; no callback runs after this returns (best effort in rospy); idempotent."""


class ServiceServer(abc.ABC):
    """Returned by :meth:`NodeHandle.advertise_service`.  ``name`` is the resolved service."""

    name: str = ""

    @abc.abstractmethod
    def shutdown(self) -> None:
        """Stop serving; idempotent."""


class ServerGoalHandle(abc.ABC):
    """actionlib's ``ServerGoalHandle`` (Python), the methods controllers use.

    Status transitions follow actionlib exactly; an illegal transition logs an error and changes
    nothing.  ``result``/``feedback`` are instances of the action's Result/Feedback classes; ``None``
    means an empty result.  Two goal handles compare equal when their goal ids are equal.
    """

    @abc.abstractmethod
    def get_goal(self) -> Any:
        """The goal message."""

    @abc.abstractmethod
    def get_goal_id(self) -> Any:
        """``actionlib_msgs/GoalID`` (``id``, ``stamp``)."""

    @abc.abstractmethod
    def get_goal_status(self) -> Any:
        """``actionlib_msgs/GoalStatus`` (``goal_id``, ``status``, ``text``)."""

    @abc.abstractmethod
    def set_accepted(self, text: str = "") -> None:
        """PENDING -> ACTIVE, RECALLING -> PREEMPTING."""

    @abc.abstractmethod
    def set_rejected(self, result: Any = None, text: str = "") -> None:
        """PENDING or RECALLING -> REJECTED."""

    @abc.abstractmethod
    def set_succeeded(self, result: Any = None, text: str = "") -> None:
        """ACTIVE or PREEMPTING -> SUCCEEDED."""

    @abc.abstractmethod
    def set_aborted(self, result: Any = None, text: str = "") -> None:
        """ACTIVE or PREEMPTING -> ABORTED."""

    @abc.abstractmethod
    def set_canceled(self, result: Any = None, text: str = "") -> None:
        """PENDING/RECALLING -> RECALLED, ACTIVE/PREEMPTING -> PREEMPTED."""

    @abc.abstractmethod
    def publish_feedback(self, feedback: Any) -> None:
        """Send a feedback message for this goal."""


class ActionServer(abc.ABC):
    """Returned by :meth:`NodeHandle.action_server`; created stopped.  ``name`` is the resolved
    action namespace (topics ``<name>/goal``, ``<name>/cancel``, ... in rospy)."""

    name: str = ""

    @abc.abstractmethod
    def start(self) -> None:
        """Begin accepting goals (callbacks may run from now on)."""

    @abc.abstractmethod
    def shutdown(self) -> None:
        """Stop serving; idempotent."""


# ---------------------------------------------------------------------------------------------
# NodeHandle
# ---------------------------------------------------------------------------------------------
def _close(handle: Any) -> None:
    closer = getattr(handle, "shutdown", None) or getattr(handle, "unregister", None)
    if closer is None:  # pragma: no cover - track() checks this
        return
    try:
        closer()
    except Exception:  # noqa: BLE001 - closing must go on for the other handles
        logger.exception("Error while closing %r", handle)


class NodeHandle(abc.ABC):
    """Abstract ROS node handle (see the module docstring for the implementation contract).

    :param namespace: absolute namespace of this handle (``/`` is the root).
    :param node_name: the node's fully qualified name, i.e. its private namespace for ``~`` names.
    :param parent: the handle this one was created from with :meth:`child` (bookkeeping only).
    """

    #: :class:`RealtimePublisher` publishes synchronously (no thread) when created through a handle
    #: whose class sets this; the in-memory implementation does, for deterministic tests.
    SYNCHRONOUS_REALTIME_PUBLISH = False

    def __init__(self, namespace: str, node_name: str, parent: Optional["NodeHandle"] = None) -> None:
        if not namespace.startswith("/"):
            namespace = "/" + namespace
        self._namespace = canonical_name(namespace)
        self._node_name = canonical_name(node_name if node_name.startswith("/") else "/" + node_name)
        self._parent = parent
        self._handles: List[Any] = []
        self._handles_lock = threading.Lock()
        self._closed = False

    # -- names ---------------------------------------------------------------------------------
    @property
    def namespace(self) -> str:
        """Absolute namespace of this handle, e.g. ``/robot/arm_controller``."""
        return self._namespace

    @property
    def node_name(self) -> str:
        """Fully qualified node name (the private namespace ``~``)."""
        return self._node_name

    def resolve_name(self, name: str) -> str:
        """Resolve ``name`` like rospy: absolute kept, ``~x`` -> ``<node>/x``, else relative to
        :attr:`namespace`.  An empty name resolves to the namespace itself."""
        if name.startswith("/"):
            return canonical_name(name)
        if name.startswith("~"):
            return join_names(self._node_name, name[1:].lstrip("/"))
        return join_names(self._namespace, name)

    def child(self, name: str) -> "NodeHandle":
        """A handle in ``resolve_name(name)`` (``child('')`` = same namespace, separate bookkeeping).

        Handles created through the child are also shut down by this handle's :meth:`shutdown`.
        """
        return self._make_child(self.resolve_name(name))

    # -- parameters ----------------------------------------------------------------------------
    def get_param(self, key: str, default: Any = RAISE) -> Any:
        """Value of parameter ``key`` (resolved); a namespace gives a dict (a copy).

        :raises KeyError: absent and no ``default`` given (like ``rospy.get_param``).
        """
        resolved = self.resolve_name(key)
        try:
            return self._get_param(resolved)
        except KeyError:
            if default is RAISE:
                raise KeyError(resolved) from None
            return default

    def has_param(self, key: str) -> bool:
        """True if ``key`` is set (a namespace with children counts)."""
        return self._has_param(self.resolve_name(key))

    def set_param(self, key: str, value: Any) -> None:
        """Set ``key``; a dict value replaces the whole sub-tree."""
        self._set_param(self.resolve_name(key), value)

    def delete_param(self, key: str) -> None:
        """Delete ``key`` (and its sub-tree). :raises KeyError: if absent."""
        self._delete_param(self.resolve_name(key))

    def search_param(self, key: str) -> Optional[str]:
        """Search ``key`` from this namespace up to the root (``ros::NodeHandle::searchParam``).

        Returns the resolved name of the closest existing parameter whose first segment matches,
        or ``None``.  Absolute and ``~`` keys are only checked where they point.
        """
        if key.startswith("/") or key.startswith("~"):
            resolved = self.resolve_name(key)
            return resolved if self._has_param(resolved) else None
        first = key.split("/", 1)[0]
        namespace = self._namespace
        while True:
            if self._has_param(join_names(namespace, first)):
                return join_names(namespace, key)
            if namespace == "/":
                return None
            namespace = namespace.rsplit("/", 1)[0] or "/"

    # -- communication ---------------------------------------------------------------------------
    def advertise(self, topic: str, msg_class: type, queue_size: int = 10, latch: bool = False) -> Publisher:
        """Advertise ``topic``.  A latched publisher hands its last message to late subscribers."""
        self._check_open()
        return self.track(self._advertise(self.resolve_name(topic), msg_class, queue_size, latch))

    def subscribe(self, topic: str, msg_class: type, callback: Callable[[Any], None],
                  queue_size: int = 10) -> Subscriber:
        """Subscribe ``callback(msg)`` to ``topic``.  Callbacks run in a ROS thread: store the value
        (under a lock if it is not a single reference) and let ``update()`` read it."""
        self._check_open()
        return self.track(self._subscribe(self.resolve_name(topic), msg_class, callback, queue_size))

    def advertise_service(self, name: str, srv_class: type, handler: Callable[[Any], Any]) -> ServiceServer:
        """Serve ``name`` with ``handler(request) -> response``."""
        self._check_open()
        return self.track(self._advertise_service(self.resolve_name(name), srv_class, handler))

    def action_server(self, name: str, action_class: type, goal_cb: Callable[[ServerGoalHandle], None],
                      cancel_cb: Optional[Callable[[ServerGoalHandle], None]] = None) -> ActionServer:
        """Create (not start) an actionlib ``ActionServer`` in ``name`` for ``action_class``
        (e.g. ``control_msgs.msg.FollowJointTrajectoryAction``)."""
        self._check_open()
        return self.track(self._action_server(self.resolve_name(name), action_class, goal_cb, cancel_cb))

    @abc.abstractmethod
    def now(self) -> float:
        """ROS time now, float seconds (simulated time when ``/use_sim_time`` is set)."""

    @abc.abstractmethod
    def ok(self) -> bool:
        """False once the node (or graph) is shutting down."""

    # -- lifetime -------------------------------------------------------------------------------
    def track(self, handle: Any) -> Any:
        """Remember ``handle`` (anything with ``shutdown()`` or ``unregister()``) so that
        :meth:`shutdown` of this handle and of its ancestors closes it.  Returns ``handle``."""
        if getattr(handle, "shutdown", None) is None and getattr(handle, "unregister", None) is None:
            raise TypeError(f"cannot track {handle!r}: it has neither shutdown() nor unregister()")
        node: Optional[NodeHandle] = self
        while node is not None:
            with node._handles_lock:
                node._handles.append(handle)
            node = node._parent
        return handle

    def shutdown(self) -> None:
        """Close every handle created through this handle and its children, newest first.

        Idempotent.  Afterwards creating publishers/subscribers/... through it raises
        :class:`NodeHandleError`; parameters and :meth:`now` keep working.
        """
        with self._handles_lock:
            handles, self._handles = self._handles, []
            self._closed = True
        for handle in reversed(handles):
            _close(handle)
        if handles:
            # ancestors forget them too, so unloaded controllers are not kept alive by the root handle
            gone = {id(h) for h in handles}
            node = self._parent
            while node is not None:
                with node._handles_lock:
                    node._handles = [h for h in node._handles if id(h) not in gone]
                node = node._parent

    def _check_open(self) -> None:
        if self._closed:
            raise NodeHandleError(f"NodeHandle '{self._namespace}' has been shut down")

    def __repr__(self) -> str:
        return f"<{type(self).__name__} '{self._namespace}'>"

    # -- implementation primitives ------------------------------------------------------------------
    @abc.abstractmethod
    def _make_child(self, namespace: str) -> "NodeHandle":
        """A new handle of this implementation in the absolute ``namespace`` with ``parent=self``."""

    @abc.abstractmethod
    def _get_param(self, key: str) -> Any:
        ...

    @abc.abstractmethod
    def _has_param(self, key: str) -> bool:
        ...

    @abc.abstractmethod
    def _set_param(self, key: str, value: Any) -> None:
        ...

    @abc.abstractmethod
    def _delete_param(self, key: str) -> None:
        ...

    @abc.abstractmethod
    def _advertise(self, topic: str, msg_class: type, queue_size: int, latch: bool) -> Publisher:
        ...

    @abc.abstractmethod
    def _subscribe(self, topic: str, msg_class: type, callback: Callable[[Any], None],
                   queue_size: int) -> Subscriber:
        ...

    @abc.abstractmethod
    def _advertise_service(self, name: str, srv_class: type, handler: Callable[[Any], Any]) -> ServiceServer:
        ...

    @abc.abstractmethod
    def _action_server(self, name: str, action_class: type, goal_cb: Callable[[ServerGoalHandle], None],
                       cancel_cb: Optional[Callable[[ServerGoalHandle], None]]) -> ActionServer:
        ...
