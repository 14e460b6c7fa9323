"""rospy_control.robot_hw (see docs/architecture.md)."""
