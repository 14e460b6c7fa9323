"""JointTrajectoryController variants: hardware adapters, start/stop commands, velocity feed-forward,
and the threaded (non-synchronous) state publisher and action monitor."""
from __future__ import annotations

import sys
import threading
import time as _time

import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R

from rospy_control.controllers.joint_trajectory_controller import (
    JointTrajectoryController, PositionJointTrajectoryController,
)
from rospy_control.testing import GoalStatus
from test_jtc_sim import J, fjt_goal, pt, start_jtc, traj

TARGET = [0.6, -0.4]


def test_position_variant_starts_at_the_measured_position():
    rig, _ = start_jtc("position", positions=[0.3, -0.2])
    try:
        assert [rig.robot.state[j].command_position for j in J] == [0.3, -0.2]
    finally:
        rig.close()


@pytest.mark.parametrize("variant", ["velocity", "effort"])
def test_pid_variants_follow_a_trajectory(variant):
    rig, ctrl = start_jtc(variant, constraints={"joint1": {"goal": 0.02, "trajectory": 0.2},
                                                "joint2": {"goal": 0.02, "trajectory": 0.2}})
    try:
        assert len(ctrl.pids) == 2 and ctrl.velocity_ff.tolist() == [1.0, 1.0]
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt(TARGET, 1.5, [0, 0], [0, 0])])))
        rig.run(4.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_result()
        assert rig.robot.positions() == pytest.approx(TARGET, abs=0.02)
    finally:
        rig.close()


@pytest.mark.parametrize("variant,field", [("velocity", "command_velocity"), ("effort", "command_effort")])
def test_pid_variants_start_and_stop_with_zero_commands(variant, field):
    rig, ctrl = start_jtc(variant)
    try:
        assert [getattr(rig.robot.state[j], field) for j in J] == [0.0, 0.0]
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt([1.0, 1.0], 2.0)])))
        rig.run(0.5)
        assert all(getattr(rig.robot.state[j], field) != 0.0 for j in J)
        rig.switch(stop=["arm"])
        assert goal.get_goal_status() == GoalStatus.PREEMPTED
        assert [getattr(rig.robot.state[j], field) for j in J] == [0.0, 0.0]  # safe, unlike upstream
    finally:
        rig.close()


def test_velocity_feed_forward_is_needed_with_tight_tolerances():
    """Velocity variant with weak gains: without feed-forward the robot lags beyond the path tolerance."""
    outcomes = {}
    for ff in (0.0, 1.0):
        rig, _ = start_jtc("velocity", gains={j: {"p": 2.0} for j in J}, velocity_ff={j: ff for j in J},
                           constraints={"goal_time": 1.0, "joint1": {"goal": 0.02, "trajectory": 0.05},
                                        "joint2": {"goal": 0.02, "trajectory": 0.05}})
        try:
            goal = rig.client().send_goal(fjt_goal(traj(J, [pt([0.3, 0.3], 0.5, [0.6, 0.6]),
                                                            pt([0.8, 0.8], 1.5, [0, 0])])))
            rig.run(4.0, until=goal.is_done)
            outcomes[ff] = (goal.get_goal_status(), goal.get_result().error_code)
        finally:
            rig.close()
    assert outcomes[0.0] == (GoalStatus.ABORTED, R.PATH_TOLERANCE_VIOLATED)
    assert outcomes[1.0] == (GoalStatus.SUCCEEDED, R.SUCCESSFUL)


def test_velocity_variant_wrapping_keeps_the_error_small():
    """Commands just beyond +-pi on continuous joints (upstream's wrapping test)."""
    rig, _ = start_jtc("velocity", positions=[3.0, -3.0])
    try:
        states = rig.record_state()
        rig.publish(traj(J, [pt([-3.0, 3.0], 1.0)]))  # 0.28 rad across the +-pi seam
        rig.run(1.5)
        assert max(abs(e) for s in states for e in s.error.positions) < 0.7
        assert max(abs(p) for s in states for p in s.desired.positions) < 3.0 + 0.3
    finally:
        rig.close()


