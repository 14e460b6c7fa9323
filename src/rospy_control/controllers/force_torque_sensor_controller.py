"""``force_torque_sensor_controller/ForceTorqueSensorController``: ``geometry_msgs/WrenchStamped``.

ROS API
-------
* parameter ``publish_rate`` (double, required);
* publishes ``<sensor name>`` (``geometry_msgs/WrenchStamped``, queue 4) in the controller manager's
  namespace for every handle of the ForceTorqueSensorInterface; ``frame_id`` from the handle, stamp =
  update time; a quantity the sensor does not measure is published as zeros.  First message one
  period after start.
"""
from __future__ import annotations

from geometry_msgs.msg import WrenchStamped

from rospy_control.controllers._common import to_stamp
from rospy_control.controllers._sensor_controller import SensorController
from rospy_control.hardware_interface import ForceTorqueSensorInterface

__all__ = ["ForceTorqueSensorController", "wrench_message"]


def wrench_message(handle, time: float) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.stamp = to_stamp(time)
    msg.header.frame_id = handle.get_frame_id()
    force, torque = handle.get_force(), handle.get_torque()
    if force is not None:
        msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = (float(v) for v in force)
    if torque is not None:
        msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z = (float(v) for v in torque)
    return msg


class ForceTorqueSensorController(SensorController):
    INTERFACE = ForceTorqueSensorInterface

    def channels_for(self, handle):
        return [(handle.get_name(), WrenchStamped, lambda time: wrench_message(handle, time))]
