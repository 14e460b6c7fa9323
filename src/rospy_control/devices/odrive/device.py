"""An ODrive axis on CAN Simple: ``<unit type="rospy_control/OdriveAxis">`` (firmware 0.5.x or 0.6.x,
chosen per axis with ``firmware``).

Frames follow the codec (:mod:`rospy_control.devices.odrive.codec`, whose docstring names the
documents: ODrive's ``can-protocol.rst`` and ``can_simple.cpp`` of fw-v0.5.6 for 0.5, ODrive's
``can_simple_messages`` / DBC of 0.6.10 and its CAN examples for 0.6).

An ODrive is not a request/reply device: it sends its **heartbeat** (axis error, axis state) and its
**encoder estimates** (position, velocity) cyclically, on its own; this unit consumes them as they
arrive and polls nothing.  What it sends, one frame per channel cycle:

* the setpoint of the current command -- ``Set_Input_Pos`` (position, velocity and torque
  feed-forward, the feed-forwards int16 x 0.001 saturated, never wrapped), ``Set_Input_Vel``,
  ``Set_Input_Torque`` -- every cycle, which also feeds the ODrive's own watchdog
  (``axis.config.watchdog_timeout``, configured on the device);
* ``Set_Controller_Mode`` when the command's mode needs another controller mode (POSITION ->
  POSITION_CONTROL, VELOCITY and DAMPING (velocity 0) -> VELOCITY_CONTROL, EFFORT and NONE (torque 0)
  -> TORQUE_CONTROL; input mode PASSTHROUGH) **before** any setpoint of that mode: the frame is not
  acknowledged, so no setpoint goes out until the second heartbeat after it came without error (a
  heartbeat has no sequence number: the first may have left before the request was processed), and
  never a setpoint of one mode while the axis may still be in another (e.g. ``Set_Input_Pos`` in
  TORQUE_CONTROL); the confirmed mode reported is that of the heartbeats in CLOSED_LOOP_CONTROL;
* at start-up and as the reset probe, a sequence outside the control path, one frame per cycle:
  ``Clear_Errors``, the configured gains (``Set_Pos_Gain``, ``Set_Vel_Gains``), ``Set_Controller_Mode``
  of the hold, confirmed as above, the first setpoint -- the hold the control loop wants, as the
  command watchdog holds (``watchdog_mode`` position: ``Set_Input_Pos`` at the measured position,
  damping: velocity 0, none: torque 0), kept until the caller commands --, then
  ``Set_Axis_State(CLOSED_LOOP_CONTROL)``; the axis is enabled when two
  consecutive heartbeats show CLOSED_LOOP_CONTROL without error.  A heartbeat still showing IDLE,
  with no procedure running, :attr:`OdriveAxis.STATE_RETRY` after the request means the request was
  lost: the sequence is sent again.  If closed loop is not confirmed within ``state_timeout`` the
  unit faults with a message naming the axis, its node and what the heartbeat shows; the control loop
  never waits for it;
* ``Set_Axis_State(IDLE)`` once on a fault and at shutdown; ``Estop`` on :meth:`OdriveAxis.estop`.

**Liveness** is "the cyclic frames keep arriving", judged once per cycle as every unit is judged: a
cycle counts as a miss when no frame of the axis arrived for longer than the encoder period (plus one
cycle), and the axis faults after ``N`` such on-time cycles once ``fault_timeout`` has passed since its
last frame (``N = max(3, ceil(fault_timeout / period))``); a cycle the channel judges late (the host
ran it late) neither counts nor ends a streak, and frames that queued up meanwhile are consumed at
the start of the next cycle, so a late host never looks like a dead axis.  The heartbeat is watched
likewise (its own period).

**Errors**: a heartbeat with an axis error faults the axis at once with the error's name as the
firmware names it (fw-v0.5.6 ``Axis::Error``, 0.6 ``ODriveError``), e.g. ``ODrive axis reported
MOTOR_OVER_TEMP (axis error 0x00002000)``; so does a heartbeat showing the axis left closed loop.  A
reset sends ``Clear_Errors`` and re-enters closed loop; it fails while the heartbeat still shows the
error.  Errors in the first heartbeat after ``Clear_Errors`` are not judged (it may predate it).

**Units**: the wire speaks turns and N·m at the motor; the unit speaks radians and N·m on its side of
``ratio`` (motor turns per unit turn): ``rad = turns * 2 pi / ratio``, ``N·m = motor N·m * ratio``.
"""
from __future__ import annotations

