"""The channel's cycle (``CanChannel._cycle``, the code its thread runs) on a simulated clock.

A fake clock replaces ``time.perf_counter``/``time.sleep`` and a fake bus answers like MIT motors
after a latency measured on that clock, so host stalls (a late wake-up, a freeze during the reply
window) are injected exactly and every assertion is deterministic: no threads, no real time.
"""
from __future__ import annotations

import heapq
import itertools
from typing import Dict, List, Optional, Set, Tuple

import can
import pytest

from rospy_control.middleware import ControlMode, Motor
from rospy_control.bus.channel import CanChannel
from rospy_control.devices.mit import codec as mit
from rospy_control.simulator.liveness import Liveness
from rospy_control.bus.timing import CycleTiming, late_threshold

L = mit.MitLimits()


class FakeClock:
    """Monotonic seconds; ``sleep`` advances it (plus an injected stall, once)."""

    def __init__(self) -> None:
        self.t = 1000.0
        self.stall_next_sleep = 0.0

    def __call__(self) -> float:
        return self.t

    def sleep(self, seconds: float) -> None:
        self.t += max(0.0, seconds) + self.stall_next_sleep
        self.stall_next_sleep = 0.0


class FakeMitBus:
    """MIT motors behind a bus: every frame to a known id is answered after ``latency`` on the master id."""

    def __init__(self, clock: FakeClock, latency: float = 0.0002) -> None:
        self.clock = clock
        self.latency = latency
        self.silent: Set[int] = set()
        self.extra_latency: Dict[int, float] = {}
        #: added to the next reply only (the firmware was frozen too)
        self.delay_next_reply = 0.0
        #: the process freezes this long inside the next blocking recv (once)
        self.stall_in_recv = 0.0
        self.position = 0.0
        self.sent: List[Tuple[float, int, bytes]] = []
        self._queue: List[Tuple[float, int, can.Message]] = []
        self._seq = itertools.count()

    def send(self, msg: can.Message, timeout: Optional[float] = None) -> None:
        aid, data = msg.arbitration_id, bytes(msg.data)
        self.sent.append((self.clock.t, aid, data))
        if aid in self.silent:
            return
        at = self.clock.t + self.latency + self.extra_latency.get(aid, 0.0) + self.delay_next_reply
        self.delay_next_reply = 0.0
        reply = mit.pack_reply(aid, self.position, 0.0, 0.0, L, 8, 30, 0)
        msg = can.Message(arbitration_id=0, is_extended_id=False, data=reply)
        heapq.heappush(self._queue, (at, next(self._seq), msg))

    def recv(self, timeout: Optional[float] = None) -> Optional[can.Message]:
        clock = self.clock
        end = clock.t + (timeout or 0.0)
        if timeout and self.stall_in_recv:
            clock.t += self.stall_in_recv   # descheduled while blocked; ``end`` was set before
            self.stall_in_recv = 0.0
        q = self._queue
        if q and q[0][0] <= clock.t:
            return heapq.heappop(q)[2]
        if q and q[0][0] <= end:
            clock.t = q[0][0]
            return heapq.heappop(q)[2]
        clock.t = max(clock.t, end)
        return None

    def commands_to(self, can_id: int) -> List[Tuple[float, bytes]]:
        return [(t, d) for t, i, d in self.sent if i == can_id]


class Rig:
    def __init__(self, rate: float = 500.0, fault_timeout: float = 0.05, command_timeout: float = 0.0,
                 motors: int = 2) -> None:
        self.clock = FakeClock()
        self.bus = FakeMitBus(self.clock)
        self.ch = CanChannel("bus", interface="virtual", channel="fake", rate=rate,
                             fault_timeout=fault_timeout,
                             command_timeout=command_timeout, clock=self.clock, sleep=self.clock.sleep)
        self.motors = [Motor(f"m{i}", i) for i in range(1, motors + 1)]
        for m in self.motors:
            self.ch.add_unit(m)
        self.ch._bus = self.bus
        self.ch._prepare(True)

    def run(self, cycles: int, before=None) -> None:
        for _ in range(cycles):
            if before is not None:
                before()
            self.ch._cycle()

    def state(self, name: str = "m1"):
        return self.ch.states[name]

    def run_until_fault(self, name: str = "m1", limit: int = 10000) -> int:
        for k in range(limit):
            self.ch._cycle()
            if self.state(name).fault:
                return k + 1
        raise AssertionError(f"'{name}' never faulted")


# -- the judge alone ---------------------------------------------------------------------------------

