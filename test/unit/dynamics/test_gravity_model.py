"""GravityModel against hand-computed holding torques, and against an independent brute-force check
(the derivative of the potential energy, with homogeneous transforms) on a branching tree."""
from __future__ import annotations

import math
import os

import numpy as np
import pytest

from rospy_control.dynamics import GravityModel, Payload, rpy_matrix
from rospy_control.exceptions import ConfigError

G = 9.80665
ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def link(name: str, mass: float = 0.0, com: str = "0 0 0", rpy: str = "0 0 0") -> str:
    if mass == 0.0:
        return f'<link name="{name}"/>'
    return (f'<link name="{name}"><inertial><origin xyz="{com}" rpy="{rpy}"/><mass value="{mass}"/>'
            '<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>')


def joint(name: str, parent: str, child: str, kind: str = "revolute", xyz: str = "0 0 0",
          rpy: str = "0 0 0", axis: str = "0 0 1", extra: str = "") -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/><child link="{child}"/>'
            f'<origin xyz="{xyz}" rpy="{rpy}"/><axis xyz="{axis}"/>'
            '<limit lower="-3" upper="3" velocity="1" effort="100"/>' + extra + '</joint>')


def robot(*parts: str) -> str:
    return '<?xml version="1.0"?><robot name="r">' + "".join(parts) + "</robot>"


# -- 2 links: a planar arm whose joint frames are yawed by +-90 deg -------------------------------------
# joint1: origin yaw +pi/2, axis y  -> world axis -x;  joint2: origin yaw -pi/2 (in link1), axis x ->
# world axis +x.  Links point up their own z.  With p(a) = (sin a, cos a) in the world (y, z) plane
# (positive a = rotation about -x):
#   c1 = 0.2 p(q1), o2 = 0.4 p(q1), c2 = o2 + 0.15 p(q1 - q2)
#   holding torque about an axis a: -(a . sum r x m g); about -x that is -g sum m r_y, about +x +g sum m r_y
#   tau1 = -g (m1 0.2 sin q1 + m2 (0.4 sin q1 + 0.15 sin(q1 - q2)))
#   tau2 = +g m2 0.15 sin(q1 - q2)
TWO_LINK = robot(
    link("base", 5.0, "0 0 0.05"),
    joint("j1", "base", "l1", xyz="0.3 -0.1 0.1", rpy=f"0 0 {math.pi / 2}", axis="0 1 0"),
    link("l1", 2.0, "0 0 0.2"),
    joint("j2", "l1", "l2", xyz="0 0 0.4", rpy=f"0 0 {-math.pi / 2}", axis="1 0 0"),
    link("l2", 1.0, "0 0 0.15"),
)


def two_link_expected(q1: float, q2: float, m2: float = 1.0):
    t1 = -G * (2.0 * 0.2 * math.sin(q1) + m2 * (0.4 * math.sin(q1) + 0.15 * math.sin(q1 - q2)))
    t2 = G * m2 * 0.15 * math.sin(q1 - q2)
    return t1, t2


@pytest.mark.parametrize("q1, q2", [(0.0, 0.0), (math.pi / 2, 0.0), (0.7, -0.4), (-1.2, 2.0), (3.0, 1.0)])
def test_two_link_arm_with_yawed_joint_frames(q1, q2):
    model = GravityModel.from_urdf(TWO_LINK)
    assert model.joint_names == ["j1", "j2"]
    assert model.torques([q1, q2]) == pytest.approx(two_link_expected(q1, q2), abs=1e-9)


def test_two_link_outstretched_values_by_hand():
    # horizontal (q1 = 90 deg, q2 = 0): link1 weight 2 kg at 0.2 m, link2 1 kg at 0.55 m
    model = GravityModel.from_urdf(TWO_LINK)
    t = model.torque_map({"j1": math.pi / 2})
    assert t["j1"] == pytest.approx(-G * (0.4 + 0.55))
    assert t["j2"] == pytest.approx(G * 0.15)


