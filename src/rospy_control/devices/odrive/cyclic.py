"""What an ODrive axis sends by itself, received (CAN Simple, fw-v0.5.6 and 0.6): the cyclic encoder
estimates, heartbeat, torques (0.6 Get_Torques), temperature and Iq, decoded into the axis's state; the
heartbeat's part in the start-up (closed loop confirmed by two consecutive heartbeats, a lost
Set_Axis_State sent again) and in confirming a controller mode; and the liveness judged on them (see
:mod:`.device` for the rules and the firmware documents followed).
"""
from __future__ import annotations

import math
from typing import Callable, ClassVar, Optional, Tuple

from rospy_control.devices.actuator import ControlMode
from rospy_control.devices.odrive import codec as od
from rospy_control.devices.streamed import StreamedStateActuator, StreamWatch

__all__ = ["OdriveCyclicState"]

#: the ODrive controller mode of each ControlMode
_CONTROL_MODE = {
    ControlMode.POSITION: od.CONTROL_MODE_POSITION,
    ControlMode.VELOCITY: od.CONTROL_MODE_VELOCITY,
    ControlMode.DAMPING: od.CONTROL_MODE_VELOCITY,
    ControlMode.EFFORT: od.CONTROL_MODE_TORQUE,
    ControlMode.NONE: od.CONTROL_MODE_TORQUE,
}

# phases of the axis (channel thread)
_WAIT = 0      # waiting for the first encoder estimate (the first setpoint holds the measured position)
_ARMING = 1    # start-up / probe sequence sent, closed loop not confirmed yet
_RUN = 2       # closed loop confirmed


