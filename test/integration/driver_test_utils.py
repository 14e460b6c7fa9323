"""Helpers shared by the driver rostests (test_driver_*.py): recorders, MoveIt-shaped goals, waits."""
from __future__ import annotations

import math
import threading
import time
import xml.etree.ElementTree as ET
from typing import Callable, Dict, List, Optional

import actionlib
import rospy
from control_msgs.msg import (
    FollowJointTrajectoryAction, FollowJointTrajectoryGoal, JointTrajectoryControllerState,
)
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectoryPoint

from rospy_control.adapter.tools.demo_trajectory import moveit_shaped_goal


def actuated_joints(urdf: str) -> List[str]:
    """Joints /joint_states must carry: movable, not mimic."""
    root = ET.fromstring(urdf)
    return [j.get("name") for j in root.findall("joint")
            if j.get("type") in ("revolute", "continuous", "prismatic") and j.find("mimic") is None]


def wait_for(predicate: Callable[[], bool], timeout: float, step: float = 0.02) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


class Recorder:
    """Keeps every message of a topic (with its wall-clock arrival time) while recording."""

    def __init__(self, topic: str, msg_class: type, keep: int = 20000) -> None:
        self.lock = threading.Lock()
        self.msgs: List = []
        self.arrivals: List[float] = []
        self.keep = keep
        self.sub = rospy.Subscriber(topic, msg_class, self._cb, queue_size=100)

    def _cb(self, msg) -> None:
        with self.lock:
            self.msgs.append(msg)
            self.arrivals.append(time.monotonic())
            if len(self.msgs) > self.keep:
                del self.msgs[: len(self.msgs) - self.keep]
                del self.arrivals[: len(self.arrivals) - self.keep]

    def clear(self) -> None:
        with self.lock:
            self.msgs = []
            self.arrivals = []

    def snapshot(self) -> List:
        with self.lock:
            return list(self.msgs)

    def latest(self):
        with self.lock:
            return self.msgs[-1] if self.msgs else None

    def count(self) -> int:
        with self.lock:
            return len(self.msgs)


class JointStates(Recorder):
    def __init__(self) -> None:
        super().__init__("joint_states", JointState)

    def positions(self, joints: List[str]) -> Optional[List[float]]:
        msg = self.latest()
        if msg is None:
            return None
        m = dict(zip(msg.name, msg.position))
        if not all(j in m for j in joints):
            return None
        return [m[j] for j in joints]

    def velocities(self, joints: List[str]) -> Optional[List[float]]:
        msg = self.latest()
        if msg is None:
            return None
        m = dict(zip(msg.name, msg.velocity))
        return [m[j] for j in joints] if all(j in m for j in joints) else None


class Diagnostics(Recorder):
    def __init__(self) -> None:
        super().__init__("/diagnostics", DiagnosticArray, keep=200)

    def status(self, suffix: str) -> Optional[Dict[str, str]]:
        """Values (plus 'level', 'message') of the newest status whose name ends with ``suffix``."""
        for msg in reversed(self.snapshot()):
            for st in msg.status:
                if st.name.endswith(suffix):
                    out = {kv.key: kv.value for kv in st.values}
                    out["level"] = str(st.level)
                    out["message"] = st.message
                    return out
        return None


def send_goal(client: actionlib.SimpleActionClient, goal, **kw) -> None:
    """``client.send_goal(goal)`` without losing an answer that arrives before it returns.

    actionlib's ``SimpleActionClient.send_goal`` keeps the new goal handle only after
    ``ActionClient.send_goal`` has published the goal.  A server that answers at once (a rejection)
    can have its status and result processed on the subscriber thread in that window -- a window a
    loaded host stretches to the length of a deschedule -- and the simple client then drops those
    transitions ("Got a transition callback on a goal handle that we're not tracking") and waits for
    a result it already received.  Replaying the handle's state once it is kept closes the window.
    """
    from actionlib.action_client import CommState
    from actionlib.simple_action_client import SimpleGoalState
    client.send_goal(goal, **kw)
    gh = client.gh
    if gh is not None and gh.get_comm_state() == CommState.DONE \
            and client.simple_state != SimpleGoalState.DONE:
        client._handle_transition(gh)


def client(controller: str, timeout: float = 60.0) -> actionlib.SimpleActionClient:
    c = actionlib.SimpleActionClient(controller + "/follow_joint_trajectory", FollowJointTrajectoryAction)
    if not c.wait_for_server(rospy.Duration(timeout)):
        raise AssertionError(f"{controller}/follow_joint_trajectory not available after {timeout} s")
    return c


