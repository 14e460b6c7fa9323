"""The package's threads: named at start, stopped in order, a thread that does not join reported.

* :func:`start_thread` names every thread ``rospy_control.<what>`` (:data:`THREAD_PREFIX`), daemon
  or not.  The unit suite's leak check fails a test that leaves such a thread alive
  (:func:`package_threads`), so a bus, loop or publisher thread that outlives its ``stop()`` is
  caught even though they are daemon threads.
* :func:`join_thread` joins with a timeout and says, in the log, which thread did not stop.
* :func:`stop_in_order` runs shutdown steps in order; a step that reports a thread still running
  (returns False or raises :class:`ShutdownIncomplete`) stops the sequence *there*: the steps after
  it (controllers' ``stopping()``, the RobotHW, the buses) would otherwise run while that thread may
  still be using the same controllers or bus.
"""
from __future__ import annotations

import threading
from typing import Callable, Iterable, List, Optional, Sequence, Tuple

from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["THREAD_PREFIX", "ShutdownIncomplete", "start_thread", "join_thread", "package_threads",
           "thread_name",
           "stop_in_order"]

#: Name prefix of every thread the package starts.
THREAD_PREFIX = "rospy_control."


class ShutdownIncomplete(RuntimeError):
    """A thread did not stop; what depends on it must not be torn down."""


def thread_name(what: str) -> str:
    """``rospy_control.<what>`` (unchanged if already prefixed)."""
    return what if what.startswith(THREAD_PREFIX) else THREAD_PREFIX + what


def start_thread(target: Callable[..., None], what: str, daemon: bool = True,
                 args: Tuple = ()) -> threading.Thread:
    """Start ``target(*args)`` in a thread named ``rospy_control.<what>``.

    Daemon by default: a node that is killed must not hang in interpreter shutdown on a thread its
    owner could not stop; owners still stop and join their threads (:func:`join_thread`).
    """
    thread = threading.Thread(target=target, name=thread_name(what), args=args, daemon=daemon)
    thread.start()
    return thread


def join_thread(thread: Optional[threading.Thread], timeout: float, owner: str = "") -> bool:
    """Join ``thread`` for up to ``timeout`` s; False (and an error naming it) if it is still alive.
    True for None or the calling thread itself."""
    if thread is None or thread is threading.current_thread():
        return True
    thread.join(timeout)
    if thread.is_alive():
        logger.error("%sthread '%s' did not stop within %.1f s", f"{owner}: " if owner else "", thread.name,
                     timeout)
        return False
    return True


def package_threads(exclude: Iterable[threading.Thread] = ()) -> List[threading.Thread]:
    """Alive threads named ``rospy_control.*`` (daemon or not), except ``exclude``."""
    skip = set(exclude)
    return [t for t in threading.enumerate()
            if t.is_alive() and t.name.startswith(THREAD_PREFIX) and t not in skip]


def stop_in_order(steps: Sequence[Tuple[str, Callable[[], object]]], owner: str = "") -> Optional[str]:
    """Run ``(what, step)`` in order.  A step returning False or raising :class:`ShutdownIncomplete`
    ends the sequence there (logged: which, and what was left running); another exception is logged
    and the next step runs.

    :returns: None when every step ran, else the name of the step that stopped the sequence.
    """
    prefix = f"{owner}: " if owner else ""
    for index, (what, step) in enumerate(steps):
        try:
            done = step()
        except ShutdownIncomplete as err:
            done, why = False, str(err)
        except Exception as err:  # noqa: BLE001 - shut down the rest regardless
            logger.error("%sshutting down the %s failed: %s", prefix, what, err)
            continue
        else:
            why = ""
        if done is False:
            left = [w for w, _ in steps[index + 1:]]
            logger.error("%sthe %s did not stop%s; NOT shutting down what depends on it (%s): it may still "
                         "be in use", prefix, what, f" ({why})" if why else "", ", ".join(left) or "nothing")
            return what
    return None
