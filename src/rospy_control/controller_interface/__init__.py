"""rospy_control.controller_interface (see docs/architecture.md)."""
