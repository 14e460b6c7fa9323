"""Controller life cycle and resource claiming through the interfaces."""
from __future__ import annotations

import pytest

from rospy_control.controller_interface import (
    Controller, ControllerBase, ControllerState, MultiInterfaceController,
)
from rospy_control.exceptions import ControllerError, HardwareInterfaceError
from rospy_control.hardware_interface import (
    EffortJointInterface, JointStateInterface, PositionJointInterface, VelocityJointInterface,
)
from rospy_control.testing import InMemoryNodeHandle
from rospy_control.testing.robot_hw import JointsRobotHW


class Recorder(Controller):
    INTERFACE = EffortJointInterface

    def __init__(self, joints=("j1",)):
        super().__init__()
        self.joints = joints
        self.log = []

    def init(self, hw, root_nh, controller_nh):
        self.log.append(("init", root_nh.namespace, controller_nh.namespace))
        self.handles = [hw.get_handle(j) for j in self.joints]

    def starting(self, time):
        self.log.append(("starting", time))

    def update(self, time, period):
        self.log.append(("update", time, period))

    def stopping(self, time):
        self.log.append(("stopping", time))

    def waiting(self, time):
        self.log.append(("waiting", time))

    def aborting(self, time):
        self.log.append(("aborting", time))


def make_hw(position=False):
    """j1..j3 in the JointState, Effort and Velocity (and Position) interfaces, one command field."""
    interfaces = [EffortJointInterface, VelocityJointInterface]
    if position:
        interfaces.append(PositionJointInterface)
    return JointsRobotHW(("j1", "j2", "j3"), {iface: "command" for iface in interfaces})


@pytest.fixture
def nhs():
    root = InMemoryNodeHandle("/")
    return root, root.child("ctrl")


def test_state_labels():
    assert [s.label for s in ControllerState] == ["unknown", "initialized", "running", "stopped", "waiting",
                                                  "aborted"]


def test_requests_refused_before_init():
    c = Recorder()
    assert c.state == ControllerState.CONSTRUCTED
    for request in (c.start_request, c.stop_request, c.wait_request, c.abort_request):
        assert request(1.0) is False
    c.update_request(1.0, 0.1)
    assert c.log == [] and c.state == ControllerState.CONSTRUCTED


def test_life_cycle_calls_hooks_and_sets_states(nhs):
    root, ctrl_nh = nhs
    c = Recorder()
    claims = c.init_request(make_hw(), root, ctrl_nh)
    assert c.is_initialized() and c.log == [("init", "/", "/ctrl")]
    assert [(r.hardware_interface, r.resources) for r in claims] == [
        ("hardware_interface::EffortJointInterface", {"j1"})]
    c.update_request(0.5, 0.1)
    assert c.log[-1][0] == "init"                  # not running: no update
    assert c.start_request(1.0) and c.is_running()
    c.update_request(1.1, 0.1)
    assert c.stop_request(1.2) and c.is_stopped()
    c.update_request(1.3, 0.1)
    assert c.wait_request(1.4) and c.is_waiting()
    assert c.abort_request(1.5) and c.is_aborted()
    assert c.start_request(1.6) and c.is_running()  # aborted controllers can be started again
    assert [e[0] for e in c.log[1:]] == ["starting", "update", "stopping", "waiting", "aborting", "starting"]
    assert not c.is_initialized()


def test_init_only_once(nhs):
    c = Recorder()
    c.init_request(make_hw(), *nhs)
    with pytest.raises(ControllerError, match="already initialized"):
        c.init_request(make_hw(), *nhs)


def test_init_claims_are_cleared_after_collection(nhs):
    hw = make_hw()
    c = Recorder(("j2", "j1"))
    claims = c.init_request(hw, *nhs)
    assert claims[0].resources == {"j1", "j2"}
    assert hw.get(EffortJointInterface).get_claims() == set()


