"""JointTrajectoryInterface and the TrajectoryDevice contract (no controller)."""
from __future__ import annotations

import threading

import pytest

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface import (
    INTERFACES, ExecutionState, JointData, JointStateHandle, JointTrajectoryInterface, TrajectoryDevice,
    TrajectoryFeedback, resolve_interface,
)


class Device(TrajectoryDevice):
    def send_trajectory(self, request):
        return None

    def cancel(self, goal_id):
        pass


def state(name):
    return JointStateHandle(name, JointData())


def test_registered_under_the_ros_control_name():
    assert resolve_interface("hardware_interface/JointTrajectoryInterface") is JointTrajectoryInterface
    assert "hardware_interface/JointTrajectoryInterface" in INTERFACES.names()
    assert JointTrajectoryInterface.TYPE_NAME == "hardware_interface::JointTrajectoryInterface"


def test_handles_claim_their_joints():
    device = Device("board", ["a", "b"])
    iface = JointTrajectoryInterface()
    iface.register_device(device, [state("a"), state("b")])
    assert iface.get_names() == ["a", "b"]
    assert iface.get_handle("b").get_device() is device
    assert iface.get_claims() == {"b"}


def test_a_joint_the_device_does_not_execute_is_refused_naming_both():
    with pytest.raises(HardwareInterfaceError, match="device 'board' does not execute it"):
        JointTrajectoryInterface().register_device(Device("board", ["a"]), [state("elbow")])


@pytest.mark.parametrize("name,joints,fragment", [
    ("", ["a"], "non-empty name"),
    ("board", [], "non-empty list of distinct names"),
    ("board", ["a", "a"], "non-empty list of distinct names"),
])
def test_bad_device_definitions_are_refused(name, joints, fragment):
    with pytest.raises(HardwareInterfaceError, match=fragment):
        Device(name, joints)


def test_feedback_of_the_wrong_size_is_refused_naming_the_device():
    device = Device("board", ["a", "b"])
    with pytest.raises(HardwareInterfaceError, match="'board': feedback has 1 position"):
        device.publish_feedback(TrajectoryFeedback(1.0, [0.0], [0.0]))


def test_reports_from_many_threads_all_arrive_in_order_per_thread():
    device = Device("board", ["a"])

    def produce(base):
        for i in range(500):
            device.report_accepted(base + i)

    threads = [threading.Thread(target=produce, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    got = []
    while any(t.is_alive() for t in threads) or got == []:
        got.extend(device.poll_reports())
    for t in threads:
        t.join()
    got.extend(device.poll_reports())
    assert len(got) == 2000
    for k in range(4):
        ids = [r.goal_id for r in got if k * 1000 <= r.goal_id < (k + 1) * 1000]
        assert ids == list(range(k * 1000, k * 1000 + 500))
    assert all(r.state is ExecutionState.ACCEPTED for r in got)


def test_report_aborted_keeps_code_message_and_joint():
    device = Device("board", ["a"])
    device.report_aborted(7, "limit switch", "a", -5)
    (report,) = device.poll_reports()
    assert (report.goal_id, report.state, report.code, report.message, report.joint) == (
        7, ExecutionState.ABORTED, -5, "limit switch", "a")
    assert report.state.terminal and not ExecutionState.ACCEPTED.terminal


def test_unimplemented_contract_says_which_class():
    with pytest.raises(NotImplementedError, match="TrajectoryDevice does not implement send_trajectory"):
        TrajectoryDevice("board", ["a"]).send_trajectory(None)
