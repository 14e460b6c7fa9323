"""rospy_control.controllers (see docs/architecture.md)."""
