"""rospy_control.testing: support for tests and benchmarks, never used by the driver itself.

* :mod:`.in_memory` -- :class:`InMemoryGraph` (parameters, topics, services, a manual clock) and
  :class:`InMemoryNodeHandle`, the :class:`~rospy_control.controller_interface.NodeHandle` facade in
  memory, so controllers and the controller manager run in unit tests without a ROS master;
* :mod:`.in_memory_actions` -- its actionlib part: :class:`InMemoryActionServer`, goal handles,
  :class:`InMemoryActionClient` / :class:`ClientGoal` and the :class:`GoalStatus` constants;
* :mod:`.wait` -- :func:`wait_until`, polling a condition with a timeout;
* :mod:`.robot_hw` -- ``JointsRobotHW``, plain joints in the joint interfaces, base of the fake robots;
* :mod:`.cm_rig` -- ``ControllerManagerRig``: robot + in-memory graph + controller manager, driven
  cycle by cycle (switches run in a thread while the test plays the loop);
* :mod:`.controllers` -- test controllers (ros_control's controller_manager_tests plugins).

The last three are imported from their modules (they pull in the controller manager and
hardware_interface).

Like the rest of the core it imports neither rospy nor actionlib (``test/unit/test_ros_free.py``).
"""
from __future__ import annotations

from rospy_control.testing.in_memory import (
    InMemoryGraph,
    InMemoryNodeHandle,
    InMemoryPublisher,
    InMemoryService,
    InMemorySubscriber,
)
from rospy_control.testing.in_memory_actions import (
    ClientGoal,
    GoalStatus,
    InMemoryActionClient,
    InMemoryActionServer,
    InMemoryServerGoalHandle,
)
from rospy_control.testing.wait import wait_until

__all__ = [
    "ClientGoal", "GoalStatus", "InMemoryActionClient", "InMemoryActionServer", "InMemoryGraph",
    "InMemoryNodeHandle", "InMemoryPublisher", "InMemoryServerGoalHandle", "InMemoryService",
    "InMemorySubscriber", "wait_until",
]
