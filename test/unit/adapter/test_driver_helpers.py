"""Driver building blocks without a ROS master: parameters, controller YAML checks, the standalone
branch (the controller manager without its ROS API, in a control loop over the simulated arm's
MiddlewareRobotHW), the /joint_states sampler and thread, and /diagnostics."""
from __future__ import annotations

import os
import time

import pytest
import yaml

from adapter_testutil import PARAMS, SmallRobotHW, make_registry

from rospy_control.testing.sim_rig import sim_of, simulated_middleware
from rospy_control.control_loop.loop import ControlLoop
from rospy_control.adapter.diagnostics import OK, WARN, DriverDiagnostics
from rospy_control.control_loop.driver_config import (
    DriverParams,
    check_controller_params,
    controller_namespaces,
    default_sensor_controllers,
    default_trajectory_controllers,
)
from rospy_control.control_loop.standalone import (
    JointStateSampler,
    JointStatesThread,
    stamp_from_nsec,
    controller_states,
    load_controllers,
    start_controllers,
)
from rospy_control.controller_interface import Controller
from rospy_control.controller_manager import ControllerManager
from rospy_control.controller_manager.controller_types import CONTROLLER_TYPES
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ControlMode
from rospy_control.plugins import Registry
from rospy_control.hardware_interface import EffortJointInterface, SwitchState
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle, wait_until

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ARM_XML = os.path.join(ROOT, "config", "arm_hardware.xml")
ARM_URDF = os.path.join(ROOT, "urdf", "arm.urdf")


def _yaml(name):
    with open(os.path.join(ROOT, "config", name)) as f:
        return yaml.safe_load(f)


def _params(**values):
    return DriverParams(lambda name, default: values.get(name, default))


# -- parameters ------------------------------------------------------------------------------------
def test_params_defaults():
    p = _params(configure="x.xml")
    assert (p.sim, p.use_ros_control, p.control_rate, p.publish_rate) == (True, True, 200.0, 100.0)
    assert p.trajectory_controllers is None and p.sensor_controllers is None
    assert p.start_jsc and p.jsc_name == "joint_state_controller" and p.loop_priority is None


def test_params_from_command_line_strings():
    p = _params(configure="x.xml", sim="false", use_ros_control="False", trajectory_controllers="a, b c",
                sensor_controllers="", loop_priority=10)
    assert not p.sim and not p.use_ros_control
    assert p.trajectory_controllers == ["a", "b", "c"] and p.sensor_controllers is None
    assert p.loop_priority == 10


@pytest.mark.parametrize("values, where", [
    ({}, "~hardware_config"),
    ({"configure": "x", "control_rate": 0}, "~control_rate"),
    ({"configure": "x", "publish_rate": "fast"}, "~publish_rate"),
    ({"configure": "x", "sim": "maybe"}, "~sim"),
    ({"configure": "x", "trajectory_controllers": [1, 2]}, "~trajectory_controllers"),
    ({"robot_hardware": "servos"}, "~robot_hardware"),
    ({"robot_hardware": []}, "~robot_hardware"),
])
def test_params_errors_name_the_parameter(values, where):
    with pytest.raises(ConfigError) as err:
        _params(**values)
    assert err.value.source == where


def test_params_robot_hardware_needs_no_hardware_xml():
    p = _params(robot_hardware=["servos"])
    assert p.robot_hardware == ["servos"] and p.configure is None
    assert _params(configure="x.xml").robot_hardware is None  # the CAN RobotHW, as before
    assert not p.robot_hardware_in_namespace


def test_params_robot_hardware_in_the_node_namespace_as_combined_robot_hw_reads_it():
    p = DriverParams(lambda name, default: default, ["servos"])
    assert p.robot_hardware == ["servos"] and p.robot_hardware_in_namespace
    private = DriverParams(lambda name, default: ["a"] if name == "robot_hardware" else default, ["b"])
    assert private.robot_hardware == ["a"] and not private.robot_hardware_in_namespace  # ~ first
    with pytest.raises(ConfigError) as err:
        DriverParams(lambda name, default: default, "servos")
    assert err.value.source == "robot_hardware"


