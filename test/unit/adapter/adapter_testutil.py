"""Helpers of the adapter unit tests: a controller manager served on an in-memory ROS graph.

:class:`Served` bundles a small fake robot (joint1..3 in the JointState and
Effort/Velocity joint interfaces), a ControllerManager with a private registry of test controllers,
its ControllerManagerRos on an :class:`InMemoryNodeHandle` and a running ControlLoop -- the same
wiring as the driver node, without a ROS master; :class:`InMemoryTransport` lets a
ControllerManagerClient (and so every tool) call the in-memory services.
"""
from __future__ import annotations

import time
from typing import Any, Optional

from rospy_control.control_loop.loop import ControlLoop
from rospy_control.adapter.controller_manager_ros import ControllerManagerRos
from rospy_control.adapter.tools.controller_manager_interface import (
    ControllerManagerClient,
    ControllerManagerUnavailable,
)
from rospy_control.controller_interface import ControllerBase, NodeHandleError
from rospy_control.controller_manager import ControllerManager
from rospy_control.hardware_interface import EffortJointInterface, JointStateInterface, VelocityJointInterface
from rospy_control.plugins import Registry
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle
from rospy_control.testing.controllers import EffortTestController, StateTestController, VelEffController
from rospy_control.testing.robot_hw import JointsRobotHW

JOINTS = ("joint1", "joint2", "joint3")
EFFORT = EffortJointInterface.TYPE_NAME
VELOCITY = VelocityJointInterface.TYPE_NAME
STATE = JointStateInterface.TYPE_NAME


class SmallRobotHW(JointsRobotHW):
    """joint1..3 in the JointState and Effort/Velocity joint interfaces; counts reads and writes."""

    def __init__(self) -> None:
        super().__init__(JOINTS, {EffortJointInterface: "command_effort",
                                  VelocityJointInterface: "command_velocity"})
        self.reads = 0
        self.writes = 0

    def read(self, time, period):
        self.reads += 1

    def write(self, time, period):
        self.writes += 1


class EffortTest(EffortTestController):
    COMMAND = 1.0


def make_registry() -> Registry:
    registry = Registry("controller type", ControllerBase)
    registry.register("test/EffortTest", EffortTest)
    registry.register("test/StateTest", StateTestController)
    registry.register("test/VelEff", VelEffController)
    return registry


PARAMS = {
    "effort1": {"type": "test/EffortTest", "joints": ["joint1", "joint2"]},
    "effort2": {"type": "test/EffortTest", "joints": ["joint2", "joint3"]},
    "effort3": {"type": "test/EffortTest", "joints": ["joint3"]},
    "state": {"type": "test/StateTest"},
    "vel_eff": {"type": "test/VelEff"},
    "bad_type": {"type": "test/NoSuchController"},
    "controller_groups": {"group1": ["effort1", "state"], "group2": ["effort2", "state"],
                          "group3": ["effort1", "effort2"]},
}


class InMemoryTransport:
    """ControllerManagerClient transport over an in-memory graph (no master)."""

    def __init__(self, nh: InMemoryNodeHandle) -> None:
        self.nh = nh
        self.calls = []
        self.fail = False

    def wait_for_service(self, name: str, timeout: Optional[float]) -> None:
        if self.fail or self.nh.resolve_name(name) not in self.nh.graph.service_names():
            raise ControllerManagerUnavailable(f"service [{name}] is not available")

    def call(self, name: str, srv_class: type, request: Any) -> Any:
        self.calls.append((name, request))
        if self.fail:
            raise ControllerManagerUnavailable(f"service [{name}] unavailable")
        try:
            return self.nh.call_service(name, request)
        except NodeHandleError as err:
            raise ControllerManagerUnavailable(str(err)) from err


class Served:
    def __init__(self, namespace: str = "/") -> None:
        self.graph = InMemoryGraph(clock=time.monotonic)
        self.root = InMemoryNodeHandle(namespace, self.graph)
        for key, value in PARAMS.items():
            self.root.set_param(key, value)
        self.hw = SmallRobotHW()
        self.cm = ControllerManager(self.hw, self.root, registry=make_registry(), switch_wait_limit=5.0)
        self.loop = ControlLoop(self.hw, self.cm, rate=500.0, now=self.root.now)
        self.loop.start()
        self.ros = ControllerManagerRos(self.cm, self.root, statistics_period=0.05)
        self.client_nh = InMemoryNodeHandle("/", self.graph)
        self.transport = InMemoryTransport(self.client_nh)

    def client(self, namespace: str = "") -> ControllerManagerClient:
        return ControllerManagerClient(namespace, timeout=1.0, transport=self.transport)

    def call(self, service: str, request: Any) -> Any:
        return self.client_nh.call_service(self.root.resolve_name("controller_manager/" + service), request)

    def states(self):
        return {d.name: d.state for d in self.cm.list_controllers()}

    def close(self) -> None:
        self.ros.shutdown()
        self.loop.stop()
        self.cm.shutdown()
