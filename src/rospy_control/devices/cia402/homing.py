"""Homing on demand of a CiA 402 drive: the homing mode of CiA 402-2 (mode of operation 6).

The ``<homing>`` child of the drive's ``<unit>`` says how (the drive does the homing itself, by its
method; the driver only starts it and watches it)::

    <homing method="35" offset="0.0" switch_speed="0.2" zero_speed="0.05" acceleration="1.0"
            timeout="30" at_start="false"/>

* ``method``: 0x6098 (INTEGER8), the drive's homing method: 1-14 limit or home switch with the index
  pulse, 17-30 the same without it, 33/34 the index pulse only, 35 and 37 the current position (37 in
  the newer editions of CiA 402-2); which ones a drive has is in its manual;
* ``offset``: 0x607C home offset in rad on the drive's side (the positions the drive reports, before the
  unit's ``direction`` and ``zero_offset``; converted to increments through ``counts_per_rev`` and
  ``gear_ratio``):
  CiA 402-2 puts the zero at the home position plus this offset, so the home position reads
  ``-offset`` after homing (some drives read ``+offset``: check the reading after a first homing);
* ``switch_speed`` / ``zero_speed``: 0x6099 sub 1 (searching the switch) and sub 2 (searching the
  zero), rad/s; ``acceleration``: 0x609A, rad/s^2 (magnitudes, converted as the offset is);
* ``timeout``: seconds the driver waits for the drive to report homing attained before it stops the
  homing (controlword bit 4 low, the drive halts) and reports it failed;
* ``at_start``: home when the driver starts (default false: homing is on demand only).

The sequence (channel thread; the SDO writes in a worker thread): 0x6098, 0x607C, 0x6099:1, 0x6099:2
and 0x609A by SDO; the mode of operation 6 in the RPDO with controlword bit 4 low until 0x6061 shows
6 (or, without a mode display TPDO, for two cycles); then bit 4 high (the rising edge starts it). The
statusword then says (bits 13 / 12 / 10): 0/0/0 in progress, 0/0/1 interrupted or not started,
0/1/0 attained with the target not yet reached, 0/1/1 completed, 1/x/x homing error.  When completed,
the drive goes back to cyclic synchronous position holding the position it measures now (the new
zero), and the caller restarts its commands from there.  A homing error, the timeout, a fault or a
failed SDO write ends it as failed, the drive holding where it stopped.
"""
from __future__ import annotations

import math
import struct
import threading
from typing import Any, Callable, List, NamedTuple, Optional, Tuple

from rospy_control.devices.actuator import HomingState
from rospy_control.hardware_config.document import AttributeReader, to_bool, to_float, to_int

__all__ = ["HomingSettings", "HomingState", "HOMING_MODE", "read_homing", "homing_writes",
           "homing_status", "Cia402HomingRun", "CW_HOMING_START", "SW_HOMING_ATTAINED", "SW_HOMING_ERROR"]

#: mode of operation 0x6060 of the homing mode
HOMING_MODE = 6
HOMING_METHOD, HOME_OFFSET, HOMING_SPEEDS, HOMING_ACCELERATION = 0x6098, 0x607C, 0x6099, 0x609A
#: controlword bit 4 in homing mode: a rising edge starts the homing, low halts it
CW_HOMING_START = 1 << 4
#: statusword bits 12 and 13 in homing mode (bit 10 is target reached)
SW_HOMING_ATTAINED = 1 << 12
SW_HOMING_ERROR = 1 << 13
SW_TARGET_REACHED = 1 << 10
#: the methods of CiA 402-2 (a drive offers some of them, and may add its own, negative, ones)
STANDARD_METHODS = tuple(range(1, 15)) + tuple(range(17, 31)) + (33, 34, 35, 37)


