"""The cap on the position step between two consecutive MIT command frames of one motor (on the wire).

A motor must never see a position set-point jump that its joint could not follow: the RobotHW caps
each command by velocity x period, the control loop bounds the period after a host stall, but the
guarantee belongs where the frames are made.  Two control cycles can land between two bus frames
(the bus thread held up while the control loop ran), a hold after an abort starts from the measured
position, a controller can have a bug.  :class:`PositionStepLimiter` works on the frame itself
(integer arithmetic on its 16-bit position field), in the channel thread, for every frame.
"""
from __future__ import annotations

from typing import Optional

from rospy_control.middleware.protocols import mit

__all__ = ["PositionStepLimiter"]


class PositionStepLimiter:
    """Caps the step of the position field between consecutive position-holding command frames.

    Only frames whose kp is above its minimum form a chain; :meth:`restart` (enter-motor-mode, exit,
    set-zero) or a kp = 0 frame starts a new one, whose first frame is free.

    :param limits: the motor's MIT ranges (the step is quantised to the position field).
    """

    __slots__ = ("_quantum", "_max", "_last", "step", "limited_frames")

    def __init__(self, limits: mit.MitLimits) -> None:
        self._quantum = (limits.p_max - limits.p_min) / 65535.0
        self._max = 0        # in position quanta, 0 = no cap
        self._last = -1      # position field of the previous frame of the chain, -1 = none
        #: the cap in rad after quantisation (never above the requested one), None = no cap
        self.step: Optional[float] = None
        #: frames whose position step was capped
        self.limited_frames = 0

    @property
    def active(self) -> bool:
        return self._max > 0

    def set(self, step: Optional[float], owner: str = "") -> None:
        """Cap at ``step`` (rad, > 0); None or 0 removes the cap.  :raises ValueError: negative."""
        if not step:
            self._max = 0
            self.step = None
            return
        if not step > 0.0:
            raise ValueError(f"motor '{owner}': max position step must be > 0, got {step!r}")
        self._max = max(1, int(step / self._quantum))
        self.step = self._max * self._quantum

    def restart(self) -> None:
        """The next position frame starts a new chain (after enter/exit-motor-mode or set-zero)."""
        self._last = -1

    def apply(self, data: bytes) -> bytes:
        """``data`` with its position field moved at most one step from the previous frame's."""
        w = int.from_bytes(data, "big")
        if not (w >> 24) & 0xFFF:  # kp at its minimum: not a position-holding command
            self._last = -1
            return data
        pi = w >> 48
        last = self._last
        if last >= 0:
            lim = self._max
            if pi > last + lim:
                pi = last + lim
            elif pi < last - lim:
                pi = last - lim
            else:
                lim = 0
            if lim:
                self.limited_frames += 1
                data = ((w & 0xFFFFFFFFFFFF) | (pi << 48)).to_bytes(8, "big")
        self._last = pi
        return data
