"""A simulated ODrive axis speaking CAN Simple (protocol: :mod:`rospy_control.devices.odrive.codec`).

One instance is one axis (one node id), firmware line 0.5 or 0.6.  Following ODrive's documents and
fw-v0.5.6's ``can_simple.cpp`` (see the codec's docstring):

* **Cyclic messages**: :meth:`tick` sends the heartbeat every ``heartbeat_rate`` s and the encoder
  estimates every ``encoder_rate`` s (defaults 0.1 and 0.01 as on the device; 0 = off), each when
  its period has passed since it was last sent.
* **Gets** (:data:`~rospy_control.devices.odrive.codec.GET_COMMANDS`) are answered on the same
  id only for an RTR frame or a data frame of DLC 0; a DLC-8 data frame gets no answer.
* **Axis state**: Set_Axis_State(CLOSED_LOOP_CONTROL) arms the axis unless an axis error is set (then
  it stays IDLE; on 0.6 the procedure result is DISARMED); IDLE disarms; the calibration states run a
  calibration that completes at once (back to IDLE, result SUCCESS).  With ``state_delay`` > 0 the
  requested state is reached only after that long, the 0.6 procedure result reading BUSY meanwhile.
* **Errors**: Estop sets ESTOP_REQUESTED, the watchdog WATCHDOG_TIMER_EXPIRED, an injected condition
  (:meth:`set_fault` with one of the line's axis error names, e.g. ``OVER_TEMP`` on 0.5,
  ``MOTOR_OVER_TEMP`` on 0.6) its bit; any error disarms the axis (IDLE).  Clear_Errors clears
  them, except a condition that still lasts, whose bit comes back at once.
* **Watchdog** (``watchdog_timeout`` s, 0 = off): every frame to the node feeds it (as fw 0.5.6's
  ``do_command``; assumed on 0.6).  The simulation checks it only while in closed loop.
* **Zero**: 0.5 Set_Linear_Count (counts of ``cpr`` per turn) and 0.6 Set_Absolute_Position (turn)
  set the position estimate.

Control law (:meth:`impedance`), in the motor's turns converted to rad: position control is the
ODrive cascade ``vel_cmd = pos_gain (pos_setpoint - pos) + vel_ff`` (clamped at ``vel_limit``),
``torque = vel_gain (vel_cmd - vel) + vel_integrator + torque_ff`` with
``d vel_integrator/dt = vel_integrator_gain (vel_cmd - vel)`` (clamped at the torque limit, reset
when disarmed); velocity control the inner loop; torque control the torque.  The input filters
(ramps, trapezoidal trajectories) are not modelled: every input mode behaves as passthrough.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Tuple

import can

from rospy_control.hardware_config.document import non_negative, to_bool, to_float, to_str
from rospy_control.devices.odrive import codec as od
from rospy_control.simulator import peers
from rospy_control.simulator.device import Impedance, PhysicalState, SimulatedDevice
from rospy_control.simulator.joint import SimulatedProtocolMotor

__all__ = ["SimulatedOdrive", "peer_for_unit"]

_TAU = 2.0 * math.pi
_CALIBRATION_STATES = (2, 3, 4, 6, 7, 10, 11, 12, 13, 14)


class SimulatedOdrive(SimulatedDevice):
    """The CAN Simple firmware of one ODrive axis (see the module docstring)."""

    def __init__(self, name: str, node_id: int, version: str = od.V06, heartbeat_rate: float = 0.1,
                 encoder_rate: float = 0.01, watchdog_timeout: float = 0.0, pos_gain: float = 20.0,
                 vel_gain: float = 0.16, vel_integrator_gain: float = 0.32, vel_limit: float = 10.0,
                 torque_limit: float = 5.0,
                 torque_constant: float = 0.05, cpr: int = 8192, state_delay: float = 0.0,
                 ratio: float = 1.0) -> None:
        super().__init__(name)
        od.arbitration_id(node_id, 0)   # validates the node id
        self.node_id = node_id
        #: set when the axis took a new node id (0.5 Set_Axis_Node_ID): the firmware routes frames anew
        self.ids_changed = False
        self.version = od.parse_version(version)
        self.DEVICE_FAULTS = tuple(n for n in od.AXIS_ERRORS[self.version].values()
                                   if n not in ("WATCHDOG_TIMER_EXPIRED", "ESTOP_REQUESTED"))
        self.heartbeat_rate = heartbeat_rate
        self.encoder_rate = encoder_rate
        self.watchdog_timeout = watchdog_timeout
        self.pos_gain = pos_gain           # (turn/s)/turn
        self.vel_gain = vel_gain           # N m/(turn/s)
        self.vel_integrator_gain = vel_integrator_gain   # N m/turn
        #: the velocity integrator's torque (N m)
        self.integrator = 0.0
        self.vel_limit = vel_limit         # turn/s
        self.torque_limit = torque_limit   # N m
        self.torque_constant = torque_constant
        self.cpr = cpr
        self.state_delay = state_delay
        if not ratio > 0:
            raise ValueError(f"ratio must be positive, got {ratio!r}")
        #: motor turns per turn of the simulated shaft (the unit's side): rad of the shaft per motor turn
        self.ratio = ratio
        self._k = _TAU / ratio
        self.axis_state = od.AXIS_STATE_IDLE
        self.axis_error = 0
        self.procedure_result = od.PROCEDURE_RESULT_SUCCESS
        self.control_mode = od.CONTROL_MODE_POSITION
        self.input_mode = od.INPUT_MODE_PASSTHROUGH
        self.input_pos = 0.0      # turn
        self.input_vel = 0.0      # turn/s
        self.input_torque = 0.0   # N m
        #: position estimate = shaft turns + offset (turn)
        self.offset = 0.0
        self._pending: Optional[Tuple[int, float]] = None   # (requested state, when it is reached)
        self._last_heartbeat: Optional[float] = None
        self._last_encoder: Optional[float] = None
        self.last_feed: Optional[float] = None
        #: counts of what happened, for tests and diagnostics
        self.watchdog_expiries = 0
        self.commands: Dict[int, int] = {}  # cmd id -> frames received

    # -- helpers -----------------------------------------------------------------------------------
    def _id(self, cmd: int) -> int:
        return (self.node_id << 5) | cmd

    def position_estimate(self, state: PhysicalState) -> float:
        return state.position / self._k + self.offset

    def zero_position(self) -> float:
        # the estimate is shaft turns + offset: the shaft reads 0 at -offset turns
        return -self.offset * self._k

    def _condition_bits(self) -> int:
        if self.fault in self.DEVICE_FAULTS:
            return od.axis_error_bit(self.version, self.fault)
        return 0

    def _set_error(self, bits: int) -> None:
        self.axis_error |= bits
        if bits:
            self._disarm()

    def _disarm(self) -> None:
        if self.procedure_result == od.PROCEDURE_RESULT_BUSY:
            self.procedure_result = od.PROCEDURE_RESULT_DISARMED
        self.axis_state = od.AXIS_STATE_IDLE
        self._pending = None
        self.integrator = 0.0

    def _fault_changed(self) -> None:
        self._set_error(self._condition_bits())

    @property
    def armed(self) -> bool:
        return self.axis_state == od.AXIS_STATE_CLOSED_LOOP_CONTROL

    # -- SimulatedDevice ---------------------------------------------------------------------------
    def listen_ids(self) -> List[Tuple[int, bool]]:
        return [(self._id(cmd), False) for cmd in range(0x20)]

    def reply_ids(self) -> List[Tuple[int, bool]]:
        return self.listen_ids()

    def expire(self, state: PhysicalState, now: float) -> None:
        if self._pending is not None and now >= self._pending[1]:
            target = self._pending[0]
            self._pending = None
            self._enter(target)
        wd = self.watchdog_timeout
        if wd > 0.0 and self.armed and self.last_feed is not None and now - self.last_feed > wd:
            self.watchdog_expiries += 1
            self._set_error(od.WATCHDOG_TIMER_EXPIRED[self.version])

    def tick(self, state: PhysicalState, now: float) -> List[can.Message]:
        self.expire(state, now)
        out: List[can.Message] = []
        if self.fault == "silent":
            return out
        hb = self.heartbeat_rate
        if hb > 0.0 and (self._last_heartbeat is None or now - self._last_heartbeat >= hb):
            self._last_heartbeat = now
            out.append(self._message(self._id(od.CMD_HEARTBEAT), self.heartbeat(state)))
        enc = self.encoder_rate
        if enc > 0.0 and (self._last_encoder is None or now - self._last_encoder >= enc):
            self._last_encoder = now
            out.append(self._message(self._id(od.CMD_GET_ENCODER_ESTIMATES), self.encoder_estimates(state)))
        return out

    def _vel_cmd(self, position: float) -> Optional[float]:
        """The velocity loop's setpoint (rad/s), None when the velocity loop is not in use."""
        vlim = self.vel_limit * self._k
        if self.control_mode == od.CONTROL_MODE_VELOCITY:
            v = self.input_vel * self._k
        elif self.control_mode == od.CONTROL_MODE_POSITION:
            p_des = (self.input_pos - self.offset) * self._k
            v = self.pos_gain * (p_des - position) + self.input_vel * self._k
        else:
            return None
        return max(-vlim, min(vlim, v))

    def step(self, position: float, velocity: float, dt: float) -> None:
        v_cmd = self._vel_cmd(position) if self.armed else None
        if v_cmd is None:
            self.integrator = 0.0
            return
        lim = self.torque_limit
        i = self.integrator + self.vel_integrator_gain / self._k * (v_cmd - velocity) * dt
        self.integrator = lim if i > lim else (-lim if i < -lim else i)

    def impedance(self, position: float, velocity: float) -> Optional[Impedance]:
        if not self.armed:
            return None
        if self.control_mode == od.CONTROL_MODE_TORQUE:
            r = self.ratio
            return Impedance(0.0, 0.0, 0.0, 0.0, self.input_torque * r, self.torque_limit * r)
        v_cmd = self._vel_cmd(position)
        if v_cmd is None:
            return None   # voltage control: not modelled
        r = self.ratio
        kd = self.vel_gain / self._k * r             # N m per rad/s of the shaft
        torque = (self.input_torque + self.integrator) * r
        return Impedance(0.0, v_cmd, 0.0, kd, torque, self.torque_limit * r)

    # -- payloads ----------------------------------------------------------------------------------
    def trajectory_done(self, state: PhysicalState) -> bool:
        if self.input_mode != od.INPUT_MODE_TRAP_TRAJ or self.control_mode != od.CONTROL_MODE_POSITION:
            return True
        return abs(self.position_estimate(state) - self.input_pos) < 1e-3

    def heartbeat(self, state: PhysicalState) -> bytes:
        v05 = self.version == od.V05
        err = self.axis_error
        return od.pack_heartbeat(
            self.version, err, self.axis_state, self.trajectory_done(state), self.procedure_result,
            motor_error_flag=v05 and bool(err & 0x40), encoder_error_flag=v05 and bool(err & 0x100),
            controller_error_flag=v05 and bool(err & 0x200))

    def encoder_estimates(self, state: PhysicalState) -> bytes:
        return od.pack_encoder_estimates(self.position_estimate(state), state.velocity / self._k)

    def _get(self, cmd: int, state: PhysicalState) -> Optional[bytes]:
        if cmd == od.CMD_GET_ENCODER_ESTIMATES:
            return self.encoder_estimates(state)
        if cmd == od.CMD_GET_IQ:
            iq = state.torque / self.ratio / self.torque_constant
            return od.pack_float_pair(iq, iq)
        if cmd == od.CMD_GET_BUS_VOLTAGE_CURRENT:
            return od.pack_float_pair(state.bus_voltage, 0.0)
        if self.version == od.V06:
            if cmd == 0x03:
                return od.pack_get_error(self.axis_error, self.axis_error)
            if cmd == 0x15:
                return od.pack_float_pair(state.mos_temperature, state.temperature)
            if cmd == 0x1C:
                return od.pack_float_pair(self.input_torque, state.torque / self.ratio)
            if cmd == 0x1D:
                return od.pack_float_pair(state.torque * state.velocity, state.torque * state.velocity)
            if cmd == 0x00:
                return bytes((2, 4, 2, 0, 0, 6, 10, 0))   # protocol 2, hw 4.2, fw 0.6.10
            return None
        if cmd == 0x03:
            return od.pack_motor_error(0)
        if cmd in (0x04, 0x05):
            return bytes(8)
        if cmd == 0x0A:
            p = self.position_estimate(state) * self.cpr
            return od.pack_set_linear_count(int(p)) + od.pack_set_linear_count(int(p) % self.cpr)
        if cmd == 0x15:
            return od.pack_encoder_estimates(self.position_estimate(state), state.velocity / self._k)
        return None

    # -- frames ------------------------------------------------------------------------------------
    def _enter(self, target: int) -> None:
        if target == od.AXIS_STATE_CLOSED_LOOP_CONTROL:
            if self.axis_error:
                self.axis_state = od.AXIS_STATE_IDLE
                self.procedure_result = od.PROCEDURE_RESULT_DISARMED
                return
            self.axis_state = target
            # firmware 0.6.11 and later: closed loop is a procedure that runs until disarmed, BUSY
            self.procedure_result = od.PROCEDURE_RESULT_BUSY if self.version == od.V06 \
                else od.PROCEDURE_RESULT_SUCCESS
            return
        elif target in _CALIBRATION_STATES:
            self.axis_state = od.AXIS_STATE_IDLE   # calibration done at once
        elif target == od.AXIS_STATE_IDLE:
            self.axis_state = od.AXIS_STATE_IDLE
        self.procedure_result = od.PROCEDURE_RESULT_SUCCESS

    def _handle(self, msg: can.Message, state: PhysicalState, now: float) -> List[can.Message]:
        if msg.is_extended_id or msg.is_error_frame:
            return []
        node, cmd = od.split_id(msg.arbitration_id)
        if node != self.node_id:
            return []
        self.last_feed = now   # every frame to the axis feeds the watchdog
        data = bytes(msg.data)
        self.commands[cmd] = self.commands.get(cmd, 0) + 1
        if cmd in od.GET_COMMANDS[self.version]:
            if not od.is_get_request(self.version, cmd, len(data), msg.is_remote_frame):
                return []   # a get with data is not answered (DLC-8 data frames included)
            payload = self._get(cmd, state)
            return [] if payload is None else [self._message(self._id(cmd), payload)]
        if msg.is_remote_frame:
            return []
        if cmd == 0x1D and self.version == od.V05:
            # fw 0.5.6 answers Get_Controller_Error whatever the frame carries
            return [self._message(self._id(cmd), od.pack_set_axis_state(0) + bytes(4))]
        try:
            self._command(cmd, data, state, now)
        except od.OdriveFrameError:
            pass   # a short frame: the firmware reads garbage; the simulation ignores it
        return []

    def _command(self, cmd: int, data: bytes, state: PhysicalState, now: float) -> None:
        v = self.version
        if cmd == od.CMD_ESTOP:
            self._set_error(od.ESTOP_REQUESTED[v])
        elif cmd == od.CMD_SET_AXIS_STATE:
            target = od.unpack_set_axis_state(data)
            if self.state_delay > 0.0:
                self._pending = (target, now + self.state_delay)
                self.procedure_result = od.PROCEDURE_RESULT_BUSY
            else:
                self._enter(target)
        elif cmd == od.CMD_SET_CONTROLLER_MODE:
            self.control_mode, self.input_mode = od.unpack_set_controller_mode(data)
        elif cmd == od.CMD_SET_INPUT_POS:
            self.input_pos, self.input_vel, self.input_torque = od.unpack_set_input_pos(data)
        elif cmd == od.CMD_SET_INPUT_VEL:
            self.input_vel, self.input_torque = od.unpack_set_input_vel(data)
        elif cmd == od.CMD_SET_INPUT_TORQUE:
            self.input_torque = od.unpack_set_input_torque(data)
        elif cmd == od.CMD_SET_LIMITS:
            self.vel_limit, current = od.unpack_set_limits(data)
            self.torque_limit = current * self.torque_constant
        elif cmd == od.CMD_SET_POS_GAIN:
            self.pos_gain = od.unpack_float(data, "Set_Pos_Gain")
        elif cmd == od.CMD_SET_VEL_GAINS:
            self.vel_gain = od.unpack_float_pair(data)[0]
        elif cmd == od.CMD_SET_AXIS_NODE_ID and v == od.V05:
            node = od.unpack_set_axis_node_id(data)
            if 0 <= node <= 0x3F:     # in RAM: the axis listens and sends on the new id at once
                self.node_id = node
                self.ids_changed = True
        elif cmd == od.CMD_CLEAR_ERRORS:
            self.axis_error = 0
            self.procedure_result = od.PROCEDURE_RESULT_SUCCESS
            self._set_error(self._condition_bits())
        elif cmd == 0x19:
            if v == od.V05:
                self.offset = od.unpack_set_linear_count(data) / self.cpr - state.position / self._k
            else:
                turns = od.unpack_float(data, "Set_Absolute_Position")
                self.offset = turns - state.position / self._k


