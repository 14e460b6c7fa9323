"""The middleware's fault / reset / watchdog event log (bounded, thread-safe, cheap to append).

Units append from the channel threads (a fault, a recovery, a watchdog hold), callers from theirs (a
reset request).  Readers poll :meth:`EventLog.since` with the last ``seq`` they saw.
"""
from __future__ import annotations

import itertools
import threading
import time
from collections import deque
from typing import List, NamedTuple

__all__ = ["FaultEvent", "EventLog", "EVENT_KINDS"]

#: kinds of :class:`FaultEvent`
EVENT_KINDS = ("fault", "reset_requested", "recovered", "reset_failed", "watchdog_hold", "watchdog_released")


class FaultEvent(NamedTuple):
    """One entry of the event log."""

    seq: int           #: 1, 2, 3, ... (per :class:`EventLog`, never reused)
    wall_time: float   #: ``time.time()`` when it was appended
    unit: str
    channel: str
    kind: str          #: one of :data:`EVENT_KINDS`
    message: str


class EventLog:
    """The last ``maxlen`` events.

    :meth:`append` takes a lock only around one ``deque.append`` (no I/O, nothing that waits), so the
    bus threads never block on a reader for longer than a copy of at most ``maxlen`` references.
    """

    def __init__(self, maxlen: int = 200) -> None:
        self._events: deque = deque(maxlen=maxlen)
        self._seq = itertools.count(1)
        self._lock = threading.Lock()

    def append(self, unit: str, channel: str, kind: str, message: str) -> None:
        with self._lock:
            self._events.append(FaultEvent(next(self._seq), time.time(), unit, channel or "", kind, message))

    def since(self, seq: int = 0) -> List[FaultEvent]:
        """Events with ``seq`` greater than ``seq``, oldest first."""
        with self._lock:
            events = list(self._events)
        return [e for e in events if e.seq > seq]

    def __len__(self) -> int:
        return len(self._events)