# -- controller YAML -------------------------------------------------------------------------------
def test_controller_namespaces_and_defaults():
    types = controller_namespaces(_yaml("arm_controllers.yaml"))
    assert "controller_groups" not in types
    assert default_trajectory_controllers(types) == ["arm_controller", "gripper_controller"]
    quad = controller_namespaces(_yaml("quadruped_controllers.yaml"))
    assert default_sensor_controllers(quad) == ["contact_sensor_controller", "imu_sensor_controller"]


def test_standalone_controller_lists():
    quad = controller_namespaces(_yaml("quadruped_controllers.yaml"))
    p = _params(configure="x.xml")
    trajectory = default_trajectory_controllers(quad)
    assert p.standalone_trajectory_controllers(quad) == trajectory
    sensors = ["contact_sensor_controller", "imu_sensor_controller"]
    assert p.standalone_controllers(quad) == trajectory + sensors
    p = _params(configure="x.xml", trajectory_controllers="a imu_sensor_controller",
                sensor_controllers="imu_sensor_controller")
    assert p.standalone_controllers(quad) == ["a", "imu_sensor_controller"]


ARM_JOINTS = ["elbow_joint", "gripper_finger_joint", "shoulder_lift_joint", "shoulder_pan_joint",
              "wrist_1_joint", "wrist_2_joint", "wrist_3_joint"]


def test_check_controller_params_accepts_the_examples():
    assert check_controller_params(_yaml("arm_controllers.yaml"), "/", ARM_JOINTS, CONTROLLER_TYPES) == []


def test_check_controller_params_unknown_type():
    tree = _yaml("arm_controllers.yaml")
    tree["arm_controller"]["type"] = "position_controllers/JointTrajectoryControler"
    with pytest.raises(ConfigError) as err:
        check_controller_params(tree, "/ns", ARM_JOINTS, CONTROLLER_TYPES)
    assert err.value.source == "/ns/arm_controller/type"


def test_check_controller_params_unknown_joint():
    tree = _yaml("arm_controllers.yaml")
    tree["gripper_action_controller"]["joint"] = "finger"
    with pytest.raises(ConfigError) as err:
        check_controller_params(tree, "/", ARM_JOINTS, CONTROLLER_TYPES)
    assert err.value.source == "/gripper_action_controller/joint"
    tree = _yaml("arm_controllers.yaml")
    tree["arm_controller"]["joints"] = "elbow_joint"
    with pytest.raises(ConfigError, match="list of joint names"):
        check_controller_params(tree, "/", ARM_JOINTS, CONTROLLER_TYPES)


def test_check_controller_params_unimportable_registered_type_is_a_warning():
    from rospy_control.controller_interface import ControllerBase
    registry = Registry("controller type", ControllerBase)
    registry.register("pkg/Missing", "no_such_module_xyz:Missing")
    warnings = check_controller_params({"c": {"type": "pkg/Missing"}}, "/", [], registry)
    assert len(warnings) == 1 and "no_such_module_xyz" in warnings[0]


# -- the standalone branch over the simulated arm ------------------------------------------------------
@pytest.fixture
def arm():
    from rospy_control.robot_hw.middleware_robot_hw import MiddlewareRobotHW
    with open(ARM_URDF) as f:
        urdf = f.read()
    mw = simulated_middleware(ARM_XML, simulate=True, urdf=urdf)   # the simulated arm feels its weights
    graph = InMemoryGraph(clock=time.monotonic)
    nh = InMemoryNodeHandle("/", graph)
    for key, value in _yaml("arm_controllers.yaml").items():
        nh.set_param(key, value)
    nh.set_param("robot_description", urdf)
    limits = _yaml("arm_joint_limits.yaml")["joint_limits"]
    hw = MiddlewareRobotHW(mw, urdf, {"joint_limits": limits})
    mw.start()
    yield mw, hw, nh
    nh.shutdown()
    mw.shutdown()


class Standalone:
    """What the driver's standalone branch wires up: the controller manager (no ControllerManagerRos)
    run by a control loop whose ``after_read`` hook feeds a JointStateSampler."""

    def __init__(self, hw, nh, registry=None, rate=200.0):
        self.cm = ControllerManager(hw, nh, registry=registry, switch_wait_limit=10.0)
        self.sampler = JointStateSampler(hw)
        self.loop = ControlLoop(hw, self.cm, rate, now=nh.now, after_read=self.sampler.sample)
        self.loop.start()

    def close(self):
        self.loop.stop()
        self.cm.shutdown()


@pytest.fixture
def closing():
    opened = []
    yield opened.append
    for standalone in reversed(opened):
        standalone.close()


