#!/usr/bin/env python3
"""The six controller_manager services from a client's view (ros_control's cm_test, in our words).

Runs against the dummy app in /svc (controller_manager.test): joints joint1..3 (+ wave_joint) in the
JointState, PositionJoint, VelocityJoint and EffortJoint interfaces; test controllers from
cm_test_controllers.py.  Every test starts from an empty manager (reload_controller_libraries with
force_kill).
"""
import threading
import time
import unittest

import rospy
import rosservice
from controller_manager_msgs.msg import ControllersStatistics
from controller_manager_msgs.srv import (
    ListControllers,
    ListControllerTypes,
    LoadController,
    ReloadControllerLibraries,
    SwitchController,
    SwitchControllerRequest,
    UnloadController,
)

NS = "/svc/controller_manager/"
STRICT = SwitchControllerRequest.STRICT
BEST_EFFORT = SwitchControllerRequest.BEST_EFFORT
EFFORT = "hardware_interface::EffortJointInterface"
VELOCITY = "hardware_interface::VelocityJointInterface"
STATE = "hardware_interface::JointStateInterface"

SERVICES = {
    "load_controller": LoadController,
    "unload_controller": UnloadController,
    "switch_controller": SwitchController,
    "list_controllers": ListControllers,
    "list_controller_types": ListControllerTypes,
    "reload_controller_libraries": ReloadControllerLibraries,
}


class ControllerManagerServicesTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rospy.init_node("test_controller_manager_services")
        for name in SERVICES:  # three managers and two test nodes start at once on a loaded host
            rospy.wait_for_service(NS + name, timeout=120.0)
        cls.load = rospy.ServiceProxy(NS + "load_controller", LoadController)
        cls.unload = rospy.ServiceProxy(NS + "unload_controller", UnloadController)
        cls.switch_srv = rospy.ServiceProxy(NS + "switch_controller", SwitchController)
        cls.list_srv = rospy.ServiceProxy(NS + "list_controllers", ListControllers)
        cls.types_srv = rospy.ServiceProxy(NS + "list_controller_types", ListControllerTypes)
        cls.reload = rospy.ServiceProxy(NS + "reload_controller_libraries", ReloadControllerLibraries)

    def setUp(self):
        self.assertTrue(self.reload(force_kill=True).ok)
        self.assertEqual(self.listed(), [])

    # -- helpers ---------------------------------------------------------------------------------
    def switch(self, start=(), stop=(), strictness=STRICT, start_asap=False, timeout=0.0):
        return self.switch_srv(start_controllers=list(start), stop_controllers=list(stop),
                               strictness=strictness, start_asap=start_asap, timeout=timeout).ok

    def listed(self):
        return [c.name for c in self.list_srv().controller]

    def states(self):
        return {c.name: c.state for c in self.list_srv().controller}

    def load_all(self, *names):
        for name in names:
            self.assertTrue(self.load(name).ok, name)

    # -- tests -----------------------------------------------------------------------------------
    def test_services_are_advertised_with_their_types(self):
        for name, srv_class in SERVICES.items():
            self.assertEqual(rosservice.get_service_type(NS + name), srv_class._type)

    def test_load_and_unload(self):
        self.assertTrue(self.load("effort1").ok)
        self.assertEqual(self.states(), {"effort1": "initialized"})
        self.assertFalse(self.load("effort1").ok, "the same name twice")
        self.assertFalse(self.load("not_configured").ok, "no <ns>/<name>/type parameter")
        self.assertFalse(self.load("bad_type").ok, "unknown controller type")
        self.assertFalse(self.load("bad_joint").ok, "unknown joint")
        self.assertEqual(self.listed(), ["effort1"])
        self.assertFalse(self.unload("not_loaded").ok)
        self.assertTrue(self.unload("effort1").ok)
        self.assertEqual(self.listed(), [])

    def test_list_controllers_reports_order_state_type_and_sorted_claims(self):
        self.load_all("vel_eff", "state", "effort1")
        self.assertTrue(self.switch(start=["state"]))
        controllers = self.list_srv().controller
        self.assertEqual([c.name for c in controllers], ["vel_eff", "state", "effort1"])
        self.assertEqual([c.state for c in controllers], ["initialized", "running", "initialized"])
        self.assertEqual(controllers[0].type, "cm_test_controllers:VelEffController")
        vel_eff = [(r.hardware_interface, list(r.resources)) for r in controllers[0].claimed_resources]
        self.assertEqual(vel_eff, [(VELOCITY, ["joint1", "joint2"]), (EFFORT, ["joint3"])])
        state = [(r.hardware_interface, list(r.resources)) for r in controllers[1].claimed_resources]
        self.assertEqual(state, [(STATE, [])])
        effort = [(r.hardware_interface, list(r.resources)) for r in controllers[2].claimed_resources]
        self.assertEqual(effort, [(EFFORT, ["joint1", "joint2"])])

    def test_start_stop_and_states(self):
        self.load_all("effort1", "velocity3")
        self.assertTrue(self.switch(start=["effort1", "velocity3"]))
        self.assertEqual(self.states(), {"effort1": "running", "velocity3": "running"})
        self.assertTrue(self.switch(stop=["effort1"]))
        self.assertEqual(self.states(), {"effort1": "stopped", "velocity3": "running"})
        self.assertTrue(self.switch(start=["effort1"], stop=["velocity3"]))
        self.assertEqual(self.states(), {"effort1": "running", "velocity3": "stopped"})

    def test_strict_fails_on_unknown_names_and_changes_nothing(self):
        self.load_all("effort1")
        self.assertFalse(self.switch(start=["effort1", "unknown"]))
        self.assertFalse(self.switch(stop=["unknown"]))
        self.assertEqual(self.states(), {"effort1": "initialized"})

    def test_strict_fails_on_stopping_a_stopped_or_starting_a_running_controller(self):
        self.load_all("effort1")
        self.assertFalse(self.switch(stop=["effort1"]))
        self.assertTrue(self.switch(start=["effort1"]))
        self.assertFalse(self.switch(start=["effort1"]))
        self.assertEqual(self.states(), {"effort1": "running"})

    def test_best_effort_ignores_what_strict_refuses(self):
        self.load_all("effort1", "velocity3")
        self.assertTrue(self.switch(start=["unknown"], stop=["unknown2"], strictness=BEST_EFFORT))
        self.assertEqual(self.states(), {"effort1": "initialized", "velocity3": "initialized"})
        self.assertTrue(self.switch(start=["effort1", "unknown"], stop=["velocity3"], strictness=BEST_EFFORT))
        self.assertEqual(self.states(), {"effort1": "running", "velocity3": "initialized"})
        self.assertTrue(self.switch(start=["effort1", "velocity3"], strictness=BEST_EFFORT))
        self.assertEqual(self.states(), {"effort1": "running", "velocity3": "running"})

    def test_strictness_zero_means_best_effort(self):
        self.load_all("effort1")
        self.assertTrue(self.switch(start=["effort1", "unknown"], strictness=0))
        self.assertEqual(self.states(), {"effort1": "running"})

    def test_same_name_in_start_and_stop_fails_in_both_modes(self):
        self.load_all("effort1", "velocity3")
        self.assertTrue(self.switch(start=["effort1"]))
        for strictness in (STRICT, BEST_EFFORT):
            self.assertFalse(self.switch(start=["effort1"], stop=["effort1"], strictness=strictness))
            self.assertFalse(self.switch(start=["velocity3"], stop=["velocity3"], strictness=strictness))
        self.assertEqual(self.states(), {"effort1": "running", "velocity3": "initialized"})

    def test_resource_conflicts_fail_in_both_modes(self):
        self.load_all("effort1", "effort2", "self_conflict")
        for strictness in (STRICT, BEST_EFFORT):
            self.assertFalse(self.switch(start=["effort1", "effort2"], strictness=strictness))
            self.assertFalse(self.switch(start=["self_conflict"], strictness=strictness))
        self.assertTrue(self.switch(start=["effort1"]))
        self.assertFalse(self.switch(start=["effort2"]), "joint2 is claimed by effort1")
        self.assertTrue(self.switch(start=["effort2"], stop=["effort1"]), "handing joint2 over is fine")
        self.assertEqual(self.states(),
                         {"effort1": "stopped", "effort2": "running", "self_conflict": "initialized"})

    def test_unloading_a_running_controller_fails_until_stopped(self):
        self.load_all("effort1")
        self.assertTrue(self.switch(start=["effort1"]))
        self.assertFalse(self.unload("effort1").ok)
        self.assertTrue(self.switch(stop=["effort1"]))
        self.assertTrue(self.unload("effort1").ok)

    def test_list_controller_types_parallel_arrays(self):
        response = self.types_srv()
        self.assertGreaterEqual(len(response.types), 3)
        self.assertEqual(len(response.types), len(response.base_classes))
        self.assertIn("joint_state_controller/JointStateController", response.types)
        self.assertEqual(set(response.base_classes), {"controller_interface::ControllerBase"})

    def test_reload_libraries_needs_force_kill_while_controllers_are_loaded(self):
        self.load_all("effort1", "state")
        self.assertTrue(self.switch(start=["effort1"]))
        self.assertFalse(self.reload(force_kill=False).ok)
        self.assertEqual(self.listed(), ["effort1", "state"])
        self.assertTrue(self.reload(force_kill=True).ok)
        self.assertEqual(self.listed(), [])
        self.assertTrue(self.reload(force_kill=False).ok, "nothing loaded: no force needed")

    def test_statistics_are_published(self):
        self.load_all("effort1", "state")
        self.assertTrue(self.switch(start=["effort1"]))
        latest = []
        arrived = threading.Condition()

        def callback(msg):
            with arrived:
                latest[:] = [msg]
                arrived.notify_all()

        def complete(msg):
            # both controllers listed, and effort1 has been timed since it started
            return ([c.name for c in msg.controller] == ["effort1", "state"]
                    and msg.controller[0].running and msg.controller[0].mean_time.to_sec() > 0.0)

        sub = rospy.Subscriber(NS + "statistics", ControllersStatistics, callback, queue_size=1)
        try:
            # published every 0.2 s; a loaded host may delay the subscription and the messages
            deadline = time.monotonic() + 30.0
            with arrived:
                while not (latest and complete(latest[0])) and time.monotonic() < deadline:
                    arrived.wait(0.5)
                msg = latest[0] if latest else None
        finally:
            sub.unregister()
        self.assertIsNotNone(msg, "no statistics message")
        self.assertEqual([c.name for c in msg.controller], ["effort1", "state"])
        effort1, state = msg.controller
        self.assertTrue(effort1.running)
        self.assertFalse(state.running)
        self.assertEqual(effort1.type, "cm_test_controllers:EffortTestController")
        self.assertGreater(effort1.mean_time.to_sec(), 0.0)
        self.assertGreaterEqual(effort1.max_time.to_sec(), effort1.mean_time.to_sec())
        self.assertGreater(msg.header.stamp.to_sec(), 0.0)


if __name__ == "__main__":
    import rostest

    rostest.rosrun("rospy_control", "test_controller_manager_services", ControllerManagerServicesTest)
