"""ControllerManagerRos: the six services' request/response mapping and the statistics topic,
on an in-memory graph (the rostest controller_manager.test checks the same through rospy)."""
from __future__ import annotations

import threading

from controller_manager_msgs.msg import ControllersStatistics
from controller_manager_msgs.srv import (
    ListControllersRequest,
    ListControllerTypesRequest,
    LoadControllerRequest,
    ReloadControllerLibrariesRequest,
    SwitchControllerRequest,
    UnloadControllerRequest,
)
from adapter_testutil import EFFORT, STATE, VELOCITY, Served

from rospy_control.adapter.controller_manager_ros import SERVICE_NAMES, ControllerManagerRos

STRICT = SwitchControllerRequest.STRICT
BEST_EFFORT = SwitchControllerRequest.BEST_EFFORT


def load(served, name):
    return served.call("load_controller", LoadControllerRequest(name=name)).ok


def switch(served, start=(), stop=(), strictness=STRICT):
    request = SwitchControllerRequest(start_controllers=list(start), stop_controllers=list(stop),
                                      strictness=strictness, start_asap=False, timeout=0.0)
    return served.call("switch_controller", request).ok


def test_the_six_services_are_advertised_under_controller_manager(served):
    names = served.graph.service_names()
    assert sorted(names) == sorted("/controller_manager/" + s for s in SERVICE_NAMES)


def test_services_live_under_the_given_namespace():
    bundle = Served("/robot")
    try:
        assert "/robot/controller_manager/list_controllers" in bundle.graph.service_names()
        assert bundle.call("load_controller", LoadControllerRequest(name="effort1")).ok
        assert bundle.cm.get_controller_names() == ["effort1"]
    finally:
        bundle.close()


def test_load_and_unload_report_only_through_ok(served):
    assert load(served, "effort1") is True
    assert load(served, "effort1") is False
    assert load(served, "nobody") is False
    assert load(served, "bad_type") is False
    assert served.call("unload_controller", UnloadControllerRequest(name="nobody")).ok is False
    assert served.call("unload_controller", UnloadControllerRequest(name="effort1")).ok is True


def test_list_controllers_fields(served):
    assert load(served, "vel_eff") and load(served, "state") and load(served, "effort3")
    assert switch(served, start=["state"])
    controllers = served.call("list_controllers", ListControllersRequest()).controller
    assert [(c.name, c.state, c.type) for c in controllers] == [
        ("vel_eff", "initialized", "test/VelEff"), ("state", "running", "test/StateTest"),
        ("effort3", "initialized", "test/EffortTest")]
    assert [(r.hardware_interface, r.resources) for r in controllers[0].claimed_resources] == [
        (VELOCITY, ["joint1", "joint2"]), (EFFORT, ["joint3"])]
    assert [(r.hardware_interface, r.resources) for r in controllers[1].claimed_resources] == [(STATE, [])]


def test_switch_rules_through_the_service(served):
    assert load(served, "effort1") and load(served, "effort2")
    assert switch(served, start=["effort1", "nobody"]) is False
    assert switch(served, start=["effort1", "nobody"], strictness=BEST_EFFORT) is True
    assert served.states() == {"effort1": "running", "effort2": "initialized"}
    assert switch(served, start=["effort2"]) is False, "joint2 conflict"
    assert switch(served, start=["effort1"], stop=["effort1"], strictness=BEST_EFFORT) is False
    assert switch(served, start=["effort2"], stop=["effort1"]) is True
    assert served.states() == {"effort1": "stopped", "effort2": "running"}


def test_list_controller_types_parallel_arrays(served):
    response = served.call("list_controller_types", ListControllerTypesRequest())
    assert response.types == ["test/EffortTest", "test/StateTest", "test/VelEff"]
    assert response.base_classes == ["controller_interface::ControllerBase"] * 3


def test_reload_controller_libraries_force_kill(served):
    assert load(served, "effort1") and switch(served, start=["effort1"])

    def reload(force_kill):
        request = ReloadControllerLibrariesRequest(force_kill=force_kill)
        return served.call("reload_controller_libraries", request).ok

    assert reload(False) is False
    assert reload(True) is True
    assert served.cm.get_controller_names() == []


def test_a_core_exception_becomes_ok_false(served, monkeypatch):
    def boom(name):
        raise RuntimeError("core exploded")

    monkeypatch.setattr(served.cm, "load_controller", boom)
    assert served.call("load_controller", LoadControllerRequest(name="effort1")).ok is False
    monkeypatch.setattr(served.cm, "list_controllers", lambda: 1 / 0)
    assert served.call("list_controllers", ListControllersRequest()).controller == []


def test_handlers_are_serialized(served, monkeypatch):
    inside = []
    overlap = []
    release = threading.Event()
    original = served.cm.list_controllers

    def slow_list():
        inside.append(1)
        if len(inside) > 1:
            overlap.append(1)
        release.wait(0.2)
        inside.pop()
        return original()

    monkeypatch.setattr(served.cm, "list_controllers", slow_list)
    threads = [threading.Thread(target=served.call, args=("list_controllers", ListControllersRequest()))
               for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5.0)
    assert not overlap


def test_statistics_message_and_topic(served):
    received = []
    event = threading.Event()

    def on_stats(msg):
        received.append(msg)
        if msg.controller and msg.controller[0].running:
            event.set()

    served.client_nh.subscribe("/controller_manager/statistics", ControllersStatistics, on_stats)
    assert load(served, "effort1") and switch(served, start=["effort1"])
    assert event.wait(2.0)
    stats = received[-1].controller[0]
    assert (stats.name, stats.type, stats.running) == ("effort1", "test/EffortTest", True)
    assert stats.mean_time.to_sec() > 0.0
    assert stats.max_time >= stats.mean_time
    assert received[-1].header.stamp.to_sec() > 0.0


def test_statistics_can_be_disabled_and_shutdown_withdraws_everything(served):
    served.ros.shutdown()
    assert served.graph.service_names() == []
    quiet = ControllerManagerRos(served.cm, served.root, statistics_period=0.0)
    assert served.graph.num_publishers("/controller_manager/statistics") == 0
    assert len(served.graph.service_names()) == 6
    quiet.shutdown()
    quiet.shutdown()
    assert served.graph.service_names() == []
