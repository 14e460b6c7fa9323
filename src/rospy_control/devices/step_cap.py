"""The position-step cap of every actuator protocol: how far one frame's position target may move from
the previous one (``max_position_step``, rad; none by default).

The last position sent is tracked also while no cap is set, so a cap set while commands flow starts
from the frame before.  A position target after none (first enable, a fault, another mode) starts from
the measured position: the motor is there, whatever was commanded before it went limp.

A protocol whose frames carry the position as a field of ``resolution`` rad caps in whole field steps,
never above the request, and applies the cap to positions half a step shorter, so that after the
codec's rounding (or truncation) a frame's field moves at most the whole steps of the cap.
"""
from __future__ import annotations

from typing import Optional

__all__ = ["PositionStepCap"]


class PositionStepCap:
    """One motor's cap (set from any thread, applied by the channel thread).

    :param owner: the motor's name, for errors.
    :param resolution: rad per step of the frame's position field (0: not quantised).
    """

    def __init__(self, owner: str, resolution: float = 0.0) -> None:
        self.owner = owner
        self.resolution = resolution
        #: the cap (rad), None: no cap
        self.step: Optional[float] = None
        #: the cap applied to positions before encoding (see the module docstring)
        self.wire = 0.0
        #: the last position target sent, None after none
        self.last: Optional[float] = None
        #: frames whose position the cap moved
        self.limited = 0

    def set(self, step: Optional[float]) -> None:
        """:raises ValueError: ``step`` is not > 0 (0 or None: no cap)."""
        if not step:
            self.step = None
            return
        if not step > 0.0:
            raise ValueError(f"motor '{self.owner}': max position step must be > 0, got {step!r}")
        q = self.resolution
        if q > 0.0:
            n = max(1, int(step / q))
            self.wire = (n - 0.5) * q  # first: the channel thread reads it once step is set
            self.step = n * q
        else:
            self.wire = float(step)
            self.step = float(step)

    def forget(self) -> None:
        """The next position target comes after none (not a position target, a fault, an enable)."""
        self.last = None

    def apply(self, position: float, measured: Optional[float]) -> float:
        """The position target to send for ``position``; ``measured``: where the motor is (device
        side; None before a reply), the start after none."""
        p = position
        if self.step is not None:
            last = self.last
            if last is None:
                last = measured
            if last is None:
                self.last = p
                return p
            step = self.wire
            if p > last + step:
                p = last + step
            elif p < last - step:
                p = last - step
            if p != position:
                self.limited += 1
        self.last = p
        return p