def peer_for_unit(unit) -> SimulatedProtocolMotor:
    """The simulated ODrive axis of an :class:`~rospy_control.devices.odrive.device.OdriveAxis` on its
    joint (:func:`~.peers.joint_model`: the same ``<simulation>`` attributes as an MIT motor's), with the
    unit's node id, firmware line, ratio and cyclic periods.  Its own ``<simulation>`` attributes:
    ``watchdog_timeout`` (s, the ODrive's watchdog, 0 = off; default 0), ``state_delay`` (s until a
    requested axis state is reached; default 0) and the device's gains as configured on it before the
    driver's start-up sends its own (``pos_gain``, ``vel_gain``, ``vel_integrator_gain``; ODrive's
    defaults 20, 0.16, 0.32), ``vel_limit`` (turn/s; default 10).  The torque limit is the unit's
    ``torque_limit`` at the motor (default 1e9)."""
    torque_limit = unit.torque_limit if math.isfinite(unit.torque_limit) else 1e9
    joint = peers.joint_model(unit, {"torque_limit": torque_limit * unit.ratio})
    r = joint.reader
    extra = {"watchdog_timeout": 0.0, "state_delay": 0.0, "pos_gain": 20.0, "vel_gain": 0.16,
             "vel_integrator_gain": 0.32, "vel_limit": 10.0}
    heartbeat_rate, encoder_rate = unit.heartbeat_rate, unit.encoder_rate
    if r is not None:
        for key, default in list(extra.items()):
            extra[key] = r.get(key, to_float, default, check=non_negative, expected="a number >= 0")
        heartbeat_rate, encoder_rate = cyclic_switches(r, heartbeat_rate, encoder_rate)
        r.finish()
    device = SimulatedOdrive(unit.name, unit.node_id, unit.firmware, heartbeat_rate=heartbeat_rate,
                             encoder_rate=encoder_rate, torque_limit=torque_limit, ratio=unit.ratio,
                             torque_constant=unit.torque_constant or 0.05,
                             watchdog_timeout=extra["watchdog_timeout"], state_delay=extra["state_delay"],
                             pos_gain=extra["pos_gain"], vel_gain=extra["vel_gain"],
                             vel_integrator_gain=extra["vel_integrator_gain"], vel_limit=extra["vel_limit"])
    return SimulatedProtocolMotor(device, joint)


def cyclic_switches(r, heartbeat_rate: float, encoder_rate: float):
    """The mismatch switches of the axis's cyclic messages (:mod:`.mismatch`): ``cyclic="false"``
    (heartbeat_rate_ms and encoder_rate_ms 0 on the device: it answers polls only) and
    ``encoder_estimates="off"`` (encoder_rate_ms 0: the heartbeat goes on)."""
    if not r.get("cyclic", to_bool, True):
        heartbeat_rate = encoder_rate = 0.0
    if r.get("encoder_estimates", to_str, "on", check=lambda v: v in ("on", "off"),
             expected="on or off") == "off":
        encoder_rate = 0.0
    return heartbeat_rate, encoder_rate
