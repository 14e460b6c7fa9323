"""Moved to :mod:`rospy_control.control_loop.standalone` (ROS-free); this name keeps old imports working."""
from rospy_control.control_loop.standalone import *  # noqa: F401,F403
from rospy_control.control_loop.standalone import __all__  # noqa: F401
