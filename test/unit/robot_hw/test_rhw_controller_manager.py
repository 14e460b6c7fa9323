"""The real controller manager switching real controllers on a MiddlewareRobotHW (simulated arm)."""
from __future__ import annotations

import threading
import time

import pytest

from rospy_control.controller_manager import ControllerManager
from rospy_control.controller_manager.controller_manager import STRICT
from rospy_control.middleware import ControlMode
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle

from robot_hw_testutil import ARM_HW, ARM_URDF, load_yaml, position, wait_until

ARM = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
       "wrist_3_joint"]


class Loop:
    """read -> cm.update -> write at 500 Hz on a thread, like the driver's control loop."""

    def __init__(self, hw, cm, graph) -> None:
        self.hw, self.cm, self.graph = hw, cm, graph
        self._stop = threading.Event()
        self.t = 0.0
        self.thread = threading.Thread(target=self._run, name="test.control_loop")

    def _run(self) -> None:
        dt = 0.002
        while not self._stop.is_set():
            self.t += dt
            self.graph.set_time(self.t)
            self.hw.read(self.t, dt)
            self.cm.update(self.t, dt, self.hw.consume_reset_request())
            self.hw.write(self.t, dt)
            time.sleep(dt)

    def __enter__(self) -> "Loop":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self.thread.join(2.0)


@pytest.mark.slow
def test_switching_position_and_velocity_group_controllers(make_hw):
    hw = make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))
    graph = InMemoryGraph()
    root = InMemoryNodeHandle("/", graph)
    root.set_param("pos", {"type": "position_controllers/JointGroupPositionController", "joints": ARM})
    root.set_param("vel", {"type": "velocity_controllers/JointGroupVelocityController", "joints": ARM})
    cm = ControllerManager(hw, root, switch_wall_margin=1.0, switch_wait_limit=3.0)
    for name in ("pos", "vel"):
        assert cm.load_controller(name).ok
    mw = hw.middleware
    with Loop(hw, cm, graph):
        assert wait_until(lambda: loop_ran(hw))
        result = cm.switch_controller(["pos"], [], STRICT)
        assert result.ok, result.message
        # both controllers on the same joints: the conflict check refuses, prepare_switch is not reached
        assert not cm.switch_controller(["vel"], [], STRICT).ok
        before = {j: position(hw, j) for j in ARM}
        result = cm.switch_controller(["vel"], ["pos"], STRICT)
        assert result.ok, result.message
        # confirmed by the motors (the published snapshot may be one bus cycle behind the confirmation)
        assert wait_until(lambda: all(mw.snapshot()[m].mode == ControlMode.VELOCITY for m in
                                      ("shoulder_pan_motor", "wrist_a_motor", "wrist_b_motor")), 1.0)
        assert hw.active_interface("elbow_joint") == "hardware_interface::VelocityJointInterface"
        assert mw.snapshot()["gripper_motor"].mode == ControlMode.POSITION  # not switched: holds
        time.sleep(0.1)
        # the switch itself did not move the arm (velocity commands start at 0; gravity joints may sag
        # by the velocity loop's droop, the others stay put)
        for j in ("shoulder_pan_joint", "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"):
            assert abs(position(hw, j) - before[j]) < 0.02
        result = cm.switch_controller(["pos"], ["vel"], STRICT)
        assert result.ok, result.message
        assert wait_until(lambda: mw.snapshot()["shoulder_pan_motor"].mode == ControlMode.POSITION, 1.0)


def loop_ran(hw) -> bool:
    return hw.middleware.snapshot()["shoulder_pan_motor"].mode == ControlMode.POSITION
