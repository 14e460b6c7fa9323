"""An in-memory "ROS graph" implementing the ``NodeHandle`` facade of controller_interface, for tests.

One :class:`InMemoryGraph` plays roscore plus every node: a parameter tree, topics, services,
action servers and a clock.  Any number of :class:`InMemoryNodeHandle` objects share it, so a test
can be a "client node" talking to the controllers under test::

    graph = InMemoryGraph()
    root_nh = InMemoryNodeHandle("/", graph)
    root_nh.set_param("joint_state_controller", {"type": "joint_state_controller/JointStateController",
                                                 "publish_rate": 50.0})
    received = []
    root_nh.subscribe("joint_states", JointState, received.append)
    graph.set_time(12.5)          # ROS time is manual unless a clock is given

Semantics (chosen to be deterministic, and as close to rospy as that allows):

* **Parameters** -- a nested dict; a dict value replaces the sub-tree; reads return deep copies.
* **Topics** -- :meth:`Publisher.publish` delivers a *deep copy* of the message (like serialization)
  to every current subscriber synchronously in the publishing thread; a latched publisher's last
  message is delivered to subscribers that come later.  A publisher and subscriber of different
  classes on one topic raise ``NodeHandleError`` (rospy would refuse to connect); publishing an
  instance of another class raises too.  Exceptions in callbacks are logged, not raised into the
  publisher (rospy does the same).
* **Services** -- :meth:`InMemoryGraph.call_service` calls the handler in the caller's thread; a
  handler exception or a ``None`` response becomes ``NodeHandleError``.
* **Actions** -- :class:`~.in_memory_actions.InMemoryActionServer` (module :mod:`.in_memory_actions`)
  with goal handles that follow actionlib's ``ServerGoalHandle`` state machine;
  :class:`~.in_memory_actions.InMemoryActionClient` sends goals and cancel requests and observes
  status, feedback and result.
* **Time** -- :meth:`InMemoryGraph.now` is a manual clock (:meth:`~InMemoryGraph.set_time`,
  :meth:`~InMemoryGraph.advance`) unless a ``clock`` callable is given.
* ``RealtimePublisher`` publishes synchronously through these handles
  (``SYNCHRONOUS_REALTIME_PUBLISH``).
"""
from __future__ import annotations

import copy
import threading
from typing import Any, Callable, Dict, List, Optional

from rospy_control.controller_interface.node_handle import (
    ActionServer, NodeHandle, NodeHandleError, Publisher, ServerGoalHandle, ServiceServer, Subscriber,
)
from rospy_control.log import get_logger
from rospy_control.testing.in_memory_actions import InMemoryActionServer, type_name

logger = get_logger(__name__)

__all__ = [
    "InMemoryGraph", "InMemoryNodeHandle", "InMemoryPublisher", "InMemorySubscriber", "InMemoryService",
]


# ---------------------------------------------------------------------------------------------
# Graph
# ---------------------------------------------------------------------------------------------
class _Topic:
    __slots__ = ("name", "msg_class", "publishers", "subscribers")

    def __init__(self, name: str) -> None:
        self.name = name
        self.msg_class: Optional[type] = None
        self.publishers: List["InMemoryPublisher"] = []
        self.subscribers: List["InMemorySubscriber"] = []


def _parts(key: str) -> List[str]:
    return [p for p in key.split("/") if p]


