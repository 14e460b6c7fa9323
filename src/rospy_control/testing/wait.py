"""Polling on a condition, for tests that watch real threads (middleware, robot_hw, publishers)."""
from __future__ import annotations

import time
from typing import Callable

__all__ = ["wait_until"]


def wait_until(predicate: Callable[[], bool], timeout: float = 2.0, step: float = 0.002) -> bool:
    """Poll ``predicate`` every ``step`` seconds until it holds or ``timeout`` (wall seconds) passed.

    Returns True as soon as it holds, else its value at the deadline: the caller asserts on the
    result, so a slow machine only ever makes a test wait longer, never assert a speed.
    """
    end = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() > end:
            return bool(predicate())
        time.sleep(step)
