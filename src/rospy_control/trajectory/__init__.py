"""rospy_control.trajectory (see docs/architecture.md)."""
