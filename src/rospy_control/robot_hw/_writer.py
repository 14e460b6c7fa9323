"""The write path of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` (control thread, real-time).

Per transmission group: replace non-finite joint commands by the hold value, enforce the limits of each
joint's active interface, map joint -> actuator with the group's transmission, hand the commands of
the group's mode to the motors (non-blocking).  A group whose motors have not answered yet gets
nothing; in a faulted group only the healthy motors get commands, and they hold.
"""
from __future__ import annotations

import math
from typing import Optional

from rospy_control.joint_limits import PositionJointSaturationHandle
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware import ControlMode
from rospy_control.robot_hw._records import Group, Joint, Records
from rospy_control.transmission_interface import SimpleTransmission

__all__ = ["Writer"]

logger = get_logger(__name__)

_isfinite = math.isfinite
_POSITION = ControlMode.POSITION


def simple_plan(g: Group) -> Optional[tuple]:
    """What :meth:`Writer.write` needs, bound once, to command a group of the common case in position
    mode: one joint and one motor behind a :class:`SimpleTransmission`, whose position interface has
    no limit handle or only the saturation handle (soft limits take the general path).  None: the
    group takes the general path."""
    if len(g.joints) != 1 or len(g.actuators) != 1 or type(g.transmission) is not SimpleTransmission:
        return None
    j = g.joints[0]
    handles = j.handles.get("position")
    if handles is None or len(handles) > 1:
        return None
    sat = handles[0] if handles else None
    if sat is not None and type(sat) is not PositionJointSaturationHandle:
        return None
    a = g.actuators[0]
    return j, j.data, sat, g.transmission, a, a.data, a.motor.position_setter()


