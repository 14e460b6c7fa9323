"""``imu_sensor_controller/ImuSensorController``: one ``sensor_msgs/Imu`` topic per IMU.

ROS API
-------
* parameter ``publish_rate`` (double, required);
* publishes ``<sensor name>`` (``sensor_msgs/Imu``, queue 4) in the controller manager's namespace for
  every handle of the ImuSensorInterface; ``header.frame_id`` from the handle, stamp = update time.

Covariances follow REP 145 / ros_controllers: a quantity the sensor does not provide is reported as
zeros with ``covariance[0] = -1``; a provided quantity without a covariance gets an all-zero covariance
("unknown").  First message one period after start.
"""
from __future__ import annotations

from typing import Optional, Sequence

from sensor_msgs.msg import Imu

from rospy_control.controllers._common import to_stamp
from rospy_control.controllers._sensor_controller import SensorController
from rospy_control.hardware_interface import ImuSensorInterface

__all__ = ["ImuSensorController", "imu_message"]


def _covariance(present: bool, covariance: Optional[Sequence[float]]) -> list:
    if not present:
        return [-1.0] + [0.0] * 8
    if covariance is None:
        return [0.0] * 9
    return [float(v) for v in covariance]


def imu_message(handle, time: float) -> Imu:
    """The ``sensor_msgs/Imu`` for ``handle`` at ``time``."""
    msg = Imu()
    msg.header.stamp = to_stamp(time)
    msg.header.frame_id = handle.get_frame_id()
    orientation = handle.get_orientation()
    if orientation is not None:
        q = msg.orientation
        q.x, q.y, q.z, q.w = (float(v) for v in orientation)
    msg.orientation_covariance = _covariance(orientation is not None, handle.get_orientation_covariance())
    angular = handle.get_angular_velocity()
    if angular is not None:
        msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z = (float(v) for v in angular)
    msg.angular_velocity_covariance = _covariance(angular is not None,
                                                  handle.get_angular_velocity_covariance())
    linear = handle.get_linear_acceleration()
    if linear is not None:
        a = msg.linear_acceleration
        a.x, a.y, a.z = (float(v) for v in linear)
    msg.linear_acceleration_covariance = _covariance(linear is not None,
                                                     handle.get_linear_acceleration_covariance())
    return msg


class ImuSensorController(SensorController):
    INTERFACE = ImuSensorInterface

    def channels_for(self, handle):
        return [(handle.get_name(), Imu, lambda time: imu_message(handle, time))]
