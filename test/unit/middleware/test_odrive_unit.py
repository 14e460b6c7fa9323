"""OdriveAxis (rospy_control/OdriveAxis) end to end: the unit on a real CanChannel / Middleware, the
simulated ODrive (simulation/odrive.py) answering on the bus as the firmware does, for both firmware
lines.  Frame checks use the vectors of the codec tests (O1, O4: the protocol facts file).

Everything waits on conditions with generous timeouts (a loaded 2-core host)."""
from __future__ import annotations

import math

import pytest

from rospy_control.testing.sim_rig import sim_of
from rospy_control.exceptions import ConfigError
from rospy_control.middleware import ControlMode
from rospy_control.devices.odrive import codec as od
from rospy_control.devices.request_reply import Command

from middleware_testutil import wait_until
from test_fault_recovery import freeze_process

TAU = 2 * math.pi
#: the device error each firmware line's simulated axis reports, named as the firmware names it
DEVICE_ERROR = {"0.5": ("OVER_TEMP", 0x00040000), "0.6": ("MOTOR_OVER_TEMP", 0x00002000)}


def odrive_xml(firmware: str = "0.6", attrs: str = "", sim: str = "", rate: float = 500.0, node: int = 1,
               extra: str = "") -> str:
    return (f'<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="{rate}" '
            f'fault_timeout="0.1"><simulation rate="2000"/></channel>'
            f'<unit name="a1" type="rospy_control/OdriveAxis" channel="bus" node_id="{node}" '
            f'firmware="{firmware}" heartbeat_rate="0.02" pos_gain="40" vel_gain="2" vel_integrator_gain="0" '
            f'{attrs}><simulation inertia="0.01" damping="0.05" friction="0.02" {sim}/></unit>{extra}'
            '</hardware>')


def device(mw, name: str = "a1"):
    """The simulated ODrive axis (the firmware of the in-process simulator)."""
    return sim_of(mw).firmware("bus").by_name[name].device


def commanding(command, predicate):
    def check():
        command()
        return predicate()
    return check


def started(make_mw, xml: str):
    mw = make_mw(xml)
    mw.start()
    assert wait_until(lambda: mw.snapshot()["a1"].enabled, timeout=10.0), mw.snapshot()["a1"]
    return mw


# -- start-up and control modes ----------------------------------------------------------------------------
@pytest.mark.parametrize("firmware", ["0.5", "0.6"])
def test_start_up_enters_closed_loop_with_the_configured_gains(make_mw, firmware):
    mw = started(make_mw, odrive_xml(firmware))
    dev = device(mw)
    unit = mw.unit("a1")
    assert dev.axis_state == od.AXIS_STATE_CLOSED_LOOP_CONTROL and unit.axis_state == "CLOSED_LOOP_CONTROL"
    assert dev.version == firmware
    # what went over the bus, as the device decoded it: the gains, Clear_Errors, the state request
    assert dev.pos_gain == pytest.approx(40.0) and dev.vel_gain == pytest.approx(2.0)
    for cmd in (od.CMD_CLEAR_ERRORS, od.CMD_SET_POS_GAIN, od.CMD_SET_VEL_GAINS, od.CMD_SET_CONTROLLER_MODE,
                od.CMD_SET_AXIS_STATE):
        assert dev.commands.get(cmd, 0) >= 1, od.COMMANDS[firmware]
    # until commanded it holds as the watchdog would (position control at the measured position, never
    # torque 0); no "get" was ever polled
    assert dev.control_mode == od.CONTROL_MODE_POSITION and dev.input_torque == 0.0
    assert dev.commands.get(od.CMD_SET_INPUT_TORQUE, 0) == 0
    assert all(dev.commands.get(c, 0) == 0 for c in od.GET_COMMANDS[firmware])
    # the cyclic frames are what the unit lives on
    assert wait_until(lambda: unit.heartbeats >= 3 and unit.encoder_frames >= 10, timeout=5.0)
    s = mw.snapshot()["a1"]
    assert s.received and not s.fault and s.stamp > 0


