"""Logging for the ROS-free core.

Library modules call ``logger = get_logger(__name__)``.  The logger lives under ``rosout.``: when
the package runs inside a rospy node, rospy's handlers on the ``rosout`` logger send every record to
the console, ``/rosout`` and the log file; without ROS the records propagate to the root logger, so
pytest's ``caplog`` sees them.  No ``print`` in library code.

The control loop runs at hundreds of Hz, so anything that may log per cycle goes through
:class:`Throttle` (at most one record per period and key) or :class:`Once`.
"""
from __future__ import annotations

import logging
import time
from typing import Callable, Dict, Hashable

#: Level for per-frame traces, below DEBUG (python-can uses 9 the same way).
TRACE = 5
logging.addLevelName(TRACE, "TRACE")


def get_logger(name: str) -> logging.Logger:
    """Return the logger for module ``name``, placed under ``rosout.``."""
    return logging.getLogger("rosout." + name)


class Throttle:
    """Let a message through at most once per ``period`` seconds per key.

    :param period: minimum seconds between two records with the same key.
    :param clock: monotonic clock, injectable for tests.
    """

    def __init__(self, period: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.period = period
        self._clock = clock
        self._last: Dict[Hashable, float] = {}

    def ready(self, key: Hashable = None) -> bool:
        """True if a record for ``key`` may be emitted now (and remember that it was)."""
        now = self._clock()
        last = self._last.get(key)
        if last is not None and now - last < self.period:
            return False
        self._last[key] = now
        return True


class Once:
    """Let a message through once per key."""

    def __init__(self) -> None:
        self._seen: set = set()

    def ready(self, key: Hashable = None) -> bool:
        """True the first time ``key`` is seen."""
        if key in self._seen:
            return False
        self._seen.add(key)
        return True
