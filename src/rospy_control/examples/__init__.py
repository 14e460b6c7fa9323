"""Example RobotHWs that are not on CAN, loaded by the driver node from parameters.

* :class:`~rospy_control.examples.simple_robot_hw.SimpleRobotHW` -- a plain simulated robot: one
  position servo per joint, position and velocity command interfaces, joint limits from the URDF.
  ``docs/writing_a_robot_hw.md`` walks through it; ``config/simple_robot_hw.yaml`` loads it::

      roslaunch rospy_control bringup.launch \
          robot_hw:=$(rospack find rospy_control)/config/simple_robot_hw.yaml

Nothing here is imported by the rest of the package.
"""
