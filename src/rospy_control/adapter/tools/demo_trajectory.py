"""``demo_trajectory``: send a MoveIt-shaped goal through ``<controller>/follow_joint_trajectory``.

Works against either branch of the driver (the action is the same).  The goal looks exactly like
what MoveIt's ``moveit_simple_controller_manager`` sends (``can_moveit_facts.md`` 4.2):
``header.stamp = 0`` (start now), joints in the controller's (planning group's) order, point 0 = the
current state read from ``/joint_states`` at ``time_from_start = 0``, positions, velocities and
accelerations filled for every point.  The motion is a smooth out-and-back excursion
``q(t) = q0 + A (1 - cos(2 pi t / T)) / 2`` of every joint, kept inside the URDF limits.

Usage::

    rosrun rospy_control demo_trajectory [controller] [--duration T] [--amplitude A] [--points N]
                                         [--namespace NS] [--timeout S]

Prints the goal, the feedback (throttled) and the result; exit code 0 when the goal SUCCEEDED.
"""
from __future__ import annotations

import argparse
import math
import sys
import threading
from typing import Dict, List, Optional, Sequence, Tuple

from rospy_control.exceptions import ConfigError
from rospy_control.urdf import parse_urdf, urdf_joints

__all__ = ["moveit_shaped_goal", "joint_limits_from_urdf", "excursion", "main"]

Limits = Dict[str, Tuple[float, float]]


def joint_limits_from_urdf(urdf: str) -> Limits:
    """``{joint: (lower, upper)}`` of the URDF's revolute/prismatic joints (continuous: unbounded)."""
    try:
        joints = urdf_joints(parse_urdf(urdf))
    except ConfigError:
        return {}
    return {name: (j.lower, j.upper) if j.type in ("revolute", "prismatic") and j.has_limits
            else (-math.inf, math.inf) for name, j in joints.items()}


def excursion(start: Sequence[float], amplitude: Sequence[float], limits: Sequence[Tuple[float, float]],
              margin: float = 0.1) -> List[float]:
    """Signed per-joint excursions: towards the middle of the joint's range, at most ``amplitude``
    and never closer than ``margin`` (fraction of the range) to a limit."""
    out = []
    for q, a, (lo, hi) in zip(start, amplitude, limits):
        if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
            out.append(a)
            continue
        room_lo = lo + margin * (hi - lo)
        room_hi = hi - margin * (hi - lo)
        if q <= 0.5 * (lo + hi):
            out.append(max(0.0, min(a, room_hi - q)))
        else:
            out.append(-max(0.0, min(a, q - room_lo)))
    return out


def moveit_shaped_goal(joint_names: Sequence[str], start: Sequence[float], delta: Sequence[float],
                       duration: float, points: int = 20):
    """A ``FollowJointTrajectoryGoal`` shaped like MoveIt's (see the module docstring).

    :param start: current positions (point 0, exactly).
    :param delta: peak excursion per joint (reached at ``duration / 2``, back at ``duration``).
    :param points: number of points (>= 3).
    """
    import genpy
    from control_msgs.msg import FollowJointTrajectoryGoal
    from trajectory_msgs.msg import JointTrajectoryPoint

    points = max(3, int(points))
    goal = FollowJointTrajectoryGoal()
    goal.trajectory.header.stamp = genpy.Time(0)
    goal.trajectory.joint_names = list(joint_names)
    w = 2.0 * math.pi / duration
    for k in range(points):
        t = duration * k / (points - 1)
        pt = JointTrajectoryPoint()
        if k == 0:
            pt.positions = [float(q) for q in start]
        else:
            pt.positions = [q + d * 0.5 * (1.0 - math.cos(w * t)) for q, d in zip(start, delta)]
        pt.velocities = [d * 0.5 * w * math.sin(w * t) for d in delta]
        pt.accelerations = [d * 0.5 * w * w * math.cos(w * t) for d in delta]
        if k == points - 1:
            pt.velocities = [0.0] * len(delta)
        pt.time_from_start = genpy.Duration.from_sec(t)
        goal.trajectory.points.append(pt)
    return goal