class InMemoryGraph:
    """The shared in-process ROS graph (parameter server, topics, services, actions, clock).

    :param node_name: the node name used for ``~`` resolution by handles created without one.
    :param time: initial value of the manual clock (seconds).
    :param clock: optional callable returning ROS time in seconds; replaces the manual clock.
    """

    def __init__(self, node_name: str = "/test_node", time: float = 0.0,
                 clock: Optional[Callable[[], float]] = None) -> None:
        self.node_name = node_name
        self._time = float(time)
        self._clock = clock
        self._lock = threading.RLock()
        self._params: Dict[str, Any] = {}
        self._topics: Dict[str, _Topic] = {}
        self._services: Dict[str, "InMemoryService"] = {}
        self._action_servers: Dict[str, "InMemoryActionServer"] = {}
        self._ok = True

    # -- clock --------------------------------------------------------------------------------
    def now(self) -> float:
        """ROS time in seconds."""
        if self._clock is not None:
            return float(self._clock())
        return self._time

    def set_time(self, t: float) -> None:
        """Set the manual clock."""
        self._time = float(t)

    def advance(self, dt: float) -> float:
        """Advance the manual clock by ``dt`` and return the new time."""
        self._time += float(dt)
        return self._time

    def ok(self) -> bool:
        """False after :meth:`shutdown`."""
        return self._ok

    def shutdown(self) -> None:
        """Mark the graph as shutting down (``ok()`` becomes False)."""
        self._ok = False

    # -- parameters (resolved names) -------------------------------------------------------------
    def get_param(self, key: str) -> Any:
        """Value at the absolute ``key`` (deep copy). :raises KeyError: absent."""
        with self._lock:
            node: Any = self._params
            for part in _parts(key):
                if not isinstance(node, dict) or part not in node:
                    raise KeyError(key)
                node = node[part]
            return copy.deepcopy(node)

    def has_param(self, key: str) -> bool:
        """True if the absolute ``key`` exists."""
        try:
            self.get_param(key)
        except KeyError:
            return False
        return True

    def set_param(self, key: str, value: Any) -> None:
        """Set the absolute ``key``; dict values replace the sub-tree."""
        value = copy.deepcopy(value)
        parts = _parts(key)
        with self._lock:
            if not parts:
                if not isinstance(value, dict):
                    raise NodeHandleError("only a dict can be set as the root parameter '/'")
                self._params = value
                return
            node = self._params
            for part in parts[:-1]:
                child = node.get(part)
                if not isinstance(child, dict):
                    child = {}
                    node[part] = child
                node = child
            node[parts[-1]] = value

    def delete_param(self, key: str) -> None:
        """Delete the absolute ``key``. :raises KeyError: absent."""
        parts = _parts(key)
        with self._lock:
            if not parts:
                self._params = {}
                return
            node: Any = self._params
            for part in parts[:-1]:
                if not isinstance(node, dict) or part not in node:
                    raise KeyError(key)
                node = node[part]
            if not isinstance(node, dict) or parts[-1] not in node:
                raise KeyError(key)
            del node[parts[-1]]

    # -- introspection for tests -----------------------------------------------------------------
    def topic_names(self) -> List[str]:
        """Resolved names of topics that currently have a publisher or subscriber."""
        with self._lock:
            return sorted(n for n, t in self._topics.items() if t.publishers or t.subscribers)

    def num_publishers(self, topic: str) -> int:
        """Number of registered publishers on the resolved ``topic``."""
        with self._lock:
            t = self._topics.get(topic)
            return len(t.publishers) if t else 0

    def num_subscribers(self, topic: str) -> int:
        """Number of registered subscribers on the resolved ``topic``."""
        with self._lock:
            t = self._topics.get(topic)
            return len(t.subscribers) if t else 0

    def service_names(self) -> List[str]:
        """Resolved names of advertised services."""
        with self._lock:
            return sorted(self._services)

    def action_server_names(self) -> List[str]:
        """Resolved names of existing action servers."""
        with self._lock:
            return sorted(self._action_servers)

    def call_service(self, name: str, request: Any) -> Any:
        """Call the service at the resolved ``name`` in this thread and return the response.

        :raises NodeHandleError: no such service, the handler raised or returned ``None``.
        """
        with self._lock:
            service = self._services.get(name)
        if service is None:
            raise NodeHandleError(f"service [{name}] is not available")
        try:
            response = service.handler(request)
        except Exception as err:  # noqa: BLE001 - reported to the caller like rospy's ServiceException
            raise NodeHandleError(f"service [{name}] handler raised: {err!r}") from err
        if response is None:
            raise NodeHandleError(f"service [{name}] handler returned None")
        return response

    def action_server(self, name: str) -> Optional["InMemoryActionServer"]:
        """The action server at the resolved ``name`` (or None)."""
        with self._lock:
            return self._action_servers.get(name)

    # -- internal registration -------------------------------------------------------------------
    def _topic(self, name: str, msg_class: type) -> _Topic:
        topic = self._topics.get(name)
        if topic is None:
            topic = _Topic(name)
            self._topics[name] = topic
        if topic.msg_class is not None and msg_class is not None and topic.msg_class is not msg_class \
                and (topic.publishers or topic.subscribers):
            raise NodeHandleError(
                f"topic '{name}' already carries '{type_name(topic.msg_class)}', "
                f"cannot use it with '{type_name(msg_class)}'")
        if msg_class is not None:
            topic.msg_class = msg_class
        return topic

    def _add_publisher(self, pub: "InMemoryPublisher") -> None:
        with self._lock:
            self._topic(pub.name, pub.msg_class).publishers.append(pub)

    def _remove_publisher(self, pub: "InMemoryPublisher") -> None:
        with self._lock:
            topic = self._topics.get(pub.name)
            if topic is not None and pub in topic.publishers:
                topic.publishers.remove(pub)

    def _add_subscriber(self, sub: "InMemorySubscriber") -> List[Any]:
        with self._lock:
            topic = self._topic(sub.name, sub.msg_class)
            topic.subscribers.append(sub)
            return [p.latched for p in topic.publishers if p.latch and p.latched is not None]

    def _remove_subscriber(self, sub: "InMemorySubscriber") -> None:
        with self._lock:
            topic = self._topics.get(sub.name)
            if topic is not None and sub in topic.subscribers:
                topic.subscribers.remove(sub)

    def _subscribers(self, name: str) -> List["InMemorySubscriber"]:
        with self._lock:
            topic = self._topics.get(name)
            return list(topic.subscribers) if topic else []

    def _add_service(self, service: "InMemoryService") -> None:
        with self._lock:
            if service.name in self._services:
                raise NodeHandleError(f"service [{service.name}] already registered")
            self._services[service.name] = service

    def _remove_service(self, service: "InMemoryService") -> None:
        with self._lock:
            if self._services.get(service.name) is service:
                del self._services[service.name]

    def _add_action_server(self, server: "InMemoryActionServer") -> None:
        with self._lock:
            if server.name in self._action_servers:
                raise NodeHandleError(f"action server [{server.name}] already exists")
            self._action_servers[server.name] = server

    def _remove_action_server(self, server: "InMemoryActionServer") -> None:
        with self._lock:
            if self._action_servers.get(server.name) is server:
                del self._action_servers[server.name]


