"""rospy_control.joint_limits (see docs/architecture.md)."""
