"""switch_controller: filtering, strictness, conflicts, prepare_switch veto (cm_test / hwi_switch_test)."""
from __future__ import annotations

import logging
import time

import pytest

from rospy_control.controller_manager import BEST_EFFORT, STRICT


@pytest.fixture
def loaded(env):
    env.load("e12", "test/EffortTestController")                        # effort j1, j2
    env.load("e3", "test/EffortTestController", joints=["hiDOF_joint3"])
    env.load("v12", "test/VelocityTestController")                      # velocity j1, j2
    env.load("js", "test/StateController")
    return env


def states(env):
    return {c.name: c.state for c in env.cm.list_controllers()}


def test_strict_start_stop_and_stop_start(loaded):
    env = loaded
    assert env.switch(start=["e12"]).ok
    assert states(env)["e12"] == "running"
    assert env.switch(stop=["e12"]).ok
    assert states(env)["e12"] == "stopped"
    assert env.switch(start=["e12"]).ok
    assert env.switch(start=["v12"], stop=["e12"]).ok
    assert states(env)["e12"] == "stopped" and states(env)["v12"] == "running"


def test_stop_and_start_happen_in_the_same_cycle(loaded):
    env = loaded
    assert env.switch(start=["e12"]).ok
    e12, v12 = env.cm.get_controller_by_name("e12"), env.cm.get_controller_by_name("v12")
    assert env.switch(start=["v12"], stop=["e12"]).ok
    stop_time = [t for h, t in e12.log if h == "stopping"][0]
    start_time = [t for h, t in v12.log if h == "starting"][0]
    assert stop_time == start_time
    # the newly started controller gets its first update in the next cycle
    assert v12.hooks("update") == 0
    env.cycle()
    assert v12.hooks("update") == 1


@pytest.mark.parametrize("start,stop", [(["ghost"], []), ([], ["ghost"]), (["e12", "ghost"], [])])
def test_strict_unknown_name_fails_without_arming(loaded, start, stop):
    env = loaded
    result = env.switch(start=start, stop=stop, strictness=STRICT)
    assert not result.ok
    assert "because no controller with this name exists" in result.message
    assert env.hw.count("do_switch") == 0 and env.hw.count("check_for_conflict") == 0
    assert states(env)["e12"] == "initialized"


def test_best_effort_only_unknown_names_is_a_no_op_success(loaded):
    env = loaded
    assert env.switch(start=["ghost"], stop=["phantom"], strictness=BEST_EFFORT).ok
    assert set(states(env).values()) == {"initialized"}


def test_best_effort_partial_success(loaded):
    env = loaded
    assert env.switch(start=["ghost", "e12"], stop=["phantom"], strictness=BEST_EFFORT).ok
    assert states(env)["e12"] == "running"


def test_strictness_zero_warns_and_means_best_effort(loaded, caplog):
    env = loaded
    with caplog.at_level(logging.WARNING):
        assert env.switch(start=["ghost", "e12"], strictness=0).ok
    assert "Defaulting to ::BEST_EFFORT" in caplog.text
    assert states(env)["e12"] == "running"


def test_stop_not_running_strict_fails_best_effort_ok(loaded):
    env = loaded
    result = env.switch(stop=["e12"], strictness=STRICT)
    assert not result.ok and result.message == "Could not stop controller 'e12' since it is not running"
    assert env.switch(stop=["e12"], strictness=BEST_EFFORT).ok
    assert env.hw.calls[-4:] == [("check_for_conflict", []), ("prepare_switch", [], []),
                                 ("do_switch", [], []), ("switch_result", None)]


def test_double_start_strict_fails_best_effort_ok_without_restart(loaded):
    env = loaded
    assert env.switch(start=["e12"]).ok
    ctrl = env.cm.get_controller_by_name("e12")
    result = env.switch(start=["e12"], strictness=STRICT)
    assert not result.ok and result.message == "Controller 'e12' is already running"
    assert env.switch(start=["e12"], strictness=BEST_EFFORT).ok
    # deliberate: no second starting() for an already running controller (no BEST_EFFORT restart quirk)
    assert ctrl.hooks("starting") == 1 and ctrl.is_running()


