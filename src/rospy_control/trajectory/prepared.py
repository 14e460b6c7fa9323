"""A validated trajectory before it is swapped in: what an ``accept`` veto sees."""
from __future__ import annotations

from typing import NamedTuple

from rospy_control.trajectory.trajectory import Trajectory

__all__ = ["PreparedTrajectory"]


class PreparedTrajectory(NamedTuple):
    """A validated trajectory before it is swapped in (what :meth:`TrajectoryExecutor.accept`'s
    ``veto`` sees).

    ``trajectory`` is the merged result in the internal time base; ``first_point`` the index of
    the first message point executed (earlier ones were in the past), -1 for an empty message (hold
    or stop); ``start_uptime`` the internal time of the message's ``time_from_start`` 0.  Internal
    time ``x`` is ROS time ``now + (x - now_uptime)``.
    """

    trajectory: Trajectory
    first_point: int
    start_uptime: float
    now: float
    now_uptime: float

    def ros_time(self, uptime: float) -> float:
        """ROS time (s) of internal time ``uptime``."""
        return self.now + (float(uptime) - self.now_uptime)
