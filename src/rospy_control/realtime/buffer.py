"""``RealtimeBuffer``: the one primitive for a value that crosses threads.

Memory model (written once here; everything that hands values across threads relies on it)
-----------------------------------------------------------------------------------------
CPython (3.8 to 3.11, with the GIL) executes one bytecode at a time.  Storing an object reference in
an attribute (``STORE_ATTR``) and loading it (``LOAD_ATTR``) are each a single step that no other
thread observes half-done; the object a reference points to is fully built before the reference is
stored.  So **publishing one reference to an immutable object is atomic and safe**: a reader sees
either the old object or the new one, complete.  What is *not* safe is publishing a value as several
writes (``a = x`` then ``b = y``, or mutating a list in place): a reader can run between them and
combine an old ``a`` with a new ``b``.  Relying on "we write ``_cmd`` before ``_cmd_seq``" is correct
only as long as every reader reads them in the matching order -- correct by care.

:class:`RealtimeBuffer` makes it correct by construction: a value is always handed over as **one
immutable object** (a tuple, a NamedTuple, a frozen dataclass -- never a list or dict that someone
keeps mutating), written by :meth:`RealtimeBuffer.write_from_non_rt` / :meth:`write_from_rt`, read by
:meth:`read_from_rt` / :meth:`read_from_non_rt`.  Things that belong together (a command and its
sequence number; a reset's result and its done flag; a snapshot's stamp and its states) go into
*one* object.  The reader never blocks and never takes a lock, so the control thread may read it
every cycle.  A writer that wants to know whether a new value arrived uses the sequence number
:meth:`sequence` (incremented with every write, in the same object as the value).

Single writer: each buffer has one writing side at a time (several writers would each be atomic, but
"last writer wins" is then a policy to document at the call site).  Use one buffer per direction.

No lock on the hot path: readers never lock, and a writer takes one only once a non-real-time reader
has slept in :meth:`wait_newer` (a publisher thread waiting for the next value) -- to wake it.
"""
from __future__ import annotations

import threading
from typing import Any, Generic, NamedTuple, Optional, Tuple, TypeVar

__all__ = ["RealtimeBuffer"]

T = TypeVar("T")


_new_tuple = tuple.__new__


class _Slot(NamedTuple):
    sequence: int
    value: Any


class RealtimeBuffer(Generic[T]):
    """A single-writer cell for one immutable value (see the module docstring).

    :param initial: the value before the first write.
    :param name: what it carries, for ``repr`` and messages.
    """

    __slots__ = ("_slot", "name", "_cond", "_waiting")

    def __init__(self, initial: Optional[T] = None, name: str = "") -> None:
        self._slot = _Slot(0, initial)
        self.name = name
        self._cond = threading.Condition(threading.Lock())
        # set (under the condition's lock) before a waiter checks; a writer that reads it False stored
        # its value before the waiter's check, so the waiter sees the value without a notify
        self._waiting = False

    # -- writing (one reference store) ---------------------------------------------------------------
    def write_from_non_rt(self, value: T) -> int:
        """Publish ``value`` (immutable); returns its sequence number.  Never blocks the reader."""
        slot = _new_tuple(_Slot, (self._slot.sequence + 1, value))  # _Slot(...) without its keyword parsing
        self._slot = slot
        if self._waiting:
            with self._cond:
                self._cond.notify_all()
        return slot.sequence

    #: The same operation from the real-time side (the control loop writing for a publisher thread).
    #: Only with a reader blocked in :meth:`wait_newer` does it take a lock (briefly, to wake it).
    write_from_rt = write_from_non_rt

    # -- reading (one reference load) ----------------------------------------------------------------
    def read_from_rt(self) -> T:
        """The latest value (never blocks, never locks)."""
        return self._slot.value

    read_from_non_rt = read_from_rt

    def read_with_sequence(self) -> Tuple[int, T]:
        """``(sequence, value)`` of the latest write, read together (0 before the first write)."""
        slot = self._slot
        return slot.sequence, slot.value

    def sequence(self) -> int:
        """How many writes so far."""
        return self._slot.sequence

    def wait_newer(self, sequence: int, timeout: Optional[float] = None) -> Tuple[int, T]:
        """Non-real-time readers: block until a write newer than ``sequence`` (or ``timeout`` s);
        returns :meth:`read_with_sequence` either way."""
        with self._cond:
            self._waiting = True
            self._cond.wait_for(lambda: self._slot.sequence > sequence, timeout)
        return self.read_with_sequence()

    def __repr__(self) -> str:
        slot = self._slot
        return f"RealtimeBuffer({self.name or '?'}, #{slot.sequence}: {slot.value!r})"
