#!/usr/bin/env python3
"""joint_state_controller and forward command controllers through a running controller manager.

Against the dummy app in /motion (controller_manager_controllers.test): the fake robot's joint1..3
start at 0.1, 0.2, 0.3 and move only when a command interface drives them; ``wave_joint``'s state is
``sin(t), cos(t), -sin(t)`` of the time the loop passed to ``read()``, so the published values can be
compared exactly with the hardware's at the stamped time.
"""
import math
import os
import sys
import threading
import time
import unittest

import rospy
from controller_manager_msgs.srv import (
    ListControllers,
    LoadController,
    ReloadControllerLibraries,
    SwitchController,
    SwitchControllerRequest,
)
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from driver_test_utils import median_rate  # noqa: E402

NS = "/motion"
CM = NS + "/controller_manager/"
RATE = 50.0


class JointStates:
    """Collects /motion/joint_states with their wall-clock arrival times."""

    def __init__(self):
        self.lock = threading.Lock()
        self.messages = []
        self.sub = rospy.Subscriber(NS + "/joint_states", JointState, self.callback, queue_size=100)

    def callback(self, msg):
        with self.lock:
            self.messages.append((time.monotonic(), msg))

    def clear(self):
        with self.lock:
            self.messages = []

    def snapshot(self):
        with self.lock:
            return list(self.messages)

    def latest(self, timeout=30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                if self.messages:
                    return self.messages[-1][1]
            time.sleep(0.01)
        raise AssertionError("no joint_states received")

    def position(self, joint):
        msg = self.latest()
        return msg.position[msg.name.index(joint)]


class ControllersTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rospy.init_node("test_controller_manager_controllers")
        for name in ("load_controller", "switch_controller", "list_controllers",
                     "reload_controller_libraries"):
            rospy.wait_for_service(CM + name, timeout=120.0)
        cls.load = rospy.ServiceProxy(CM + "load_controller", LoadController)
        cls.switch_srv = rospy.ServiceProxy(CM + "switch_controller", SwitchController)
        cls.list_srv = rospy.ServiceProxy(CM + "list_controllers", ListControllers)
        cls.reload = rospy.ServiceProxy(CM + "reload_controller_libraries", ReloadControllerLibraries)
        cls.states = JointStates()

    def setUp(self):
        self.assertTrue(self.reload(force_kill=True).ok)
        self.spawn("joint_state_controller")
        self.states.clear()
        self.states.latest()

    def spawn(self, *names):
        for name in names:
            self.assertTrue(self.load(name).ok, name)
        self.assertTrue(self.switch(start=names))

    def switch(self, start=(), stop=()):
        return self.switch_srv(start_controllers=list(start), stop_controllers=list(stop),
                               strictness=SwitchControllerRequest.STRICT, start_asap=False, timeout=0.0).ok

    def wait_for(self, predicate, timeout=30.0, what="condition"):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(0.02)
        self.fail(f"timed out waiting for {what}")

    # -- joint_state_controller -------------------------------------------------------------------
    def test_1_joint_state_controller_publishes_the_hardware_at_its_rate(self):
        self.states.clear()
        time.sleep(6.0)  # the measurement window
        received = self.states.snapshot()
        self.assertGreater(len(received), 100)
        stamps = [m.header.stamp.to_sec() for _, m in received]
        self.assertTrue(all(b > a for a, b in zip(stamps, stamps[1:])), "stamps strictly increase")
        # per-second rates, median: a host stall empties one bin and the catch-up fills the next
        stamp_rate = median_rate(stamps)
        arrival_rate = median_rate([arrival for arrival, _ in received])
        rospy.loginfo("joint_states: %.2f Hz by stamps, %.2f Hz by arrival (median of 1 s bins; "
                      "%.2f Hz over the window); configured %.1f Hz", stamp_rate, arrival_rate,
                      (len(stamps) - 1) / (stamps[-1] - stamps[0]), RATE)
        self.assertAlmostEqual(stamp_rate, RATE, delta=0.05 * RATE)
        self.assertAlmostEqual(arrival_rate, RATE, delta=0.05 * RATE)

        for _, msg in received:
            self.assertEqual(list(msg.name), ["joint1", "joint2", "joint3", "wave_joint"])
            self.assertEqual(msg.header.frame_id, "")
            t = msg.header.stamp.to_sec()
            wave = msg.name.index("wave_joint")
            self.assertAlmostEqual(msg.position[wave], math.sin(t), places=6)
            self.assertAlmostEqual(msg.velocity[wave], math.cos(t), places=6)
            self.assertAlmostEqual(msg.effort[wave], -math.sin(t), places=6)
        first = received[0][1]
        self.assertEqual(list(first.position[:3]), [0.1, 0.2, 0.3])
        self.assertEqual(list(first.velocity[:3]), [0.0, 0.0, 0.0])

    # -- forward command controllers -----------------------------------------------------------------
    def test_2_position_group_controller_moves_the_joints(self):
        self.spawn("pos_group")
        self.assertAlmostEqual(self.states.position("joint1"), 0.1, msg="a started position controller holds")
        pub = rospy.Publisher(NS + "/pos_group/command", Float64MultiArray, queue_size=1)
        target = [0.5, -0.25]

        def reached():
            pub.publish(Float64MultiArray(data=target))
            return (abs(self.states.position("joint1") - 0.5) < 1e-9
                    and abs(self.states.position("joint2") + 0.25) < 1e-9)

        self.wait_for(reached, what="joint1/joint2 at the commanded positions")
        pub.publish(Float64MultiArray(data=[1.0, 2.0, 3.0]))  # wrong length: rejected
        time.sleep(0.3)
        self.assertAlmostEqual(self.states.position("joint1"), 0.5)
        self.assertAlmostEqual(self.states.position("joint3"), 0.3, msg="joint3 is not commanded")
        pub.unregister()

    def test_3_single_position_controller_moves_its_joint(self):
        self.spawn("pos1")
        pub = rospy.Publisher(NS + "/pos1/command", Float64, queue_size=1)

        def reached():
            pub.publish(Float64(data=-1.5))
            return abs(self.states.position("joint1") + 1.5) < 1e-9

        self.wait_for(reached, what="joint1 at -1.5")
        pub.unregister()

    def test_4_velocity_then_effort_controller_on_the_same_joint(self):
        self.spawn("vel3")
        pub = rospy.Publisher(NS + "/vel3/command", Float64, queue_size=1)

        def moving():
            pub.publish(Float64(data=2.0))
            msg = self.states.latest()
            return abs(msg.velocity[msg.name.index("joint3")] - 2.0) < 1e-9

        self.wait_for(moving, what="joint3 at 2 rad/s")

        def stamped_position():  # stamp and position of one message
            msg = self.states.latest()
            return msg.header.stamp.to_sec(), msg.position[msg.name.index("joint3")]

        before = stamped_position()
        time.sleep(1.0)
        after = stamped_position()
        slope = (after[1] - before[1]) / (after[0] - before[0])
        self.assertAlmostEqual(slope, 2.0, delta=0.2)

        # hand joint3 over to the effort controller in one switch (mode change in do_switch)
        self.assertTrue(self.load("eff3").ok)
        self.assertTrue(self.switch(start=["eff3"], stop=["vel3"]))
        states = {c.name: c.state for c in self.list_srv().controller}
        self.assertEqual(states, {"joint_state_controller": "running", "vel3": "stopped", "eff3": "running"})
        effort_pub = rospy.Publisher(NS + "/eff3/command", Float64, queue_size=1)

        def pushed():
            effort_pub.publish(Float64(data=-1.0))
            msg = self.states.latest()
            index = msg.name.index("joint3")
            return msg.effort[index] == -1.0 and msg.velocity[index] < 0.0

        self.wait_for(pushed, what="joint3 driven by a negative effort")
        pub.unregister()
        effort_pub.unregister()


if __name__ == "__main__":
    import rostest

    rostest.rosrun("rospy_control", "test_controller_manager_controllers", ControllersTest)
