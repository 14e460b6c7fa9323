"""The JointTrajectoryController with its publishers in their own threads, as in the node.

The other JTC unit tests run with the in-memory node handles' synchronous publishing (deterministic:
``state`` and action results go out from ``update()``); the node uses threads (the ``state``
publisher and the action monitor relay results and feedback off the control thread).  Here the
same controller runs threaded: every message must arrive from a ``rospy_control.*`` publisher
thread, never from the control thread, and goals end as they do synchronously -- success, preemption,
cancel, path-tolerance abort -- with the waits on conditions, not on time.
"""
from __future__ import annotations

import threading
import time

import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R
from control_msgs.msg import JointTrajectoryControllerState

from rospy_control.controllers.gripper_action_controller import GripperActionController
from rospy_control.controllers.joint_trajectory_controller import JointTrajectoryController
from rospy_control.testing import GoalStatus
from test_jtc_sim import J, fjt_goal, gripper_goal, pt, start_jtc, traj, JtcRig

TARGET = [0.6, -0.4]
TIMEOUT = 20.0  # s of wall time a busy host may need; the waits end as soon as the condition holds


@pytest.fixture
def threaded(monkeypatch):
    monkeypatch.setattr(JointTrajectoryController, "SYNCHRONOUS", False)
    monkeypatch.setattr(GripperActionController, "SYNCHRONOUS", False)


def drive(rig, until, timeout: float = TIMEOUT) -> bool:
    """Play the control loop (one cycle per ~2 ms of wall time) until ``until()`` or ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if until():
            return True
        rig.cycle()
        time.sleep(0.002)
    return until()


def test_goal_succeeds_with_state_feedback_and_result_from_publisher_threads(threaded):
    rig, ctrl = start_jtc("position", action_monitor_rate=50.0, state_publish_rate=50.0)
    try:
        assert not ctrl.ros.state_publisher.synchronous and ctrl.ros.monitor_worker._thread is not None
        senders = set()
        states = []

        def on_state(msg):
            senders.add(threading.current_thread().name)
            states.append(msg)

        rig.root_nh.subscribe("arm/state", JointTrajectoryControllerState, on_state)
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt(TARGET, 0.3)])))
        assert drive(rig, goal.is_done), "no result relayed"
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_goal_status_text()
        assert goal.get_result().error_code == R.SUCCESSFUL
        assert drive(rig, lambda: len(states) >= 3)
        assert goal.feedback and goal.feedback[-1].joint_names == J
        assert rig.robot.positions() == pytest.approx(TARGET, abs=0.02)
        # published by the publisher thread, never from the control (here: the test's) thread
        assert senders and all(s.startswith("rospy_control.") for s in senders), senders
        assert states[-1].joint_names == J and len(states[-1].actual.positions) == 2
    finally:
        rig.close()


def test_second_goal_preempts_the_first_and_cancel_ends_the_second(threaded):
    rig, _ = start_jtc("position", action_monitor_rate=50.0)
    try:
        client = rig.client()
        first = client.send_goal(fjt_goal(traj(J, [pt(TARGET, 3.0)])))
        drive(rig, lambda: False, 0.05)
        second = client.send_goal(fjt_goal(traj(J, [pt([0.1, 0.1], 3.0)])))
        assert drive(rig, first.is_done)
        assert first.get_goal_status() == GoalStatus.PREEMPTED
        assert second.get_goal_status() == GoalStatus.ACTIVE
        second.cancel()
        assert drive(rig, second.is_done)
        assert second.get_goal_status() == GoalStatus.PREEMPTED
    finally:
        rig.close()


def test_path_tolerance_abort_is_relayed_with_the_error_code(threaded):
    rig, _ = start_jtc("position", action_monitor_rate=50.0)
    try:
        rig.robot.stuck["joint2"] = True
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt(TARGET, 0.5)])))
        assert drive(rig, goal.is_done)
        assert goal.get_goal_status() == GoalStatus.ABORTED
        assert goal.get_result().error_code == R.PATH_TOLERANCE_VIOLATED
    finally:
        rig.close()


def test_gripper_goal_with_its_monitor_thread(threaded):
    rig = JtcRig({"finger": "revolute"})
    try:
        rig.start("gripper", "position_controllers/GripperActionController",
                  {"joint": "finger", "goal_tolerance": 0.01, "stall_timeout": 1.0,
                   "stall_velocity_threshold": 0.001, "action_monitor_rate": 50.0})
        client = rig.client("gripper_cmd")
        goal = client.send_goal(gripper_goal(0.5, 10.0))
        assert drive(rig, goal.is_done)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_goal_status_text()
        assert rig.robot.positions() == pytest.approx([0.5], abs=0.01)
    finally:
        rig.close()


def test_the_action_monitor_sleeps_while_no_goal_is_active_and_wakes_for_one(threaded):
    """An idle controller's monitor thread does no work; a goal wakes it, its result still arrives,
    and it sleeps again after."""
    rig, ctrl = start_jtc("position", action_monitor_rate=100.0, state_publish_rate=50.0)
    worker = ctrl.ros.monitor_worker
    try:
        assert drive(rig, lambda: worker.idle), "the monitor of an idle controller keeps ticking"
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt(TARGET, 0.3)])))
        assert drive(rig, goal.is_done), "no result relayed"
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_goal_status_text()
        assert drive(rig, lambda: worker.idle), "the monitor did not go back to sleep after the goal"
        rejected = rig.client().send_goal(fjt_goal(traj(["no_such_joint"], [pt([0.0], 0.3)])))
        assert drive(rig, rejected.is_done), "a rejected goal got no result"
        assert rejected.get_goal_status() == GoalStatus.REJECTED
    finally:
        rig.close()
