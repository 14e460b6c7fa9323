"""Fakes for the controller manager tests (cm_test / hwi_update_test / hwi_switch_test in our words).

Imported by conftest.py, and loaded as ``cm_fakes:<Class>`` controller types.

* :class:`FakeRobotHW` -- joints ``hiDOF_joint1..3`` in JointState, Effort and Velocity interfaces
  (no Position interface), call counters and scripted ``switch_result`` answers.
* Test controllers registered in a private registry (the shared one is left alone).
* :class:`Env` -- the shared controller-manager rig (``rospy_control.testing.cm_rig``) on that robot:
  ``switch`` runs the blocking ``switch_controller`` in a thread while the test drives ``update()``
  cycle by cycle, so nothing depends on sleeps.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from rospy_control.controller_interface import (
    Controller, ControllerBase, MultiInterfaceController,
)
from rospy_control.hardware_interface import (
    EffortJointInterface, JointStateInterface, PositionJointInterface, RobotHW, SwitchState,
    VelocityJointInterface,
)
from rospy_control.plugins import Registry
from rospy_control.testing.cm_rig import ControllerManagerRig
from rospy_control.testing.robot_hw import JointsRobotHW

JOINTS = ("hiDOF_joint1", "hiDOF_joint2", "hiDOF_joint3")


class FakeRobotHW(JointsRobotHW):
    """RobotHW with three joints (effort and velocity commands share one field) and scripted switch
    behaviour."""

    def __init__(self) -> None:
        super().__init__(JOINTS, {EffortJointInterface: "command", VelocityJointInterface: "command"})
        self.ej = self.command_interfaces[EffortJointInterface]
        self.vj = self.command_interfaces[VelocityJointInterface]
        self.calls: List[tuple] = []
        self.prepare_ok = True
        #: answers of switch_result(): a list consumed in order (last one repeats), or a callable(info)
        self.results: object = [SwitchState.DONE]

    def check_for_conflict(self, info):
        self.calls.append(("check_for_conflict", sorted(i.name for i in info)))
        return super().check_for_conflict(info)

    def prepare_switch(self, start_list, stop_list):
        self.calls.append(("prepare_switch", [i.name for i in start_list], [i.name for i in stop_list]))
        return self.prepare_ok

    def do_switch(self, start_list, stop_list):
        self.calls.append(("do_switch", [i.name for i in start_list], [i.name for i in stop_list]))

    def switch_result(self, info=None):
        self.calls.append(("switch_result", None if info is None else info.name))
        if callable(self.results):
            return self.results(info)
        results = self.results
        return results.pop(0) if len(results) > 1 else results[0]

    def count(self, what: str) -> int:
        return sum(1 for c in self.calls if c[0] == what)


class RecordingMixin:
    """Records every hook call as (hook, time)."""

    def _record_init(self) -> None:
        self.log: List[tuple] = []

    def starting(self, time):
        self.log.append(("starting", time))

    def update(self, time, period):
        self.log.append(("update", time))

    def stopping(self, time):
        self.log.append(("stopping", time))

    def waiting(self, time):
        self.log.append(("waiting", time))

    def aborting(self, time):
        self.log.append(("aborting", time))

    def hooks(self, name: str) -> int:
        return sum(1 for entry in self.log if entry[0] == name)


class EffortTestController(RecordingMixin, Controller):
    """cm_test's EffortTestController: claims the joints of param ``joints`` (default joint1+2)."""

    INTERFACE = EffortJointInterface

    def __init__(self) -> None:
        super().__init__()
        self._record_init()

    def init(self, hw, root_nh, controller_nh):
        self.handles = [hw.get_handle(j) for j in controller_nh.get_param("joints", list(JOINTS[:2]))]
        return True


class VelocityTestController(EffortTestController):
    INTERFACE = VelocityJointInterface


class StateController(RecordingMixin, Controller):
    """Reads every joint state; claims nothing."""

    INTERFACE = JointStateInterface

    def __init__(self) -> None:
        super().__init__()
        self._record_init()

    def init(self, hw, root_nh, controller_nh):
        self.handles = [hw.get_handle(n) for n in hw.get_names()]


class PositionTestController(EffortTestController):
    """Needs the PositionJointInterface the fake robot lacks."""

    INTERFACE = PositionJointInterface


