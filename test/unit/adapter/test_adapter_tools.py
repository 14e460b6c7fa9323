"""The command-line tools' logic and output against an in-memory controller manager (no master).

The same scenarios run as real processes against rospy in test/integration/controller_manager.test.
"""
from __future__ import annotations

import threading
import time

import pytest
from adapter_testutil import EFFORT, STATE, VELOCITY

from rospy_control.adapter.tools import controller_group, controller_manager_cli
from rospy_control.adapter.tools.controller_manager_interface import (
    ControllerManagerUnavailable,
    call_with_timeout,
    format_controller_line,
    service_name,
)
from rospy_control.adapter.tools.spawner import Spawner, expand_controllers, parse_args
from rospy_control.adapter.tools.unspawner import Unspawner


def cli(served, *argv):
    lines = []
    status = controller_manager_cli.run(list(argv), client=served.client(), out=lines.append)
    return status, lines


def cm(served, *argv):
    status, lines = cli(served, *argv)
    assert status == 0
    return lines


def group(served, *argv):
    lines = []
    status = controller_group.run(list(argv), lambda: served.root.get_param("controller_groups", {}),
                                  client=served.client(), out=lines.append)
    return status, lines


# -- interface helpers ---------------------------------------------------------------------------
def test_service_names():
    assert service_name("", "load_controller") == "controller_manager/load_controller"
    assert service_name("/robot", "load_controller") == "/robot/controller_manager/load_controller"
    assert service_name("/robot/", "list_controllers") == "/robot/controller_manager/list_controllers"
    assert service_name("robot", "list_controllers") == "robot/controller_manager/list_controllers"


def test_list_line_joins_distinct_interfaces_in_claim_order(served, client):
    assert client.load_controller("vel_eff")
    (state,) = client.list_controllers()
    assert format_controller_line(state) == f"'vel_eff' - '{VELOCITY}+{EFFORT}' ( initialized )"


def test_call_with_timeout_returns_raises_and_gives_up():
    assert call_with_timeout(lambda: 42, 1.0, "answer") == 42
    with pytest.raises(ZeroDivisionError):
        call_with_timeout(lambda: 1 / 0, 1.0, "division")
    release = threading.Event()
    started = time.monotonic()
    try:
        with pytest.raises(ControllerManagerUnavailable, match="did not answer within"):
            call_with_timeout(lambda: release.wait(60.0), 0.1, "sleeper")
        # gave up long before the call would have returned (bound generous for a loaded host)
        assert time.monotonic() - started < 10.0
    finally:
        release.set()


# -- controller_manager CLI ------------------------------------------------------------------------
def test_cli_round_trip_prints_upstream_lines(served):
    assert cm(served, "list") == ["No controllers are loaded in mechanism control"]
    assert cm(served, "load", "effort1", "state") == ["Loaded 'effort1'", "Loaded 'state'"]
    assert cm(served, "lc") == [f"'effort1' - '{EFFORT}' ( initialized )",
                                f"'state' - '{STATE}' ( initialized )"]
    assert cm(served, "start", "effort1", "state") == ["Started ['effort1'] successfully",
                                                       "Started ['state'] successfully"]
    assert cm(served, "start", "effort1") == ["Error when starting ['effort1'] and stopping []"]
    assert cm(served, "stop", "effort1") == ["Stopped ['effort1'] successfully"]
    assert cm(served, "list") == [f"'effort1' - '{EFFORT}' ( stopped )", f"'state' - '{STATE}' ( running )"]
    assert cm(served, "kl", "state") == ["Stopped ['state'] successfully", "Unloaded 'state' successfully"]
    assert cm(served, "unload", "effort1", "nobody") == ["Unloaded 'effort1' successfully",
                                                         "Error when unloading 'nobody'"]
    assert cm(served, "sp", "effort2") == ["Loaded 'effort2'", "Started ['effort2'] successfully"]
    assert cm(served, "load", "bad_type") == ["Error when loading 'bad_type'"]
    assert cm(served, "lt") == ["test/EffortTest", "test/StateTest", "test/VelEff"]
    assert cm(served, "reload-libraries") == ["Restore: False", "Successfully reloaded libraries"]
    assert served.states() == {}


def test_cli_reload_restore(served):
    cm(served, "spawn", "effort1")
    cm(served, "load", "state")
    assert cm(served, "reload-libraries", "--restore") == [
        "Restore: True", "Successfully reloaded libraries", "Controllers restored to original state"]
    assert served.states() == {"effort1": "running", "state": "initialized"}


def test_cli_errors(served, capsys):
    assert cli(served, "frobnicate")[0] == 2
    served.transport.fail = True
    status, lines = cli(served, "list")
    assert (status, lines) == (1, [])
    assert "not available" in capsys.readouterr().err