def test_cycle_timing_rules():
    t = CycleTiming(period=0.002, window=0.0016, wall_clock=lambda: 123.0)
    assert t.late_after == pytest.approx(0.002) == late_threshold(0.002)    # the 2 ms floor
    assert late_threshold(0.01) == pytest.approx(0.005)                     # half a period
    assert t.stretch_after == pytest.approx(0.0016 + 0.005)
    assert t.judge(1.0, 1.0015, 1.0031)                                     # 1.5 ms late: on time
    assert t.judge(1.0, 1.0025, 1.0041)       # 2.5 ms late, then its whole window: judged (and late)
    assert not t.judge(1.0, 1.0, 1.0 + 0.0016 + 0.0051)                     # collect ran 5.1 ms over
    assert (t.late_cycles, t.stretched_cycles, t.excused_cycles, t.stalls) == (1, 1, 1, 0)
    assert not t.judge(1.0, 1.012, 1.012 + 0.0016 + 0.009)                  # 12 + 9 ms: a 21 ms stall
    assert t.stalls == 1 and t.longest_stall == pytest.approx(0.021) and t.longest_stall_time == 123.0
    assert not t.judge(1.0, 1.020, 1.0216)                                  # woke 20 ms late: a stall
    assert (t.late_cycles, t.excused_cycles, t.stalls) == (3, 3, 2)
    st = t.statistics()
    assert st["longest_stall"] == pytest.approx(21.0) and st["last_stall_time"] == 123.0


# -- the channel cycle ---------------------------------------------------------------------------------

def test_a_300_ms_host_stall_before_a_cycle_faults_nobody():
    # The process is descheduled for 300 ms while the bus thread sleeps; the firmware (same process in
    # simulation) is frozen too and answers the first request after the stall 5 ms late.  The old rule
    # (one missing reply + 50 ms since the last reply) faulted every motor of the bus here.
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.run(20)
    assert rig.ch.timing.stalls == 0 and rig.ch.timing.late_cycles == 0
    rig.clock.stall_next_sleep = 0.300
    rig.bus.delay_next_reply = 0.005
    rig.run(100)
    assert not rig.state("m1").fault and not rig.state("m2").fault
    st = rig.ch.statistics()
    assert st["stalls"] == 1 and st["longest_stall"] == pytest.approx(300.0, abs=2.1)
    assert st["longest_stall_time"] is not None and st["last_stall_time"] == st["longest_stall_time"]
    assert st["excused_cycles"] >= 1 and st["late_cycles"] == 1
    assert st["reply_timeouts"]["m1"] <= 3   # the late reply, judged in on-time cycles, drains next cycle


def test_a_stall_inside_the_reply_window_faults_nobody():
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.run(10)
    # frozen 300 ms while blocked in recv; the replies are waiting in the receive queue
    rig.bus.stall_in_recv = 0.300
    rig.run(1)
    assert rig.ch.timing.stretched_cycles == 1 and rig.ch.timing.stalls == 1
    assert rig.ch.statistics()["reply_timeouts"] == {"m1": 0, "m2": 0}
    # frozen 300 ms and the firmware with it: the reply comes 5 ms after the process resumes
    rig.bus.stall_in_recv = 0.300
    rig.bus.delay_next_reply = 0.305
    rig.run(100)
    assert not rig.state("m1").fault and not rig.state("m2").fault
    assert rig.ch.timing.stalls == 2
    assert rig.ch.statistics()["reply_timeouts"]["m1"] == 0   # the stretched cycle is not counted


def test_a_silent_unit_faults_within_one_period_of_both_conditions():
    # 500 Hz: period 2 ms, window 1.6 ms; fault_timeout 50 ms: N = 25.  Request k (k = 1, 2, ...) after
    # the silence starts at t1 + (k-1) 2 ms and is judged at +1.6 ms: miss 25 is judged at 49.6 ms (not
    # yet 50 ms), miss 26 at 51.6 ms -- the first cycle end after both conditions hold.
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.run(10)
    rig.bus.silent.add(1)
    t1 = rig.ch._next_t          # the first unanswered request goes out at this cycle's start
    cycles = rig.run_until_fault("m1")
    s = rig.state("m1")
    assert cycles == 26
    assert s.fault_reason == "no reply for 51.6 ms (fault_timeout 50.0 ms), 26 requests unanswered"
    detected = rig.ch.cycle_stamp - t1
    assert 0.050 <= detected < 0.050 + rig.ch.period
    assert not rig.state("m2").fault
    # after the fault: one exit-motor-mode frame, then nothing
    n = len(rig.bus.commands_to(1))
    rig.run(10)
    assert [d for _, d in rig.bus.commands_to(1)[n:]] == [mit.EXIT_MOTOR_MODE]