# -- 3 links: a vertical base joint, then two parallel horizontal joints, origins rolled and yawed ----
# j1: vertical axis, origin yaw 0.3: carries the arm but gravity has no moment about it;
# j2: origin roll +pi/2 (its z axis becomes horizontal), link2 along its x: the link is horizontal at
#     q2 = 0 and rises with q2 (height L sin q2);
# j3: at link2's tip, origin yaw 0.5 about the same axis: link3's absolute angle is q2 + 0.5 + q3.
#   tau3 = g m3 c3 cos(q2 + 0.5 + q3)
#   tau2 = g (m2 c2 cos q2 + m3 (L2 cos q2 + c3 cos(q2 + 0.5 + q3)))
#   tau1 = 0
M2, C2, L2, M3, C3 = 1.5, 0.2, 0.35, 0.8, 0.12
THREE_LINK = robot(
    link("base"),
    joint("j1", "base", "l1", xyz="0 0 0.1", rpy="0 0 0.3", axis="0 0 1"),
    link("l1", 1.0, "0.01 0.02 0.05"),
    joint("j2", "l1", "l2", xyz="0 0 0.08", rpy=f"{math.pi / 2} 0 0", axis="0 0 1"),
    link("l2", M2, f"{C2} 0 0", rpy="0.3 0.2 0.1"),
    joint("j3", "l2", "l3", xyz=f"{L2} 0 0", rpy="0 0 0.5", axis="0 0 2"),   # axis normalised
    link("l3", M3, f"{C3} 0 0"),
)


def three_link_expected(q1: float, q2: float, q3: float):
    a3 = q2 + 0.5 + q3
    return (0.0, G * (M2 * C2 * math.cos(q2) + M3 * (L2 * math.cos(q2) + C3 * math.cos(a3))),
            G * M3 * C3 * math.cos(a3))


@pytest.mark.parametrize("q", [(0.0, 0.0, 0.0), (1.0, 0.3, -0.8), (-2.0, -1.2, 2.5), (0.4, math.pi / 2, 0.0)])
def test_three_link_arm_with_rolled_and_yawed_joint_frames(q):
    model = GravityModel.from_urdf(THREE_LINK)
    assert model.torques(q) == pytest.approx(three_link_expected(*q), abs=1e-9)


def test_gravity_vector_is_configurable_and_scales_the_torques():
    model = GravityModel.from_urdf(TWO_LINK, gravity=(0.0, 0.0, -2 * G))
    assert model.torques([0.7, -0.4]) == pytest.approx([2 * v for v in two_link_expected(0.7, -0.4)])
    model.set_gravity((0.0, 0.0, 0.0))
    assert model.torques([0.7, -0.4]) == pytest.approx([0.0, 0.0])
    # gravity along world +y (the arm lies on its side): an upright arm (q = 0) now needs torque
    model.set_gravity((0.0, G, 0.0))
    t1, _ = model.torques([0.0, 0.0])
    assert t1 == pytest.approx(-G * (2.0 * 0.2 + 1.0 * 0.55))


def test_a_payload_at_a_link_adds_its_weight_at_its_offset():
    plain = GravityModel.from_urdf(TWO_LINK)
    loaded = GravityModel.from_urdf(TWO_LINK, payloads=[Payload("l2", 0.5, (0.0, 0.0, 0.3))])
    assert loaded.total_mass() == pytest.approx(plain.total_mass() + 0.5)
    q1, q2 = 1.1, 0.3
    d1, d2 = loaded.torques([q1, q2]) - plain.torques([q1, q2])
    assert d2 == pytest.approx(G * 0.5 * 0.3 * math.sin(q1 - q2))
    assert d1 == pytest.approx(-G * 0.5 * (0.4 * math.sin(q1) + 0.3 * math.sin(q1 - q2)))
    with pytest.raises(ConfigError, match="link 'nowhere' is not a <link>"):
        GravityModel.from_urdf(TWO_LINK, payloads=[Payload("nowhere", 1.0)])


def test_prismatic_fixed_and_mimic_joints():
    urdf = robot(
        link("base"),
        joint("lift", "base", "carriage", kind="prismatic", axis="0 0 1"),
        link("carriage", 2.0),
        joint("mount", "carriage", "tool", kind="fixed", xyz="0.5 0 0", rpy="0 1.0 0"),
        link("tool", 1.0, "0 0 0.1"),   # folded into the carriage
        joint("slide", "carriage", "finger", kind="prismatic", axis="1 0 0"),
        link("finger", 0.3),
        joint("twin", "carriage", "finger2", kind="prismatic", axis="0 0 1",
              extra='<mimic joint="slide" multiplier="2" offset="0"/>'),
        link("finger2", 0.2),
    )
    model = GravityModel.from_urdf(urdf)
    t = model.torque_map({"lift": 0.2, "slide": 0.05})
    assert t["lift"] == pytest.approx(G * 3.5)        # holds everything up: +m g
    assert t["slide"] == pytest.approx(0.0 + 2 * G * 0.2)  # horizontal itself; carries its mimic (x2)
    assert t["twin"] == pytest.approx(G * 0.2)


