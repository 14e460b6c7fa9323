"""Gravity feed-forward of :class:`~rospy_control.robot_hw.MiddlewareRobotHW` (docs/gravity.md).

Position commands become MIT frames ``kp (p_des - p) + kd (v_des - v) + t_ff``; with ``t_ff = 0`` a joint
settles where ``kp * error`` carries its load.  With ``<gravity_compensation>`` in the hardware XML,
every cycle the RobotHW computes, from the *measured* joint positions, the torque each joint needs to
hold against gravity (:class:`~rospy_control.dynamics.GravityModel` from the URDF, with the payload
estimate), maps it through each transmission to motor torque and sends it as ``t_ff`` with the
POSITION and VELOCITY commands.

Rules:

* only groups in POSITION or VELOCITY mode get it (a held joint included, since holding is POSITION
  mode); EFFORT commands are the controller's own torques, ``damping`` and ``none`` holds stay without
  (a limp joint must stay limp); a group with a motor in FAULT sends no feed-forward at all;
* each motor's share is clamped to its MIT torque range (``<limits t_min t_max>``), after each joint's
  torque was clamped to its effort limit (URDF ``<limit effort>`` / ``joint_limits``);
* ``<joint name="..." enabled="false"/>`` leaves a joint out (its torque is not sent); a non-finite
  measured position counts as 0 rad.

Cost: the model pass (about 10 µs on the example arm) plus one transmission mapping per group; the
buffers are allocated once.
"""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

from rospy_control.dynamics import GravityModel, GravityOptions
from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.robot_hw._records import Records

__all__ = ["GravityFeedForward", "build_feed_forward"]

logger = get_logger(__name__)

_isfinite = math.isfinite


class GravityFeedForward:
    """Per-cycle gravity torques of the groups of ``rec`` (see the module docstring).

    After :meth:`update`, each group's ``ff`` holds its motors' feed-forward (actuator side, N·m),
    or is None for a group left out entirely.
    """

    def __init__(self, model: GravityModel, rec: Records, options: GravityOptions) -> None:
        self.model = model
        self.options = options
        self._q = [0.0] * len(model.joint_names)
        self._inputs: List[Tuple[int, object]] = []
        self._groups: List[Tuple[object, List[int], List[float], List[float], List[Tuple[float, float]],
                                 List[float]]] = []
        for name, joint in rec.joints.items():
            i = model.index.get(name)
            if i is not None:
                self._inputs.append((i, joint.data))
        for g in rec.groups:
            idx = []
            effort = []
            for j in g.joints:
                i = model.index.get(j.name, -1)
                if j.name in options.disabled_joints:
                    i = -1
                idx.append(i)
                lim = j.limits
                effort.append(lim.max_effort if lim is not None and lim.has_effort_limits
                              and lim.max_effort > 0.0 else math.inf)
            if all(i < 0 for i in idx):
                g.ff = None
                continue
            bounds = []
            for a in g.actuators:
                bounds.append(a.motor.effort_range)
            g.ff = [0.0] * len(g.actuators)
            self._groups.append((g, idx, [0.0] * len(idx), effort, bounds, g.ff))

    @property
    def joint_names(self) -> List[str]:
        """The RobotHW joints that get feed-forward."""
        out: List[str] = []
        for g, idx, _, _, _, _ in self._groups:
            out.extend(j.name for j, i in zip(g.joints, idx) if i >= 0)  # type: ignore[attr-defined]
        return out

    def update(self) -> None:
        """Recompute every group's ``ff`` from the joints' measured positions (control thread)."""
        q = self._q
        for i, data in self._inputs:
            p = data.position  # type: ignore[attr-defined]
            q[i] = p if _isfinite(p) else 0.0
        tau = self.model.compute(q)
        for g, idx, jt, effort, bounds, ff in self._groups:
            for k, i in enumerate(idx):
                if i < 0:
                    jt[k] = 0.0
                    continue
                t = tau[i]
                e = effort[k]
                jt[k] = e if t > e else (-e if t < -e else t)
            act = g.transmission.joint_to_actuator_effort(jt)  # type: ignore[attr-defined]
            for k, t in enumerate(act):
                lo, hi = bounds[k]
                ff[k] = lo if t < lo else (hi if t > hi else (t if _isfinite(t) else 0.0))

    def torques(self) -> dict:
        """``{motor: feed-forward (N·m, actuator side)}`` as last computed (diagnostics, tests)."""
        out = {}
        for g, _, _, _, _, ff in self._groups:
            for a, t in zip(g.actuators, ff):  # type: ignore[attr-defined]
                out[a.name] = t
        return out


def build_feed_forward(urdf_text: str, urdf_source: str, rec: Records,
                       options: GravityOptions) -> Optional[GravityFeedForward]:
    """The feed-forward of ``rec`` as ``options`` ask (None: off).

    :raises ConfigError: a bad URDF inertial, a payload on an unknown link, an unknown joint in
        ``<gravity_compensation><joint name>``.
    """
    for g in rec.groups:
        g.ff = None
    if not options.enabled or not any(options.gravity):
        return None
    model = GravityModel.from_urdf(urdf_text, urdf_source, options.gravity, options.payloads)
    unknown = sorted(options.disabled_joints - set(rec.joints))
    if unknown:
        raise ConfigError(f"<gravity_compensation> ({options.where}): <joint name='{unknown[0]}'> is not a "
                          f"joint of this RobotHW (joints: {', '.join(sorted(rec.joints))})")
    ff = GravityFeedForward(model, rec, options)
    if not ff.joint_names:
        logger.warning("gravity compensation (%s): no joint of this RobotHW is in the model; off",
                       options.where)
        return None
    ff.update()
    logger.info("MiddlewareRobotHW: gravity feed-forward on %s (g = (%g, %g, %g), payload estimate %g kg)",
                ", ".join(ff.joint_names), *options.gravity, sum(p.mass for p in options.payloads))
    return ff
