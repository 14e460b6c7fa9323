"""Helpers shared by the controllers: required params, message stamps, publish-rate keeping."""
from __future__ import annotations

import math
from typing import Any, List, Optional

from rospy_control.exceptions import ConfigError

__all__ = ["required_param", "joint_list_param", "to_stamp", "PublishRate"]

_MISSING = object()


def required_param(nh, key: str, kind: Optional[type] = None) -> Any:
    """Read ``key`` from ``nh``; :class:`ConfigError` naming the parameter when absent or mistyped.

    :param kind: ``float`` accepts ints too; ``str`` / ``list`` are checked with isinstance.
    """
    value = nh.get_param(key, _MISSING)
    where = nh.resolve_name(key)
    if value is _MISSING:
        raise ConfigError(f"Parameter '{key}' not set (looked for '{where}')", where)
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ConfigError(f"Parameter '{key}' must be a number, got {value!r}", where)
        return float(value)
    if kind is not None and not isinstance(value, kind):
        raise ConfigError(f"Parameter '{key}' must be a {kind.__name__}, got {value!r}", where)
    return value


def joint_list_param(nh, key: str = "joints") -> List[str]:
    """A required, non-empty list of joint names."""
    joints = required_param(nh, key, list)
    if not joints or not all(isinstance(j, str) and j for j in joints):
        raise ConfigError(f"Parameter '{key}' must be a non-empty list of joint names, got {joints!r}",
                          nh.resolve_name(key))
    return list(joints)


def to_stamp(time: float) -> Any:
    """``genpy.Time`` for a message header from float seconds (clamped at 0: ROS time is unsigned)."""
    import genpy
    return genpy.Time.from_sec(max(0.0, float(time)))


class PublishRate:
    """Publish-rate bookkeeping as ros_controllers do it.

    A message is due when ``last + 1/rate < time``; after a successful publish ``last`` advances by
    exactly ``1/rate`` (the average rate is kept; after a stall it catches up one message per cycle).
    A rate <= 0 (or NaN) never publishes.

    :param rate: publish rate in Hz.
    """

    __slots__ = ("rate", "period", "last")

    def __init__(self, rate: float) -> None:
        self.rate = float(rate)
        self.period = 1.0 / self.rate if self.rate > 0.0 and math.isfinite(self.rate) else math.inf
        self.last: Any = None

    @property
    def enabled(self) -> bool:
        return self.period != math.inf

    def reset(self, last: float) -> None:
        """Set the time of the "previous" publish."""
        self.last = float(last)

    def due(self, time: float) -> bool:
        return self.enabled and self.last is not None and self.last + self.period < time

    def published(self) -> None:
        """Advance by one period (call only when the publish was accepted)."""
        self.last += self.period
