"""What the controller manager keeps per controller and returns from its non-real-time calls.

* :data:`STRICT`, :data:`BEST_EFFORT` -- ``controller_manager_msgs/SwitchController`` strictness;
* :class:`Result` -- ``(ok, message)`` of load / unload / switch / reload;
* :class:`ControllerDescription`, :class:`HardwareInterfaceResources` -- ``list_controllers`` entries;
* :class:`ControllerStatistics` and :class:`UpdateStats` -- update-time statistics;
* :class:`ControllerSpec` -- one loaded controller: info, instance, node handles, statistics;
* :class:`PendingSwitch` -- a switch between being armed and being applied by the control loop.
"""
from __future__ import annotations

import threading
from typing import List, NamedTuple, Optional, Set

from rospy_control.controller_interface.controller_base import ControllerBase
from rospy_control.controller_interface.node_handle import NodeHandle
from rospy_control.hardware_interface import ControllerInfo

__all__ = [
    "BEST_EFFORT", "STRICT", "Result", "HardwareInterfaceResources", "ControllerDescription",
    "ControllerStatistics", "UpdateStats", "ControllerSpec", "PendingSwitch",
]

#: ``controller_manager_msgs/SwitchController`` strictness constants.
BEST_EFFORT = 1
STRICT = 2


class Result(NamedTuple):
    """Outcome of a non-RT operation.  Truthy exactly when ``ok``; unpacks as ``ok, message``."""

    ok: bool
    message: str = ""

    def __bool__(self) -> bool:
        return bool(self.ok)


class HardwareInterfaceResources(NamedTuple):
    """``controller_manager_msgs/HardwareInterfaceResources``: ``resources`` sorted."""

    hardware_interface: str
    resources: List[str]


class ControllerDescription(NamedTuple):
    """``controller_manager_msgs/ControllerState`` (one ``list_controllers`` entry)."""

    name: str
    state: str
    type: str
    claimed_resources: List[HardwareInterfaceResources]


class ControllerStatistics(NamedTuple):
    """``controller_manager_msgs/ControllerStatistics`` with times as float seconds."""

    name: str
    type: str
    timestamp: float
    running: bool
    max_time: float
    mean_time: float
    variance_time: float
    num_control_loop_overruns: int
    time_last_control_loop_overrun: float


class UpdateStats:
    """Running update-time statistics of one controller (Welford), written by the RT thread only."""

    __slots__ = ("count", "mean", "m2", "max", "overruns", "last_overrun", "timestamp")

    def __init__(self) -> None:
        self.count = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.max = 0.0
        self.overruns = 0
        self.last_overrun = 0.0
        self.timestamp = 0.0

    def record(self, duration: float, period: float, time: float) -> None:
        self.count += 1
        delta = duration - self.mean
        self.mean += delta / self.count
        self.m2 += delta * (duration - self.mean)
        if duration > self.max:
            self.max = duration
        if period > 0.0 and duration > period:
            self.overruns += 1
            self.last_overrun = time
        self.timestamp = time

    @property
    def variance(self) -> float:
        return self.m2 / self.count if self.count > 1 else 0.0


class ControllerSpec:
    """One loaded controller: its :class:`ControllerInfo`, instance, node handles and statistics."""

    __slots__ = ("info", "c", "controller_nh", "root_nh", "stats", "direct")

    def __init__(self, info: ControllerInfo, controller: ControllerBase, controller_nh: NodeHandle,
                 root_nh: NodeHandle) -> None:
        self.info = info
        self.c = controller
        self.controller_nh = controller_nh
        self.root_nh = root_nh
        self.stats = UpdateStats()
        #: True: the control loop calls a RUNNING controller's ``update`` itself (what
        #: ``update_request`` does after the state check the loop has made); False for a class that
        #: overrides ``update_request``
        self.direct = type(controller).update_request is ControllerBase.update_request

    def shutdown_ros(self) -> None:
        """Close every publisher/subscriber/service/action server the controller created."""
        self.controller_nh.shutdown()
        self.root_nh.shutdown()


class PendingSwitch:
    """A switch armed by ``ControllerManager.switch_controller`` and applied by its ``update``."""

    __slots__ = ("start", "stop", "hw_start", "hw_stop", "start_asap", "timeout", "init_time",
                 "hw_started", "resolved", "finished", "done", "outcome")

    def __init__(self, start: List[ControllerSpec], stop: List[ControllerSpec],
                 hw_start: List[ControllerInfo], hw_stop: List[ControllerInfo], start_asap: bool,
                 timeout: float, init_time: float) -> None:
        self.start = start
        self.stop = stop
        self.hw_start = hw_start
        self.hw_stop = hw_stop
        self.start_asap = start_asap
        self.timeout = timeout
        self.init_time = init_time
        self.hw_started = False
        self.resolved: Set[int] = set()  # start_asap: ids of specs started or aborted by this switch
        self.finished = False
        self.done = threading.Event()
        #: set by a cancellation (wall-clock limit, shutdown); None when the loop finished the switch
        self.outcome: Optional[Result] = None
