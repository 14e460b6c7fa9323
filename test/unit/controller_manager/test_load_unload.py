"""Loading, unloading, listing (cm_test: loadUnloadOk/Ko, stopBeforeUnload, listControllers, ...)."""
from __future__ import annotations

import logging
import os
import subprocess
import sys

from rospy_control.controller_manager import BASE_CLASS_NAME, CONTROLLER_TYPES, ControllerManager


def test_load_single_interface_controller_is_initialized(env):
    ctrl = env.load("effort", "test/EffortTestController")
    assert ctrl.is_initialized()
    assert env.cm.get_controller_names() == ["effort"]


def test_load_and_unload_ok_variants(env):
    for name, type_name in (("e", "test/EffortTestController"), ("ve", "test/VelEffController"),
                            ("peo", "test/PosEffOptController")):
        env.configure(name, type_name)
        assert env.cm.load_controller(name).ok
    for name in ("e", "ve", "peo"):
        assert env.cm.unload_controller(name).ok
    assert env.cm.get_controller_names() == []


def test_optional_interface_missing_is_tolerated_and_reduced_robot_hw_given(env):
    ctrl = env.load("peo", "test/PosEffOptController")
    assert ctrl.seen_interfaces == ["hardware_interface::EffortJointInterface"]
    [entry] = env.cm.list_controllers()[0].claimed_resources
    assert entry.hardware_interface == "hardware_interface::EffortJointInterface"


def test_multi_interface_controller_sees_only_its_interfaces(env):
    ctrl = env.load("ve", "test/VelEffController")
    assert ctrl.seen_interfaces == ["hardware_interface::EffortJointInterface",
                                    "hardware_interface::VelocityJointInterface"]


def test_load_unknown_type_fails_with_hint(env, caplog):
    env.configure("x", "test/DoesNotExist")
    with caplog.at_level(logging.ERROR):
        result = env.cm.load_controller("x")
    assert not result.ok
    assert "controller type 'test/DoesNotExist' does not exist" in result.message
    assert "Use 'rosservice call controller_manager/list_controller_types' to get the available types" \
        in caplog.text


def test_load_without_params_fails_naming_the_namespace(env):
    result = env.cm.load_controller("nothing_here")
    assert not result.ok
    assert result.message == (
        "Could not load controller 'nothing_here' because the type was not specified. Did you load the "
        "controller configuration on the parameter server (namespace: '/nothing_here')?")


def test_load_in_a_namespace_reads_params_under_it():
    from cm_fakes import FakeRobotHW, make_registry
    from rospy_control.testing import InMemoryNodeHandle
    root = InMemoryNodeHandle("/robot")
    root.set_param("e/type", "test/EffortTestController")
    cm = ControllerManager(FakeRobotHW(), root, registry=make_registry())
    assert cm.load_controller("e").ok
    assert root.graph.get_param("/robot/e/type") == "test/EffortTestController"
    result = cm.load_controller("f")
    assert "(namespace: '/robot/f')" in result.message
    cm.shutdown()


def test_load_missing_hardware_interface_fails(env):
    env.configure("p", "test/PositionTestController")
    result = env.cm.load_controller("p")
    assert not result.ok
    assert "hardware_interface::PositionJointInterface" in result.message


def test_load_missing_resource_fails(env):
    env.configure("e", "test/EffortTestController", joints=["hiDOF_joint1", "no_such_joint"])
    result = env.cm.load_controller("e")
    assert not result.ok
    assert "Could not find resource 'no_such_joint'" in result.message
    # claims of the failed init do not leak into the next controller
    assert env.hw.ej.get_claims() == set()


def test_load_multi_interface_with_missing_required_interface_fails(env):
    env.configure("pe", "test/PosEffController")
    result = env.cm.load_controller("pe")
    assert not result.ok
    assert "hardware_interface::PositionJointInterface" in result.message
    assert "- 'hardware_interface::EffortJointInterface'" in result.message


def test_load_init_returning_false_fails(env):
    env.configure("f", "test/FalseInitController")
    result = env.cm.load_controller("f")
    assert not result.ok and "init returned False" in result.message
    assert env.cm.get_controller_names() == []


def test_load_init_raising_fails(env):
    env.configure("r", "test/RaisingController", raise_in="init")
    result = env.cm.load_controller("r")
    assert not result.ok and "boom in init" in result.message


def test_failed_init_closes_the_ros_interfaces_it_created(env):
    env.configure("x", "test/PublishThenFailController")
    result = env.cm.load_controller("x")
    assert not result.ok and "failing after advertising" in result.message
    assert env.graph.topic_names() == []


def test_load_same_name_twice_fails(env):
    env.load("e", "test/EffortTestController")
    result = env.cm.load_controller("e")
    assert not result.ok
    assert result.message == "A controller named 'e' was already loaded inside the controller manager"


def test_load_type_not_a_string_fails(env):
    env.root_nh.set_param("e/type", 3)
    assert not env.cm.load_controller("e").ok


def test_load_module_class_type(env):
    env.configure("m", "cm_fakes:EffortTestController")
    assert env.cm.load_controller("m").ok


def test_load_module_class_type_that_cannot_import_fails(env, caplog):
    env.configure("m", "no_such_module_xyz:Ctrl")
    with caplog.at_level(logging.ERROR):
        result = env.cm.load_controller("m")
    assert not result.ok
    assert "Could not load class 'no_such_module_xyz:Ctrl'" in caplog.text