@pytest.mark.parametrize("strictness", [STRICT, BEST_EFFORT])
@pytest.mark.parametrize("running", [True, False])
def test_same_name_in_both_lists_fails_in_both_modes(loaded, strictness, running):
    env = loaded
    if running:
        assert env.switch(start=["e12"]).ok
    calls_before = len(env.hw.calls)
    result = env.switch(start=["e12"], stop=["e12"], strictness=strictness)
    assert not result.ok
    assert "conflicting switching command" in result.message
    assert len(env.hw.calls) == calls_before
    assert states(env)["e12"] == ("running" if running else "initialized")


def test_two_controllers_claiming_the_same_joints_conflict(loaded):
    env = loaded
    result = env.switch(start=["e12", "v12"])
    assert not result.ok and result.message == "Could not switch controllers, due to resource conflict"
    assert states(env)["e12"] == "initialized" and states(env)["v12"] == "initialized"
    assert env.switch(start=["e12"]).ok
    assert not env.switch(start=["v12"]).ok          # conflicts with the running one
    assert env.switch(start=["e3", "js"]).ok          # disjoint joints and a non-claiming controller


def test_self_conflict_fails(env):
    env.load("self", "test/SelfConflictController")
    assert not env.switch(start=["self"]).ok


def test_conflict_check_sees_the_set_running_after_the_switch(loaded):
    env = loaded
    assert env.switch(start=["e12"]).ok
    env.hw.calls.clear()
    assert env.switch(start=["v12", "e3"], stop=["e12"]).ok
    assert env.hw.calls[0] == ("check_for_conflict", ["e3", "v12"])
    assert env.hw.calls[1] == ("prepare_switch", ["e3", "v12"], ["e12"])   # load order


def test_prepare_switch_veto_fails_both_modes(loaded):
    env = loaded
    env.hw.prepare_ok = False
    for strictness in (STRICT, BEST_EFFORT):
        result = env.switch(start=["e12"], strictness=strictness)
        assert not result.ok
        assert "hardware interface combination for the requested controllers is unfeasible" in result.message
    assert env.hw.count("do_switch") == 0
    assert states(env)["e12"] == "initialized"


def test_hardware_lists_hold_only_real_starts_and_stops(loaded):
    env = loaded
    assert env.switch(start=["e12"]).ok
    env.hw.calls.clear()
    assert env.switch(start=["e12", "e3"], stop=["js", "v12"], strictness=BEST_EFFORT).ok
    assert ("prepare_switch", ["e3"], []) in env.hw.calls
    assert ("do_switch", ["e3"], []) in env.hw.calls


def test_switch_without_a_running_loop_fails_after_its_timeout(loaded):
    env = loaded
    t0 = time.monotonic()
    result = env.cm.switch_controller(["e12"], [], STRICT, False, 0.1)   # nobody calls update()
    elapsed = time.monotonic() - t0
    assert not result.ok
    assert "never picked the switch up" in result.message
    assert "Is the controller manager's control loop running?" in result.message
    assert 0.3 - 0.05 <= elapsed < 2.0           # timeout 0.1 + wall margin 0.2
    assert not env.cm.is_switch_pending()
    assert states(env)["e12"] == "initialized"
    # the loop starting later does not apply the abandoned switch
    env.cycle()
    assert states(env)["e12"] == "initialized"
    assert env.hw.count("do_switch") == 0


def test_switch_without_loop_and_zero_timeout_uses_the_wait_limit(loaded):
    env = loaded
    t0 = time.monotonic()
    result = env.cm.switch_controller(["e12"], [], STRICT, False, 0.0)
    assert not result.ok and "within 0.500 s" in result.message
    assert time.monotonic() - t0 < 2.0


def test_switch_gives_up_when_the_node_shuts_down(loaded):
    env = loaded
    env.cm.switch_wait_limit = None
    env.graph.shutdown()
    result = env.cm.switch_controller(["e12"], [], STRICT, False, 0.0)
    assert not result.ok and "shutting down" in result.message


def test_services_are_serialized_while_a_switch_is_pending(loaded):
    env = loaded
    listed = []

    def driver(e):
        import threading
        lister = threading.Thread(target=lambda: listed.append(e.cm.list_controllers()))
        lister.start()
        lister.join(0.05)
        assert lister.is_alive(), "list_controllers must wait for the pending switch"
        e.cycle()
        lister.join(2.0)

    assert env.switch(start=["e12"], driver=driver).ok
    assert {c.name: c.state for c in listed[0]}["e12"] == "running"