# ---------------------------------------------------------------------------------------------
# Topics and services
# ---------------------------------------------------------------------------------------------
class InMemoryPublisher(Publisher):
    """Synchronous publisher: :meth:`publish` runs the subscribers' callbacks before returning."""

    def __init__(self, graph: InMemoryGraph, name: str, msg_class: type, queue_size: int,
                 latch: bool) -> None:
        self.graph = graph
        self.name = name
        self.msg_class = msg_class
        self.queue_size = queue_size
        self.latch = latch
        self.latched: Any = None
        self.num_published = 0
        self._closed = False
        graph._add_publisher(self)

    def publish(self, msg: Any) -> None:
        if self._closed:
            raise NodeHandleError(f"publish() to an unregistered publisher of '{self.name}'")
        if self.msg_class is not None and not isinstance(msg, self.msg_class):
            raise NodeHandleError(
                f"publisher of '{self.name}' expects '{type_name(self.msg_class)}', "
                f"got '{type(msg).__name__}'")
        self.num_published += 1
        if self.latch:
            self.latched = copy.deepcopy(msg)
        for sub in self.graph._subscribers(self.name):
            sub._deliver(copy.deepcopy(msg))

    def get_num_connections(self) -> int:
        return self.graph.num_subscribers(self.name)

    def unregister(self) -> None:
        if not self._closed:
            self._closed = True
            self.graph._remove_publisher(self)