def test_standalone_starts_the_trajectory_controllers_after_the_mode_switch(arm, closing):
    mw, hw, nh = arm
    sa = Standalone(hw, nh)
    closing(sa)
    names = ["arm_controller", "gripper_controller"]
    load_controllers(sa.cm, names)
    assert controller_states(sa.cm) == {"arm_controller": "initialized", "gripper_controller": "initialized"}
    assert start_controllers(sa.cm, names) == []
    # the switch returns once the motors confirmed the position mode
    assert controller_states(sa.cm) == {"arm_controller": "running", "gripper_controller": "running"}
    # (the published snapshot follows within a bus cycle or two; a late host may delay that cycle)
    assert wait_until(lambda: all(mw.snapshot()[m].mode == ControlMode.POSITION
                                  for m in ("shoulder_pan_motor", "wrist_a_motor", "gripper_motor")), 2.0)
    assert wait_until(lambda: sa.sampler() is not None)
    names_, pos, vel, eff = sa.sampler()
    assert list(names_) == sorted(ARM_JOINTS) and len(pos) == len(vel) == len(eff) == 7
    assert {"/arm_controller/follow_joint_trajectory", "/gripper_controller/follow_joint_trajectory"} <= set(
        nh.graph.action_server_names())
    services = nh.graph.service_names()
    assert "/arm_controller/query_state" in services
    assert not [s for s in services if "controller_manager" in s]  # no ROS API of the manager
    sa.close()
    assert controller_states(sa.cm) == {}  # stopped and unloaded
    assert "/arm_controller/follow_joint_trajectory" not in set(nh.graph.action_server_names())


def test_standalone_starts_with_a_motor_in_fault(arm, closing):
    mw, hw, nh = arm
    sim_of(mw).set_fault("wrist_1_motor", "silent", True)
    assert wait_until(lambda: "wrist_1_motor" in mw.faults(), 5.0)
    sa = Standalone(hw, nh)
    closing(sa)
    load_controllers(sa.cm, ["arm_controller", "gripper_controller"])
    assert start_controllers(sa.cm, ["arm_controller", "gripper_controller"]) == []
    assert controller_states(sa.cm) == {"arm_controller": "running", "gripper_controller": "running"}
    assert "wrist_1_joint" in hw.faulted_joints()


def test_standalone_conflicting_controllers_are_a_config_error(arm, closing):
    _, hw, nh = arm
    sa = Standalone(hw, nh)
    closing(sa)
    load_controllers(sa.cm, ["arm_controller", "arm_group_position_controller"])
    with pytest.raises(ConfigError, match="resource conflict") as err:
        start_controllers(sa.cm, ["arm_controller", "arm_group_position_controller"])
    assert err.value.source == "/"
    assert set(controller_states(sa.cm).values()) == {"initialized"}  # nothing changed


@pytest.mark.parametrize("name, value, match", [
    ("no_such_controller", None, "type was not specified"),
    ("typo", {"type": "position_controllers/JointTrajectoryControler"}, "does not exist"),
    ("no_joints", {"type": "position_controllers/JointTrajectoryController"}, "Initializing controller"),
])
def test_standalone_bad_controller_is_a_config_error_naming_it(arm, closing, name, value, match):
    _, hw, nh = arm
    if value is not None:
        nh.set_param(name, value)
    sa = Standalone(hw, nh)
    closing(sa)
    with pytest.raises(ConfigError, match=match) as err:
        load_controllers(sa.cm, ["arm_controller", name])
    assert err.value.source == "/" + name
    assert controller_states(sa.cm) == {"arm_controller": "initialized"}


class StartFails(Controller):
    INTERFACE = EffortJointInterface

    def init(self, hw, root_nh, controller_nh):
        self.handle = hw.get_handle("joint3")
        return True

    def starting(self, time):
        raise RuntimeError("cannot start")

    def update(self, time, period):
        pass


def _small(nh, hw_class=SmallRobotHW):
    registry = make_registry()
    registry.register("test/StartFails", StartFails)
    for key, value in PARAMS.items():
        nh.set_param(key, value)
    nh.set_param("start_fails", {"type": "test/StartFails"})
    return hw_class(), registry


