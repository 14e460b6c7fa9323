"""A simulated CubeMars AK motor with the V3 firmware in MIT mode (protocol:
:mod:`rospy_control.devices.cubemars.codec`).

* An MIT command on ``0x800 + id`` (extended) is applied at once and answered with a feedback frame on
  ``0x2900 + id``; with ``upload_rate`` > 0 the motor also uploads feedback at that period from
  :meth:`tick` (which of the two the firmware does is unverified; answering each command is what the
  V3 sources read rely on).
* Set-origin on ``0x500 + id``: the current position becomes 0 (no answer).
* Errors: :meth:`set_fault` with a name of
  :data:`~rospy_control.devices.cubemars.codec.ERRORS` reports that code in every feedback
  frame and turns the output off while the condition lasts (the documents name no clear-error
  command for V3: the error goes when the condition goes).  ``silent``: the motor stops transmitting.
* ``firmware_timeout`` (s, 0 = off): no command for that long makes the output limp until the next
  command (a model of the MIT firmwares' CAN timeout; V3's own is unverified).
"""
from __future__ import annotations

from typing import List, Optional, Tuple

import can

from rospy_control.hardware_config.document import non_negative, to_float
from rospy_control.devices.cubemars import codec as cm
from rospy_control.devices.mit.codec import MitLimits
from rospy_control.simulator import peers
from rospy_control.simulator.device import Impedance, PhysicalState, SimulatedDevice
from rospy_control.simulator.joint import SimulatedProtocolMotor

__all__ = ["SimulatedCubeMarsV3", "peer_for_unit"]

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

    def zero_position(self) -> float:
        return self.zero

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


def peer_for_unit(unit) -> Optional[SimulatedProtocolMotor]:
    """The simulated V3 motor answering for an MIT :class:`~rospy_control.middleware.Motor` with
    ``firmware="cubemars_v3"`` (:mod:`.peers`); None for a plain MIT motor, which the firmware's own
    :class:`~.motor.SimulatedMotor` simulates.

    It has the unit's controller id, limits, frame layout and feedback scale, on a joint built from the
    unit's ``<simulation>`` element (:func:`.peers.joint_model`, torque limit the larger of |t_min|,
    |t_max|); its own attributes there: ``upload_rate`` (s between feedback frames uploaded on its own,
    0 = only answers, the default) and ``firmware_timeout`` (s, 0 = none).
    """
    if getattr(unit, "firmware", "mit") != "cubemars_v3":
        return None
    limits = unit.limits
    joint = peers.joint_model(unit, {"torque_limit": max(abs(limits.t_min), abs(limits.t_max))})
    r = joint.reader
    upload, timeout = 0.0, 0.0
    if r is not None:
        upload = r.get("upload_rate", to_float, 0.0, check=non_negative, expected="a period in s >= 0")
        timeout = r.get("firmware_timeout", to_float, 0.0, check=non_negative, expected="a number of s >= 0")
        r.finish()
    device = SimulatedCubeMarsV3(unit.name, unit.can_id, limits, unit.scale, unit.frame_layout,
                                 upload_rate=upload, firmware_timeout=timeout)
    return SimulatedProtocolMotor(device, joint)
