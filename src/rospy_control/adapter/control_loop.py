"""Moved to :mod:`rospy_control.control_loop.loop` (ROS-free); this name keeps old imports working."""
from rospy_control.control_loop.loop import *  # noqa: F401,F403
from rospy_control.control_loop.loop import __all__  # noqa: F401
