"""Driver building blocks without a ROS master: parameters, controller YAML checks, the standalone
runner over the simulated arm's MiddlewareRobotHW, the /joint_states thread and /diagnostics."""
from __future__ import annotations

import os
import time

import pytest
import yaml

from rospy_control.adapter.diagnostics import DriverDiagnostics
from rospy_control.adapter.driver import (
    DriverParams,
    check_controller_params,
    controller_namespaces,
    default_sensor_controllers,
    default_trajectory_controllers,
)
from rospy_control.adapter.standalone import ControllerRunner, JointStatesThread
from rospy_control.controller_manager.controller_types import CONTROLLER_TYPES
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ControlMode, Middleware
from rospy_control.plugins import Registry
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle

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
    ({}, "~configure"),
    ({"configure": "x", "control_rate": 0}, "~control_rate"),
    ({"configure": "x", "publish_rate": "fast"}, "~publish_rate"),
    ({"configure": "x", "sim": "maybe"}, "~sim"),
    ({"configure": "x", "trajectory_controllers": [1, 2]}, "~trajectory_controllers"),
])
def test_params_errors_name_the_parameter(values, where):
    with pytest.raises(ConfigError) as err:
        _params(**values)
    assert err.value.source == where


# -- controller YAML -------------------------------------------------------------------------------
def test_controller_namespaces_and_defaults():
    types = controller_namespaces(_yaml("arm_controllers.yaml"))
    assert "controller_groups" not in types
    assert default_trajectory_controllers(types) == ["arm_controller", "gripper_controller"]
    quad = controller_namespaces(_yaml("quadruped_controllers.yaml"))
    assert default_sensor_controllers(quad) == ["contact_sensor_controller", "imu_sensor_controller"]


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


# -- the standalone runner over the simulated arm -----------------------------------------------------
@pytest.fixture
def arm():
    from rospy_control.robot_hw.middleware_robot_hw import MiddlewareRobotHW
    mw = Middleware.from_xml(ARM_XML, simulate=True)
    with open(ARM_URDF) as f:
        urdf = f.read()
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


def _cycles(runner, hw, nh, n, dt=0.005):
    for _ in range(n):
        t = nh.now()
        hw.read(t, dt)
        runner.update(t, dt)
        hw.write(t, dt)
        time.sleep(dt)


def test_runner_starts_trajectory_controllers_after_the_mode_switch(arm):
    mw, hw, nh = arm
    runner = ControllerRunner(hw, nh, ["arm_controller", "gripper_controller"])
    runner.load()
    assert runner.states() == {"arm_controller": "initialized", "gripper_controller": "initialized"}
    _cycles(runner, hw, nh, 100)
    assert runner.states() == {"arm_controller": "running", "gripper_controller": "running"}
    snap = mw.snapshot()
    assert all(snap[m].mode == ControlMode.POSITION for m in ("shoulder_pan_motor", "wrist_a_motor",
                                                              "gripper_motor"))
    names, pos, vel, eff = runner.latest
    assert list(names) == sorted(ARM_JOINTS) and len(pos) == len(vel) == len(eff) == 7
    assert {"/arm_controller/follow_joint_trajectory", "/gripper_controller/follow_joint_trajectory"} <= set(
        nh.graph.action_server_names())
    assert "/arm_controller/query_state" in nh.graph.service_names()
    runner.stop(nh.now())
    runner.shutdown_ros()
    assert runner.states()["arm_controller"] == "stopped"


def test_runner_rejects_conflicting_controllers(arm):
    _, hw, nh = arm
    runner = ControllerRunner(hw, nh, ["arm_controller", "arm_group_position_controller"])
    with pytest.raises(ConfigError, match="claim the same joint"):
        runner.load()


def test_runner_unknown_controller(arm):
    _, hw, nh = arm
    with pytest.raises(ConfigError, match="no 'type' parameter"):
        ControllerRunner(hw, nh, ["no_such_controller"]).load()


# -- /joint_states thread --------------------------------------------------------------------------------
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
            from rospy_control.adapter.control_loop import ControlLoopStats
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
