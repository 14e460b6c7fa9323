"""Moved to :mod:`rospy_control.control_loop.fault_reset` (ROS-free); this name keeps old imports working."""
from rospy_control.control_loop.fault_reset import *  # noqa: F401,F403
from rospy_control.control_loop.fault_reset import __all__  # noqa: F401
