""":class:`RobStrideMotor`: a Xiaomi CyberGear or RobStride (RS00 ... RS06) motor on its private CAN
protocol (codec :mod:`rospy_control.devices.robstride.codec`, which names the documents each
frame follows: the CyberGear instruction manual chapter 4 [CG] and RobStride's sample program and
manuals [RS]).

Every frame has a 29-bit id carrying the communication type (bits 28-24), a data area (bits 23-8)
and the destination (bits 7-0).  What this unit sends, host -> motor, with the host id
(``host_id``) in id bits 15-8:

* type 3 **enable** and type 4 **stop** (byte 0 = 1 also clears latched faults: sent only by a reset
  probe), type 6 **set mechanical zero** [CG 4.1.4-4.1.6];
* type 1 **operation control** (the MIT-like mode, ``run_mode`` 0): torque in id bits 23-8, position,
  velocity, Kp, Kd big-endian u16 mapped onto the model's ranges [CG 4.1.2];
* type 18 **parameter write** (RAM) and type 17 **parameter read** [CG 4.1.8, 4.1.9]: ``run_mode``
  (0x7005) to switch between operation control, position mode (1; or 5, RobStride's CSP) and speed
  mode (2); ``loc_ref`` / ``spd_ref`` as the targets of those run modes; ``limit_spd`` / ``vel_max``,
  ``limit_cur``; anything else of the parameter table on request (:meth:`write_parameter`,
  :meth:`read_parameter`);
* type 24 **active reporting** on, where ``active_report`` is set [RS].

What it reads, motor -> host (motor id in bits 15-8, the host id as destination), routed to it by
:meth:`extended_routes` (type, motor id and host id under the mask; the status bits vary):

* type 2 **feedback**, the answer to types 1, 3, 4, 6, 18: position, velocity, torque, temperature,
  the mode (reset / calibration / run, bits 23-22) and six fault bits (bits 21-16) [CG 4.1.3];
* type 24 **active reports** (the type-2 layout, sent unasked every ``EPScan_time``): consumed as
  state and liveness;
* type 17 **parameter replies**, type 21 **fault frames** (a 32-bit fault word with every bit named
  as the manual names it [CG 4.1.10]).

Control modes: MIT, POSITION, EFFORT, DAMPING, NONE and (by default) VELOCITY are type-1 frames in
run_mode 0, with the configured gains; ``position_run_mode="position"`` (or ``"csp"``) and
``velocity_run_mode="velocity"`` send POSITION / VELOCITY as ``loc_ref`` / ``spd_ref`` writes in the
firmware's own run modes (feed-forwards dropped).  A change of run mode is the manual's sequence --
stop, write ``run_mode``, the run mode's limit and a target that holds still (``loc_ref`` = the
measured position, ``spd_ref`` = 0), read ``run_mode`` back, enable -- and the new control mode is
confirmed only after the read-back shows the new run mode and the motor answered a command in it.
"""
from __future__ import annotations

import collections
from typing import Deque, Dict, Optional, Tuple, Union, cast

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.hardware_config.document import (
    AttributeReader, non_negative, to_bool, to_float, to_int, to_str,
)
from rospy_control.devices.robstride import codec as rs
from rospy_control.devices.actuator import Capabilities, ControlMode, check_choice
from rospy_control.devices.request_reply import Command, Reply, RequestReplyActuator

__all__ = ["RobStrideMotor"]

logger = get_logger(__name__)

_MODES = frozenset((ControlMode.NONE, ControlMode.POSITION, ControlMode.VELOCITY, ControlMode.EFFORT,
                    ControlMode.DAMPING, ControlMode.MIT))
_POSITION_RUN_MODES = ("operation", "position", "csp")
_VELOCITY_RUN_MODES = ("operation", "velocity")
#: the motor's answer to each frame kind: a type-2 feedback, a type-17 reply, or nothing
_ANSWERED, _READ, _SILENT = "feedback", "read", "none"
#: read-backs of run_mode that may disagree before the switch is given up as a fault
_SWITCH_ATTEMPTS = 3
#: consecutive command replies in reset mode before the unit enables the motor again
_RESET_REPLIES = 3
_MIDDLE_ID_MASK = 0x1F00FFFF  # communication type, motor id (15-8), destination (7-0)


