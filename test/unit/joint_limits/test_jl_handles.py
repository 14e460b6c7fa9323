"""Limit handles: every formula at its edges, preconditions, interfaces and reset()."""
from __future__ import annotations

import pytest

from rospy_control.hardware_interface import JointData, JointHandle, JointStateHandle
from rospy_control.joint_limits import (
    EffortJointSaturationHandle,
    EffortJointSaturationInterface,
    EffortJointSoftLimitsHandle,
    EffortJointSoftLimitsInterface,
    JointLimits,
    JointLimitsError,
    PositionJointSaturationHandle,
    PositionJointSaturationInterface,
    PositionJointSoftLimitsHandle,
    PositionJointSoftLimitsInterface,
    SoftJointLimits,
    VelocityJointSaturationHandle,
    VelocityJointSaturationInterface,
    VelocityJointSoftLimitsHandle,
    VelocityJointSoftLimitsInterface,
)

DT = 0.1


def joint(position=0.0, velocity=0.0):
    data = JointData(position=position, velocity=velocity)
    return data, JointHandle(JointStateHandle("j", data))


def limits(**kw):
    base = dict(min_position=-1.0, max_position=1.0, max_velocity=2.0, max_acceleration=4.0,
                max_effort=8.0, has_position_limits=True, has_velocity_limits=True,
                has_acceleration_limits=False, has_effort_limits=True)
    base.update(kw)
    return JointLimits(**base)


SOFT = SoftJointLimits(min_position=-0.5, max_position=0.5, k_position=10.0, k_velocity=3.0)


def run(handle, data, command):
    data.command = command
    handle.enforce_limits(DT)
    return data.command


def test_preconditions():
    _, jh = joint()
    with pytest.raises(JointLimitsError, match="is not a JointHandle"):
        PositionJointSaturationHandle(None, limits())
    with pytest.raises(JointLimitsError, match="limits must be a JointLimits"):
        PositionJointSaturationHandle(jh, None)  # type: ignore[arg-type]
    with pytest.raises(JointLimitsError, match="soft limits must be a SoftJointLimits"):
        PositionJointSoftLimitsHandle(jh, limits(), None)  # type: ignore[arg-type]
    no_vel = limits(has_velocity_limits=False)
    no_eff = limits(has_effort_limits=False)
    msg = "Cannot enforce limits for joint 'j'. It has no velocity limits specification."
    for cls, args in ((PositionJointSoftLimitsHandle, (no_vel, SOFT)),
                      (EffortJointSaturationHandle, (no_vel,)),
                      (EffortJointSoftLimitsHandle, (no_vel, SOFT)),
                      (VelocityJointSaturationHandle, (no_vel,))):
        with pytest.raises(JointLimitsError) as err:
            cls(jh, *args)
        assert str(err.value) == msg
    with pytest.raises(JointLimitsError, match="It has no effort limits specification"):
        EffortJointSaturationHandle(jh, no_eff)
    with pytest.raises(JointLimitsError, match="It has no effort limits specification"):
        EffortJointSoftLimitsHandle(jh, no_eff, SOFT)
    PositionJointSaturationHandle(jh, JointLimits())  # never raises
    VelocityJointSoftLimitsHandle(jh, JointLimits(), SOFT)  # never raises


def test_position_saturation_hard_limits_only():
    data, jh = joint(position=0.0)
    handle = PositionJointSaturationHandle(jh, limits(has_velocity_limits=False))
    assert run(handle, data, 5.0) == 1.0
    assert run(handle, data, -5.0) == -1.0
    assert run(handle, data, 0.3) == 0.3
    unlimited = PositionJointSaturationHandle(jh, JointLimits())
    assert run(unlimited, data, 1e9) == 1e9


def test_position_saturation_velocity_window_from_measured_then_previous_and_reset():
    data, jh = joint(position=0.5)
    handle = PositionJointSaturationHandle(jh, limits())  # vmax·dt = 0.2
    assert run(handle, data, 5.0) == pytest.approx(0.7)     # from measured 0.5
    assert run(handle, data, 5.0) == pytest.approx(0.9)     # from previous command
    assert run(handle, data, 5.0) == pytest.approx(1.0)     # hard limit wins
    data.position = -1.0
    assert run(handle, data, -5.0) == pytest.approx(0.8)    # still from previous command
    handle.reset()
    assert run(handle, data, -5.0) == pytest.approx(-1.0)   # from measured -1.0 again, hard limit


