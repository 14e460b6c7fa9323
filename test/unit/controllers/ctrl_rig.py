"""A small robot for controller tests (the ``rig`` fixture of conftest.py).

Three joints in every joint interface, sensors, a URDF, on the shared controller-manager rig
(``rospy_control.testing.cm_rig``).
"""
from __future__ import annotations

from rospy_control.hardware_interface import (
    ContactSensorData, ContactSensorHandle, ContactSensorInterface, ForceTorqueSensorData,
    ForceTorqueSensorHandle, ForceTorqueSensorInterface, ImuSensorData, ImuSensorHandle, ImuSensorInterface,
)
from rospy_control.testing.cm_rig import ControllerManagerRig
from rospy_control.testing.robot_hw import JointsRobotHW

URDF = """<?xml version="1.0"?>
<robot name="test_robot">
  <link name="base"/><link name="l1"/><link name="l2"/><link name="l3"/>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="l1"/>
    <limit lower="-1.0" upper="1.0" effort="10" velocity="2"/>
  </joint>
  <joint name="j2" type="continuous"><parent link="l1"/><child link="l2"/></joint>
  <joint name="j3" type="prismatic">
    <parent link="l2"/><child link="l3"/>
    <limit lower="0.0" upper="0.5" effort="100" velocity="0.1"/>
  </joint>
</robot>
"""


class Robot(JointsRobotHW):
    """Joints j1..j3 in state/position/velocity/effort interfaces (separate command fields per
    interface), an IMU, a force/torque sensor and two feet."""

    def __init__(self) -> None:
        super().__init__(("j1", "j2", "j3"))
        self.joints = self.data
        self.imu = ImuSensorData(orientation=[0.0, 0.0, 0.0, 1.0], orientation_covariance=[0.1] * 9,
                                 angular_velocity=[0.1, 0.2, 0.3], angular_velocity_covariance=None,
                                 linear_acceleration=None)
        imu = ImuSensorInterface()
        imu.register_handle(ImuSensorHandle("imu", "imu_link", self.imu))
        self.ft = ForceTorqueSensorData(force=[1.0, 2.0, 3.0], torque=None)
        ft = ForceTorqueSensorInterface()
        ft.register_handle(ForceTorqueSensorHandle("wrist_ft", "wrist", self.ft))
        self.feet = {"left_foot": ContactSensorData(True, 120.5), "right_foot": ContactSensorData(False, 0.0)}
        contact = ContactSensorInterface()
        for name, data in self.feet.items():
            contact.register_handle(ContactSensorHandle(name, name + "_frame", data))
        for iface in (imu, ft, contact):
            self.register_interface(iface)


class Rig(ControllerManagerRig):
    """:class:`Robot` + in-memory graph + controller manager with the default controller registry;
    :meth:`switch` asserts that the switch succeeds."""

    check_switch = True

    def __init__(self) -> None:
        self.robot = Robot()
        super().__init__(self.robot, t0=1.0, robot_description=URDF, switch_wall_margin=0.5,
                         switch_wait_limit=2.0)

    def record(self, topic: str, msg_class):
        received = []
        self.root_nh.subscribe(topic, msg_class, received.append)
        return received

    def publish(self, topic: str, msg) -> None:
        self.root_nh.advertise(topic, type(msg), 1).publish(msg)