def wait_running(names: List[str], timeout: float = 60.0, cm: str = "/controller_manager") -> None:
    """Until ``cm``'s ``list_controllers`` shows every controller of ``names`` running (the spawner
    loads a controller -- its action server answers from then on, rejecting goals with "Controller is
    not running" -- and starts it a moment later)."""
    from controller_manager_msgs.srv import ListControllers
    rospy.wait_for_service(cm + "/list_controllers", timeout)
    listing = rospy.ServiceProxy(cm + "/list_controllers", ListControllers)

    def running() -> bool:
        states = {c.name: c.state for c in listing().controller}
        return all(states.get(n) == "running" for n in names)
    if not wait_for(running, timeout, 0.1):
        raise AssertionError(f"controllers {names} not all running after {timeout} s")


def excursion_goal(joints: List[str], start: List[float], delta: List[float], duration: float,
                   points: int = 20) -> FollowJointTrajectoryGoal:
    return moveit_shaped_goal(joints, start, delta, duration, points)


def ramp_goal(joints: List[str], start: List[float], delta: List[float], duration: float,
              points: int = 15) -> FollowJointTrajectoryGoal:
    """MoveIt-shaped point-to-point move ``start -> start + delta`` (quintic-like smoothstep)."""
    import genpy
    goal = FollowJointTrajectoryGoal()
    goal.trajectory.header.stamp = genpy.Time(0)
    goal.trajectory.joint_names = list(joints)
    for k in range(points):
        s = k / (points - 1)
        t = duration * s
        b = 10 * s ** 3 - 15 * s ** 4 + 6 * s ** 5
        db = (30 * s ** 2 - 60 * s ** 3 + 30 * s ** 4) / duration
        ddb = (60 * s - 180 * s ** 2 + 120 * s ** 3) / duration ** 2
        pt = JointTrajectoryPoint()
        pt.positions = [q + d * b for q, d in zip(start, delta)] if k else list(start)
        pt.velocities = [d * db for d in delta]
        pt.accelerations = [d * ddb for d in delta]
        pt.time_from_start = genpy.Duration.from_sec(t)
        goal.trajectory.points.append(pt)
    return goal


class ControllerState(Recorder):
    def __init__(self, controller: str) -> None:
        super().__init__(controller + "/state", JointTrajectoryControllerState)


def max_abs_diff(a: List[float], b: List[float]) -> float:
    return max(abs(x - y) for x, y in zip(a, b)) if a else 0.0


def finite(values) -> bool:
    return all(math.isfinite(v) for v in values)


# -- helpers added for hosts that are not real-time (stalls of 100-250 ms, late wake-ups) ----------
def binned_rates(times: List[float], width: float = 1.0) -> List[float]:
    """Messages per second in each full ``width``-second bin from ``times[0]`` (sorted times)."""
    if not times:
        return []
    t0 = times[0]
    bins = int((times[-1] - t0) // width)
    counts = [0] * bins
    for t in times:
        k = int((t - t0) // width)
        if k < bins:
            counts[k] += 1
    return [c / width for c in counts]


def median_rate(times: List[float], width: float = 1.0) -> float:
    """Median of :func:`binned_rates`: the rate a topic keeps, robust to the one or two bins that a
    host stall empties and the catch-up after it fills (a rate over the whole window is not: a
    250 ms stall near either end shifts it by 250 ms / window).  NaN with fewer than 3 full bins."""
    rates = sorted(binned_rates(times, width))
    if len(rates) < 3:
        return float("nan")
    mid = len(rates) // 2
    return rates[mid] if len(rates) % 2 else 0.5 * (rates[mid - 1] + rates[mid])


def wait_fresh(recorder: Recorder, after: float, timeout: float = 30.0):
    """The first message of ``recorder`` (newest first) stamped later than ``after`` (ROS time, s),
    waiting for it up to ``timeout`` seconds; None if none came.  Use it instead of a fixed sleep
    before reading a state that must reflect something that has just happened."""
    found = []

    def fresh() -> bool:
        msg = recorder.latest()
        if msg is not None and msg.header.stamp.to_sec() > after:
            found.append(msg)
            return True
        return False

    return found[-1] if wait_for(fresh, timeout) and found else None
