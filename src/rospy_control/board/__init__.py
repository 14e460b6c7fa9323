"""The controller board's program (plain Python, no ROS): it runs on a Raspberry Pi or any Linux board.

* :mod:`~rospy_control.board.config` -- axes (steps per unit, limits, pins, encoders) from YAML/XML.
* :mod:`~rospy_control.board.interpolation` -- quintic / cubic / linear segments, the stop ramp.
* :mod:`~rospy_control.board.core` -- goals, streaming window, scheduled start and splice, cancel,
  faults, pulses from one continuous position function of time per axis.
* :mod:`~rospy_control.board.backends` -- simulated pulses (recorded) and pigpio waveforms.
* :mod:`~rospy_control.board.server` -- the TCP server, full protocol or the original board program's.

Executable: ``scripts/trajectory_board``.  See docs/trajectory_downlink.md.
"""
