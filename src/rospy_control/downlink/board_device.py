"""The devices behind :class:`~rospy_control.downlink.robot_hw.BoardRobotHW`'s trajectory interface:
:class:`BoardDevice`, a board speaking the full protocol, and what :class:`BoardRobotHW.read` takes
from a device (:class:`Snapshot`).

Threads: the client's reader thread publishes feedback and reports; a connector thread connects
and reconnects; a worker thread sends cancels (``cancel`` must not block); ``snapshot()`` only
returns the latest one (one reference replaced as a whole).
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

from ..board.core import TrajPoint
from ..hardware_interface.joint_trajectory_interface import (
    PATH_TOLERANCE_VIOLATED, TrajectoryDevice, TrajectoryFeedback, TrajectoryRequest,
)
from ..log import get_logger
from ..board import wire
from .client import BoardClient, BoardError, Feedback, GoalHandle, TrajectoryInvalid
from .hardware_xml import BoardDescription
from rospy_control.realtime import start_thread, thread_name

logger = get_logger(__name__)

__all__ = ["BoardDevice", "Snapshot", "INVALID_GOAL", "points_of"]

#: FollowJointTrajectoryResult.INVALID_GOAL
INVALID_GOAL = -1


def points_of(request: TrajectoryRequest) -> List[TrajPoint]:
    """The request's points as the board's trajectory points."""
    return [TrajPoint(p.time_from_start, p.positions, p.velocities, p.accelerations) for p in request.points]


class Snapshot:
    """What :meth:`BoardRobotHW.read` takes: positions and velocities in the device's joint order, the
    fault text per joint (None when healthy)."""

    __slots__ = ("positions", "velocities", "fault")

    def __init__(self, positions: List[float], velocities: List[float], fault: Optional[str]) -> None:
        self.positions = positions
        self.velocities = velocities
        self.fault = fault


class BoardDevice(TrajectoryDevice):
    """A board speaking the full protocol, through :class:`BoardClient`.

    ``send_trajectory`` validates (the board's own checks, named by joint and board), streams and
    starts; the board's GoalDone is reported (SUCCEEDED; CANCELED/PREEMPTED -> preempted; ABORTED with
    the board's code and text); its feedback is published to the controller and kept for ``read``.
    """

    def __init__(self, desc: BoardDescription,
                 client_factory: Callable[..., BoardClient] = BoardClient) -> None:
        super().__init__(desc.name, desc.joints)
        self.desc = desc
        self.client = client_factory(desc.host, desc.port, joint_map={a.joint: a.name for a in desc.axes},
                                     heartbeat_period=desc.heartbeat_period, board_timeout=desc.board_timeout,
                                     auto_reconnect=True)
        self.client.feedback_callbacks.append(self._on_feedback)
        self._goal_of_board: Dict[int, int] = {}     # board goal id -> controller goal id
        self._board_of_goal: Dict[int, int] = {}     # controller goal id -> board goal id
        self._replaced: Set[int] = set()             # controller goal ids a newer request replaced
        self._lock = threading.Lock()
        self._snapshot = Snapshot([0.0] * len(desc.axes), [0.0] * len(desc.axes),
                                  f"board {self.label}: not connected yet")
        self._have_position = False
        self._unreachable = f"board {self.label}: not connected yet"
        self._cancels: "queue.Queue[Optional[int]]" = queue.Queue()
        self._stop = threading.Event()
        self._threads: List[threading.Thread] = []
        self.last_feedback: Optional[Feedback] = None
        #: a file the board program writes its port to (``trajectory_board --port 0 --port-file``), or ""
        self.port_file = ""

    @property
    def label(self) -> str:
        return f"'{self.desc.name}' ({self.desc.host}:{self.client.port})"

    # ---- lifecycle ---------------------------------------------------------------------------
    def start(self) -> None:
        for target, name in ((self._connector, "downlink.connector"), (self._canceller, "downlink.cancel")):
            self._threads.append(start_thread(target, name))

    def shutdown(self) -> None:
        self._stop.set()
        self._cancels.put(None)
        try:
            self.client.close()
        except Exception:  # noqa: BLE001 - shutdown must not raise
            logger.exception("board %s: closing the client failed", self.label)
        for th in self._threads:
            th.join(timeout=5.0)

    def _connector(self) -> None:
        """Connect until it works; afterwards the client's own heartbeat thread reconnects."""
        first = True
        while not self._stop.is_set():
            try:
                if self.port_file:
                    self.client.port = self._read_port_file()
                self.client.connect()
            except wire.DownlinkError as err:
                self._unreachable = f"board {self.label} unreachable: {err}"
                if first:
                    logger.error("%s; retrying every %.1f s", self._unreachable, self.desc.reconnect_period)
                    first = False
                self._stop.wait(self.desc.reconnect_period)
                continue
            self._check_hello()
            logger.info("board %s: connected (%d axes)", self.label, len(self.client.axis_names))
            return

    def _read_port_file(self) -> int:
        try:
            with open(self.port_file) as f:
                return int(f.read().strip())
        except (OSError, ValueError) as err:
            raise wire.DownlinkError(f"no port in the board's port file {self.port_file} yet "
                                     f"({err})") from None

    def _check_hello(self) -> None:
        hello = self.client.hello
        announced = {a.name: a for a in hello.axes}
        for axis in self.desc.axes:
            a = announced.get(axis.name)
            if a is None:
                logger.error("board %s has no axis '%s' (joint '%s'); its axes: %s", self.label, axis.name,
                             axis.joint, ", ".join(announced))
            elif a.steps_per_unit and \
                    abs(abs(a.steps_per_unit) - axis.steps_per_rad) > 1e-6 * axis.steps_per_rad:
                logger.error("board %s: axis '%s' announces %.4f steps/rad, the hardware XML says %.4f "
                             "(%s:%s)", self.label, axis.name, abs(a.steps_per_unit), axis.steps_per_rad,
                             self.desc.source, axis.element.line)

    def _canceller(self) -> None:
        while True:
            goal_id = self._cancels.get()
            if goal_id is None:
                return
            with self._lock:
                board_id = self._board_of_goal.get(goal_id)
            if board_id is None:
                continue
            try:
                self.client.cancel(board_id)
            except wire.DownlinkError as err:
                logger.error("board %s: cancel of goal %d failed: %s", self.label, goal_id, err)

    # ---- state -------------------------------------------------------------------------------
    def fault_text(self) -> Optional[str]:
        if not self.client.connected:
            lost = self.client.last_error      # set once a connection was lost; "" before the first one
            return f"{lost}; reconnecting by itself" if lost else self._unreachable
        fb = self.last_feedback
        if fb is not None and fb.fault not in ("OK", "0", ""):
            return f"board {self.label}: fault {fb.fault}" + (
                f" ({self.client.faults[-1][1]})" if self.client.faults else "")
        return None

    def snapshot(self) -> Snapshot:
        snap = self._snapshot
        fault = self.fault_text()
        if fault != snap.fault:
            snap = Snapshot(snap.positions, snap.velocities, fault)
        return snap

    @property
    def have_position(self) -> bool:
        return self._have_position

    def _on_feedback(self, fb: Feedback) -> None:
        """Reader thread: keep the sample for read() and hand it to the controller."""
        self.last_feedback = fb
        if len(fb.actual) != len(self.joint_names):
            return
        velocities = list(fb.desired_velocity) if len(fb.desired_velocity) == len(fb.actual) \
            else [0.0] * len(fb.actual)
        self._snapshot = Snapshot(list(fb.actual), velocities, self._snapshot.fault)
        self._have_position = True
        with self._lock:
            goal = self._goal_of_board.get(fb.goal_id) if fb.goal_id else None
        self.publish_feedback(TrajectoryFeedback(
            stamp=fb.host_time, positions=list(fb.actual), velocities=velocities, goal_id=goal,
            time_from_start=fb.time_from_start if goal is not None else None,
            desired_positions=list(fb.desired) if goal is not None and len(fb.desired) == len(fb.actual)
            else None,
            state=f"{fb.state.lower()}, buffer {fb.buffer_fill}"))

    # ---- the contract ------------------------------------------------------------------------
    def send_trajectory(self, request: TrajectoryRequest) -> Optional[str]:
        if not self.client.connected:
            return self.fault_text() or self._unreachable
        if not request.points:      # stop: the board decelerates whatever runs; succeeded once at rest
            try:
                at_rest = self.client.cancel(0)
            except wire.DownlinkError as err:
                return f"board {self.label}: stop refused: {err}"
            self.report_accepted(request.goal_id)
            timer = threading.Timer(max(0.0, at_rest - time.time()), self.report_succeeded,
                                    args=(request.goal_id,))
            timer.daemon = True
            timer.name = thread_name("downlink.stop_timer")
            timer.start()
            return None
        try:
            handle = self.client.execute(request.joint_names, points_of(request), stamp=request.start_time)
        except TrajectoryInvalid as err:
            return str(err)
        except BoardError as err:
            late = self.client.clock() - request.start_time
            why = f" (the start reached the board {late:.3f} s after its start time: the board leads in " \
                  "from where the axes are to the first point ahead)" if late > 0.02 else ""
            return f"board {self.label} refused the trajectory ({err.code_name}): {err}{why}"
        except wire.DownlinkError as err:
            return f"board {self.label}: {err}"
        if handle.start_host_time is not None and handle.start_host_time - request.start_time > 0.1:
            logger.warning("board %s: goal %d started %.3f s after its start time (the host or the board was "
                           "held up); the board led in from where the axes were", self.label, request.goal_id,
                           handle.start_host_time - request.start_time)
        with self._lock:
            self._goal_of_board[handle.goal_id] = request.goal_id
            self._board_of_goal[request.goal_id] = handle.goal_id
            if request.replaces is not None:
                self._replaced.add(request.replaces)
        self.report_accepted(request.goal_id)
        start_thread(self._await, "downlink.goal", args=(request.goal_id, handle))
        return None

    def _await(self, goal_id: int, handle: GoalHandle) -> None:
        while not handle.done and not self._stop.is_set():
            handle.wait(0.5)
        with self._lock:
            self._board_of_goal.pop(goal_id, None)
            self._goal_of_board.pop(handle.goal_id, None)
        if not handle.done:
            return
        with self._lock:
            replaced = goal_id in self._replaced
            self._replaced.discard(goal_id)
        if handle.result == "SUCCEEDED" and replaced:
            # the board ran the goal up to the splice and ended it there: replaced, not completed
            self.report_preempted(goal_id)
        elif handle.result == "SUCCEEDED":
            self.report_succeeded(goal_id)
        elif handle.result in ("CANCELED", "PREEMPTED"):
            self.report_preempted(goal_id)
        else:
            faults = self.client.faults
            axis = faults[-1][2] if faults and handle.code != "CONNECTION_LOST" else ""
            joint = next((a.joint for a in self.desc.axes if a.name == axis), None) if axis else None
            text = handle.text or "no reason given"
            if f"'{self.desc.name}'" not in text and self.desc.address not in text:
                text = f"board {self.label}: {text}"
            self.report_aborted(goal_id, f"{handle.code}: {text}", joint, PATH_TOLERANCE_VIOLATED)

    def cancel(self, goal_id: int) -> None:
        self._cancels.put(goal_id)

    def reset_faults(self, timeout: float = 3.0) -> Tuple[bool, str]:
        if not self.client.connected:
            return False, self._unreachable
        fault = self.fault_text()
        if fault is None:
            return True, f"board {self.label}: no fault"
        try:
            self.client.reset_faults()
        except wire.DownlinkError as err:
            return False, f"board {self.label}: reset refused: {err}"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.fault_text() is None:
                return True, f"board {self.label}: cleared {fault}"
            time.sleep(0.02)
        return False, f"board {self.label}: still in fault after reset: {self.fault_text()}"

    def home(self, axes: Sequence[str], timeout: float) -> Dict[str, Tuple[bool, str]]:
        """Home the board's ``axes`` (one Home request; the board homes them one after the other) and
        wait until a feedback sample from after the homing arrived, so the joints read the new
        positions.  :returns: ``{axis: (ok, message)}``."""
        try:
            done = self.client.home(axes, timeout)
        except wire.DownlinkError as err:
            return {a: (False, f"board {self.label}: not homed: {err}") for a in axes}
        t_done = done.board_time_us * 1e-6
        end = time.monotonic() + 1.0
        while time.monotonic() < end:
            fb = self.last_feedback
            if fb is not None and fb.board_time >= t_done:
                break
            time.sleep(0.01)
        names = [a.name for a in self.desc.axes]
        out: Dict[str, Tuple[bool, str]] = {}
        for a in axes:
            if a in done.axes:
                k = names.index(a)
                where = f"; now at {done.positions[k]:.4f} rad" if k < len(done.positions) else ""
                out[a] = (True, f"homed{where}")
            elif done.ok:
                out[a] = (False, f"board {self.label}: not homed (the board did not report it)")
            else:
                out[a] = (False, f"{wire.code_name(done.code)}: {done.text}")
        return out

    def status(self) -> Dict[str, Any]:
        c = self.client
        fb = self.last_feedback
        values: List[Tuple[str, Any]] = [
            ("board", self.label), ("protocol", "full"), ("connected", c.connected),
            ("clock sync error bound (s)", f"{c.sync.uncertainty:.6f}" if c.sync.synced else "not synced"),
            ("clock drift (ppm)", f"{c.sync.drift_ppm:.1f}" if c.sync.synced else "-"),
        ]
        if fb is not None:
            values += [("state", fb.state), ("buffer fill", fb.buffer_fill), ("buffer free", fb.buffer_free),
                       ("fault", fb.fault), ("feedback rate (Hz)", f"{c.feedback_rate():.0f}")]
        if c.faults:
            values.append(("last fault", " / ".join(x for x in c.faults[-1] if x)))
        return {"values": values, "error": self.fault_text()}
