"""Real-time threads only enqueue log records; a thread of its own emits them.

Under rospy, a ``logging`` record goes through rospy's handlers: the console (a blocking write to
stdout/stderr), the log file (a disk write) and ``/rosout`` (a publisher).  A stdout piped into a
slow terminal, a full disk or a busy rosout would then stall the bus or control thread inside
``logger.warning``, and the stall would be reported as the host's.

:class:`LogQueue` gives the real-time threads a :class:`logging.handlers.QueueHandler` instead: a
record is formatted lazily and put on an unbounded :class:`queue.SimpleQueue` (a C-level append, no
lock shared with I/O), and the thread ``rospy_control.log`` hands it to the handlers that were on the
logger before (:class:`logging.handlers.QueueListener`, ``respect_handler_level``).  Only the records
of the real-time threads take that path: a filter on the queue handler lets through records whose
``threadName`` is one of ``thread_names`` (prefixes), and a filter on the original handlers drops
those same records there, so each record is emitted exactly once, in order per thread.

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

#: Name prefixes of the package's real-time threads: the control loop and the middleware's bus
#: (channel) threads.
RT_THREADS = ("rospy_control.control_loop", "rospy_control.channel.")


class _FromThreads(logging.Filter):
    def __init__(self, prefixes: Sequence[str], keep: bool) -> None:
        super().__init__()
        self.prefixes = tuple(prefixes)
        self.keep = keep

    def filter(self, record: logging.LogRecord) -> bool:
        ours = (record.threadName or "").startswith(self.prefixes)
        return ours if self.keep else not ours


class _QueueHandler(logging.handlers.QueueHandler):
    def prepare(self, record: logging.LogRecord) -> logging.LogRecord:
        # Format the message now (the arguments may change after the call) but keep exc_info for
        # the handlers, which format tracebacks themselves; no other work on the real-time thread.
        record.msg = record.getMessage()
        record.args = None
        return record


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
        self._skip = _FromThreads(thread_names, keep=False)
        self.handler = _QueueHandler(self.queue)
        self.handler.addFilter(_FromThreads(thread_names, keep=True))
        self.listener = logging.handlers.QueueListener(self.queue, *self.handlers,
                                                       respect_handler_level=True)
        self._started = False

    def start(self) -> "LogQueue":
        """Install: original handlers skip the real-time threads' records, the queue takes them."""
        if self._started:
            return self
        self._started = True
        for handler in self.handlers:
            handler.addFilter(self._skip)
        self.logger.addHandler(self.handler)
        self.listener.start()
        thread = getattr(self.listener, "_thread", None)
        if thread is not None:
            thread.name = "rospy_control.log." + (self.logger.name or "root")
        return self

    def stop(self) -> None:
        """Emit what is queued, then restore the handlers (idempotent)."""
        if not self._started:
            return
        self._started = False
        self.logger.removeHandler(self.handler)
        self.listener.stop()  # processes the records still queued
        for handler in self.handlers:
            handler.removeFilter(self._skip)


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