def test_position_soft_limits_edges_and_reset():
    data, jh = joint(position=0.0)
    handle = PositionJointSoftLimitsHandle(jh, limits(), SOFT)
    # p = 0: v_lo = clamp(-10·(0 + 0.5), ±2) = -2, v_hi = clamp(-10·(0 - 0.5), ±2) = 2
    assert run(handle, data, 5.0) == pytest.approx(0.2)
    # p = 0.2: v_hi = clamp(-10·(0.2-0.5)=3, ±2) = 2 → 0.4
    assert run(handle, data, 5.0) == pytest.approx(0.4)
    # p = 0.4: v_hi = -10·(-0.1) = 1 → 0.5
    assert run(handle, data, 5.0) == pytest.approx(0.5)
    # p = 0.5: v_hi = 0 → stays at 0.5 (soft limit reached)
    assert run(handle, data, 5.0) == pytest.approx(0.5)
    # beyond the soft limit the window pushes back: p=0.8 → v_hi = -3 → -2 → 0.6, v_lo = -2 → 0.6
    handle.reset()
    data.position = 0.8
    assert run(handle, data, 0.8) == pytest.approx(0.6)
    # hard limits clamp the window ends
    handle.reset()
    data.position = 0.95
    wide = PositionJointSoftLimitsHandle(jh, limits(max_velocity=100.0),
                                         SoftJointLimits(-5.0, 5.0, 1000.0, 0.0))
    assert run(wide, data, 50.0) == pytest.approx(1.0)


def test_position_soft_limits_without_position_limits_uses_velocity_only():
    data, jh = joint(position=3.0)
    handle = PositionJointSoftLimitsHandle(jh, limits(has_position_limits=False), SOFT)
    assert run(handle, data, 10.0) == pytest.approx(3.2)
    assert run(handle, data, -10.0) == pytest.approx(3.0)


@pytest.mark.parametrize("position, velocity, command, expected", [
    (0.0, 0.0, 100.0, 8.0),      # ±max_effort
    (0.0, 0.0, -100.0, -8.0),
    (-1.5, 0.0, -5.0, 0.0),      # below min position: no more pushing down
    (-1.5, 0.0, 5.0, 5.0),
    (1.5, 0.0, 5.0, 0.0),        # above max position: no more pushing up
    (1.5, 0.0, -5.0, -5.0),
    (0.0, -3.0, -5.0, 0.0),      # faster than -vmax
    (0.0, 3.0, 5.0, 0.0),        # faster than vmax
    (0.0, 3.0, -5.0, -5.0),
    (-1.0, -2.0, -5.0, -5.0),    # exactly at the limits: still allowed
])
def test_effort_saturation(position, velocity, command, expected):
    data, jh = joint(position, velocity)
    assert run(EffortJointSaturationHandle(jh, limits()), data, command) == pytest.approx(expected)


def test_effort_saturation_ignores_position_without_position_limits():
    data, jh = joint(5.0, 0.0)
    assert run(EffortJointSaturationHandle(jh, limits(has_position_limits=False)), data, 5.0) == 5.0


@pytest.mark.parametrize("position, velocity, command, expected", [
    # p=0: v_lo=-2, v_hi=2; v=0 → window [clamp(-3·2)= -6, clamp(-3·-2)= 6]
    (0.0, 0.0, 100.0, 6.0),
    (0.0, 0.0, -100.0, -6.0),
    # p=0.5 (soft max): v_hi = 0; v=0 → upper = 0
    (0.5, 0.0, 3.0, 0.0),
    # p=0.6: v_lo = -2 (clamped), v_hi = -1; v=0 → window [-6, -3]: a push up becomes a push back
    (0.6, 0.0, 5.0, -3.0),
    (0.6, 0.0, -5.0, -5.0),
    # v = 2 at p=0: upper = -3·(2-2) = 0, lower = -3·(2+2) = -12 → -8
    (0.0, 2.0, 5.0, 0.0),
    (0.0, 2.0, -100.0, -8.0),
])
def test_effort_soft_limits(position, velocity, command, expected):
    data, jh = joint(position, velocity)
    assert run(EffortJointSoftLimitsHandle(jh, limits(), SOFT), data, command) == pytest.approx(expected)


