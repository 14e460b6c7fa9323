"""Controller switching of :class:`~rospy_control.robot_hw.MiddlewareRobotHW`: which controller commands
which joint through which interface, the motor mode of each transmission group that follows, and the
confirmations a switch waits for (the rules are in :mod:`rospy_control.robot_hw`, "Mode switching").

Threads: ``do_switch`` / ``result`` run on the control thread, ``prepare`` may run on another one.
It only reads :attr:`SwitchPlanner.running` and :attr:`SwitchPlanner.switch`, which the control
thread replaces as a whole, never changes in place.
"""
from __future__ import annotations

from typing import Dict, Iterable, Iterator, List, Optional, Sequence, Set, Tuple

from rospy_control.hardware_interface import ControllerInfo, SwitchState
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware import ActuatorUnit, ControlMode
from rospy_control.robot_hw._records import KIND_BY_NAME, KIND_INTERFACES, KIND_MODE, Group, Joint, Records

__all__ = ["SwitchPlanner"]

logger = get_logger(__name__)


class _Switch:
    """Book-keeping of the last ``do_switch`` until ``switch_result`` reports it finished."""

    __slots__ = ("pending", "starts", "deferred", "error", "done", "failed", "finished")

    def __init__(self, error: Optional[str] = None) -> None:
        self.pending: Dict[str, Tuple[ActuatorUnit, ControlMode]] = {}
        self.starts: Dict[str, Set[str]] = {}     # controller -> motors it waits for
        # motor -> fault reason: in FAULT at or during the switch; it takes the new mode when
        # ~reset_faults brings it back (a dead motor never blocks the controllers of healthy joints)
        self.deferred: Dict[str, str] = {}
        self.error = error
        self.done: Set[str] = set()
        self.failed: Set[str] = set()
        self.finished = error is not None


