"""joint_state_controller: params, rate keeping with injected time, values, extra joints."""
from __future__ import annotations

import logging

import pytest
from sensor_msgs.msg import JointState

JSC = "joint_state_controller/JointStateController"


def run(rig, jsc, start: float, stop: float, dt: float = 0.01):
    """Start ``jsc`` at ``start`` (direct life-cycle calls) and update until ``stop``."""
    jsc.start_request(start)
    steps = int(round((stop - start) / dt))
    times = [start + k * dt for k in range(steps + 1)]
    for t in times:
        jsc.update_request(t, dt)
    return times


def test_missing_publish_rate_fails_the_load(rig):
    rig.root_nh.set_param("jsc", {"type": JSC})
    result = rig.cm.load_controller("jsc")
    assert not result.ok and "Parameter 'publish_rate' not set" in result.message


def test_claims_nothing_and_publishes_on_root_namespace(rig):
    rig.load("jsc", JSC, publish_rate=50.0)
    [entry] = rig.cm.list_controllers()[0].claimed_resources
    assert (entry.hardware_interface, entry.resources) == ("hardware_interface::JointStateInterface", [])
    assert rig.graph.num_publishers("/joint_states") == 1


def test_first_cycle_publishes_then_rate_is_kept(rig):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=10.0)
    times = run(rig, jsc, 1.0, 2.0)
    assert len(times) == 101
    stamps = [m.header.stamp.to_sec() for m in msgs]
    assert stamps[0] == pytest.approx(1.0)
    assert stamps == pytest.approx([1.0 + 0.1 * k for k in range(11)], abs=1e-6)


@pytest.mark.parametrize("rate", [50.0, 100.0, 33.0])
def test_average_rate_within_one_percent(rig, rate):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=rate)
    run(rig, jsc, 10.0, 20.0, dt=0.001)
    assert len(msgs) == pytest.approx(rate * 10.0, rel=0.01)


@pytest.mark.parametrize("rate", [0.0, -5.0])
def test_non_positive_rate_never_publishes(rig, rate):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=rate)
    run(rig, jsc, 1.0, 2.0)
    assert msgs == []


def test_values_equal_the_handles_and_stamps_the_update_time(rig):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=100.0)
    for i, data in enumerate(rig.robot.joints.values()):
        data.position, data.velocity, data.effort = 1.0 + i, 2.0 + i, 3.0 + i
    jsc.start_request(5.0)
    jsc.update_request(5.0, 0.01)
    [msg] = msgs
    assert msg.name == ["j1", "j2", "j3"]
    assert msg.position == [1.0, 2.0, 3.0] and msg.velocity == [2.0, 3.0, 4.0]
    assert msg.effort == [3.0, 4.0, 5.0]
    assert msg.header.stamp.to_sec() == 5.0 and msg.header.frame_id == ""


def test_joints_param_selects_subset_and_order(rig):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=100.0, joints=["j3", "j1"])
    rig.robot.joints["j3"].position = 0.3
    jsc.start_request(1.0)
    jsc.update_request(1.0, 0.01)
    assert msgs[0].name == ["j3", "j1"] and msgs[0].position[0] == 0.3


def test_unknown_joint_in_joints_fails_the_load(rig):
    rig.root_nh.set_param("jsc", {"type": JSC, "publish_rate": 10.0, "joints": ["j1", "nope"]})
    result = rig.cm.load_controller("jsc")
    assert not result.ok and "Could not find resource 'nope'" in result.message


def test_extra_joints_ok(rig):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=100.0, extra_joints=[
        {"name": "extra1", "position": 10.0, "velocity": 20.0, "effort": 30.0},
        {"name": "extra2", "position": -10.0},
        {"name": "extra3"},
    ])
    jsc.start_request(1.0)
    jsc.update_request(1.0, 0.01)
    msg = msgs[0]
    assert msg.name == ["j1", "j2", "j3", "extra1", "extra2", "extra3"]
    assert msg.position[3:] == [10.0, -10.0, 0.0]
    assert msg.velocity[3:] == [20.0, 0.0, 0.0]
    assert msg.effort[3:] == [30.0, 0.0, 0.0]


