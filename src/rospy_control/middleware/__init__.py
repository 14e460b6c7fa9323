"""rospy_control.middleware (see docs/architecture.md)."""
