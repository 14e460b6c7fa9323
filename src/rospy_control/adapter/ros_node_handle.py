"""The rospy implementation of the :class:`~rospy_control.controller_interface.node_handle.NodeHandle` facade.

:class:`RosNodeHandle` gives controllers and the controller manager the same API as the in-memory
handle of the unit tests, backed by the node's rospy connection:

* parameters: ``rospy.get_param`` / ``set_param`` / ``has_param`` / ``delete_param`` on names the
  facade has already resolved (absolute), so rospy only applies the node's remappings;
* topics: ``rospy.Publisher`` (``latch`` supported) and ``rospy.Subscriber``;
* services: ``rospy.Service`` (a second server of the same name in this node raises
  :class:`~rospy_control.controller_interface.node_handle.NodeHandleError`);
* actions: ``actionlib.ActionServer`` created with ``auto_start=False`` (the facade's rule: call
  ``start()`` once the callbacks may run); its goal handles are wrapped in :class:`RosServerGoalHandle`
  so that they are facade :class:`~rospy_control.controller_interface.node_handle.ServerGoalHandle`
  objects;
* time: :meth:`RosNodeHandle.now` is ``rospy.get_time()`` (simulated time when ``/use_sim_time`` is
  set); :meth:`RosNodeHandle.ok` is ``not rospy.is_shutdown()``.

The node must be initialised (``rospy.init_node``) before any handle is used for communication;
the constructor itself only needs the node's name, which defaults to ``rospy.get_name()``.

Callbacks (subscribers, services, actions) run in rospy's threads, never in the control loop.  A
subscriber callback that raises is logged here (with the topic name) and does not reach rospy.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional

import actionlib
import rospy

from rospy_control.controller_interface.node_handle import (
    ActionServer, NodeHandle, NodeHandleError, Publisher, ServerGoalHandle, ServiceServer, Subscriber,
)
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = [
    "RosNodeHandle", "RosPublisher", "RosSubscriber", "RosServiceServer", "RosActionServer",
    "RosServerGoalHandle",
]


def _type_name(cls: Any) -> str:
    name: Optional[str] = getattr(cls, "_type", None)  # a generated message / service class's name
    if name:
        return name
    type_name: str = getattr(cls, "__name__", repr(cls))
    return type_name


# ---------------------------------------------------------------------------------------------
# Topics
# ---------------------------------------------------------------------------------------------
class RosPublisher(Publisher):
    """A ``rospy.Publisher`` behind the facade's :class:`Publisher` API.

    :param name: resolved topic name.
    """

    def __init__(self, name: str, msg_class: type, queue_size: int, latch: bool) -> None:
        self.name = name
        self.msg_class = msg_class
        self._lock = threading.Lock()
        self._closed = False
        self._pub = rospy.Publisher(name, msg_class, queue_size=queue_size, latch=latch)

    def publish(self, msg: Any) -> None:
        if not isinstance(msg, self.msg_class):
            raise NodeHandleError(
                f"topic '{self.name}' carries '{_type_name(self.msg_class)}', "
                f"cannot publish a '{_type_name(type(msg))}'")
        if self._closed:
            raise NodeHandleError(f"publisher of '{self.name}' has been unregistered")
        try:
            self._pub.publish(msg)
        except rospy.ROSException as err:
            raise NodeHandleError(f"publishing on '{self.name}' failed: {err}") from err

    def get_num_connections(self) -> int:
        if self._closed:
            return 0
        return self._pub.get_num_connections()

    def unregister(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._pub.unregister()


class RosSubscriber(Subscriber):
    """A ``rospy.Subscriber`` whose callback stops being called after :meth:`unregister`.

    :param name: resolved topic name.
    """

    def __init__(self, name: str, msg_class: type, callback: Callable[[Any], None], queue_size: int) -> None:
        self.name = name
        self.msg_class = msg_class
        self._callback = callback
        self._closed = False
        self._lock = threading.Lock()
        self._sub = rospy.Subscriber(name, msg_class, self._deliver, queue_size=queue_size)

    def _deliver(self, msg: Any) -> None:
        if self._closed:
            return
        try:
            self._callback(msg)
        except Exception:  # noqa: BLE001 - a failing callback must not take rospy's thread with it
            logger.exception("Error in subscriber callback of '%s'", self.name)

    def unregister(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._sub.unregister()


# ---------------------------------------------------------------------------------------------
# Services
# ---------------------------------------------------------------------------------------------
class RosServiceServer(ServiceServer):
    """A ``rospy.Service``.

    :param name: resolved service name.
    :raises NodeHandleError: this node already serves ``name``.
    """

    def __init__(self, name: str, srv_class: type, handler: Callable[[Any], Any]) -> None:
        self.name = name
        self.srv_class = srv_class
        self._lock = threading.Lock()
        self._closed = False
        try:
            self._srv = rospy.Service(name, srv_class, handler)
        except rospy.ServiceException as err:
            raise NodeHandleError(f"cannot advertise service [{name}]: {err}") from err

    def shutdown(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        self._srv.shutdown("shut down through its NodeHandle")


# ---------------------------------------------------------------------------------------------
# Actions
# ---------------------------------------------------------------------------------------------
class RosServerGoalHandle(ServerGoalHandle):
    """The facade's goal handle over an ``actionlib.ServerGoalHandle``.

    Every call is forwarded; status transitions, the illegal-transition errors and the published
    status/result/feedback are actionlib's own.  Two handles are equal when their goal ids are.
    """

    __slots__ = ("_gh",)

    def __init__(self, goal_handle: Any) -> None:
        self._gh = goal_handle

    @property
    def actionlib_handle(self) -> Any:
        """The wrapped ``actionlib.ServerGoalHandle``."""
        return self._gh

    def get_goal(self) -> Any:
        return self._gh.get_goal()

    def get_goal_id(self) -> Any:
        return self._gh.get_goal_id()

    def get_goal_status(self) -> Any:
        return self._gh.get_goal_status()

    def set_accepted(self, text: str = "") -> None:
        self._gh.set_accepted(text)

    def set_rejected(self, result: Any = None, text: str = "") -> None:
        self._gh.set_rejected(result, text)

    def set_succeeded(self, result: Any = None, text: str = "") -> None:
        self._gh.set_succeeded(result, text)

    def set_aborted(self, result: Any = None, text: str = "") -> None:
        self._gh.set_aborted(result, text)

    def set_canceled(self, result: Any = None, text: str = "") -> None:
        self._gh.set_canceled(result, text)

    def publish_feedback(self, feedback: Any) -> None:
        self._gh.publish_feedback(feedback)

    def _id(self) -> Optional[str]:
        goal_id = self._gh.get_goal_id()
        return getattr(goal_id, "id", None)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RosServerGoalHandle):
            return NotImplemented
        return self._id() == other._id()

    def __ne__(self, other: object) -> bool:
        result = self.__eq__(other)
        return result if result is NotImplemented else not result

    def __hash__(self) -> int:
        return hash(self._id())

    def __repr__(self) -> str:
        return f"<RosServerGoalHandle {self._id()}>"


class RosActionServer(ActionServer):
    """An ``actionlib.ActionServer`` created stopped; callbacks receive :class:`RosServerGoalHandle`.

    :param name: resolved action namespace.
    """

    def __init__(self, name: str, action_class: type, goal_cb: Callable[[ServerGoalHandle], None],
                 cancel_cb: Optional[Callable[[ServerGoalHandle], None]]) -> None:
        self.name = name
        self.action_class = action_class
        self._goal_cb = goal_cb
        self._cancel_cb = cancel_cb
        self._lock = threading.Lock()
        self._started = False
        self._closed = False
        try:
            self._server = actionlib.ActionServer(name, action_class, self._on_goal, self._on_cancel,
                                                  auto_start=False)
        except actionlib.ActionException as err:
            raise NodeHandleError(f"cannot create action server [{name}]: {err}") from err

    @property
    def actionlib_server(self) -> Any:
        """The wrapped ``actionlib.ActionServer``."""
        return self._server

    def _on_goal(self, goal_handle: Any) -> None:
        try:
            self._goal_cb(RosServerGoalHandle(goal_handle))
        except Exception:  # noqa: BLE001 - logged with the server's name, as actionlib users expect
            logger.exception("Exception in goal callback of action server '%s'", self.name)

    def _on_cancel(self, goal_handle: Any) -> None:
        if self._cancel_cb is None:
            return
        try:
            self._cancel_cb(RosServerGoalHandle(goal_handle))
        except Exception:  # noqa: BLE001
            logger.exception("Exception in cancel callback of action server '%s'", self.name)

    def start(self) -> None:
        with self._lock:
            if self._closed:
                raise NodeHandleError(f"action server [{self.name}] has been shut down")
            if self._started:
                return
            self._started = True
        self._server.start()

    def shutdown(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            started = self._started
        if started:  # actionlib's stop() needs the connections that start() creates
            self._server.stop()


# ---------------------------------------------------------------------------------------------
# NodeHandle
# ---------------------------------------------------------------------------------------------
class RosNodeHandle(NodeHandle):
    """:class:`NodeHandle` over rospy.

    :param namespace: absolute namespace of the handle; default: the node's namespace
        (``rospy.get_namespace()``), i.e. ros_control's "root" node handle.
    :param node_name: the node's fully qualified name (private namespace); default ``rospy.get_name()``.
    :param parent: internal (set by :meth:`child`).
    """

    SYNCHRONOUS_REALTIME_PUBLISH = False

    def __init__(self, namespace: Optional[str] = None, node_name: Optional[str] = None,
                 parent: Optional[NodeHandle] = None) -> None:
        if namespace is None:
            namespace = rospy.get_namespace()
        if node_name is None:
            node_name = rospy.get_name()
        super().__init__(namespace, node_name, parent)

    def now(self) -> float:
        return rospy.get_time()

    def ok(self) -> bool:
        return not rospy.is_shutdown()

    def _make_child(self, namespace: str) -> "RosNodeHandle":
        return RosNodeHandle(namespace, self.node_name, parent=self)

    # -- parameters -------------------------------------------------------------------------------
    def _get_param(self, key: str) -> Any:
        return rospy.get_param(key)

    def _has_param(self, key: str) -> bool:
        return bool(rospy.has_param(key))

    def _set_param(self, key: str, value: Any) -> None:
        rospy.set_param(key, value)

    def _delete_param(self, key: str) -> None:
        rospy.delete_param(key)

    # -- communication ----------------------------------------------------------------------------
    def _advertise(self, topic: str, msg_class: type, queue_size: int, latch: bool) -> Publisher:
        return RosPublisher(topic, msg_class, queue_size, latch)

    def _subscribe(self, topic: str, msg_class: type, callback: Callable[[Any], None],
                   queue_size: int) -> Subscriber:
        return RosSubscriber(topic, msg_class, callback, queue_size)

    def _advertise_service(self, name: str, srv_class: type, handler: Callable[[Any], Any]) -> ServiceServer:
        return RosServiceServer(name, srv_class, handler)

    def _action_server(self, name: str, action_class: type, goal_cb: Callable[[ServerGoalHandle], None],
                       cancel_cb: Optional[Callable[[ServerGoalHandle], None]]) -> ActionServer:
        return RosActionServer(name, action_class, goal_cb, cancel_cb)
