"""A ``<channel>`` element read into its configuration record, and a channel built from the record:
the configuration side of :class:`.channel.CanChannel` (its one reader of the ``<channel>`` schema).
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

from rospy_control.bus.adapter import VALID_BITRATES
from rospy_control.hardware_config.document import (
    AttributeReader, ChannelInfo, non_negative, positive, to_float, to_int, to_str,
)
from rospy_control.hardware_config.records import ChannelConfig, UnitConfig, constructor_settings

__all__ = ["ChannelConfiguration"]


class ChannelConfiguration:
    """Class methods of a channel type: ``<channel>`` -> :class:`ChannelConfig` -> channel.  The
    channel class supplies the ``DEFAULT_*`` values and the constructor."""

    DEFAULT_RATE: float
    DEFAULT_COMMAND_TIMEOUT: float
    DEFAULT_BITRATE: int
    DEFAULT_MASTER_ID: int
    DEFAULT_REPLY_WINDOW: float
    DEFAULT_FAULT_TIMEOUT: float
    DEFAULT_MAX_BUS_LOAD: float

    @classmethod
    def from_info(cls, info: ChannelInfo, rate: Optional[float] = None,
                  command_timeout: Optional[float] = None) -> Any:
        """Build from ``<channel>``; ``rate`` / ``command_timeout`` are the ``<hardware>`` defaults."""
        return cls.from_config(cls.read_config(info, rate, command_timeout))

    @classmethod
    def read_config(cls, info: ChannelInfo, rate: Optional[float] = None,
                    command_timeout: Optional[float] = None,
                    units: Tuple[UnitConfig, ...] = ()) -> ChannelConfig:
        """The channel's configuration record (:mod:`rospy_control.hardware_config.records`), with the
        records of its ``units``."""
        settings = cls.read_settings(info, rate, command_timeout)
        return ChannelConfig(info.name, info.type, tuple(k.__name__ for k in cls.__mro__ if k is not object),
                             info.element, constructor_settings(cls, settings), tuple(settings),
                             simulation=info.simulation, units=tuple(units))

    @classmethod
    def from_config(cls, config: ChannelConfig) -> Any:
        """Build the channel from its record (its units are added by the middleware)."""
        return cls(config.name, **{k: config.settings[k] for k in config.arguments})  # type: ignore[call-arg]

    @classmethod
    def read_settings(cls, info: ChannelInfo, rate: Optional[float] = None,
                      command_timeout: Optional[float] = None) -> Dict[str, Any]:
        """Read and check ``<channel>``: the constructor's keyword arguments (one reader of its schema).
        ``rate`` / ``command_timeout`` are the ``<hardware>`` defaults."""
        el = info.element
        r = AttributeReader(el, ignore=("name", "type"))
        if rate is None:
            rate = cls.DEFAULT_RATE
        if command_timeout is None:
            command_timeout = cls.DEFAULT_COMMAND_TIMEOUT
        kw = dict(
            interface=r.get("interface", to_str),
            channel=r.get("channel", to_str),
            bitrate=r.get("bitrate", to_int, cls.DEFAULT_BITRATE, check=lambda v: v in VALID_BITRATES,
                          expected="a classic CAN bitrate: " + ", ".join(str(b) for b in VALID_BITRATES)),
            rate=r.get("rate", to_float, rate, check=positive, expected="a positive rate in Hz"),
            master_id=r.get("master_id", to_int, cls.DEFAULT_MASTER_ID, check=lambda v: 0 <= v <= 0x7FF,
                            expected="an integer CAN id 0x000..0x7FF"),
            reply_window=r.get("reply_window", to_float, cls.DEFAULT_REPLY_WINDOW, check=lambda v: 0 < v <= 1,
                               expected="a fraction of the period in (0, 1]"),
            fault_timeout=r.seconds("fault_timeout", cls.DEFAULT_FAULT_TIMEOUT),
            max_bus_load=r.get("max_bus_load", to_float, cls.DEFAULT_MAX_BUS_LOAD, check=positive,
                               expected="a positive fraction"),
            command_timeout=r.get("command_timeout", to_float, command_timeout, check=non_negative,
                                  expected="a number of seconds >= 0 (0 = off)"),
        )
        r.finish()
        kw["where"] = f"{el.source}:{el.line}"
        return kw
