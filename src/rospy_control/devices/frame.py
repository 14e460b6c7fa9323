"""The one frame type the pure codecs return: an id, its format and the payload (no python-can needed).

A channel turns a :class:`Frame` into a ``can.Message(arbitration_id=f.arbitration_id,
is_extended_id=f.is_extended_id, data=f.data)``; :func:`to_message` does exactly that for callers that
have python-can at hand (the simulators, the tests).
"""
from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["Frame", "to_message"]


class Frame(NamedTuple):
    """One CAN data frame: ``arbitration_id`` (11 or 29 bit), ``data`` (0-8 bytes), ``is_extended_id``."""

    arbitration_id: int
    data: bytes
    is_extended_id: bool = False

    def __str__(self) -> str:  # candump notation, as the docs and test vectors write frames
        width = 8 if self.is_extended_id else 3
        return f"{self.arbitration_id:0{width}X}#{self.data.hex().upper()}"


def to_message(frame: Frame) -> Any:
    """The python-can message of ``frame`` (imports python-can on first use)."""
    import can
    return can.Message(arbitration_id=frame.arbitration_id, is_extended_id=frame.is_extended_id,
                       data=frame.data)
