#!/usr/bin/env python3
"""RosNodeHandle against a real master (its unit tests replace rospy with recorders).

The test node creates a RosNodeHandle in its own namespace and talks to what it creates with plain
rospy/actionlib clients, as another node would.
"""
import threading
import time
import unittest

import actionlib
import rospy
from actionlib.msg import TestAction, TestFeedback, TestGoal, TestResult
from actionlib_msgs.msg import GoalStatus
from controller_manager_msgs.srv import LoadController, LoadControllerResponse
from std_msgs.msg import String

from rospy_control.adapter.ros_node_handle import RosNodeHandle, RosServerGoalHandle
from rospy_control.controller_interface import NodeHandleError


#: Seconds to wait for something the graph does (a connection, a message, a service): polled, so
#: generous; a loaded host can take seconds to set up a connection.
WAIT = 30.0


def wait_until(predicate, timeout=WAIT):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


class RosNodeHandleTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rospy.init_node("node_handle_test")

    def setUp(self):
        self.nh = RosNodeHandle()

    def tearDown(self):
        self.nh.shutdown()

    def test_params_resolution_and_dicts(self):
        ctrl = self.nh.child("ctrl")
        ctrl.set_param("gains", {"p": 2.0, "i": 0.5})
        self.assertEqual(rospy.get_param("/ctrl/gains/p"), 2.0)
        self.assertTrue(ctrl.has_param("gains"))
        self.assertEqual(ctrl.get_param("gains"), {"p": 2.0, "i": 0.5})
        ctrl.set_param("gains", {"d": 1.0})
        self.assertEqual(ctrl.get_param("gains"), {"d": 1.0}, "a dict replaces the sub-tree")
        ctrl.set_param("~private", 3)
        self.assertEqual(rospy.get_param(rospy.get_name() + "/private"), 3)
        ctrl.delete_param("gains")
        self.assertFalse(ctrl.has_param("gains"))
        self.assertEqual(ctrl.get_param("gains", "default"), "default")
        with self.assertRaises(KeyError):
            ctrl.get_param("gains")
        with self.assertRaises(KeyError):
            ctrl.delete_param("gains")
        before = rospy.get_time()
        now = self.nh.now()
        self.assertLessEqual(before, now)
        self.assertLessEqual(now, rospy.get_time())
        self.assertTrue(self.nh.ok())

    def test_latched_publisher_reaches_late_subscribers(self):
        pub = self.nh.advertise("latched", String, queue_size=1, latch=True)
        pub.publish(String(data="hello"))
        msg = rospy.wait_for_message("/latched", String, timeout=WAIT)
        self.assertEqual(msg.data, "hello")

    def test_subscriber_receives_until_unregistered(self):
        got = []
        sub = self.nh.child("ns").subscribe("chatter", String, got.append, queue_size=10)
        pub = rospy.Publisher("/ns/chatter", String, queue_size=10)
        self.assertTrue(wait_until(lambda: pub.get_num_connections() > 0))
        self.assertTrue(wait_until(lambda: pub.publish(String(data="x")) or bool(got)))
        sub.unregister()
        count = len(got)
        for _ in range(5):
            pub.publish(String(data="late"))
            time.sleep(0.02)
        self.assertEqual(len(got), count)
        pub.unregister()

    def test_service_and_duplicate_and_shutdown(self):
        child = self.nh.child("svc_ns")
        child.advertise_service("load", LoadController,
                                lambda req: LoadControllerResponse(ok=req.name == "x"))
        rospy.wait_for_service("/svc_ns/load", timeout=WAIT)
        proxy = rospy.ServiceProxy("/svc_ns/load", LoadController)
        self.assertTrue(proxy("x").ok)
        self.assertFalse(proxy("y").ok)
        with self.assertRaises(NodeHandleError):
            child.advertise_service("load", LoadController, lambda req: LoadControllerResponse())
        child.shutdown()
        with self.assertRaises(rospy.ROSException):
            rospy.wait_for_service("/svc_ns/load", timeout=1.0)

    def test_action_server_starts_stopped_and_serves_goal_handles(self):
        goals, cancels, feedback = [], [], []
        done = threading.Event()

        def on_goal(gh):
            goals.append(gh)
            gh.set_accepted("accepted")
            if gh.get_goal().goal == 99:
                return  # stays active until cancelled
            threading.Thread(target=feed_then_succeed, args=(gh,), daemon=True).start()

        def feed_then_succeed(gh):
            # Feedback is not latched: one published before the client's feedback subscription has
            # connected is lost, and the client drops feedback once the goal is done.  So publish it
            # until the client has observed it (however late it connects), and only then succeed.
            deadline = time.monotonic() + WAIT
            while not feedback and time.monotonic() < deadline:
                gh.publish_feedback(TestFeedback(feedback=1))
                wait_until(lambda: bool(feedback), 0.2)
            gh.set_succeeded(TestResult(result=gh.get_goal().goal * 2), "doubled")

        def on_cancel(gh):
            cancels.append(gh)
            gh.set_canceled(None, "as asked")
            done.set()

        server = self.nh.child("act").action_server("test_action", TestAction, on_goal, on_cancel)
        client = actionlib.SimpleActionClient("/act/test_action", TestAction)
        self.assertFalse(client.wait_for_server(rospy.Duration(1.0)), "not started yet")
        server.start()
        self.assertTrue(client.wait_for_server(rospy.Duration(WAIT)))

        client.send_goal(TestGoal(goal=21), feedback_cb=feedback.append)
        self.assertTrue(client.wait_for_result(rospy.Duration(WAIT)))
        self.assertGreaterEqual(len(feedback), 1)
        self.assertEqual({f.feedback for f in feedback}, {1})
        self.assertEqual(client.get_state(), GoalStatus.SUCCEEDED)
        self.assertEqual(client.get_result().result, 42)
        self.assertEqual(client.get_goal_status_text(), "doubled")
        self.assertIsInstance(goals[0], RosServerGoalHandle)

        client.send_goal(TestGoal(goal=99))
        self.assertTrue(wait_until(lambda: len(goals) == 2))
        client.cancel_goal()
        self.assertTrue(done.wait(WAIT))
        self.assertTrue(client.wait_for_result(rospy.Duration(WAIT)))
        self.assertEqual(client.get_state(), GoalStatus.PREEMPTED)
        self.assertEqual(cancels[0], goals[1])
        self.assertNotEqual(cancels[0], goals[0])


if __name__ == "__main__":
    import rostest

    rostest.rosrun("rospy_control", "test_controller_manager_node_handle", RosNodeHandleTest)
