"""Homing on demand in :class:`~rospy_control.robot_hw.MiddlewareRobotHW`.

A caller (the ``~home`` service, off the control thread) asks for units; the control thread, at its
next ``read()``, holds each unit's transmission group (no commands; its joints' ``fault`` says
``homing: ...``, so a trajectory controller refuses goals for them) and starts the unit's homing.
When the unit's homing ended, ok or not, the group restarts as after a fault: its reading is checked
against the joint limits (:mod:`._start_check`) and the controllers restart from the measured
position, which, after a homing, is counted from the new zero.

Nothing per cycle while no homing is asked for or running (``pending`` False).
"""
from __future__ import annotations

import threading
import time
from typing import Dict, List, Optional, Sequence, Set, Tuple

from rospy_control.devices.actuator import HomingState
from rospy_control.exceptions import HardwareError
from rospy_control.hardware_interface.robot_hw import HOMING
from rospy_control.log import get_logger
from rospy_control.robot_hw._records import Actuator, Group, Records

__all__ = ["HomingTracker", "HOMING"]

logger = get_logger(__name__)


class HomingTracker:
    """The homings of ``rec``'s actuators (see the module docstring).

    :ivar pending: a homing is asked for or runs (``read()`` calls :meth:`poll` only then)
    :ivar groups: the groups held for a homing now (the fault tracker leaves them held)
    """

    def __init__(self, rec: Records, start_check) -> None:
        self._actuators = {a.name: a for a in rec.actuators}
        self._check = start_check
        self._lock = threading.Lock()
        self._requests: List[str] = []
        #: unit -> (actuator, group, homing number) of the homings running (control thread)
        self._running: Dict[str, Tuple[Actuator, Group, int]] = {}
        #: unit -> its latest outcome, (ok, message), set by the control thread
        self.results: Dict[str, Tuple[bool, str]] = {}
        self.groups: Set[Group] = set()
        self.pending = False

    def homeable(self) -> List[str]:
        """The units that can home (their device's capability; a CiA 402 drive with ``<homing>``)."""
        return [n for n, a in self._actuators.items() if a.motor.CAPABILITIES.home]

    def at_start(self) -> List[str]:
        """The units whose configuration asks for a homing at start-up."""
        return [n for n in self.homeable()
                if getattr(getattr(self._actuators[n].motor, "homing", None), "at_start", False)]

    def request(self, units: List[str]) -> None:
        """Ask for the homing of ``units`` (any thread); the control thread starts them."""
        with self._lock:
            for u in units:
                self.results.pop(u, None)
                if u not in self._requests:
                    self._requests.append(u)
            self.pending = True

    def busy(self) -> List[str]:
        """The units asked for or homing now (any thread)."""
        with self._lock:
            return list(self._requests) + list(self._running)

    def home(self, units: Sequence[str], timeout: Optional[float] = None) -> Dict[str, Tuple[bool, str]]:
        """Home ``units`` and wait until each ended (any thread but the control thread): their groups get
        no commands meanwhile, and restart from the measured position (counted from the new zero) at
        the read that sees the end.

        :param timeout: s to wait; None: the longest of the units' own homing timeouts plus 5 s.
        :returns: ``{unit: (ok, message)}``.
        :raises HardwareError: a unit that cannot home.
        """
        can = self.homeable()
        unknown = [u for u in units if u not in can]
        if unknown:
            raise HardwareError(f"cannot home {', '.join(repr(u) for u in unknown)}: the units that can "
                                f"are {', '.join(can) or 'none (no <homing> in the hardware XML)'}")
        if timeout is None:
            timeout = 5.0 + max((getattr(self._actuators[u].motor, "homing").timeout for u in units),
                                default=0.0)
        self.request(list(units))
        return self.wait(list(units), timeout)

    def wait(self, units: List[str], timeout: float) -> Dict[str, Tuple[bool, str]]:
        """Block until every unit of ``units`` has an outcome (at most ``timeout`` s): ``{unit: (ok,
        message)}``, a unit without one reported as not ended."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if all(u in self.results for u in units):
                    break
            time.sleep(0.01)
        with self._lock:
            return {u: self.results.get(u, (False, f"homing did not end within {timeout:g} s"))
                    for u in units}

    # -- control thread (read) --------------------------------------------------------------------------
    def poll(self) -> None:
        with self._lock:
            requests, self._requests = self._requests, []
        for unit in requests:
            self._start(unit)
        for unit, (act, g, number) in list(self._running.items()):
            state: HomingState = act.motor.homing_state()
            if state.number != number or state.active:
                continue
            del self._running[unit]
            with self._lock:
                self.results[unit] = (bool(state.ok), state.message)
            if not any(other is g for _a, other, _n in self._running.values()):
                self._release(g)
        with self._lock:
            self.pending = bool(self._requests or self._running)

    def _start(self, unit: str) -> None:
        act = self._actuators[unit]
        g = act.group
        why: Optional[str] = None
        if g is None:
            why = "drives no joint"
        elif g.faulted or any(a.fault for a in g.actuators):
            why = "is in FAULT: reset it first (~reset_faults)"
        elif not g.ready and g not in self.groups:
            why = "is not running (not ready, or its joint was refused at start-up)"
        if why is not None:
            with self._lock:
                self.results[unit] = (False, f"not homed: '{unit}' {why}")
            return
        assert g is not None
        try:
            number = act.motor.request_home()
        except Exception as err:  # noqa: BLE001 - reported to the caller, the loop goes on
            with self._lock:
                self.results[unit] = (False, f"not homed: {err}")
            return
        self.groups.add(g)
        g.ready = False
        for j in g.joints:
            j.data.fault = f"{HOMING}unit '{unit}' is homing (~home); commands resume when it ends"
        self._running[unit] = (act, g, number)
        logger.info("joint(s) %s: homing '%s'", ", ".join(j.name for j in g.joints), unit)

    def _release(self, g: Group) -> None:
        self.groups.discard(g)
        if g.faulted:
            return           # the fault tracker restarts it when its fault is reset
        # as after a fault: its reading checked against the limits, then the controllers restart
        # from the measured position (run_checks in this same read)
        self._check.request(g, reseed=True, first=False)
