"""The trajectory board of a hardware XML for the downlink and the board program (ROS-free).

The ``<board>`` element is read by :mod:`rospy_control.hardware_config.board` (the one reader of the
hardware XML) into immutable :class:`BoardDescription`/:class:`BoardAxis` records; this module turns
one into the :class:`~rospy_control.board.config.BoardConfig` the board program runs
(``trajectory_board --hardware-config FILE``), so the simulated board and the driver always agree on
the axes.
"""
from __future__ import annotations

from ..board.config import AxisConfig, BoardConfig, HomingConfig
from ..hardware_config.board import PROTOCOLS, BoardAxis, BoardDescription, parse_board_xml

__all__ = ["BoardAxis", "BoardDescription", "parse_board_xml", "board_config", "PROTOCOLS"]


def board_config(desc: BoardDescription) -> BoardConfig:
    """The board program's configuration for this description (same axes, limits, timeouts)."""
    axes = [AxisConfig(a.name, a.steps_per_rad, "rad", a.max_velocity, a.max_acceleration, a.max_step_rate,
                       a.min_position, a.max_position, a.direction,
                       homing=None if a.homing is None else HomingConfig(
                           a.homing.switch, a.homing.search_speed, a.homing.backoff_speed, a.homing.position,
                           a.homing.max_travel, a.homing.max_backoff))
            for a in desc.axes]
    return BoardConfig(axes, name=desc.name, buffer_capacity=desc.buffer_capacity,
                       heartbeat_timeout=desc.heartbeat_timeout, feedback_rate=desc.feedback_rate,
                       start_tolerance=desc.start_tolerance,
                       source=f"{desc.source}:{desc.line}" if desc.line else desc.source)