# -- controller_group ------------------------------------------------------------------------------
def test_group_list_spawn_and_switch(served):
    status, lines = group(served, "list")
    assert status == 0
    assert lines == ["Number of groups: 3", "  group1", "      effort1", "      state", "  group2",
                     "      effort2", "      state", "  group3", "      effort1", "      effort2"]
    assert group(served, "spawn", "group1") == (0, [
        "Loaded 'effort1'", "Loaded 'state'", "Started ['effort1'] successfully",
        "Started ['state'] successfully"])
    assert group(served, "switch", "group2") == (0, [
        "Loaded 'effort2'", "Started ['effort2'] successfully", "Stopped ['effort1'] successfully"])
    assert served.states() == {"effort1": "stopped", "state": "running", "effort2": "running"}
    assert group(served, "switch", "group3") == (0, [
        "Error when starting ['effort1'] and stopping ['state']"])
    assert served.states() == {"effort1": "stopped", "state": "running", "effort2": "running"}


def test_group_switch_cancels_on_a_failed_load(served):
    served.root.set_param("controller_groups", {"broken": ["state", "bad_type"]})
    assert group(served, "switch", "broken") == (0, ["Loaded 'state'", "Error when loading 'bad_type'",
                                                     "Cancel group switching"])
    assert served.states() == {"state": "initialized"}


def test_group_unknown_or_empty(served):
    assert group(served, "spawn", "nope") == (1, [])
    served.root.set_param("controller_groups", {"empty": []})
    assert group(served, "switch", "empty") == (1, [])


def test_group_plan():
    groups = {"a": ["x", "y", "x"], "b": ["y", "z"], "c": ["w"]}
    assert controller_group.group_members(groups, "a") == (["x", "y"], ["z", "w"])
    loaded = {"y": "running", "z": "running", "w": "stopped"}
    assert controller_group.switch_plan(["x", "y"], ["z", "w"], loaded) == (["x"], ["x"], ["z"])


# -- spawner ---------------------------------------------------------------------------------------
def test_spawner_arguments():
    args = parse_args(["a", "b"])
    assert (args.controllers, args.stopped, args.timeout, args.no_timeout, args.namespace, args.wait_for,
            args.shutdown_timeout) == (["a", "b"], False, 30.0, False, None, None, None)
    args = parse_args(["--stopped", "--no-timeout", "--namespace", "/robot", "--wait-for", "/go",
                       "--shutdown-timeout", "3", "a"])
    assert (args.stopped, args.no_timeout, args.namespace, args.wait_for, args.shutdown_timeout) == (
        True, True, "/robot", "/go", 3.0)
    with pytest.raises(SystemExit):
        parse_args([])


def test_expand_controllers_uploads_yaml_files(tmp_path):
    config = tmp_path / "controllers.yaml"
    config.write_text("second:\n  type: test/StateTest\n"
                      "first:\n  type: test/EffortTest\n  joints: [joint3]\n")
    bad = tmp_path / "bad.yaml"
    bad.write_text("- just\n- a list\n")
    uploaded = {}
    names = expand_controllers(["plain", str(config), str(bad)], uploaded.__setitem__)
    assert names == ["plain", "second", "first"]
    assert uploaded == {"second": {"type": "test/StateTest"},
                        "first": {"type": "test/EffortTest", "joints": ["joint3"]}}


def test_spawner_loads_starts_and_tears_down_only_what_is_still_its_own(served, client):
    cm(served, "load", "effort3")
    spawner = Spawner(client)
    assert spawner.wait_for_manager(1.0)
    assert spawner.load(["effort1", "bad_type", "state"]) == ["effort1", "state"]
    assert spawner.start()
    assert served.states() == {"effort3": "initialized", "effort1": "running", "state": "running"}
    cm(served, "kill", "state")  # someone else took it down
    spawner.shutdown()
    assert served.states() == {"effort3": "initialized"}
    spawner.shutdown()  # once only


def test_spawner_stopped_controllers_are_unloaded_on_shutdown(served, client):
    spawner = Spawner(client)
    spawner.load(["effort1"])
    spawner.shutdown()
    assert served.states() == {}


def test_spawner_start_is_strict(served, client):
    spawner = Spawner(client)
    spawner.load(["effort1", "effort2"])  # both claim joint2
    assert spawner.start() is False
    assert served.states() == {"effort1": "initialized", "effort2": "initialized"}


def test_spawner_shutdown_without_manager_is_quick(served, client):
    spawner = Spawner(client)
    spawner.load(["effort1"])
    served.transport.fail = True
    started = time.monotonic()
    spawner.shutdown()
    assert time.monotonic() - started < Spawner.SHUTDOWN_BUDGET / 2, "no waiting for a manager that is gone"