def demo_goal(joints: Sequence[str], start: Sequence[float], limits_map: Limits, duration: float,
              points: int, amplitude: Optional[float] = None):
    """``(goal, delta)``: the demo's goal from the measured ``start`` (point 0, exactly): each joint out
    towards the middle of its range (``amplitude`` rad, default 0.4, or 0.015 for a joint whose range
    is under 0.5, such as a gripper) and back, :func:`moveit_shaped_goal` over ``duration`` s."""
    limits = [limits_map.get(j, (-math.inf, math.inf)) for j in joints]
    peaks = [amplitude if amplitude is not None else
             (0.015 if math.isfinite(lo) and hi - lo < 0.5 else 0.4) for lo, hi in limits]
    delta = excursion(start, peaks, limits)
    return moveit_shaped_goal(joints, start, delta, duration, points), delta


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="demo_trajectory", description=__doc__.split("\n\n")[0])
    parser.add_argument("controller", nargs="?", default="arm_controller",
                        help="trajectory controller name (default arm_controller)")
    parser.add_argument("--duration", type=float, default=4.0, help="seconds (default 4)")
    parser.add_argument("--amplitude", type=float, default=None,
                        help="peak excursion per joint (default 0.4 rad, 0.015 m for prismatic joints)")
    parser.add_argument("--points", type=int, default=20, help="trajectory points (default 20)")
    parser.add_argument("--namespace", default="", help="namespace of the controller (default: relative)")
    parser.add_argument("--timeout", type=float, default=30.0,
                        help="seconds to wait for the action server and for /joint_states, and beyond "
                             "the trajectory's duration for the result (default 30: a driver that has "
                             "just been launched on a loaded host takes a while)")
    return parser.parse_args(list(argv))


def _current_positions(joints: Sequence[str], timeout: float) -> Optional[List[float]]:
    import rospy
    from sensor_msgs.msg import JointState

    found: Dict[str, float] = {}
    done = threading.Event()

    def cb(msg: JointState) -> None:
        for n, p in zip(msg.name, msg.position):
            found[n] = p
        if all(j in found for j in joints):
            done.set()

    sub = rospy.Subscriber("joint_states", JointState, cb, queue_size=5)
    ok = done.wait(timeout)
    sub.unregister()
    return [found[j] for j in joints] if ok else None


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``scripts/demo_trajectory``."""
    import actionlib
    import rospy
    from control_msgs.msg import FollowJointTrajectoryAction, FollowJointTrajectoryResult

    args = parse_args(rospy.myargv(argv if argv is not None else sys.argv)[1:])
    rospy.init_node("demo_trajectory", anonymous=True)
    ns = (args.namespace.rstrip("/") + "/" if args.namespace else "") + args.controller
    joints = rospy.get_param(ns + "/joints", None)
    if not isinstance(joints, list) or not joints:
        print(f"demo_trajectory: no joints for '{ns}' (param {rospy.resolve_name(ns + '/joints')}); "
              "is the controller YAML loaded?", file=sys.stderr)
        return 2
    client = actionlib.SimpleActionClient(ns + "/follow_joint_trajectory", FollowJointTrajectoryAction)
    print(f"Waiting for {rospy.resolve_name(ns + '/follow_joint_trajectory')} ...")
    if not client.wait_for_server(rospy.Duration(args.timeout)):
        print(f"demo_trajectory: action server {rospy.resolve_name(ns + '/follow_joint_trajectory')} "
              f"not available after {args.timeout:.0f} s (is the controller running?)", file=sys.stderr)
        return 2
    start = _current_positions(joints, args.timeout)
    if start is None:
        print("demo_trajectory: /joint_states does not carry every joint of the controller", file=sys.stderr)
        return 2
    limits_map = joint_limits_from_urdf(rospy.get_param("robot_description", ""))
    goal, delta = demo_goal(joints, start, limits_map, args.duration, args.points, args.amplitude)
    print(f"Sending a MoveIt-shaped goal to {ns}: {len(goal.trajectory.points)} points over "
          f"{args.duration:.1f} s, joints {', '.join(joints)}")
    for j, q, d in zip(joints, start, delta):
        print(f"  {j:28s} start {q:+.4f}  peak {q + d:+.4f}")
    sent = rospy.get_time()
    last = [-1.0]

    def feedback_cb(fb) -> None:
        t = fb.header.stamp.to_sec() - sent
        if t - last[0] < 0.5:
            return
        last[0] = t
        err = max((abs(e) for e in fb.error.positions), default=0.0)
        print(f"  t={t:5.2f} s  max |position error| {err:.4f}")

    client.send_goal(goal, feedback_cb=feedback_cb)
    if not client.wait_for_result(rospy.Duration(args.duration + args.timeout)):
        print("demo_trajectory: no result in time, cancelling", file=sys.stderr)
        client.cancel_goal()
        return 1
    state = client.get_state()
    result = client.get_result()
    names: Dict[Optional[int], str] = {v: k for k, v in vars(FollowJointTrajectoryResult).items()
                                       if k.isupper() and isinstance(v, int)}
    code = result.error_code if result is not None else None
    text = f": {result.error_string}" if result is not None and result.error_string else ""
    print(f"Result: {actionlib.get_name_of_constant(actionlib.GoalStatus, state)}, error_code "
          f"{code} ({names.get(code, '?')}){text}")
    final = _current_positions(joints, 10.0)
    if final is not None:
        worst = max(abs(a - b) for a, b in zip(final, start))
        print(f"Final max |position - start| = {worst:.4f}")
    return 0 if state == actionlib.GoalStatus.SUCCEEDED else 1