@pytest.mark.parametrize("firmware", ["0.5", "0.6"])
def test_position_velocity_and_effort_modes(make_mw, firmware):
    mw = started(make_mw, odrive_xml(firmware))
    m = mw.motor("a1")
    dev = device(mw)
    assert wait_until(commanding(lambda: m.set_command(ControlMode.POSITION, 1.0),
                                 lambda: abs(mw.snapshot()["a1"].position - 1.0) < 0.02), timeout=10.0)
    assert wait_until(lambda: m.mode_confirmed(ControlMode.POSITION), timeout=5.0)
    assert dev.control_mode == od.CONTROL_MODE_POSITION and dev.input_mode == od.INPUT_MODE_PASSTHROUGH
    assert dev.input_pos == pytest.approx(1.0 / TAU, abs=1e-6)        # turns on the wire
    m.request_mode(ControlMode.VELOCITY)
    assert wait_until(commanding(lambda: m.set_command(ControlMode.VELOCITY, 2.0),
                                 lambda: m.mode_confirmed(ControlMode.VELOCITY)), timeout=5.0)
    assert dev.control_mode == od.CONTROL_MODE_VELOCITY
    assert wait_until(commanding(lambda: m.set_command(ControlMode.VELOCITY, 2.0),
                                 lambda: abs(mw.snapshot()["a1"].velocity - 2.0) < 0.3), timeout=10.0)
    assert wait_until(commanding(lambda: m.set_command(ControlMode.EFFORT, 0.05),
                                 lambda: m.mode_confirmed(ControlMode.EFFORT)), timeout=5.0)
    assert dev.control_mode == od.CONTROL_MODE_TORQUE and dev.input_torque == pytest.approx(0.05)
    assert mw.snapshot()["a1"].mode == ControlMode.EFFORT


def test_set_input_pos_feed_forwards_saturate_and_never_wrap(make_mw):
    mw = started(make_mw, odrive_xml("0.6", attrs='torque_limit="30"'))
    m = mw.motor("a1")
    dev = device(mw)
    # 100 turn/s and -50 N.m do not fit int16 x 0.001: the device receives the int16 limits
    assert wait_until(commanding(lambda: m.set_position(0.0, 100.0 * TAU, -50.0),
                                 lambda: dev.control_mode == od.CONTROL_MODE_POSITION
                                 and dev.input_vel == pytest.approx(32.767)
                                 and dev.input_torque == pytest.approx(-32.768)), timeout=5.0)
    assert wait_until(commanding(lambda: m.set_position(0.0, 1.5 * TAU, 0.25),
                                 lambda: dev.input_vel == pytest.approx(1.5)
                                 and dev.input_torque == pytest.approx(0.25)), timeout=5.0)


def test_frames_are_byte_exact():
    from rospy_control.devices.odrive.device import OdriveAxis
    axis = OdriveAxis("a", node_id=3, firmware="0.6.10")
    # O4: Set_Input_Pos(1.5 turn, vel_ff 2.0 turn/s, torque_ff -0.5 N.m) to node 3
    data = axis.encode_command(Command(ControlMode.POSITION, 1.5 * TAU, 2.0 * TAU, -0.5))
    assert data == bytes.fromhex("0000C03FD0070CFE")
    assert axis._ids[axis._setpoint_cmd(ControlMode.POSITION)] == 0x06C
    # O1: Set_Input_Vel(-2.5 turn/s, torque_ff 0.25) to node 1, here through a ratio of 2
    axis = OdriveAxis("b", node_id=1, firmware="0.5", ratio=2.0)
    assert axis.encode_command(Command(ControlMode.VELOCITY, velocity=-1.25 * TAU, effort=0.5)) \
        == bytes.fromhex("000020C00000803E")
    assert axis._ids[axis._setpoint_cmd(ControlMode.VELOCITY)] == 0x02D
    assert axis.enable_frame() == bytes.fromhex("08000000")
    assert axis.disable_frame() == bytes.fromhex("01000000")
    assert axis.effort_range == (-math.inf, math.inf)


def test_turns_and_radians_through_the_ratio(make_mw):
    mw = started(make_mw, odrive_xml("0.6", attrs='ratio="4" direction="-1"'))
    m = mw.motor("a1")
    dev = device(mw)
    assert wait_until(commanding(lambda: m.set_command(ControlMode.POSITION, 0.5),
                                 lambda: abs(mw.snapshot()["a1"].position - 0.5) < 0.02), timeout=10.0)
    # 0.5 rad on the unit's side, direction -1: -0.5 * 4 / (2 pi) motor turns
    assert dev.input_pos == pytest.approx(-0.5 * 4 / TAU, abs=1e-5)