def test_spawner_shutdown_is_bounded_when_the_manager_hangs(served, client, monkeypatch):
    spawner = Spawner(client)
    spawner.SHUTDOWN_BUDGET = 0.3
    spawner.load(["effort1"])
    release = threading.Event()
    monkeypatch.setattr(served.cm, "list_controllers", lambda: release.wait(60.0))
    started = time.monotonic()
    try:
        spawner.shutdown()
        assert time.monotonic() - started < 10.0, "the clean-up did not give up on a frozen manager"
    finally:
        release.set()


def test_spawner_gives_up_or_keeps_waiting_for_clock(served):
    served.transport.fail = True
    assert Spawner(served.client()).wait_for_manager(0.1) is False
    polls = []

    def sim_time_waiting():
        polls.append(1)
        if len(polls) == 3:
            served.transport.fail = False
        return True

    assert Spawner(served.client(), sim_time_waiting=sim_time_waiting).wait_for_manager(0.1) is True
    assert len(polls) == 3


def test_spawner_controller_loaded_after_shutdown_is_not_left_behind(served, client):
    spawner = Spawner(client)
    spawner.shutdown()  # killed before anything was loaded
    spawner.load(["effort1"])
    assert served.states() == {}


class BlockingCalls:
    """Holds the transport's calls to one service until released (a request in flight)."""

    def __init__(self, served, monkeypatch, service):
        self.entered = threading.Event()
        self.release = threading.Event()
        real = served.transport.call

        def call(name, srv_class, request):
            if name.endswith(service):
                self.entered.set()
                self.release.wait(60.0)
            return real(name, srv_class, request)

        monkeypatch.setattr(served.transport, "call", call)


def test_spawner_shutdown_during_a_load_waits_for_it_and_takes_it_down(served, client, monkeypatch):
    # roslaunch's SIGINT (or rosnode kill) may arrive while a load is in flight
    blocked = BlockingCalls(served, monkeypatch, "load_controller")
    spawner = Spawner(client)
    loader = threading.Thread(target=spawner.load, args=(["effort1", "state"],))
    loader.start()
    assert blocked.entered.wait(30.0)
    stopper = threading.Thread(target=spawner.shutdown)
    stopper.start()
    stopper.join(0.3)
    assert stopper.is_alive(), "the clean-up did not wait for the load in flight"
    blocked.release.set()
    stopper.join(30.0)
    loader.join(30.0)
    assert not stopper.is_alive() and not loader.is_alive()
    assert spawner.loaded == ["effort1"], "nothing is loaded once the clean-up has begun"
    assert served.states() == {}


def test_spawner_shutdown_during_the_start_waits_for_it_and_takes_it_down(served, client, monkeypatch):
    spawner = Spawner(client)
    spawner.load(["effort1", "state"])
    blocked = BlockingCalls(served, monkeypatch, "switch_controller")
    starter = threading.Thread(target=spawner.start)
    starter.start()
    assert blocked.entered.wait(30.0)
    stopper = threading.Thread(target=spawner.shutdown)
    stopper.start()
    blocked.release.set()  # the start goes through, then the clean-up stops and unloads
    starter.join(30.0)
    stopper.join(30.0)
    assert served.states() == {}


def test_spawner_shutdown_gives_up_on_an_unanswered_load_then_it_is_taken_down(
        served, client, monkeypatch):
    blocked = BlockingCalls(served, monkeypatch, "load_controller")
    spawner = Spawner(client)
    spawner.SHUTDOWN_BUDGET = 0.4
    loader = threading.Thread(target=spawner.load, args=(["effort1"],))
    loader.start()
    assert blocked.entered.wait(30.0)
    started = time.monotonic()
    spawner.shutdown()  # bounded although the load does not answer
    assert time.monotonic() - started < 10.0
    blocked.release.set()  # the answer comes late: the loader takes the controller down itself
    loader.join(30.0)
    assert not loader.is_alive()
    assert served.states() == {}


# -- unspawner -------------------------------------------------------------------------------------
def test_unspawner_stops_then_restarts(served, client):
    cm(served, "spawn", "effort1", "state")
    unspawner = Unspawner(client, ["effort1", "nobody"])
    assert unspawner.check() == ["effort1"]
    assert served.states() == {"effort1": "stopped", "state": "running"}
    assert unspawner.check() == []
    unspawner.shutdown()
    assert served.states() == {"effort1": "running", "state": "running"}
    assert unspawner.check() == [], "no more stopping after shutdown"


def test_unspawner_run_returns_after_shutdown(served, client):
    import threading

    cm(served, "spawn", "effort1")
    unspawner = Unspawner(client, ["effort1"])
    unspawner.PERIOD = 0.05
    thread = threading.Thread(target=unspawner.run, args=(lambda: False,))
    thread.start()
    deadline = time.monotonic() + 30.0
    while served.states()["effort1"] != "stopped" and time.monotonic() < deadline:
        time.sleep(0.01)
    unspawner.shutdown()
    thread.join(30.0)
    assert not thread.is_alive()
    assert served.states() == {"effort1": "running"}
