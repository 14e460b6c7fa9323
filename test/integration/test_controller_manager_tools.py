#!/usr/bin/env python3
"""The command-line tools and the Python API against a running controller manager.

ros_control's controller_manager_scripts / controller_manager_interface tests in our words, run
against the dummy app in /tools (controller_manager.test), plus the spawner cases upstream gets wrong:
tearing down only its own controllers that are still loaded, and never hanging when the manager is
gone (the dummy app in /doomed is killed for that).

The tools run as real processes (``scripts/...`` with this interpreter) in namespace /tools, and
their standard output is compared line for line with upstream's.
"""
import os
import signal
import subprocess
import sys
import tempfile
import time
import unittest

import rosgraph
import rospy
from controller_manager_msgs.srv import ListControllers
from std_msgs.msg import Bool

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPTS = os.path.normpath(os.path.join(HERE, "..", "..", "scripts"))
NS = "/tools"

EFFORT = "hardware_interface::EffortJointInterface"
STATE = "hardware_interface::JointStateInterface"


def env_for(namespace):
    env = dict(os.environ)
    env["ROS_NAMESPACE"] = namespace
    return env


#: Seconds a tool process may take to run to completion.  A tool is a Python process that imports
#: rospy and talks to the master: ~1 s on an idle machine, 10 s and more on a loaded one.
TOOL_TIMEOUT = 90.0
#: Seconds to wait for a tool's effect (a spawner starting up and loading, ...): a condition is
#: polled, so a generous value costs nothing when things go well.
EFFECT_TIMEOUT = 60.0
#: Seconds a killed spawner/unspawner may take to exit: its clean-up budget (10 s) plus rospy's
#: shutdown and the process exit, on a loaded host.  roslaunch escalates to SIGTERM after 15 s.
EXIT_TIMEOUT = 30.0


def run_tool(tool, *args, namespace=NS, timeout=TOOL_TIMEOUT):
    """Run scripts/<tool> to completion; returns (exit status, stdout)."""
    proc = subprocess.run([sys.executable, os.path.join(SCRIPTS, tool)] + list(args), env=env_for(namespace),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          universal_newlines=True)
    if proc.stderr.strip():
        sys.stderr.write(f"[{tool} {' '.join(args)}] stderr:\n{proc.stderr}\n")
    return proc.returncode, proc.stdout


def start_tool(tool, *args, namespace=NS):
    return subprocess.Popen([sys.executable, os.path.join(SCRIPTS, tool)] + list(args),
                            env=env_for(namespace))


def cm(*args):
    status, out = run_tool("controller_manager", *args)
    assert status == 0, (args, status, out)
    return out


def cg(*args):
    status, out = run_tool("controller_group", *args)
    assert status == 0, (args, status, out)
    return out


def line(name, iface, state):
    return f"'{name}' - '{iface}' ( {state} )\n"


