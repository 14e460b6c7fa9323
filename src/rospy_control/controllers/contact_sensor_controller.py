"""``contact_sensor_controller/ContactSensorController``: foot contact, with standard messages only.

Our ContactSensorInterface has no ros_controllers counterpart and no standard message carries
"contact + normal force", so each foot gets two standard topics (in the controller manager's
namespace, queue 4, both at ``publish_rate``):

* ``<sensor name>`` -- ``geometry_msgs/WrenchStamped``: the normal force (N) in ``wrench.force.z`` of
  the sensor frame (``header.frame_id`` from the handle), everything else 0, stamp = update time.
  Same type and naming as the force/torque broadcaster, so plotting and RViz tools work unchanged.
* ``<sensor name>/contact`` -- ``std_msgs/Bool``: ``True`` while the foot is in contact (the
  hardware's own decision, which may use hysteresis the force alone does not show).

ROS API: parameter ``publish_rate`` (double, required).  First messages one period after start.
"""
from __future__ import annotations

from geometry_msgs.msg import WrenchStamped
from std_msgs.msg import Bool

from rospy_control.controllers._common import to_stamp
from rospy_control.controllers._sensor_controller import SensorController
from rospy_control.hardware_interface import ContactSensorInterface

__all__ = ["ContactSensorController", "contact_wrench_message"]


def contact_wrench_message(handle, time: float) -> WrenchStamped:
    msg = WrenchStamped()
    msg.header.stamp = to_stamp(time)
    msg.header.frame_id = handle.get_frame_id()
    msg.wrench.force.z = float(handle.get_force())
    return msg


class ContactSensorController(SensorController):
    INTERFACE = ContactSensorInterface

    def channels_for(self, handle):
        name = handle.get_name()
        return [
            (name, WrenchStamped, lambda time: contact_wrench_message(handle, time)),
            (name + "/contact", Bool, lambda time: Bool(data=handle.is_in_contact())),
        ]
