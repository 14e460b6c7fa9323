"""What every simulated device shares: the channel's :class:`SimulationSettings`, the fault switches
(:data:`FAULTS`) and :class:`SimUnit`, which reads a unit's ``<simulation>`` element."""
from __future__ import annotations

from typing import Optional

from rospy_control.hardware_config.document import (
    AttributeReader, ElementInfo, non_negative, positive, to_bool, to_float, to_int, to_str,
)
from rospy_control.hardware_config.records import UnitConfig
from rospy_control.simulator.mismatch import GENERIC

__all__ = ["FAULTS", "SimulationSettings", "SimUnit"]

#: Fault switches understood by :meth:`SimulatedFirmware.set_fault`.
FAULTS = ("silent", "late", "wrong_dlc", "garbage", "error_flag", "over_temperature")


class SimulationSettings:
    """The channel's ``<simulation>`` element: ``enabled``, ``rate`` (Hz), ``latency`` (s), ``seed``."""

    # Defaults of the constructor's arguments, which are also the hardware XML's (docs/hardware_xml.md).
    DEFAULT_ENABLED = True
    #: integration rate of the joint models (Hz)
    DEFAULT_RATE = 2000.0
    #: reply delay (s)
    DEFAULT_LATENCY = 0.0

    def __init__(self, enabled: bool = DEFAULT_ENABLED, rate: float = DEFAULT_RATE,
                 latency: float = DEFAULT_LATENCY, seed: Optional[int] = None) -> None:
        self.enabled = enabled
        self.rate = rate
        self.latency = latency
        self.seed = seed

    @classmethod
    def from_element(cls, el: Optional[ElementInfo]) -> "SimulationSettings":
        if el is None:
            return cls(enabled=False)
        r = AttributeReader(el)
        s = cls(
            enabled=r.get("enabled", to_bool, cls.DEFAULT_ENABLED),
            rate=r.get("rate", to_float, cls.DEFAULT_RATE, check=positive, expected="a positive rate in Hz"),
            latency=r.get("latency", to_float, cls.DEFAULT_LATENCY, check=non_negative,
                          expected="seconds >= 0"),
            seed=r.get("seed", to_int, None),
        )
        r.finish()
        return s


class SimUnit:
    """A simulated device: its unit, its fault switch and latency, and the reader of its
    ``<simulation>`` element (a subclass reads its own attributes, then calls :meth:`_finish`)."""

    def __init__(self, unit: UnitConfig, el: Optional[ElementInfo]) -> None:
        self.unit = unit
        self.name = unit.name
        self.fault: Optional[str] = None
        self.fault_value: Optional[float] = None
        self.latency: Optional[float] = None
        self.seq = 0
        #: frames received for this unit (including ignored ones while silent)
        self.frames = 0
        # answer_id / silent / mode: the mismatch switches, read by the firmware (:mod:`.mismatch`)
        self._reader = AttributeReader(el if el is not None else ElementInfo("simulation", {}, "", None, ()),
                                       ignore=GENERIC)

    def _finish(self) -> None:
        r = self._reader
        self.latency = r.get("latency", to_float, None, check=non_negative, expected="seconds >= 0")
        fault = r.get("fault", to_str, None, check=lambda v: v in FAULTS,
                      expected="one of " + ", ".join(FAULTS))
        r.finish()
        if fault:
            self.fault = fault
