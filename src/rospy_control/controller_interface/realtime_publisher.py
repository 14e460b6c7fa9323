"""Publishing from the control loop without blocking it (realtime_tools' ``RealtimePublisher``).

The control loop must never wait on rospy's ``Publisher.publish`` (it may serialize, take locks,
write to sockets).  :meth:`RealtimePublisher.try_publish` hands the message to a background thread
and returns at once; when the thread is still busy with the previous message (or the hand-off lock is
taken), the call returns ``False`` and the cycle is skipped -- exactly like realtime_tools'
``trylock()`` failing.  Controllers therefore advance their rate bookkeeping only when it returns
``True`` (``joint_state_controller`` does).

Ownership: after a successful :meth:`try_publish` the message belongs to the publisher thread; build
a fresh message per publish (or do not touch the old one again).

Synchronous mode: with ``synchronous=True`` there is no thread; :meth:`try_publish` publishes in the
caller's thread and never skips.  ``synchronous=None`` (default) takes the handle's
``SYNCHRONOUS_REALTIME_PUBLISH`` -- True for ``rospy_control.testing.InMemoryNodeHandle``, so unit tests are
deterministic, False for rospy.  Tests that exercise the threaded path pass ``synchronous=False``.

:meth:`shutdown` stops and joins the thread and unregisters the topic; it is idempotent and is called
by :meth:`NodeHandle.shutdown` of the handle the publisher was created with.
"""
from __future__ import annotations

import threading
from typing import Any, Optional

from rospy_control.controller_interface.node_handle import NodeHandle, Publisher
from rospy_control.log import Throttle, get_logger
from rospy_control.realtime import join_thread, start_thread

logger = get_logger(__name__)

__all__ = ["RealtimePublisher"]


class RealtimePublisher:
    """Non-blocking publisher for the control loop.

    :param nh: handle the topic is advertised through (it tracks this object).
    :param topic: topic name, resolved by ``nh``.
    :param msg_class: message class.
    :param queue_size: rospy queue size.
    :param latch: latch the last message.
    :param synchronous: publish in the caller's thread (see the module docstring).
    """

    #: Seconds :meth:`shutdown` waits for the thread to finish a publish in progress.
    JOIN_TIMEOUT = 2.0

    def __init__(self, nh: NodeHandle, topic: str, msg_class: type, queue_size: int = 1,
                 latch: bool = False, synchronous: Optional[bool] = None) -> None:
        self.publisher: Publisher = nh.advertise(topic, msg_class, queue_size, latch)
        self.topic = self.publisher.name or nh.resolve_name(topic)
        self.synchronous = nh.SYNCHRONOUS_REALTIME_PUBLISH if synchronous is None else bool(synchronous)
        self._cond = threading.Condition(threading.Lock())
        self._pending: Any = None
        self._busy = False
        self._running = True
        self._throttle = Throttle(5.0)
        self._thread: Optional[threading.Thread] = None
        if not self.synchronous:
            self._thread = start_thread(self._run, f"RealtimePublisher[{self.topic}]")
        nh.track(self)

    def try_publish(self, msg: Any) -> bool:
        """Hand ``msg`` over for publishing; ``False`` if busy (skip this cycle) or shut down.

        Never blocks (beyond a synchronous publish in synchronous mode).
        """
        if not self._running:
            return False
        if self.synchronous:
            self._publish(msg)
            return True
        if not self._cond.acquire(blocking=False):
            return False
        try:
            if self._busy or self._pending is not None:
                return False
            self._pending = msg
            self._cond.notify()
        finally:
            self._cond.release()
        return True

    def is_busy(self) -> bool:
        """True while a message is waiting or being published (a :meth:`try_publish` would fail)."""
        return self._busy or self._pending is not None

    def shutdown(self) -> None:
        """Stop the thread (finishing a publish in progress), then unregister the topic."""
        with self._cond:
            if not self._running:
                return
            self._running = False
            self._cond.notify_all()
        join_thread(self._thread, self.JOIN_TIMEOUT, "RealtimePublisher")  # logs one that did not stop
        self.publisher.unregister()

    def _publish(self, msg: Any) -> None:
        try:
            self.publisher.publish(msg)
        except Exception as err:  # noqa: BLE001 - a failed publish must not kill the loop or the thread
            if self._throttle.ready():
                logger.error("RealtimePublisher '%s': publish failed: %s", self.topic, err)

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._running and self._pending is None:
                    self._cond.wait()
                if not self._running:
                    return
                msg, self._pending = self._pending, None
                self._busy = True
            try:
                self._publish(msg)
            finally:
                with self._cond:
                    self._busy = False
