"""The driver's homing services (rospy glue over :class:`rospy_control.control_loop.homing.Homing`).

* ``~home`` (``std_srvs/Trigger``): homes every unit that can (a CiA 402 drive with ``<homing>`` in
  the hardware XML, a trajectory board's axis with ``<homing>``), one after the other in the XML's
  order; refused while a trajectory goal runs;
  answers when every homing ended and the control loop holds the joints at their new zero;
* ``~home/<unit>`` (``std_srvs/Trigger``): the same for one unit;
* units whose ``<homing at_start="true">`` asks for it are homed once, in a thread, when the driver
  has started (never otherwise at start-up).

The units' homing state is in ``/diagnostics`` (the motor's ``homing`` value; WARN while homing and
after a failed homing).
"""
from __future__ import annotations

from typing import Any, List, Optional

from rospy_control.control_loop.homing import Homing, running_trajectories
from rospy_control.log import get_logger
from rospy_control.realtime.threads import join_thread, start_thread

__all__ = ["HomingServices"]

logger = get_logger(__name__)


class HomingServices:
    """``~home`` and ``~home/<unit>`` over ``robot_hw``; ``loop`` and ``controller_manager`` as the
    driver has them."""

    def __init__(self, robot_hw: Any, loop: Any, controller_manager: Any) -> None:
        import rospy
        from std_srvs.srv import Trigger, TriggerResponse

        self.homing = Homing(robot_hw, loop, lambda: running_trajectories(controller_manager))
        self._services: List[Any] = []
        self._thread: Optional[Any] = None

        def handler(units: Optional[List[str]]):
            def handle(_req: Any) -> Any:
                try:
                    ok, message = self.homing.home(units)
                except Exception as err:  # noqa: BLE001 - answer the caller, never kill the service thread
                    logger.error("home failed: %s", err, exc_info=err)
                    ok, message = False, f"home failed: {type(err).__name__}: {err}"
                return TriggerResponse(success=ok, message=message)
            return handle

        self._services.append(rospy.Service("~home", Trigger, handler(None)))
        for unit in self.homing.units():
            self._services.append(rospy.Service(f"~home/{unit}", Trigger, handler([unit])))
        if robot_hw.homing_at_start():
            self._thread = start_thread(self._home_at_start, "homing_at_start")

    def _home_at_start(self) -> None:
        try:
            outcome = self.homing.home_at_start()
        except Exception as err:  # noqa: BLE001 - reported; the driver runs on, unhomed
            logger.error("homing at start-up failed: %s", err, exc_info=err)
            return
        if outcome is not None:
            (logger.info if outcome[0] else logger.error)("homing at start-up: %s", outcome[1])

    def stop(self) -> bool:
        for service in self._services:
            service.shutdown("driver shutting down")
        self._services = []
        if self._thread is not None:
            return join_thread(self._thread, 1.0, owner="homing at start-up")
        return True
