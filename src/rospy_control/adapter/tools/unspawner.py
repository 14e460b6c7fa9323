"""``unspawner``: keep some controllers stopped while it runs, restart them when it is killed.

Drop-in for ros_control's ``controller_manager unspawner``: ``unspawner name1 name2 ...``.

Every :attr:`Unspawner.PERIOD` seconds (3 s, as upstream) it lists the controllers and stops the named
ones that are ``running`` (BEST_EFFORT, so names that are not loaded are ignored), remembering what it
stopped.  On shutdown it starts again everything it stopped (BEST_EFFORT), bounded by
:attr:`Unspawner.SHUTDOWN_BUDGET` seconds, so it never hangs on a manager that is gone; a check in
progress is finished first (SIGINT/SIGTERM run the restart in a thread of their own, see
:mod:`._signals`).
``-h``/``--help`` or no names prints the usage and exits with status 1, as upstream.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import List, Optional, Sequence, Set

from rospy_control.adapter.tools._signals import shutdown_on_signals
from rospy_control.adapter.tools.controller_manager_interface import (
    BEST_EFFORT,
    ControllerManagerClient,
    ControllerManagerUnavailable,
    call_with_timeout,
)
from rospy_control.log import get_logger

logger = get_logger("rospy_control.unspawner")

__all__ = ["Unspawner", "main", "USAGE"]

USAGE = """unspawner name1 name2 name3

\tStops a set of controllers until killed.
\tUseful in roslaunch files to temporarily stop controllers."""


class Unspawner:
    """Keeps ``names`` stopped (see the module docstring).

    :param client: client of the controller manager.
    :param names: controllers to keep stopped.
    """

    #: Seconds between two checks.
    PERIOD = 3.0
    #: Total seconds the restart at shutdown may take.
    SHUTDOWN_BUDGET = 10.0

    def __init__(self, client: ControllerManagerClient, names: Sequence[str]) -> None:
        self.client = client
        self.names = list(names)
        #: Controllers this unspawner stopped (and will restart).
        self.inhibited: Set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._done = False

    def check(self) -> List[str]:
        """Stop the named controllers that are running; returns the ones it stopped now."""
        with self._lock:
            if self._done:
                return []
            running = [s.name for s in self.client.list_controllers() if s.state == "running"]
            to_stop = [n for n in self.names if n in running]
            if not to_stop:
                return []
            logger.info("Inhibiting controllers: %s", ", ".join(to_stop))
            if self.client.switch_controller([], to_stop, BEST_EFFORT, False, 0.0):
                self.inhibited.update(to_stop)
                return to_stop
            logger.error("Could not stop controllers %s", to_stop)
            return []

    def run(self, is_shutdown) -> None:
        """Check every :attr:`PERIOD` seconds until :meth:`shutdown` has run or ``is_shutdown()``
        (rospy sets that flag only after its shutdown hooks, i.e. after :meth:`shutdown`)."""
        while not self._stop.is_set() and not is_shutdown():
            try:
                self.check()
            except ControllerManagerUnavailable as err:
                logger.warning("Unspawner: controller manager not reachable: %s", err)
            self._stop.wait(self.PERIOD)

    def shutdown(self) -> None:
        """Restart (BEST_EFFORT) what was stopped; bounded; runs once.  :meth:`run` returns only after
        this has finished, so the process does not exit under the restart."""
        try:
            self._restart()
        finally:
            self._stop.set()

    def _restart(self) -> None:
        deadline = time.monotonic() + self.SHUTDOWN_BUDGET
        if not self._lock.acquire(timeout=self.SHUTDOWN_BUDGET / 2):
            logger.warning("Unspawner: a check is still in progress; not restarting %s",
                           sorted(self.inhibited))
            return
        try:
            if self._done:
                return
            self._done = True
            names = sorted(self.inhibited)
        finally:
            self._lock.release()
        if not names:
            return
        logger.info("Restarting controllers: %s", ", ".join(names))
        try:
            ok = call_with_timeout(
                lambda: self.client.switch_controller(names, [], BEST_EFFORT, False, 0.0, wait=False),
                max(0.0, deadline - time.monotonic()), "switch_controller")
        except Exception as err:  # noqa: BLE001 - the manager may be gone in any way
            logger.warning("Unspawner couldn't reach controller_manager to restart %s: %s", names, err)
            return
        if not ok:
            logger.warning("Unspawner could not restart %s", names)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``scripts/unspawner``; returns the exit status."""
    import rospy

    names = list(rospy.myargv(sys.argv)[1:] if argv is None else argv)
    if not names or names[0] in ("-h", "--help"):
        print(USAGE)
        return 1
    rospy.init_node("unspawner", anonymous=True, disable_signals=True)
    # The restart must not run inside a signal handler: it would wait for the check the main thread
    # was interrupted in (which holds the lock) and give up, leaving the controllers stopped.
    shutdown_on_signals()
    client = ControllerManagerClient("", timeout=10.0)
    while not rospy.is_shutdown():
        try:
            client.wait_for_services(("list_controllers", "switch_controller"))
            break
        except ControllerManagerUnavailable:
            logger.info("Unspawner: waiting for the controller manager")
    unspawner = Unspawner(client, names)
    rospy.on_shutdown(unspawner.shutdown)
    unspawner.run(rospy.is_shutdown)
    return 0
