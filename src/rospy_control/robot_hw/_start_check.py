"""Start-up position sanity of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` (``read()``, control
thread): a joint whose first reading lies outside its position limits is not started.

Many actuators (DaMiao, CyberGear / RobStride, AK, MyActuator, and any drive with an incremental or
single-turn encoder) keep their turn count only while powered: after a power cycle a joint can read a
whole turn of its actuator away from where it is.  A reading a hair beyond a limit is a joint resting
on its stop (:data:`~rospy_control.trajectory.limits.START_STATE_TOLERANCE`, the tolerance goals
get); beyond that, the joint's group is checked when it first becomes ready and again after every
recovery, before any command reaches it:

* in limits (within the tolerance): it starts as before;
* outside, where one or more turns of its actuator (the device's ``WRAP_PERIOD`` through the
  transmission) would put it inside: its motors are put in FAULT with a message naming the joint, the
  reading, the limits, the candidate reading and the ``zero_offset`` that fixes it; ``~reset_faults``
  checks again (after a power cycle near zero, or once the fix is in the hardware XML);
* with ``wrap="auto"`` on the actuator's ``<unit>`` and exactly one candidate inside the limits (the
  joint's travel is shorter than the ambiguity): the actuator's zero is moved by those turns, the
  joint starts from the corrected reading once the device reports it, and the log and the status
  (``/diagnostics``) say so.

Only a joint moved by one actuator (a simple transmission) has a candidate; a joint of a coupled
transmission outside its limits is refused without one.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

from rospy_control.hardware_interface import NOT_READY
from rospy_control.log import get_logger
from rospy_control.robot_hw._records import Actuator, Group, Joint
from rospy_control.trajectory.limits import START_STATE_TOLERANCE

__all__ = ["StartPositionCheck", "TURNS"]

logger = get_logger(__name__)

#: the most turns a candidate may be away (a multi-turn joint beyond this is refused without one)
TURNS = 8
#: reads a group waits for the device to report the corrected reading before it is refused
WRAP_WAIT_READS = 500


class StartPositionCheck:
    """Checks the groups :meth:`request` names at the next :meth:`run` (after the joints' positions of
    the read are computed).

    :ivar notes: ``{joint: text}`` of what the check did (a refusal's reason, a turn applied), for the
        status; replaced as a whole, so other threads may read it.
    """

    def __init__(self, tolerance: float = START_STATE_TOLERANCE) -> None:
        self.tolerance = tolerance
        self.notes: Dict[str, str] = {}
        #: ``{motor: reason}`` of the motors of the joints refused (until they start); replaced whole
        self.refused: Dict[str, str] = {}
        #: groups to check: (restart from the measured position once started, first time ready)
        self._pending: Dict[Group, Tuple[bool, bool]] = {}
        #: group name -> (joint, target reading, reads waited) while a turn is being applied
        self._wrapping: Dict[str, Tuple[Joint, float, int]] = {}
        #: groups whose reading a turn changed (they restart from the measured position)
        self._turned: set = set()
        #: ``{joint: position}`` read when its group went to FAULT (:meth:`remember`)
        self._last: Dict[str, float] = {}
        #: the groups that passed a check (their readings were in limits, or continued)
        self._passed: set = set()
        #: the last reply stamp :meth:`follow` saw per motor
        self._stamps: Dict[str, float] = {}

    def request(self, g: Group, reseed: bool, first: bool) -> None:
        """Check ``g`` before it is commanded: it just became ready (``first``), or recovered from a
        fault (``reseed``: it restarts from the measured position once started)."""
        old = self._pending.get(g, (False, False))
        self._pending[g] = (old[0] or reseed, old[1] or first)

    @property
    def pending(self) -> bool:
        """True when a group waits for its check."""
        return bool(self._pending)

    def holds(self, g: Group) -> bool:
        """True while ``g`` waits for a check or for a turn to be applied (it gets no commands)."""
        return g in self._pending

    def remember(self, g: Group) -> None:
        """``g`` went to FAULT: its joints' readings now are what a recovery's reading continues, unless
        the device lost turns meanwhile (a power cycle).  Only a group that had passed its check: a
        refused one's reading is what is in question."""
        if g.name not in self._passed:
            return
        for j in g.joints:
            if math.isfinite(j.data.position):
                self._last[j.name] = j.data.position

    def follow(self, g: Group) -> None:
        """``g`` is in FAULT: where its motors still report (a device error, not silence) its readings
        continue, so the latest one is what a recovery's reading continues (a joint sagging limp
        across its travel while its motor reports over-temperature).  A reading is taken only when
        every motor of the group sent a new reply since the last one."""
        if g.name not in self._passed or g.name not in self._live_from(g):
            return
        for j in g.joints:
            if math.isfinite(j.data.position):
                self._last[j.name] = j.data.position

    def _live_from(self, g: Group) -> Tuple[str, ...]:
        live = True
        for a in g.actuators:
            s = a.state
            stamp = s.stamp if s is not None and s.received else 0.0
            if not stamp or stamp == self._stamps.get(a.name):
                live = False
            self._stamps[a.name] = stamp
        return (g.name,) if live else ()

    def drop(self, g: Group) -> None:
        """Forget a pending check of ``g`` (its motors went to FAULT meanwhile)."""
        self._pending.pop(g, None)
        self._wrapping.pop(g.name, None)

    def run(self) -> List[Tuple[Group, bool, bool]]:
        """Check the pending groups; returns ``(group, reseed, first)`` of those that may start now."""
        started: List[Tuple[Group, bool, bool]] = []
        for g, (reseed, first) in list(self._pending.items()):
            verdict = self._check(g, first)
            if verdict is None:
                continue           # a turn is being applied: check again at the next read
            del self._pending[g]
            if not verdict:
                self._passed.discard(g.name)
            if verdict:
                self._passed.add(g.name)
                for j in g.joints:
                    self._last.pop(j.name, None)
                if any(a.name in self.refused for a in g.actuators):
                    self.refused = {k: v for k, v in self.refused.items()
                                    if k not in {a.name for a in g.actuators}}
                started.append((g, reseed or g.name in self._turned, first))
        return started

    # -- one group --------------------------------------------------------------------------------
    def _check(self, g: Group, first: bool = True) -> Optional[bool]:
        wrapping = self._wrapping.get(g.name)
        if wrapping is not None:
            return self._check_wrapped(g, *wrapping)
        for j in g.joints:
            lo, hi = _position_limits(j)
            q = j.data.position
            if lo is None or hi is None or not math.isfinite(q):
                continue
            if lo - self.tolerance <= q <= hi + self.tolerance:
                continue
            if not first and self._continues(g, j, q):
                # a joint that sagged past a limit while its motor was in FAULT (onto its stop, limp),
                # read by a device that kept its count: nothing to correct, it restarts holding there
                logger.warning("joint '%s' reads %.4f rad after its recovery, outside its position limits "
                               "[%.4f, %.4f]: the reading continues the one before the fault (%.4f), no turn "
                               "lost; it restarts holding there", j.name, q, lo, hi, self._last[j.name])
                continue
            return self._outside(g, j, q, lo, hi, "at start-up" if first else "after its recovery")
        return True

    def _continues(self, g: Group, j: Joint, q: float) -> bool:
        """The reading ``q`` after a recovery lies closer to the one before the fault than half the
        ambiguity (a turn of the actuator at the joint): the device did not lose a turn."""
        last = self._last.get(j.name)
        if last is None:
            return False
        one = _one_actuator(g)
        step = math.pi
        if one is not None:
            act, reduction = one
            step = float(getattr(act.motor, "WRAP_PERIOD", 2.0 * math.pi)) / abs(reduction)
        return abs(q - last) < 0.5 * step

    def _outside(self, g: Group, j: Joint, q: float, lo: float, hi: float,
                 when: str = "at start-up") -> Optional[bool]:
        tol = self.tolerance
        what = (f"joint '{j.name}' reads {q:.4f} rad {when}, outside its position limits "
                f"[{lo:.4f}, {hi:.4f}] by more than {tol:g} rad")
        one = _one_actuator(g)
        if one is None:
            return self._refuse(g, j, f"{what}; not started (a joint of a coupled transmission: check "
                                      "its actuators' zero_offset)")
        act, reduction = one
        motor = act.motor
        period = float(getattr(motor, "WRAP_PERIOD", 2.0 * math.pi))
        step = period / reduction
        inside = [(m, q + m * step) for m in range(-TURNS, TURNS + 1)
                  if m and lo - tol <= q + m * step <= hi + tol]
        if not inside:
            return self._refuse(g, j, f"{what}; no whole turn of motor '{act.name}' would put it inside: "
                                      "not started (check the joint's limits and the unit's zero_offset)")
        where = getattr(motor, "where", "") or "the hardware XML"
        fixes = []
        for m, qc in inside:
            z = motor.zero_offset - motor.direction * m * period
            fixes.append(f"{m:+d} turn(s) of motor '{act.name}' ({period:.4f} rad each at the motor) "
                         f"away it would read {qc:.4f} rad: if that is where the joint is, set "
                         f"zero_offset=\"{z:.6f}\" on <unit name=\"{act.name}\"> ({where})")
        if len(inside) == 1 and getattr(motor, "wrap", "off") == "auto":
            m, qc = inside[0]
            motor.shift_zero(-motor.direction * m * period)
            note = (f"{what}; wrap=\"auto\": {m:+d} turn(s) of motor '{act.name}' applied, the joint starts "
                    f"from {qc:.4f} rad (zero_offset {motor.zero_offset:.6f} -> "
                    f"{motor.zero_offset - motor.direction * m * period:.6f})")
            logger.warning("%s", note)
            self._note(j.name, note)
            self._wrapping[g.name] = (j, qc, 0)
            for jj in g.joints:
                jj.data.fault = f"{NOT_READY}applying one turn of motor '{act.name}' (wrap=\"auto\")"
            return None
        hint = "; ".join(fixes)
        if len(inside) == 1:
            hint += ", or wrap=\"auto\" there to apply it at start-up; then ~reset_faults"
        else:
            hint += " (more than one reading lies inside: wrap=\"auto\" cannot choose); then ~reset_faults"
        return self._refuse(g, j, f"{what}; not started: {hint}")

    def _check_wrapped(self, g: Group, j: Joint, target: float, waited: int) -> Optional[bool]:
        q = j.data.position
        lo, hi = _position_limits(j)
        assert lo is not None and hi is not None
        if math.isfinite(q) and abs(q - target) < 0.25 * abs(hi - lo) + self.tolerance:
            del self._wrapping[g.name]
            if lo - self.tolerance <= q <= hi + self.tolerance:
                logger.info("joint '%s': reads %.4f rad after the turn was applied; started", j.name, q)
                self._turned.add(g.name)
                return True
            return self._refuse(g, j, f"joint '{j.name}' reads {q:.4f} rad after a turn was applied "
                                      f"(wrap=\"auto\"), still outside its limits [{lo:.4f}, {hi:.4f}]; "
                                      "not started")
        if waited >= WRAP_WAIT_READS:
            del self._wrapping[g.name]
            return self._refuse(g, j, f"joint '{j.name}': the turn applied with wrap=\"auto\" did not "
                                      f"show in its reading ({q:.4f} rad, expected about {target:.4f}); "
                                      "not started")
        self._wrapping[g.name] = (j, target, waited + 1)
        return None

    def _refuse(self, g: Group, j: Joint, reason: str) -> bool:
        if self.notes.get(j.name) != reason:
            logger.error("%s", reason)
        self._note(j.name, reason)
        refused = dict(self.refused)
        for a in g.actuators:     # nothing is sent meanwhile: the group stays not ready until then
            a.motor.request_fault(reason)
            a.hold = a.data.position
            refused[a.name] = reason
        self.refused = refused
        for jj in g.joints:
            jj.data.fault = reason
        return False

    def _note(self, joint: str, text: str) -> None:
        notes = dict(self.notes)
        notes[joint] = text
        self.notes = notes


def _position_limits(j: Joint) -> Tuple[Optional[float], Optional[float]]:
    lim = j.limits
    if lim is None or not getattr(lim, "has_position_limits", False):
        return None, None
    if getattr(lim, "angle_wraparound", False):   # a continuous joint has no limits to be outside of
        return None, None
    lo, hi = float(lim.min_position), float(lim.max_position)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        return None, None
    return lo, hi


def _one_actuator(g: Group) -> Optional[Tuple[Actuator, float]]:
    """``(actuator, reduction)`` of a one-actuator, one-joint group whose joint moves ``1 / reduction``
    rad per rad of the actuator, else None."""
    if len(g.actuators) != 1 or len(g.joints) != 1:
        return None
    reduction = getattr(g.transmission, "reduction", None)
    if reduction is None:
        get = getattr(g.transmission, "get_mechanical_reduction", None)
        reduction = get() if callable(get) else None
    if not reduction:
        return None
    return g.actuators[0], float(reduction)