class HomingSettings(NamedTuple):
    """The ``<homing>`` element (rad, rad/s, rad/s^2 on the drive's side; seconds)."""

    method: int
    offset: float = 0.0
    switch_speed: float = 0.1
    zero_speed: float = 0.02
    acceleration: float = 1.0
    timeout: float = 30.0
    at_start: bool = False


def read_homing(element: Any) -> Optional[HomingSettings]:
    """The ``<homing>`` child of ``element`` (:class:`~rospy_control.hardware_config.document.Element`),
    None without one.  :raises ConfigError: a bad attribute (file, line, attribute and value)."""
    found = [c for c in element.children if c.tag == "homing"]
    if not found:
        return None
    el = found[0]
    if len(found) > 1:
        raise found[1].error("a unit has at most one <homing>")
    r = AttributeReader(el)

    def speed(name: str, default: float) -> float:
        return r.get(name, to_float, default, check=lambda v: math.isfinite(v) and v > 0,
                     expected="a speed in rad/s (> 0)")
    settings = HomingSettings(
        method=r.get("method", to_int, check=lambda v: -128 <= v <= 127 and v != 0,
                     expected="a homing method 0x6098: -128..127, not 0 (CiA 402-2: 1-14, 17-30, 33, 34, 35, "
                              "37; negative ones are the drive maker's)"),
        offset=r.get("offset", to_float, 0.0, check=math.isfinite, expected="a home offset in rad"),
        switch_speed=speed("switch_speed", HomingSettings._field_defaults["switch_speed"]),
        zero_speed=speed("zero_speed", HomingSettings._field_defaults["zero_speed"]),
        acceleration=r.get("acceleration", to_float, 1.0, check=lambda v: math.isfinite(v) and v > 0,
                           expected="an acceleration in rad/s^2 (> 0)"),
        timeout=r.get("timeout", to_float, 30.0, check=lambda v: math.isfinite(v) and v > 0,
                      expected="seconds the homing may take (> 0)"),
        at_start=r.get("at_start", to_bool, False),
    )
    r.finish()
    return settings


def homing_writes(s: HomingSettings, counts_per_rad: float) -> List[Tuple[int, int, bytes, str]]:
    """The SDO downloads that configure the homing: ``(index, sub, data, text)``; counts per rad at the
    joint (``counts_per_rad`` may be negative: a speed or acceleration is a magnitude).

    :raises ValueError: a value that its object cannot carry."""
    def u32(x: float, what: str) -> bytes:
        v = int(round(abs(x * counts_per_rad)))
        if not 0 <= v <= 0xFFFFFFFF:
            raise ValueError(f"{what} {x:g} is {v} increments: outside UNSIGNED32")
        return struct.pack("<I", v)
    offset = int(round(s.offset * counts_per_rad))
    if not -(1 << 31) <= offset < (1 << 31):
        raise ValueError(f"home offset {s.offset:g} rad is {offset} increments: outside INTEGER32")
    return [
        (HOMING_METHOD, 0, struct.pack("<b", s.method), f"homing method 0x6098 = {s.method}"),
        (HOME_OFFSET, 0, struct.pack("<i", offset), f"home offset 0x607C = {offset}"),
        (HOMING_SPEEDS, 1, u32(s.switch_speed, "switch_speed"), "speed during search for switch 0x6099:01"),
        (HOMING_SPEEDS, 2, u32(s.zero_speed, "zero_speed"), "speed during search for zero 0x6099:02"),
        (HOMING_ACCELERATION, 0, u32(s.acceleration, "acceleration"), "homing acceleration 0x609A"),
    ]


def homing_status(statusword: int) -> str:
    """CiA 402-2's reading of statusword bits 13, 12 and 10 in homing mode: ``"in progress"``,
    ``"interrupted"`` (or not started), ``"attained"`` (target not reached yet), ``"completed"`` or
    ``"error"``."""
    if statusword & SW_HOMING_ERROR:
        return "error"
    attained, reached = statusword & SW_HOMING_ATTAINED, statusword & SW_TARGET_REACHED
    if attained:
        return "completed" if reached else "attained"
    return "interrupted" if reached else "in progress"


