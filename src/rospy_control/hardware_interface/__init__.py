"""rospy_control.hardware_interface (see docs/architecture.md)."""
