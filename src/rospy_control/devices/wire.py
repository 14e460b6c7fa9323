"""What a protocol puts on the wire: frame sizes and per-protocol traffic, for the bus-load estimate.

Request/reply protocols (MIT, DaMiao, CubeMars V3) cost a fixed number of frames per control cycle;
ODrive's feedback is cyclic at the device's own rates whatever the control rate.  :class:`Traffic`
holds both parts, so ``load = (bits_per_cycle * rate + bits_per_second) / bitrate``.  Pure, no I/O.
"""
from __future__ import annotations

from typing import NamedTuple, Tuple

__all__ = ["frame_bits", "Traffic"]


def frame_bits(dlc: int, extended: bool = False) -> int:
    """Worst-case bits on the wire of one classic CAN data frame incl. stuffing and interframe space
    (the same count as ``rospy_control.devices.unit.frame_bits``)."""
    if extended:
        return 67 + 8 * dlc + (54 + 8 * dlc - 1) // 4
    return 47 + 8 * dlc + (34 + 8 * dlc - 1) // 4


class Traffic(NamedTuple):
    """The bus traffic of one device: ``per_cycle`` frames ``(dlc, extended)`` sent or answered every
    control cycle, plus ``bits_per_second`` of cyclic frames the device sends on its own."""

    per_cycle: Tuple[Tuple[int, bool], ...] = ()
    bits_per_second: float = 0.0

    def bits_per_cycle(self) -> int:
        return sum(frame_bits(dlc, ext) for dlc, ext in self.per_cycle)

    def load(self, rate: float, bitrate: float) -> float:
        """Fraction of ``bitrate`` used at control ``rate`` (Hz)."""
        return (self.bits_per_cycle() * rate + self.bits_per_second) / bitrate

    def max_rate(self, bitrate: float, load: float = 1.0) -> float:
        """Highest control rate that keeps this device's share at ``load`` (inf: no per-cycle frames)."""
        per = self.bits_per_cycle()
        room = load * bitrate - self.bits_per_second
        if per == 0:
            return float("inf") if room >= 0 else 0.0
        return max(0.0, room / per)