# -- faults ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("firmware", ["0.5", "0.6"])
def test_axis_error_is_named_and_reset_refused_while_it_lasts(make_mw, firmware):
    name, bit = DEVICE_ERROR[firmware]
    mw = started(make_mw, odrive_xml(firmware))
    sim_of(mw).set_fault("a1", name)
    assert wait_until(lambda: mw.snapshot()["a1"].fault, timeout=5.0)
    s = mw.snapshot()["a1"]
    assert s.fault_reason == f"ODrive axis reported {name} (axis error 0x{bit:08X})"
    assert not s.enabled and s.error_code == bit
    result = mw.reset_faults()
    assert result == {"a1": f"reset failed: axis still reports {name} (axis error 0x{bit:08X})"}
    assert mw.snapshot()["a1"].fault
    sim_of(mw).set_fault("a1", name, on=False)
    assert mw.reset_faults() == {}
    s = mw.snapshot()["a1"]
    assert s.enabled and not s.fault and device(mw).axis_state == od.AXIS_STATE_CLOSED_LOOP_CONTROL
    assert device(mw).axis_error == 0     # Clear_Errors cleared the latched bit


def test_silent_axis_faults_and_recovers_after_reset(make_mw):
    mw = started(make_mw, odrive_xml("0.6"))
    sim_of(mw).set_fault("a1", "silent")
    assert wait_until(lambda: mw.snapshot()["a1"].fault, timeout=5.0)
    assert mw.snapshot()["a1"].fault_reason.startswith("no frame from ODrive node 1 (heartbeat, encoder "
                                                       "estimates) for ")
    result = mw.reset_faults()
    assert result["a1"].startswith("reset failed: no frame from ODrive node 1")
    sim_of(mw).set_fault("a1", "silent", on=False)
    assert mw.reset_faults() == {}
    assert mw.snapshot()["a1"].enabled


def test_a_late_host_is_not_a_dead_axis(make_mw):
    mw = started(make_mw, odrive_xml("0.6", attrs='fault_timeout="0.05"'))
    frozen = freeze_process(0.4)      # neither the bus thread nor the simulator ran meanwhile
    assert frozen > 0.1               # twice the axis's fault_timeout
    assert wait_until(lambda: mw.channels["bus"].cycles > 50, timeout=5.0)
    start = mw.channels["bus"].cycles
    assert wait_until(lambda: mw.channels["bus"].cycles > start + 50, timeout=5.0)
    s = mw.snapshot()["a1"]
    assert not s.fault, s.fault_reason


def test_closed_loop_that_never_confirms_is_a_clear_error(make_mw):
    mw = make_mw(odrive_xml("0.6", attrs='state_timeout="0.3"', sim='state_delay="30"'))
    mw.start()
    assert wait_until(lambda: mw.snapshot()["a1"].fault, timeout=10.0)
    reason = mw.snapshot()["a1"].fault_reason
    assert reason.startswith("ODrive axis 'a1' (node 1) did not enter CLOSED_LOOP_CONTROL within 0.3 s "
                             "(heartbeat shows IDLE"), reason
    assert "procedure result BUSY" in reason


def test_start_returns_once_the_axis_is_in_closed_loop(make_mw):
    """An axis whose closed loop takes longer than a request/reply motor's enable (a procedure on the
    way): the middleware's start waits for it, so nothing is offered before the axis can follow."""
    mw = make_mw(odrive_xml("0.6", attrs='state_timeout="2.0"', sim='state_delay="1.2"'))
    assert mw.unit("a1").startup_timeout == pytest.approx(2.5)
    mw.start()
    s = mw.snapshot()["a1"]
    assert s.enabled and not s.fault, s


