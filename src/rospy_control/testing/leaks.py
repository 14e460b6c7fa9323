"""The unit suite's leak check (``test/unit/conftest.py``): threads and virtual CAN channels a test
left behind.

A thread counts as leaked when it was not running before the test and is still alive after it, and
is either a non-daemon thread (it would keep the process alive) or one of the package's own threads,
daemon or not -- every thread the package starts is named ``rospy_control.<what>``
(:data:`rospy_control.realtime.THREAD_PREFIX`): the bus, control-loop and publisher threads are
daemon threads, and one that outlives its owner's ``stop()`` is exactly the bug to catch.  Threads
of other libraries that are daemons by design (python-can's, rospy's) are not ours to stop.
"""
from __future__ import annotations

import threading
import time
from typing import Collection, List, Set

from rospy_control.realtime import THREAD_PREFIX

__all__ = ["leaked_threads", "wait_for_no_leaked_threads"]


def leaked_threads(before: Collection[threading.Thread]) -> List[threading.Thread]:
    """Threads alive now that were not in ``before``: non-daemon ones and every ``rospy_control.*``."""
    known: Set[threading.Thread] = set(before)
    return [t for t in threading.enumerate()
            if t not in known and t.is_alive() and (not t.daemon or t.name.startswith(THREAD_PREFIX))]


def wait_for_no_leaked_threads(before: Collection[threading.Thread],
                               timeout: float = 2.0) -> List[threading.Thread]:
    """:func:`leaked_threads`, polled for up to ``timeout`` s (a thread told to stop may take a
    moment to end); what is left after that."""
    deadline = time.monotonic() + timeout
    while True:
        left = leaked_threads(before)
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.02)
