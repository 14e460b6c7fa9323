"""What the board client hands out and raises: its errors, the board's feedback samples and the handle
of a goal sent to the board (see :class:`~rospy_control.downlink.client.BoardClient`)."""
from __future__ import annotations

import threading
from typing import Optional, Sequence

from ..board import wire

__all__ = ["BoardError", "TrajectoryInvalid", "BoardUnavailable", "Feedback", "GoalHandle"]


class BoardError(wire.DownlinkError):
    """A request refused by the board (nack), or a board fault; ``code`` is the protocol's Code."""

    def __init__(self, message: str, code: int = 0) -> None:
        super().__init__(message)
        self.code = code
        self.code_name = wire.code_name(code) if code else ""


class TrajectoryInvalid(wire.DownlinkError):
    """The trajectory does not fit the board (names, sizes, limits, capacity): message names joint, board, "
      "cause."""


class BoardUnavailable(wire.DownlinkError, ConnectionError):
    """Not connected, or the board fell silent / closed the connection."""


class Feedback:
    """One feedback sample of the board, its times also in host terms."""

    __slots__ = ("board_time", "host_time", "received", "goal_id", "state", "time_from_start", "desired",
                 "actual", "desired_velocity", "steps", "buffer_fill", "buffer_free", "fault")

    def __init__(self, msg, host_time: float, received: float) -> None:
        pb = wire.pb()
        self.board_time = msg.board_time_us * 1e-6
        self.host_time = host_time
        self.received = received
        self.goal_id = msg.goal_id
        self.state = pb.State.Name(msg.state)
        self.time_from_start = msg.time_from_start
        self.desired = list(msg.desired)
        self.actual = list(msg.actual)
        self.desired_velocity = list(msg.desired_velocity)
        self.steps = list(msg.steps)
        self.buffer_fill = msg.buffer_fill
        self.buffer_free = msg.buffer_free
        self.fault = wire.code_name(msg.fault)


class GoalHandle:
    """A goal sent to the board: ``wait()`` for its result (SUCCEEDED, CANCELED, PREEMPTED, ABORTED)."""

    def __init__(self, goal_id: int, joint_names: Sequence[str], duration: float) -> None:
        self.goal_id = goal_id
        self.joint_names = list(joint_names)
        self.duration = duration
        self.start_board_time: Optional[float] = None
        self.start_host_time: Optional[float] = None
        self.accepted_at: Optional[float] = None      # host time the board acked the Start
        self.result: Optional[str] = None
        self.code = "OK"
        self.text = ""
        self._done = threading.Event()
        self.segments_sent = 0
        self.stream_done_at: Optional[float] = None   # host time the last segment was acked

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self, timeout: Optional[float] = None) -> Optional[str]:
        self._done.wait(timeout)
        return self.result

    def _finish(self, result: str, code: str = "OK", text: str = "") -> None:
        if self._done.is_set():
            return
        self.result, self.code, self.text = result, code, text
        self._done.set()
