"""``BoardRobotHW``: the joints of a trajectory board (seed 004) as a RobotHW (ROS-free).

Loaded by the driver node from its private parameters (``config/stepper_arm_robot_hw.yaml``)::

    robot_hardware: [board]
    board:
      type: rospy_control/BoardRobotHW          # or rospy_control.downlink.robot_hw:BoardRobotHW
      hardware_config: /path/to/stepper_arm_hardware.xml   # the <board> (downlink/hardware_xml.py)
      address: ""                                # optional host:port overriding the XML's
      protocol: ""                               # optional full | seed overriding the XML's

Interfaces: ``hardware_interface::JointStateInterface`` (positions and velocities from the board's
feedback; with ``protocol="seed"``, which reports nothing, from the plan) and
``hardware_interface::JointTrajectoryInterface`` (the ``pass_through_controllers/JointTrajectoryController``
sends whole trajectories through it to a :class:`BoardDevice` or :class:`SeedBoardDevice`).

Faults: a joint is in fault while its board is not connected (the RobotHW reconnects by itself
every ``reconnect_period``) or holds a latched fault (the board's code and text).  A fault the
board latched is cleared by :meth:`BoardRobotHW.reset_faults` (the driver's ``~reset_faults``).

Threads: the client's reader thread publishes feedback and reports; a connector thread connects
and reconnects; a worker thread sends cancels (``cancel`` must not block); :meth:`read` only takes
the latest snapshot (one reference replaced as a whole).
"""
from __future__ import annotations

import queue
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Set, Tuple

import numpy as np

from ..board.core import TrajPoint
from ..exceptions import ConfigError
from ..hardware_interface import JointData, JointStateHandle, JointStateInterface, RobotHW
from ..hardware_interface.joint_trajectory_interface import (
    PATH_TOLERANCE_VIOLATED, JointTrajectoryInterface, TrajectoryDevice, TrajectoryFeedback,
    TrajectoryRequest,
)
from ..log import get_logger
from . import wire
from .client import BoardClient, BoardError, Feedback, GoalHandle, TrajectoryInvalid
from .hardware_xml import BoardDescription, parse_board_xml
from .seed import SeedSender

logger = get_logger(__name__)

__all__ = ["BoardRobotHW", "BoardDevice", "SeedBoardDevice"]

#: FollowJointTrajectoryResult.INVALID_GOAL
INVALID_GOAL = -1


def _points(request: TrajectoryRequest) -> List[TrajPoint]:
    return [TrajPoint(p.time_from_start, p.positions, p.velocities, p.accelerations) for p in request.points]


