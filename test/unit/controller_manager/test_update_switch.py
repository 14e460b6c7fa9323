"""The real-time side: update(), the switch applied at the end of a cycle (hwi_update_test)."""
from __future__ import annotations

import time

import pytest

from rospy_control.controller_manager import BEST_EFFORT, STRICT
from rospy_control.hardware_interface import SwitchState

DONE, ONGOING, ERROR = SwitchState.DONE, SwitchState.ONGOING, SwitchState.ERROR


@pytest.fixture
def two(env):
    env.a = env.load("a", "test/EffortTestController")                       # j1, j2
    env.b = env.load("b", "test/EffortTestController", joints=["hiDOF_joint3"])
    return env


def cycles(n):
    def driver(env):
        for _ in range(n):
            env.cycle()
    return driver


def test_no_switch_no_do_switch(two):
    env = two
    for _ in range(5):
        env.cycle()
    assert env.hw.count("do_switch") == 0 and env.hw.count("switch_result") == 0


def test_empty_switch_calls_each_hardware_step_once(two):
    env = two
    assert env.switch(start=[], stop=[], strictness=STRICT).ok
    assert [c[0] for c in env.hw.calls] == ["check_for_conflict", "prepare_switch", "do_switch",
                                            "switch_result"]


def test_switch_applies_at_the_end_of_update(two):
    env = two

    def driver(e):
        e.cycle()
        # a was started at the end of that cycle: starting() yes, update() not yet
        assert e.a.log == [("starting", e.t)]

    assert env.switch(start=["a"], driver=driver).ok
    env.cycle()
    assert env.a.log[-1] == ("update", env.t)


def test_only_running_controllers_are_updated_in_load_order(two):
    env = two
    order = []
    env.a.update = lambda t, p: order.append("a")
    env.b.update = lambda t, p: order.append("b")
    env.cycle()
    assert order == []
    assert env.switch(start=["b", "a"]).ok
    env.cycle()
    assert order == ["a", "b"]


def test_a_controller_that_overrides_update_request_gets_that_call(env):
    gated = env.load("gated", "test/GatedController", joints=["hiDOF_joint3"])
    assert env.switch(start=["gated"]).ok
    env.cycle()
    assert gated.log[-2:] == [("update_request", env.t), ("update", env.t)]


def test_switch_result_error_aborts_all_starts_and_still_returns_ok(two):
    env = two
    env.hw.results = [ERROR]
    assert env.switch(start=["a", "b"]).ok
    assert env.a.is_aborted() and env.b.is_aborted()
    assert env.a.log == [("aborting", env.t)] and env.b.log == [("aborting", env.t)]
    env.cycle()
    assert env.a.hooks("update") == 0 and env.b.hooks("update") == 0


def test_ongoing_held_until_ros_timeout_then_aborted(two):
    env = two
    env.hw.results = [ONGOING]
    env.graph.set_time(env.t)

    def driver(e):
        while e.cm.is_switch_pending():
            e.cycle(0.1)

    assert env.switch(start=["a", "b"], timeout=1.0, driver=driver).ok
    assert env.a.is_aborted() and env.b.is_aborted()
    assert env.a.hooks("waiting") >= 1 and env.a.hooks("aborting") == 1
    assert env.a.hooks("starting") == 0
    # aborted when the ROS time since arming exceeded 1 s, not before
    abort_time = [t for h, t in env.a.log if h == "aborting"][0]
    last_wait = [t for h, t in env.a.log if h == "waiting"][-1]
    assert abort_time > 1.0 >= last_wait - 1e-9


def test_ten_ongoing_then_done_gives_exactly_ten_waiting_calls(two):
    env = two
    env.hw.results = [ONGOING] * 10 + [DONE]

    def driver(e):
        for i in range(10):
            e.cycle()
            assert e.a.is_waiting() and e.b.is_waiting()
        e.cycle()

    assert env.switch(start=["a", "b"], driver=driver).ok
    for c in (env.a, env.b):
        assert c.hooks("waiting") == 10 and c.hooks("starting") == 1 and c.is_running()
    assert env.hw.count("do_switch") == 1
    assert env.hw.count("switch_result") == 11


def test_stops_happen_in_the_first_cycle_even_while_starts_wait(two):
    env = two
    assert env.switch(start=["a"]).ok
    env.hw.results = [ONGOING, ONGOING, DONE]

    def driver(e):
        e.cycle()
        assert e.a.is_stopped() and e.b.is_waiting()
        e.cycle()
        e.cycle()

    assert env.switch(start=["b"], stop=["a"], driver=driver).ok
    assert env.a.hooks("stopping") == 1 and env.b.is_running()


def test_waiting_controller_is_not_updated(two):
    env = two
    env.hw.results = [ONGOING, ONGOING, ONGOING, DONE]
    assert env.switch(start=["a"]).ok
    assert env.a.hooks("update") == 0
    env.cycle()
    assert env.a.hooks("update") == 1


def per_controller(script):
    """switch_result(info) answers from a dict name -> list of results (last repeats)."""
    def results(info):
        assert info is not None, "start_asap must query per controller"
        seq = script[info.name]
        return seq.pop(0) if len(seq) > 1 else seq[0]
    return results


