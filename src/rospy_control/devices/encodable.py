"""What a protocol can carry: checks of configured gains, ranges and limits against the wire format.

A value outside what a protocol can encode is a start-up error, never a silent clamp in every frame
(the MIT codec clamps each field into its range: a configured ``kd=9`` would go out as 5 without a
word).  These helpers are protocol-agnostic; each protocol module names its own ranges
(:data:`rospy_control.devices.damiao.codec.MIT_KP_RANGE`, ...).

Pure functions, no I/O.  :func:`encodable_error` returns the message (or None) for callers that
collect every problem before they report; :func:`check_encodable` raises it.
"""
from __future__ import annotations

import math
from typing import Optional, Tuple

__all__ = ["EncodableRangeError", "encodable_error", "check_encodable", "check_mit_gains", "check_ordered",
           "int16_scaled_range"]


class EncodableRangeError(ValueError):
    """A configured value the device's protocol cannot carry.

    Attributes: ``attribute``, ``value``, ``low``, ``high`` (the encodable range, inclusive),
    ``protocol`` and ``unit_name`` (None when the caller did not say), for callers that re-word it.
    """

    def __init__(self, message: str, attribute: str, value: float, low: float, high: float,
                 protocol: str, unit_name: Optional[str]) -> None:
        super().__init__(message)
        self.attribute = attribute
        self.value = value
        self.low = low
        self.high = high
        self.protocol = protocol
        self.unit_name = unit_name


#: the lower bounds of the MIT frame's five fields (each ``<x>_min`` has its ``<x>_max``)
MIT_FIELD_MINIMA = ("p_min", "v_min", "kp_min", "kd_min", "t_min")


def check_ordered(ranges: object, minima: Tuple[str, ...] = MIT_FIELD_MINIMA) -> None:
    """Raise ValueError naming the first ``<x>_min`` of ``ranges`` not below its ``<x>_max``."""
    for lo_name in minima:
        hi_name = lo_name[:-3] + "max"
        lo, hi = getattr(ranges, lo_name), getattr(ranges, hi_name)
        if not lo < hi:
            raise ValueError(f"{lo_name}={lo!r} must be smaller than {hi_name}={hi!r}")


def _fmt(x: float) -> str:
    return repr(float(x)) if isinstance(x, float) else str(x)


def encodable_error(attribute: str, value: float, low: float, high: float, protocol: str,
                    unit_name: Optional[str] = None, units: str = "") -> Optional[str]:
    """The message for ``value`` outside ``[low, high]`` (or not a finite number), None when it fits.

    Example: ``unit 'shoulder_lift_motor': position_kd=9.0 is outside what MIT mode can encode
    (0.0 .. 5.0)``.
    """
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) \
        and low <= value <= high
    if ok:
        return None
    who = f"unit '{unit_name}': " if unit_name else ""
    u = f" {units}" if units else ""
    return (f"{who}{attribute}={_fmt(value)}{u} is outside what {protocol} can encode "
            f"({_fmt(low)} .. {_fmt(high)}{u})")


def check_encodable(attribute: str, value: float, low: float, high: float, protocol: str,
                    unit_name: Optional[str] = None, units: str = "") -> float:
    """Return ``value`` if it lies in ``[low, high]``.

    :raises EncodableRangeError: naming the unit (if given), the attribute, the value and the range.
    """
    msg = encodable_error(attribute, value, low, high, protocol, unit_name, units)
    if msg is not None:
        raise EncodableRangeError(msg, attribute, value, low, high, protocol, unit_name)
    return value


def check_mit_gains(kp: float, kd: float, kp_range: Tuple[float, float], kd_range: Tuple[float, float],
                    protocol: str = "MIT mode", unit_name: Optional[str] = None,
                    kp_attribute: str = "position_kp", kd_attribute: str = "position_kd") -> None:
    """Check an MIT-style (kp, kd) pair against the frame's fixed gain ranges.

    :raises EncodableRangeError: the first gain that does not fit.
    """
    check_encodable(kp_attribute, kp, kp_range[0], kp_range[1], protocol, unit_name, "N m/rad")
    check_encodable(kd_attribute, kd, kd_range[0], kd_range[1], protocol, unit_name, "N m s/rad")


def int16_scaled_range(scale: float) -> Tuple[float, float]:
    """The values an int16 field with factor ``scale`` carries: (-32768*scale, 32767*scale)."""
    return (-32768 * scale, 32767 * scale)
