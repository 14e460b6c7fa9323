"""reload_controller_libraries and shutdown."""
from __future__ import annotations

import sys
import textwrap

import pytest

from rospy_control.controller_manager import Result

MODULE_V1 = '''
from rospy_control.controller_interface import Controller
from rospy_control.hardware_interface import JointStateInterface


class UserController(Controller):
    INTERFACE = JointStateInterface
    VERSION = 1

    def update(self, time, period):
        pass
'''


@pytest.fixture
def user_module(tmp_path, monkeypatch):
    name = f"user_ctrl_{abs(hash(str(tmp_path))) % 10**8}"
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(MODULE_V1))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    yield name, path
    sys.modules.pop(name, None)


def test_reload_refused_while_controllers_loaded_without_force_kill(env):
    env.load("e", "test/EffortTestController")
    result = env.cm.reload_controller_libraries(False)
    assert not result.ok
    assert result.message == ("Controller manager: Cannot reload controller libraries because there are "
                              "still 1 controllers running")
    assert env.cm.get_controller_names() == ["e"]


def test_reload_with_nothing_loaded_is_ok(env):
    assert env.cm.reload_controller_libraries(False).ok


def test_reload_force_kill_stops_and_unloads_everything(env):
    env.load("e", "test/EffortTestController")
    env.load("js", "test/StateController")
    assert env.switch(start=["e", "js"]).ok
    e = env.cm.get_controller_by_name("e")

    import threading
    out = []
    worker = threading.Thread(target=lambda: out.append(env.cm.reload_controller_libraries(True)))
    worker.start()
    while worker.is_alive():
        env.cycle()
        worker.join(0.001)
    assert out[0].ok, out[0].message
    assert e.hooks("stopping") == 1
    assert env.cm.get_controller_names() == []


def test_reload_picks_up_edited_python_controller(env, user_module):
    name, path = user_module
    env.configure("u", f"{name}:UserController")
    assert env.cm.load_controller("u").ok
    assert type(env.cm.get_controller_by_name("u")).VERSION == 1
    path.write_text(textwrap.dedent(MODULE_V1).replace("VERSION = 1", "VERSION = 2  # edited"))
    assert env.cm.reload_controller_libraries(True).ok       # nothing running: no switch needed
    assert env.cm.get_controller_names() == []
    assert env.cm.load_controller("u").ok
    assert type(env.cm.get_controller_by_name("u")).VERSION == 2


def test_reload_reports_a_broken_module(env, user_module):
    name, path = user_module
    env.configure("u", f"{name}:UserController")
    assert env.cm.load_controller("u").ok
    path.write_text("this is not python (\n")
    result = env.cm.reload_controller_libraries(True)
    assert not result.ok and name in result.message


def test_reload_clears_the_registry_cache(env):
    env.load("e", "test/EffortTestController")
    cleared = []
    env.cm.registry.clear_cache = lambda: cleared.append(True)
    assert env.cm.reload_controller_libraries(True).ok
    assert cleared == [True]


def test_shutdown_stops_running_and_closes_interfaces(env):
    env.load("p", "test/PublishingController")
    assert env.switch(start=["p"]).ok
    p = env.cm.get_controller_by_name("p")
    env.cm.shutdown()
    assert p.hooks("stopping") == 1
    assert env.cm.get_controller_names() == []
    assert env.graph.num_publishers("/out") == 0
    env.cm.shutdown()   # idempotent


def test_shutdown_cancels_a_pending_switch_and_its_caller_is_told(env):
    import threading
    env.load("e", "test/EffortTestController")
    env.cm.switch_wait_limit = None                # would wait forever without the cancellation
    out = []
    caller = threading.Thread(target=lambda: out.append(env.cm.switch_controller(["e"], [], 2)))
    caller.start()
    while not env.cm.is_switch_pending():
        caller.join(0.001)
    env.cm.shutdown()
    caller.join(2.0)
    assert not caller.is_alive()
    assert not out[0].ok and "shutting down" in out[0].message
    assert env.hw.count("do_switch") == 0


def test_result_is_truthy_only_when_ok():
    assert Result(True, "x") and not Result(False, "y")
    ok, message = Result(False, "why")
    assert (ok, message) == (False, "why")
