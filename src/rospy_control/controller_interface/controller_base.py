"""The controller life cycle (``controller_interface::ControllerBase``, Noetic).

States: CONSTRUCTED -> (init_request) -> INITIALIZED -> RUNNING / STOPPED / WAITING / ABORTED.

* :meth:`ControllerBase.init_request` succeeds only from CONSTRUCTED.
* :meth:`~ControllerBase.start_request`, :meth:`~ControllerBase.stop_request`,
  :meth:`~ControllerBase.wait_request` and :meth:`~ControllerBase.abort_request` are accepted from every
  state except CONSTRUCTED; each calls its user hook (``starting`` / ``stopping`` / ``waiting`` /
  ``aborting``) and then sets the state.  A stopped or aborted controller can be started again;
  ``initialized`` never comes back after the first start.
* :meth:`~ControllerBase.update_request` calls ``update`` only while RUNNING.

The ``*_request`` methods are called by the controller manager, the hooks are what a controller
writer overrides.  Real-time rule (as in ros_control): ``starting``, ``update``, ``stopping``,
``waiting`` and ``aborting`` run in the control loop -- no blocking calls, no unthrottled logging, no
rospy; ``init`` runs in a service thread and may block.
"""
from __future__ import annotations

import enum
from typing import List

from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["ControllerState", "ControllerBase"]


class ControllerState(enum.Enum):
    """Life-cycle states; :attr:`label` is the string ``list_controllers`` reports."""

    CONSTRUCTED = 0
    INITIALIZED = 1
    RUNNING = 2
    STOPPED = 3
    WAITING = 4
    ABORTED = 5

    @property
    def label(self) -> str:
        """``initialized``, ``running``, ``stopped``, ``waiting``, ``aborted``; else ``unknown``."""
        return _LABELS.get(self, "unknown")


_LABELS = {
    ControllerState.INITIALIZED: "initialized",
    ControllerState.RUNNING: "running",
    ControllerState.STOPPED: "stopped",
    ControllerState.WAITING: "waiting",
    ControllerState.ABORTED: "aborted",
}


class ControllerBase:
    """Abstract controller with the guarded state machine.

    Subclasses normally derive from :class:`~rospy_control.controller_interface.controller.Controller`
    or :class:`~rospy_control.controller_interface.controller.MultiInterfaceController`, which
    implement :meth:`init_request`.
    """

    def __init__(self) -> None:
        self.state = ControllerState.CONSTRUCTED

    # -- user hooks (override) -------------------------------------------------------------------
    def starting(self, time: float) -> None:
        """Called (real-time) when the controller is started; default: nothing."""

    def update(self, time: float, period: float) -> None:
        """Called (real-time) every cycle while running.  Must be overridden."""
        raise NotImplementedError(f"{type(self).__name__} does not implement update()")

    def stopping(self, time: float) -> None:
        """Called (real-time) when the controller is stopped; default: nothing."""

    def waiting(self, time: float) -> None:
        """Called (real-time) every cycle its start waits for the hardware switch; default: nothing."""

    def aborting(self, time: float) -> None:
        """Called (real-time) when its start is aborted (switch error or timeout); default: nothing."""

    # -- requests (called by the controller manager) ---------------------------------------------
    def init_request(self, robot_hw, root_nh, controller_nh) -> List:
        """Initialise from CONSTRUCTED; return the claimed resources (``InterfaceResources`` list).

        :raises ControllerError: wrong state, missing hardware interface, or ``init`` returned False.
            Exceptions raised by ``init`` itself propagate.
        """
        raise NotImplementedError

    def start_request(self, time: float) -> bool:
        """``starting(time)`` then RUNNING; False (and no hook) while CONSTRUCTED."""
        if self.state == ControllerState.CONSTRUCTED:
            logger.error("Failed to start controller. It is not initialized.")
            return False
        self.starting(time)
        self.state = ControllerState.RUNNING
        return True

    def stop_request(self, time: float) -> bool:
        """``stopping(time)`` then STOPPED; False while CONSTRUCTED."""
        if self.state == ControllerState.CONSTRUCTED:
            logger.error("Failed to stop controller. It is not initialized.")
            return False
        self.stopping(time)
        self.state = ControllerState.STOPPED
        return True

    def wait_request(self, time: float) -> bool:
        """``waiting(time)`` then WAITING; False while CONSTRUCTED."""
        if self.state == ControllerState.CONSTRUCTED:
            logger.error("Failed to wait controller. It is not initialized.")
            return False
        self.waiting(time)
        self.state = ControllerState.WAITING
        return True

    def abort_request(self, time: float) -> bool:
        """``aborting(time)`` then ABORTED; False while CONSTRUCTED."""
        if self.state == ControllerState.CONSTRUCTED:
            logger.error("Failed to abort controller. It is not initialized.")
            return False
        self.aborting(time)
        self.state = ControllerState.ABORTED
        return True

    def update_request(self, time: float, period: float) -> None:
        """``update(time, period)`` if RUNNING, else nothing."""
        if self.state == ControllerState.RUNNING:
            self.update(time, period)

    # -- predicates --------------------------------------------------------------------------------
    def is_initialized(self) -> bool:
        return self.state == ControllerState.INITIALIZED

    def is_running(self) -> bool:
        return self.state == ControllerState.RUNNING

    def is_stopped(self) -> bool:
        return self.state == ControllerState.STOPPED

    def is_waiting(self) -> bool:
        return self.state == ControllerState.WAITING

    def is_aborted(self) -> bool:
        return self.state == ControllerState.ABORTED
