"""Base of the sensor broadcasters (IMU, force/torque, foot contact): one or more topics per sensor
handle, each published at ``publish_rate`` with its own rate bookkeeping.

Timing (``imu_sensor_controller`` / ``force_torque_sensor_controller``): on every start the "last
publish" time is set to the start time, so the first message goes out one period after start; a
message is due when ``last + 1/rate < time`` and ``last`` advances by exactly ``1/rate`` per accepted
publish.
"""
from __future__ import annotations

from typing import Any, Callable, List

from rospy_control.controller_interface import Controller, RealtimePublisher
from rospy_control.controllers._common import PublishRate, required_param

__all__ = ["SensorController"]


class _Channel:
    __slots__ = ("publisher", "rate", "build")

    def __init__(self, publisher: RealtimePublisher, rate: PublishRate,
                 build: Callable[[float], Any]) -> None:
        self.publisher = publisher
        self.rate = rate
        self.build = build


class SensorController(Controller):
    """Publishes every handle of ``INTERFACE``; subclasses implement :meth:`channels_for`."""

    def init(self, hw, root_nh, controller_nh) -> bool:
        rate = required_param(controller_nh, "publish_rate", float)
        self.publish_rate = rate
        self.sensors = [hw.get_handle(name) for name in hw.get_names()]
        self.channels: List[_Channel] = []
        for handle in self.sensors:
            for topic, msg_class, build in self.channels_for(handle):
                publisher = RealtimePublisher(root_nh, topic, msg_class, 4)
                self.channels.append(_Channel(publisher, PublishRate(rate), build))
        return True

    def channels_for(self, handle):
        """``[(topic, msg_class, build(time) -> msg), ...]`` for one sensor handle."""
        raise NotImplementedError

    def starting(self, time: float) -> None:
        for channel in self.channels:
            channel.rate.reset(time)

    def update(self, time: float, period: float) -> None:
        for channel in self.channels:
            if channel.rate.due(time) and channel.publisher.try_publish(channel.build(time)):
                channel.rate.published()
