"""The homing mode of the simulated CiA 402 drive (CiA 402-2 homing mode, mode of operation 6).

The drive offers these methods of 0x6098 (a write of another one is aborted with 0x06090030, value
range exceeded, as a drive that lacks it does):

* **35 and 37**, homing on the current position: the home position is where the joint is, at once;
* **17 / 18**, the negative / positive limit switch without the index pulse: moves towards the switch
  at 0x6099:1 until it closes, back at 0x6099:2 until it opens; the home position is where it opened.
  The switches are at ``<simulation limit_switch_min="..." limit_switch_max="...">`` (rad, the
  joint's positions); without one the method ends at once in a homing error (no switch wired);
* **33 / 34**, the index pulse only, searched in the negative / positive direction at 0x6099:2: the
  index comes once per motor revolution (at joint positions ``k * 2 pi / gear_ratio``); the home
  position is the index.

The controlword's bit 4 starts it on its rising edge (in OPERATION ENABLED with 0x6061 = 6) and halts
it when low.  The statusword bits 13 / 12 / 10 say 0/0/0 in progress, 0/0/1 interrupted or not
started, 0/1/1 completed, 1/0/1 error.  Once completed, the position actual value is counted from the
new zero: the home position plus the home offset 0x607C (CiA 402-2), so the home position reads
``-offset``; the new zero lasts until the simulator stops.  The speeds are reached at once (0x609A
is kept, not used).
"""
from __future__ import annotations

import math
from typing import Callable, Optional

from rospy_control.devices.cia402 import codec as co

__all__ = ["HOMING_MODE", "METHODS", "SimulatedHoming", "add_homing_objects"]

HOMING_MODE = 6
#: the methods of 0x6098 this simulated drive has
METHODS = (17, 18, 33, 34, 35, 37)
_ATTAINED, _ERROR, _REACHED = 1 << 12, 1 << 13, 1 << 10


def add_homing_objects(add: Callable[..., None]) -> None:
    """The homing objects of the object dictionary (``add(index, sub, dtype, access, value)``)."""
    add(0x6098, 0, "INTEGER8", "rw", 35)
    add(0x607C, 0, "INTEGER32", "rw", 0)
    add(0x6099, 0, "UNSIGNED8", "ro", 2)
    add(0x6099, 1, "UNSIGNED32", "rw", 0)
    add(0x6099, 2, "UNSIGNED32", "rw", 0)
    add(0x609A, 0, "UNSIGNED32", "rw", 0)


class SimulatedHoming:
    """The homing of one simulated drive; positions in the joint model's coordinates (``q``).

    :ivar shift: what the drive adds to ``q`` to report its position (rad; 0 until a homing completes)
    """

    def __init__(self, scale: co.UnitScale) -> None:
        self.scale = scale
        self.shift = 0.0
        self.limit_switch_min: Optional[float] = None
        self.limit_switch_max: Optional[float] = None
        #: idle, search, release, index, done, halted, error
        self.phase = "idle"
        self.method = 0
        self._speed = 0.0
        self._hold: Optional[float] = None
        self._index_from = 0.0
        self._slow = 0.0
        self.completed = 0

    def start(self, method: int, switch_speed: int, zero_speed: int, offset_counts: int, q: float) -> None:
        """The rising edge of controlword bit 4 (speeds in increments/s, the home offset 0x607C)."""
        s = self.scale
        fast = abs(s.counts_per_s_to_rad_per_s(switch_speed))
        slow = abs(s.counts_per_s_to_rad_per_s(zero_speed))
        self.method = method
        self._hold = None
        if method in (35, 37):
            self._home(q, q, offset_counts)
        elif method in (17, 18):
            switch = self.limit_switch_min if method == 17 else self.limit_switch_max
            if switch is None or fast <= 0.0 or slow <= 0.0:
                self._fail(q)
                return
            self.phase = "search"
            self._speed = -fast if method == 17 else fast
            self._slow = slow
        elif method in (33, 34):
            if slow <= 0.0:
                self._fail(q)
                return
            self.phase = "index"
            self._speed = -slow if method == 33 else slow
            self._index_from = q
        else:
            self._fail(q)

    def halt(self, q: float) -> None:
        """Controlword bit 4 low, or the mode left, while it runs."""
        if self.phase in ("search", "release", "index"):
            self.phase = "halted"
            self._hold = q

    def update(self, q: float, offset_counts: int) -> None:
        """After each integration step: the switch and index events at ``q``."""
        ph = self.phase
        if ph == "search":
            low = self.method == 17
            lim = self.limit_switch_min if low else self.limit_switch_max
            assert lim is not None
            if (q <= lim) if low else (q >= lim):
                self.phase = "release"
                self._speed = self._slow if low else -self._slow
        elif ph == "release":
            low = self.method == 17
            lim = self.limit_switch_min if low else self.limit_switch_max
            assert lim is not None
            if (q > lim) if low else (q < lim):
                self._home(q, q, offset_counts)
        elif ph == "index":
            period = 2.0 * math.pi / abs(self.scale.gear_ratio)
            a, b = sorted((self._index_from, q))
            k = math.floor(b / period)
            index = k * period
            if a < index <= b and index != self._index_from:
                self._home(index, q, offset_counts)

    def _home(self, home: float, q: float, offset_counts: int = 0) -> None:
        self.shift = -home - self.scale.counts_to_rad(offset_counts)
        self.phase = "done"
        self._hold = q
        self.completed += 1

    def _fail(self, q: float) -> None:
        self.phase = "error"
        self._hold = q

    def velocity(self) -> Optional[float]:
        """The velocity the drive runs at while it searches, None while it holds."""
        return self._speed if self.phase in ("search", "release", "index") else None

    def hold(self, q: float) -> float:
        """Where the drive holds when it does not search (it stopped there)."""
        if self._hold is None:
            self._hold = q
        return self._hold

    def statusword_bits(self, v: float) -> int:
        ph = self.phase
        if ph == "done":
            return _ATTAINED | _REACHED
        if ph == "error":
            return _ERROR | (_REACHED if abs(v) < 1e-2 else 0)
        if ph in ("search", "release", "index"):
            return 0
        return _REACHED     # idle or halted: interrupted or not started

    def leave(self) -> None:
        """The drive left homing mode (or OPERATION ENABLED): a running homing stops; the result stays
        in the statusword only while the mode is 6."""
        if self.phase in ("search", "release", "index"):
            self.phase = "halted"
        self._hold = None
