"""Sign of life of a simulated firmware thread, so that a starved simulator is not blamed on its motors.

Real firmware runs on its own processors: when a motor does not answer, the motor (or its wiring) is
at fault.  A simulated firmware runs on the same host as the driver, which a busy laptop may not
schedule for 100-250 ms; its silence then is the host's doing.  The firmware thread records each pass
of its loop here (:meth:`Liveness.beat`) and the driver's channel asks :meth:`Liveness.stalled` before
it counts a missing reply against a motor.

- In the driver's process (virtual bus) the record is plain memory.
- With the simulator in its own process (:mod:`..sim_process`) it is a 48-byte file mapped into
  both processes (:func:`liveness_path`: ``/dev/shm`` when present), written by the simulator and read
  by the driver; both clocks are ``time.perf_counter`` = ``CLOCK_MONOTONIC``, one clock per machine.

A thread that runs but does not answer still faults its motor; so does a simulator that has shown no
sign of life for :data:`DEAD_AFTER` (it died or was stopped: its motors are gone, like unplugged ones).
A thread that passes its loop but works through frames queued long ago (a backlog after the host
starved it, or a host too busy for it to keep up) records that lag as a gap too (:meth:`Liveness.lagging`),
and one that drops such frames unanswered records when it did (:meth:`Liveness.dropped`): a device
whose frames were dropped is silent by the host's doing, not its own.

A host can also hold the thread back in short bursts, each shorter than a gap, that add up: frames
then wait in its queue for tens of milliseconds, one cycle after another, though the thread passes
its loop often enough.  So the thread also records its progress (:meth:`Liveness.progress`): up to
which arrival time it has taken every frame, and when the earliest reply it holds back (its modelled
latency) falls due.  A cycle whose requests the thread has not yet taken, or in which a reply it owes
is overdue, is the host's doing too; once it has taken them and sent what was due, a missing reply is
the device's.
Only a simulator is ever excused this way: channels on real hardware have no liveness record.
"""
from __future__ import annotations

import hashlib
import mmap
import os
import struct
import tempfile
import time
from typing import Optional, Tuple

__all__ = ["Liveness", "SharedLiveness", "liveness_path", "GAP", "DEAD_AFTER", "DUE_SLACK"]

#: a loop pass this long after the previous one means the thread did not run in between (the loop
#: passes at least every SimulatedFirmware.IDLE_WAKE = 20 ms when it does)
GAP = 0.04
#: no sign of life for this long: the simulator is dead or stopped, not starved (host stalls seen on
#: this class of machine last 100-250 ms); its motors fault as usual
DEAD_AFTER = 1.0
#: a reply that fell due longer ago than this and was not sent: the thread did not run to send it (s)
DUE_SLACK = 0.001
#: layout: latest pass, start and end of the latest gap, latest drop of frames, arrival time up to
#: which every frame was taken, due time of the earliest reply held back (native doubles)
_FMT = "=dddddd"
_INF = float("inf")
_SIZE = struct.calcsize(_FMT)


