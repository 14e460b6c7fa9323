"""The shared base of an actuator whose state streams: :class:`StreamedStateActuator`.

A device of this family sends its state by itself -- ODrive's cyclic encoder estimates and heartbeat,
CiA 402's PDOs and heartbeat -- and the driver sends it one command frame per cycle without a reply to
wait for.  What the family shares, beside the command side of every actuator
(:class:`~.commanded.CommandedActuator`: the commands, the watchdog, the step cap, the fault life cycle):

* each stream of frames the device sends by itself is a :class:`StreamWatch`, started when the unit
  is activated and told when a frame of it arrives;
* one rule judges a stream lost (:meth:`StreamWatch.end_cycle`): its silence is counted over the cycles
  the host ran on time only, a cycle counts as a miss when the silence exceeds the stream's period plus
  one cycle, and the stream is lost after ``misses`` consecutive misses once the silence reached its
  ``limit``.  A cycle the host ran late neither adds silence nor counts, and frames that queued up
  meanwhile are consumed at the start of the next cycle, so a late host never looks like a silent
  device.  The request/reply devices are judged by the same rule on their replies
  (:meth:`~rospy_control.devices.CanUnit.judge`: ``N`` on-time misses and ``fault_timeout``).

A protocol keeps only what differs: which streams it watches with which period and limit, how its
frames become state, and its start-up.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

from rospy_control.devices.commanded import CommandedActuator

__all__ = ["StreamWatch", "StreamedStateActuator"]


class StreamWatch:
    """One stream of frames a device sends by itself, and its silence (see the module docstring).

    :param what: the stream in messages ("heartbeat", "encoder estimates").
    :param period: how often the device sends it (s).
    :param limit: the silence after which it is lost (s).
    :param misses: the consecutive on-time cycles past the period it must also have missed (at least 1).
    """

    __slots__ = ("what", "period", "limit", "misses", "silence", "streak", "_last")

    def __init__(self, what: str, period: float, limit: float = math.inf, misses: int = 1) -> None:
        self.what = what
        self.period = period
        self.limit = limit
        self.misses = max(1, misses)
        #: seconds without a frame, counted over on-time cycles only
        self.silence = 0.0
        #: consecutive on-time cycles the stream was later than its period
        self.streak = 0
        self._last = 0.0

    def start(self, now: float) -> None:
        """(Re)start watching at ``now``: no silence yet."""
        self.silence = 0.0
        self.streak = 0
        self._last = now

    heard = start   # a frame of the stream arrived at ``now``

    def clear(self) -> None:
        """Forget the silence so far (the device just proved alive another way)."""
        self.silence = 0.0
        self.streak = 0

    def end_cycle(self, now: float, on_time: bool, cycle: float) -> bool:
        """Count the cycle that ends at ``now`` (``cycle``: the channel's period); True when the
        stream is lost."""
        if on_time:
            self.silence += now - self._last
            if self.silence > self.period + cycle:
                self.streak += 1
        self._last = now
        return on_time and self.streak >= self.misses and self.silence >= self.limit


class StreamedStateActuator(CommandedActuator):
    """Base of an actuator whose state arrives in frames it sends by itself (see the module docstring).

    A subclass makes its :class:`StreamWatch` objects, returns them from :meth:`streams`, calls
    ``heard(now)`` on one when a frame of its stream arrives and :meth:`lost_stream` once per cycle.
    """

    def streams(self) -> Tuple[StreamWatch, ...]:
        """The streams this device sends by itself."""
        return ()

    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        super().activate(now, enable, fault_timeout, period, command_timeout)
        for watch in self.streams():
            watch.start(now)

    def lost_stream(self, now: float, on_time: bool) -> Optional[StreamWatch]:
        """Count this cycle on every stream; the first one lost (None: all alive)."""
        lost = None
        for watch in self.streams():
            if watch.end_cycle(now, on_time, self._period) and lost is None:
                lost = watch
        return lost
