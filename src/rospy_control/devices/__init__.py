"""Hardware units: a name, a state and (for actuators) a command; composable into groups.

Modules: :mod:`.unit` (:class:`HardwareUnit`, :class:`UnitGroup`, :class:`CanUnit` and the channel
contract), :mod:`.actuator` (the device contract of actuators: :class:`ActuatorUnit`,
:class:`ControlMode`, :class:`MotorState`, :class:`Capabilities`), :mod:`.commanded`
(:class:`CommandedActuator`: the command side every actuator shares -- commands, watchdog, step cap,
fault life cycle), its two bases :mod:`.request_reply` (:class:`RequestReplyActuator`: one reply per
frame) and :mod:`.streamed` (:class:`StreamedStateActuator`: state the device sends by itself, judged
per :class:`StreamWatch`), one folder per protocol (codec and device: :mod:`.mit` with
:class:`Motor`, :mod:`.damiao`, :mod:`.robstride`, :mod:`.odrive`, :mod:`.cia402`), :mod:`.example`
(:class:`ExampleMotor`, the device of ``docs/writing_a_device.md``) and :mod:`.sensors`
(:class:`CanSensor` and the sensor types with their states).  Everything is importable from here.

Threading model
---------------
A unit belongs to one channel.  The channel's read/write thread is the only writer of a unit's
*measured* state: it calls the hooks of :class:`CanUnit` (``poll`` frame to send this cycle,
``on_frame`` decode a received frame, ``end_cycle`` judge timeouts and publish an immutable state
record, ...) -- these underscore methods are the channel contract and must stay cheap (they run per
frame at up to kHz rates).

Any other thread may call the public command methods (:meth:`Motor.set_command`, ...).  They encode
the frame immediately and publish it with one atomic attribute store, so they never block and the
channel thread only copies ready bytes.  Fault resets and zeroing are *requests* carried out by the
channel thread at its next cycle.

States are immutable ``NamedTuple`` records (:class:`MotorState`, :class:`ImuState`, ...) replaced
once per cycle, so a reader always sees values from one cycle.

Faults
------
A unit is blamed only for its own silence: it goes to FAULT when ``N`` consecutive requests that went
out stayed unanswered, ``N = max(3, ceil(fault_timeout / period))``, *and* ``fault_timeout`` elapsed
since the first of them.  Any reply (also a late one, drained at the start of a later cycle) ends the
streak.  Cycles the channel judges not on time (the host held the thread up, see
:mod:`.timing`) neither count nor end a streak.  A device reporting an error (error byte, error flag,
over-temperature) faults at once.

A fault latches.  :meth:`CanUnit.reset_fault` asks for a *probe*: the channel thread re-enables the
unit (enter-motor-mode for a motor, a poll for a sensor) and the unit recovers only on a valid reply;
silence (the same N-misses rule) or a reply still reporting the error fails the reset.  While the
probe runs, the published state keeps ``fault=True``, so the layers above never see it flicker.
"""
from __future__ import annotations

from rospy_control.devices.unit import (
    CanUnit, HardwareUnit, SharedReply, UnitGroup, frame_bits, miss_limit,
)
from rospy_control.devices.actuator import (
    WATCHDOG_MODES, ActuatorState, ActuatorUnit, Capabilities, ControlMode, HomingState, MotorState,
    UnsupportedCommand,
)
from rospy_control.devices.commanded import CommandedActuator
from rospy_control.devices.example.device import ExampleMotor
from rospy_control.devices.mit.device import Motor
from rospy_control.devices.request_reply import Command, Reply, RequestReplyActuator
from rospy_control.devices.streamed import StreamedStateActuator, StreamWatch
from rospy_control.devices.sensors.device import (
    CanSensor, ContactSensor, ContactState, Encoder, EncoderState, ForceTorqueSensor, ForceTorqueState,
    ImuSensor, ImuState, SensorAttribute,
)

__all__ = [
    "ControlMode", "HardwareUnit", "UnitGroup", "CanUnit", "Motor", "Encoder", "ImuSensor",
    "ContactSensor", "ForceTorqueSensor", "MotorState", "EncoderState", "ImuState", "ContactState",
    "ForceTorqueState", "SharedReply", "WATCHDOG_MODES", "miss_limit", "CanSensor", "SensorAttribute",
    "frame_bits", "ActuatorUnit", "ActuatorState", "Capabilities", "HomingState", "UnsupportedCommand",
    "Command", "Reply",
    "CommandedActuator", "RequestReplyActuator", "StreamedStateActuator", "StreamWatch", "ExampleMotor",
]

# The classes are documented, named in messages ("does not derive from ...") and pickled under this
# package, whichever of its modules defines them.
for _cls in (HardwareUnit, UnitGroup, CanUnit, SharedReply, ControlMode, ActuatorUnit, Capabilities,
             HomingState, UnsupportedCommand, Command, Reply, CommandedActuator, RequestReplyActuator,
             StreamedStateActuator, StreamWatch, ExampleMotor, Motor, MotorState, CanSensor,
             Encoder, EncoderState, ImuSensor, ImuState, ContactSensor, ContactState, ForceTorqueSensor,
             ForceTorqueState, SensorAttribute):
    _cls.__module__ = __name__
del _cls
