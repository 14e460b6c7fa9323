"""Pulse back-ends: where the step pulses computed by the board core go.

* :class:`SimBackend` (default): records every pulse's board time and direction per axis, so tests
  and benchmarks check counts and timing exactly, in board-clock terms; optional simulated encoders.
* :class:`PigpioBackend`: a Raspberry Pi; pulses as hardware-timed DMA waveforms through the pigpio
  daemon (``sudo pigpiod``).  pigpio is imported only when this back-end is chosen.  It cannot be
  exercised here (no Pi, no pigpiod): only the pure conversion of pulse times to waveform entries
  (:func:`waveform_pulses`) is unit-tested.
"""
from __future__ import annotations

import bisect
import threading
from typing import Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .config import AxisConfig


class PulseBackend:
    """Receives each axis's pulses: ``times`` (board s, increasing) and ``dirs`` (+1/-1)."""

    name = "none"

    def __init__(self, axes: Sequence[AxisConfig]) -> None:
        self.axes = list(axes)
        #: the board's clock (s), set by the server; a hardware back-end aligns its output to it
        self.clock: Optional[Callable[[], float]] = None

    def emit(self, axis: int, times: np.ndarray, dirs: np.ndarray) -> None:
        raise NotImplementedError

    def flush(self, t_until: float) -> None:
        """Every pulse up to ``t_until`` has been handed over (a hardware back-end sends them now)."""

    def steps_at(self, axis: int, t: float) -> Optional[int]:
        """Pulse count (signed) at board time ``t``, or None when the back-end cannot tell."""
        return None

    def encoder_at(self, axis: int, t: float) -> Optional[float]:
        """Encoder position (axis unit) at ``t`` where an encoder is configured, else None."""
        return None

    def switch_closed(self, axis: int, side: str, t: float) -> Optional[bool]:
        """Whether the axis's ``side`` ("min" or "max") limit switch is closed at board time ``t``; None
        when the back-end has no such input."""
        return None

    def rebase(self, axis: int, delta_steps: int, t: float) -> None:
        """The board set the axis's position (homing) at ``t``: its count moves by ``delta_steps`` with
        no pulse.  Default: nothing (a back-end that counts nothing)."""

    def close(self) -> None:
        pass


class SimBackend(PulseBackend):
    """Records every pulse of the last ``keep_seconds`` (board time; older ones are counted only,
    so a simulated board running for hours stays small).  ``slip`` (steps per axis) makes the
    simulated encoder disagree with the pulses.

    Limit switches: ``switches[axis]`` maps "min"/"max" to where that switch closes, in the axis unit
    counted from where the axis stood at start (the pulses sent, whatever position the board set
    since): the min switch is closed at and below its position, the max switch at and above.  By
    default an axis with a homing switch configured gets that switch where the axis's home position
    lies, with the axis standing ``start_error`` (unit) from its zero at start: the homing then moves
    the axis's positions by ``-start_error``."""

    name = "sim"

    def __init__(self, axes: Sequence[AxisConfig], keep_seconds: float = 300.0,
                 switches: Optional[Dict[int, Dict[str, float]]] = None, start_error: float = 0.0) -> None:
        super().__init__(axes)
        if switches is None:
            switches = {i: {a.homing.switch: a.homing.position - start_error}
                        for i, a in enumerate(self.axes) if a.homing is not None}
        self.switches = switches
        self._rebases: List[List[Tuple[float, int]]] = [[] for _ in self.axes]
        self._lock = threading.Lock()
        self.keep_seconds = keep_seconds
        n = len(self.axes)
        # per axis: chunk start times (for bisect) and chunks (times, dirs, count before the chunk)
        self._starts: List[List[float]] = [[] for _ in range(n)]
        self._chunks: List[List[Tuple[np.ndarray, np.ndarray, int]]] = [[] for _ in range(n)]
        self._dropped = [False] * n
        self._count = [0] * n
        self.pulse_total = [0] * n
        self.slip = [0.0] * n

    def emit(self, axis: int, times: np.ndarray, dirs: np.ndarray) -> None:
        if times.size == 0:
            return
        with self._lock:
            before = self._count[axis]
            self._count[axis] += int(np.sum(dirs))
            self.pulse_total[axis] += int(times.size)
            self._starts[axis].append(float(times[0]))
            self._chunks[axis].append((times.copy(), dirs.astype(np.int8), before))
            horizon = float(times[-1]) - self.keep_seconds
            chunks = self._chunks[axis]
            while len(chunks) > 1 and chunks[0][0][-1] < horizon:
                chunks.pop(0)
                self._starts[axis].pop(0)
                self._dropped[axis] = True

    def pulses(self, axis: int) -> Tuple[np.ndarray, np.ndarray]:
        """The recorded pulses of one axis: (times, dirs), oldest first."""
        with self._lock:
            chunks = self._chunks[axis]
            if not chunks:
                return np.zeros(0), np.zeros(0, dtype=np.int8)
            return np.concatenate([c[0] for c in chunks]), np.concatenate([c[1] for c in chunks])

    def steps_at(self, axis: int, t: float) -> Optional[int]:
        """The board's count at board time ``t`` (pulses, and the positions it set); None before the
        recorded window (not known any more)."""
        raw = self.pulse_count_at(axis, t)
        if raw is None:
            return None
        return raw + sum(d for tr, d in self._rebases[axis] if tr <= t)

    def rebase(self, axis: int, delta_steps: int, t: float) -> None:
        self._rebases[axis].append((t, int(delta_steps)))

    def switch_closed(self, axis: int, side: str, t: float) -> Optional[bool]:
        at = self.switches.get(axis, {}).get(side)
        if at is None:
            return None
        a = self.axes[axis]
        position = (self.pulse_count_at(axis, t) or 0) / (a.steps_per_unit * a.direction)
        return position <= at if side == "min" else position >= at

    def pulse_count_at(self, axis: int, t: float) -> Optional[int]:
        """Pulse count (signed sum of the pulses) at board time ``t``; None before the recorded window."""
        with self._lock:
            chunks = self._chunks[axis]
            if not chunks:
                return self._count[axis]
            i = bisect.bisect_right(self._starts[axis], t) - 1
            if i < 0:
                return None if self._dropped[axis] else chunks[0][2]
            times, dirs, before = chunks[i]
            k = int(np.searchsorted(times, t, side="right"))
            return before + int(np.sum(dirs[:k]))

    def encoder_at(self, axis: int, t: float) -> Optional[float]:
        enc = self.axes[axis].encoder
        if enc is None:
            return None
        a = self.axes[axis]
        steps = self.steps_at(axis, t) or 0
        position = (steps + self.slip[axis]) / (a.steps_per_unit * a.direction)
        return float(np.floor(position * enc.counts_per_unit + 0.5) / enc.counts_per_unit)