def wait_until(predicate, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def advertised(service):
    """True while the master lists ``service``."""
    try:
        rosgraph.Master(rospy.get_name()).lookupService(service)
        return True
    except rosgraph.MasterError:
        return False


def rosnode_kill(node):
    subprocess.run(["rosnode", "kill", node], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                   timeout=TOOL_TIMEOUT, check=True)


class ControllerManagerToolsTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rospy.init_node("test_controller_manager_tools")
        for ns in (NS, "/doomed"):  # three managers and two test nodes start at once
            rospy.wait_for_service(ns + "/controller_manager/list_controllers", timeout=120.0)
            rospy.wait_for_service(ns + "/controller_manager/switch_controller", timeout=120.0)

    def setUp(self):
        self.assertEqual(cm("reload-libraries"), "Restore: False\nSuccessfully reloaded libraries\n")

    def listed(self, ns=NS):
        proxy = rospy.ServiceProxy(ns + "/controller_manager/list_controllers", ListControllers)
        return {c.name: c.state for c in proxy().controller}

    def wait_listed(self, expected, ns=NS, timeout=EFFECT_TIMEOUT):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            current = self.listed(ns)
            if current == expected:
                return
            time.sleep(0.1)
        self.assertEqual(self.listed(ns), expected)

    def wait_exit(self, proc, timeout):
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            self.fail(f"{proc.args} did not exit within {timeout} s")

    # -- the upstream scripts scenario ---------------------------------------------------------------
    def test_scripts_round_trip(self):
        self.assertIn("joint_state_controller/JointStateController", cm("list-types").split())
        self.assertEqual(cm("list"), "No controllers are loaded in mechanism control\n")

        c1_running = line("my_controller1", EFFORT, "running")
        c1_stopped = line("my_controller1", EFFORT, "stopped")
        c2_initialized = line("my_controller2", EFFORT, "initialized")
        c2_running = line("my_controller2", EFFORT, "running")
        c2_stopped = line("my_controller2", EFFORT, "stopped")

        spawner = start_tool("spawner", "my_controller1", "__name:=myspawner")
        self.wait_listed({"my_controller1": "running"})
        self.assertEqual(cm("list"), c1_running)

        self.assertEqual(cm("load", "my_controller2"), "Loaded 'my_controller2'\n")
        self.assertEqual(cm("list"), c1_running + c2_initialized)
        self.assertEqual(cm("stop", "my_controller1"), "Stopped ['my_controller1'] successfully\n")
        self.assertEqual(cm("list"), c1_stopped + c2_initialized)
        self.assertEqual(cm("start", "my_controller2"), "Started ['my_controller2'] successfully\n")
        self.assertEqual(cm("list"), c1_stopped + c2_running)
        self.assertEqual(cm("start", "my_controller1"),
                         "Error when starting ['my_controller1'] and stopping []\n", "joint2 conflict")
        self.assertEqual(cm("stop", "my_controller2"), "Stopped ['my_controller2'] successfully\n")
        self.assertEqual(cm("start", "my_controller1"), "Started ['my_controller1'] successfully\n")
        self.assertEqual(cm("list"), c1_running + c2_stopped)

        unspawner = start_tool("unspawner", "my_controller1", "__name:=myunspawner")
        self.wait_listed({"my_controller1": "stopped", "my_controller2": "stopped"})
        rosnode_kill(NS + "/myunspawner")
        self.assertEqual(self.wait_exit(unspawner, EXIT_TIMEOUT), 0)
        self.assertEqual(cm("list"), c1_running + c2_stopped)

        rosnode_kill(NS + "/myspawner")
        self.assertEqual(self.wait_exit(spawner, EXIT_TIMEOUT), 0)
        self.assertEqual(cm("list"), c2_stopped)

        self.assertEqual(cm("spawn", "my_controller1"),
                         "Loaded 'my_controller1'\nStarted ['my_controller1'] successfully\n")
        self.assertEqual(cm("list"), c2_stopped + c1_running)
        self.assertEqual(cm("kill", "my_controller1"),
                         "Stopped ['my_controller1'] successfully\nUnloaded 'my_controller1' successfully\n")
        self.assertEqual(cm("list"), c2_stopped)
        self.assertEqual(cm("unload", "my_controller2"), "Unloaded 'my_controller2' successfully\n")
        self.assertEqual(cm("list"), "No controllers are loaded in mechanism control\n")
        self.assertEqual(cm("load", "no_such_controller"), "Error when loading 'no_such_controller'\n")
        self.assertEqual(cm("unload", "no_such_controller"), "Error when unloading 'no_such_controller'\n")
        self.assertEqual(cm("reload-libraries"), "Restore: False\nSuccessfully reloaded libraries\n")

    def test_reload_libraries_restore(self):
        cm("spawn", "my_controller1")
        cm("load", "my_controller3")
        self.assertEqual(cm("reload-libraries", "--restore"),
                         "Restore: True\nSuccessfully reloaded libraries\n"
                         "Controllers restored to original state\n")
        self.assertEqual(self.listed(), {"my_controller1": "running", "my_controller3": "initialized"})

    def test_controller_group(self):
        self.assertEqual(cg("list"), "Number of groups: 3\n"
                                     "  group1\n      my_controller1\n      my_controller3\n"
                                     "  group2\n      my_controller2\n      my_controller3\n"
                                     "  group3\n      my_controller1\n      my_controller2\n")
        self.assertEqual(cg("spawn", "group1"),
                         "Loaded 'my_controller1'\nLoaded 'my_controller3'\n"
                         "Started ['my_controller1'] successfully\nStarted ['my_controller3'] successfully\n")
        self.assertEqual(cg("switch", "group2"),
                         "Loaded 'my_controller2'\nStarted ['my_controller2'] successfully\n"
                         "Stopped ['my_controller1'] successfully\n")
        self.assertEqual(self.listed(), {"my_controller1": "stopped", "my_controller2": "running",
                                         "my_controller3": "running"})
        self.assertEqual(cg("switch", "group3"),
                         "Error when starting ['my_controller1'] and stopping ['my_controller3']\n")
        self.assertEqual(self.listed(), {"my_controller1": "stopped", "my_controller2": "running",
                                         "my_controller3": "running"})
        status, out = run_tool("controller_group", "switch", "no_such_group")
        self.assertEqual((status, out), (1, ""))

    # -- spawner -----------------------------------------------------------------------------------
    def test_spawner_tears_down_only_its_own_controllers_that_are_still_loaded(self):
        cm("load", "my_controller4")
        spawner = start_tool("spawner", "my_controller1", "my_controller3", "__name:=spawner_a")
        self.wait_listed({"my_controller4": "initialized", "my_controller1": "running",
                          "my_controller3": "running"})
        # someone else takes my_controller3 down and starts my_controller4
        cm("kill", "my_controller3")
        cm("start", "my_controller4")
        rosnode_kill(NS + "/spawner_a")
        self.assertEqual(self.wait_exit(spawner, EXIT_TIMEOUT), 0)
        self.assertEqual(self.listed(), {"my_controller4": "running"})

    def test_spawner_stopped_and_yaml_file(self):
        with tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False) as stream:
            stream.write("yaml_controller:\n  type: cm_test_controllers:EffortTestController\n"
                         "  joints: [joint3]\n")
            path = stream.name
        try:
            spawner = start_tool("spawner", "--stopped", path, "my_controller3", "__name:=spawner_b")
            self.wait_listed({"yaml_controller": "initialized", "my_controller3": "initialized"})
            self.assertEqual(rospy.get_param(NS + "/yaml_controller/joints"), ["joint3"])
            spawner.send_signal(signal.SIGINT)  # what roslaunch does
            self.assertEqual(self.wait_exit(spawner, EXIT_TIMEOUT), 0)
            self.assertEqual(self.listed(), {})
        finally:
            os.unlink(path)

    def test_spawner_waits_for_its_topic(self):
        go = rospy.Publisher(NS + "/go", Bool, queue_size=1, latch=True)
        go.publish(Bool(data=False))
        spawner = start_tool("spawner", "--wait-for", "go", "my_controller3", "__name:=spawner_e")
        # It subscribes once the manager's services are there, and then hears the latched False.
        self.assertTrue(wait_until(lambda: go.get_num_connections() > 0, EFFECT_TIMEOUT),
                        "the spawner never subscribed to its --wait-for topic")
        time.sleep(1.0)  # time to (wrongly) act on the False
        self.assertEqual(self.listed(), {}, "nothing before the topic says True")
        go.publish(Bool(data=True))
        self.wait_listed({"my_controller3": "running"})
        rosnode_kill(NS + "/spawner_e")
        self.assertEqual(self.wait_exit(spawner, EXIT_TIMEOUT), 0)
        self.assertEqual(self.listed(), {})
        go.unregister()

    def test_spawner_without_manager_gives_up_after_its_timeout(self):
        started = time.monotonic()
        status, _ = run_tool("spawner", "--timeout", "1", "my_controller1", "__name:=spawner_c",
                             namespace="/nowhere")
        self.assertEqual(status, 1)
        # 1 s plus the process start-up (seconds on a loaded host); the default --timeout is 30 s
        self.assertLess(time.monotonic() - started, 25.0, "--timeout ignored")

    def test_spawner_never_hangs_when_the_manager_is_gone(self):
        spawner = start_tool("spawner", "my_controller1", "__name:=spawner_d", namespace="/doomed")
        self.wait_listed({"my_controller1": "running"}, ns="/doomed")
        rosnode_kill("/doomed/cm")
        self.assertTrue(wait_until(lambda: not advertised("/doomed/controller_manager/list_controllers"),
                                   EFFECT_TIMEOUT), "the manager in /doomed did not go away")
        started = time.monotonic()
        rosnode_kill("/doomed/spawner_d")
        self.assertEqual(self.wait_exit(spawner, EXIT_TIMEOUT), 0)
        # its clean-up budget (10 s; a manager that is gone takes no time) plus rosnode's start-up
        # and the process exit on a loaded host
        self.assertLess(time.monotonic() - started, 20.0)

    # -- Python API (controller_manager_interface_test in our words) ---------------------------------
    def test_python_api(self):
        from rospy_control.adapter.tools import controller_manager_interface as cmi

        self.assertIn("joint_state_controller/JointStateController", cmi.list_controller_types(NS))
        self.assertFalse(cmi.load_controller("no_such_controller", NS))
        self.assertFalse(cmi.start_controller("my_controller1", NS), "not loaded")
        self.assertTrue(cmi.load_controller("my_controller1", NS))
        self.assertFalse(cmi.stop_controller("my_controller1", NS), "not running")
        self.assertTrue(cmi.start_controllers(["my_controller1"], NS))
        self.assertEqual([(c.name, c.state) for c in cmi.list_controllers(NS)],
                         [("my_controller1", "running")])
        self.assertFalse(cmi.unload_controller("my_controller1", NS), "still running")
        self.assertFalse(cmi.reload_libraries(False, namespace=NS), "loaded, no force_kill")
        self.assertTrue(cmi.load_controller("my_controller4", NS))
        self.assertTrue(cmi.start_stop_controllers(["my_controller4"], ["my_controller1"], NS))
        self.assertTrue(cmi.stop_controllers(["my_controller4"], NS))
        self.assertTrue(cmi.unload_controller("my_controller1", NS))
        self.assertTrue(cmi.reload_libraries(True, namespace=NS))
        self.assertEqual(cmi.list_controllers(NS), [])
        started = time.monotonic()
        with self.assertRaises(cmi.ControllerManagerUnavailable):
            cmi.list_controllers("/nowhere", timeout=0.5)
        self.assertLess(time.monotonic() - started, 5.0)


if __name__ == "__main__":
    import rostest

    rostest.rosrun("rospy_control", "test_controller_manager_tools", ControllerManagerToolsTest)
