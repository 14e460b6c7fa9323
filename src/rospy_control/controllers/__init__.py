"""rospy_control.controllers: the everyday ros_controllers, in Python (one module per package).

Registered in :data:`rospy_control.controller_manager.CONTROLLER_TYPES` under ros_controllers'
names, imported lazily when a controller of that type is loaded:

* :mod:`.joint_state_controller` -- ``joint_state_controller/JointStateController``
* :mod:`.position_controllers`, :mod:`.velocity_controllers`, :mod:`.effort_controllers` --
  ``Joint{Position,Velocity,Effort}Controller`` and ``JointGroup...Controller`` (forward command,
  :mod:`.forward_command_controller`), and the PID types (:mod:`.pid_controllers`, :mod:`.pid`)
* :mod:`.imu_sensor_controller`, :mod:`.force_torque_sensor_controller`,
  :mod:`.contact_sensor_controller` -- sensor broadcasters
* ``joint_trajectory_controller`` and ``gripper_action_controller`` (separate modules)
* :mod:`.pass_through_controllers` -- ``pass_through_controllers/JointTrajectoryController``, for
  hardware that executes whole trajectories (``hardware_interface/JointTrajectoryInterface``)

Nothing is imported here, so listing controller types stays cheap.
"""
from __future__ import annotations