def waveform_pulses(events: Sequence[Tuple[float, int, int]], t_start: float, step_high_us: int = 5,
                    dir_setup_us: int = 5) -> List[Tuple[int, int, int]]:
    """pigpio waveform entries (gpio_on_mask, gpio_off_mask, delay_us) for the pulses of one chunk.

    ``events``: (board time s, step pin mask, direction masks) with the direction masks packed as
    ``pins_to_set | pins_to_clear << 32`` (0 when the direction does not change).  Each pulse
    raises its step pin for ``step_high_us``; a direction change comes ``dir_setup_us`` before the
    step.  Times are rounded to whole microseconds (pigpio's resolution) from ``t_start``, the
    chunk's start; every time is absolute, so rounding does not accumulate from chunk to chunk.
    """
    out: List[Tuple[int, int, int]] = []
    now_us = 0
    for t, step_mask, dir_masks in sorted(events):
        at = int(round((t - t_start) * 1e6))
        dir_on = dir_masks & 0xFFFFFFFF
        dir_off = (dir_masks >> 32) & 0xFFFFFFFF
        lead = at - dir_setup_us
        if dir_on or dir_off:
            if lead > now_us:
                out.append((0, 0, lead - now_us))
                now_us = lead
            out.append((dir_on, dir_off, 0))
        if at > now_us:
            out.append((0, 0, at - now_us))
            now_us = at
        out.append((step_mask, 0, step_high_us))
        out.append((0, step_mask, 0))
        now_us += step_high_us
    return out


