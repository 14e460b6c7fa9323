"""read() computes the joint state of 1:1 transmissions inline, together with the motor's actuator
data; the result is what the transmission loader's own propagation gives, for every kind of
transmission of the example arm (1:1, reduction, differential, lead screw)."""
from __future__ import annotations

from robot_hw_testutil import ARM_HW, ARM_URDF, DT, load_yaml

FIELDS = ("position", "velocity", "effort", "absolute_position", "torque_sensor")


def _joint_values(hw):
    return {name: tuple(getattr(j.data, f) for f in FIELDS) for name, j in hw._rec.joints.items()}


def test_read_gives_the_loaders_joint_state(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    fused, plain, others = hw._read_plan
    assert fused and others  # both paths run for this arm (1:1 joints, and the differential wrist)
    hw.read(0.0, DT)
    inline = _joint_values(hw)
    for j in hw._rec.joints.values():  # forget them: the loader computes them afresh
        j.data.position = j.data.velocity = j.data.effort = 99.0
    hw._rec.loader.propagate_state()
    assert _joint_values(hw) == inline
    states = hw.middleware.snapshot().states
    for act in hw._rec.actuators:
        assert act.data.position == states[act.name].position
        assert act.state is states[act.name]