class Writer:
    """Writes the commands of the groups of ``rec``; ``throttle`` limits its logs (shared with the
    fault tracker, which logs the transition to FAULT under the same key)."""

    def __init__(self, rec: Records, throttle: Throttle) -> None:
        self._groups = rec.groups
        self._hold_mode = rec.hold_mode
        self._throttle = throttle
        self._gravity = rec.gravity
        for g in rec.groups:
            g.simple = simple_plan(g)

    def write(self, period: float) -> None:
        """One cycle of commands.  Never blocks or raises."""
        if self._gravity is not None:
            self._gravity.update()  # from the positions read() measured this cycle
        for g in self._groups:
            if not g.ready:
                continue
            if g.faulted:
                self._write_faulted(g)
                continue
            if g.reseed:
                g.reseed = False
                for j in g.joints:
                    j.reseed(g.mode)
            mode = g.mode
            if mode is _POSITION:
                plan = g.simple
                if plan is not None and plan[0].kind == "position":
                    # the common case inline (per joint and cycle): one joint, a position interface,
                    # a 1:1 transmission, at most the saturation handle -- the steps of
                    # _write_position with the same values, without its lists and calls
                    j, d, sat, tr, a, ad, send = plan
                    c = d.command_position
                    if not _isfinite(c):
                        c = d.command_position = self._nan_hold(j)
                    if sat is not None:
                        c = d.command_position = sat.saturate(c, d.position, period)
                    j.setpoint = c
                    ap = (float(c) - tr.joint_offset) * tr.reduction
                    if not _isfinite(ap):  # cannot happen with a finite joint value; never send it
                        self._warn_nan(a, "actuator position")
                        continue
                    ad.command_position = ap
                    ad.command_velocity = 0.0
                    ff = g.ff
                    if ff is not None and ff[0]:
                        a.motor.set_position(ap, 0.0, ff[0])   # gravity feed-forward (see ._gravity)
                    else:
                        send(ap)
                    continue
                self._write_position(g, period)
            elif mode == ControlMode.VELOCITY:
                self._write_scalar(g, period, "velocity", "command_velocity")
            elif mode == ControlMode.EFFORT:
                self._write_scalar(g, period, "effort", "command_effort")
            else:
                for a in g.actuators:
                    a.send_neutral(mode)

    def _write_position(self, g: Group, period: float) -> None:
        tr = g.transmission
        pos, vel = g.buf
        feed_forward = False
        for i, j in enumerate(g.joints):
            d = j.data
            kind = j.kind
            if kind is None:
                h = j.hold
                if h != h:
                    h = j.hold = d.position
                pos[i] = j.setpoint = h
                vel[i] = 0.0
                continue
            if not _isfinite(d.command_position):
                d.command_position = self._nan_hold(j)
            if kind == "posvel" and not _isfinite(d.command_velocity):
                self._warn_nan(j, "velocity")
                d.command_velocity = 0.0
            for h in j.handles[kind]:
                h.enforce_limits(period)
            pos[i] = j.setpoint = d.command_position
            if kind == "posvel":
                v = vel[i] = d.command_velocity
                if v:
                    feed_forward = True
            else:
                vel[i] = 0.0
        if type(tr) is SimpleTransmission:
            # the common 1:1 case without the general method's argument checks (the same arithmetic)
            red = tr.reduction
            act_pos = [(float(pos[0]) - tr.joint_offset) * red]
            act_vel = [float(vel[0]) * red] if feed_forward else None
        else:
            act_pos = tr.joint_to_actuator_position(pos)
            act_vel = tr.joint_to_actuator_velocity(vel) if feed_forward else None
        ff = g.ff
        for i, a in enumerate(g.actuators):
            p = act_pos[i]
            if not _isfinite(p):  # cannot happen with finite joint values; never send it anyway
                self._warn_nan(a, "actuator position")
                continue
            ad = a.data
            ad.command_position = p
            tau = ff[i] if ff is not None else 0.0   # gravity feed-forward (see ._gravity)
            if act_vel is not None and _isfinite(act_vel[i]):
                ad.command_velocity = act_vel[i]
                a.motor.set_position(p, act_vel[i], tau)
            else:
                ad.command_velocity = 0.0
                if tau:
                    a.motor.set_position(p, 0.0, tau)
                else:
                    a.motor.set_command(ControlMode.POSITION, p)

    def _write_scalar(self, g: Group, period: float, kind: str, field: str) -> None:
        values = g.buf[0]
        for i, j in enumerate(g.joints):
            if j.kind is None:
                values[i] = 0.0
                continue
            d = j.data
            if not _isfinite(getattr(d, field)):
                self._warn_nan(j, kind)
                setattr(d, field, 0.0)
            for h in j.handles[kind]:
                h.enforce_limits(period)
            values[i] = getattr(d, field)
        tr = g.transmission
        if kind == "velocity":
            out = tr.joint_to_actuator_velocity(values)
            mode = ControlMode.VELOCITY
        else:
            out = tr.joint_to_actuator_effort(values)
            mode = ControlMode.EFFORT
        ff = g.ff if mode == ControlMode.VELOCITY else None
        for i, a in enumerate(g.actuators):
            v = out[i]
            if not _isfinite(v):
                self._warn_nan(a, "actuator " + kind)
                v = 0.0
            setattr(a.data, field, v)
            if ff is not None:
                a.motor.set_command(mode, v, ff[i])   # velocity + gravity feed-forward
            else:
                a.motor.set_command(mode, v)

    def _write_faulted(self, g: Group) -> None:
        if self._throttle.ready(("fault", g.name)):
            faults = ", ".join(f"'{a.name}' ({a.fault_reason})" for a in g.actuators if a.fault)
            logger.error("joint(s) %s: motor(s) %s in FAULT; their commands are not sent",
                         ", ".join(j.name for j in g.joints), faults)
        for a in g.actuators:
            if a.fault:
                continue
            if self._hold_mode == ControlMode.POSITION:
                if a.hold != a.hold:
                    a.hold = a.data.position
                a.motor.set_command(ControlMode.POSITION, a.hold)
            else:
                a.send_neutral(self._hold_mode)

    def _nan_hold(self, j: Joint) -> float:
        self._warn_nan(j, "position")
        sp = j.setpoint
        return sp if _isfinite(sp) else j.data.position

    def _warn_nan(self, who, what: str) -> None:
        if self._throttle.ready(("nan", who.name, what)):
            logger.warning("'%s': non-finite %s command replaced by the hold value (not sent)",
                           who.name, what)