class Cia402HomingRun:
    """One homing of a drive, driven by its channel thread (``step``) with the SDO writes in a worker.

    :param writes: the SDO downloads (:func:`homing_writes`)
    :param download: ``download(index, sub, data)`` (blocking; raises on an abort or a timeout)
    :param describe: turns a failed download's exception into a sentence
    :param start_thread: starts ``fn`` in a named thread
    """

    #: cycles with mode 6 and bit 4 low before the rising edge, when no TPDO shows the mode
    SELECT_CYCLES = 2

    def __init__(self, settings: HomingSettings, writes: List[Tuple[int, int, bytes, str]],
                 download: Callable[[int, int, bytes], None], describe: Callable[[BaseException, str], str],
                 start_thread: Callable[..., threading.Thread], name: str, now: float) -> None:
        self.settings = settings
        self.stage = "configuring"
        self.result: Optional[Tuple[bool, str]] = None
        self._deadline = now + settings.timeout
        self._started = now
        self._cycles = 0
        self._configured: Optional[Tuple[bool, str]] = None
        self._lock = threading.Lock()
        self.thread = start_thread(self._configure, f"cia402.{name}.homing",
                                   args=(writes, download, describe))

    def _configure(self, writes, download, describe) -> None:
        try:
            for index, sub, data, text in writes:
                download(index, sub, data)
            outcome: Tuple[bool, str] = (True, "")
        except Exception as err:  # noqa: BLE001 - an SDO abort or timeout ends the homing, reported
            outcome = (False, describe(err, text))
        with self._lock:
            self._configured = outcome

    def step(self, now: float, statusword: Optional[int], mode_shown: Optional[int]) -> Tuple[bool, bool]:
        """Advance by one cycle: ``(homing mode, bit 4)`` for this cycle's RPDO; ends in :attr:`result`."""
        if self.result is not None:
            return False, False
        if self.stage == "configuring":
            with self._lock:
                configured = self._configured
            if configured is None:
                if now > self._deadline:
                    self._end(False, f"the homing configuration took longer than {self.settings.timeout:g} s")
                return False, False
            if not configured[0]:
                self._end(False, configured[1])
                return False, False
            self.stage = "selecting"
            self._cycles = 0
            return True, False
        if self.stage == "selecting":
            self._cycles += 1
            shown = mode_shown == HOMING_MODE if mode_shown is not None else self._cycles > self.SELECT_CYCLES
            if shown:
                self.stage = "running"
                self._cycles = 0
                return True, True
            if now > self._deadline:
                self._end(False, "the drive did not switch to homing mode (0x6061 never showed 6)")
                return False, False
            return True, False
        # running: bit 4 high; the first cycles' statusword may still be the one before the edge
        self._cycles += 1
        status = homing_status(statusword) if statusword is not None and self._cycles > 2 else "in progress"
        if status == "completed":
            self._end(True, f"homing completed in {now - self._started:.2f} s (method "
                            f"{self.settings.method})")
            return False, False
        if status == "error":
            self._end(False, f"the drive reported a homing error (statusword 0x{statusword:04X}, bit 13; "
                             f"method {self.settings.method})")
            return False, False
        if status == "interrupted" and self._cycles > 2 + self.SELECT_CYCLES:
            self._end(False, f"the drive interrupted the homing (statusword 0x{statusword:04X}: bits "
                             "13/12/10 = 0/0/1)")
            return False, False
        if now > self._deadline:
            self._end(False, f"not attained within timeout {self.settings.timeout:g} s (statusword "
                             f"0x{statusword or 0:04X}); stopped (controlword bit 4 low)")
            return False, False
        return True, True

    def abort(self, why: str) -> None:
        if self.result is None:
            self._end(False, why)

    def _end(self, ok: bool, why: str) -> None:
        self.stage = "done"
        self.result = (ok, why)
