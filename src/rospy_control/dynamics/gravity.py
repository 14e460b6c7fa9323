"""Static gravity torques of a URDF kinematic tree (ROS-free).

:class:`GravityModel` reads the links' ``<inertial>`` (mass, origin) and the joints (revolute,
continuous, prismatic, fixed; origin xyz/rpy, axis, mimic) of any tree and gives, at a pose, the
torque (N·m; N for prismatic joints) each joint must apply to hold the robot still against gravity:
the ``g(q)`` of ``M(q) q'' + C(q, q') q' + g(q) = tau``.  That is a recursive Newton-Euler pass at zero
velocity and acceleration:

* forward, root to leaves: the gravity vector expressed in every link's frame,
  ``g_child = R_joint(q)^T g_parent`` (a zero-velocity pass propagates only the base acceleration,
  ``-g``);
* backward, leaves to root: each subtree's mass ``M`` and first mass moment ``h`` (``sum m_k c_k``,
  in the frame of the subtree's root link), ``h_parent += m_child_sub p_joint + R_joint(q) h_child``;
  the subtree's weight is ``M g`` and its moment about the joint origin ``h x M``-weighted ``g``, so

  ``tau_revolute = -axis . (h_child x g_child)``,  ``tau_prismatic = -axis . (M_child g_child)``.

Units: metres, kilograms, radians, m/s^2.  The inertia tensors and the inertial ``rpy`` do not matter
for a static load (only the centre of mass does); they are read and checked, not used.

Design for a 200-500 Hz control loop: everything that does not depend on the pose is computed once
(numpy: rpy matrices, normalised axes, lumped masses, fixed joints folded into their parent link,
massless subtrees dropped); the per-pose pass runs on Python floats over precomputed tuples, because on
3-vectors numpy's per-call cost (about 1 µs) is larger than the arithmetic itself.  On the example arm
it costs about 15 µs.

Mimic joints take ``multiplier * q_master + offset`` and their torque is carried by the master joint
(virtual work: ``tau_master += multiplier * tau_mimic``).  ``floating`` and ``planar`` joints are
treated as fixed at zero (the model's root is fixed in the world).
"""
from __future__ import annotations

import math
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from rospy_control.exceptions import ConfigError
from rospy_control.urdf import parse_urdf

__all__ = ["GravityModel", "Payload", "STANDARD_GRAVITY", "rpy_matrix"]

#: m/s^2, pointing down the world's -z
STANDARD_GRAVITY = (0.0, 0.0, -9.80665)

_MOVABLE = ("revolute", "continuous", "prismatic")
_Vec = Tuple[float, float, float]


class Payload(NamedTuple):
    """A point mass rigidly attached to a link (kg; ``xyz`` in the link's frame, m)."""

    link: str
    mass: float
    xyz: _Vec = (0.0, 0.0, 0.0)


