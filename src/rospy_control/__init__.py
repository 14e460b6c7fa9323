"""rospy_control: ros_control for Python, driving CAN-bus joint motors on ROS 1 Noetic.

Subpackages (one per ros_control concept; only :mod:`rospy_control.adapter` imports rospy):

* :mod:`~rospy_control.middleware` -- hardware units (motors, encoders, IMU, foot contact,
  force/torque) and CAN channels composed from an XML file; the read/write thread; MIT-mode
  protocol; the simulated motor firmware.
* :mod:`~rospy_control.hardware_interface` -- handles, interfaces, ``RobotHW``, ``CombinedRobotHW``.
* :mod:`~rospy_control.transmission_interface` -- URDF ``<transmission>`` parsing, transmissions,
  the transmission interface loader.
* :mod:`~rospy_control.joint_limits` -- joint limits from URDF and rosparam; saturation and
  soft-limit handles.
* :mod:`~rospy_control.robot_hw` -- the ``RobotHW`` built over the middleware.
* :mod:`~rospy_control.controller_interface` -- controller base classes and the node-handle facade.
* :mod:`~rospy_control.controller_manager` -- the controller manager (ROS-free core).
* :mod:`~rospy_control.controllers` -- joint_state, forward command, PID, IMU, force/torque,
  contact, joint_trajectory and gripper controllers.
* :mod:`~rospy_control.trajectory` -- spline segments, trajectories, replacement, tolerances.
* :mod:`~rospy_control.adapter` -- the rospy node (ros_control branch and standalone branch).
"""
__version__ = "0.1.0"