class OdriveCyclicState(StreamedStateActuator):
    """The receive side of :class:`.device.OdriveAxis`."""

    # the axis's (declared for the type checker)
    CONFIRM_HEARTBEATS: ClassVar[int]
    STATE_RETRY: ClassVar[float]
    node_id: int
    firmware: str
    ratio: float
    torque_constant: Optional[float]
    encoder_rate: float
    heartbeat_rate: float
    state_timeout: float
    heartbeats: int
    encoder_frames: int
    _to_rad: float
    _phase: int
    _confirm: Optional[Tuple[ControlMode, int]]
    _ctrl_sent: Optional[int]
    _ctrl_wait: int
    _have_encoder: bool
    _hb_matches: int
    _hb_since_clear: int
    _probe_t: float
    _state_req_t: float
    _state_requested: bool
    _axis_state: int
    _send_sequence_again: Callable[[float], None]
    error_name: Callable[[int], str]
    _temp: Optional[float]
    #: any frame of the axis (expected every encoder period) and its heartbeat
    _frames: StreamWatch
    _heartbeat: StreamWatch

    @property
    def axis_state(self) -> str:
        """The axis state of the latest heartbeat, by name (``"UNDEFINED"`` before the first)."""
        return od.AXIS_STATES.get(self._axis_state, str(self._axis_state))

    _eff_dev = 0.0   # torque at the unit's side of the ratio, device direction (from Get_Torques / Get_Iq)
    _amps: Optional[float] = None   # Iq measured (A), from Get_Iq
    _volt: Optional[float] = None   # bus voltage (V), from Get_Bus_Voltage_Current

    def on_frame(self, arb_id: int, data, now: float) -> int:
        cmd_id = arb_id & 0x1F
        if cmd_id == od.CMD_GET_ENCODER_ESTIMATES:
            if len(data) < 8:
                self.bad_frames += 1
                return 0
            p, v = od.unpack_encoder_estimates(data)
            d = self.direction
            self._pos = d * (p * self._to_rad - self.zero_offset)
            self._vel = d * v * self._to_rad
            self.encoder_frames += 1
            if not self._have_encoder:
                self._have_encoder = True
                if self._phase == _WAIT:
                    self._phase = _ARMING
            self._confirm_frame()
        elif cmd_id == od.CMD_HEARTBEAT:
            try:
                hb = od.unpack_heartbeat(self.firmware, data)
            except od.OdriveFrameError:
                self.bad_frames += 1
                return 0
            self.heartbeats += 1
            self._heartbeat.heard(now)
            self._on_heartbeat(hb, now)
        elif cmd_id == 0x1C and self.firmware == od.V06:     # Get_Torques: target, estimate (N.m motor)
            if len(data) < 8:
                self.bad_frames += 1
                return 0
            t = od.unpack_float_pair(data)[1] * self.ratio
            self._eff_dev = t
            self._eff = self.direction * t
        elif cmd_id == 0x15 and self.firmware == od.V06:     # Get_Temperature: FET, motor (deg C)
            if len(data) < 8:
                self.bad_frames += 1
                return 0
            fet, motor = od.unpack_float_pair(data)
            temp = self._temp = motor if math.isfinite(motor) and motor != 0.0 else fet
            if temp > self.max_temperature:
                what = f"over-temperature: {temp:.0f} C > max_temperature {self.max_temperature:.0f} C"
                self.report_error(what, "axis still reports " + what)
        elif cmd_id == od.CMD_GET_IQ:                        # Get_Iq: setpoint, measured (A)
            if len(data) < 8:
                self.bad_frames += 1
                return 0
            iq = self._amps = od.unpack_float_pair(data)[1]
            if self.torque_constant is not None:
                t = iq * self.torque_constant * self.ratio
                self._eff_dev = t
                self._eff = self.direction * t
        elif cmd_id == od.CMD_GET_BUS_VOLTAGE_CURRENT:       # bus voltage (V), bus current (A)
            if len(data) < 8:
                self.bad_frames += 1
                return 0
            self._volt = od.unpack_float_pair(data)[0]
        else:
            return 0
        self._frames.heard(now)
        self.got_reply(now, state=self._have_encoder)   # a heartbeat before any estimate: no position yet
        return 0

    def _confirm_frame(self) -> None:
        c = self._confirm
        if c is not None and c[1] == 0 and self._phase == _RUN and self._ctrl_sent == _CONTROL_MODE[c[0]]:
            self._mode = c[0]
            self._confirm = None

    def _on_heartbeat(self, hb: od.Heartbeat, now: float) -> None:
        self._axis_error = err = hb.axis_error
        self._axis_state = hb.axis_state
        self._procedure_result = hb.procedure_result
        self._err = err
        self._hb_since_clear += 1
        judged = self._hb_since_clear >= 2    # the first heartbeat after Clear_Errors may predate it
        closed = hb.axis_state == od.AXIS_STATE_CLOSED_LOOP_CONTROL
        busy = hb.procedure_result == od.PROCEDURE_RESULT_BUSY
        if self._ctrl_wait > 0 and not err:
            self._ctrl_wait -= 1     # the heartbeat after the one that may predate the mode confirms it
        if err and judged:
            name = self.error_name(err)
            self.report_error(f"ODrive axis reported {name}", f"axis still reports {name}")
            return
        if self._phase == _ARMING:
            if not self._state_requested:
                return
            if hb.axis_state == od.AXIS_STATE_IDLE and not busy and not err \
                    and now - self._state_req_t >= self.STATE_RETRY:
                self._send_sequence_again(now)
                return
            # firmware 0.6.11 and later report BUSY for as long as the axis is in closed loop (the
            # requested state is a procedure that runs until disarmed): the state itself confirms
            if closed and not err:
                self._hb_matches += 1
                if self._hb_matches >= self.CONFIRM_HEARTBEATS:
                    self._phase = _RUN
                    self._enabled = True
                    self._step_cap.last = None
                    if self._probing:
                        self._probe_ok = True
            else:
                self._hb_matches = 0
            return
        if self._phase == _RUN:
            if not closed and not self._fault:
                self.set_fault(f"ODrive axis left CLOSED_LOOP_CONTROL: heartbeat shows {self.axis_state}"
                               + self._result_text())
                return
            c = self._confirm
            if c is not None and c[1] > 0 and self._ctrl_sent == _CONTROL_MODE[c[0]] and closed and not err:
                left = c[1] - 1
                if left == 0:
                    self._mode = c[0]
                    self._confirm = None
                else:
                    self._confirm = (c[0], left)

    def _result_text(self) -> str:
        r = self._procedure_result
        if r is None or r == od.PROCEDURE_RESULT_SUCCESS:
            return ""
        return f", procedure result {od.PROCEDURE_RESULTS.get(r, str(r))}"

    def streams(self) -> Tuple[StreamWatch, ...]:
        return (self._frames, self._heartbeat)

    def _judge_liveness(self, now: float, on_time: bool) -> None:
        lost = self.lost_stream(now, on_time)
        if not on_time:
            return      # a late host: this cycle neither counts nor ends a streak
        why = None
        if lost is self._frames:
            self.reply_timeouts += 1
            why = (f"no frame from ODrive node {self.node_id} (heartbeat, encoder estimates) for "
                   f"{1000.0 * lost.silence:.0f} ms (fault_timeout {1000.0 * self._timeout:.0f} ms)")
        elif lost is self._heartbeat:
            why = (f"no heartbeat from ODrive node {self.node_id} for {1000.0 * lost.silence:.0f} ms "
                   f"(heartbeat_rate {1000.0 * self.heartbeat_rate:.0f} ms)")
        if self._probing:
            if why is not None and self._probe_error is None:
                self._probe_error = "reset failed: " + why
            elif self._probe_error is None and not self._probe_ok \
                    and now - self._probe_t > self.state_timeout:
                self._probe_error = "reset failed: " + self._not_closed_text()
            return
        if why is not None:
            self.set_fault(why)
        elif self._phase != _RUN and now - self._probe_t > self.state_timeout:
            self.set_fault(self._not_closed_text())

    def _not_closed_text(self) -> str:
        if self.heartbeats == 0:
            seen = "no heartbeat received"
        else:
            seen = (f"heartbeat shows {self.axis_state}, axis error "
                    f"{od.axis_error_text(self.firmware, self._axis_error)}{self._result_text()}")
        return (f"ODrive axis '{self.name}' (node {self.node_id}) did not enter CLOSED_LOOP_CONTROL within "
                f"{self.state_timeout:g} s ({seen})")