def test_estop_faults_naming_it_and_reset_clears_it(make_mw):
    mw = started(make_mw, odrive_xml("0.6"))
    mw.unit("a1").estop()
    assert wait_until(lambda: mw.snapshot()["a1"].fault, timeout=5.0)
    assert "ESTOP_REQUESTED" in mw.snapshot()["a1"].fault_reason
    assert device(mw).commands.get(od.CMD_ESTOP) == 1
    assert mw.reset_faults() == {}
    assert mw.snapshot()["a1"].enabled


def test_the_odrive_watchdog_is_fed(make_mw):
    mw = started(make_mw, odrive_xml("0.6", sim='watchdog_timeout="0.1"'))
    dev = device(mw)
    feeds = dev.commands.get(od.CMD_SET_INPUT_POS, 0)
    assert wait_until(lambda: dev.commands.get(od.CMD_SET_INPUT_POS, 0) > feeds + 100, timeout=10.0)
    assert dev.watchdog_expiries == 0 and not mw.snapshot()["a1"].fault


def test_mixed_with_mit_on_one_bus(make_mw):
    mit = ('<unit name="m7" type="rospy_control/Motor" channel="bus" can_id="7"><gains position_kp="20" '
           'position_kd="0.5" velocity_kd="0.5"/></unit>')
    mw = started(make_mw, odrive_xml("0.5", extra=mit))
    assert wait_until(lambda: mw.snapshot()["m7"].enabled, timeout=5.0)
    mw.set_command("m7", ControlMode.POSITION, 0.3)
    assert wait_until(commanding(lambda: mw.set_command("a1", ControlMode.POSITION, -0.3),
                                 lambda: abs(mw.snapshot()["a1"].position + 0.3) < 0.02
                                 and abs(mw.snapshot()["m7"].position - 0.3) < 0.05), timeout=10.0)


# -- configuration ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("attrs,words", [
    ('node_id="64" firmware="0.6"', ["node_id", "64", "0..63"]),
    ('node_id="1" firmware="0.4.12"', ["firmware", "0.4.12", "0.5", "0.6"]),
    ('node_id="1"', ["firmware", "missing"]),
    ('node_id="1" firmware="0.6" ratio="0"', ["ratio", "'0'"]),
    ('node_id="1" firmware="0.6" torque_limit="40"', ["torque_limit", "40", "32.767", "a1"]),
    ('node_id="1" firmware="0.6" can_id="1"', ["unknown attribute 'can_id'"]),
    ('node_id="1" firmware="0.6" fault_timeout="0.01"', ["fault_timeout", "encoder_rate"]),
    ('node_id="1" firmware="0.6" vel_integrator_gain="1"', ["vel_integrator_gain needs vel_gain"]),
])
def test_bad_attributes_are_clear_start_up_errors(make_mw, attrs, words):
    xml = ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="500"/>'
           f'<unit name="a1" type="rospy_control/OdriveAxis" channel="bus" {attrs}/></hardware>')
    with pytest.raises(ConfigError) as err:
        make_mw(xml)
    for word in words:
        assert word in str(err.value)


def test_gains_element_is_refused_with_the_odrive_attributes_named(make_mw):
    xml = ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="500"/>'
           '<unit name="a1" type="rospy_control/OdriveAxis" channel="bus" node_id="1" firmware="0.6">'
           '<gains position_kp="20"/></unit></hardware>')
    with pytest.raises(ConfigError, match="pos_gain"):
        make_mw(xml)


# -- the frame sequence, frame by frame (the unit alone, driven as its channel drives it) ------------------
def _heartbeat(axis, state, error=0, firmware="0.6"):
    return axis._ids[od.CMD_HEARTBEAT], od.pack_heartbeat(firmware, error, state)


class HandDriven:
    """An axis driven by hand, one 5 ms cycle per :meth:`cycle` (the frame it sent, or None)."""

    def __init__(self, firmware: str = "0.6", **kw) -> None:
        from rospy_control.devices.odrive.device import OdriveAxis
        self.axis = OdriveAxis("a", node_id=2, firmware=firmware, **kw)
        self.t = 0.0
        self.axis.activate(0.0, True, 0.1, 0.005)

    def cycle(self):
        self.t += 0.005
        msg = self.axis.poll(self.t)
        self.axis.end_cycle(self.t, True)
        return None if msg is None else (msg.arbitration_id, bytes(msg.data))


