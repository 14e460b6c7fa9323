"""Fault book-keeping of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` (``read()``, control thread).

A group whose motor goes to FAULT stops commanding it; its healthy motors hold where they were
commanded (position mode) or measured.  When every motor of the group is back, the group restarts from
the measured position and the controllers are asked to restart (:meth:`FaultTracker.consume_reset_request`).

A group is *ready* once each of its motors has reported its position and confirmed it is enabled (or
faulted; a motor that only listens needs no enable).  Until then it gets no commands and its joints'
``fault`` says so (beginning with :data:`~rospy_control.hardware_interface.NOT_READY`): a trajectory
controller refuses goals for them instead of running one against a motor that cannot follow yet (a
CANopen drive still in its SDO configuration, an ODrive axis not yet in closed loop).  A group that
becomes ready after the controllers started restarts from the measured position as after a fault, so
no controller holds a position it took before the motor had reported one.  Readiness is latched: a
motor that later re-enables on its own (a firmware timeout after a host stall) is not "starting" again.
"""
from __future__ import annotations

from math import isfinite
from typing import Dict, Set

from rospy_control.hardware_interface import NOT_READY
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware import ControlMode
from rospy_control.robot_hw._records import Actuator, Records
from rospy_control.robot_hw._start_check import StartPositionCheck

__all__ = ["FaultTracker"]

logger = get_logger(__name__)


class FaultTracker:
    """Follows the fault and reply flags of the motors of ``rec`` (see the module docstring).

    :ivar faulted_joints: ``{joint: reason}`` of joints one of whose motors is in FAULT; replaced as a
        whole, so other threads may read it.
    """

    def __init__(self, rec: Records, throttle: Throttle) -> None:
        self._groups = rec.groups
        self._throttle = throttle
        self.faulted_joints: Dict[str, str] = {}
        #: the start-up position check of every group that becomes ready or recovers
        self.start_check = StartPositionCheck()
        self._reset_request = False
        #: the groups held for a homing (:mod:`._homing`): held until it ends, whatever their flags do
        self.homing: Set = set()
        #: set by the RobotHW after its first complete read: a group that becomes ready later restarts
        self.settled = False
        for g in self._groups:
            self._mark_starting(g)

    @staticmethod
    def _mark_starting(g) -> None:
        who = ", ".join(f"'{a.name}'" for a in g.actuators if not a.received)
        why = f"{NOT_READY}motor(s) {who} not enabled yet (starting up)"
        for j in g.joints:
            j.data.fault = why

    def actuator_changed(self, act: Actuator, s) -> None:
        """The motor's snapshot state ``s`` changed its ``fault`` flag, or its ``received`` flag
        differs from the actuator's readiness (``act.received``: position reported and enabled)."""
        act.received = s.received and (s.enabled or s.fault or not act.motor.active)
        act.fault = s.fault
        act.fault_reason = s.fault_reason
        g = act.group
        if g is None:
            return
        check = self.start_check
        held = check.holds(g)
        was_ready = g.ready or held
        ready = all(a.received for a in g.actuators)
        faulted = any(a.fault for a in g.actuators)
        if ready and not was_ready and not faulted and not g.faulted:
            # its first reading is checked against its limits before it is commanded (run_checks);
            # a group that becomes ready after the controllers started restarts from the measured
            # position (a faulted group restarts when its fault is reset, below)
            check.request(g, reseed=self.settled, first=True)
        if faulted and not g.faulted:
            check.drop(g)
            check.remember(g)
            g.faulted = True
            for a in g.actuators:
                sp = a.data.command_position
                a.hold = sp if g.mode == ControlMode.POSITION and isfinite(sp) else a.data.position
            self._throttle.ready(("fault", g.name))  # the transition is logged here; repeats every 5 s
            logger.error("joint(s) %s: motor '%s' went to FAULT: %s; commands to it are not sent until "
                         "the fault is reset (~reset_faults)", ", ".join(j.name for j in g.joints), act.name,
                         s.fault_reason)
        elif g.faulted and not faulted:
            g.faulted = False
            check.request(g, reseed=True, first=False)
            logger.warning("joint(s) %s: motors back from FAULT; commands resume from the measured position",
                           ", ".join(j.name for j in g.joints))
        g.ready = ready and not check.holds(g) and g not in self.homing
        self.faulted_joints = {
            j.name: "; ".join(f"motor '{a.name}': {a.fault_reason}" for a in grp.actuators if a.fault)
            for grp in self._groups if grp.faulted for j in grp.joints}
        # Controllers see it through JointStateHandle.get_fault() (the JTC aborts its goal).
        if not ready and not g.faulted:
            self._mark_starting(g)
            return
        if check.holds(g) or (g in self.homing and not g.faulted):
            return           # its joints say why until run_checks() starts or refuses it, or it homed
        for j in g.joints:
            j.data.fault = self.faulted_joints.get(j.name)

    def follow(self) -> None:
        """Every read while a group is in FAULT (:meth:`StartPositionCheck.follow`)."""
        for g in self._groups:
            if g.faulted:
                self.start_check.follow(g)

    def run_checks(self) -> None:
        """After the read computed the joints' positions: the start-up check of the groups that became
        ready or recovered (:mod:`._start_check`); a group that passes starts now."""
        for g, reseed, first in self.start_check.run():
            g.ready = True
            for j in g.joints:
                j.data.fault = self.faulted_joints.get(j.name)
            if reseed:
                g.reseed = True
                self._reset_request = True
                if first and self.settled:
                    logger.info("joint(s) %s: motors enabled; commands start from the measured position",
                                ", ".join(j.name for j in g.joints))

    def consume_reset_request(self) -> bool:
        """True once after a faulted group recovered."""
        request, self._reset_request = self._reset_request, False
        return request