def rpy_matrix(rpy: Union[Sequence[float], np.ndarray]) -> np.ndarray:
    """URDF fixed-axis roll, pitch, yaw -> rotation matrix ``Rz(yaw) Ry(pitch) Rx(roll)``."""
    r, p, y = (float(v) for v in rpy)
    cr, sr, cp, sp, cy, sy = math.cos(r), math.sin(r), math.cos(p), math.sin(p), math.cos(y), math.sin(y)
    return np.array([[cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
                     [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
                     [-sp, cp * sr, cp * cr]])


def _vec(el, attr: str, default: str, source: str) -> np.ndarray:
    text = el.get(attr, default) if el is not None else default
    try:
        v = np.array([float(x) for x in text.split()])
    except ValueError:
        v = np.zeros(0)
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise ConfigError(f"<{el.tag}> attribute '{attr}'='{text}': expected three finite numbers",
                          source, el.sourceline)
    return v


class _Link:
    __slots__ = ("name", "mass", "moment")

    def __init__(self, name: str, mass: float, moment: np.ndarray) -> None:
        self.name = name
        self.mass = mass          # kg, lumped (folded fixed children and payloads included)
        self.moment = moment      # sum m_k c_k in this link's frame (kg m)


class _Joint:
    __slots__ = ("name", "type", "parent", "child", "xyz", "rot", "axis", "mimic")

    def __init__(self, name, jtype, parent, child, xyz, rot, axis, mimic) -> None:
        self.name = name
        self.type = jtype
        self.parent = parent
        self.child = child
        self.xyz = xyz            # joint origin in the parent link's frame
        self.rot = rot            # 3x3 rotation of the origin
        self.axis = axis          # unit axis in the joint frame
        self.mimic: Optional[Tuple[str, float, float]] = mimic


class GravityModel:
    """Holding torques against gravity of a URDF tree (see the module docstring).

    Build it with :meth:`from_urdf`.  ``joint_names`` are the movable joints (revolute, continuous,
    prismatic) in tree order; :meth:`torques` takes their positions in that order, or a mapping.

    :ivar joint_names: movable joints, root first.
    :ivar gravity: the gravity vector in the root link's frame (m/s^2).
    """

    def __init__(self, links: Dict[str, _Link], joints: List[_Joint], root: str,
                 gravity: Sequence[float] = STANDARD_GRAVITY, source: str = "robot_description") -> None:
        self.source = source
        self.root = root
        self._links = links
        self._joints = joints
        self.joint_names: List[str] = [j.name for j in joints if j.type in _MOVABLE]
        self.index: Dict[str, int] = {n: i for i, n in enumerate(self.joint_names)}
        self.gravity: _Vec = (0.0, 0.0, 0.0)
        self.set_gravity(gravity)
        self._compile()

    # -- construction -------------------------------------------------------------------------------
    @classmethod
    def from_urdf(cls, urdf: Union[str, bytes], source: str = "robot_description",
                  gravity: Sequence[float] = STANDARD_GRAVITY,
                  payloads: Sequence[Payload] = ()) -> "GravityModel":
        """Parse ``urdf`` (text) and build the model.

        :param payloads: extra point masses the URDF does not know (a tool, a carried object).
        :raises ConfigError: not a URDF, not a tree (several roots, a link with two parents, a cycle),
            a bad number, a negative mass, a zero axis, a payload on an unknown link.
        """
        root_el = parse_urdf(urdf, source)
        links: Dict[str, _Link] = {}
        for el in root_el.findall("link"):
            name = el.get("name")
            if not name:
                raise ConfigError("<link> without a name", source, el.sourceline)
            mass, moment = 0.0, np.zeros(3)
            inertial = el.find("inertial")
            if inertial is not None:
                m_el = inertial.find("mass")
                try:
                    mass = float(m_el.get("value")) if m_el is not None else 0.0
                except (TypeError, ValueError):
                    mass = float("nan")
                if not (math.isfinite(mass) and mass >= 0.0):
                    raise ConfigError(f"link '{name}': <mass value> must be a number >= 0", source,
                                      inertial.sourceline)
                origin = inertial.find("origin")
                com = _vec(origin, "xyz", "0 0 0", source) if origin is not None else np.zeros(3)
                if origin is not None:
                    _vec(origin, "rpy", "0 0 0", source)  # checked; orientation does not matter here
                moment = mass * com
            links[name] = _Link(name, mass, moment)
        joints: List[_Joint] = []
        parent_of: Dict[str, str] = {}
        for el in root_el.findall("joint"):
            name, jtype = el.get("name"), el.get("type")
            p_el, c_el = el.find("parent"), el.find("child")
            if not name or not jtype or p_el is None or c_el is None:
                raise ConfigError("<joint> needs a name, a type, <parent link> and <child link>", source,
                                  el.sourceline)
            parent, child = p_el.get("link"), c_el.get("link")
            for link in (parent, child):
                if link not in links:
                    raise ConfigError(f"joint '{name}': link '{link}' is not a <link> of the URDF", source,
                                      el.sourceline)
            if child in parent_of:
                raise ConfigError(f"joint '{name}': link '{child}' already has parent joint "
                                  f"'{parent_of[child]}' (not a tree)", source, el.sourceline)
            parent_of[child] = name
            origin = el.find("origin")
            xyz = _vec(origin, "xyz", "0 0 0", source) if origin is not None else np.zeros(3)
            rpy = _vec(origin, "rpy", "0 0 0", source) if origin is not None else np.zeros(3)
            axis_el = el.find("axis")
            axis = _vec(axis_el, "xyz", "1 0 0", source) if axis_el is not None else np.array([1.0, 0, 0])
            norm = float(np.linalg.norm(axis))
            if jtype in _MOVABLE and norm < 1e-9:
                raise ConfigError(f"joint '{name}': <axis xyz> is zero", source, el.sourceline)
            mimic = None
            mimic_el = el.find("mimic")
            if mimic_el is not None and jtype in _MOVABLE:
                try:
                    mimic = (mimic_el.get("joint"), float(mimic_el.get("multiplier", "1")),
                             float(mimic_el.get("offset", "0")))
                except ValueError:
                    raise ConfigError(f"joint '{name}': bad <mimic> multiplier/offset", source,
                                      mimic_el.sourceline) from None
            kind = jtype if jtype in _MOVABLE else "fixed"
            joints.append(_Joint(name, kind, parent, child, xyz, rpy_matrix(rpy),
                                 axis / norm if norm else axis, mimic))
        roots = [n for n in links if n not in parent_of]
        if len(roots) != 1:
            raise ConfigError(f"the URDF must be one tree with one root link; roots: {', '.join(roots)}",
                              source)
        # tree order (root first); anything not reached sits on a cycle
        children: Dict[str, List[_Joint]] = {}
        for j in joints:
            children.setdefault(j.parent, []).append(j)
        ordered: List[_Joint] = []
        stack = [roots[0]]
        while stack:
            link = stack.pop()
            for j in reversed(children.get(link, [])):
                ordered.append(j)
                stack.append(j.child)
        if len(ordered) != len(joints):
            raise ConfigError("the URDF's joints form a cycle", source)
        for p in payloads:
            if p.link not in links:
                raise ConfigError(f"payload of {p.mass} kg: link '{p.link}' is not a <link> of the URDF "
                                  f"({source})", source)
            if not (math.isfinite(p.mass) and p.mass >= 0.0):
                raise ConfigError(f"payload on link '{p.link}': mass must be >= 0, got {p.mass}", source)
            links[p.link].mass += p.mass
            links[p.link].moment = links[p.link].moment + p.mass * np.asarray(p.xyz, dtype=float)
        return cls(links, ordered, roots[0], gravity, source)

    def set_gravity(self, gravity: Sequence[float]) -> None:
        """The gravity vector in the root link's frame (m/s^2; ``(0, 0, 0)`` switches the model off)."""
        g = tuple(float(v) for v in gravity)
        if len(g) != 3 or not all(math.isfinite(v) for v in g):
            raise ConfigError(f"gravity must be three finite numbers, got {gravity!r}", self.source)
        self.gravity = (g[0], g[1], g[2])

    def _compile(self) -> None:
        """Fold fixed joints into their parent link, drop massless subtrees, and flatten the rest into
        tuples of floats for :meth:`torques`."""
        links = {n: _Link(n, lk.mass, lk.moment.copy()) for n, lk in self._links.items()}
        # fold fixed joints, leaves first: a fixed child's mass moves into the parent's frame
        host = {self.root: self.root}      # link -> the link it is folded into
        xf: Dict[str, Tuple[np.ndarray, np.ndarray]] = {self.root: (np.eye(3), np.zeros(3))}
        for j in self._joints:
            if j.type == "fixed":
                h = host[j.parent]
                R, p = xf[j.parent]
                host[j.child] = h
                xf[j.child] = (R @ j.rot, p + R @ j.xyz)
            else:
                host[j.child] = j.child
                xf[j.child] = (np.eye(3), np.zeros(3))
        for j in reversed(self._joints):
            if j.type == "fixed":
                child = links[j.child]
                R, p = xf[j.child]
                # express the child's lumped mass (its own frame) in its host's frame
                target = links[host[j.child]]
                target.mass += child.mass
                target.moment = target.moment + R @ child.moment + child.mass * p
                child.mass, child.moment = 0.0, np.zeros(3)
        movable = [j for j in self._joints if j.type != "fixed"]
        # subtree masses (for dropping massless subtrees)
        sub = {n: links[n].mass for n in links}
        for j in reversed(movable):
            sub[host[j.parent]] += sub[j.child]
        steps = []
        slot = {self.root: 0}
        for j in movable:
            parent = host[j.parent]
            R, p = xf[j.parent]
            rot, xyz = R @ j.rot, p + R @ j.xyz   # origin relative to the host link's frame
            keep = sub[j.child] > 0.0
            slot[j.child] = len(slot)
            ident = bool(np.allclose(rot, np.eye(3), atol=1e-12))
            ax = (float(j.axis[0]), float(j.axis[1]), float(j.axis[2]))
            principal = -1
            for k in range(3):
                if abs(ax[k]) == 1.0:
                    principal = k
            steps.append((self.index[j.name], slot[parent], slot[j.child], j.type == "prismatic", keep,
                          None if ident else tuple(float(v) for v in rot.ravel()),
                          (float(xyz[0]), float(xyz[1]), float(xyz[2])), ax, principal))
        self._steps = tuple(steps)
        self._n_links = len(slot)
        self._mass = [0.0] * self._n_links
        self._moment0: List[_Vec] = [(0.0, 0.0, 0.0)] * self._n_links
        for name, s in slot.items():
            lk = links[name]
            self._mass[s] = lk.mass
            self._moment0[s] = (float(lk.moment[0]), float(lk.moment[1]), float(lk.moment[2]))
        self._mimics: List[Tuple[int, int, float, float]] = []
        for j in movable:
            if j.mimic is not None and j.mimic[0] in self.index:
                self._mimics.append((self.index[j.name], self.index[j.mimic[0]], j.mimic[1], j.mimic[2]))
        self._tau = [0.0] * len(self.joint_names)
        self._q = [0.0] * len(self.joint_names)

    # -- queries ------------------------------------------------------------------------------------
    def total_mass(self) -> float:
        """kg of every link and payload."""
        return float(sum(lk.mass for lk in self._links.values()))

    def positions(self, q: Union[Sequence[float], Dict[str, float]]) -> List[float]:
        """Joint positions in :attr:`joint_names` order from a sequence or a ``{joint: position}``
        mapping (missing joints 0; mimic joints follow their master)."""
        if isinstance(q, dict):
            out = [float(q.get(n, 0.0)) for n in self.joint_names]
        else:
            out = [float(v) for v in q]
            if len(out) != len(self.joint_names):
                raise ValueError(f"expected {len(self.joint_names)} joint positions "
                                 f"({', '.join(self.joint_names)}), got {len(out)}")
        return out

    def torques(self, q: Union[Sequence[float], Dict[str, float]]) -> np.ndarray:
        """Holding torques (N·m, N) of :attr:`joint_names` at pose ``q`` (a new numpy array)."""
        return np.array(self.compute(self.positions(q)))

    def torque_map(self, q: Union[Sequence[float], Dict[str, float]]) -> Dict[str, float]:
        """``{joint: holding torque}`` at pose ``q``."""
        return dict(zip(self.joint_names, self.compute(self.positions(q))))

    def compute(self, q: Sequence[float]) -> List[float]:
        """The hot path: holding torques at ``q`` (:attr:`joint_names` order, mimic entries are
        overwritten from their masters).  Returns an internal list, overwritten by the next call."""
        tau = self._tau
        if self._mimics:
            q = list(q)
            for i, m, mult, off in self._mimics:
                q[i] = mult * q[m] + off
        gx, gy, gz = self.gravity
        n = self._n_links
        g: List[_Vec] = [(0.0, 0.0, 0.0)] * n
        g[0] = (gx, gy, gz)
        rots: List[Optional[Tuple[float, float]]] = []
        steps = self._steps
        for qi, ps, cs, prismatic, keep, rot, xyz, ax, principal in steps:
            if not keep:
                rots.append(None)
                continue
            x, y, z = g[ps]
            if rot is not None:  # R_fix^T g
                x, y, z = (rot[0] * x + rot[3] * y + rot[6] * z, rot[1] * x + rot[4] * y + rot[7] * z,
                           rot[2] * x + rot[5] * y + rot[8] * z)
            if prismatic:
                g[cs] = (x, y, z)
                rots.append(None)
                continue
            c, s = math.cos(q[qi]), math.sin(q[qi])
            rots.append((c, s))
            # Rot(axis, q)^T v = Rot(axis, -q) v (Rodrigues)
            g[cs] = _rotate(ax, principal, c, -s, x, y, z)
        mass = list(self._mass)
        mom = list(self._moment0)
        for k in range(len(steps) - 1, -1, -1):
            qi, ps, cs, prismatic, keep, rot, xyz, ax, principal = steps[k]
            if not keep:
                tau[qi] = 0.0
                continue
            mc = mass[cs]
            hx, hy, hz = mom[cs]
            x, y, z = g[cs]
            if prismatic:
                tau[qi] = -mc * (ax[0] * x + ax[1] * y + ax[2] * z)
                d = q[qi]
                hx, hy, hz = hx + mc * d * ax[0], hy + mc * d * ax[1], hz + mc * d * ax[2]
            else:
                # -axis . (h x g)
                tau[qi] = -(ax[0] * (hy * z - hz * y) + ax[1] * (hz * x - hx * z)
                            + ax[2] * (hx * y - hy * x))
                cs_q = rots[k]
                assert cs_q is not None  # set by the forward pass for every kept revolute joint
                hx, hy, hz = _rotate(ax, principal, cs_q[0], cs_q[1], hx, hy, hz)
            if rot is not None:
                hx, hy, hz = (rot[0] * hx + rot[1] * hy + rot[2] * hz,
                              rot[3] * hx + rot[4] * hy + rot[5] * hz,
                              rot[6] * hx + rot[7] * hy + rot[8] * hz)
            px, py, pz = xyz
            mass[ps] += mc
            ox, oy, oz = mom[ps]
            mom[ps] = (ox + hx + mc * px, oy + hy + mc * py, oz + hz + mc * pz)
        for i, m, mult, _off in self._mimics:
            tau[m] += mult * tau[i]
        return tau


def _rotate(ax: _Vec, principal: int, c: float, s: float, x: float, y: float, z: float) -> _Vec:
    """``Rot(ax, angle) v`` with ``c, s = cos, sin(angle)`` (a principal axis: one planar rotation)."""
    if principal == 2:
        if ax[2] < 0:
            s = -s
        return c * x - s * y, s * x + c * y, z
    if principal == 1:
        if ax[1] < 0:
            s = -s
        return c * x + s * z, y, -s * x + c * z
    if principal == 0:
        if ax[0] < 0:
            s = -s
        return x, c * y - s * z, s * y + c * z
    kx, ky, kz = ax
    dot = (kx * x + ky * y + kz * z) * (1.0 - c)
    return (x * c + (ky * z - kz * y) * s + kx * dot, y * c + (kz * x - kx * z) * s + ky * dot,
            z * c + (kx * y - ky * x) * s + kz * dot)
