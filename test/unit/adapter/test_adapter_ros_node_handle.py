"""RosNodeHandle without a master: name resolution, what reaches rospy, wrappers' bookkeeping.

rospy's calls are replaced by recorders (monkeypatch), so these tests check what the facade hands
to rospy/actionlib; test/integration/controller_manager_node_handle.test runs it against a master.
"""
from __future__ import annotations

import pytest
from std_msgs.msg import Float64, String

from rospy_control.adapter import ros_node_handle as rnh
from rospy_control.adapter.ros_node_handle import RosNodeHandle, RosServerGoalHandle
from rospy_control.controller_interface import NodeHandleError, ServerGoalHandle


class FakeRospy:
    """Records the rospy calls RosNodeHandle makes."""

    def __init__(self):
        self.params = {}
        self.created = []

    # params
    def get_param(self, key):
        return self.params[key]

    def has_param(self, key):
        return key in self.params

    def set_param(self, key, value):
        self.params[key] = value

    def delete_param(self, key):
        del self.params[key]


class FakeEndpoint:
    def __init__(self, kind, *args, **kwargs):
        self.kind, self.args, self.kwargs = kind, args, kwargs
        self.closed = 0
        self.published = []

    def publish(self, msg):
        self.published.append(msg)

    def get_num_connections(self):
        return 3

    def unregister(self):
        self.closed += 1

    def shutdown(self, reason=""):
        self.closed += 1


@pytest.fixture
def fake(monkeypatch):
    fake = FakeRospy()
    for name in ("get_param", "has_param", "set_param", "delete_param"):
        monkeypatch.setattr(rnh.rospy, name, getattr(fake, name))

    def factory(kind):
        def make(*args, **kwargs):
            endpoint = FakeEndpoint(kind, *args, **kwargs)
            fake.created.append(endpoint)
            return endpoint
        return make

    monkeypatch.setattr(rnh.rospy, "Publisher", factory("pub"))
    monkeypatch.setattr(rnh.rospy, "Subscriber", factory("sub"))
    monkeypatch.setattr(rnh.rospy, "Service", factory("srv"))
    monkeypatch.setattr(rnh.rospy, "get_time", lambda: 42.5)
    return fake


def test_names_resolve_like_rospy():
    nh = RosNodeHandle("/robot", "/robot/driver")
    assert nh.resolve_name("joint_states") == "/robot/joint_states"
    assert nh.resolve_name("/abs//name/") == "/abs/name"
    assert nh.resolve_name("~rate") == "/robot/driver/rate"
    assert nh.child("arm_controller").resolve_name("command") == "/robot/arm_controller/command"
    assert nh.child("arm_controller").resolve_name("~x") == "/robot/driver/x"


def test_params_reach_rospy_resolved(fake):
    nh = RosNodeHandle("/robot", "/robot/driver").child("ctrl")
    nh.set_param("gains", {"p": 1.0})
    assert fake.params == {"/robot/ctrl/gains": {"p": 1.0}}
    assert nh.get_param("gains") == {"p": 1.0}
    assert nh.has_param("gains") and not nh.has_param("other")
    assert nh.get_param("other", 7) == 7
    with pytest.raises(KeyError):
        nh.get_param("other")
    nh.delete_param("gains")
    assert fake.params == {}


def test_now_is_rospy_time(fake):
    assert RosNodeHandle("/", "/n").now() == 42.5


def test_publisher_checks_type_and_latch(fake):
    nh = RosNodeHandle("/robot", "/robot/driver")
    pub = nh.advertise("status", String, queue_size=3, latch=True)
    endpoint = fake.created[-1]
    assert endpoint.args == ("/robot/status", String)
    assert endpoint.kwargs == {"queue_size": 3, "latch": True}
    assert pub.name == "/robot/status"
    pub.publish(String(data="x"))
    assert endpoint.published == [String(data="x")]
    with pytest.raises(NodeHandleError, match="std_msgs/String"):
        pub.publish(Float64(data=1.0))
    assert pub.get_num_connections() == 3
    pub.unregister()
    pub.unregister()
    assert endpoint.closed == 1
    with pytest.raises(NodeHandleError):
        pub.publish(String(data="late"))


def test_subscriber_stops_delivering_after_unregister_and_survives_callback_errors(fake):
    got = []

    def callback(msg):
        got.append(msg)
        if msg.data == "bad":
            raise ValueError("callback bug")

    nh = RosNodeHandle("/", "/n")
    sub = nh.subscribe("cmd", String, callback, queue_size=1)
    endpoint = fake.created[-1]
    assert endpoint.args[:2] == ("/cmd", String)
    deliver = endpoint.args[2]
    deliver(String(data="a"))
    deliver(String(data="bad"))  # logged, not raised into rospy
    sub.unregister()
    deliver(String(data="after"))
    assert [m.data for m in got] == ["a", "bad"]
    assert endpoint.closed == 1