def test_pos_vel_variant_writes_position_and_velocity():
    rig, _ = start_jtc("pos_vel")
    try:
        rig.publish(traj(J, [pt(TARGET, 1.0, [0, 0])]))
        rig.run(0.5)
        pv = rig.robot.pv["joint1"]
        assert 0.0 < pv.command_position < TARGET[0] and pv.command_velocity > 0.1
        rig.run(1.0)
        assert rig.robot.positions() == pytest.approx(TARGET, abs=1e-3)
        rig.switch(stop=["arm"])
        assert pv.command_velocity == 0.0 and pv.command_position == rig.robot.state["joint1"].position
    finally:
        rig.close()


def test_pos_vel_acc_variant_writes_accelerations():
    rig, _ = start_jtc("pos_vel_acc")
    try:
        rig.publish(traj(J, [pt(TARGET, 1.0, [0, 0], [0, 0])]))
        rig.run(0.1)
        pva = rig.robot.pva["joint1"]
        assert pva.command_acceleration > 0.1 and pva.command_velocity > 0.0
        rig.switch(stop=["arm"])
        assert (pva.command_velocity, pva.command_acceleration) == (0.0, 0.0)
    finally:
        rig.close()


def test_position_variant_stopping_holds_the_measured_position():
    rig, _ = start_jtc("position")
    try:
        rig.publish(traj(J, [pt([1.0, 1.0], 1.0)]))
        rig.run(0.3)
        rig.switch(stop=["arm"])
        data = rig.robot.state["joint1"]
        assert data.command_position == data.position
    finally:
        rig.close()


def test_threaded_state_publisher_and_action_monitor(monkeypatch):
    """Real mode: nothing is published or relayed from update(); threads do it."""
    monkeypatch.setattr(JointTrajectoryController, "SYNCHRONOUS", False)
    rig, ctrl = start_jtc("position", action_monitor_rate=100.0, state_publish_rate=100.0)
    try:
        assert ctrl.ros.monitor_worker._thread is not None and not ctrl.ros.state_publisher.synchronous
        states = rig.record_state()
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt(TARGET, 0.3)])))
        assert goal.get_goal_status() == GoalStatus.ACTIVE
        deadline = _time.monotonic() + 5.0
        while not goal.is_done() and _time.monotonic() < deadline:
            rig.cycle()
            _time.sleep(0.002)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED
        assert states and goal.feedback
        threads = [ctrl.ros.monitor_worker._thread, ctrl.ros.state_publisher._thread]
        rig.switch(stop=["arm"])
        assert rig.cm.unload_controller("arm").ok
        assert not any(t.is_alive() for t in threads)
    finally:
        rig.close()


def test_update_does_not_build_messages_in_threaded_mode(monkeypatch):
    monkeypatch.setattr(PositionJointTrajectoryController, "SYNCHRONOUS", False)
    rig, ctrl = start_jtc("position")
    try:
        built = []
        original = ctrl.ros._build_state
        import threading
        loop_thread = threading.current_thread()
        monkeypatch.setattr(ctrl.ros.state_publisher, "_build",
                            lambda: built.append(threading.current_thread()) or original())
        rig.run(0.2)
        _time.sleep(0.05)
        assert built and loop_thread not in built
    finally:
        rig.close()


