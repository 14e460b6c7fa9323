"""Joint limits from URDF and from rosparam-shaped dicts (override rules)."""
from __future__ import annotations

import os

import pytest

from rospy_control.joint_limits import JointLimits, JointLimitsError, SoftJointLimits, params, urdf

URDF = os.path.join(os.path.dirname(__file__), os.pardir, "data", "urdf", "joint_limits_test.urdf")


@pytest.fixture(scope="module")
def urdf_text():
    with open(URDF, encoding="utf-8") as stream:
        return stream.read()


def test_defaults():
    limits = JointLimits()
    assert limits.min_position == limits.max_effort == 0.0
    assert not limits.has_position_limits and not limits.angle_wraparound
    assert SoftJointLimits() == SoftJointLimits(0.0, 0.0, 0.0, 0.0)
    with pytest.raises(TypeError, match="no field 'nope'"):
        JointLimits(nope=1)


def test_urdf_revolute(urdf_text):
    limits = JointLimits()
    assert urdf.get_joint_limits(urdf.find_joint(urdf_text, "revolute_joint"), limits)
    assert limits == JointLimits(min_position=-1.0, max_position=2.0, max_velocity=3.0, max_effort=4.0,
                                 has_position_limits=True, has_velocity_limits=True, has_effort_limits=True)
    soft = SoftJointLimits()
    assert urdf.get_soft_joint_limits(urdf.find_joint(urdf_text, "revolute_joint"), soft)
    assert soft == SoftJointLimits(-0.9, 1.9, 10.0, 5.0)


def test_urdf_prismatic_and_continuous(urdf_text):
    limits = JointLimits()
    assert urdf.get_joint_limits(urdf.find_joint(urdf_text, "prismatic_joint"), limits)
    assert limits.has_position_limits and (limits.min_position, limits.max_position) == (0.0, 0.5)
    assert not urdf.get_soft_joint_limits(urdf.find_joint(urdf_text, "prismatic_joint"), SoftJointLimits())
    cont = JointLimits()
    assert urdf.get_joint_limits(urdf.find_joint(urdf_text, "continuous_joint"), cont)
    assert cont.angle_wraparound and not cont.has_position_limits
    assert cont.has_velocity_limits and cont.max_velocity == 6.0 and cont.max_effort == 1.5
    assert not cont.has_acceleration_limits


def test_urdf_without_limit_or_joint(urdf_text):
    limits = JointLimits()
    assert not urdf.get_joint_limits(urdf.find_joint(urdf_text, "no_limit_joint"), limits)
    assert not urdf.get_joint_limits(urdf.find_joint(urdf_text, "missing"), limits)
    assert limits == JointLimits()


def test_urdf_errors(urdf_text):
    expected = "of joint 'bad_limit_joint' has a non-numeric 'lower' attribute 'low'"
    with pytest.raises(JointLimitsError, match=expected):
        urdf.get_joint_limits(urdf.find_joint(urdf_text, "bad_limit_joint"), JointLimits())
    with pytest.raises(JointLimitsError, match="cannot parse the URDF"):
        urdf.find_joint("not xml", "j")


@pytest.mark.parametrize("missing", ["velocity", "effort"])
def test_urdf_limit_without_velocity_or_effort_is_an_error_not_a_zero_limit(missing):
    # urdfdom refuses such a <limit>; reading it as 0.0 would freeze the joint.
    attrs = {"lower": "-1", "upper": "1", "velocity": "2", "effort": "3"}
    del attrs[missing]
    text = "<robot name='r'><joint name='j' type='revolute'><limit %s/></joint></robot>" % " ".join(
        f"{k}='{v}'" for k, v in attrs.items())
    with pytest.raises(JointLimitsError, match=f"<limit> of joint 'j' has no '{missing}' attribute"):
        urdf.get_joint_limits(urdf.find_joint(text, "j"), JointLimits())


FULL = {
    "has_position_limits": True, "min_position": 0.0, "max_position": 1.0,
    "has_velocity_limits": True, "max_velocity": 2.0,
    "has_acceleration_limits": True, "max_acceleration": 5.0,
    "has_jerk_limits": True, "max_jerk": 100.0,
    "has_effort_limits": True, "max_effort": 20,
    "has_soft_limits": True, "k_position": 10.0, "k_velocity": 20.0,
    "soft_lower_limit": 0.1, "soft_upper_limit": 0.9,
}


