"""rospy_control.controller_manager (see docs/architecture.md)."""