class VelEffController(RecordingMixin, MultiInterfaceController):
    """Velocity on joint1+2, effort on joint3 (two claimed interfaces)."""

    INTERFACES = (VelocityJointInterface, EffortJointInterface)

    def __init__(self) -> None:
        super().__init__()
        self._record_init()

    def init(self, robot_hw, root_nh, controller_nh):
        self.seen_interfaces = robot_hw.get_names()
        v = robot_hw.get(VelocityJointInterface)
        e = robot_hw.get(EffortJointInterface)
        self.handles = [v.get_handle(JOINTS[0]), v.get_handle(JOINTS[1]), e.get_handle(JOINTS[2])]
        return True


class ExtendedVelEffController(VelEffController):
    """extensibleControllers: a derived multi-interface controller."""


class PosEffOptController(RecordingMixin, MultiInterfaceController):
    """Position (absent, optional) + effort."""

    INTERFACES = (PositionJointInterface, EffortJointInterface)
    ALLOW_OPTIONAL_INTERFACES = True

    def __init__(self) -> None:
        super().__init__()
        self._record_init()

    def init(self, robot_hw, root_nh, controller_nh):
        self.seen_interfaces = robot_hw.get_names()
        self.handles = [robot_hw.get(EffortJointInterface).get_handle(JOINTS[0])]
        return True


class PosEffController(PosEffOptController):
    """Both required -> fails to load on the fake robot."""

    ALLOW_OPTIONAL_INTERFACES = False


class SelfConflictController(VelEffController):
    """Claims joint1 through the velocity and the effort interface."""

    def init(self, robot_hw, root_nh, controller_nh):
        robot_hw.get(VelocityJointInterface).get_handle(JOINTS[0])
        robot_hw.get(EffortJointInterface).get_handle(JOINTS[0])
        return True


class FalseInitController(EffortTestController):
    def init(self, hw, root_nh, controller_nh):
        hw.get_handle(JOINTS[0])
        return False


class RaisingController(EffortTestController):
    """Raises in the hook named by param ``raise_in``."""

    def init(self, hw, root_nh, controller_nh):
        self.raise_in = controller_nh.get_param("raise_in", "")
        if self.raise_in == "init":
            raise RuntimeError("boom in init")
        return super().init(hw, root_nh, controller_nh)

    def update(self, time, period):
        super().update(time, period)
        if self.raise_in == "update":
            raise RuntimeError("boom in update")

    def starting(self, time):
        super().starting(time)
        if self.raise_in == "starting":
            raise RuntimeError("boom in starting")


class PublishingController(StateController):
    """Creates ROS interfaces on both handles (to check they are closed on unload)."""

    def init(self, hw, root_nh, controller_nh):
        from std_msgs.msg import Float64
        self.pub = root_nh.advertise("out", Float64, 1)
        self.sub = controller_nh.subscribe("command", Float64, lambda msg: None)
        return True


class PublishThenFailController(PublishingController):
    """Creates ROS interfaces, then fails its init."""

    def init(self, hw, root_nh, controller_nh):
        super().init(hw, root_nh, controller_nh)
        raise ValueError("failing after advertising")


class GatedController(EffortTestController):
    """Overrides ``update_request`` (the manager calls it, not ``update``, for such a class)."""

    def update_request(self, time, period):
        self.log.append(("update_request", time))
        super().update_request(time, period)


TYPES: Dict[str, type] = {
    "test/GatedController": GatedController,
    "test/EffortTestController": EffortTestController,
    "test/VelocityTestController": VelocityTestController,
    "test/StateController": StateController,
    "test/PositionTestController": PositionTestController,
    "test/VelEffController": VelEffController,
    "test/ExtendedVelEffController": ExtendedVelEffController,
    "test/PosEffOptController": PosEffOptController,
    "test/PosEffController": PosEffController,
    "test/SelfConflictController": SelfConflictController,
    "test/FalseInitController": FalseInitController,
    "test/RaisingController": RaisingController,
    "test/PublishingController": PublishingController,
    "test/PublishThenFailController": PublishThenFailController,
}


def make_registry() -> Registry:
    registry = Registry("controller type", ControllerBase)
    for name, cls in TYPES.items():
        registry.register(name, cls)
    return registry


class Env(ControllerManagerRig):
    """The fake robot (or ``hw``), an in-memory graph and a controller manager with the test types.

    Short switch waits (``switch_wall_margin`` 0.2 s, ``switch_wait_limit`` 0.5 s) so that tests of
    switches that never complete stay fast; :meth:`switch` returns the result for the test to check.
    """

    def __init__(self, hw: Optional[RobotHW] = None) -> None:
        super().__init__(hw if hw is not None else FakeRobotHW(), registry=make_registry(),
                         switch_wall_margin=0.2, switch_wait_limit=0.5)
        self.hw = self.robot_hw