def test_goals_and_cancels_racing_the_action_monitor_never_deadlock(monkeypatch):
    """actionlib runs goal/cancel callbacks under its server lock while the monitor thread relays
    results and feedback: the JTC must never take the two locks in opposite orders (the rostests
    once caught a cancel left unanswered forever under load)."""
    monkeypatch.setattr(JointTrajectoryController, "SYNCHRONOUS", False)
    rig, _ = start_jtc("position", action_monitor_rate=2000.0, state_publish_rate=100.0)
    stop = threading.Event()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: make any lock-order window actually race

    def loop():
        while not stop.is_set():
            rig.cycle()
            _time.sleep(0.0005)

    looper = threading.Thread(target=loop, daemon=True)
    looper.start()
    try:
        client = rig.client()
        for k in range(150):
            goal = client.send_goal(fjt_goal(traj(J, [pt([0.3 * (k % 2), 0.1], 2.0)])))
            _time.sleep(0.003)
            goal.cancel()
            deadline = _time.monotonic() + 2.0
            while not goal.is_done() and _time.monotonic() < deadline:
                _time.sleep(0.001)
            assert goal.is_done(), f"cancel {k} never answered (status {goal.get_goal_status()})"
            assert goal.get_goal_status() == GoalStatus.PREEMPTED
    finally:
        sys.setswitchinterval(interval)
        stop.set()
        looper.join(2.0)
        rig.close()


def test_cancel_callback_under_the_server_lock_while_the_monitor_relays_does_not_deadlock(monkeypatch):
    """The exact interleaving of the deadlock, forced: the monitor is inside its critical section
    when actionlib (holding its server lock) delivers a cancel."""
    monkeypatch.setattr(JointTrajectoryController, "SYNCHRONOUS", False)
    rig, ctrl = start_jtc("position", action_monitor_rate=50.0)
    try:
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt([0.3, 0.1], 2.0)])))
        rig.run(0.05)
        monitor_inside, cancel_holds_server_lock = threading.Event(), threading.Event()
        original_feedback = ctrl.executor.feedback

        def feedback():
            if threading.current_thread() is ctrl.ros.monitor_worker._thread:
                monitor_inside.set()
                cancel_holds_server_lock.wait(2.0)
                _time.sleep(0.05)  # let the cancel callback block on whatever it needs next
            return original_feedback()

        monkeypatch.setattr(ctrl.executor, "feedback", feedback)
        server = ctrl.ros.action_server
        original_cancel_cb = server.cancel_cb

        def cancel_cb(handle):  # runs with the server's lock held, like actionlib's
            cancel_holds_server_lock.set()
            original_cancel_cb(handle)

        server.cancel_cb = cancel_cb
        assert monitor_inside.wait(2.0)
        canceller = threading.Thread(target=goal.cancel, daemon=True)
        canceller.start()
        canceller.join(3.0)
        assert not canceller.is_alive(), "cancel deadlocked against the action monitor"
        monkeypatch.setattr(ctrl.executor, "feedback", original_feedback)
        rig.run(0.3, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.PREEMPTED
    finally:
        rig.close()


def test_position_variant_commands_through_a_handle_with_its_own_set_command():
    """Plain JointHandles get the cycle's commands in one map over their data objects; a handle
    class with its own ``set_command`` (e.g. one that converts units) is still called."""
    from rospy_control.hardware_interface import JointHandle, PositionJointInterface
    from test_jtc_sim import RRBOT, JtcRig, jtc_type, rrbot_params

    calls = []

    class Recording(JointHandle):
        def set_command(self, command):
            calls.append((self.get_name(), command))
            super().set_command(command)

    rig = JtcRig(dict(RRBOT), mode="position")
    try:
        iface = rig.robot.get(PositionJointInterface)
        plain = iface.get_handle(J[1])
        iface.register_handle(Recording(rig.robot.js.get_handle(J[1]), plain._cmd_data, plain._cmd_field))
        rig.start("arm", jtc_type("position"), rrbot_params(J))
        goal = rig.client().send_goal(fjt_goal(traj(J, [pt(TARGET, 1.0)])))
        rig.run(2.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_result()
        assert len(calls) > 50 and {name for name, _ in calls} == {J[1]}
        assert calls[-1][1] == pytest.approx(TARGET[1])
        assert rig.robot.positions() == pytest.approx(TARGET, abs=0.02)
    finally:
        rig.close()