def P(**joints):
    return {"joint_limits": joints}


def test_param_full_spec():
    limits = JointLimits()
    assert params.get_joint_limits("foo", P(foo=FULL), limits)
    assert limits == JointLimits(
        min_position=0.0, max_position=1.0, max_velocity=2.0, max_acceleration=5.0, max_jerk=100.0,
        max_effort=20.0, has_position_limits=True, has_velocity_limits=True, has_acceleration_limits=True,
        has_jerk_limits=True, has_effort_limits=True)
    soft = SoftJointLimits()
    assert params.get_soft_joint_limits("foo", P(foo=FULL), soft)
    assert soft == SoftJointLimits(0.1, 0.9, 10.0, 20.0)


def test_param_missing_namespace_returns_false():
    assert not params.get_joint_limits("bar", P(foo=FULL), JointLimits())
    assert not params.get_joint_limits("bar", {}, JointLimits())
    assert not params.get_soft_joint_limits("bar", P(foo=FULL), SoftJointLimits())


def _urdf_like():
    return JointLimits(min_position=-1.0, max_position=1.0, max_velocity=3.0, max_effort=4.0,
                       has_position_limits=True, has_velocity_limits=True, has_effort_limits=True)


def test_param_flags_without_values_change_nothing():
    limits = _urdf_like()
    flags = {k: True for k in FULL if k.startswith("has_")}
    assert params.get_joint_limits("foo", P(foo=flags), limits)
    assert limits == _urdf_like()


def test_param_values_without_flags_change_nothing():
    limits = _urdf_like()
    values = {k: v for k, v in FULL.items() if not k.startswith("has_")}
    assert params.get_joint_limits("foo", P(foo=values), limits)
    assert limits == _urdf_like()


def test_param_all_flags_false_and_wraparound():
    limits = _urdf_like()
    spec = {k: False for k in FULL if k.startswith("has_")}
    spec["angle_wraparound"] = True
    spec["max_velocity"] = 9.0
    assert params.get_joint_limits("foo", P(foo=spec), limits)
    assert not (limits.has_position_limits or limits.has_velocity_limits or limits.has_effort_limits)
    assert limits.angle_wraparound and limits.max_velocity == 3.0  # values kept, flags cleared


def test_param_wraparound_ignored_when_position_limited_or_flag_absent():
    limits = JointLimits()
    params.get_joint_limits("foo", P(foo={"has_position_limits": True, "angle_wraparound": True}), limits)
    assert not limits.angle_wraparound
    params.get_joint_limits("foo", P(foo={"angle_wraparound": True}), limits)
    assert not limits.angle_wraparound


def test_param_partial_and_missing_min_position():
    limits = _urdf_like()
    assert params.get_joint_limits("foo", P(foo={"has_velocity_limits": True, "max_velocity": 0.5}), limits)
    assert limits.max_velocity == 0.5 and limits.max_position == 1.0
    limits = JointLimits()
    params.get_joint_limits("foo", P(foo={"has_position_limits": True, "max_position": 1.0}), limits)
    assert not limits.has_position_limits and limits.max_position == 0.0


def test_param_soft_limits_disabled_or_incomplete():
    soft = SoftJointLimits()
    assert not params.get_soft_joint_limits("foo", P(foo=dict(FULL, has_soft_limits=False)), soft)
    incomplete = {k: v for k, v in FULL.items() if k != "k_velocity"}
    assert not params.get_soft_joint_limits("foo", P(foo=incomplete), soft)
    assert soft == SoftJointLimits()


def test_param_wrong_types_fail_fast():
    spec = P(foo={"has_velocity_limits": True, "max_velocity": "fast"})
    with pytest.raises(JointLimitsError, match=r"foo/max_velocity: expected a number, got 'fast'"):
        params.get_joint_limits("foo", spec, JointLimits())
    with pytest.raises(JointLimitsError, match="has_effort_limits: expected true or false"):
        params.get_joint_limits("foo", P(foo={"has_effort_limits": 1}), JointLimits())