def test_start_asap_one_starts_other_waits_then_starts(two):
    env = two
    env.hw.results = per_controller({"a": [DONE], "b": [ONGOING, ONGOING, ONGOING, DONE]})

    def driver(e):
        e.cycle()
        assert e.a.is_running() and e.b.is_waiting()
        for _ in range(3):
            e.cycle()

    assert env.switch(start=["a", "b"], start_asap=True, driver=driver).ok
    assert env.a.hooks("starting") == 1 and env.a.hooks("waiting") == 0
    assert env.b.hooks("waiting") == 3 and env.b.hooks("starting") == 1
    # a was updated while b was still waiting
    assert env.a.hooks("update") == 3


def test_start_asap_one_starts_other_aborts(two):
    env = two
    env.hw.results = per_controller({"a": [DONE], "b": [ONGOING, ERROR]})
    assert env.switch(start=["a", "b"], start_asap=True).ok
    assert env.a.is_running() and env.b.is_aborted()
    assert env.b.hooks("waiting") == 1 and env.b.hooks("aborting") == 1


def test_start_asap_one_starts_other_times_out(two):
    env = two
    env.hw.results = per_controller({"a": [DONE], "b": [ONGOING]})

    def driver(e):
        while e.cm.is_switch_pending():
            e.cycle(0.25)

    assert env.switch(start=["a", "b"], start_asap=True, timeout=1.0, driver=driver).ok
    assert env.a.is_running() and env.b.is_aborted()
    assert env.b.hooks("waiting") == 4 and env.b.hooks("aborting") == 1


def test_start_asap_aborted_controller_is_not_queried_again(two):
    env = two
    env.hw.results = per_controller({"a": [ERROR, DONE], "b": [ONGOING, ONGOING, DONE]})
    assert env.switch(start=["a", "b"], start_asap=True).ok
    assert env.a.is_aborted() and env.a.hooks("starting") == 0
    assert [c for c in env.hw.calls if c == ("switch_result", "a")] == [("switch_result", "a")]


def test_aborted_controller_can_be_started_again(two):
    env = two
    env.hw.results = [ERROR]
    assert env.switch(start=["a"]).ok
    env.hw.results = [DONE]
    assert env.switch(start=["a"]).ok
    assert env.a.is_running()


def test_wall_guard_aborts_waiting_controllers_when_hardware_stays_ongoing(two):
    env = two
    env.hw.results = [ONGOING]

    def driver(e):
        runner_deadline = time.monotonic() + 3.0
        while e.cm.is_switch_pending() and time.monotonic() < runner_deadline:
            e.cycle(0.0)          # frozen ROS clock: the ROS timeout can never fire
            time.sleep(0.002)

    result = env.switch(start=["a"], timeout=0.1, driver=driver)
    assert not result.ok
    assert "still ongoing" in result.message and "'a'" in result.message
    assert env.a.is_aborted()
    env.cycle()
    assert env.a.is_aborted() and env.a.hooks("update") == 0


def test_reset_controllers_restarts_running_ones(two):
    env = two
    assert env.switch(start=["a"]).ok
    env.t += 0.01
    env.cm.update(env.t, 0.01, reset_controllers=True)
    assert [h for h, _ in env.a.log][-3:] == ["stopping", "starting", "update"]
    assert env.b.log == []


def test_update_exception_aborts_that_controller_only(env):
    bad = env.load("bad", "test/RaisingController", raise_in="update")
    good = env.load("good", "test/EffortTestController", joints=["hiDOF_joint3"])
    assert env.switch(start=["bad", "good"]).ok
    env.cycle()
    env.cycle()
    assert bad.is_aborted() and bad.hooks("update") == 1 and bad.hooks("aborting") == 1
    assert good.is_running() and good.hooks("update") == 2


def test_starting_exception_aborts_the_controller(env):
    bad = env.load("bad", "test/RaisingController", raise_in="starting")
    assert env.switch(start=["bad"]).ok
    assert bad.is_aborted()


def test_statistics_mean_max_variance_overruns(two, monkeypatch):
    env = two
    assert env.switch(start=["a"]).ok
    # the controller manager times updates with perf_counter: a simulated one, so that a host that
    # deschedules this process mid-update cannot turn a 3 ms update into an overrun
    import types

    from rospy_control.controller_manager import controller_manager as cm_module
    clock = [100.0]
    fake_time = types.SimpleNamespace(perf_counter=lambda: clock[0], monotonic=time.monotonic)
    monkeypatch.setattr(cm_module, "_time", fake_time)
    durations = iter([0.001, 0.003, 0.002, 0.02])

    def slow_update(t, p):
        clock[0] += next(durations)

    env.a.update = slow_update
    for _ in range(4):
        env.cycle(0.01)
    stats = {s.name: s for s in env.cm.get_statistics()}
    a = stats["a"]
    assert a.running and a.type == "test/EffortTestController"
    assert a.max_time == pytest.approx(0.02)
    assert a.mean_time == pytest.approx(0.0065)
    assert a.variance_time > 0.0
    assert a.num_control_loop_overruns == 1
    assert a.time_last_control_loop_overrun == pytest.approx(env.t)
    assert a.timestamp == pytest.approx(env.t)
    b = stats["b"]
    assert not b.running and b.max_time == 0.0 and b.num_control_loop_overruns == 0
    env.cm.reset_statistics(["a"])
    assert env.cm.get_statistics()[0].max_time == 0.0


def test_best_effort_reload_like_stop_all(two):
    env = two
    assert env.switch(start=["a", "b"]).ok
    assert env.switch(stop=["a", "b", "ghost"], strictness=BEST_EFFORT).ok
    assert env.a.is_stopped() and env.b.is_stopped()
