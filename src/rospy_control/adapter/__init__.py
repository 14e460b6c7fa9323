"""rospy_control.adapter: the rospy glue, the only package that imports rospy (docs/architecture.md).

* :mod:`.driver` -- the driver node (``scripts/driver_node``): any RobotHW, the control loop and the
  controller manager of :mod:`rospy_control.control_loop`, the two branches, ``/diagnostics``;
* :mod:`.sim_node` -- the simulator node (``scripts/sim_node``), the simulated firmware in its own process;
* :mod:`.ros_node_handle` -- the NodeHandle facade over rospy, given to the controllers;
* :mod:`.controller_manager_ros` -- the ``controller_manager/*`` services and statistics topic;
* :mod:`.diagnostics` -- the node's ``diagnostic_msgs/DiagnosticArray``;
* :mod:`.tools` -- the command-line tools (spawner, unspawner, controller_manager, controller_group,
  demo_trajectory) and the controller manager's Python client.

``control_loop``, ``fault_reset``, ``standalone`` and ``driver_config`` here are the old names of the
ROS-free modules now in :mod:`rospy_control.control_loop`, kept so that old imports work.
"""
