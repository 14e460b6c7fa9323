"""Real-time threads only enqueue log records; a thread of its own emits them.

Under rospy, a ``logging`` record goes through rospy's handlers: the console (a blocking write to
stdout/stderr), the log file (a disk write) and ``/rosout`` (a publisher).  A stdout piped into a
slow terminal, a full disk or a busy rosout would then stall the bus or control thread inside
``logger.warning``, and the stall would be reported as the host's.

:class:`LogQueue` gives the real-time threads a :class:`logging.handlers.QueueHandler` instead: a
record is formatted lazily and put on an unbounded :class:`queue.SimpleQueue` (a C-level append, no
lock shared with I/O), and the thread ``rospy_control.log.<logger>`` hands it to the handlers that
were on the logger before (:class:`logging.handlers.QueueListener`, ``respect_handler_level``).  Only
the records of the real-time threads take that path: the logger's handlers are replaced by one
router that sends a record whose ``threadName`` starts with one of ``thread_names`` to the queue and
any other straight to the original handlers, so each record is emitted exactly once, in order per
thread.

Typical use (the driver node, after ``rospy.init_node``)::

    log_queue = install_log_queue()   # the control loop's and the bus threads' records
    ...
    log_queue.stop()      # at shutdown, after the threads stopped: flushes what is queued
"""
from __future__ import annotations

import logging
import logging.handlers
import queue
from typing import List, Optional, Sequence

__all__ = ["LogQueue", "LogQueues", "install_log_queue", "RT_THREADS"]

#: Name prefixes of the package's real-time threads: the control loop, the middleware's bus (channel)
#: threads and the in-process simulated firmware.
RT_THREADS = ("rospy_control.control_loop", "rospy_control.channel.", "rospy_control.sim.")


class _QueueHandler(logging.handlers.QueueHandler):
    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        # Format the message now (the arguments may change after the call) but keep exc_info for
        # the handlers, which format tracebacks themselves; no other work on the real-time thread.
        record.msg = record.getMessage()
        record.args = None
        return record


class _Router(logging.Handler):
    """Stands in for a logger's handlers: records of the real-time threads go to the queue, the others
    straight to the original handlers.  Takes no lock of its own (a non-real-time thread blocked in a
    slow handler must not hold up a real-time one here)."""

    def __init__(self, prefixes: Sequence[str], queue_handler: logging.Handler,
                 handlers: Sequence[logging.Handler]) -> None:
        super().__init__()
        self.prefixes = tuple(prefixes)
        self.queue_handler = queue_handler
        self.handlers = list(handlers)

    def handle(self, record: logging.LogRecord) -> bool:
        self.emit(record)
        return True

    def emit(self, record: logging.LogRecord) -> None:
        if (record.threadName or "").startswith(self.prefixes):
            self.queue_handler.handle(record)
            return
        for handler in self.handlers:
            if record.levelno >= handler.level:
                handler.handle(record)


class LogQueue:
    """Route the records of ``thread_names`` on ``logger`` through a queue (see the module docstring).

    :param logger: the logger whose handlers are moved behind the queue (default: the root logger).
    :param thread_names: thread-name prefixes whose records are queued.
    """

    def __init__(self, logger: Optional[logging.Logger] = None,
                 thread_names: Sequence[str] = RT_THREADS) -> None:
        self.logger = logger if logger is not None else logging.getLogger()
        self.queue: "queue.SimpleQueue[logging.LogRecord]" = queue.SimpleQueue()
        self.handlers: List[logging.Handler] = list(self.logger.handlers)
        self.router = _Router(thread_names, _QueueHandler(self.queue), self.handlers)
        self.listener = logging.handlers.QueueListener(self.queue, *self.handlers,
                                                       respect_handler_level=True)
        self._started = False

    def start(self) -> "LogQueue":
        """Install: the logger's handlers are replaced by the router (idempotent)."""
        if self._started:
            return self
        self._started = True
        for handler in self.handlers:
            self.logger.removeHandler(handler)
        self.logger.addHandler(self.router)
        self.listener.start()
        thread = getattr(self.listener, "_thread", None)
        if thread is not None:
            thread.name = "rospy_control.log." + (self.logger.name or "root")
        return self

    def stop(self) -> None:
        """Emit what is queued, then put the original handlers back (idempotent)."""
        if not self._started:
            return
        self._started = False
        self.logger.removeHandler(self.router)
        for handler in self.handlers:
            self.logger.addHandler(handler)
        self.listener.stop()  # processes the records still queued


class LogQueues:
    """Several :class:`LogQueue` stopped together."""

    def __init__(self, queues: Sequence[LogQueue]) -> None:
        self.queues = list(queues)

    def stop(self) -> None:
        for q in self.queues:
            q.stop()


def install_log_queue(thread_names: Sequence[str] = RT_THREADS,
                      loggers: Optional[Sequence[logging.Logger]] = None) -> LogQueues:
    """A started :class:`LogQueue` for each of ``loggers`` that has handlers (default: the root
    logger and rospy's ``rosout`` logger, where rospy puts its console, file and ``/rosout``
    handlers; a record goes through the queue of each logger it would have been emitted by)."""
    if loggers is None:
        loggers = [logging.getLogger(), logging.getLogger("rosout")]
    return LogQueues([LogQueue(lg, thread_names).start() for lg in loggers if lg.handlers])