class InMemorySubscriber(Subscriber):
    """Subscriber whose callback runs in the publisher's thread."""

    def __init__(self, graph: InMemoryGraph, name: str, msg_class: type,
                 callback: Callable[[Any], None], queue_size: int) -> None:
        self.graph = graph
        self.name = name
        self.msg_class = msg_class
        self.callback = callback
        self.queue_size = queue_size
        self._closed = False
        for latched in graph._add_subscriber(self):
            self._deliver(copy.deepcopy(latched))

    def _deliver(self, msg: Any) -> None:
        if self._closed:
            return
        try:
            self.callback(msg)
        except Exception:  # noqa: BLE001 - like rospy: a failing callback is logged, not propagated
            logger.exception("Error in subscriber callback of '%s'", self.name)

    def unregister(self) -> None:
        if not self._closed:
            self._closed = True
            self.graph._remove_subscriber(self)


class InMemoryService(ServiceServer):
    """In-process service; call it with :meth:`InMemoryGraph.call_service`."""

    def __init__(self, graph: InMemoryGraph, name: str, srv_class: type,
                 handler: Callable[[Any], Any]) -> None:
        self.graph = graph
        self.name = name
        self.srv_class = srv_class
        self.handler = handler
        self._closed = False
        graph._add_service(self)

    def shutdown(self) -> None:
        if not self._closed:
            self._closed = True
            self.graph._remove_service(self)


# ---------------------------------------------------------------------------------------------
# NodeHandle
# ---------------------------------------------------------------------------------------------
class InMemoryNodeHandle(NodeHandle):
    """:class:`NodeHandle` on an :class:`InMemoryGraph`.

    :param namespace: absolute namespace (``/`` by default).
    :param graph: the shared graph; a new one if omitted (reach it as :attr:`graph`).
    :param node_name: private namespace for ``~`` names; the graph's ``node_name`` by default.
    """

    SYNCHRONOUS_REALTIME_PUBLISH = True

    def __init__(self, namespace: str = "/", graph: Optional[InMemoryGraph] = None,
                 node_name: Optional[str] = None, parent: Optional[NodeHandle] = None) -> None:
        self.graph = graph if graph is not None else InMemoryGraph()
        super().__init__(namespace, node_name if node_name is not None else self.graph.node_name, parent)

    def now(self) -> float:
        return self.graph.now()

    def ok(self) -> bool:
        return self.graph.ok()

    def call_service(self, name: str, request: Any) -> Any:
        """Test helper: call the service ``name`` (resolved through this handle)."""
        return self.graph.call_service(self.resolve_name(name), request)

    def _make_child(self, namespace: str) -> "InMemoryNodeHandle":
        return InMemoryNodeHandle(namespace, self.graph, self.node_name, parent=self)

    def _get_param(self, key: str) -> Any:
        return self.graph.get_param(key)

    def _has_param(self, key: str) -> bool:
        return self.graph.has_param(key)

    def _set_param(self, key: str, value: Any) -> None:
        self.graph.set_param(key, value)

    def _delete_param(self, key: str) -> None:
        self.graph.delete_param(key)

    def _advertise(self, topic: str, msg_class: type, queue_size: int, latch: bool) -> Publisher:
        return InMemoryPublisher(self.graph, topic, msg_class, queue_size, latch)

    def _subscribe(self, topic: str, msg_class: type, callback: Callable[[Any], None],
                   queue_size: int) -> Subscriber:
        return InMemorySubscriber(self.graph, topic, msg_class, callback, queue_size)

    def _advertise_service(self, name: str, srv_class: type, handler: Callable[[Any], Any]) -> ServiceServer:
        return InMemoryService(self.graph, name, srv_class, handler)

    def _action_server(self, name: str, action_class: type, goal_cb: Callable[[ServerGoalHandle], None],
                       cancel_cb: Optional[Callable[[ServerGoalHandle], None]]) -> ActionServer:
        return InMemoryActionServer(self.graph, name, action_class, goal_cb, cancel_cb)
