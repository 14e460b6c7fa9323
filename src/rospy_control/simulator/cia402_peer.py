"""The simulated CiA 402 drive as a peer on the simulated bus: :class:`Cia402Peer` puts a
:class:`~.cia402.SimulatedCia402Drive` on the joint model of its unit's ``<simulation>`` element (its
holding brake, limit switches and the mismatch switches of :mod:`.mismatch`), with the drive's own
fault switches (:data:`DEVICE_FAULTS`)."""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import can

from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State
from rospy_control.hardware_config.document import non_negative, to_float, to_int, to_str
from rospy_control.simulator.cia402 import SimulatedCia402Drive
from rospy_control.simulator.cia402_homing import HOMING_MODE
from rospy_control.simulator.device import Impedance
from rospy_control.simulator.joint import DevicePeer, JointModel

__all__ = ["Cia402Peer", "peer_for_unit", "DEVICE_FAULTS", "nmt_switches"]


#: the simulated drive's own error conditions (fault switches): (EMCY error code, error register bits)
#: with the CiA 301 / 402 names of the codes (:data:`..protocols.cia402.EMCY_CODES`)
DEVICE_FAULTS: Dict[str, Tuple[int, int]] = {
    "error_flag": (0x1000, 0x01),         # Generic error; the switch's value, if given, is the EMCY code
    "over_current": (0x2310, 0x02),       # Continuous over current
    "over_voltage": (0x3210, 0x04),       # DC link over-voltage
    "under_voltage": (0x3220, 0x04),      # DC link under-voltage
    "over_temperature": (0x4310, 0x08),   # Excess temperature drive
    "following_error": (0x8611, 0x20),    # Following error
}


class Cia402Peer(DevicePeer):
    """A :class:`SimulatedCia402Drive` on a :class:`~.joint.JointModel`: the peer shape of
    :mod:`.peers` (``listen_ids``, ``handle_frame``, ``tick``, ``set_fault`` / ``clear_fault``,
    ``faults``, ``joint_position``).

    The joint model integrates the motion (the same joint as every protocol's example arm: inertia,
    damping, friction, end stops); the drive's control law is handed to it as an impedance: CSP a
    stiff position loop at the drive's :attr:`~SimulatedCia402Drive.POSITION_BANDWIDTH`, CSV a
    velocity loop, CST the torque, quick stop and fault reaction a brake, all limited by 0x6072.

    Fault switches: ``silent`` (answers nothing), and the drive's own errors of
    :data:`DEVICE_FAULTS` (``error_flag``: the EMCY code given as the switch's value, 0x1000 without;
    ``over_temperature``: 0x4310 Excess temperature drive): the drive goes to FAULT with an EMCY of
    that code; while the switch is on
    a fault reset leaves it in FAULT, after :meth:`clear_fault` the next one clears it.
    """

    #: how stiff a closed holding brake is (rad/s; critically damped): far stiffer than the position loop,
    #: yet stable at the integration steps of the simulated channels (0.5-1 ms)
    BRAKE_BANDWIDTH = 400.0

    def __init__(self, drive: SimulatedCia402Drive, joint: JointModel) -> None:
        self.drive = self.device = drive   # the drive is the device the peer reads (DevicePeer)
        self.joint = joint
        drive.inertia = joint.inertia
        drive.damping = joint.damping
        drive.q = joint.p
        #: the holding brake's torque (N·m, joint side; 0 = no brake): engaged whenever the power stage
        #: does not hold the shaft, as a drive's brake output does outside OPERATION ENABLED
        self.brake = 0.0
        self._brake_at: Optional[float] = None
        self._fault: Optional[str] = None
        self._next_tick = 0.0
        n = drive.node_id
        self._ids = [(co.NMT_ID, False), (co.SYNC_ID, False), (co.SDO_RX_BASE + n, False)] + \
            [(co.rpdo_cob_id(i, n), False) for i in range(1, 5)]

    @property
    def fault(self) -> Optional[str]:
        return self._fault

    @property
    def faults(self) -> Tuple[str, ...]:
        return ("silent",) + tuple(DEVICE_FAULTS)

    def listen_ids(self) -> List[Tuple[int, bool]]:
        return list(self._ids)

    def set_fault(self, fault: str, value: Optional[float] = None) -> None:
        if fault == "silent":
            self.drive.fault = "silent"
        elif fault in DEVICE_FAULTS:
            code, register = DEVICE_FAULTS[fault]
            if fault == "error_flag" and value:
                code = int(value) & 0xFFFF
            self.drive.inject_fault(code, register, persistent=True, now=self.drive.t)
        else:
            raise ValueError(f"CiA 402 drive '{self.name}': unknown fault '{fault}'; known: "
                             + ", ".join(self.faults))
        self._fault = fault
        self.drive.fault_value = value

    def clear_fault(self) -> None:
        if self._fault == "silent":
            self.drive.fault = None
        self.drive.remove_fault()
        self._fault = None

    def _law(self, p: float, v: float) -> Optional[Impedance]:
        d = self.drive
        st, s = d.state, d.scale
        J = self.joint.inertia
        tmax = abs(s.permille_to_nm(d._val(0x6072)))
        if st in (State.QUICK_STOP_ACTIVE, State.FAULT_REACTION_ACTIVE):
            return Impedance(0.0, 0.0, 0.0, J * d.VELOCITY_BANDWIDTH, 0.0, tmax)
        if st != State.OPERATION_ENABLED:
            if self.brake <= 0.0:
                return None
            if self._brake_at is None:
                self._brake_at = p
            wn = self.BRAKE_BANDWIDTH       # a brake holds where it closed, up to its torque
            return Impedance(self._brake_at, 0.0, J * wn * wn, 2.0 * J * wn, 0.0, self.brake)
        self._brake_at = None
        mode = d._val(0x6061)
        toff = s.permille_to_nm(d._val(0x60B2))
        if mode == co.CSP:
            wn = d.POSITION_BANDWIDTH
            return Impedance(s.counts_to_rad(d._val(0x607A)) - d.homing.shift,
                             s.counts_per_s_to_rad_per_s(d._val(0x60B1)), J * wn * wn, 2.0 * J * wn, toff,
                             tmax)
        if mode == HOMING_MODE:
            vd = d.homing.velocity()
            if vd is None:
                wn = d.POSITION_BANDWIDTH
                return Impedance(d.homing.hold(p), 0.0, J * wn * wn, 2.0 * J * wn, 0.0, tmax)
            return Impedance(0.0, vd, 0.0, J * d.VELOCITY_BANDWIDTH, self.joint.damping * vd, tmax)
        if mode in (co.CSV, co.PV):
            offset = d._val(0x60B1) if mode == co.CSV else 0
            vd = s.counts_per_s_to_rad_per_s(d._val(0x60FF) + offset)
            return Impedance(0.0, vd, 0.0, J * d.VELOCITY_BANDWIDTH, self.joint.damping * vd + toff, tmax)
        if mode == co.CST:
            return Impedance(0.0, 0.0, 0.0, 0.0, s.permille_to_nm(d._val(0x6071)) + toff, tmax)
        return Impedance(p, 0.0, 0.0, J * d.VELOCITY_BANDWIDTH, 0.0, tmax)   # PP, ... : hold still

    def _advance(self, now: float, dt: float) -> None:
        j, d = self.joint, self.drive
        j.advance(now, dt, self._law)
        d.q, d.v, d.tau = j.p, j.v, j.tau
        d.t = now        # the drive's own integrator has nothing left to do; its timers run on
        d.homing_step()

    def handle_frame(self, msg: can.Message, now: float, dt: float) -> List[can.Message]:
        self._advance(now, dt)
        return self.drive.handle(msg, now, dt)

    #: the drive's own frames (heartbeat, event timers, state changes in time) are looked at this often (s)
    TICK_PERIOD = 0.002

    def tick(self, now: float, dt: float) -> List[can.Message]:
        if now < self._next_tick and self.drive.booted:
            return []
        self._next_tick = now + self.TICK_PERIOD
        self._advance(now, dt)
        return self.drive.tick(now)