def test_a_lost_set_axis_state_is_sent_again_with_the_sequence():
    # Set_Axis_State is not acknowledged: an axis still IDLE, with no procedure running, a while
    # after the request did not get it (a frame lost on the bus). The start-up sequence is sent
    # again (a lost gain or controller-mode frame with it), and the axis then enters closed loop.
    from rospy_control.devices.odrive.device import OdriveAxis
    rig = HandDriven(pos_gain=30.0)
    axis, cycle = rig.axis, rig.cycle
    cycle()
    axis.on_frame(0x049, od.pack_encoder_estimates(0.25, 0.0), rig.t)
    first = []
    while not first or first[-1] != (0x047, bytes.fromhex("08000000")):
        sent = cycle()
        if sent is None:     # waiting for the heartbeats that confirm the controller mode
            axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_IDLE), rig.t)
        else:
            first.append(sent)
        assert len(first) < 10, first
    requested = rig.t
    while rig.t - requested < OdriveAxis.STATE_RETRY - 0.01:   # IDLE, but not for long yet: no retry
        axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_IDLE), rig.t)
        assert cycle()[0] != 0x058
    assert axis.state_retries == 0
    rig.t = requested + OdriveAxis.STATE_RETRY + 1e-9    # not a rounding error short of it
    axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_IDLE), rig.t)
    again = []
    while not again or again[-1] != (0x047, bytes.fromhex("08000000")):
        sent = cycle()
        if sent is None:
            axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_IDLE), rig.t)
        else:
            again.append(sent)
        assert len(again) < 10, again
    assert axis.state_retries == 1
    assert again == first[-len(again):] and again[0] == (0x058, b"\x00")   # Clear_Errors first again
    for _ in range(2):
        axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_CLOSED_LOOP_CONTROL), rig.t)
        cycle()
    s = axis.state()
    assert s.enabled and not s.fault


@pytest.mark.parametrize("firmware", ["0.5", "0.6"])
def test_start_up_and_mode_switch_sequence_frame_by_frame(firmware):
    # the controller mode is set, and confirmed by the heartbeats after it, before any setpoint of that
    # mode; the first setpoint is the hold (the measured position); closed loop is requested after both
    rig = HandDriven(pos_gain=30.0, vel_gain=0.5, vel_integrator_gain=1.0, firmware=firmware)
    axis, cycle = rig.axis, rig.cycle

    def idle_heartbeat():
        axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_IDLE, firmware=firmware), rig.t)

    assert cycle() is None                          # nothing before the first encoder estimate
    axis.on_frame(0x049, od.pack_encoder_estimates(0.25, 0.0), rig.t)
    sent = [cycle() for _ in range(4)]
    assert sent == [
        (0x058, od.pack_clear_errors(firmware)),                        # Clear_Errors (0.6: DLC 1)
        (0x05A, od.pack_set_pos_gain(30.0)),                            # Set_Pos_Gain
        (0x05B, od.pack_set_vel_gains(0.5, 1.0)),                       # Set_Vel_Gains
        (0x04B, od.pack_set_controller_mode(od.CONTROL_MODE_POSITION, od.INPUT_MODE_PASSTHROUGH)),
    ]
    assert cycle() is None                          # no setpoint before the mode is confirmed
    idle_heartbeat()                                # may predate the mode frame
    assert cycle() is None
    idle_heartbeat()                                # the second confirms it
    assert cycle() == (0x04C, od.pack_set_input_pos(0.25, 0.0, 0.0))    # the hold: the measured position
    assert cycle() == (0x047, bytes.fromhex("08000000"))               # Set_Axis_State(CLOSED_LOOP)
    assert not axis.state().enabled
    for _ in range(2):                                                  # two heartbeats confirm it
        axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_CLOSED_LOOP_CONTROL, firmware=firmware), rig.t)
        assert cycle() == (0x04C, od.pack_set_input_pos(0.25, 0.0, 0.0))
    assert axis.state().enabled
    # a velocity command: the mode first, no setpoint until its heartbeats confirm it, then Set_Input_Vel
    axis.set_command(ControlMode.VELOCITY, 0.0)
    assert cycle() == (0x04B, od.pack_set_controller_mode(od.CONTROL_MODE_VELOCITY,
                                                          od.INPUT_MODE_PASSTHROUGH))
    assert cycle() is None
    assert not axis.mode_confirmed(ControlMode.VELOCITY)
    for _ in range(2):   # the first heartbeat after the switch may predate it: the second confirms
        axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_CLOSED_LOOP_CONTROL, firmware=firmware), rig.t)
    assert cycle() == (0x04D, od.pack_set_input_vel(0.0, 0.0))
    cycle()              # ... once the channel published the cycle that received it
    assert axis.mode_confirmed(ControlMode.VELOCITY)
    # and back to position: never Set_Input_Pos while the axis may still be in velocity control
    axis.request_mode(ControlMode.POSITION)
    assert cycle() == (0x04B, od.pack_set_controller_mode(od.CONTROL_MODE_POSITION,
                                                          od.INPUT_MODE_PASSTHROUGH))
    assert cycle() is None
    for _ in range(2):
        axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_CLOSED_LOOP_CONTROL, firmware=firmware), rig.t)
    assert cycle() == (0x04C, od.pack_set_input_pos(0.25, 0.0, 0.0))
    cycle()
    assert axis.mode_confirmed(ControlMode.POSITION)
    if firmware != "0.6":
        return
    # 0.6 Get_Torques, when the ODrive sends it cyclically, is the measured effort
    axis.on_frame(0x05C, od.pack_float_pair(0.1, 0.3), rig.t)
    assert axis.end_cycle(rig.t, True).effort == pytest.approx(0.3)
    # the axis dropping out of closed loop is a fault that says so
    axis.on_frame(*_heartbeat(axis, od.AXIS_STATE_IDLE), rig.t)
    s = axis.end_cycle(rig.t, True)
    assert s.fault and s.fault_reason == "ODrive axis left CLOSED_LOOP_CONTROL: heartbeat shows IDLE"
    assert cycle() == (0x047, bytes.fromhex("01000000"))               # Set_Axis_State(IDLE), once
    assert cycle() is None