class _Snapshot:
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
        self._snapshot = _Snapshot([0.0] * len(desc.axes), [0.0] * len(desc.axes),
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
        for target, name in ((self._connector, "board-connector"), (self._canceller, "board-cancel")):
            th = threading.Thread(target=target, name=name, daemon=True)
            th.start()
            self._threads.append(th)

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

    def snapshot(self) -> _Snapshot:
        snap = self._snapshot
        fault = self.fault_text()
        if fault != snap.fault:
            snap = _Snapshot(snap.positions, snap.velocities, fault)
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
        self._snapshot = _Snapshot(list(fb.actual), velocities, self._snapshot.fault)
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
            timer.start()
            return None
        try:
            handle = self.client.execute(request.joint_names, _points(request), stamp=request.start_time)
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
        th = threading.Thread(target=self._await, args=(request.goal_id, handle), name="board-goal",
                              daemon=True)
        th.start()
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


class SeedBoardDevice(TrajectoryDevice):
    """A board running seed 004's code: open loop.  Each trajectory goes on its own connection; the
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
        return f"'{self.desc.name}' ({self.desc.address}, seed protocol)"

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

    def snapshot(self) -> _Snapshot:
        """The plan now (the seed's board reports nothing); also handed to the controller as feedback,
        marked open loop, so its tolerance checks see the plan and nothing else."""
        now = self.clock()
        p, v = self.plan_state(now)
        plan = self._plan
        goal = self.running(now)
        goal = goal if goal is not None and goal >= 0 else None
        self.publish_feedback(TrajectoryFeedback(
            stamp=now, positions=list(p), velocities=list(v), goal_id=goal,
            time_from_start=(now - plan[1]) if goal is not None and plan is not None else None,
            desired_positions=list(p) if goal is not None else None, state="open loop (seed protocol): plan"))
        return _Snapshot(list(p), list(v), None)

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
                    "and cannot replace it (the seed protocol has no cancel or splice); send the goal after "
                    "it ends")
        if not request.points:
            self.report_accepted(request.goal_id)
            self.report_succeeded(request.goal_id)
            return None
        order = [request.joint_names.index(j) for j in self.joint_names] \
            if set(request.joint_names) == set(self.joint_names) else None
        if order is None:
            return (f"board {self.label}: the trajectory names {request.joint_names}; the seed board takes "
                    f"every axis ({', '.join(self.joint_names)}) in every point")
        pts = _points(request)
        # the seed's board starts at once from where it is: the plan starts at its current position
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
            timer.start()
            self._timers = [x for x in self._timers if x.is_alive()] + [timer]
        self.report_accepted(request.goal_id)     # it fits; sent at its start time
        if delay > 0.005:
            timer = threading.Timer(delay, go)
            timer.daemon = True
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
        logger.warning("board %s: cancel of goal %d NOT honoured: the seed protocol cannot stop the board; "
                       "it keeps moving for %.2f s to the trajectory's end", self.label, goal_id, remaining)
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
        return {"values": values, "warning": "open loop (seed protocol): /joint_states is the plan, not "
                                             "measured", "error": None}


class BoardRobotHW(RobotHW):
    """The joints of one trajectory board (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.desc: Optional[BoardDescription] = None
        self.device: Any = None
        self._data: Dict[str, JointData] = {}
        self._js = JointStateInterface()
        self._traj = JointTrajectoryInterface()

    def init(self, root_nh: Any, robot_hw_nh: Any) -> bool:
        key = "hardware_config"
        path = robot_hw_nh.get_param(key, None)
        if not isinstance(path, str) or not path.strip():
            raise ConfigError(f"expected the path of a hardware XML with a <board>, got {path!r}",
                              robot_hw_nh.resolve_name(key))
        address = robot_hw_nh.get_param("address", "") or None
        protocol = robot_hw_nh.get_param("protocol", "") or None
        if protocol is not None and protocol not in ("full", "seed"):
            raise ConfigError(f"expected full or seed, got {protocol!r}",
                              robot_hw_nh.resolve_name("protocol"))
        try:
            self.desc = desc = parse_board_xml(path, address=address, protocol=protocol)
        except ConfigError as err:
            if address and "override" in str(err):
                raise ConfigError(f"expected host:port, got {address!r}",
                                  robot_hw_nh.resolve_name("address")) from None
            raise
        self._check_urdf(root_nh, desc)
        port_file = robot_hw_nh.get_param("port_file", "") or ""
        if not isinstance(port_file, str):
            raise ConfigError(f"expected a file path or empty, got {port_file!r}",
                              robot_hw_nh.resolve_name("port_file"))
        self.device = SeedBoardDevice(desc) if desc.protocol == "seed" else BoardDevice(desc)
        self.device.port_file = port_file
        states = []
        for axis in desc.axes:
            data = JointData(position=0.0)
            data.fault = f"board {self.device.label}: not connected yet" if desc.protocol == "full" else None
            state = JointStateHandle(axis.joint, data)
            self._js.register_handle(state)
            states.append(state)
            self._data[axis.joint] = data
        self._traj.register_device(self.device, states)
        self.register_interface(self._js)
        self.register_interface(self._traj)
        logger.info("BoardRobotHW: board %s, %s protocol, joints %s", desc.name, desc.protocol,
                    ", ".join(desc.joints))
        return True

    @staticmethod
    def _check_urdf(root_nh: Any, desc: BoardDescription) -> None:
        from ..urdf import find_robot_description, parse_urdf
        try:
            text, where = find_robot_description(root_nh)
        except Exception:  # noqa: BLE001 - no URDF to check against
            return
        if text is None:
            return
        names = {j.get("name") for j in parse_urdf(text, where).findall("joint")}
        for axis in desc.axes:
            if axis.joint not in names:
                raise axis.element.error(f"attribute 'joint'='{axis.joint}' is not a joint of the URDF "
                                         f"({where})")

    def start(self) -> None:
        self.device.start()

    def shutdown(self) -> None:
        if self.device is not None:
            self.device.shutdown()

    def read(self, time: float, period: float) -> None:
        snap = self.device.snapshot()
        for i, name in enumerate(self.device.joint_names):
            data = self._data[name]
            data.position = snap.positions[i]
            data.velocity = snap.velocities[i]
            data.effort = 0.0
            data.fault = snap.fault

    def write(self, time: float, period: float) -> None:
        pass      # trajectories go to the board through the JointTrajectoryInterface

    def faulted_joints(self) -> Dict[str, str]:
        return {n: d.fault for n, d in self._data.items() if d.fault}

    def reset_faults(self, timeout: Optional[float] = None) -> Tuple[bool, str]:
        """Clear what the board can clear (its latched fault); ``(success, message)``."""
        return self.device.reset_faults(3.0 if timeout is None else timeout)

    def status(self) -> dict:
        report = self.device.status()
        fault = report.get("error")
        report["joints"] = {n: {"interface": JointTrajectoryInterface.TYPE_NAME, "mode": "trajectory",
                                "fault": bool(fault)} for n in self._data}
        report["hold_mode"] = "board"
        return report
