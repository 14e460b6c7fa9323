"""The NodeHandle facade on the in-memory graph: names, params, topics, services, lifetime."""
from __future__ import annotations

import pytest
from std_msgs.msg import Float64, String

from rospy_control.controller_interface import NodeHandleError
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle


@pytest.fixture
def graph():
    return InMemoryGraph(node_name="/robot/driver")


@pytest.fixture
def nh(graph):
    return InMemoryNodeHandle("/robot", graph)


# -- names ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("name,expected", [
    ("joint_states", "/robot/joint_states"),
    ("arm/command", "/robot/arm/command"),
    ("/abs/topic", "/abs/topic"),
    ("~private", "/robot/driver/private"),
    ("~/private", "/robot/driver/private"),
    ("", "/robot"),
    ("a//b/", "/robot/a/b"),
])
def test_resolve_name_like_rospy(nh, name, expected):
    assert nh.resolve_name(name) == expected


def test_root_namespace_and_children(graph):
    root = InMemoryNodeHandle("/", graph)
    assert root.namespace == "/"
    assert root.resolve_name("x") == "/x"
    child = root.child("ctrl")
    assert child.namespace == "/ctrl"
    assert child.child("pid").namespace == "/ctrl/pid"
    assert child.child("").namespace == "/ctrl"
    assert child.child("/else").namespace == "/else"
    assert child.child("~").namespace == "/robot/driver"
    assert InMemoryNodeHandle("relative", graph).namespace == "/relative"


# -- parameters ----------------------------------------------------------------------------------
def test_params_set_get_has_delete(nh, graph):
    nh.set_param("ctrl", {"type": "x/Y", "joints": ["a", "b"], "pid": {"p": 1.0}})
    ctrl = nh.child("ctrl")
    assert ctrl.get_param("type") == "x/Y"
    assert ctrl.get_param("pid/p") == 1.0
    assert ctrl.get_param("pid") == {"p": 1.0}
    assert ctrl.has_param("pid") and ctrl.has_param("pid/p") and not ctrl.has_param("pid/i")
    assert graph.get_param("/robot/ctrl/joints") == ["a", "b"]
    ctrl.delete_param("pid/p")
    assert not ctrl.has_param("pid/p")
    with pytest.raises(KeyError):
        ctrl.delete_param("nope")


def test_get_param_missing_raises_keyerror_or_returns_default(nh):
    with pytest.raises(KeyError, match="/robot/missing"):
        nh.get_param("missing")
    assert nh.get_param("missing", 3) == 3
    assert nh.get_param("missing", None) is None


def test_get_param_returns_copies(nh):
    nh.set_param("list", [1, 2])
    value = nh.get_param("list")
    value.append(3)
    assert nh.get_param("list") == [1, 2]


def test_set_dict_replaces_subtree(nh):
    nh.set_param("ns", {"a": 1, "b": 2})
    nh.set_param("ns", {"c": 3})
    assert nh.get_param("ns") == {"c": 3}
    nh.set_param("ns/d/e", 4)
    assert nh.get_param("ns") == {"c": 3, "d": {"e": 4}}


def test_private_and_absolute_params(nh, graph):
    nh.set_param("~rate", 50)
    nh.set_param("/robot_description", "<robot/>")
    assert graph.get_param("/robot/driver/rate") == 50
    assert nh.child("deep/er").get_param("/robot_description") == "<robot/>"


def test_search_param_walks_up(graph):
    root = InMemoryNodeHandle("/", graph)
    root.set_param("robot_description", "<robot name='top'/>")
    deep = root.child("a/b/c")
    assert deep.search_param("robot_description") == "/robot_description"
    root.set_param("a/robot_description", "<robot name='a'/>")
    assert deep.search_param("robot_description") == "/a/robot_description"
    assert deep.search_param("nothing") is None
    assert deep.search_param("/robot_description") == "/robot_description"


# -- topics --------------------------------------------------------------------------------------
def test_publish_delivers_synchronously_copies_to_every_subscriber(nh):
    got_a, got_b = [], []
    nh.subscribe("chatter", String, got_a.append)
    nh.child("other").subscribe("/robot/chatter", String, got_b.append)
    pub = nh.advertise("chatter", String, 1)
    msg = String(data="hello")
    pub.publish(msg)
    assert [m.data for m in got_a] == ["hello"] and [m.data for m in got_b] == ["hello"]
    assert got_a[0] is not msg and got_a[0] is not got_b[0]
    assert pub.get_num_connections() == 2