class SwitchPlanner:
    """Switching over the joints and groups of ``rec``.

    :ivar running: the controllers commanding joints, by name (replaced as a whole).
    :ivar switch: the last switch's book-keeping, None before the first one (replaced as a whole).
    """

    def __init__(self, rec: Records, throttle: Throttle) -> None:
        self._joints = rec.joints
        self._groups = rec.groups
        self._hold_mode = rec.hold_mode
        self._throttle = throttle
        self.running: Dict[str, ControllerInfo] = {}
        self.switch: Optional[_Switch] = None

    # -- planning (no side effects) ------------------------------------------------------------------
    def plan(self, infos: Iterable[ControllerInfo]) -> Tuple[Dict[str, Tuple[str, str]], List[str]]:
        """joint -> (controller, kind) for the controllers ``infos`` running, and the problems."""
        claims: Dict[str, List[Tuple[str, str, str]]] = {}
        errors: List[str] = []
        for info in infos:
            for iface, kind, j in self._claimed_joints(info):
                if kind not in j.kinds:
                    offered = ", ".join(KIND_INTERFACES[k].TYPE_NAME for k in j.kinds) or "none"
                    errors.append(f"controller '{info.name}' needs '{iface}' for joint '{j.name}', which its "
                                  f"transmission '{j.group.name}' does not offer (offered: {offered})")
                    continue
                claims.setdefault(j.name, []).append((info.name, kind, iface))
        owners: Dict[str, Tuple[str, str]] = {}
        for name, users in claims.items():
            if len(users) > 1:
                errors.append(f"joint '{name}' would be commanded through {len(users)} interfaces at once: "
                              + ", ".join(f"'{c}' via '{iface}'" for c, _, iface in users))
            owners[name] = users[0][:2]
        for g in self._groups:
            modes: Dict[ControlMode, List[str]] = {}
            for j in g.joints:
                owner = owners.get(j.name)
                if owner is not None:
                    modes.setdefault(KIND_MODE[owner[1]], []).append(f"'{j.name}' ({owner[1]})")
            if len(modes) > 1:
                errors.append(
                    f"joints {', '.join(n for names in modes.values() for n in names)} share transmission "
                    f"'{g.name}' whose motors ({', '.join(a.name for a in g.actuators)}) run one control "
                    "mode at a time; command them through interfaces of the same mode")
        return owners, errors

    def _claimed_joints(self, info: ControllerInfo) -> Iterator[Tuple[str, str, Joint]]:
        """(interface name, kind, joint) of each joint of ours that ``info`` claims through a joint
        command interface, in name order per interface."""
        for res in info.claimed_resources:
            kind = KIND_BY_NAME.get(res.hardware_interface)
            if kind is None:
                continue
            for name in sorted(res.resources):
                j = self._joints.get(name)
                if j is not None:
                    yield res.hardware_interface, kind, j

    def _effective_running(self) -> Dict[str, ControllerInfo]:
        sw = self.switch
        if sw is None or sw.finished:
            return self.running
        # the previous switch never finished: its caller gave up (timeout), so its starts are not running
        stale = set(sw.starts) - sw.done
        return {n: i for n, i in self.running.items() if n not in stale}

    def _after(self, start_list: Sequence[ControllerInfo],
               stop_list: Sequence[ControllerInfo]) -> Dict[str, ControllerInfo]:
        stops = {i.name for i in stop_list}
        running = {n: i for n, i in self._effective_running().items() if n not in stops}
        for info in start_list:
            running[info.name] = info
        return running

    def prepare(self, start_list: Sequence[ControllerInfo], stop_list: Sequence[ControllerInfo]) -> bool:
        """False, with each reason logged, if the switch is not possible; warns about started controllers
        whose joints have a motor in FAULT (they do not veto)."""
        _, errors = self.plan(self._after(start_list, stop_list).values())
        for info in start_list:
            for _, _, j in self._claimed_joints(info):
                for a in j.group.actuators:
                    if a.motor.fault and self._throttle.ready(("start-fault", info.name, j.name)):
                        logger.warning("controller '%s' starts with joint '%s' in FAULT (motor '%s': %s): "
                                       "the joint gets no commands until the fault is reset (~reset_faults), "
                                       "then it holds", info.name, j.name, a.name, a.motor.fault_reason)
        for err in errors:
            logger.error("Rejecting the controller switch: %s", err)
        return not errors

    # -- applying (control thread) ------------------------------------------------------------------
    def do_switch(self, start_list: Sequence[ControllerInfo], stop_list: Sequence[ControllerInfo]) -> None:
        """New owners and interfaces per joint, motor modes per group, seeded commands; a neutral frame
        in the new mode to each healthy motor whose mode changed."""
        running = self._after(start_list, stop_list)
        _, errors = self.plan(running.values())
        if errors:
            for err in errors:
                logger.error("do_switch refused: %s", err)
            sw = _Switch(error="; ".join(errors))
            sw.starts = {i.name: set() for i in start_list}
            sw.failed = set(sw.starts)
            self.switch = sw
            return
        changed = self._apply(running)
        sw = _Switch()
        for info in start_list:
            motors: Set[str] = set()
            for name in info.all_resources():
                j = self._joints.get(name)
                if j is not None:
                    motors.update(a.name for a in j.group.actuators)
            sw.starts[info.name] = motors
        for g in changed:
            for a in g.actuators:
                if a.motor.fault:
                    sw.deferred[a.name] = a.motor.fault_reason
                else:
                    sw.pending[a.name] = (a.motor, g.mode)
                    if g.ready and not g.faulted:  # without a measured position there is nothing to hold
                        a.send_neutral(g.mode)
        sw.finished = not sw.pending
        self.switch = sw
        if changed:
            logger.info("switch: %s", "; ".join(
                f"transmission '{g.name}' -> {g.mode.name} ({', '.join(a.name for a in g.actuators)})"
                for g in changed))

    def _apply(self, running: Dict[str, ControllerInfo]) -> List[Group]:
        """Make ``running`` the commanding controllers; return the groups whose motor mode changed."""
        owners, _ = self.plan(running.values())
        changed: List[Group] = []
        for g in self._groups:
            new = [owners.get(j.name, (None, None)) for j in g.joints]
            switched = [(j.owner, j.kind) != o for j, o in zip(g.joints, new)]
            if not any(switched):
                continue
            old_mode = g.mode
            modes = {KIND_MODE[k] for _, k in new if k is not None}
            new_mode = modes.pop() if modes else self._hold_mode
            for j, (owner, kind), sw in zip(g.joints, new, switched):
                j.owner, j.kind = owner, kind
                if sw or (new_mode != old_mode and kind is None):
                    j.reseed(old_mode)
            g.mode = new_mode
            if new_mode != old_mode:
                changed.append(g)
        self.running = running
        return changed

    def result(self, info: Optional[ControllerInfo] = None) -> SwitchState:
        """The state of the last switch, of all its motors or of ``info``'s (see
        :meth:`rospy_control.robot_hw.MiddlewareRobotHW.switch_result`)."""
        sw = self.switch
        if sw is None:
            return SwitchState.DONE
        if sw.error is not None:
            if info is None or info.name in sw.failed:
                return SwitchState.ERROR
            return SwitchState.DONE
        if sw.pending:
            for name, (motor, mode) in list(sw.pending.items()):
                if motor.fault:
                    sw.deferred[name] = motor.fault_reason
                    del sw.pending[name]
                    logger.warning("switch: motor '%s' went to FAULT before confirming %s (%s); its joints "
                                   "take the new mode when the fault is reset", name, mode.name,
                                   motor.fault_reason)
                elif motor.mode_confirmed(mode):
                    del sw.pending[name]
        if info is None:
            if sw.pending:
                return SwitchState.ONGOING
            sw.finished = True
            sw.done.update(set(sw.starts) - sw.failed)
            return SwitchState.DONE
        motors = sw.starts.get(info.name)
        if motors is None or info.name in sw.done:
            return SwitchState.DONE
        if info.name in sw.failed:
            return SwitchState.ERROR
        if any(m in sw.pending for m in motors):
            return SwitchState.ONGOING
        sw.done.add(info.name)
        if len(sw.done) + len(sw.failed) >= len(sw.starts):
            sw.finished = True
        return SwitchState.DONE

    def status(self) -> dict:
        """The last switch for diagnostics: finished, pending motors, error, deferred motors."""
        sw = self.switch
        if sw is None:
            return {"finished": True, "pending": [], "error": None}
        return {"finished": sw.finished, "pending": sorted(sw.pending), "error": sw.error,
                "deferred": dict(sw.deferred)}
