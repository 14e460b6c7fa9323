"""What the driver's ``~reset_faults`` service does, without ROS (unit-testable).

:class:`FaultReset` resets every unit in FAULT through the RobotHW (which asks the middleware to
re-enable them and waits until each answered again or failed its probe), then waits until the
control loop has taken the recovered joints back: the RobotHW saw the recovery at a ``read``, the
controllers were restarted (``reset_controllers``) and a hold was written.  Only then does it
answer, so a goal sent right after a successful reply is accepted.

Any RobotHW: what is in fault and what is reset are its ``faulted_units()`` and
``reset_faults()`` (:class:`~rospy_control.hardware_interface.RobotHW`).

The answer is ``(success, message)`` as ``std_srvs/Trigger`` wants it: success when no unit is
left in FAULT; the message names the units that recovered and those still failing with the reason
(e.g. ``"still in FAULT: elbow_motor (reset failed: no reply to enter-motor-mode for 104 ms)"``).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from rospy_control.hardware_interface.robot_hw import RobotHW

from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["FaultReset"]


class FaultReset:
    """Resets faults through ``robot_hw`` and waits for ``loop`` to resume the recovered joints.

    :param robot_hw: the :class:`~rospy_control.hardware_interface.RobotHW` (its ``faulted_units``
        and ``reset_faults``; a ``CombinedRobotHW`` resets each of its parts).
    :param loop: the :class:`~rospy_control.control_loop.loop.ControlLoop` (``stats().cycles``,
        ``is_running()``), or None.
    :param settle_timeout: seconds to wait for the control loop after the middleware answered.
    """

    #: Default of ``settle_timeout``.
    SETTLE_TIMEOUT = 2.0

    def __init__(self, robot_hw: RobotHW, loop: Any = None, settle_timeout: Optional[float] = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.robot_hw = robot_hw
        self.loop = loop
        self.settle_timeout = self.SETTLE_TIMEOUT if settle_timeout is None else float(settle_timeout)
        self._clock = clock
        self._lock = threading.Lock()  # one reset at a time (two callers would race on the probes)

    def faults(self) -> Dict[str, str]:
        """``{unit: reason}`` of the units in FAULT now."""
        return dict(self.robot_hw.faulted_units())

    def reset(self, timeout: Optional[float] = None) -> Tuple[bool, str]:
        """Reset every unit in FAULT; ``(success, message)``."""
        with self._lock:
            before = self.faults()
            if not before:
                return True, "no unit is in FAULT; nothing to reset"
            logger.warning("reset_faults: resetting %s",
                           ", ".join(f"'{u}' ({r})" for u, r in sorted(before.items())))
            still = self.robot_hw.reset_faults(timeout=timeout)
            recovered = sorted(u for u in before if u not in still)
            settled = self._wait_for_loop(recovered) if recovered else True
            parts: List[str] = []
            if recovered:
                parts.append("recovered: " + ", ".join(recovered))
            if still:
                parts.append("still in FAULT: " + "; ".join(f"{u} ({r})" for u, r in sorted(still.items())))
            if not settled:
                parts.append("the control loop has not resumed the recovered joints yet")
            message = "; ".join(parts)
            ok = not still and settled
            (logger.info if ok else logger.error)("reset_faults: %s", message)
            return ok, message

    def _wait_for_loop(self, recovered: List[str]) -> bool:
        """Wait until the RobotHW no longer reports the recovered units in fault (it saw their recovery
        at a ``read``) and the loop ran two more cycles (the one that restarted the controllers and the
        one after it)."""
        loop = self.loop
        end = self._clock() + self.settle_timeout
        names = set(recovered)

        def joints_clear() -> bool:
            return not names.intersection(self.robot_hw.faulted_units())

        while not joints_clear():
            if self._clock() > end:
                return False
            time.sleep(0.002)
        if loop is None or not loop.is_running():
            return True
        target = loop.stats().cycles + 2
        while loop.stats().cycles < target:
            if self._clock() > end:
                return False
            time.sleep(0.002)
        return True