class PigpioBackend(PulseBackend):  # pragma: no cover - needs a Raspberry Pi with pigpiod
    """Hardware-timed pulses on a Raspberry Pi through pigpio DMA waveforms (untested here).

    Each executor cycle hands over the pulses up to ``t_until``; :meth:`flush` turns them into one
    waveform and queues it with WAVE_MODE_ONE_SHOT_SYNC, so it starts when the previous one ends.
    The board core runs ``lookahead`` ahead of the clock so that a waveform is queued before it is due.
    """

    name = "pigpio"

    def __init__(self, axes: Sequence[AxisConfig], host: str = "localhost", chunk: float = 0.02) -> None:
        super().__init__(axes)
        self.chunk = chunk
        import pigpio  # type: ignore  # lazily: only on a Pi
        self._pigpio = pigpio
        self.pi = pigpio.pi(host)
        if not self.pi.connected:
            raise RuntimeError("pigpio: cannot connect to pigpiod (start it with `sudo pigpiod`)")
        for a in self.axes:
            if a.step_pin is None or a.dir_pin is None:
                raise RuntimeError(f"pigpio back-end: axis {a.name!r} has no pins.step / pins.dir")
            self.pi.set_mode(a.step_pin, pigpio.OUTPUT)
            self.pi.set_mode(a.dir_pin, pigpio.OUTPUT)
        self._pending: List[Tuple[float, int, int]] = []
        self._dir_level: Dict[int, int] = {}
        self._t_sent: Optional[float] = None
        self._waves: List[int] = []
        self._count = [0] * len(self.axes)
        self._encoders: Dict[int, list] = {}
        for i, a in enumerate(self.axes):
            if a.encoder is not None and a.encoder.pin_a is not None and a.encoder.pin_b is not None:
                self._encoders[i] = self._quadrature(a.encoder.pin_a, a.encoder.pin_b)

    def _quadrature(self, pin_a: int, pin_b: int) -> list:
        state = [0, 0, 0]     # count, last a, last b
        pi = self.pi
        pigpio = self._pigpio

        def cb(gpio, level, tick):
            if level == 2:
                return
            if gpio == pin_a:
                state[1] = level
                state[0] += 1 if level != state[2] else -1
            else:
                state[2] = level
                state[0] += 1 if level == state[1] else -1
        for pin in (pin_a, pin_b):
            pi.set_mode(pin, pigpio.INPUT)
            pi.callback(pin, pigpio.EITHER_EDGE, cb)
        return state

    def emit(self, axis: int, times: np.ndarray, dirs: np.ndarray) -> None:
        a = self.axes[axis]
        assert a.step_pin is not None and a.dir_pin is not None
        level = self._dir_level.get(axis, 0)
        for t, d in zip(times.tolist(), dirs.tolist()):
            want = 1 if d * a.direction > 0 else 0
            masks = 0
            if want != level:
                masks = (1 << a.dir_pin) if want else ((1 << a.dir_pin) << 32)
                level = want
            self._pending.append((t, 1 << a.step_pin, masks))
            self._count[axis] += int(d)
        self._dir_level[axis] = level

    def flush(self, t_until: float) -> None:
        """Send the pulses up to ``t_until`` as one waveform once they span ``chunk`` seconds.

        pigpio holds one waveform pending behind the one transmitting (ONE_SHOT_SYNC), so the
        chunks are long (20 ms) against the executor's 2 ms ticks, and the board runs 50 ms ahead.
        When nothing is transmitting (the first chunk, or after a gap) the waveform starts with a
        delay that puts its first entry at its board time, read from ``clock``.
        """
        pi = self._pigpio
        if self._t_sent is None:
            self._t_sent = t_until
            self._pending.clear()          # before the first flush nothing moved: no pulses
            return
        if t_until - self._t_sent < self.chunk:
            return
        entries = waveform_pulses(self._pending, self._t_sent)
        total = sum(e[2] for e in entries)
        span = int(round((t_until - self._t_sent) * 1e6))
        if span > total:
            entries.append((0, 0, span - total))
        if not self.pi.wave_tx_busy() and self.clock is not None:
            lead = int(round((self._t_sent - self.clock()) * 1e6))
            if lead > 0:
                entries.insert(0, (0, 0, lead))
        self._pending.clear()
        self._t_sent = t_until
        if not entries:
            return
        self.pi.wave_add_generic([pi.pulse(on, off, d) for on, off, d in entries])
        wid = self.pi.wave_create()
        self.pi.wave_send_using_mode(wid, pi.WAVE_MODE_ONE_SHOT_SYNC)
        self._waves.append(wid)
        while len(self._waves) > 3:          # delete waveforms that have certainly finished
            self.pi.wave_delete(self._waves.pop(0))

    def steps_at(self, axis: int, t: float) -> Optional[int]:
        return None     # the core's commanded count stands for it (open loop)

    def rebase(self, axis: int, delta_steps: int, t: float) -> None:
        state = self._encoders.get(axis)
        enc = self.axes[axis].encoder
        if state is not None and enc is not None:       # the encoder counts from the new position too
            state[0] += int(round(delta_steps * enc.counts_per_unit / self.axes[axis].steps_per_unit))

    def encoder_at(self, axis: int, t: float) -> Optional[float]:
        state = self._encoders.get(axis)
        if state is None:
            return None
        enc = self.axes[axis].encoder
        assert enc is not None
        return state[0] / (enc.counts_per_unit * self.axes[axis].direction)

    def close(self) -> None:
        self.pi.wave_tx_stop()
        self.pi.wave_clear()
        self.pi.stop()


def make_backend(name: str, axes: Sequence[AxisConfig]) -> PulseBackend:
    if name == "sim":
        return SimBackend(axes)
    if name == "pigpio":
        return PigpioBackend(axes)
    raise ValueError(f"unknown pulse back-end {name!r}; expected sim or pigpio")