def test_standalone_a_controller_raising_in_starting_is_aborted_the_others_run(closing):
    nh = InMemoryNodeHandle("/", InMemoryGraph(clock=time.monotonic))
    hw, registry = _small(nh)
    sa = Standalone(hw, nh, registry)
    closing(sa)
    load_controllers(sa.cm, ["effort1", "start_fails"])
    assert start_controllers(sa.cm, ["effort1", "start_fails"]) == ["start_fails"]
    assert controller_states(sa.cm) == {"effort1": "running", "start_fails": "aborted"}
    assert wait_until(lambda: hw.data["joint1"].command_effort == 1.0)  # the loop goes on


class NeverSwitches(SmallRobotHW):
    def switch_result(self, info=None):
        return SwitchState.ONGOING


def test_standalone_motors_that_never_confirm_abort_the_controllers_the_node_goes_on(closing):
    nh = InMemoryNodeHandle("/", InMemoryGraph(clock=time.monotonic))
    hw, registry = _small(nh, NeverSwitches)
    sa = Standalone(hw, nh, registry)
    closing(sa)
    load_controllers(sa.cm, ["effort1", "effort3"])
    assert start_controllers(sa.cm, ["effort1", "effort3"], timeout=0.2) == ["effort1", "effort3"]
    assert controller_states(sa.cm) == {"effort1": "aborted", "effort3": "aborted"}
    assert sa.loop.is_running()


def test_standalone_start_without_a_running_loop_is_a_config_error(closing):
    nh = InMemoryNodeHandle("/", InMemoryGraph(clock=time.monotonic))
    hw, registry = _small(nh)
    cm = ControllerManager(hw, nh, registry=registry, switch_wait_limit=0.2)
    load_controllers(cm, ["effort1"])
    with pytest.raises(ConfigError, match="control loop") as err:
        start_controllers(cm, ["effort1"])
    assert err.value.source == "/effort1"
    cm.shutdown()


def test_nothing_to_start():
    nh = InMemoryNodeHandle("/", InMemoryGraph(clock=time.monotonic))
    hw, registry = _small(nh)
    assert start_controllers(ControllerManager(hw, nh, registry=registry), []) == []


# -- /joint_states sampler and thread --------------------------------------------------------------------
def test_sampler_copies_one_cycle():
    hw = SmallRobotHW()
    sampler = JointStateSampler(hw)
    assert sampler() is None
    hw.data["joint2"].position = 0.5
    hw.data["joint3"].velocity = -1.0
    sampler.sample(1.0, 0.005)
    first = sampler()
    assert first == (("joint1", "joint2", "joint3"), (0.0, 0.5, 0.0), (0.0, 0.0, -1.0), (0.0, 0.0, 0.0))
    hw.data["joint2"].position = 0.7
    assert sampler() is first  # unchanged until the next cycle
    sampler.sample(1.005, 0.005)
    assert sampler()[1] == (0.0, 0.7, 0.0)


class _Msg:
    class _Header:
        stamp = None

    def __init__(self):
        self.header = _Msg._Header()


def test_joint_states_stamps_strictly_increase_with_a_frozen_clock():
    out = []
    sample = (("a",), (1.0,), (0.0,), (0.0,))
    th = JointStatesThread(lambda: sample, out.append, lambda: 5.0, 100.0, _Msg, lambda t: t)
    for _ in range(5):
        assert th.publish_once()
    stamps = [m.header.stamp for m in out]
    assert all(b > a for a, b in zip(stamps, stamps[1:]))
    assert out[0].name == ["a"] and out[0].position == [1.0]


def test_joint_states_stamps_strictly_increase_at_epoch_scale_times():
    # ROS time is epoch seconds: near 1.7e9 s a float's spacing is ~2.4e-7 s, so "+1e-9 s" is lost
    out = []
    sample = (("a",), (1.0,), (0.0,), (0.0,))
    th = JointStatesThread(lambda: sample, out.append, lambda: 1.7e9 + 0.25, 100.0, _Msg, stamp_from_nsec)
    for _ in range(5):
        assert th.publish_once()
    stamps = [m.header.stamp.to_nsec() for m in out]
    assert stamps[0] == 1_700_000_000_250_000_000
    assert stamps == [stamps[0] + k for k in range(5)]


