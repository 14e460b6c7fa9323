"""A controller that raises is aborted, kept on record (controller_failures) and can be started again;
the other controllers and the loop go on."""
from __future__ import annotations


def test_update_exception_is_recorded_and_the_controller_can_be_started_again(env):
    bad = env.load("bad", "test/RaisingController", raise_in="update")
    good = env.load("good", "test/EffortTestController", joints=["hiDOF_joint3"])
    assert env.cm.controller_failures() == []
    assert env.switch(start=["bad", "good"]).ok
    for _ in range(3):
        env.cycle()
    assert bad.is_aborted() and good.is_running() and good.hooks("update") == 3
    failures = env.cm.controller_failures()
    assert len(failures) == 1
    wall, name, hook, error = failures[0]
    assert (name, hook, error) == ("bad", "update", "RuntimeError: boom in update") and wall > 0
    # fixed: a switch starts it again; the record stays
    bad.raise_in = ""
    assert env.switch(start=["bad"]).ok
    env.cycle()
    assert bad.is_running() and good.is_running()
    assert len(env.cm.controller_failures()) == 1


def test_starting_exception_is_recorded_as_starting(env):
    env.load("bad", "test/RaisingController", raise_in="starting")
    assert env.switch(start=["bad"]).ok
    assert [(n, h) for _, n, h, _ in env.cm.controller_failures()] == [("bad", "starting")]