def test_a_silent_unit_is_not_blamed_for_excused_cycles():
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.run(10)
    rig.bus.silent.add(1)
    rig.run(10)                              # 10 counted misses
    for _ in range(10):
        rig.clock.stall_next_sleep = 0.025   # a stall before the cycle (25 ms): not counted ...
        rig.run(2)                           # ... then, re-anchored, an on-time cycle: counted
    assert rig.ch.timing.excused_cycles == 10
    assert rig.ch.statistics()["reply_timeouts"]["m1"] == 20
    rig.run(4)
    assert not rig.state("m1").fault         # 24 misses < N = 25, although ~300 ms have passed
    rig.run(1)
    assert rig.state("m1").fault and "25 requests unanswered" in rig.state("m1").fault_reason


def test_a_silent_unit_faults_on_a_host_that_wakes_every_cycle_late():
    # A loaded host: every wake-up is 3 ms late (past the 2 ms threshold), yet each cycle sends its
    # requests and waits its whole window. The silence is the device's: it faults on the usual rule,
    # not whenever the load ends; a unit that answers is not blamed.
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.run(10)
    rig.bus.silent.add(1)

    def late():
        rig.clock.stall_next_sleep = 0.003
    for k in range(200):
        rig.run(1, before=late)
        if rig.state("m1").fault:
            break
    assert rig.state("m1").fault, rig.ch.statistics()["reply_timeouts"]
    assert "requests unanswered" in rig.state("m1").fault_reason
    assert k + 1 <= 26                       # N = 25 misses and 50 ms: as many cycles as on time
    # (a late cycle overruns, so the next one is re-anchored and starts on time: half of them are late)
    assert rig.ch.timing.late_cycles >= 10 and rig.ch.timing.excused_cycles == 0
    assert not rig.state("m2").fault


class BehindPeer:
    """A liveness policy of a peer that is late in every cycle and never dropped a frame."""

    def stalled(self, since, now, sent=None):
        return True

    def last_drop(self):
        return 0.0


def test_a_simulator_that_stays_behind_does_not_hide_a_silent_unit():
    # The simulated firmware never catches up (its sign of life says "late" in every cycle), yet it
    # answers: every cycle is excused, but a unit silent for twice its detection time while the
    # other units answer is silent on its own and faults; the answering unit is never blamed, and a
    # firmware that answers nobody (frozen) blames nobody.
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.run(10)
    rig.ch.liveness = BehindPeer()
    rig.bus.silent.add(1)
    cycles = rig.run_until_fault("m1")
    s = rig.state("m1")
    assert "requests unanswered" in s.fault_reason
    detection = rig.motors[0].detection_time
    assert 2 * detection / rig.ch.period <= cycles <= 3 * detection / rig.ch.period + 2
    assert not rig.state("m2").fault and rig.ch.peer_stalls >= cycles
    # frozen: nothing answers, for 50 detection times; the healthy unit is not blamed
    rig.bus.silent.add(2)
    rig.run(int(50 * detection / rig.ch.period))
    assert not rig.state("m2").fault


def test_a_unit_whose_frames_the_simulator_dropped_is_not_blamed():
    # The simulated firmware, left behind by the host, drops the frames queued too long -- here, as
    # it happens when it hovers at its limit, m1's frames every cycle while m2's get through. It
    # records each drop: m1's silence is the host's doing and m1 is never blamed. Once the drops
    # stop and m1 stays silent, it is silent on its own again and faults.
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.run(10)
    peer = rig.ch.liveness = BehindPeer()
    rig.bus.silent.add(1)
    drops = {"last": 0.0, "on": True}

    def drop() -> None:
        if drops["on"]:
            drops["last"] = rig.clock()

    peer.last_drop = lambda: drops["last"]  # type: ignore[method-assign]
    detection = rig.motors[0].detection_time
    rig.run(int(50 * detection / rig.ch.period), before=drop)
    assert not rig.state("m1").fault and not rig.state("m2").fault
    drops["on"] = False
    cycles = rig.run_until_fault("m1")
    assert 2 * detection / rig.ch.period <= cycles <= 3 * detection / rig.ch.period + 2
    assert not rig.state("m2").fault