def test_extra_joints_ko_entries_are_skipped_with_errors(rig, caplog):
    msgs = rig.record("joint_states", JointState)
    with caplog.at_level(logging.WARNING):
        jsc = rig.load("jsc", JSC, publish_rate=100.0, extra_joints=[
            "not a struct",
            {"position": 1.0},                       # no name
            {"name": "j1"},                          # already published
            {"name": "bad_pos", "position": "x"},
            {"name": "bad_vel", "velocity": [1]},
            {"name": "bad_eff", "effort": True},
            {"name": "good", "effort": 2},
        ])
    jsc.start_request(1.0)
    jsc.update_request(1.0, 0.01)
    assert msgs[0].name == ["j1", "j2", "j3", "good"]
    assert msgs[0].effort[3] == 2.0
    text = caplog.text
    assert "is not a struct" in text and "does not specify name" in text
    assert "already contains specified extra joint 'j1'" in text
    assert "Extra joint 'bad_pos' does not specify a valid default position" in text


def test_extra_joints_not_a_list_is_ignored(rig, caplog):
    jsc = rig.load("jsc", JSC, publish_rate=100.0, extra_joints={"name": "x"})
    assert jsc.extra_names == []
    assert "Extra joints specification is not an array" in caplog.text


def test_rate_bookkeeping_kept_across_stop_and_start(rig):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=10.0)
    run(rig, jsc, 1.0, 1.0)                     # first publish at 1.0
    jsc.stop_request(1.0)
    jsc.start_request(2.0)                      # restart one second later
    for k in range(3):
        jsc.update_request(2.0 + 0.01 * k, 0.01)
    # not re-initialised: it catches up one message per cycle
    assert len(msgs) == 4


def test_busy_publisher_does_not_advance_the_rate(rig):
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=10.0)
    jsc.start_request(1.0)
    publish = jsc.publisher.try_publish
    jsc.publisher.try_publish = lambda msg: False
    jsc.update_request(1.0, 0.01)
    last = jsc.rate.last
    jsc.publisher.try_publish = publish
    jsc.update_request(1.01, 0.01)
    assert len(msgs) == 1 and jsc.rate.last == pytest.approx(last + 0.1)


def test_through_the_controller_manager_loop(rig):
    msgs = rig.record("joint_states", JointState)
    rig.load("jsc", JSC, publish_rate=50.0)
    rig.switch(start=["jsc"])
    for _ in range(100):
        rig.cycle(0.01)
    assert len(msgs) == pytest.approx(50, abs=2)
    assert msgs[-1].header.stamp.to_sec() <= rig.t


def test_a_handle_with_its_own_getters_is_read_through_them(rig):
    """The controller reads plain handles' data objects directly; a handle that computes its values
    (a subclass overriding the getters) is still asked for them."""
    from rospy_control.hardware_interface import JointStateHandle, JointStateInterface

    class Doubled(JointStateHandle):
        def get_position(self):
            return 2.0 * self.get_data().position

    iface = rig.robot.get(JointStateInterface)
    iface.register_handle(Doubled("j2", rig.robot.joints["j2"]))
    msgs = rig.record("joint_states", JointState)
    jsc = rig.load("jsc", JSC, publish_rate=100.0)
    for i, data in enumerate(rig.robot.joints.values()):
        data.position, data.velocity, data.effort = 1.0 + i, 2.0 + i, 3.0 + i
    jsc.start_request(5.0)
    jsc.update_request(5.0, 0.01)
    [msg] = msgs
    assert msg.position == [1.0, 4.0, 3.0] and msg.velocity == [2.0, 3.0, 4.0]
