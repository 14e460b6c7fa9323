"""A simulated CubeMars AK motor with the V3 firmware in MIT mode (protocol:
:mod:`rospy_control.middleware.protocols.cubemars`).

* An MIT command on ``0x800 + id`` (extended) is applied at once and answered with a feedback frame on
  ``0x2900 + id``; with ``upload_rate`` > 0 the motor also uploads feedback at that period from
  :meth:`tick` (which of the two the firmware does is unverified; answering each command is what the
  V3 sources read rely on).
* Set-origin on ``0x500 + id``: the current position becomes 0 (no answer).
* Errors: :meth:`set_fault` with a name of
  :data:`~rospy_control.middleware.protocols.cubemars.ERRORS` reports that code in every feedback
  frame and turns the output off while the condition lasts (the documents name no clear-error
  command for V3: the error goes when the condition goes).  ``silent``: the motor stops transmitting.
* ``firmware_timeout`` (s, 0 = off): no command for that long makes the output limp until the next
  command (a model of the MIT firmwares' CAN timeout; V3's own is unverified).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import can

from rospy_control.middleware.protocols import cubemars as cm
from rospy_control.middleware.protocols.mit import MitLimits
from rospy_control.middleware.simulation.device import Impedance, PhysicalState, SimulatedDevice

__all__ = ["SimulatedCubeMarsV3"]

_CODES = {v: k for k, v in cm.ERRORS.items()}


class SimulatedCubeMarsV3(SimulatedDevice):
    """The V3 MIT-mode firmware of one CubeMars motor (see the module docstring)."""

    DEVICE_FAULTS = tuple(cm.ERRORS.values())

    def __init__(self, name: str, controller_id: int, limits: MitLimits = MitLimits(),
                 scale: cm.CubeMarsV3Scale = cm.CubeMarsV3Scale(), layout: str = cm.LAYOUT_V3,
                 upload_rate: float = 0.0, firmware_timeout: float = 0.0) -> None:
        super().__init__(name)
        self.controller_id = controller_id
        self.limits = limits
        self.scale = scale
        self.layout = layout
        self.upload_rate = upload_rate
        self.firmware_timeout = firmware_timeout
        self.zero = 0.0
        self.command: Optional[Tuple[float, float, float, float, float]] = None
        self.last_rx: Optional[float] = None
        self._last_upload: Optional[float] = None
        self.timeouts = 0

    @property
    def error(self) -> int:
        return _CODES.get(self.fault or "", 0)

    def listen_ids(self) -> List[Tuple[int, bool]]:
        return [(cm.command_id(self.controller_id), True), (cm.origin_id(self.controller_id), True)]

    def reply_ids(self) -> List[Tuple[int, bool]]:
        return [(cm.feedback_id(self.controller_id), True)]

    def expire(self, state: PhysicalState, now: float) -> None:
        fw = self.firmware_timeout
        if fw > 0.0 and self.command is not None and self.last_rx is not None and now - self.last_rx > fw:
            self.command = None
            self.timeouts += 1

    def impedance(self, position: float, velocity: float) -> Optional[Impedance]:
        if self.command is None or self.error:
            return None
        p, v, kp, kd, t = self.command
        return Impedance(p + self.zero, v, kp, kd, t, max(abs(self.limits.t_min), abs(self.limits.t_max)))

    def feedback(self, state: PhysicalState) -> can.Message:
        temp = state.temperature
        hot = self.fault in ("motor over-temperature", "MOSFET over-temperature")
        if hot and self.fault_value is not None:
            temp = self.fault_value
        data = cm.pack_feedback(state.position - self.zero, state.velocity, state.torque, self.scale, temp,
                                self.error)
        return self._message(cm.feedback_id(self.controller_id), data, extended=True)

    def tick(self, state: PhysicalState, now: float) -> List[can.Message]:
        self.expire(state, now)
        r = self.upload_rate
        if self.fault == "silent" or r <= 0.0:
            return []
        if self._last_upload is None or now - self._last_upload >= r:
            self._last_upload = now
            return [self.feedback(state)]
        return []

    def _handle(self, msg: can.Message, state: PhysicalState, now: float) -> List[can.Message]:
        if not msg.is_extended_id or msg.is_error_frame or msg.is_remote_frame:
            return []
        packet, cid = cm.split_id(msg.arbitration_id)
        if cid != self.controller_id or msg.arbitration_id >> 16:
            return []
        if packet == cm.PACKET_SET_ORIGIN and len(msg.data) >= 1:
            self.zero = state.position
            return []
        if packet != cm.PACKET_SET_MIT:
            return []
        try:
            cmd = cm.unpack_command(bytes(msg.data), self.limits, self.layout)
        except cm.CubeMarsFrameError:
            return []
        self.last_rx = now
        self.command = cmd
        return [self.feedback(state)]