class Liveness:
    """The latest loop pass of a firmware thread, the latest gap between two passes, the latest
    drop of frames and the thread's progress through the frames it receives.

    :param buf: where the record lives (a writable buffer of 48 bytes, e.g. a shared mapping);
        default a private one.
    """

    def __init__(self, buf: Optional[bytearray] = None) -> None:
        self._buf = buf if buf is not None else bytearray(_SIZE)
        self._last = time.perf_counter()
        struct.pack_into(_FMT, self._buf, 0, self._last, 0.0, 0.0, 0.0, _INF, _INF)

    def beat(self, now: float) -> None:
        """The thread passes its loop at ``now`` (perf_counter time)."""
        last = self._last
        if now - last > GAP:
            struct.pack_into("=dd", self._buf, 8, last, now)
        struct.pack_into("=d", self._buf, 0, now)
        self._last = now

    def lagging(self, now: float, lag: float) -> None:
        """The thread, running at ``now``, is handling a frame that arrived ``lag`` s ago: if that is
        more than :data:`GAP`, it was not given the CPU to keep up, which is a stall like a missed pass."""
        if lag > GAP:
            struct.pack_into("=dd", self._buf, 8, now - lag, now)

    def dropped(self, now: float, lag: float) -> None:
        """The thread, running at ``now``, dropped unanswered frames that arrived up to ``lag`` s ago:
        a gap like :meth:`lagging`, and the time of the drop (:meth:`last_drop`)."""
        struct.pack_into("=dd", self._buf, 8, now - lag, now)
        struct.pack_into("=d", self._buf, 24, now)

    def progress(self, taken: float, next_due: float) -> None:
        """Every frame that arrived before ``taken`` has been taken (answered, or its answer held back
        for its modelled latency); the earliest answer held back falls due at ``next_due`` (inf: none).
        Both perf_counter times."""
        struct.pack_into("=dd", self._buf, 32, taken, next_due)

    def last_drop(self) -> float:
        """perf_counter time at which the thread last dropped frames unanswered (0.0: never)."""
        return struct.unpack_from("=d", self._buf, 24)[0]

    def read(self) -> Tuple[float, float, float]:
        """``(latest pass, gap start, gap end)``."""
        return struct.unpack_from("=ddd", self._buf, 0)

    @property
    def alive(self) -> float:
        """perf_counter time of the latest loop pass."""
        return self.read()[0]

    def stalled(self, since: float, now: float, sent: Optional[float] = None) -> bool:
        """True if the thread did not run at some time in ``[since, now]`` (or just before: frames
        queued during a gap are answered late), had by ``now`` not yet taken the frame sent at
        ``sent`` (the cycle's last request; None: nothing was sent), or owed a reply that fell due
        more than :data:`DUE_SLACK` before ``now`` -- unless it has been gone :data:`DEAD_AFTER` or
        more."""
        alive, gap_start, gap_end, _drop, taken, next_due = struct.unpack_from(_FMT, self._buf, 0)
        silent = now - alive
        if silent > DEAD_AFTER:
            return False
        if silent > GAP or next_due < now - DUE_SLACK or (sent is not None and taken < sent):
            return True
        return gap_end + GAP > since and gap_start < now


def liveness_path(key: str, channel: str) -> str:
    """The file of the shared record of channel ``channel`` of the simulated robot ``key``."""
    digest = hashlib.sha256(f"rospy_control.sim.alive\0{key}\0{channel}".encode("utf-8")).hexdigest()
    base = "/dev/shm" if os.path.isdir("/dev/shm") else tempfile.gettempdir()
    return os.path.join(base, f"rospy_control_sim_{digest[:20]}")


class SharedLiveness(Liveness):
    """A :class:`Liveness` in a file mapped by the simulator process (writer) and the driver (reader)."""

    def __init__(self, path: str, mapping: mmap.mmap, owner: bool) -> None:
        self.path = path
        self._map = mapping
        self._owner = owner
        if owner:
            super().__init__(mapping)  # type: ignore[arg-type]  # an mmap is a writable buffer
        else:
            self._buf = mapping  # type: ignore[assignment]
            self._last = 0.0

    @classmethod
    def create(cls, path: str) -> "SharedLiveness":
        """The simulator's side: a new file (replacing a stale one of an earlier run)."""
        tmp = f"{path}.{os.getpid()}"
        with open(tmp, "wb") as f:
            f.write(b"\0" * _SIZE)
        os.replace(tmp, path)
        with open(path, "r+b") as f:
            mapping = mmap.mmap(f.fileno(), _SIZE)
        return cls(path, mapping, owner=True)

    @classmethod
    def attach(cls, path: str) -> Optional["SharedLiveness"]:
        """The driver's side: the simulator's record, or None if there is none (then nothing is excused)."""
        try:
            with open(path, "rb") as f:
                mapping = mmap.mmap(f.fileno(), _SIZE, access=mmap.ACCESS_READ)
        except (OSError, ValueError):
            return None
        return cls(path, mapping, owner=False)

    def beat(self, now: float) -> None:
        if self._owner:
            super().beat(now)

    def close(self) -> None:
        """Unmap; the simulator also removes its file."""
        try:
            self._map.close()
        except (BufferError, ValueError):
            pass
        if self._owner:
            try:
                os.unlink(self.path)
            except OSError:
                pass
