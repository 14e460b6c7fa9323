"""rospy_control.adapter (see docs/architecture.md)."""