def test_unload_unknown_fails(env):
    result = env.cm.unload_controller("ghost")
    assert not result.ok
    assert result.message == ("Could not unload controller with name 'ghost' because no controller with "
                              "this name exists")


def test_unload_running_fails_until_stopped(env):
    env.load("e", "test/EffortTestController")
    assert env.switch(start=["e"]).ok
    result = env.cm.unload_controller("e")
    assert not result.ok
    assert result.message == "Could not unload controller with name 'e' because it is still running"
    assert env.switch(stop=["e"]).ok
    assert env.cm.unload_controller("e").ok


def test_unload_closes_the_controllers_ros_interfaces(env):
    env.load("p", "test/PublishingController")
    assert env.graph.num_publishers("/out") == 1
    assert env.graph.num_subscribers("/p/command") == 1
    assert env.cm.unload_controller("p").ok
    assert env.graph.num_publishers("/out") == 0
    assert env.graph.num_subscribers("/p/command") == 0


def test_list_controllers_order_states_types_and_resources(env):
    env.load("ve", "test/VelEffController")
    env.load("e", "test/EffortTestController", joints=["hiDOF_joint2", "hiDOF_joint1"])
    env.load("js", "test/StateController")
    assert env.switch(start=["js"]).ok
    listed = env.cm.list_controllers()
    assert [c.name for c in listed] == ["ve", "e", "js"]
    assert [c.state for c in listed] == ["initialized", "initialized", "running"]
    assert [c.type for c in listed] == ["test/VelEffController", "test/EffortTestController",
                                        "test/StateController"]
    ve = listed[0].claimed_resources
    assert [(r.hardware_interface, r.resources) for r in ve] == [
        ("hardware_interface::VelocityJointInterface", ["hiDOF_joint1", "hiDOF_joint2"]),
        ("hardware_interface::EffortJointInterface", ["hiDOF_joint3"]),
    ]
    assert [(r.hardware_interface, r.resources) for r in listed[1].claimed_resources] == [
        ("hardware_interface::EffortJointInterface", ["hiDOF_joint1", "hiDOF_joint2"])]
    # a state interface claims nothing but still reports its interface
    assert [(r.hardware_interface, r.resources) for r in listed[2].claimed_resources] == [
        ("hardware_interface::JointStateInterface", [])]


def test_list_controllers_all_state_strings(env):
    for name in ("a", "b", "c", "d", "e"):
        env.load(name, "test/StateController")
    ctrls = {n: env.cm.get_controller_by_name(n) for n in "abcde"}
    ctrls["b"].start_request(0.0)
    ctrls["c"].start_request(0.0)
    ctrls["c"].stop_request(0.0)
    ctrls["d"].wait_request(0.0)
    ctrls["e"].abort_request(0.0)
    expected = ["initialized", "running", "stopped", "waiting", "aborted"]
    assert [c.state for c in env.cm.list_controllers()] == expected
    for c in ctrls.values():
        c.state = c.state.INITIALIZED


def test_extensible_controllers_report_two_interfaces(env):
    env.load("x", "test/ExtendedVelEffController")
    assert len(env.cm.list_controllers()[0].claimed_resources) == 2


def test_list_controller_types_from_the_registry_without_importing(env):
    types, bases = env.cm.list_controller_types()
    assert len(types) >= 3 and len(types) == len(bases)
    assert set(bases) == {BASE_CLASS_NAME}


def test_default_registry_has_ros_controllers_spellings_lazily():
    names = CONTROLLER_TYPES.names()
    for expected in ("joint_state_controller/JointStateController",
                     "position_controllers/JointPositionController",
                     "position_controllers/JointGroupPositionController",
                     "velocity_controllers/JointVelocityController",
                     "velocity_controllers/JointGroupVelocityController",
                     "velocity_controllers/JointPositionController",
                     "effort_controllers/JointEffortController",
                     "effort_controllers/JointGroupEffortController",
                     "effort_controllers/JointPositionController",
                     "effort_controllers/JointVelocityController",
                     "imu_sensor_controller/ImuSensorController",
                     "force_torque_sensor_controller/ForceTorqueSensorController",
                     "contact_sensor_controller/ContactSensorController",
                     "position_controllers/JointTrajectoryController",
                     "velocity_controllers/JointTrajectoryController",
                     "effort_controllers/JointTrajectoryController",
                     "pos_vel_controllers/JointTrajectoryController",
                     "pos_vel_acc_controllers/JointTrajectoryController",
                     "position_controllers/GripperActionController",
                     "effort_controllers/GripperActionController"):
        assert expected in names
    cm = ControllerManager(None, None)
    types, _ = cm.list_controller_types()
    assert types == names


def test_listing_types_imports_no_controller_module():
    code = (
        "import sys\n"
        "from rospy_control.controller_manager import ControllerManager\n"
        "types, bases = ControllerManager(None, None).list_controller_types()\n"
        "assert 'effort_controllers/JointTrajectoryController' in types\n"
        "loaded = [m for m in sys.modules if m.startswith('rospy_control.controllers.')]\n"
        "assert not loaded, loaded\n"
    )
    src = os.path.join(os.path.dirname(__file__), "..", "..", "..", "src")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ, PYTHONPATH=src))
