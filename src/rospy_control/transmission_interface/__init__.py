"""rospy_control.transmission_interface (see docs/architecture.md)."""