def test_arm_urdf_outstretched_shoulder_carries_the_whole_arm():
    with open(os.path.join(ROOT, "urdf", "arm.urdf")) as f:
        model = GravityModel.from_urdf(f.read())
    t = model.torque_map({"shoulder_lift_joint": math.pi / 2})
    # upper arm 1.5 kg @ 0.15, forearm 1.0 @ 0.425, wrist_1 0.5 @ 0.55, wrist_2 0.4 @ 0.61,
    # tool 0.3 @ 0.66, fingers 2 x 0.05 @ 0.68 (first mass moment 1.435 kg m)
    assert t["shoulder_lift_joint"] == pytest.approx(-G * 1.435, rel=1e-6)
    assert t["shoulder_pan_joint"] == pytest.approx(0.0)
    upright = model.torque_map({})
    assert all(v == pytest.approx(0.0) for v in upright.values())


@pytest.mark.parametrize("text, match", [
    (robot(link("a"), link("b")), "one root link"),
    (robot(link("a"), link("b"), joint("j", "a", "b", axis="0 0 0")), "axis xyz> is zero"),
    (robot(link("a"), joint("j", "a", "zz")), "link 'zz' is not a <link>"),
    (robot(link("a"), link("b"), joint("j", "a", "b", xyz="0 0")), "expected three finite numbers"),
    ('<robot name="r"><link name="a"><inertial><mass value="-1"/></inertial></link></robot>', "mass value"),
    ("<notrobot/>", "expected <robot>"),
])
def test_bad_urdf_is_a_config_error(text, match):
    with pytest.raises(ConfigError, match=match):
        GravityModel.from_urdf(text)


# -- brute force: holding torque = dV/dq, V = -sum m g . c(q), with 4x4 transforms ----------------------
def _axis_rotation(axis, angle):
    k = np.asarray(axis, float) / np.linalg.norm(axis)
    K = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + math.sin(angle) * K + (1 - math.cos(angle)) * K @ K


def _potential(spec, masses, q, g):
    """spec: [(name, parent, kind, xyz, rpy, axis)] in tree order; masses: {link: (m, com)}"""
    frames = {"base": np.eye(4)}
    V = 0.0
    for (name, parent, kind, xyz, rpy, axis) in spec:
        T = np.eye(4)
        T[:3, :3] = rpy_matrix(rpy)
        T[:3, 3] = xyz
        M = np.eye(4)
        if kind == "revolute":
            M[:3, :3] = _axis_rotation(axis, q[name])
        elif kind == "prismatic":
            M[:3, 3] = np.asarray(axis, float) / np.linalg.norm(axis) * q[name]
        frames[name] = frames[parent] @ T @ M
    for lk, (m, com) in masses.items():
        c = frames[lk] @ np.append(com, 1.0)
        V -= m * float(np.dot(g, c[:3]))
    return V


def test_branching_tree_matches_the_derivative_of_the_potential_energy():
    rng = np.random.default_rng(7)
    spec = []
    parts = [link("base", 3.0, "0.1 0 0")]
    masses = {"base": (3.0, np.array([0.1, 0.0, 0.0]))}
    parents = ["base", "base", "a", "a", "b", "d"]
    kinds = ["revolute", "revolute", "prismatic", "revolute", "revolute", "continuous"]
    for k, name in enumerate("abcdef"):
        xyz = rng.uniform(-0.3, 0.3, 3)
        rpy = rng.uniform(-1.5, 1.5, 3)
        axis = rng.uniform(-1.0, 1.0, 3)
        com = rng.uniform(-0.2, 0.2, 3)
        m = float(rng.uniform(0.2, 2.0))
        kind = kinds[k]
        parts.append(joint(name, parents[k], name, kind=kind, xyz=" ".join(map(repr, xyz)),
                           rpy=" ".join(map(repr, rpy)), axis=" ".join(map(repr, axis))))
        parts.append(link(name, m, " ".join(map(repr, com))))
        spec.append((name, parents[k], "revolute" if kind == "continuous" else kind, xyz, rpy, axis))
        masses[name] = (m, com)
    g = np.array([0.3, -1.0, -9.5])
    model = GravityModel.from_urdf(robot(*parts), gravity=tuple(g))
    for _ in range(5):
        q = {n: float(rng.uniform(-2.0, 2.0)) for n in "abcdef"}
        tau = model.torque_map(q)
        h = 1e-6
        for n in "abcdef":
            up, down = dict(q), dict(q)
            up[n] += h
            down[n] -= h
            numeric = (_potential(spec, masses, up, g) - _potential(spec, masses, down, g)) / (2 * h)
            assert tau[n] == pytest.approx(numeric, abs=1e-6), n
