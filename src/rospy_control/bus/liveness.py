"""The liveness policy of a bus peer: what excuses a cycle in which the peer did not run.

A channel on real hardware has none: when a device does not answer, the device (or its wiring) is at
fault.  A peer that shares the host with the driver -- a peer such as the simulator, in this process
or another -- may not be scheduled for 100-250 ms on a busy machine; its silence is then the host's
doing, not the devices'.  Such a peer hands the channel a :class:`LivenessPolicy` (through the bus
override it is opened with, :class:`~rospy_control.bus.spec.BusSpec`) and the channel asks it at the
end of every on-time cycle before it counts a missing reply against a unit:

* ``stalled(since, now, sent) -> bool``: True when the peer did not run at some time in
  ``[since, now]`` (the cycle's start and end, ``time.perf_counter`` seconds), had by ``now`` not yet
  taken the frame sent at ``sent`` (the cycle's last request that awaits a reply; None: none was
  sent), or held back a reply past its due time.  The cycle is then excused like a late bus thread
  (``peer_stalls``, ``excused_cycles``) -- except that, if frames of some unit did arrive, a unit
  from which nothing arrived for twice its detection time is still silent on its own;
* ``last_drop() -> float``: the perf_counter time at which the peer last dropped frames unanswered
  because the host left it too far behind (0.0: never).  A unit silent only since then is not
  blamed for it.

A peer that runs but does not answer still faults its devices; so does one that stopped showing signs
of life (the implementation decides when it is gone rather than starved).
"""
from __future__ import annotations

from typing import Optional, Protocol

__all__ = ["LivenessPolicy"]


class LivenessPolicy(Protocol):
    """What a channel asks its peer before it blames a unit (see the module docstring)."""

    def stalled(self, since: float, now: float, sent: Optional[float] = None) -> bool:
        """True if the peer's silence in ``[since, now]`` is the host's doing."""
        ...  # pragma: no cover

    def last_drop(self) -> float:
        """perf_counter time at which the peer last dropped frames unanswered (0.0: never)."""
        ...  # pragma: no cover