def test_state_interface_controller_reports_one_empty_entry(nhs):
    class Reader(Controller):
        INTERFACE = JointStateInterface

        def init(self, hw, root_nh, controller_nh):
            self.handles = [hw.get_handle(n) for n in hw.get_names()]
            return True

    claims = Reader().init_request(make_hw(), *nhs)
    assert [(r.hardware_interface, r.resources) for r in claims] == [
        ("hardware_interface::JointStateInterface", set())]


def test_missing_interface_fails_with_available_ones(nhs):
    class P(Recorder):
        INTERFACE = PositionJointInterface

    with pytest.raises(ControllerError) as err:
        P().init_request(make_hw(), *nhs)
    assert "requires a hardware interface of type 'hardware_interface::PositionJointInterface'" \
        in str(err.value)
    assert "'hardware_interface::EffortJointInterface'" in str(err.value)


def test_init_false_fails_and_none_succeeds(nhs):
    class F(Recorder):
        def init(self, hw, root_nh, controller_nh):
            hw.get_handle("j1")
            return False

    hw = make_hw()
    c = F()
    with pytest.raises(ControllerError, match="init returned False"):
        c.init_request(hw, *nhs)
    assert c.state == ControllerState.CONSTRUCTED
    assert hw.get(EffortJointInterface).get_claims() == set()


def test_unknown_joint_propagates_hardware_interface_error(nhs):
    hw = make_hw()
    with pytest.raises(HardwareInterfaceError, match="Could not find resource 'nope'"):
        Recorder(("nope",)).init_request(hw, *nhs)
    assert hw.get(EffortJointInterface).get_claims() == set()


def test_base_update_must_be_overridden():
    class NoUpdate(ControllerBase):
        pass

    c = NoUpdate()
    c.state = ControllerState.RUNNING
    with pytest.raises(NotImplementedError):
        c.update_request(0.0, 0.1)


class VelEff(MultiInterfaceController):
    INTERFACES = (VelocityJointInterface, EffortJointInterface, PositionJointInterface)

    def init(self, robot_hw, root_nh, controller_nh):
        self.names = robot_hw.get_names()
        robot_hw.get(VelocityJointInterface).get_handle("j1")
        robot_hw.get(VelocityJointInterface).get_handle("j2")
        robot_hw.get(EffortJointInterface).get_handle("j3")
        if robot_hw.get(PositionJointInterface) is not None:
            robot_hw.get(PositionJointInterface).get_handle("j3")
        return True

    def update(self, time, period):
        pass


def test_multi_interface_one_entry_per_present_interface(nhs):
    c = VelEff()
    claims = c.init_request(make_hw(position=True), *nhs)
    assert [(r.hardware_interface, sorted(r.resources)) for r in claims] == [
        ("hardware_interface::VelocityJointInterface", ["j1", "j2"]),
        ("hardware_interface::EffortJointInterface", ["j3"]),
        ("hardware_interface::PositionJointInterface", ["j3"]),
    ]
    assert "hardware_interface::JointStateInterface" not in c.names


def test_multi_interface_required_missing_fails_optional_tolerated(nhs):
    with pytest.raises(ControllerError, match="but is not exposed by the robot"):
        VelEff().init_request(make_hw(position=False), *nhs)
    c = VelEff(allow_optional_interfaces=True)
    claims = c.init_request(make_hw(position=False), *nhs)
    assert [r.hardware_interface for r in claims] == ["hardware_interface::VelocityJointInterface",
                                                      "hardware_interface::EffortJointInterface"]
    assert c.names == ["hardware_interface::EffortJointInterface",
                       "hardware_interface::VelocityJointInterface"]


def test_controller_without_declared_interface_fails(nhs):
    class Nothing(Controller):
        pass

    class NothingMulti(MultiInterfaceController):
        pass

    with pytest.raises(ControllerError, match="INTERFACE"):
        Nothing().init_request(make_hw(), *nhs)
    with pytest.raises(ControllerError, match="INTERFACES"):
        NothingMulti().init_request(make_hw(), *nhs)