class _Frame(bytes):
    """The data of one frame with its 29-bit id and what kind of frame it is (the base class's cycle
    sends one data block per cycle; this protocol needs a different id for almost every frame)."""

    arb_id: int
    answer: str
    command: bool


def _wire(frame: rs.Frame, answer: str = _ANSWERED, command: bool = False) -> _Frame:
    w = _Frame(frame.data)
    w.arb_id = frame.arbitration_id
    w.answer = answer
    w.command = command
    return w


class RobStrideMotor(RequestReplyActuator):
    """A CyberGear / RobStride motor: ``<unit type="rospy_control/RobStrideMotor">`` (see the module
    docstring; attributes in docs/hardware_xml.md)."""

    TYPE_NAME = "rospy_control/RobStrideMotor"
    PROTOCOL = "the RobStride/CyberGear protocol"
    CAPABILITIES = Capabilities(modes=_MODES, position_velocity_ff=True, position_effort_ff=True,
                                velocity_effort_ff=True, gains=True, set_zero=True)
    EXTENDED_IDS = True
    DEFAULT_FAULT_TIMEOUT = 0.1

    def __init__(self, name: str, can_id: int, model: str = "cybergear", host_id: int = rs.DEFAULT_HOST_ID,
                 position_run_mode: str = "operation", velocity_run_mode: str = "operation",
                 speed_limit: Optional[float] = None, current_limit: Optional[float] = None,
                 active_report: bool = False, report_interval: Optional[float] = None, **kw) -> None:
        if not 0 <= can_id <= 0xFF:
            raise ConfigError(f"motor '{name}': can_id {can_id} is not a RobStride/CyberGear motor id "
                              "(0-255)")
        if not 0 <= host_id <= 0xFF:
            raise ConfigError(f"motor '{name}': host_id {host_id} is not a CAN id of this protocol (0-255)")
        try:
            self.limits = rs.limits_for(model)
        except ValueError as err:
            raise ConfigError(f"motor '{name}': {err}") from None
        check_choice(name, "position_run_mode", position_run_mode, _POSITION_RUN_MODES)
        check_choice(name, "velocity_run_mode", velocity_run_mode, _VELOCITY_RUN_MODES)
        if position_run_mode == "csp" and model.lower() == "cybergear":
            raise ConfigError(f"motor '{name}': position_run_mode 'csp' (run_mode 5) exists on RobStride "
                              "firmware only, not on the CyberGear")
        #: ``cybergear`` or ``rs00`` ... ``rs06``: the ranges every 16-bit field is mapped onto
        self.model = model.lower()
        self.host_id = host_id
        lim = self.limits
        # what the frames of this model can carry (instance values of the base class's class attributes)
        self._gain_ranges = {"position_kp": (lim.kp_min, lim.kp_max), "position_kd": (lim.kd_min, lim.kd_max),
                             "velocity_kd": (lim.kd_min, lim.kd_max)}
        self.POSITION_RESOLUTION = (lim.p_max - lim.p_min) / 0xFFFF
        self.position_run_mode = position_run_mode
        self.velocity_run_mode = velocity_run_mode
        self.speed_limit = lim.v_max if speed_limit is None else float(speed_limit)
        self.current_limit = current_limit
        self.active_report = active_report
        self.report_interval = report_interval
        super().__init__(name, can_id, **kw)
        for attr, value, lo, hi in (("speed_limit", self.speed_limit, 0.0, lim.v_max),
                                    ("current_limit", current_limit, 0.0, lim.i_max)):
            if value is not None and hi is not None and not lo <= value <= hi:
                raise ConfigError(f"motor '{name}': {attr}={value:g} is outside what {self.model} can carry "
                                  f"[{lo:g}, {hi:g}]")
        if self.model == "cybergear" and (active_report or report_interval is not None):
            what = "active_report" if active_report else f"report_interval={report_interval:g}"
            raise ConfigError(f"motor '{name}': {what} is not in the CyberGear's protocol (active reports, "
                              "type 24, and EPScan_time are RobStride's): use an rs0x model or leave it off")
        if report_interval is not None:
            try:
                rs.report_interval_value(report_interval)
            except rs.RobStrideRangeError as err:
                raise ConfigError(f"motor '{name}': {err}") from None
        #: the run_mode the motor confirmed by its read-back (None: unknown, or a switch in progress)
        self.run_mode: Optional[int] = None
        #: the latest type-21 fault and warning words (0: none)
        self.fault_word = 0
        self.warning_word = 0
        #: latest value of each parameter read (:meth:`read_parameter`), by name
        self.parameters: Dict[str, Optional[float]] = {}
        #: the motor's mode field of its latest feedback (0 reset, 1 calibration, 2 run)
        self.device_mode: Optional[int] = None
        self.active_reports = 0
        self.fault_frames = 0
        self.switches = 0
        self._steps: Deque[Tuple[str, object]] = collections.deque()    # start-up / switch sequence
        self._requests: Deque[_Frame] = collections.deque()             # parameter reads / writes of callers
        self._target_run_mode = 0
        self._switch_failures = 0
        self._inflight_frame: Optional[_Frame] = None
        self._clear_on_stop = False
        self._report_pending = False
        self._reset_replies = 0

    # == configuration ===================================================================================
    @classmethod
    def read_attributes(cls, r: AttributeReader) -> dict:
        raw = r.element.attributes.get("can_id")
        try:
            can_id = int(raw, 0) if raw is not None else None
        except ValueError:
            can_id = None
        if can_id is not None and not 0 <= can_id <= 0xFF:
            raise r.element.error(f"attribute 'can_id'='{raw}': a RobStride/CyberGear motor id is 0..255 "
                                  "(8 bits of the 29-bit id)")
        kw = dict(
            model=r.get("model", to_str, check=lambda v: v.lower() in rs.MODELS,
                        expected="the motor model: one of " + ", ".join(rs.MODELS)),
            host_id=r.get("host_id", to_int, rs.DEFAULT_HOST_ID, check=lambda v: 0 <= v <= 0xFF,
                          expected="the host's id 0..255"),
            position_run_mode=r.get("position_run_mode", to_str, "operation",
                                    check=lambda v: v in _POSITION_RUN_MODES,
                                    expected="one of " + ", ".join(_POSITION_RUN_MODES)),
            velocity_run_mode=r.get("velocity_run_mode", to_str, "operation",
                                    check=lambda v: v in _VELOCITY_RUN_MODES,
                                    expected="one of " + ", ".join(_VELOCITY_RUN_MODES)),
            speed_limit=r.get("speed_limit", to_float, None, check=non_negative, expected="rad/s >= 0"),
            current_limit=r.get("current_limit", to_float, None, check=non_negative, expected="A >= 0"),
            active_report=r.get("active_report", to_bool, False),
            report_interval=r.get("report_interval", to_float, None, check=lambda v: 0.01 <= v <= 327.68,
                                  expected="seconds, 0.01 .. 327.68 (EPScan_time steps of 5 ms)"),
        )
        lim = rs.limits_for(kw["model"])
        for attr, hi in (("speed_limit", lim.v_max), ("current_limit", lim.i_max)):
            value = kw[attr]
            if value is not None and hi is not None and value > hi:
                raise r.element.error(f"attribute '{attr}'='{value:g}' is outside what {kw['model']} can "
                                      f"carry [0, {hi:g}]")
        return kw

    # == what the frames carry ===========================================================================
    def _run_mode_of(self, mode: ControlMode) -> int:
        if mode == ControlMode.POSITION:
            return rs.RUN_MODES[self.position_run_mode]
        if mode == ControlMode.VELOCITY:
            return rs.RUN_MODES[self.velocity_run_mode]
        return 0

    def encode_command(self, command: Command) -> bytes:
        rm = self._run_mode_of(command.mode)
        if rm != self.run_mode:
            # not in the run mode this command needs: switch first (the command follows once confirmed)
            self._begin_switch(rm, clear=False)
            return self._step_frame(self._steps.popleft())
        m = command.mode
        if rm == 0:
            if m == ControlMode.MIT or m == ControlMode.POSITION:
                p, v, kp, kd, t = command.position, command.velocity, command.kp, command.kd, command.effort
            elif m == ControlMode.VELOCITY:
                p, v, kp, kd, t = 0.0, command.velocity, 0.0, command.kd, command.effort
            elif m == ControlMode.EFFORT:
                p, v, kp, kd, t = 0.0, 0.0, 0.0, 0.0, command.effort
            elif m == ControlMode.DAMPING:
                p, v, kp, kd, t = 0.0, 0.0, 0.0, command.kd, 0.0
            else:
                p = v = kp = kd = t = 0.0
            return _wire(rs.encode_operation_control(self.can_id, p, v, kp, kd, t, self.limits), command=True)
        if m == ControlMode.POSITION:
            return _wire(rs.encode_param_write(self.can_id, "loc_ref", command.position, self.host_id),
                         command=True)
        v = max(self.limits.v_min, min(self.limits.v_max, command.velocity))
        return _wire(rs.encode_param_write(self.can_id, "spd_ref", v, self.host_id), command=True)

    def decode_reply(self, arb_id: int, data) -> Optional[Reply]:
        try:
            fb = rs.decode_feedback(arb_id, bytes(data), self.limits)
        except rs.RobStrideFrameError:
            return None
        self.device_mode = fb.mode
        return Reply(fb.position, fb.velocity, fb.torque, fb.temperature, fb.faults)

    def enable_frame(self) -> bytes:
        return _wire(rs.encode_enable(self.can_id, self.host_id))

    def disable_frame(self) -> bytes:
        return _wire(rs.encode_stop(self.can_id, self.host_id))

    def zero_frame(self) -> bytes:
        return _wire(rs.encode_set_zero(self.can_id, self.host_id))

    def error_name(self, code: int) -> str:
        names = ", ".join(rs.feedback_fault_names(code)) or "a fault"
        text = f"{names} (feedback fault bits 0x{code:02X})"
        if self.fault_word:
            text += "; fault frame: " + ", ".join(rs.fault_names(self.fault_word))
        return text

    def encodable_ranges(self) -> Dict[str, Tuple[float, float]]:
        return dict(self._gain_ranges)

    @property
    def effort_range(self) -> Tuple[float, float]:
        return (self.limits.t_min, self.limits.t_max)

    def request_ids(self) -> Tuple[int, ...]:
        return ()   # 29-bit ids only: nothing of the standard id space is taken

    def extended_routes(self) -> Tuple[Tuple[int, int], ...]:
        tail = (self.can_id << 8) | self.host_id
        # the CyberGear manual's table writes the type-21 fault frame's id as for a request (host id
        # in bits 15-8, motor id in 7-0); motors send it as every other reply: both are taken
        table = (rs.FAULT_FEEDBACK << 24) | (self.host_id << 8) | self.can_id
        return tuple((_MIDDLE_ID_MASK, (t << 24) | tail)
                     for t in (rs.FEEDBACK, rs.ACTIVE_REPORT, rs.PARAM_READ, rs.FAULT_FEEDBACK)) \
            + ((_MIDDLE_ID_MASK, table),)

    def exit_message(self) -> Optional[can.Message]:
        f = rs.encode_stop(self.can_id, self.host_id)
        return can.Message(arbitration_id=f.arbitration_id, is_extended_id=True, data=f.data)

    # == parameters (any thread) =========================================================================
    def write_parameter(self, param: Union[int, str], value: float) -> None:
        """Write a parameter to the motor's RAM at the next cycles (type 18), checked against its type
        and the model's range.  ``run_mode`` is the unit's own: use the control modes.

        :raises ValueError: unknown, read-only or out of range (naming it).
        """
        spec = rs.param_spec(param)
        if spec.name == "run_mode":
            raise ValueError(f"motor '{self.name}': run_mode follows the control mode "
                             "(position_run_mode / velocity_run_mode); it is not written directly")
        self._requests.append(_wire(rs.encode_param_write(self.can_id, spec.index, value, self.host_id,
                                                          self.limits, self.model)))

    def read_parameter(self, param: Union[int, str]) -> None:
        """Ask for a parameter (type 17); its value appears in :attr:`parameters` under its name."""
        spec = rs.param_spec(param)
        self.parameters.pop(spec.name, None)
        self._requests.append(_wire(rs.encode_param_read(self.can_id, spec.index, self.host_id), _READ))

    # == the cycle (channel thread) ======================================================================
    def activate(self, now: float, enable: bool, fault_timeout: float, period: Optional[float] = None,
                 command_timeout: float = 0.0) -> None:
        super().activate(now, enable, fault_timeout, period, command_timeout)
        self._steps.clear()
        self.run_mode = None
        self._inflight_frame = None
        self._begin_switch(self._run_mode_of(self.command_mode), clear=False)

    def _begin_switch(self, run_mode: int, clear: bool) -> None:
        """Queue the manual's sequence to (re)enter ``run_mode``: stop, write run_mode, the mode's limit
        and a target that holds still, read run_mode back; the base then sends enable."""
        self._target_run_mode = run_mode
        self.run_mode = None
        self._enabled = False
        self._steps.clear()
        self._steps.append(("stop", clear))
        self._steps.append(("write", ("run_mode", run_mode)))
        if run_mode in (1, 5):
            name = "limit_spd" if run_mode == 5 or self.model == "cybergear" else "vel_max"
            self._steps.append(("write", (name, self.speed_limit)))
            self._steps.append(("hold", None))
        elif run_mode == 2:
            if self.current_limit is not None:
                self._steps.append(("write", ("limit_cur", self.current_limit)))
            self._steps.append(("write", ("spd_ref", 0.0)))
        if self.report_interval is not None:
            self._steps.append(("write", ("EPScan_time", rs.report_interval_value(self.report_interval))))
        self._steps.append(("read", "run_mode"))
        self._report_pending = self.active_report

    def _step_frame(self, step: Tuple[str, object]) -> _Frame:
        kind, arg = step
        cid, host = self.can_id, self.host_id
        if kind == "stop":
            self.switches += 1
            return _wire(rs.encode_stop(cid, host, clear_fault=bool(arg)))
        if kind == "write":
            name, value = cast(Tuple[str, float], arg)
            return _wire(rs.encode_param_write(cid, name, value, host))
        if kind == "hold":
            # the position run mode's target before enabling: where the joint is (nothing jumps)
            return _wire(rs.encode_param_write(cid, "loc_ref", self.direction * self._pos + self.zero_offset,
                                               host))
        if kind == "report":
            return _wire(rs.encode_active_report(cid, True, host), _SILENT)
        return _wire(rs.encode_param_read(cid, str(arg), host), _READ)

    def poll(self, now: float) -> Optional[can.Message]:
        if self._reset_req != self._reset_seen:
            self.begin_poll(now)
        w: Optional[_Frame] = None
        if self._active and (self._probing or not self._fault):
            if self._steps:
                w = self._step_frame(self._steps.popleft())
            elif self._enabled and self._report_pending:
                self._report_pending = False
                w = self._step_frame(("report", None))
            elif self._enabled and self._requests and not self._probing:
                w = self._requests.popleft()
        if w is not None:
            self._published_mode = self._state.mode
            msg = self._msg
            self._last_tx = now
            self._step_cap.last = None
            self._inflight_enter = False
            self._awaiting = 0 if w.answer == _SILENT else 1
            self._sent_at = now
        else:
            sent = super().poll(now)
            if sent is None:
                return None
            msg = sent
            w = cast(_Frame, msg.data)
            if not w.command:
                self._encoded = (None, b"")   # a switch step stood in for the command: never cache it
        self._inflight_frame = w
        msg.arbitration_id = w.arb_id
        msg.data = bytes(w)  # type: ignore[assignment]  # python-can sends any bytes-like
        return msg

    def on_frame(self, arb_id: int, data, now: float) -> int:
        comm_type = (arb_id >> 24) & 0x1F
        if comm_type == rs.FEEDBACK:
            w = self._inflight_frame
            if w is not None and (w.command or w.arb_id >> 24 == rs.ENABLE or self._exit_sent):
                n = super().on_frame(arb_id, data, now)
                if w.command and self.device_mode == rs.MODE_RESET and not self._err:
                    self._reset_replies += 1
                else:
                    self._reset_replies = 0
                if (self._reset_replies >= _RESET_REPLIES and not self._fault and not self._probing
                        and self._active):
                    # the motor left run mode by itself (its CAN timeout, a power cycle): enter it again.
                    # One such reply is not enough: a late answer to an earlier stop looks the same
                    self._reset_replies = 0
                    logger.warning("motor '%s': the motor reports reset mode while commanded; enabling again",
                                   self.name)
                    self._begin_switch(self._target_run_mode, clear=False)
                return n
            # the answer to a switch step or a parameter write: state and liveness, no mode confirmation
            mode = self._mode
            n = super().on_frame(arb_id, data, now)
            self._mode = mode
            return n
        if comm_type == rs.ACTIVE_REPORT:
            try:
                fb = rs.decode_feedback(arb_id, bytes(data), self.limits)
            except rs.RobStrideFrameError:
                self.bad_frames += 1
                return 0
            self.active_reports += 1
            self._consume_report(fb, now)
            return 0
        if comm_type == rs.PARAM_READ:
            try:
                reply = rs.decode_param_reply(arb_id, bytes(data))
            except rs.RobStrideFrameError:
                self.bad_frames += 1
                return 0
            self.parameters[reply.name] = reply.value
            self.got_reply(now, state=False)   # a parameter answer: alive, no position
            if reply.name == "run_mode":
                self._confirm_run_mode(reply.value)
            if self._awaiting:
                self._awaiting = 0
                return 1
            return 0
        if comm_type == rs.FAULT_FEEDBACK:
            try:
                report = rs.decode_fault_frame(arb_id, bytes(data))
            except rs.RobStrideFrameError:
                self.bad_frames += 1
                return 0
            self.fault_frames += 1
            self.warning_word = report.warning
            self.got_reply(now, state=False)   # a fault report carries no position
            if report.fault:
                self.fault_word = report.fault
                if self._probing:
                    # may have been sent before the probe's clear-fault: the probe's feedback decides
                    return 0
                names = ", ".join(report.fault_names)
                self.report_error(f"motor reported {names} (fault frame 0x{report.fault:08X})",
                                  f"motor still reports {names} (fault frame 0x{report.fault:08X})")
            return 0
        self.bad_frames += 1
        return 0

    def _consume_report(self, fb: rs.Feedback, now: float) -> None:
        self._measured(fb.position, fb.velocity, fb.torque)
        self._temp = fb.temperature
        self.device_mode = fb.mode
        if fb.faults:
            self._err = fb.faults
            name = self.error_name(fb.faults)
            self.report_error(f"motor reported {name}", f"motor still reports {name}")
        self.got_reply(now)

    def _confirm_run_mode(self, value: Optional[float]) -> None:
        if value is not None and int(value) == self._target_run_mode:
            self.run_mode = int(value)
            self._switch_failures = 0
            return
        self._switch_failures += 1
        want = self._target_run_mode
        if self._switch_failures >= _SWITCH_ATTEMPTS:
            self._switch_failures = 0
            self.report_error(f"motor did not switch run_mode to {want} ({rs.RUN_MODE_NAMES.get(want)}): it "
                              f"reads back {value!r}", f"motor still refuses run_mode {want}")
            return
        self._begin_switch(want, clear=False)

    # -- fault life cycle ---------------------------------------------------------------------------------
    def on_probe_start(self, now: float) -> None:
        super().on_probe_start(now)
        self.fault_word = 0
        # a reset: stop with clear-fault, then the run mode again, then enable
        self._begin_switch(self._run_mode_of(self.command_mode), clear=True)

    def on_probe_failed(self) -> None:
        super().on_probe_failed()
        self._steps.clear()

    def on_recovered(self, now: float) -> None:
        super().on_recovered(now)
        # the command is limp (NONE) now: its run mode follows with the next command
