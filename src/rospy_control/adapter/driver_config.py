"""Moved to :mod:`rospy_control.control_loop.driver_config` (ROS-free); this name keeps old imports
working."""
from rospy_control.control_loop.driver_config import *  # noqa: F401,F403
from rospy_control.control_loop.driver_config import __all__  # noqa: F401
