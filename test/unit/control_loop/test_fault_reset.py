"""~reset_faults without ROS: FaultReset over the simulated arm, its RobotHW and a running control loop."""
from __future__ import annotations

import os
import threading
import time

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.control_loop.loop import ControlLoop
from rospy_control.control_loop.fault_reset import FaultReset
from rospy_control.robot_hw import MiddlewareRobotHW

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ARM_XML = os.path.join(ROOT, "config", "arm_hardware.xml")
ARM_URDF = os.path.join(ROOT, "urdf", "arm.urdf")
GRIPPER_URDF = """<robot name="gripper"><link name="palm"/><link name="finger"/>
  <joint name="finger_joint" type="prismatic"><parent link="palm"/><child link="finger"/>
    <axis xyz="1 0 0"/><limit lower="0" upper="0.04" velocity="0.1" effort="10"/></joint></robot>"""


def wait_until(predicate, timeout=5.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.005)
    return bool(predicate())


class Manager:
    """Controller-manager double: records the cycles that asked for a controller reset."""

    def __init__(self):
        self.lock = threading.Lock()
        self.updates = 0
        self.resets = []

    def update(self, time_, period, reset_controllers=False):
        with self.lock:
            self.updates += 1
            if reset_controllers:
                self.resets.append(self.updates)


@pytest.fixture
def rig():
    hw = MiddlewareRobotHW.from_config(ARM_XML, ARM_URDF, {})
    manager = Manager()
    loop = ControlLoop(hw, manager, rate=200.0, now=time.monotonic)
    loop.start()
    yield hw, manager, loop
    loop.stop()
    hw.shutdown()


def test_nothing_to_reset(rig):
    hw, manager, loop = rig
    ok, message = FaultReset(hw, loop).reset()
    assert ok and "nothing to reset" in message
    assert manager.resets == []


def test_refused_while_the_motor_is_silent_then_effective_and_the_controllers_restart(rig):
    hw, manager, loop = rig
    mw = hw.middleware
    sim_of(mw).set_fault("elbow_motor", "silent", True)
    assert wait_until(lambda: "elbow_joint" in hw.faulted_joints())
    resetter = FaultReset(hw, loop)
    ok, message = resetter.reset()
    assert not ok
    assert "still in FAULT: elbow_motor (" in message and "reset failed" in message
    assert "elbow_joint" in hw.faulted_joints()
    assert manager.resets == []
    sim_of(mw).set_fault("elbow_motor", "silent", False)
    ok, message = resetter.reset()
    assert ok, message
    assert message == "recovered: elbow_motor"
    # answered only once the loop took the joint back: no fault left, controllers restarted once
    assert hw.faulted_joints() == {}
    with manager.lock:
        assert len(manager.resets) == 1 and manager.resets[0] < manager.updates
    kinds = [e.kind for e in mw.events() if e.unit == "elbow_motor"]
    assert kinds[0] == "fault" and "reset_failed" in kinds and kinds[-1] == "recovered"


def test_an_over_temperature_motor_is_refused_until_it_cooled(rig):
    hw, manager, loop = rig
    mw = hw.middleware
    sim_of(mw).set_fault("wrist_1_motor", "over_temperature", True, 120.0)
    assert wait_until(lambda: "wrist_1_joint" in hw.faulted_joints())
    ok, message = FaultReset(hw, loop).reset()
    assert not ok and "wrist_1_motor" in message and "temperature" in message
    sim_of(mw).set_fault("wrist_1_motor", "over_temperature", False)
    ok, message = FaultReset(hw, loop).reset()
    assert ok, message


def test_diagnostics_show_the_fault_its_reset_and_host_stalls(rig):
    from rospy_control.adapter.diagnostics import DriverDiagnostics
    hw, manager, loop = rig
    mw = hw.middleware
    diag = DriverDiagnostics(mw, "/driver", loop=loop, robot_hw=hw, simulator=sim_of(mw))

    def statuses():
        return {s.name: s for s in diag.build().status}

    st = statuses()["driver: faults"]
    assert st.level == 0 and st.message == "no unit in FAULT"
    sim_of(mw).set_fault("elbow_motor", "silent", True)
    assert wait_until(lambda: "elbow_joint" in hw.faulted_joints())
    st = statuses()["driver: faults"]
    assert st.level == 2 and st.message.startswith("FAULT: elbow_motor: no reply")
    events = [kv.value for kv in st.values if kv.key.startswith("#") and kv.key.endswith(" elbow_motor")]
    assert events and events[0].startswith("fault: no reply")
    sim_of(mw).set_fault("elbow_motor", "silent", False)
    assert FaultReset(hw, loop).reset()[0]
    st = statuses()["driver: faults"]
    assert st.level == 0 and "1 recovered by reset" in st.message
    values = [kv.value for kv in st.values if kv.key.endswith(" elbow_motor")]
    assert values[-2].startswith("reset_requested") and values[-1].startswith("recovered")
    sim = {kv.key: kv.value for kv in statuses()["driver: simulator"].values}
    assert int(sim["elbow_motor command frames"]) > 0 and "elbow_motor max command step (rad)" in sim
    loop_values = {kv.key: kv.value for kv in statuses()["driver: control loop"].values}
    assert {"host stalls (>= 20 ms)", "longest host stall (ms)", "trajectory delay (ms)"} <= set(loop_values)
    channel = {kv.key: kv.value for kv in statuses()["driver: channel can0"].values}
    assert any("stall" in k for k in channel), sorted(channel)


def test_the_arm_combined_with_another_robot_hw_is_reset_and_its_controllers_restart():
    """A CombinedRobotHW (the CAN arm beside a RobotHW of a user's own): the same reset, through the
    capabilities the parts declare, with the controllers' restart requested by the arm."""
    from rospy_control.examples.simple_robot_hw import SimpleRobotHW
    from rospy_control.hardware_interface.combined_robot_hw import CombinedRobotHW, ParamNodeHandle

    gripper = SimpleRobotHW()
    root = ParamNodeHandle({"robot_description": GRIPPER_URDF})
    assert gripper.init(root, ParamNodeHandle({"joints": ["finger_joint"]}, "/gripper"))
    arm = MiddlewareRobotHW.from_config(ARM_XML, ARM_URDF, {})
    hw = CombinedRobotHW([arm, gripper])
    manager = Manager()
    loop = ControlLoop(hw, manager, rate=200.0, now=time.monotonic)
    hw.start()
    loop.start()
    try:
        assert hw.limit_command_steps(0.005)                      # the arm's motors get their cap
        assert hw.middlewares() == [arm.middleware]
        sim_of(arm).set_fault("elbow_motor", "silent", True)
        assert wait_until(lambda: "elbow_joint" in hw.faulted_joints())
        resetter = FaultReset(hw, loop)
        ok, message = resetter.reset()
        assert not ok and "still in FAULT: elbow_motor (" in message
        sim_of(arm).set_fault("elbow_motor", "silent", False)
        ok, message = resetter.reset()
        assert ok, message
        assert message == "recovered: elbow_motor"
        assert hw.faulted_joints() == {}
        with manager.lock:
            assert len(manager.resets) == 1
        report = hw.status()
        assert {"elbow_joint", "finger_joint"} <= set(report["joints"])
    finally:
        loop.stop()
        hw.shutdown()
