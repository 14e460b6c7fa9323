"""Rig for the pass-through trajectory controller tests (no test functions here).

A :class:`~rospy_control.testing.trajectory_device.TrajectoryExecutingRobotHW` with three revolute
joints under a controller manager on an in-memory graph; :meth:`PtRig.cycle` = read (the fake device
runs up to the new ROS time), update, write.
"""
from __future__ import annotations

from typing import Optional

from rospy_control.testing import InMemoryActionClient
from rospy_control.testing.cm_rig import ControllerManagerRig
from rospy_control.testing.trajectory_device import TrajectoryExecutingRobotHW

PT_TYPE = "pass_through_controllers/JointTrajectoryController"
JTC_TYPE = "position_controllers/JointTrajectoryController"
J3 = ["j1", "j2", "j3"]

URDF = """<?xml version="1.0"?>
<robot name="board_arm">
  <link name="l0"/><link name="l1"/><link name="l2"/><link name="l3"/>
  <joint name="j1" type="revolute"><parent link="l0"/><child link="l1"/>
    <limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/>
    <limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
  <joint name="j3" type="revolute"><parent link="l2"/><child link="l3"/>
    <limit lower="-2" upper="2" effort="10" velocity="2"/></joint>
</robot>
"""


def pt_params(**extra) -> dict:
    """Goal 0.01 and path 0.05 rad on every joint, goal_time 0.5 s (the rrbot test settings)."""
    params = {"joints": list(J3), "state_publish_rate": 100.0,
              "constraints": {"goal_time": 0.5, "stopped_velocity_tolerance": 0.05}}
    for j in J3:
        params["constraints"][j] = {"goal": 0.01, "trajectory": 0.05}
    params.update(extra)
    return params


class PtRig(ControllerManagerRig):
    """Board robot + controller manager; the controller under test is ``arm``."""

    def __init__(self, position_interface: bool = True, deceleration_time: float = 0.2) -> None:
        self.robot = TrajectoryExecutingRobotHW(J3, "arm_board", position_interface=position_interface,
                                                deceleration_time=deceleration_time)
        self.device = self.robot.device
        super().__init__(self.robot, t0=100.0, dt=0.01, robot_description=URDF, switch_wall_margin=0.5,
                         switch_wait_limit=3.0)
        self.name = "arm"

    def control(self, t: float, dt: float) -> None:
        self.robot.read(t, dt)
        self.cm.update(t, dt)
        self.robot.write(t, dt)

    def start(self, type_name: str = PT_TYPE, name: str = "arm", **params):
        ctrl = self.load(name, type_name, pt_params(**params))
        result = self.switch(start=[name])
        assert result.ok, result
        self.name = name
        return ctrl

    def run(self, seconds: float, until=None) -> float:
        n = int(round(seconds / self.dt))
        for k in range(n):
            self.cycle()
            if until is not None and until():
                return (k + 1) * self.dt
        return n * self.dt

    def client(self, name: Optional[str] = None) -> InMemoryActionClient:
        return InMemoryActionClient(self.root_nh, f"{name or self.name}/follow_joint_trajectory")

    def publish(self, msg, topic: str = "command") -> None:
        self.root_nh.advertise(f"{self.name}/{topic}", type(msg), 1).publish(msg)

    def positions(self):
        return [self.robot.data[j].position for j in J3]
