"""rospy_control.realtime: how values, log records and lifetimes cross threads (ROS-free).

The package's threads -- the bus threads of the middleware, the control loop, the publisher threads,
``/joint_states`` and diagnostics -- share values with each other and with ROS's callback threads.
Every such hand-off goes through one of these, so that it is correct by construction rather than by
the order of attribute writes:

* :class:`RealtimeBuffer` -- ros_control's ``realtime_tools::RealtimeBuffer``: a single-writer cell
  holding one immutable value; a reader always gets a whole value, never half of one update and half
  of the next.  Its memory model is written once, in :mod:`rospy_control.realtime.buffer`.
* :func:`start_thread` -- every thread the package starts, daemon or not, is named
  ``rospy_control.<what>`` (:data:`THREAD_PREFIX`), so a leak check (the unit suite's) and a person
  reading ``py-spy dump`` can tell ours apart from rospy's or python-can's.
* :func:`stop_in_order` -- shutdown stops parts in order and stops *there* when a thread does not
  join, naming it (what comes after it would otherwise run against a thread still using the same
  resource).
* :class:`LogQueue` -- real-time threads only enqueue log records; a thread of its own formats and
  emits them (console, file, ``/rosout``), so a blocked stdout or disk never stalls a control cycle.
"""
from __future__ import annotations

from rospy_control.realtime.buffer import RealtimeBuffer
from rospy_control.realtime.log_queue import LogQueue, install_log_queue
from rospy_control.realtime.threads import (
    THREAD_PREFIX, ShutdownIncomplete, join_thread, package_threads, start_thread, stop_in_order, thread_name,
)

__all__ = ["RealtimeBuffer", "LogQueue", "install_log_queue", "THREAD_PREFIX", "ShutdownIncomplete",
           "join_thread", "package_threads", "start_thread", "stop_in_order", "thread_name"]
