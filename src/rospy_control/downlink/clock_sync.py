"""Offset and drift of a board's clock against the host's, from round trips (Klipper-style).

Each round trip gives (host send time, host receive time, board time read in between).  The board
time is assumed to belong to the midpoint of the round trip; its error is at most half the round
trip.  Samples whose round trip is much longer than the shortest seen recently (a stalled host, a
queue in the network) are discarded, and a least-squares line through the rest of a sliding window
gives the board clock as ``offset + rate * host``: the offset and the drift (rate - 1).
"""
from __future__ import annotations

import math
import threading
from collections import deque
from typing import Deque, Optional, Tuple


class ClockSync:
    def __init__(self, window: int = 32, rtt_factor: float = 2.0, rtt_floor: float = 0.0005) -> None:
        self.window = window
        self.rtt_factor = rtt_factor
        self.rtt_floor = rtt_floor
        self._lock = threading.Lock()
        self._samples: Deque[Tuple[float, float, float]] = deque(maxlen=window)   # host mid, board, rtt
        self._ref: Optional[float] = None
        self.min_rtt = math.inf
        self.rejected = 0
        self._offset = 0.0          # board - host at _ref
        self._rate = 1.0

    @property
    def synced(self) -> bool:
        return bool(self._samples)

    def add(self, host_send: float, host_recv: float, board: float) -> bool:
        """One round trip; returns False when it was discarded as an outlier."""
        rtt = host_recv - host_send
        if rtt < 0:
            return False
        mid = 0.5 * (host_send + host_recv)
        with self._lock:
            # the shortest round trip ages slowly, so a lasting change of the link is followed
            self.min_rtt = min(self.min_rtt * 1.02 if math.isfinite(self.min_rtt) else math.inf, rtt)
            if rtt > max(self.rtt_factor * self.min_rtt, self.min_rtt + self.rtt_floor):
                self.rejected += 1
                return False
            if self._ref is None:
                self._ref = mid
            self._samples.append((mid - self._ref, board, rtt))
            self._fit()
            return True

    def _fit(self) -> None:
        xs = [s[0] for s in self._samples]
        ys = [s[1] for s in self._samples]
        n = len(xs)
        if n == 1 or xs[-1] - xs[0] < 1.0:
            # not enough time spread for a slope: rate 1, offset from the best round trips
            best = sorted(self._samples, key=lambda s: s[2])[: max(1, n // 2)]
            self._rate = 1.0
            self._offset = sum(b - x for x, b, _ in best) / len(best)
            return
        mx = sum(xs) / n
        my = sum(ys) / n
        sxx = sum((x - mx) ** 2 for x in xs)
        sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
        self._rate = sxy / sxx
        self._offset = my - self._rate * mx

    def board_time(self, host: float) -> float:
        """The board's clock at host time ``host``."""
        with self._lock:
            if self._ref is None:
                raise RuntimeError("clock not synchronised yet")
            return self._offset + self._rate * (host - self._ref)

    def host_time(self, board: float) -> float:
        with self._lock:
            if self._ref is None:
                raise RuntimeError("clock not synchronised yet")
            return self._ref + (board - self._offset) / self._rate

    @property
    def drift_ppm(self) -> float:
        return (self._rate - 1.0) * 1e6

    @property
    def uncertainty(self) -> float:
        """Half the shortest accepted round trip plus the fit's residual (s): the error bound."""
        with self._lock:
            if not self._samples:
                return math.inf
            half = min(s[2] for s in self._samples) / 2
            res = [b - (self._offset + self._rate * x) for x, b, _ in self._samples]
            rms = math.sqrt(sum(r * r for r in res) / len(res))
            return half + rms