def test_latched_publisher_serves_late_subscribers(nh):
    pub = nh.advertise("latched", String, 1, latch=True)
    pub.publish(String(data="first"))
    pub.publish(String(data="last"))
    got = []
    nh.subscribe("latched", String, got.append)
    assert [m.data for m in got] == ["last"]
    plain = nh.advertise("plain", String, 1)
    plain.publish(String(data="gone"))
    late = []
    nh.subscribe("plain", String, late.append)
    assert late == []


def test_wrong_message_type_is_refused(nh):
    pub = nh.advertise("x", String, 1)
    with pytest.raises(NodeHandleError, match="expects"):
        pub.publish(Float64(data=1.0))
    with pytest.raises(NodeHandleError, match="already carries"):
        nh.subscribe("x", Float64, lambda m: None)


def test_callback_exception_is_logged_not_raised(nh, caplog):
    def bad(msg):
        raise ValueError("bad callback")
    nh.subscribe("x", String, bad)
    nh.advertise("x", String, 1).publish(String(data="a"))
    assert "Error in subscriber callback of '/robot/x'" in caplog.text


def test_unregister_stops_delivery_and_publishing(nh, graph):
    got = []
    sub = nh.subscribe("x", String, got.append)
    pub = nh.advertise("x", String, 1)
    sub.unregister()
    sub.unregister()
    pub.publish(String(data="a"))
    assert got == []
    pub.unregister()
    with pytest.raises(NodeHandleError):
        pub.publish(String(data="b"))
    assert graph.topic_names() == []


# -- services ------------------------------------------------------------------------------------
def test_service_call_and_errors(nh, graph):
    srv = nh.advertise_service("double", object, lambda req: req * 2)
    assert nh.call_service("double", 21) == 42
    assert graph.service_names() == ["/robot/double"]
    with pytest.raises(NodeHandleError, match="already registered"):
        nh.advertise_service("double", object, lambda req: req)
    nh.advertise_service("broken", object, lambda req: 1 / 0)
    with pytest.raises(NodeHandleError, match="ZeroDivisionError"):
        nh.call_service("broken", 1)
    nh.advertise_service("none", object, lambda req: None)
    with pytest.raises(NodeHandleError, match="returned None"):
        nh.call_service("none", 1)
    srv.shutdown()
    with pytest.raises(NodeHandleError, match="not available"):
        nh.call_service("double", 1)


# -- time and lifetime ---------------------------------------------------------------------------
def test_manual_clock_and_custom_clock(graph, nh):
    assert nh.now() == 0.0
    graph.set_time(5.0)
    assert graph.advance(0.5) == 5.5 and nh.now() == 5.5
    ticking = InMemoryGraph(clock=lambda: 42.0)
    assert InMemoryNodeHandle("/", ticking).now() == 42.0


def test_ok_turns_false_on_graph_shutdown(graph, nh):
    assert nh.ok()
    graph.shutdown()
    assert not nh.ok()


def test_shutdown_closes_everything_created_through_handle_and_children(nh, graph):
    ctrl = nh.child("ctrl")
    ctrl.advertise("state", String, 1)
    ctrl.child("deeper").subscribe("cmd", String, lambda m: None)
    ctrl.advertise_service("srv", object, lambda r: r)
    ctrl.action_server("act", object, lambda gh: None)
    other = nh.child("other")
    other.advertise("keep", String, 1)
    ctrl.shutdown()
    assert graph.topic_names() == ["/robot/other/keep"]
    assert graph.service_names() == [] and graph.action_server_names() == []
    with pytest.raises(NodeHandleError, match="has been shut down"):
        ctrl.advertise("again", String, 1)
    assert ctrl.get_param("nothing", 1) == 1       # params still work
    ctrl.shutdown()                                # idempotent
    nh.shutdown()
    assert graph.topic_names() == []


def test_closed_handles_are_forgotten_by_ancestors(nh):
    for _ in range(3):
        ctrl = nh.child("ctrl")
        ctrl.advertise("state", String, 1)
        ctrl.child("pid").subscribe("cmd", String, lambda m: None)
        ctrl.shutdown()
    keep = nh.child("other").advertise("keep", String, 1)
    assert nh._handles == [keep]


def test_track_requires_a_closer(nh):
    with pytest.raises(TypeError):
        nh.track(object())
