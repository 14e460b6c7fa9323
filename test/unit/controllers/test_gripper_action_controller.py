"""GripperActionController (position and effort variants) against the simulated robot."""
from __future__ import annotations

import pytest

from test_jtc_sim import JtcRig, gripper_goal
from rospy_control.testing import GoalStatus

POSITION = "position_controllers/GripperActionController"
EFFORT = "effort_controllers/GripperActionController"


def make(kind: str = POSITION, **params):
    mode = "position" if kind == POSITION else "effort"
    rig = JtcRig({"finger": "revolute"}, mode=mode, tau=0.05)
    p = {"joint": "finger", "stall_timeout": 0.3}
    if kind == EFFORT:
        p["gains"] = {"finger": {"p": 20.0, "d": 2.0}}
    p.update(params)
    ctrl = rig.start("gripper", kind, p)
    return rig, ctrl


@pytest.fixture(params=[POSITION, EFFORT])
def gripper(request):
    rig, ctrl = make(request.param)
    yield rig, ctrl
    rig.close()


def test_reaches_goal_and_succeeds(gripper):
    rig, _ = gripper
    goal = rig.client("gripper_cmd").send_goal(gripper_goal(0.4, 50.0))
    assert goal.get_goal_status() == GoalStatus.ACTIVE
    rig.run(5.0, until=goal.is_done)
    rig.run(0.1)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    result = goal.get_result()
    assert result.reached_goal and not result.stalled
    assert abs(result.position - 0.4) < 0.01
    assert goal.feedback == []  # no feedback, as upstream


def test_position_variant_reports_max_effort_as_effort():
    rig, _ = make(POSITION)
    try:
        goal = rig.client("gripper_cmd").send_goal(gripper_goal(0.2, 7.5))
        rig.run(3.0, until=goal.is_done)
        rig.run(0.1)
        assert goal.get_result().effort == 7.5
        assert rig.robot.state["finger"].command_position == 0.2
    finally:
        rig.close()


def test_stall_aborts_with_stalled(gripper):
    rig, _ = gripper
    rig.robot.wall["finger"] = 0.1  # an object between the fingers
    goal = rig.client("gripper_cmd").send_goal(gripper_goal(0.5, 50.0))
    elapsed = rig.run(5.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    result = goal.get_result()
    assert result.stalled and not result.reached_goal
    assert abs(result.position - 0.1) < 1e-6
    assert 0.3 < elapsed < 1.5  # stall_timeout 0.3 s after the last movement (+ monitor period)


def test_new_goal_preempts_previous(gripper):
    rig, _ = gripper
    client = rig.client("gripper_cmd")
    first = client.send_goal(gripper_goal(0.5, 50.0))
    rig.run(0.05)
    second = client.send_goal(gripper_goal(-0.2, 50.0))
    assert first.get_goal_status() == GoalStatus.PREEMPTED
    rig.run(5.0, until=second.is_done)
    assert second.get_goal_status() == GoalStatus.SUCCEEDED
    assert abs(rig.robot.positions()[0] + 0.2) < 0.02


def test_cancel_holds_position(gripper):
    rig, ctrl = gripper
    goal = rig.client("gripper_cmd").send_goal(gripper_goal(0.8, 50.0))
    rig.run(0.1)
    goal.cancel()
    assert goal.get_goal_status() == GoalStatus.PREEMPTED
    held = rig.robot.positions()[0]
    assert 0.0 < held < 0.8
    assert ctrl._command.position == pytest.approx(held)
    assert ctrl._command.max_effort == 0.0  # the default max_effort of holds


def test_effort_clamped_to_max_effort():
    rig, ctrl = make(EFFORT)
    try:
        goal = rig.client("gripper_cmd").send_goal(gripper_goal(1.0, 0.5))
        efforts = []
        for _ in range(50):
            rig.cycle()
            efforts.append(rig.robot.state["finger"].command_effort)
        assert max(abs(e) for e in efforts) == pytest.approx(0.5)
        assert goal.get_goal_status() == GoalStatus.ACTIVE
        goal.cancel()
        rig.cycle()
        assert rig.robot.state["finger"].command_effort == 0.0  # hold with max_effort 0: no force
    finally:
        rig.close()


def test_goal_rejected_when_not_running():
    rig, ctrl = make(POSITION)
    try:
        rig.switch(stop=["gripper"])
        goal = rig.client("gripper_cmd").send_goal(gripper_goal(0.3, 1.0))
        assert goal.get_goal_status() == GoalStatus.REJECTED
    finally:
        rig.close()


def test_stopping_preempts_goal_and_leaves_joint_safe():
    rig, ctrl = make(EFFORT)
    try:
        goal = rig.client("gripper_cmd").send_goal(gripper_goal(1.0, 5.0))
        rig.run(0.1)
        assert rig.robot.state["finger"].command_effort != 0.0
        rig.switch(stop=["gripper"])
        assert goal.get_goal_status() == GoalStatus.PREEMPTED
        assert rig.robot.state["finger"].command_effort == 0.0
    finally:
        rig.close()


def test_unknown_joint_fails_load():
    rig = JtcRig({"finger": "revolute"})
    try:
        rig.root_nh.set_param("g", {"type": POSITION, "joint": "thumb"})
        result = rig.cm.load_controller("g")
        assert not result.ok
    finally:
        rig.close()


def test_effort_variant_needs_gains():
    rig = JtcRig({"finger": "revolute"})
    try:
        rig.root_nh.set_param("g", {"type": EFFORT, "joint": "finger"})
        assert not rig.cm.load_controller("g").ok
    finally:
        rig.close()