def test_velocity_saturation_without_and_with_acceleration():
    data, jh = joint()
    handle = VelocityJointSaturationHandle(jh, limits())
    assert run(handle, data, 5.0) == 2.0 and run(handle, data, -5.0) == -2.0
    ramp = VelocityJointSaturationHandle(jh, limits(has_acceleration_limits=True))  # amax·dt = 0.4
    assert run(ramp, data, 5.0) == pytest.approx(0.4)   # prev starts at 0.0, not measured
    assert run(ramp, data, 5.0) == pytest.approx(0.8)
    assert run(ramp, data, -5.0) == pytest.approx(0.4)
    ramp.reset()
    assert run(ramp, data, -5.0) == pytest.approx(-0.4)
    data.velocity = 10.0  # measured velocity plays no role
    assert run(ramp, data, 0.0) == pytest.approx(0.0)


def test_velocity_soft_limits():
    data, jh = joint(position=0.0, velocity=0.0)
    handle = VelocityJointSoftLimitsHandle(jh, limits(), SOFT)
    assert run(handle, data, 5.0) == 2.0
    data.position = 0.4  # v_hi = 1
    assert run(handle, data, 5.0) == pytest.approx(1.0)
    data.position = 0.7  # v_hi = -2, v_lo = -2 (clamped)
    assert run(handle, data, 5.0) == pytest.approx(-2.0)
    # acceleration window around the measured velocity
    accel = VelocityJointSoftLimitsHandle(jh, limits(has_acceleration_limits=True), SOFT)
    data.position, data.velocity = 0.0, 1.0
    assert run(accel, data, 5.0) == pytest.approx(1.4)
    assert run(accel, data, -5.0) == pytest.approx(0.6)
    # no velocity limit: infinite vmax, position soft window only
    free = VelocityJointSoftLimitsHandle(jh, limits(has_velocity_limits=False), SOFT)
    data.position = 0.0
    assert run(free, data, 100.0) == pytest.approx(5.0)
    unlimited = VelocityJointSoftLimitsHandle(jh, JointLimits(), SOFT)
    assert run(unlimited, data, 1e6) == 1e6


def _two_joints():
    datas = [JointData(position=0.0), JointData(position=0.0)]
    handles = [JointHandle(JointStateHandle(n, d)) for n, d in zip(("a", "b"), datas)]
    return datas, handles


@pytest.mark.parametrize("iface_cls, handle_cls, with_soft", [
    (PositionJointSaturationInterface, PositionJointSaturationHandle, False),
    (PositionJointSoftLimitsInterface, PositionJointSoftLimitsHandle, True),
    (EffortJointSaturationInterface, EffortJointSaturationHandle, False),
    (EffortJointSoftLimitsInterface, EffortJointSoftLimitsHandle, True),
    (VelocityJointSaturationInterface, VelocityJointSaturationHandle, False),
    (VelocityJointSoftLimitsInterface, VelocityJointSoftLimitsHandle, True),
])
def test_interfaces_enforce_every_handle(iface_cls, handle_cls, with_soft):
    datas, handles = _two_joints()
    iface = iface_cls()
    assert iface_cls.TYPE_NAME == f"joint_limits_interface::{iface_cls.__name__}"
    for jh in handles:
        iface.register_handle(handle_cls(jh, limits(), SOFT) if with_soft else handle_cls(jh, limits()))
    assert iface.get_names() == ["a", "b"]
    for d in datas:
        d.command = 100.0
    iface.enforce_limits(DT)
    assert all(d.command < 100.0 for d in datas)
    if hasattr(iface, "reset"):
        iface.reset()