def peer_for_unit(unit: Any) -> Cia402Peer:
    """The simulated drive of a :class:`~rospy_control.devices.cia402.device.Cia402Drive` (its node id,
    encoder, gear, rated torque and heartbeat off until the driver sets 0x1017), on the joint of its
    ``<simulation>`` element (:func:`.peers.joint_model`)."""
    from rospy_control.simulator import peers
    scale = co.UnitScale(unit.counts_per_rev, unit.gear_ratio, unit.rated_torque)
    limit = abs(scale.permille_to_nm(unit.max_torque))
    joint = peers.joint_model(unit, {"torque_limit": limit})
    r = joint.reader
    brake = 0.0
    switches = (None, None)
    if r is not None:
        brake = r.get("brake", to_float, 0.0, check=non_negative,
                      expected="the holding brake's torque in N m at the joint (0 = none)")
        switches = (r.get("limit_switch_min", to_float, None, expected="the joint position (rad) of the "
                          "negative limit switch (homing methods 17)"),
                    r.get("limit_switch_max", to_float, None, expected="the joint position (rad) of the "
                          "positive limit switch (homing methods 18)"))
    heartbeat_ms, stopped = nmt_switches(r) if r is not None else (0, False)
    if r is not None:
        r.finish()
    drive = SimulatedCia402Drive(unit.name, unit.node_id, counts_per_rev=int(unit.counts_per_rev),
                                 gear_ratio=unit.gear_ratio, rated_torque=unit.rated_torque,
                                 initial_position=joint.p, heartbeat_ms=heartbeat_ms)
    drive.homing.limit_switch_min, drive.homing.limit_switch_max = switches
    setattr(drive, "stopped_after_boot", stopped)
    peer = Cia402Peer(drive, joint)
    peer.brake = brake
    return peer


def nmt_switches(r):
    """The drive's mismatch switches (:mod:`.mismatch`): ``heartbeat_ms`` (its producer heartbeat time
    0x1017 at power-up, as stored in its flash; default 0 = off) and ``nmt="stopped"`` (NMT STOPPED
    after boot-up, as when another tool sent NMT stop: it answers NMT only, its heartbeat goes on)."""
    heartbeat_ms = r.get("heartbeat_ms", to_int, 0, check=lambda v: 0 <= v <= 0xFFFF,
                         expected="a heartbeat time in ms, 0..65535")
    stopped = r.get("nmt", to_str, "pre-operational", check=lambda v: v in ("pre-operational", "stopped"),
                    expected="pre-operational or stopped") == "stopped"
    return heartbeat_ms, stopped
