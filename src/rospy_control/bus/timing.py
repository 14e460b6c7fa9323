"""Host-lateness judgement of a channel's cycles (pure: no I/O, no clock of its own).

The channel's read/write thread runs on a non-real-time host: a ``sleep(1 ms)`` wakes late by a few
ms now and then, and the whole process is sometimes descheduled for a few hundred ms.  A reply that
did not arrive in such a cycle says nothing about the device: the thread (and, in simulation, the
firmware in the same process) was not running.  :class:`CycleTiming` judges every cycle from four
times the channel measures and decides whether the units may be blamed for what is missing:

``scheduled``
    when the cycle should have started (absolute schedule, re-anchored after an overrun);
``start``
    when the thread actually started it (after its sleep);
``end``
    when the collect phase ended (all awaited replies in, or the reply window closed).

Rules (the thresholds are attributes, computed from the period):

* **late**: ``start - scheduled > late_after``, ``late_after = max(period / 2, 2 ms)``.  Half a
  period is the classic definition; the 2 ms floor keeps fast channels (1 kHz) from calling the
  ordinary wake-up jitter of a desktop kernel (p99 of a few ms) late.
* **stretched**: ``end - start > window + max(period, 5 ms)``: the collect phase ran far past its
  reply window, so the thread was descheduled while it waited (a reply may even be sitting in the
  receive queue).
* **stall**: the host held the thread up by ``>= 20 ms`` in one cycle, measured as
  ``max(0, start - scheduled) + max(0, end - start - window)`` (late wake-up plus collect phase beyond
  its window).  Stalls are counted, the longest is kept with its wall-clock time; the channel logs
  them (throttled) as a host problem, never as a hardware fault.
* A cycle that is stretched, or late by a stall, is **not on time**: unanswered requests of that cycle
  neither count as misses nor end a unit's miss streak (``judge`` returns False).  A cycle that woke
  a few ms late but then sent its requests and waited its whole window is judged as usual: the
  lateness came before the requests went out, so it says nothing about the replies, and on a busy
  host most cycles wake that late -- excusing them would let a silent device go unnoticed for as
  long as the load lasts.  (A simulated firmware starved along with the thread is excused by its
  own sign of life, see :mod:`rospy_control.bus.liveness`.)
"""
from __future__ import annotations

import time
from typing import Callable, Optional

__all__ = ["CycleTiming", "late_threshold", "STALL_THRESHOLD"]

#: a cycle held up by the host at least this long (seconds) is a stall
STALL_THRESHOLD = 0.020
#: late wake-up floor (seconds), see :func:`late_threshold`
LATE_FLOOR = 0.002
#: stretched-collect margin floor (seconds)
STRETCH_FLOOR = 0.005


def late_threshold(period: float) -> float:
    """Seconds after its scheduled time from which a cycle start counts as late."""
    return max(0.5 * period, LATE_FLOOR)


class CycleTiming:
    """Per-channel judge and statistics of host lateness (written by one thread, read by any).

    :param period: nominal cycle period (s).
    :param window: reply window (s), the longest the collect phase waits.
    :param wall_clock: wall clock for the stall time stamps (``time.time``).
    """

    __slots__ = ("period", "window", "late_after", "stretch_after", "stall_threshold", "_wall",
                 "late_cycles", "stretched_cycles", "excused_cycles", "stalls", "longest_stall",
                 "longest_stall_time", "last_stall", "last_stall_time", "stalled", "lateness", "overtime")

    def __init__(self, period: float, window: float, wall_clock: Callable[[], float] = time.time) -> None:
        self.period = period
        self.window = window
        self.late_after = late_threshold(period)
        self.stretch_after = window + max(period, STRETCH_FLOOR)
        self.stall_threshold = STALL_THRESHOLD
        self._wall = wall_clock
        self.late_cycles = 0
        self.stretched_cycles = 0
        self.excused_cycles = 0
        self.stalls = 0
        #: seconds
        self.longest_stall = 0.0
        self.longest_stall_time: Optional[float] = None
        self.last_stall = 0.0
        self.last_stall_time: Optional[float] = None
        #: the last judged cycle was a stall (the channel reads it to log)
        self.stalled = False
        #: of the last judged cycle: late wake-up (s) and collect time beyond the window (s)
        self.lateness = 0.0
        self.overtime = 0.0

    def judge(self, scheduled: float, start: float, end: float) -> bool:
        """Record one cycle; True if it ran on time (its missing replies may be blamed on the units)."""
        lateness = start - scheduled
        busy = end - start
        late = lateness > self.late_after
        stretched = busy > self.stretch_after
        self.lateness = lateness if lateness > 0.0 else 0.0
        over = busy - self.window
        self.overtime = over if over > 0.0 else 0.0
        held = self.lateness + self.overtime
        if held >= self.stall_threshold:
            self.stalled = True
            self.stalls += 1
            now = self._wall()
            self.last_stall = held
            self.last_stall_time = now
            if held > self.longest_stall:
                self.longest_stall = held
                self.longest_stall_time = now
        else:
            self.stalled = False
        if late:
            self.late_cycles += 1
        if stretched:
            self.stretched_cycles += 1
        if stretched or self.stalled:
            self.excused_cycles += 1
            return False
        return True

    def statistics(self) -> dict:
        """Counters (durations in ms, times as ``time.time()`` or None)."""
        return {
            "late_cycles": self.late_cycles,
            "stretched_cycles": self.stretched_cycles,
            "excused_cycles": self.excused_cycles,
            "stalls": self.stalls,
            "longest_stall": 1000.0 * self.longest_stall,
            "longest_stall_time": self.longest_stall_time,
            "last_stall": 1000.0 * self.last_stall,
            "last_stall_time": self.last_stall_time,
            "late_threshold": 1000.0 * self.late_after,
        }