def test_service_and_shutdown_close_everything_newest_first(fake):
    nh = RosNodeHandle("/robot", "/robot/driver")
    child = nh.child("controller_manager")
    child.advertise_service("load_controller", object, lambda req: None)
    child.advertise("statistics", String)
    assert [e.kind for e in fake.created] == ["srv", "pub"]
    assert fake.created[0].args[0] == "/robot/controller_manager/load_controller"
    nh.shutdown()
    assert [e.closed for e in fake.created] == [1, 1]
    with pytest.raises(NodeHandleError):
        nh.advertise("again", String)


def test_duplicate_service_becomes_node_handle_error(monkeypatch):
    import rospy

    def refuse(*args, **kwargs):
        raise rospy.ServiceException("service [/x] already registered")

    monkeypatch.setattr(rnh.rospy, "Service", refuse)
    with pytest.raises(NodeHandleError, match="already registered"):
        RosNodeHandle("/", "/n").advertise_service("x", object, lambda r: None)


class FakeActionlibHandle:
    def __init__(self, goal_id):
        self.goal_id = goal_id
        self.calls = []

    def get_goal(self):
        return "goal"

    def get_goal_id(self):
        class GoalID:
            id = self.goal_id
        return GoalID()

    def get_goal_status(self):
        return "status"

    def __getattr__(self, name):
        if name.startswith("set_") or name == "publish_feedback":
            return lambda *args: self.calls.append((name,) + args)
        raise AttributeError(name)


def test_goal_handle_forwards_and_compares_by_goal_id():
    raw = FakeActionlibHandle("g1")
    gh = RosServerGoalHandle(raw)
    assert isinstance(gh, ServerGoalHandle)
    assert (gh.get_goal(), gh.get_goal_id().id, gh.get_goal_status()) == ("goal", "g1", "status")
    gh.set_accepted("ok")
    gh.publish_feedback("fb")
    gh.set_succeeded("res", "done")
    gh.set_aborted(None, "no")
    gh.set_canceled()
    gh.set_rejected("r", "t")
    assert raw.calls == [("set_accepted", "ok"), ("publish_feedback", "fb"), ("set_succeeded", "res", "done"),
                         ("set_aborted", None, "no"), ("set_canceled", None, ""), ("set_rejected", "r", "t")]
    assert gh == RosServerGoalHandle(FakeActionlibHandle("g1"))
    assert gh != RosServerGoalHandle(FakeActionlibHandle("g2"))
    assert len({gh, RosServerGoalHandle(FakeActionlibHandle("g1"))}) == 1


def test_action_server_is_created_stopped_and_wraps_goal_handles(monkeypatch):
    created = {}

    class FakeActionServer:
        def __init__(self, ns, spec, goal_cb, cancel_cb, auto_start=True):
            created.update(ns=ns, spec=spec, goal_cb=goal_cb, cancel_cb=cancel_cb, auto_start=auto_start)
            self.started = 0
            self.stopped = 0

        def start(self):
            self.started += 1

        def stop(self):
            self.stopped += 1

    monkeypatch.setattr(rnh.actionlib, "ActionServer", FakeActionServer)
    goals, cancels = [], []
    nh = RosNodeHandle("/robot", "/robot/driver")
    server = nh.child("arm").action_server("follow_joint_trajectory", object, goals.append, cancels.append)
    assert created["ns"] == "/robot/arm/follow_joint_trajectory"
    assert created["auto_start"] is False
    created["goal_cb"](FakeActionlibHandle("g"))
    created["cancel_cb"](FakeActionlibHandle("g"))
    assert isinstance(goals[0], RosServerGoalHandle) and goals[0] == cancels[0]
    server.start()
    server.start()
    assert server.actionlib_server.started == 1
    nh.shutdown()
    nh.shutdown()
    assert server.actionlib_server.stopped == 1


def test_never_started_action_server_shuts_down_without_touching_actionlib(monkeypatch):
    class Unstartable:
        def __init__(self, *args, **kwargs):
            pass

        def stop(self):
            raise AssertionError("actionlib's stop() fails before start()")

    monkeypatch.setattr(rnh.actionlib, "ActionServer", Unstartable)
    server = RosNodeHandle("/", "/n").action_server("act", object, lambda gh: None)
    server.shutdown()
    with pytest.raises(NodeHandleError):
        server.start()
