"""A joint whose hardware goes to FAULT: the JTC aborts its goal at once, the other joints hold, new
goals are refused until the fault clears (beyond upstream, which would keep commanding a dead joint
until a tolerance happens to trip -- or forever with tolerances off)."""
from __future__ import annotations

import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R

from test_jtc_sim import J, fjt_goal, pt, start_jtc, traj
from rospy_control.testing import GoalStatus


@pytest.fixture
def arm():
    # Path tolerances off: only the fault can end the goal early.
    rig, ctrl = start_jtc(constraints={"joint1": {"trajectory": 0.0, "goal": 0.01},
                                       "joint2": {"trajectory": 0.0, "goal": 0.01}})
    rig.run(0.05)
    yield rig, ctrl
    rig.close()


def test_fault_aborts_the_goal_naming_joint_and_reason_and_the_rest_holds(arm):
    rig, _ = arm
    goal = rig.client().send_goal(fjt_goal(traj(J, [pt([1.0, -1.0], 2.0)])))
    rig.run(0.5)
    assert goal.get_goal_status() == GoalStatus.ACTIVE
    rig.robot.state["joint2"].fault = "motor 'm2': no reply for 0.05 s"
    rig.robot.stuck["joint2"] = True
    rig.run(0.2, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    result = goal.get_result()
    assert result.error_code == R.PATH_TOLERANCE_VIOLATED
    assert "joint 'joint2'" in result.error_string and "no reply for 0.05 s" in result.error_string
    held = rig.robot.positions()[0]
    rig.run(0.5)
    assert rig.robot.positions()[0] == pytest.approx(held, abs=0.02)   # joint1 stopped, not moving on


def test_goals_are_refused_while_a_joint_is_in_fault_and_accepted_after(arm):
    rig, _ = arm
    rig.robot.state["joint1"].fault = "over-temperature"
    refused = rig.client().send_goal(fjt_goal(traj(J, [pt([0.2, 0.2], 0.5)])))
    rig.run(0.05)
    assert refused.get_goal_status() == GoalStatus.REJECTED
    assert refused.get_result().error_code == R.INVALID_GOAL
    assert "over-temperature" in refused.get_result().error_string
    rig.publish(traj(J, [pt([0.2, 0.2], 0.5)]))          # topic commands are ignored too
    rig.run(0.7)
    assert rig.robot.positions() == pytest.approx([0.0, 0.0], abs=1e-3)

    rig.robot.state["joint1"].fault = None                 # fault reset
    goal = rig.client().send_goal(fjt_goal(traj(J, [pt([0.2, 0.2], 0.5)])))
    rig.run(2.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    assert rig.robot.positions() == pytest.approx([0.2, 0.2], abs=0.01)


def test_goals_are_refused_while_a_joint_is_not_ready_and_the_refusal_says_so(arm):
    from rospy_control.hardware_interface import NOT_READY
    rig, _ = arm
    rig.robot.state["joint2"].fault = NOT_READY + "motor(s) 'm2' not enabled yet (starting up)"
    refused = rig.client().send_goal(fjt_goal(traj(J, [pt([0.2, 0.2], 0.5)])))
    rig.run(0.05)
    assert refused.get_goal_status() == GoalStatus.REJECTED
    text = refused.get_result().error_string
    assert refused.get_result().error_code == R.INVALID_GOAL
    assert "joint 'joint2' is not ready (motor(s) 'm2' not enabled yet (starting up))" in text, text
    assert "hardware fault" not in text
    rig.robot.state["joint2"].fault = None                 # enabled
    goal = rig.client().send_goal(fjt_goal(traj(J, [pt([0.2, 0.2], 0.5)])))
    rig.run(2.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
