"""Host side of the trajectory downlink (ROS-free): a board client and the original-protocol sender.

* :mod:`~rospy_control.board.wire` (shared with the board program) -- generated protobuf classes,
  length-prefixed frames.
* :mod:`~rospy_control.downlink.clock_sync` -- offset and drift of a board's clock from round trips.
* :mod:`~rospy_control.downlink.client` -- :class:`BoardClient` for the full protocol.
* :mod:`~rospy_control.downlink.seed` -- one trajectory per connection, as the original board program
  takes it.

See docs/trajectory_downlink.md.
"""