def test_joint_states_nothing_before_the_first_cycle_and_rate_kept():
    out = []
    th = JointStatesThread(lambda: None, out.append, time.monotonic, 100.0, _Msg, lambda t: t)
    assert not th.publish_once()
    holder = {"s": None}
    th = JointStatesThread(lambda: holder["s"], out.append, time.monotonic, 200.0, _Msg, lambda t: t)
    holder["s"] = (("a",), (1.0,), (0.0,), (0.0,))
    th.start()
    time.sleep(0.5)
    th.stop()
    assert 80 <= len(out) <= 110


def test_joint_states_rate_must_be_positive():
    with pytest.raises(ConfigError):
        JointStatesThread(lambda: None, print, time.monotonic, 0.0, _Msg, lambda t: t)


# -- diagnostics --------------------------------------------------------------------------------------------
def test_diagnostics_report_motors_channels_loop_and_robot_hw(arm):
    mw, hw, _ = arm

    class Loop:
        rate = 200.0
        name = "control_loop"

        def stats(self):
            from rospy_control.control_loop.loop import ControlLoopStats
            s = ControlLoopStats()
            s.cycles = 400
            s.overruns = 2
            return s

        def is_running(self):
            return True

    diag = DriverDiagnostics(mw, "/driver", loop=Loop(), robot_hw=hw)
    time.sleep(0.2)
    msg = diag.build()
    by_name = {s.name: s for s in msg.status}
    motor = by_name["driver: motor shoulder_pan_motor"]
    values = {kv.key: kv.value for kv in motor.values}
    assert values["mode"] in ("POSITION", "NONE")
    assert {"temperature", "fault", "fault_reason", "reply_timeouts",
            "shoulder_pan_joint interface"} <= set(values)
    channel = {kv.key: kv.value for kv in by_name["driver: channel can0"].values}
    assert float(channel["frames_sent/s"]) > 0 and "bus_load_estimate (%)" in channel
    loop = {kv.key: kv.value for kv in by_name["driver: control loop"].values}
    assert loop["overruns"] == "2"
    assert "driver: robot_hw" in by_name


def test_diagnostics_standalone_controllers_status(arm):
    mw, hw, _ = arm
    states = {"arm_controller": "running", "gripper_controller": "running"}
    diag = DriverDiagnostics(mw, "/driver", robot_hw=hw, controller_states=lambda: dict(states))
    status = {s.name: s for s in diag.build().status}["driver: controllers"]
    assert (status.level, status.message, status.hardware_id) == (OK, "all running", "standalone")
    assert {kv.key: kv.value for kv in status.values} == states
    states["gripper_controller"] = "aborted"
    status = {s.name: s for s in diag.build().status}["driver: controllers"]
    assert (status.level, status.message) == (WARN, "not running: gripper_controller")
    assert "driver: controllers" not in {s.name for s in DriverDiagnostics(mw, "/driver").build().status}


def test_hardware_config_is_the_one_name_and_configure_still_works_with_a_warning():
    p = _params(hardware_config="arm.xml")
    assert p.hardware_config == p.configure == "arm.xml" and p.deprecations == []
    old = _params(configure="arm.xml")
    assert old.hardware_config == "arm.xml"
    assert len(old.deprecations) == 1 and "~configure is deprecated" in old.deprecations[0]
    both = _params(hardware_config="new.xml", configure="old.xml")
    assert both.hardware_config == "new.xml" and "differ" in both.deprecations[0]
    with pytest.raises(ConfigError) as err:
        _params()
    assert "~hardware_config" in str(err.value) and "~configure" in str(err.value)


def test_a_relative_hardware_config_is_found_in_the_working_directory_or_the_package(tmp_path, monkeypatch):
    from rospy_control.control_loop.driver_config import resolve_hardware_config
    package = tmp_path / "pkg"
    (package / "config").mkdir(parents=True)
    (package / "config" / "arm.xml").write_text("<hardware/>")
    elsewhere = tmp_path / "ros_home"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert resolve_hardware_config("config/arm.xml", str(package)) == str(package / "config" / "arm.xml")
    (elsewhere / "config").mkdir()
    (elsewhere / "config" / "arm.xml").write_text("<hardware/>")
    assert resolve_hardware_config("config/arm.xml", str(package)) == str(elsewhere / "config" / "arm.xml")
    assert resolve_hardware_config("config/none.xml", str(package)) == "config/none.xml"
    assert resolve_hardware_config("<hardware/>", str(package)) == "<hardware/>"
    assert resolve_hardware_config("/abs/arm.xml", str(package)) == "/abs/arm.xml"
