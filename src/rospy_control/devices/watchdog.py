"""The command watchdog of every actuator protocol: one timing rule, one state (channel thread).

A command is *new* when the command buffer's sequence number changed since the last cycle.  While no
new command comes, the time since the last one is summed cycle by cycle, each cycle counting at most
:attr:`CommandWatchdog.cap` (two periods): a host that ran late (a long cycle) does not make a caller's
command look stale, as a late cycle neither counts as a miss nor ends a streak of the liveness rule
(:mod:`rospy_control.bus.timing`).  The watchdog is *due* when that sum reached the channel's
``command_timeout`` after at least one command, unless the motor's ``watchdog_mode`` is ``none``.

What the motor then does (the *hold*: the commanded or the measured position, or damping) is the
protocol's, and so are the texts of its events; the state of the hold is kept here: :attr:`active`,
the ``watchdog_mode`` it was made for (:attr:`applied`), the hold command (:attr:`hold`) and whether it
is the hold after a fault recovery that ends without a watchdog event (:attr:`engaging`).
"""
from __future__ import annotations

from typing import Any, Optional

__all__ = ["CommandWatchdog"]


class CommandWatchdog:
    """Timing and state of one motor's command watchdog (read and written by the channel thread)."""

    def __init__(self) -> None:
        #: the channel's ``command_timeout`` (s; 0: off)
        self.timeout = 0.0
        #: what one cycle adds to :attr:`stale` at most (s): two periods
        self.cap = 0.02
        #: sequence number of the latest command seen
        self.seen = 0
        #: time without a new command, summed over cycles (s)
        self.stale = 0.0
        #: clock time of the latest cycle
        self.last = 0.0
        #: the hold is in force
        self.active = False
        #: the hold after a recovery (it ends without a watchdog event)
        self.engaging = False
        #: the ``watchdog_mode`` the hold was made for ("" when none is)
        self.applied = ""
        #: the hold command (the protocol's type)
        self.hold: Any = None

    def start(self, now: float, seq: int, period: Optional[float], timeout: float) -> None:
        """Activation: the channel's period and ``command_timeout``, and no hold."""
        self.timeout = timeout
        self.cap = 2.0 * (period if period else 0.01)
        self.reset(now, seq)

    def reset(self, now: float, seq: int) -> None:
        """From ``now`` on, the command numbered ``seq`` is the latest seen; no hold."""
        self.seen = seq
        self.stale = 0.0
        self.last = now
        self.active = False
        self.engaging = False

    def observe(self, now: float, seq: int) -> bool:
        """One cycle at ``now`` with the latest command numbered ``seq``: True if it is a new one
        (the caller ends its hold), else the cycle's time is added to :attr:`stale`."""
        new = seq != self.seen
        if new:
            self.seen = seq
            self.stale = 0.0
        else:
            dt = now - self.last
            self.stale += dt if dt < self.cap else self.cap
        self.last = now
        return new

    def due(self, seq: int, mode: str) -> bool:
        """The hold must start: a command came once, none for ``command_timeout``, and ``mode`` (the
        motor's ``watchdog_mode``) is not ``none``."""
        return bool(seq) and self.timeout > 0.0 and self.stale >= self.timeout and mode != "none"
