"""In-memory action server: actionlib ServerGoalHandle semantics and the test client."""
from __future__ import annotations

import logging

import pytest
from move_base_msgs.msg import MoveBaseAction, MoveBaseFeedback, MoveBaseGoal, MoveBaseResult

from rospy_control.controller_interface import (
    NodeHandleError,
)
from rospy_control.testing import GoalStatus, InMemoryActionClient, InMemoryNodeHandle


class Server:
    """A server that records callbacks and can auto-accept."""

    def __init__(self, nh, accept=True):
        self.goals, self.cancels = [], []
        self.accept = accept
        self.server = nh.action_server("move", MoveBaseAction, self.on_goal, self.on_cancel)

    def on_goal(self, gh):
        self.goals.append(gh)
        if self.accept:
            gh.set_accepted("accepted")

    def on_cancel(self, gh):
        self.cancels.append(gh)
        gh.set_canceled(text="canceled by request")


@pytest.fixture
def nh():
    return InMemoryNodeHandle("/robot")


@pytest.fixture
def server(nh):
    s = Server(nh)
    s.server.start()
    return s


@pytest.fixture
def client(nh):
    return InMemoryActionClient(nh, "move")


def test_goal_accept_feedback_succeed(server, client, nh):
    nh.graph.set_time(3.0)
    goal = client.send_goal(MoveBaseGoal(), goal_id="g1")
    gh = server.goals[0]
    assert gh.get_goal_id().id == "g1" and gh.get_goal_id().stamp.to_sec() == 3.0
    assert isinstance(gh.get_goal(), MoveBaseGoal)
    assert goal.get_goal_status() == GoalStatus.ACTIVE
    status = gh.get_goal_status()
    assert (status.status, status.text, status.goal_id.id) == (GoalStatus.ACTIVE, "accepted", "g1")
    gh.publish_feedback(MoveBaseFeedback())
    assert len(goal.feedback) == 1
    assert goal.get_result() is None and not goal.is_done()
    gh.set_succeeded(MoveBaseResult(), "done")
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED and goal.get_goal_status_text() == "done"
    assert isinstance(goal.get_result(), MoveBaseResult) and goal.is_done()


def test_default_result_is_an_empty_result_instance(server, client):
    goal = client.send_goal(MoveBaseGoal())
    server.goals[0].set_aborted(text="tolerance violated")
    assert isinstance(goal.get_result(), MoveBaseResult)
    assert goal.get_goal_status() == GoalStatus.ABORTED


def test_reject_pending_goal(nh, client):
    s = Server(nh, accept=False)
    s.server.start()
    goal = client.send_goal(MoveBaseGoal())
    assert goal.get_goal_status() == GoalStatus.PENDING
    s.goals[0].set_rejected(MoveBaseResult(), "invalid joints")
    assert goal.get_goal_status() == GoalStatus.REJECTED
    assert goal.get_goal_status_text() == "invalid joints"


@pytest.mark.parametrize("accept,expected", [(True, GoalStatus.PREEMPTED), (False, GoalStatus.RECALLED)])
def test_cancel_calls_cancel_cb_and_ends_preempted_or_recalled(nh, client, accept, expected):
    s = Server(nh, accept=accept)
    s.server.start()
    goal = client.send_goal(MoveBaseGoal())
    goal.cancel()
    assert s.cancels == s.goals
    assert goal.get_goal_status() == expected


def test_cancel_requested_state_before_the_server_reacts(nh, client):
    s = Server(nh)
    s.on_cancel = lambda gh: None
    s.server.cancel_cb = s.on_cancel
    s.server.start()
    goal = client.send_goal(MoveBaseGoal())
    goal.cancel()
    assert goal.get_goal_status() == GoalStatus.PREEMPTING
    # a goal being preempted can still succeed
    s.goals[0].set_succeeded()
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED


def test_cancel_all_and_cancel_before_stamp(server, client, nh):
    nh.graph.set_time(1.0)
    first = client.send_goal(MoveBaseGoal())
    nh.graph.set_time(2.0)
    second = client.send_goal(MoveBaseGoal())
    client.cancel_before(1.5)
    assert first.get_goal_status() == GoalStatus.PREEMPTED
    assert second.get_goal_status() == GoalStatus.ACTIVE
    client.cancel_all()
    assert second.get_goal_status() == GoalStatus.PREEMPTED


def test_cancel_of_a_finished_goal_does_nothing(server, client):
    goal = client.send_goal(MoveBaseGoal())
    server.goals[0].set_succeeded()
    goal.cancel()
    assert server.cancels == [] and goal.get_goal_status() == GoalStatus.SUCCEEDED


def test_illegal_transition_logs_and_keeps_state(server, client, caplog):
    goal = client.send_goal(MoveBaseGoal())
    gh = server.goals[0]
    gh.set_succeeded()
    with caplog.at_level(logging.ERROR):
        gh.set_aborted()
        gh.set_accepted()
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED
    assert "To transition to an aborted state" in caplog.text


def test_goal_handles_compare_by_goal_id(server, client):
    client.send_goal(MoveBaseGoal(), goal_id="same")
    client.send_goal(MoveBaseGoal(), goal_id="other")
    a, b = server.goals
    assert a != b and a == a and len({a, b}) == 2


def test_server_must_be_started_and_goal_type_checked(nh, client):
    s = Server(nh)
    assert not client.server_ready()
    with pytest.raises(NodeHandleError, match="not started"):
        client.send_goal(MoveBaseGoal())
    s.server.start()
    with pytest.raises(NodeHandleError, match="expects goals"):
        client.send_goal("not a goal")
    s.server.shutdown()
    with pytest.raises(NodeHandleError, match="no action server"):
        client.send_goal(MoveBaseGoal())


def test_goal_callback_exception_is_logged(nh, client, caplog):
    def bad(gh):
        raise RuntimeError("bad goal cb")
    nh.action_server("move", MoveBaseAction, bad).start()
    goal = client.send_goal(MoveBaseGoal())
    assert goal.get_goal_status() == GoalStatus.PENDING
    assert "Exception in goal callback" in caplog.text
