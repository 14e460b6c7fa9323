"""SIGINT/SIGTERM handling for the long-running tools (spawner, unspawner).

rospy's own handler runs ``rospy.signal_shutdown`` -- and with it every ``on_shutdown`` hook -- inside
the signal handler, i.e. on the main thread, interrupted wherever it happened to be.  A hook that
talks to the controller manager then competes with the code it interrupted: it cannot wait for the
main thread's service call to finish (that call only resumes after the handler returns), it
deadlocks on any non-reentrant lock the main thread held at that instant (ours, or rospy's master
proxy lock), and when the handler returns rospy is already shut down, so the interrupted call's
result can no longer be acted on (a controller loaded at that moment stays loaded).  roslaunch sends
SIGINT the moment a launch file is stopped, so that moment is an ordinary one for a spawner.

:func:`shutdown_on_signals` makes the handler only *start* a thread that runs
``rospy.signal_shutdown``: the hooks then run like those of ``rosnode kill`` (from rospy's XML-RPC
thread), while the main thread finishes what it was doing.
"""
from __future__ import annotations

import signal
import threading

__all__ = ["shutdown_on_signals"]


def shutdown_on_signals() -> None:
    """Route SIGINT and SIGTERM to ``rospy.signal_shutdown`` in a new (non-daemon) thread.

    Call after ``rospy.init_node(..., disable_signals=True)``, from the main thread.  The thread is
    not a daemon, so the process does not exit before rospy's shutdown (bounded by rospy) is over.
    A second signal while the first is being handled is ignored by rospy (shutdown in progress).
    """
    import rospy

    def handler(signum, _frame) -> None:
        threading.Thread(target=rospy.signal_shutdown, args=(f"signal-{signum}",),
                         name=f"rospy_control.signal_shutdown-{signum}").start()

    signal.signal(signal.SIGINT, handler)
    signal.signal(signal.SIGTERM, handler)
