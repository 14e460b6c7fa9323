"""``SeedBoardDevice``: a board running the original board program (open loop) behind
:class:`~rospy_control.downlink.robot_hw.BoardRobotHW`'s trajectory interface."""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ..board.core import TrajPoint
from ..hardware_interface.joint_trajectory_interface import (
    PATH_TOLERANCE_VIOLATED, TrajectoryDevice, TrajectoryFeedback, TrajectoryRequest,
)
from ..log import get_logger
from ..board import wire
from rospy_control.realtime import thread_name
from .board_device import Snapshot, points_of
from .hardware_xml import BoardDescription
from .seed import SeedSender

logger = get_logger(__name__)

__all__ = ["SeedBoardDevice"]


class SeedBoardDevice(TrajectoryDevice):
    """A board running the original board program: open loop.  Each trajectory goes on its own connection; the
    joints' state is the plan; a goal succeeds once its time has run out; a cancel or a replacement,
    which that board cannot honour, is reported as not honoured (aborted / refused), never claimed."""

    def __init__(self, desc: BoardDescription, clock: Callable[[], float] = time.time) -> None:
        super().__init__(desc.name, desc.joints)
        self.desc = desc
        self.clock = clock
        self.sender = SeedSender(desc.host, desc.port, desc.joints, path_tolerance=desc.path_tolerance)
        self._lock = threading.Lock()
        self._plan: Optional[Tuple[int, float, np.ndarray, np.ndarray]] = None   # goal, start, t, P
        self._position = np.zeros(len(desc.axes))
        self._have = False
        self._timers: List[threading.Timer] = []
        self._stop = threading.Event()
        self.last_error: Optional[str] = None
        self.sent = 0
        self.port_file = ""

    @property
    def label(self) -> str:
        return f"'{self.desc.name}' ({self.desc.address}, original protocol)"

    def start(self) -> None:
        pass

    def shutdown(self) -> None:
        self._stop.set()
        for t in self._timers:
            t.cancel()

    @property
    def have_position(self) -> bool:
        return True

    def plan_state(self, now: float) -> Tuple[np.ndarray, np.ndarray]:
        plan = self._plan
        if plan is None:
            return self._position, np.zeros_like(self._position)
        _, start, t, P = plan
        s = now - start
        if s <= t[0]:
            return P[0], np.zeros_like(P[0])
        if s >= t[-1]:
            return P[-1], np.zeros_like(P[-1])
        k = int(np.searchsorted(t, s)) - 1
        w = (s - t[k]) / (t[k + 1] - t[k])
        return P[k] + w * (P[k + 1] - P[k]), (P[k + 1] - P[k]) / (t[k + 1] - t[k])

    def snapshot(self) -> Snapshot:
        """The plan now (the original board program reports nothing); also handed to the controller as
        feedback, marked open loop, so its tolerance checks see the plan and nothing else."""
        now = self.clock()
        p, v = self.plan_state(now)
        plan = self._plan
        goal = self.running(now)
        goal = goal if goal is not None and goal >= 0 else None
        self.publish_feedback(TrajectoryFeedback(
            stamp=now, positions=list(p), velocities=list(v), goal_id=goal,
            time_from_start=(now - plan[1]) if goal is not None and plan is not None else None,
            desired_positions=list(p) if goal is not None else None,
            state="open loop (original protocol): plan"))
        return Snapshot(list(p), list(v), None)

    def running(self, now: float) -> Optional[int]:
        plan = self._plan
        if plan is None:
            return None
        goal, start, t, _ = plan
        return goal if now < start + t[-1] else None

    def send_trajectory(self, request: TrajectoryRequest) -> Optional[str]:
        now = self.clock()
        busy = self.running(now)
        if busy is not None:
            _, start, t, _ = self._plan  # type: ignore[misc]
            return (f"board {self.label} is executing goal {busy} until {start + t[-1] - now:.2f} s from now "
                    "and cannot replace it (the original protocol has no cancel or splice); send the goal "
                    "after it ends")
        if not request.points:
            self.report_accepted(request.goal_id)
            self.report_succeeded(request.goal_id)
            return None
        order = [request.joint_names.index(j) for j in self.joint_names] \
            if set(request.joint_names) == set(self.joint_names) else None
        if order is None:
            return (f"board {self.label}: the trajectory names {request.joint_names}; the original board "
                    f"program takes every axis ({', '.join(self.joint_names)}) in every point")
        pts = points_of(request)
        # the original board program starts at once from where it is: the plan starts at its current position
        if pts[0].t > 1e-9:
            here = [float(self._position[self.joint_names.index(j)]) for j in request.joint_names]
            pts.insert(0, TrajPoint(0.0, here))
        try:
            data = self.sender.fit(request.joint_names, pts)
        except wire.DownlinkError as err:      # too large even re-sampled: rejected (INVALID_GOAL)
            return str(err)
        info = dict(self.sender.last_info)
        delay = max(0.0, request.start_time - now)

        def go() -> None:
            try:
                self._send_bytes(data)
            except wire.DownlinkError as err:
                self.last_error = str(err)
                self.report_aborted(request.goal_id, f"CONNECTION_LOST: {err}", None, PATH_TOLERANCE_VIOLATED)
                return
            start = self.clock()
            kept = [p for p in self.sender.order(request.joint_names, pts)]
            if info.get("resampled"):
                from .seed import resample
                keep, _ = resample(kept, self.sender.path_tolerance)
                kept = [kept[i] for i in keep]
            t = np.array([p.t for p in kept])
            P = np.stack([p.p for p in kept])
            self._plan = (request.goal_id, start, t, P)
            self._position = P[-1]
            self._have = True
            self.sent += 1
            timer = threading.Timer(max(0.0, t[-1]), self._finished, args=(request.goal_id,))
            timer.daemon = True
            timer.name = thread_name("downlink.finish_timer")
            timer.start()
            self._timers = [x for x in self._timers if x.is_alive()] + [timer]
        self.report_accepted(request.goal_id)     # it fits; sent at its start time
        if delay > 0.005:
            timer = threading.Timer(delay, go)
            timer.daemon = True
            timer.name = thread_name("downlink.start_timer")
            timer.start()
            self._timers.append(timer)
        else:
            go()
        return None

    def _send_bytes(self, data: bytes) -> None:
        import socket
        import struct
        try:
            port = self.desc.port
            if self.port_file:
                with open(self.port_file) as f:
                    port = int(f.read().strip())
            with socket.create_connection((self.desc.host, port),
                                          timeout=self.sender.connect_timeout) as sock:
                sock.sendall(struct.pack("<i", len(data)) + data)
                sock.shutdown(socket.SHUT_WR)
        except (OSError, ValueError) as err:
            raise wire.DownlinkError(f"board {self.label}: sending {len(data)} bytes failed ({err})") from err
        self.last_error = None

    def _finished(self, goal_id: int) -> None:
        plan = self._plan
        if plan is not None and plan[0] == goal_id and not self._stop.is_set():
            self.report_succeeded(goal_id)

    def cancel(self, goal_id: int) -> None:
        plan = self._plan
        if plan is None or plan[0] != goal_id:
            return
        now = self.clock()
        remaining = plan[1] + plan[2][-1] - now
        if remaining <= 0:
            return
        logger.warning("board %s: cancel of goal %d NOT honoured: the original protocol cannot stop the "
                       "board; it keeps moving for %.2f s to the trajectory's end", self.label, goal_id,
                       remaining)
        self._plan = (-1, plan[1], plan[2], plan[3])    # the plan goes on; the goal is no longer ours
        self.report_aborted(goal_id, f"cancel not honoured: the seed-protocol board {self.label} cannot "
                            "stop; "
                            f"it keeps moving for {remaining:.2f} s to the trajectory's end", None,
                            PATH_TOLERANCE_VIOLATED)

    def reset_faults(self, timeout: float = 3.0) -> Tuple[bool, str]:
        return True, f"board {self.label}: open loop, no fault reported"

    def status(self) -> Dict[str, Any]:
        values: List[Tuple[str, Any]] = [
            ("board", self.label), ("protocol", "seed"),
            ("feedback", "none: open loop, /joint_states is the plan"),
            ("trajectories sent", self.sent)]
        if self.sender.last_info:
            info = self.sender.last_info
            values.append(("last trajectory", ", ".join(f"{k}={v}" for k, v in info.items())))
        if self.last_error:
            values.append(("last error", self.last_error))
        return {"values": values, "warning": "open loop (original protocol): /joint_states is the plan, not "
                                             "measured", "error": None}
