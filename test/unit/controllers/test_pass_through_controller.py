"""pass_through_controllers/JointTrajectoryController against the fake trajectory-executing device."""
from __future__ import annotations

import math
import time as _time

import genpy
import pytest
from control_msgs.msg import FollowJointTrajectoryResult as R
from control_msgs.msg import JointTolerance, JointTrajectoryControllerState
from control_msgs.srv import QueryTrajectoryStateRequest

from pt_rig import J3, JTC_TYPE, PT_TYPE, PtRig, pt_params
from rospy_control.controllers.pass_through_controllers import JointTrajectoryController
from rospy_control.testing import GoalStatus
from test_jtc_sim import fjt_goal, pt, traj

TARGET = [0.3, -0.2, 0.4]


@pytest.fixture
def rig():
    r = PtRig()
    r.start()
    r.run(0.05)
    yield r
    r.shutdown()


def move(target=TARGET, t=0.5, **kw):
    return fjt_goal(traj(J3, [pt(target, t, [0.0] * 3)]), **kw)


# ------------------------------------------------------------------------------------------- success
def test_goal_is_executed_by_the_device_and_succeeds(rig):
    states = []
    rig.root_nh.subscribe("arm/state", JointTrajectoryControllerState, states.append)
    goal = rig.client().send_goal(fjt_goal(traj(["j3", "j1", "j2"], [pt([0.4, 0.3, -0.2], 0.5, [0.0] * 3)])))
    assert goal.get_goal_status() == GoalStatus.ACTIVE
    request = rig.device.requests[-1]
    assert request.joint_names == J3  # the claimed order, whatever the goal's order
    assert request.points[-1].positions == pytest.approx(TARGET)
    assert request.points[-1].velocities == pytest.approx([0.0] * 3)
    assert request.start_time == pytest.approx(rig.t + rig.dt)  # stamp 0 -> the next cycle
    rig.run(2.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    assert goal.get_result().error_code == R.SUCCESSFUL
    assert rig.positions() == pytest.approx(TARGET, abs=1e-6)
    assert goal.feedback and states
    mid = [s for s in states if 0.05 < s.actual.positions[0] < 0.25][0]
    assert mid.joint_names == J3
    errors = [d - a for d, a in zip(mid.desired.positions, mid.actual.positions)]
    assert mid.error.positions == pytest.approx(errors)
    assert max(abs(e) for e in mid.error.positions) < 0.02  # the device follows the plan


@pytest.mark.parametrize("report_in_time", [True, False])
def test_goal_succeeds_only_once_the_device_reports_it(rig, report_in_time):
    rig.device.hold_done_report = True  # the device is at the end, its report is late
    goal = rig.client().send_goal(move(t=0.5, goal_time=0.3))
    end = rig.t + 0.5
    rig.run(0.7)
    assert rig.positions() == pytest.approx(TARGET, abs=1e-6)
    assert goal.get_goal_status() == GoalStatus.ACTIVE  # the plan is done, the device has not said so
    if report_in_time:
        rig.device.hold_done_report = False
    rig.run(2.0, until=goal.is_done)
    if report_in_time:
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    else:
        assert goal.get_goal_status() == GoalStatus.ABORTED
        assert goal.get_result().error_code == R.GOAL_TOLERANCE_VIOLATED
        text = goal.get_result().error_string
        assert "goal_time_tolerance exceeded: device 'arm_board' still executing" in text
        limit = end + 0.3 + JointTrajectoryController.DEFAULT_DONE_TIMEOUT
        assert limit - 0.01 <= rig.t <= limit + 0.1  # not before, and not much after (monitor at 20 Hz)


def test_query_state_and_command_topic(rig):
    rig.publish(traj(J3, [pt(TARGET, 0.4)]))
    assert rig.device.requests[-1].points[-1].positions == pytest.approx(TARGET)
    rig.run(0.2)
    request = QueryTrajectoryStateRequest(time=genpy.Time.from_sec(rig.t))
    response = rig.root_nh.call_service("arm/query_state", request)
    assert response.name == J3
    assert 0.0 < response.position[0] < 0.3
    rig.run(1.0)
    assert rig.positions() == pytest.approx(TARGET, abs=1e-6)


def test_partial_goal_fills_the_other_joints_from_the_plan():
    r = PtRig()
    try:
        r.start(allow_partial_joints_goal=True)
        goal = r.client().send_goal(fjt_goal(traj(["j2"], [pt([0.5], 0.4)])))
        assert goal.get_goal_status() == GoalStatus.ACTIVE
        assert [p.positions for p in r.device.requests[-1].points] == [pytest.approx([0.0, 0.5, 0.0])]
        r.run(2.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED
        assert r.positions() == pytest.approx([0.0, 0.5, 0.0], abs=1e-6)
    finally:
        r.shutdown()


# ----------------------------------------------------------------------------------------- validation
INVALID = [
    ("wrong joint count", traj(["j1"], [pt([1.0], 1.0)]), R.INVALID_JOINTS),
    ("unknown joint", traj(["j1", "j2", "elbow"], [pt([1, 1, 1], 1.0)]), R.INVALID_JOINTS),
    ("duplicated joint", traj(["j1", "j1", "j2"], [pt([1, 1, 1], 1.0)]), R.INVALID_JOINTS),
    ("empty goal", traj([], []), R.INVALID_JOINTS),
    ("no positions", traj(J3, [pt([], 1.0, [0, 0, 0])]), R.INVALID_GOAL),
    ("size mismatch", traj(J3, [pt([1.0], 1.0)]), R.INVALID_GOAL),
    ("equal times", traj(J3, [pt([1, 1, 1], 1.0), pt([0, 0, 0], 1.0)]), R.INVALID_GOAL),
    ("nan position", traj(J3, [pt([0.1, math.nan, 0.1], 1.0)]), R.INVALID_GOAL),
    ("beyond the position limit", traj(J3, [pt([0.1, 0.1, 5.0], 1.0)]), R.INVALID_GOAL),
    ("velocity far beyond the limit", traj(J3, [pt([0.1, 0.1, 0.1], 1.0, [0, 50.0, 0])]), R.INVALID_GOAL),
    ("all in the past", traj(J3, [pt([0.1, 0.1, 0.1], 0.5)], stamp=50.0), R.INVALID_GOAL),
]


@pytest.mark.parametrize("name,msg,code", INVALID, ids=[c[0] for c in INVALID])
def test_validation_gives_the_codes_and_strings_of_the_joint_trajectory_controller(rig, name, msg, code):
    goal = rig.client().send_goal(fjt_goal(msg))
    assert goal.get_goal_status() == GoalStatus.REJECTED
    assert goal.get_result().error_code == code
    assert not rig.device.requests  # nothing reached the device
    jtc_rig = PtRig()
    try:
        jtc_rig.start(JTC_TYPE)
        jtc_rig.run(0.05)
        jtc_goal = jtc_rig.client().send_goal(fjt_goal(msg))
        assert jtc_goal.get_goal_status() == GoalStatus.REJECTED
        assert goal.get_result().error_code == jtc_goal.get_result().error_code
        assert goal.get_result().error_string == jtc_goal.get_result().error_string
    finally:
        jtc_rig.shutdown()


def test_device_refusing_at_once_rejects_the_goal_and_the_running_goal_continues(rig):
    first = rig.client().send_goal(move())
    rig.run(0.1)
    rig.device.refuse_reason = "step rate 9.1 kHz on axis 'j2' exceeds the 8 kHz limit"
    second = rig.client().send_goal(move([0.1, 0.1, 0.1]))
    assert second.get_goal_status() == GoalStatus.REJECTED
    assert second.get_result().error_code == R.INVALID_GOAL
    assert second.get_result().error_string == (
        "device 'arm_board' refused the trajectory: step rate 9.1 kHz on axis 'j2' exceeds the 8 kHz limit")
    rig.run(2.0, until=first.is_done)
    assert first.get_goal_status() == GoalStatus.SUCCEEDED


def test_device_refusing_later_aborts_the_goal_with_its_reason(rig):
    rig.device.ack_delay = 0.05
    rig.device.refuse_later_reason = "buffer full (400 segments)"
    goal = rig.client().send_goal(move())
    assert goal.get_goal_status() == GoalStatus.ACTIVE
    rig.run(1.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    assert goal.get_result().error_code == R.INVALID_GOAL
    text = goal.get_result().error_string
    assert "device 'arm_board' refused the trajectory: buffer full (400 segments)" in text


def test_no_acknowledgement_aborts_the_goal():
    r = PtRig()
    try:
        r.start(device_ack_timeout=0.3)
        r.device.ack_delay = 10.0
        goal = r.client().send_goal(move(t=3.0, path={j: -1.0 for j in J3}))
        r.run(2.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.ABORTED
        assert "device 'arm_board' did not acknowledge the trajectory" in goal.get_result().error_string
        assert r.device.cancels  # and it is told not to start it later
    finally:
        r.shutdown()


def test_silent_device_aborts_the_goal():
    r = PtRig()
    try:
        r.start(device_feedback_timeout=0.2)
        goal = r.client().send_goal(move(t=2.0))
        r.run(0.3)
        r.device.silent = True
        r.run(2.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.ABORTED
        assert "no feedback from device 'arm_board'" in goal.get_result().error_string
    finally:
        r.shutdown()


# ----------------------------------------------------------------------------------------- tolerances
def test_path_tolerance_violation_on_the_last_joint_aborts_and_stops_the_device(rig):
    goal = rig.client().send_goal(move(t=1.0))
    rig.run(0.3)
    rig.device.offsets["j3"] = 0.2  # j1 and j2 track, j3 does not
    rig.run(1.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    result = goal.get_result()
    assert result.error_code == R.PATH_TOLERANCE_VIOLATED
    assert result.error_string.startswith("j3 path error")
    assert "device 'arm_board' was asked to stop" in result.error_string
    assert rig.device.cancels == [rig.device.requests[-1].goal_id]


def test_goal_tolerance_violation_on_a_middle_joint(rig):
    no_path = {j: -1.0 for j in J3}
    goal = rig.client().send_goal(move(t=0.5, path=no_path, goal={j: 0.01 for j in J3}, goal_time=0.2))
    rig.device.offsets["j2"] = 0.05
    rig.run(2.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    assert goal.get_result().error_code == R.GOAL_TOLERANCE_VIOLATED
    assert goal.get_result().error_string.startswith("j2 goal error")


def test_goal_time_overrun_aborts(rig):
    rig.device.speed = 0.5  # the device runs behind its plan
    start = rig.t
    goal = rig.client().send_goal(move(t=0.5, path={j: -1.0 for j in J3}, goal_time=0.2))
    rig.run(3.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    assert goal.get_result().error_code == R.GOAL_TOLERANCE_VIOLATED
    # aborted at the end plus goal_time (+ device_done_timeout at most), not left running
    assert rig.t - start <= 0.5 + 0.2 + JointTrajectoryController.DEFAULT_DONE_TIMEOUT + 0.05
    assert rig.device.cancels


# ------------------------------------------------------------------------------- cancel, replacement
def test_cancel_decelerates_and_preempts_once_the_device_confirms(rig):
    goal = rig.client().send_goal(move(t=1.0))
    rig.run(0.4)
    goal.cancel()
    assert rig.device.cancels == [rig.device.requests[-1].goal_id]
    rig.run(0.1)
    assert goal.get_goal_status() == GoalStatus.PREEMPTING  # the device is still decelerating
    speeds = []
    rig.run(1.0, until=lambda: speeds.append(abs(rig.device.velocities[0])) or goal.is_done())
    assert goal.get_goal_status() == GoalStatus.PREEMPTED
    assert speeds[0] > 0.05 and speeds[-1] < 1e-6
    assert all(b <= a + 1e-9 for a, b in zip(speeds, speeds[1:]))  # a ramp down, no jump, no reversal
    assert 0.0 < rig.positions()[0] < TARGET[0] - 0.01  # stopped on the way


def test_unconfirmed_cancel_aborts_saying_the_device_may_still_move():
    r = PtRig()
    try:
        r.start(device_cancel_timeout=0.3)
        goal = r.client().send_goal(move(t=2.0))
        r.run(0.2)
        r.device.ignore_cancel = True
        goal.cancel()
        r.run(1.0, until=goal.is_done)
        assert goal.get_goal_status() == GoalStatus.ABORTED
        assert "did not confirm the cancel" in goal.get_result().error_string
        assert "may still be moving" in goal.get_result().error_string
    finally:
        r.shutdown()


def test_new_goal_replaces_the_running_one_and_the_device_splices(rig):
    first = rig.client().send_goal(move(t=1.0))
    rig.run(0.4)
    second = rig.client().send_goal(move([-0.1, 0.2, 0.0], t=0.6))
    rig.run(0.1)  # the action monitor relays at 20 Hz
    assert first.get_goal_status() == GoalStatus.PREEMPTED
    assert rig.device.requests[-1].replaces == rig.device.requests[-2].goal_id
    rig.run(2.0, until=second.is_done)
    assert second.get_goal_status() == GoalStatus.SUCCEEDED
    assert rig.positions() == pytest.approx([-0.1, 0.2, 0.0], abs=1e-6)
    assert not rig.device.cancels  # replaced, never stopped


def test_empty_goal_stops_the_device_and_succeeds(rig):
    first = rig.client().send_goal(move(t=1.0))
    rig.run(0.4)
    stop = rig.client().send_goal(fjt_goal(traj(J3, [])))
    assert rig.device.requests[-1].points == []
    rig.run(1.0, until=stop.is_done)
    assert first.get_goal_status() == GoalStatus.PREEMPTED
    assert stop.get_goal_status() == GoalStatus.SUCCEEDED
    assert 0.0 < rig.positions()[0] < TARGET[0]


# ----------------------------------------------------------------------------------- faults, stopping
def test_device_fault_aborts_with_its_code_naming_joint_device_and_cause(rig):
    rig.device.inject_fault("j2", "following error 0.31 rad (limit 0.2 rad)", after=0.2,
                            code=R.GOAL_TOLERANCE_VIOLATED)
    goal = rig.client().send_goal(move(t=1.0))
    rig.run(1.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    result = goal.get_result()
    assert result.error_code == R.GOAL_TOLERANCE_VIOLATED
    assert result.error_string == ("device 'arm_board' aborted the trajectory on joint 'j2': following error "
                                   "0.31 rad (limit 0.2 rad)")
    # the controller holds: the state's desired stops where the device stopped
    later = rig.client().send_goal(move([0.0, 0.0, 0.0], t=0.5))
    rig.run(2.0, until=later.is_done)
    assert later.get_goal_status() == GoalStatus.SUCCEEDED


def test_stopping_the_controller_mid_goal_cancels_on_the_device_and_aborts(rig):
    goal = rig.client().send_goal(move(t=1.0))
    rig.run(0.3)
    assert rig.switch(stop=["arm"]).ok
    assert goal.get_goal_status() == GoalStatus.ABORTED
    assert "controller stopped" in goal.get_result().error_string
    assert rig.device.cancels == [rig.device.requests[-1].goal_id]
    rig.run(0.5)
    assert rig.device.executing is None  # it decelerated and stopped


def test_resource_conflict_with_a_joint_trajectory_controller():
    r = PtRig()
    try:
        r.start()
        r.load("jtc", JTC_TYPE, pt_params())
        result = r.switch(start=["jtc"])
        assert not result.ok
        assert r.cm.get_controller_by_name("arm").state.label == "running"
        claims = {c.name: c for c in r.cm.list_controllers()}["arm"]
        resources = set().union(*(c.resources for c in claims.claimed_resources))
        assert resources == set(J3)
        assert r.switch(start=["jtc"], stop=["arm"]).ok  # one or the other
    finally:
        r.shutdown()


def test_joints_of_several_devices_fail_the_load():
    from rospy_control.hardware_interface import JointTrajectoryInterface
    from rospy_control.testing.trajectory_device import FakeTrajectoryDevice
    r = PtRig()
    try:
        other = FakeTrajectoryDevice("wrist_board", ["j3"])
        iface = r.robot.get(JointTrajectoryInterface)
        iface.register_device(other, [r.robot.js.get_handle("j3")])
        r.configure("arm", PT_TYPE, **pt_params())
        result = r.cm.load_controller("arm")
        assert not result.ok
        assert "one device" in result.message and "wrist_board" in result.message
    finally:
        r.shutdown()


def test_threaded_publisher_and_action_monitor(monkeypatch):
    monkeypatch.setattr(JointTrajectoryController, "SYNCHRONOUS", False)
    r = PtRig()
    try:
        ctrl = r.start(action_monitor_rate=100.0)
        assert ctrl.ros.monitor_worker._thread is not None and not ctrl.ros.state_publisher.synchronous
        states = []
        r.root_nh.subscribe("arm/state", JointTrajectoryControllerState, states.append)
        goal = r.client().send_goal(move(t=0.3))
        deadline = _time.monotonic() + 10.0
        while not goal.is_done() and _time.monotonic() < deadline:
            r.cycle()
            _time.sleep(0.002)
        assert goal.get_goal_status() == GoalStatus.SUCCEEDED
        assert states and goal.feedback
        threads = [ctrl.ros.monitor_worker._thread, ctrl.ros.state_publisher._thread]
        assert r.switch(stop=["arm"]).ok
        assert r.cm.unload_controller("arm").ok
        assert not any(t.is_alive() for t in threads)
    finally:
        r.shutdown()


def test_tolerance_entries_reach_every_joint(rig):
    """UR's ROS 1 check stopped at the first joint with a tolerance: here j1 and j2 fine, j3 not."""
    path = [JointTolerance(name=j, position=0.05) for j in J3]
    g = move(t=1.0)
    g.path_tolerance = path
    goal = rig.client().send_goal(g)
    rig.run(0.2)
    rig.device.offsets["j3"] = 0.08
    rig.run(0.5, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.ABORTED
    assert goal.get_result().error_string.startswith("j3 path error")


def test_command_refused_by_the_device_is_logged_and_nothing_moves(rig, caplog):
    rig.device.refuse_reason = "axes not homed"
    rig.publish(traj(J3, [pt(TARGET, 0.4)]))
    assert any("device 'arm_board' refused the trajectory: axes not homed" in r.getMessage()
               for r in caplog.records)
    rig.run(0.6)
    assert rig.positions() == pytest.approx([0.0, 0.0, 0.0])
    assert rig.device.executing is None


def test_load_time_parameters_are_checked():
    r = PtRig()
    try:
        r.configure("arm", PT_TYPE, **pt_params(device_ack_timeout=0.0))
        result = r.cm.load_controller("arm")
        assert not result.ok
        assert "device_ack_timeout" in result.message and "> 0" in result.message
    finally:
        r.shutdown()


@pytest.mark.parametrize("extrapolate", [True, False])
def test_old_feedback_is_extrapolated_to_now(extrapolate, monkeypatch):
    """A link 50 ms behind: without extrapolation the lag reads as a path error."""
    if not extrapolate:
        monkeypatch.setattr(JointTrajectoryController, "MAX_EXTRAPOLATION", 0.0)
    r = PtRig()
    try:
        r.start()
        r.device.feedback_delay = 0.05
        r.run(0.1)
        goal = r.client().send_goal(move([0.6, -0.6, 0.6], t=0.6, path={j: 0.03 for j in J3}))
        r.run(2.0, until=goal.is_done)
        if extrapolate:
            assert goal.get_goal_status() == GoalStatus.SUCCEEDED
        else:
            assert goal.get_goal_status() == GoalStatus.ABORTED
            assert goal.get_result().error_code == R.PATH_TOLERANCE_VIOLATED
    finally:
        r.shutdown()


def test_a_stalled_loop_keeps_the_plan_on_the_devices_clock(rig):
    """The loop held up 0.3 s mid-goal passes a bounded period (as the control loop does after a
    stall); the device ran on meanwhile, and the plan keeps its pace: no path error, success."""
    goal = rig.client().send_goal(move([0.6, -0.6, 0.6], t=1.0, path={j: 0.05 for j in J3}))
    rig.run(0.4)
    rig.t += 0.3                                  # the host did not run the loop for 0.3 s ...
    rig.graph.set_time(rig.t)
    rig.control(rig.t, 1.5 * rig.dt)              # ... and the loop's period is bounded
    rig.run(2.0, until=goal.is_done)
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_result()
    assert rig.positions() == pytest.approx([0.6, -0.6, 0.6], abs=1e-6)


def test_replacement_stamped_in_the_future_is_spliced_at_its_start(rig):
    first = rig.client().send_goal(move([0.6, 0.6, 0.6], t=1.0))
    rig.run(0.2)
    start = rig.t + 0.3
    second = rig.client().send_goal(fjt_goal(traj(J3, [pt([0.0, 0.0, 0.0], 0.5, [0.0] * 3)], stamp=start)))
    request = rig.device.requests[-1]
    assert request.start_time == pytest.approx(start) and request.replaces == rig.device.requests[-2].goal_id
    before = rig.positions()[0]
    rig.run(0.25)
    assert rig.positions()[0] > before + 0.05  # the first trajectory goes on until the splice
    rig.run(2.0, until=second.is_done)
    assert first.get_goal_status() == GoalStatus.PREEMPTED
    assert second.get_goal_status() == GoalStatus.SUCCEEDED  # plan and device agreed all along
    assert rig.positions() == pytest.approx([0.0, 0.0, 0.0], abs=1e-6)
