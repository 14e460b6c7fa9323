"""A control loop whose controller blocks: the bus thread's command watchdog holds the joint, then
control resumes without a jump (MiddlewareRobotHW + ControlLoop + the simulated arm, real threads)."""
from __future__ import annotations

import math
import threading
import time

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.control_loop.loop import ControlLoop
from rospy_control.hardware_interface import PositionJointInterface

from robot_hw_testutil import ARM_HW, ARM_URDF, info, load_yaml, switch, wait_until

RATE = 200.0


class SlowController:
    """Controller-manager double: moves elbow_joint along a slow sine; ``block`` makes one update sleep."""

    def __init__(self, handle, center):
        self.handle = handle
        self.center = center
        self.t = 0.0
        self.block = threading.Event()
        self.blocked = threading.Event()
        self.commands = []

    def update(self, time_, period, reset_controllers=False):
        if self.block.is_set():
            self.block.clear()
            self.blocked.set()
            time.sleep(1.0)
        self.t += period
        cmd = self.center + 0.2 * math.sin(0.5 * self.t)
        self.handle.set_command(cmd)
        self.commands.append(cmd)


@pytest.fixture
def arm(make_hw):
    return make_hw(ARM_HW, ARM_URDF, load_yaml("arm_joint_limits.yaml"))


def test_a_blocked_update_is_held_by_the_watchdog_then_control_resumes(arm):
    mw = arm.middleware
    ctrl_info = info("pos", PositionJointInterface, "elbow_joint")
    switch(arm, [ctrl_info])
    handle = arm.get(PositionJointInterface).get_handle("elbow_joint")
    controller = SlowController(handle, handle.get_position())
    loop = ControlLoop(arm, controller, rate=RATE, now=time.monotonic)
    loop.start()
    try:
        assert wait_until(lambda: len(controller.commands) > 40)
        sim_of(mw).reset_command_stats()
        seen = mw.events()
        last_seq = seen[-1].seq if seen else 0
        controller.block.set()
        assert controller.blocked.wait(2.0)
        # the watchdog takes over while update() sleeps, and holds the joint where it was commanded
        assert wait_until(lambda: mw.snapshot()["elbow_motor"].watchdog, timeout=0.8)
        held = controller.commands[-1]
        positions = []
        while controller.blocked.is_set() and mw.snapshot()["elbow_motor"].watchdog:
            positions.append(handle.get_position())
            if len(positions) > 100:
                break
            time.sleep(0.005)
        assert positions and max(abs(p - held) for p in positions) < 0.03
        # commands come back: the watchdog releases and the joint follows again
        assert wait_until(lambda: not mw.snapshot()["elbow_motor"].watchdog, timeout=3.0)
        n = len(controller.commands)
        assert wait_until(lambda: len(controller.commands) > n + 40)
    finally:
        loop.stop()
    kinds = [e.kind for e in mw.events(since=last_seq) if e.unit == "elbow_motor"]
    assert kinds[:2] == ["watchdog_hold", "watchdog_released"]
    assert not mw.faults()
    # no jump on the wire: hold frame = last command, the next commands continue from it
    stats = sim_of(mw).command_stats("elbow_motor")
    velocity_limit, reduction = 3.0, 2.0  # urdf/arm.urdf elbow_joint, motor = 2 x joint
    assert stats["max_step"] <= reduction * velocity_limit * 2.0 / RATE + 1e-3
    assert loop.stats().stalls >= 1


@pytest.mark.parametrize("hold_mode, default_mode", [("position", "position"), ("damping", "damping"),
                                                     ("none", "damping")])
def test_the_watchdog_follows_hold_mode_unless_the_xml_chose(make_hw, hold_mode, default_mode):
    with open(ARM_HW) as f:
        xml = f.read()
    tag = '<unit name="elbow_motor" type="rospy_control/Motor" can_id="3">'
    assert tag in xml
    xml = xml.replace(tag, tag[:-1] + ' watchdog_mode="none">')
    params = dict(load_yaml("arm_joint_limits.yaml"), hold_mode=hold_mode)
    hw = make_hw(xml, ARM_URDF, params, start=False)
    modes = {m.name: m.watchdog_mode for m in hw.middleware.motors()}
    assert modes.pop("elbow_motor") == "none"
    assert set(modes.values()) == {default_mode}