@pytest.mark.parametrize("firmware", ["0.5", "0.6"])
def test_start_up_frames_on_the_bus_set_the_mode_then_the_hold_then_closed_loop(make_mw, firmware):
    import can
    from middleware_testutil import drain_bus
    mw = make_mw(odrive_xml(firmware))
    sniffer = can.Bus(interface="virtual", channel=mw.buses()["bus"].channel,
                      receive_own_messages=False)
    try:
        mw.start()
        assert wait_until(lambda: mw.snapshot()["a1"].enabled, timeout=10.0), mw.snapshot()["a1"]
        frames = drain_bus(sniffer, [])
    finally:
        sniffer.shutdown()
    host = {od.CMD_SET_CONTROLLER_MODE, od.CMD_SET_INPUT_POS, od.CMD_SET_INPUT_VEL, od.CMD_SET_INPUT_TORQUE,
            od.CMD_SET_AXIS_STATE}
    sent = [(m.arbitration_id & 0x1F, bytes(m.data)) for m in frames
            if m.arbitration_id >> 5 == 1 and m.arbitration_id & 0x1F in host]
    mode = sent.index((od.CMD_SET_CONTROLLER_MODE,
                       od.pack_set_controller_mode(od.CONTROL_MODE_POSITION, od.INPUT_MODE_PASSTHROUGH)))
    setpoints = [i for i, (cmd, _) in enumerate(sent)
                 if cmd in (od.CMD_SET_INPUT_POS, od.CMD_SET_INPUT_VEL, od.CMD_SET_INPUT_TORQUE)]
    closed = sent.index((od.CMD_SET_AXIS_STATE, od.pack_set_axis_state(od.AXIS_STATE_CLOSED_LOOP_CONTROL)))
    assert setpoints and mode < setpoints[0] < closed, sent[:8]
    assert all(sent[i][0] == od.CMD_SET_INPUT_POS for i in setpoints), sent[:8]   # never torque 0
    # the hold is the measured position (the simulated axis starts at rest where it is)
    p, _v, _t = od.unpack_set_input_pos(sent[setpoints[0]][1])
    assert p == pytest.approx(device(mw).input_pos, abs=1e-3)