def test_a_simulator_that_has_not_taken_the_cycles_requests_is_not_blamed_on_its_motors():
    # The simulated firmware passes its loop often enough (no gap), but the host holds it back in
    # short bursts: the cycle's requests still wait in its queue when the cycle ends. Those cycles
    # are the host's doing, for as long as it lasts; once it has taken the requests, the silence of
    # motors that do not answer is theirs, and they fault in their detection time.
    rig = Rig(rate=100.0, fault_timeout=0.05)
    rig.run(5)
    live = Liveness()
    rig.ch.liveness = live
    rig.bus.silent.update({1, 2})
    behind = {"on": True}

    def simulator_pass() -> None:
        now = rig.clock()
        live.beat(now)
        live.progress(now - 0.015 if behind["on"] else now + 0.005, float("inf"))

    detection = rig.motors[0].detection_time
    rig.run(int(20 * detection / rig.ch.period), before=simulator_pass)
    assert not rig.state("m1").fault and not rig.state("m2").fault
    assert rig.ch.peer_stalls >= 20 * detection / rig.ch.period - 1
    behind["on"] = False
    cycles = 0
    while not rig.state("m1").fault:
        simulator_pass()
        rig.run(1)
        cycles += 1
        assert cycles < 3 * detection / rig.ch.period + 2
    assert rig.state("m2").fault
    assert cycles >= detection / rig.ch.period


def test_late_replies_end_the_streak():
    # every reply of m1 misses the 1.6 ms window (1.9 ms latency) and is drained at the next cycle start
    rig = Rig(rate=500.0, fault_timeout=0.05)
    rig.bus.extra_latency[1] = 0.0017
    rig.run(500)                              # 1 s, 20 x fault_timeout
    assert not rig.state("m1").fault
    assert rig.ch.statistics()["reply_timeouts"]["m1"] >= 490


def test_stall_statistics_count_and_measure():
    rig = Rig(rate=500.0)
    rig.run(5)
    for stall in (0.005, 0.030, 0.120, 0.010, 0.025):
        rig.clock.stall_next_sleep = stall
        rig.run(3)
    st = rig.ch.statistics()
    assert st["late_cycles"] == 5                       # all of them woke > 2 ms late
    assert st["stalls"] == 3                            # 30, 120 and 25 ms; 5 and 10 ms are not stalls
    assert st["longest_stall"] == pytest.approx(120.0, abs=0.1)
    assert st["last_stall"] == pytest.approx(25.0, abs=0.1)
    assert st["last_stall_time"] >= st["longest_stall_time"]
    assert st["late_threshold"] == pytest.approx(2.0)


def test_watchdog_does_not_trip_when_the_whole_process_freezes():
    rig = Rig(rate=500.0, fault_timeout=0.05, command_timeout=0.05, motors=1)
    m = rig.motors[0]
    k = itertools.count()

    def controller():          # writes a new command before every bus cycle (the control loop)
        m.set_position(0.001 * next(k), 0.5)

    rig.run(50, before=controller)
    rig.clock.stall_next_sleep = 0.300   # the whole process frozen: no command, no bus cycle
    rig.run(50, before=controller)
    assert m.watchdog_trips == 0 and not rig.state("m1").watchdog
    # the controller itself stops (the bus thread keeps running): the watchdog trips after 50 ms
    last = bytes(rig.bus.commands_to(1)[-1][1])
    rig.run(24)
    assert not rig.state("m1").watchdog
    rig.run(2)
    assert rig.state("m1").watchdog and m.watchdog_trips == 1
    held = rig.bus.commands_to(1)[-1][1]
    assert held == mit.replace_velocity(last, 0.0, L)   # same position, no velocity feed-forward
    controller()
    rig.run(1)
    assert not rig.state("m1").watchdog
    assert rig.bus.commands_to(1)[-1][1] == mit.pack_command(0.001 * 100, 0.5, 20.0, 0.5, 0.0, L)


def test_channel_routes_shared_replies_by_key_and_counts_malformed_ones():
    rig = Rig()
    rig.run(2)
    assert rig.state("m1").received and rig.state("m2").received
    ch = rig.ch
    ch._dispatch(can.Message(arbitration_id=0, is_extended_id=False, data=b""), rig.clock.t)
    ch._dispatch(can.Message(arbitration_id=0, is_extended_id=False,
                             data=mit.pack_reply(9, 0, 0, 0, L, 8)), rig.clock.t)
    assert ch.bad_frames == 1 and ch.unknown_frames == 1


def test_shared_reply_key_collision_and_id_clash_are_config_errors():
    from rospy_control.exceptions import ConfigError
    ch = CanChannel("bus", interface="virtual", channel="x", master_id=0x10)
    with pytest.raises(ConfigError, match="CAN id 0x010 is already used by 'master_id'"):
        ch.add_unit(Motor("m", 0x10))
    with pytest.raises(ConfigError, match="does not fit reply byte 0"):
        ch.add_unit(Motor("big", 0x123))


def test_a_motor_nobody_commands_stays_limp():
    rig = Rig(rate=500.0, command_timeout=0.01, motors=1)
    rig.run(50)
    assert rig.motors[0].watchdog_trips == 0
    assert rig.bus.commands_to(1)[-1][1] == mit.pack_command(0, 0, 0, 0, 0, L)
    assert rig.state("m1").requested_mode == ControlMode.NONE
