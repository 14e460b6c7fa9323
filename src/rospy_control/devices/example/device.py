""":class:`ExampleMotor`: a complete device on the fictional example protocol
(:mod:`rospy_control.devices.example.codec`), written as ``docs/writing_a_device.md`` explains.

Everything protocol-free (the command cycle, the watchdog, the step cap, faults and resets) comes
from :class:`~rospy_control.devices.RequestReplyActuator`; this class only says what the
frames can carry and translates :class:`~.request_reply.Command` / :class:`~.request_reply.Reply` to
and from them.  Its simulated counterpart is
:class:`~rospy_control.simulator.example.ExampleMotorPeer`.
"""
from __future__ import annotations

from typing import Optional, Tuple

from rospy_control.exceptions import ConfigError
from rospy_control.devices.example import codec as example
from rospy_control.devices.actuator import Capabilities, ControlMode
from rospy_control.devices.request_reply import Command, Reply, RequestReplyActuator

__all__ = ["ExampleMotor"]

# contract mode -> the protocol's mode byte
_MODES = {ControlMode.NONE: example.MODE_LIMP, ControlMode.POSITION: example.MODE_POSITION,
          ControlMode.VELOCITY: example.MODE_VELOCITY, ControlMode.EFFORT: example.MODE_EFFORT,
          ControlMode.DAMPING: example.MODE_DAMPING}

_ENABLE = example.special_frame(example.OP_ENABLE)
_DISABLE = example.special_frame(example.OP_DISABLE)
_ZERO = example.special_frame(example.OP_SET_ZERO)


class ExampleMotor(RequestReplyActuator):
    """An actuator speaking the example protocol: ``<unit type="rospy_control/ExampleMotor">``.

    Position with velocity feed-forward (no torque feed-forward: the frame has no room for it),
    velocity, effort, damping, limp; gains per motor, not per command (no MIT mode).
    """

    TYPE_NAME = "rospy_control/ExampleMotor"
    PROTOCOL = "the example protocol"
    CAPABILITIES = Capabilities(modes=frozenset(_MODES), position_velocity_ff=True, set_zero=True)
    GAIN_RANGES = {"position_kp": (0.0, example.KP_MAX), "position_kd": (0.0, example.KD_MAX),
                   "velocity_kd": (0.0, example.KD_MAX)}
    EFFORT_LIMIT = example.EFFORT_MAX
    POSITION_RESOLUTION = example.POSITION_RESOLUTION
    ERRORS = example.ERRORS

    def encode_command(self, command: Command) -> bytes:
        return example.pack_command(example.ExampleCommand(
            _MODES[command.mode], command.position, command.velocity, command.effort, command.kp, command.kd))

    def decode_reply(self, arb_id: int, data) -> Optional[Reply]:
        if len(data) != 8:
            return None
        r = example.unpack_reply(data)
        return Reply(r.position, r.velocity, r.effort, r.temperature, r.error)

    def enable_frame(self) -> bytes:
        return _ENABLE

    def disable_frame(self) -> bytes:
        return _DISABLE

    def zero_frame(self) -> bytes:
        return _ZERO

    def reply_ids(self) -> Tuple[int, ...]:
        reply_id = example.REPLY_ID_BASE + self.can_id
        if reply_id > 0x7FF:
            raise ConfigError(f"motor '{self.name}' ({self.where}): can_id 0x{self.can_id:X} is too large "
                              f"for the example protocol (replies on 0x{example.REPLY_ID_BASE:X} + can_id "
                              "must fit 11 bits: can_id <= 0x6FF)")
        return (reply_id,)