import math
from typing import Any, Dict, List, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.hardware_config.document import (
    AttributeReader, UnitInfo, non_negative, positive, to_float, to_int, to_str,
)
from rospy_control.devices.odrive import codec as od
from rospy_control.devices.actuator import Capabilities, ControlMode, MotorState
from rospy_control.devices.unit import frame_bits
from rospy_control.devices.odrive.cyclic import _ARMING, _CONTROL_MODE, _RUN, _WAIT, OdriveCyclicState
from rospy_control.devices.command import Command, Reply
from rospy_control.devices.streamed import StreamWatch

__all__ = ["OdriveAxis"]

logger = get_logger(__name__)

_MODES = (ControlMode.NONE, ControlMode.POSITION, ControlMode.VELOCITY, ControlMode.EFFORT,
          ControlMode.DAMPING)
_LIMP = Command(ControlMode.NONE)
_TAU = 2.0 * math.pi


class OdriveAxis(OdriveCyclicState):
    """One ODrive axis (one CAN node) on CAN Simple (see the module docstring)."""

    TYPE_NAME = "rospy_control/OdriveAxis"
    PROTOCOL = "ODrive CAN Simple"
    PROBE_REQUEST = "Clear_Errors + Set_Axis_State(CLOSED_LOOP_CONTROL)"
    CAPABILITIES = Capabilities(modes=frozenset(_MODES), position_velocity_ff=True, position_effort_ff=True,
                                velocity_effort_ff=True)
    COMMAND_DLC = 8
    REPLY_DLC = 8

    DEFAULT_RATIO = 1.0
    DEFAULT_HEARTBEAT_RATE = 0.1     # s, the device's default heartbeat period
    DEFAULT_ENCODER_RATE = 0.01      # s, the device's default encoder estimates period
    DEFAULT_STATE_TIMEOUT = 2.0      # s to confirm closed loop
    #: heartbeats in a row that confirm an axis state (the heartbeat carries no sequence number)
    CONFIRM_HEARTBEATS = 2
    #: Set_Axis_State is not acknowledged: an axis whose heartbeat still shows IDLE, with no
    #: procedure running, this long (s) after the request did not get it (a frame lost on the bus),
    #: and the start-up sequence is sent again, until ``state_timeout``
    STATE_RETRY = 0.25

    _state: MotorState

    def __init__(self, name: str, node_id: int, firmware: str = od.V06, ratio: float = DEFAULT_RATIO,
                 direction: int = 1, zero_offset: float = 0.0, joint: Optional[str] = None,
                 max_temperature: float = OdriveCyclicState.DEFAULT_MAX_TEMPERATURE,
                 fault_timeout: Optional[float] = None, watchdog_mode: Optional[str] = None,
                 heartbeat_rate: float = DEFAULT_HEARTBEAT_RATE, encoder_rate: float = DEFAULT_ENCODER_RATE,
                 state_timeout: float = DEFAULT_STATE_TIMEOUT, pos_gain: Optional[float] = None,
                 vel_gain: Optional[float] = None, vel_integrator_gain: Optional[float] = None,
                 torque_limit: float = math.inf, torque_constant: Optional[float] = None,
                 wrap: str = "off") -> None:
        try:
            od.check_node_id(node_id, name)
            self.firmware = od.parse_version(firmware)
        except ValueError as err:
            raise ConfigError(f"ODrive axis '{name}': {err}") from None
        if not ratio > 0 or not math.isfinite(ratio):
            raise ConfigError(f"ODrive axis '{name}': ratio must be a positive number, got {ratio!r}")
        if not heartbeat_rate > 0 or not encoder_rate > 0:
            raise ConfigError(f"ODrive axis '{name}': heartbeat_rate and encoder_rate must be > 0 s "
                              "(this unit "
                              f"consumes both cyclic messages), got {heartbeat_rate!r}, {encoder_rate!r}")
        if vel_integrator_gain is not None and vel_gain is None:
            raise ConfigError(f"ODrive axis '{name}': vel_integrator_gain needs vel_gain (Set_Vel_Gains "
                              "carries both)")
        self.node_id = node_id
        self.ratio = float(ratio)
        #: one motor turn (an incremental or single-turn encoder's span after a power cycle) at the unit
        self.WRAP_PERIOD = 2.0 * math.pi / self.ratio
        self.heartbeat_rate = float(heartbeat_rate)
        self.encoder_rate = float(encoder_rate)
        self.state_timeout = float(state_timeout)
        self.pos_gain = pos_gain
        self.vel_gain = vel_gain
        self.vel_integrator_gain = vel_integrator_gain
        self.torque_limit = float(torque_limit)
        self.torque_constant = torque_constant
        # can_id is the node's first id (Set_Axis_State and the setpoints go to node << 5 | cmd)
        super().__init__(name, od.arbitration_id(node_id, 0), fault_timeout)
        # the setpoints carry no gains (the axis keeps its own); kp 1 marks a position-holding command
        # for the step cap
        self._init_commanded(f"ODrive axis '{name}'", _LIMP, direction, zero_offset, joint, max_temperature,
                             watchdog_mode, "position", f"motor {name} command", position_kp=1.0,
                             position_kd=0.0, velocity_kd=0.0, wrap=wrap)
        self._wd.hold = _LIMP
        self._msg = can.Message(arbitration_id=od.arbitration_id(node_id, 0), is_extended_id=False,
                                data=bytearray(8))
        self._enabled = False
        self._temp: Optional[float] = None
        self._err = 0
        self._state = MotorState(name, 0.0, 0.0, 0.0, None, 0, False, ControlMode.NONE,
                                 ControlMode.NONE, False, "", 0.0, False, 0.0, False)
        # POSITION_RESOLUTION: f32 turns resolve far below anything the step cap is set to
        self._to_turns = self.ratio / _TAU
        self._to_rad = _TAU / self.ratio
        self._ids = {cmd: od.arbitration_id(node_id, cmd) for cmd in range(0x20)}
        self._phase = _WAIT
        self._queue: List[Tuple[int, bytes]] = []
        self._ctrl_sent: Optional[int] = None
        #: heartbeats still to come before setpoints of the mode just set go out
        self._ctrl_wait = 0
        #: the first setpoint of a start-up (kept once closed loop was requested)
        self._start_cmd: Optional[Command] = None
        self._setpoint_sent = False
        self._state_requested = False
        self._state_req_t = 0.0
        #: start-up sequences sent again because the axis stayed IDLE after Set_Axis_State
        self.state_retries = 0
        self._hb_matches = 0
        self._hb_since_clear = 0
        self._confirm: Optional[Tuple[ControlMode, int]] = None   # (mode, heartbeats still needed)
        self._estop = False
        self._have_encoder = False
        self._frames = StreamWatch("frames", self.encoder_rate)
        self._heartbeat = StreamWatch("heartbeat", self.heartbeat_rate)
        self._axis_error = 0
        self._axis_state = 0
        self._procedure_result: Optional[int] = None
        self._probe_t = 0.0
        self.heartbeats = 0         #: heartbeats received
        self.encoder_frames = 0     #: encoder estimates received
        self.estops = 0             #: Estop frames sent

    # == configuration ===================================================================================
    @classmethod
    def read_settings(cls, info: UnitInfo) -> Dict[str, Any]:
        el = info.element
        if info.channel is None:
            raise el.error("an ODrive axis needs a channel: set attribute 'channel' here or on an enclosing "
                           "<group>")
        gains = el.child("gains")
        if gains is not None:
            raise gains.error(
                "an ODrive axis has no <gains> element: its gains live on the device; set them with the "
                "attributes pos_gain ((turn/s)/turn), vel_gain (N.m/(turn/s)) and vel_integrator_gain "
                "(N.m/turn), sent at start-up")
        r = AttributeReader(el, ignore=("name", "type", "channel"))
        gain = "a number >= 0"
        kw = dict(
            node_id=r.get("node_id", to_int, check=lambda v: 0 <= v <= 0x3F,
                          expected="an ODrive node id 0..63 (CAN Simple ids are node_id << 5 | cmd, 11 bit)"),
            firmware=r.get("firmware", to_str, check=_firmware_ok,
                           expected="an ODrive firmware line: 0.5 (0.5.x, ODrive v3.6) or 0.6 (0.6.x, "
                                    "ODrive Pro / S1 / Micro)"),
            ratio=r.get("ratio", to_float, cls.DEFAULT_RATIO, check=positive,
                        expected="a positive number of motor turns per unit turn"),
            fault_timeout=r.seconds("fault_timeout", None),
            **cls.read_common(r),
            heartbeat_rate=r.get("heartbeat_rate", to_float, cls.DEFAULT_HEARTBEAT_RATE, check=positive,
                                 expected="the heartbeat period configured on the ODrive, in s (> 0)"),
            encoder_rate=r.get("encoder_rate", to_float, cls.DEFAULT_ENCODER_RATE, check=positive,
                               expected="the encoder estimates period configured on the ODrive, in s (> 0)"),
            state_timeout=r.seconds("state_timeout", cls.DEFAULT_STATE_TIMEOUT),
            pos_gain=r.get("pos_gain", to_float, None, check=non_negative, expected=gain),
            vel_gain=r.get("vel_gain", to_float, None, check=non_negative, expected=gain),
            vel_integrator_gain=r.get("vel_integrator_gain", to_float, None, check=non_negative,
                                      expected=gain),
            torque_limit=r.get("torque_limit", to_float, math.inf, check=positive,
                               expected="a positive torque at the motor (N.m)"),
            torque_constant=r.get("torque_constant", to_float, None, check=positive,
                                  expected="a positive torque constant (N.m/A)"),
        )
        r.finish()
        ft = kw["fault_timeout"]
        if ft is not None and ft <= 2.0 * kw["encoder_rate"]:
            raise el.error(f"attribute 'fault_timeout'='{ft:g}': expected more than twice encoder_rate "
                           f"({kw['encoder_rate']:g} s): silence is judged on the cyclic encoder estimates")
        return kw

    def configured(self) -> None:
        self.check_encodable()

    def encodable_ranges(self) -> Dict[str, Tuple[float, float]]:
        # the torque feed-forward of Set_Input_Pos is an int16 x 0.001 N.m at the motor
        if math.isfinite(self.torque_limit):
            return {"torque_limit": (0.0, od.FF_LIMIT)}
        return {}

    @property
    def startup_timeout(self) -> float:
        """Closed loop is confirmed within ``state_timeout`` (else the axis faults naming its state)."""
        return self.state_timeout + 0.5

    @property
    def effort_range(self) -> Tuple[float, float]:
        t = self.torque_limit * self.ratio
        return (-t, t)

    @property
    def detection_time(self) -> float:
        # a reset probe waits for the closed-loop confirmation, up to state_timeout
        return max(super().detection_time, self.state_timeout)

    def request_ids(self) -> Tuple[int, ...]:
        mine = set(self.reply_ids())
        return tuple(i for i in self._ids.values() if i not in mine)

    def reply_ids(self) -> Tuple[int, ...]:
        ids = [self._ids[od.CMD_HEARTBEAT], self._ids[od.CMD_GET_ENCODER_ESTIMATES]]
        if self.firmware == od.V06:
            ids += [self._ids[0x1C], self._ids[0x15]]   # Get_Torques, Get_Temperature (if sent cyclically)
        elif self.torque_constant is not None:
            ids.append(self._ids[od.CMD_GET_IQ])
        return tuple(ids)

    def bits_per_cycle(self) -> int:
        """One 8-byte setpoint per cycle plus the cyclic heartbeat and encoder estimates of one cycle
        (at the channel's period, known once it started; before that the setpoint only)."""
        per = frame_bits(8)
        if self._period > 0.0:
            per_second = 1.0 / self.heartbeat_rate + 1.0 / self.encoder_rate
            per += int(math.ceil(frame_bits(8) * self._period * per_second))
        return per

    def error_name(self, code: int) -> str:
        return f"{od.axis_error_text(self.firmware, code)} (axis error 0x{code:08X})"

    # == the codec's side (the setpoint frames) ==============================================================
    def encode_command(self, command: Command) -> bytes:
        """The setpoint frame of ``command`` (its id: :meth:`_setpoint_id`)."""
        m = command.mode
        tq = self._to_turns
        if m == ControlMode.POSITION:
            return od.pack_set_input_pos(command.position * tq, command.velocity * tq,
                                         command.effort / self.ratio)
        if m == ControlMode.VELOCITY:
            return od.pack_set_input_vel(command.velocity * tq, command.effort / self.ratio)
        if m == ControlMode.EFFORT:
            return od.pack_set_input_torque(command.effort / self.ratio)
        if m == ControlMode.DAMPING:
            return od.pack_set_input_vel(0.0, 0.0)
        return od.pack_set_input_torque(0.0)

    @staticmethod
    def _setpoint_cmd(mode: ControlMode) -> int:
        if mode == ControlMode.POSITION:
            return od.CMD_SET_INPUT_POS
        if mode in (ControlMode.VELOCITY, ControlMode.DAMPING):
            return od.CMD_SET_INPUT_VEL
        return od.CMD_SET_INPUT_TORQUE

    def decode_reply(self, arb_id: int, data) -> Optional[Reply]:
        """Encoder estimates as a :class:`Reply` (device side, rad), None for another frame."""
        if arb_id != self._ids[od.CMD_GET_ENCODER_ESTIMATES] or len(data) < 8:
            return None
        p, v = od.unpack_encoder_estimates(data)
        return Reply(p * self._to_rad, v * self._to_rad, self._eff_dev)

    def enable_frame(self) -> bytes:
        return od.pack_set_axis_state(od.AXIS_STATE_CLOSED_LOOP_CONTROL)

    def disable_frame(self) -> bytes:
        return od.pack_set_axis_state(od.AXIS_STATE_IDLE)

    # == extra commands ====================================================================================
    def estop(self) -> None:
        """Send ``Estop`` at the next cycle: the ODrive disarms and latches ESTOP_REQUESTED (the unit
        then faults naming it; a reset clears it)."""
        self._estop = True

    def clear_errors(self) -> int:
        """Clear the axis's errors and re-enter closed loop: the reset probe (:meth:`reset_fault`)."""
        return self.reset_fault()

    @property
    def axis_error(self) -> int:
        """The axis error of the latest heartbeat (0 = none)."""
        return self._axis_error

    # == channel contract (channel thread) ===============================================================
    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        super().activate(now, enable, fault_timeout, period, command_timeout)
        floor = 2.0 * self.encoder_rate + (period or 0.0)
        if self._timeout < floor:
            logger.warning("ODrive axis '%s': fault_timeout %.0f ms is shorter than twice its encoder period "
                           "(%.0f ms) plus a cycle: using %.0f ms", self.name, 1000.0 * self._timeout,
                           1000.0 * self.encoder_rate, 1000.0 * floor)
            self._timeout = floor
        self._enabled = False
        # silence is judged on any frame of the axis against fault_timeout, and on the heartbeat
        self._frames.limit, self._frames.misses = self._timeout, self._miss_limit
        self._heartbeat.limit = max(3.0 * self.heartbeat_rate, self._timeout)
        self._heartbeat.misses = self._miss_limit
        self._start_sequence(now)

    def _start_sequence(self, now: float) -> None:
        """The start-up / reset sequence (sent one frame per cycle from the next poll)."""
        self._phase = _WAIT if not self._have_encoder else _ARMING
        q = [(od.CMD_CLEAR_ERRORS, od.pack_clear_errors(self.firmware))]
        if self.pos_gain is not None:
            q.append((od.CMD_SET_POS_GAIN, od.pack_set_pos_gain(self.pos_gain)))
        if self.vel_gain is not None:
            q.append((od.CMD_SET_VEL_GAINS, od.pack_set_vel_gains(
                self.vel_gain, self.vel_integrator_gain if self.vel_integrator_gain is not None else 0.0)))
        self._queue = q
        self._ctrl_sent = None
        self._ctrl_wait = 0
        self._start_cmd = None
        self._setpoint_sent = False
        self._state_requested = False
        self._hb_matches = 0
        self._hb_since_clear = -(1 << 30)   # heartbeat errors are judged from the 2nd after Clear_Errors
        self._enabled = False
        self._probe_t = now

    def _start_hold(self) -> Command:
        """The first setpoint, as the control loop holds a joint it does not command (``watchdog_mode``):
        the measured position (until closed loop is requested, then kept), velocity 0, or torque 0."""
        if self._state_requested and self._start_cmd is not None:
            return self._start_cmd
        wm = self.watchdog_mode
        if wm == "position":
            hold = Command(ControlMode.POSITION, self.direction * self._pos + self.zero_offset,
                           kp=self.position_kp, kd=self.position_kd)
        elif wm == "damping":
            hold = Command(ControlMode.DAMPING, kd=self.velocity_kd)
        else:
            hold = _LIMP
        self._start_cmd = hold
        return hold

    def _send_sequence_again(self, now: float) -> None:
        """The axis did not act on Set_Axis_State: send the whole sequence again (a lost Clear_Errors,
        gain or controller-mode frame is sent again with it); the ``state_timeout`` runs on."""
        self.state_retries += 1
        waited = 1000.0 * (now - self._state_req_t)
        started = self._probe_t
        self._start_sequence(now)
        self._probe_t = started
        logger.warning("ODrive axis '%s' (node %d): still IDLE %.0f ms after "
                       "Set_Axis_State(CLOSED_LOOP_CONTROL); sending the start-up sequence again",
                       self.name, self.node_id, waited)

    def poll(self, now: float) -> Optional[can.Message]:
        self._poll_start(now)
        msg = self._msg
        exit_due = self._exit_due()
        if exit_due is not None:
            return self._frame(od.CMD_SET_AXIS_STATE, self.disable_frame()) if exit_due else None
        if not self._active:
            return None
        if self._estop:
            self._estop = False
            self.estops += 1
            return self._frame(od.CMD_ESTOP, od.pack_estop())
        cmd = self._next_command(now)
        if self._phase == _WAIT:
            return None      # nothing before the first encoder estimate of the axis
        if self._queue:
            cmd_id, data = self._queue.pop(0)
            if cmd_id == od.CMD_CLEAR_ERRORS:
                self._hb_since_clear = 0
            return self._frame(cmd_id, data)
        if self._phase != _RUN or not self._wd.seen:
            # until closed loop is confirmed and the caller commands: the hold, never a stale target
            cmd = self._start_hold()
        ctrl = _CONTROL_MODE[cmd.mode]
        if ctrl != self._ctrl_sent:
            # the mode first: no setpoint of a mode goes out before the axis shows it took the mode
            self._ctrl_sent = ctrl
            self._ctrl_wait = self.CONFIRM_HEARTBEATS
            self._confirm = (cmd.mode, self.CONFIRM_HEARTBEATS)
            return self._frame(od.CMD_SET_CONTROLLER_MODE,
                               od.pack_set_controller_mode(ctrl, od.INPUT_MODE_PASSTHROUGH))
        if self._ctrl_wait > 0:
            return None      # Set_Controller_Mode is not acknowledged: its heartbeats confirm it
        if self._phase == _ARMING and self._setpoint_sent and not self._state_requested:
            self._state_requested = True
            self._state_req_t = now
            self._hb_matches = 0
            return self._frame(od.CMD_SET_AXIS_STATE, self.enable_frame())
        else:
            self._setpoint_sent = True
            if self._inflight != cmd.mode and (self._confirm is None or self._confirm[0] != cmd.mode):
                self._confirm = (cmd.mode, 0)   # same controller mode: the next frame of the axis confirms
        self._inflight = cmd.mode
        data = self._encode(cmd)
        msg.arbitration_id = self._ids[self._setpoint_cmd(cmd.mode)]
        msg.data = data  # type: ignore[assignment]
        msg.dlc = len(data)
        return msg

    def _frame(self, cmd_id: int, data: bytes) -> can.Message:
        msg = self._msg
        msg.arbitration_id = self._ids[cmd_id]
        msg.data = bytearray(data)
        msg.dlc = len(data)
        return msg

    def _next_command(self, now: float) -> Command:
        """The caller's command after the command watchdog and the position-step cap (the bookkeeping of
        :class:`~rospy_control.devices.commanded.CommandedActuator`, on decoded values)."""
        seq, cmd = self._cmd_buf.read_with_sequence()
        if self._wd.observe(now, seq) and self._wd.active:
            self._wd_release()
        if self._phase != _RUN:
            self._step_cap.last = None
        cmd = self._held(seq, cmd)
        if self._step_cap.step is not None:
            cmd = self._cap_step(cmd)
        return cmd

    def awaited_replies(self) -> int:
        return 0     # nothing is awaited: the axis's frames are cyclic

    def end_cycle(self, now: float, on_time: bool = True) -> MotorState:
        if self._active and (self._probing or not self._fault):
            self._judge_liveness(now, on_time)
        if self._probing:
            self.judge(now, on_time)    # the probe's outcome (confirmed, error, or failed below)
        fault = self._fault
        s = self._state = MotorState(
            self.name, self._pos, self._vel, self._eff, self._temp, self._err,
            self._enabled and not fault, self._mode, self._cmd_buf.read_from_rt().mode, fault,
            self._fault_reason, self._last_reply if self._received else 0.0, self._received,
            self._fault_time, self._wd.active, self._volt, self._amps)
        return s

    def exit_message(self) -> Optional[can.Message]:
        return can.Message(arbitration_id=self._ids[od.CMD_SET_AXIS_STATE], is_extended_id=False,
                           data=self.disable_frame())

    # -- fault life cycle -----------------------------------------------------------------------------------
    def on_fault(self) -> None:
        super().on_fault()
        self._enabled = False
        self._phase = _ARMING
        self._confirm = None

    def on_probe_start(self, now: float) -> None:
        self._enabled = False
        self._err = 0
        self._frames.streak = self._heartbeat.streak = 0
        self._start_sequence(now)

    def on_probe_failed(self) -> None:
        super().on_probe_failed()
        self._enabled = False
        self._phase = _ARMING

    def on_recovered(self, now: float) -> None:
        super().on_recovered(now)
        self._confirm = None


def _firmware_ok(text: str) -> bool:
    try:
        od.parse_version(text)
    except ValueError:
        return False
    return True
