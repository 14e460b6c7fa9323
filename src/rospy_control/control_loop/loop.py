"""The control-loop thread: ``read -> controller_manager.update -> write`` at a fixed rate.

This is ros_control's canonical application loop (``controller_manager_tests/src/dummy_app.cpp``
runs the same three calls) in a dedicated thread:

* **Schedule**: absolute deadlines on the monotonic clock (``deadline += period``), so the average
  rate does not drift with the time the cycle itself takes; never ``rospy.Rate``, which follows ROS
  time (it stalls with a frozen ``/clock`` and jumps with a restarted one).
* **Missed deadlines**: a cycle that ends after the next deadline is re-anchored on "now" (the
  missed cycles are skipped, not run in a burst, because a burst of position commands is worse for a
  motor than a late one).  It is an **overrun** when the cycle's own work took longer than the period
  *on the CPU* (our code is too slow for the rate: warned about), and a **late cycle** otherwise:
  the thread woke up late or was descheduled (scheduler jitter on a non-real-time kernel: counted,
  logged at debug).
* **Time**: ``time`` passed to the three calls is the ROS time read from ``now()`` once per cycle
  (``rospy.get_time`` or ``RosNodeHandle.now`` in the driver; simulated time when enabled);
  ``period`` is the *measured* monotonic time since the previous cycle started (the first cycle gets
  the nominal period), which is what the hardware actually experienced even when ROS time is
  simulated or frozen -- **bounded to** ``max_period_factor`` (1.5) nominal periods.  A host that
  stalls the process for 250 ms must not make a trajectory's time (which advances by ``period``)
  leap 250 ms ahead: the desired position would jump and the path tolerance would abort a goal on
  a robot that tracks perfectly.  With the bound, a late cycle *delays* the trajectory instead;
  the time lost is summed in :attr:`ControlLoopStats.delay` (reported on ``/diagnostics``).
* **Host stalls** are measured on their own and never reported as hardware faults: a cycle that
  starts ``STALL_THRESHOLD`` (20 ms) or more after its deadline, or whose work is stretched that
  much beyond the CPU time the thread got (``time.thread_time``: the thread was not running, or a
  controller blocked), is a *stall* (:attr:`ControlLoopStats.stalls`, :attr:`ControlLoopStats.longest_stall`).
* **Per-cycle hook**: ``after_read(time, period)``, if given, runs right after ``read`` in the same
  thread, so it sees exactly the state the controllers will see this cycle (the standalone branch
  copies the joint states for its ``/joint_states`` thread there).  It must be quick and never
  block; an exception from it is counted and logged like one from ``read``.
* **Recovered hardware**: when ``robot_hw.consume_reset_request()`` (a RobotHW capability) returns True
  after ``read``, that cycle's ``update`` gets ``reset_controllers=True`` (every running controller
  restarts from the measured state, e.g. after a motor fault was reset).
* **Faults**: an exception from ``read``/``update``/``write`` is logged (throttled, with traceback
  once) and counted in :attr:`ControlLoopStats.errors`; the loop goes on -- per the architecture,
  cyclic-path faults are reported, never allowed to kill the loop.  ``write`` is still called after a
  failing ``update`` so that the hardware keeps getting the last commands.
* **Stop**: :meth:`ControlLoop.stop` wakes the thread at once (it sleeps on an event), waits for the
  current cycle to finish and joins; idempotent.  Nothing is called on the hardware or the
  controller manager after :meth:`stop` returns.

Example (the driver node)::

    loop = ControlLoop(robot_hw, cm, rate=500.0, now=root_nh.now)
    loop.start()
    rospy.spin()
    loop.stop()
"""
from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Dict, Optional

from rospy_control.log import Once, Throttle, get_logger
from rospy_control.realtime import RealtimeBuffer, start_thread

logger = get_logger(__name__)

__all__ = ["ControlLoop", "ControlLoopStats"]


class ControlLoopStats:
    """Counters of a :class:`ControlLoop` (read them with :meth:`ControlLoop.stats`, a copy).

    :ivar cycles: cycles run.
    :ivar overruns: cycles whose work took longer than the period (so they missed the next deadline).
    :ivar late_cycles: cycles that missed the next deadline because the thread woke up late.
    :ivar errors: exceptions raised by read/update/write.
    :ivar last_exec: wall time the last cycle's work took (s).
    :ivar max_exec: longest cycle work so far (s).
    :ivar mean_exec: mean cycle work (s).
    :ivar last_period: the ``period`` passed to the last cycle (s).
    :ivar last_overrun_time: ROS time of the last overrun (s), 0 if none.
    :ivar stalls: cycles delayed or stretched by ``STALL_THRESHOLD`` or more while the thread was not
        running (host stalls, never a hardware problem).
    :ivar longest_stall: the longest such delay so far (s).
    :ivar last_stall_time: wall time (``time.time()``) of the last stall, 0 if none.
    :ivar clamped_cycles: cycles whose measured period exceeded the bound (``max_period``).
    :ivar delay: total time (s) the controllers' clock fell behind the wall clock because periods
        were bounded (a trajectory runs this much later than planned).
    """

    __slots__ = ("cycles", "overruns", "late_cycles", "errors", "last_exec", "max_exec", "mean_exec",
                 "last_period", "last_overrun_time", "stalls", "longest_stall", "last_stall_time",
                 "clamped_cycles", "delay")

    def __init__(self) -> None:
        self.cycles = 0
        self.overruns = 0
        self.late_cycles = 0
        self.errors = 0
        self.last_exec = 0.0
        self.max_exec = 0.0
        self.mean_exec = 0.0
        self.last_period = 0.0
        self.last_overrun_time = 0.0
        self.stalls = 0
        self.longest_stall = 0.0
        self.last_stall_time = 0.0
        self.clamped_cycles = 0
        self.delay = 0.0

    def copy(self) -> "ControlLoopStats":
        out = ControlLoopStats()
        for name in self.__slots__:
            setattr(out, name, getattr(self, name))
        return out

    def as_dict(self) -> Dict[str, float]:
        return {name: getattr(self, name) for name in self.__slots__}

    def __repr__(self) -> str:
        return "ControlLoopStats(" + ", ".join(f"{k}={v!r}" for k, v in self.as_dict().items()) + ")"


class ControlLoop:
    """Runs ``robot_hw.read(t, dt)``, ``controller_manager.update(t, dt)``, ``robot_hw.write(t, dt)``
    in a thread at ``rate`` Hz (see the module docstring for the timing rules).

    :param robot_hw: the :class:`~rospy_control.hardware_interface.RobotHW` (``read``, ``write``,
        ``consume_reset_request``).
    :param controller_manager: anything with ``update(time, period)`` (and
        ``update(time, period, reset_controllers)`` when :meth:`request_reset` is used), or None to run
        only read/write.
    :param rate: loop frequency in Hz (> 0).
    :param now: ROS time source in float seconds (e.g. ``RosNodeHandle.now``).
    :param name: thread name (also used in log messages).
    :param priority: if given, try to run the thread with ``SCHED_FIFO`` at this priority (needs the
        capability; a failure is logged as a warning and the loop runs at normal priority).
    :param monotonic: monotonic clock, injectable for tests.
    :param max_period_factor: the ``period`` passed to the three calls is at most this many nominal
        periods (>= 1; see the module docstring).
    :param cpu_clock: the thread's CPU-time clock (``time.thread_time``), injectable for tests.
    :param after_read: called as ``after_read(time, period)`` after every ``read`` (see the module
        docstring).
    :raises ValueError: ``rate`` is not positive, or ``max_period_factor`` < 1.
    """

    #: Seconds :meth:`stop` waits for the thread by default.
    JOIN_TIMEOUT = 5.0
    #: Default bound of the period passed to the controllers, in nominal periods.
    #: 1.5: ordinary wake-up jitter (a period of up to 1.5 nominal ones) passes through unchanged, so
    #: trajectories keep wall-clock time; after a stall a robot that tracks one cycle late shows a path
    #: error of at most velocity x 1.5 periods.  With 2, ros_controllers' own trajectory test suites
    #: (path tolerance 0.05 rad at 2.9 rad/s, 100 Hz) aborted goals after 40 ms stalls; with 1.5 they
    #: pass.
    MAX_PERIOD_FACTOR = 1.5
    #: A delay this long (s) while the thread was not running is a host stall.
    STALL_THRESHOLD = 0.020

    def __init__(self, robot_hw: Any, controller_manager: Optional[Any], rate: float,
                 now: Callable[[], float], name: str = "control_loop", priority: Optional[int] = None,
                 monotonic: Callable[[], float] = time.monotonic,
                 max_period_factor: Optional[float] = None,
                 cpu_clock: Callable[[], float] = time.thread_time,
                 after_read: Optional[Callable[[float, float], None]] = None) -> None:
        rate = float(rate)
        if not rate > 0.0:
            raise ValueError(f"ControlLoop '{name}': rate must be > 0 Hz, got {rate}")
        factor = self.MAX_PERIOD_FACTOR if max_period_factor is None else float(max_period_factor)
        if not factor >= 1.0:
            raise ValueError(f"ControlLoop '{name}': max_period_factor must be >= 1, got {factor}")
        self.robot_hw = robot_hw
        self.controller_manager = controller_manager
        self.after_read = after_read
        self.rate = rate
        self.period = 1.0 / rate
        #: the largest ``period`` passed to read/update/write
        self.max_period = factor * self.period
        self.name = name
        self._cpu = cpu_clock
        self.priority = priority
        self._now = now
        self._monotonic = monotonic
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._stats = ControlLoopStats()
        self._stats_lock = threading.Lock()
        # reset requests cross threads (a ROS service thread asks, the loop honours) as the sequence
        # number of a RealtimeBuffer: a request made while the loop handles the previous one is
        # never lost, whatever the interleaving; _reset itself is the control thread's own
        self._reset_requests: RealtimeBuffer[None] = RealtimeBuffer(None, "reset requests")
        self._reset_seen = 0
        self._reset = False
        self._throttle = Throttle(5.0)
        self._once = Once()
        self._started = threading.Event()

    # -- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the thread (once). :raises RuntimeError: started before."""
        if self._thread is not None:
            raise RuntimeError(f"ControlLoop '{self.name}' was already started")
        self._thread = start_thread(self._run, self.name)
        self._started.wait(1.0)
        logger.info("Control loop '%s' started at %.1f Hz", self.name, self.rate)

    def stop(self, timeout: Optional[float] = None) -> bool:
        """Stop the thread after the current cycle and join it; idempotent.

        :returns: True if the thread has ended (or never ran).
        """
        self._stop.set()
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        wait = self.JOIN_TIMEOUT if timeout is None else timeout
        thread.join(wait)
        if thread.is_alive():
            logger.error("Control loop '%s' did not stop within %.1f s (a read, update or write call does "
                         "not return); the controllers, the RobotHW and the buses are left to it", self.name,
                         wait)
            return False
        return True

    def is_running(self) -> bool:
        """True while the thread runs."""
        return self._thread is not None and self._thread.is_alive()

    def request_reset(self) -> None:
        """Make the next cycle call ``update(time, period, True)`` (ros_control's
        ``reset_controllers``: every running controller gets ``stopping`` then ``starting``, e.g. after
        the motors were re-enabled)."""
        self._reset_requests.write_from_non_rt(None)

    def stats(self) -> ControlLoopStats:
        """A consistent copy of the counters."""
        with self._stats_lock:
            return self._stats.copy()

    # -- the thread --------------------------------------------------------------------------------
    def _set_priority(self) -> None:
        if self.priority is None:
            return
        try:
            os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(int(self.priority)))
        except (AttributeError, OSError, ValueError) as err:
            logger.warning("Control loop '%s': cannot use SCHED_FIFO priority %s (%s); running at normal "
                           "priority", self.name, self.priority, err)

    def _run(self) -> None:
        self._set_priority()
        self._started.set()
        mono = self._monotonic
        cpu = self._cpu
        period = self.period
        max_period = self.max_period
        stall_after = self.STALL_THRESHOLD
        deadline = mono()
        last_start: Optional[float] = None
        while not self._stop.is_set():
            start = mono()
            cpu0 = cpu()
            measured = period if last_start is None else start - last_start
            lateness = start - deadline  # how late the thread woke up for this cycle
            last_start = start
            dt = measured if measured <= max_period else max_period
            self.cycle(dt)
            end = mono()
            exec_time = end - start
            exec_cpu = cpu() - cpu0
            deadline += period
            missed = end > deadline
            overrun = missed and exec_cpu > period
            stall = max(lateness, exec_time - exec_cpu)
            with self._stats_lock:
                stats = self._stats
                stats.cycles += 1
                stats.last_exec = exec_time
                stats.last_period = dt
                if exec_time > stats.max_exec:
                    stats.max_exec = exec_time
                stats.mean_exec += (exec_time - stats.mean_exec) / stats.cycles
                if measured > max_period:
                    stats.clamped_cycles += 1
                    stats.delay += measured - max_period
                if stall >= stall_after:
                    stats.stalls += 1
                    stats.last_stall_time = time.time()
                    if stall > stats.longest_stall:
                        stats.longest_stall = stall
                if overrun:
                    stats.overruns += 1
                    stats.last_overrun_time = self._safe_now()
                elif missed:
                    stats.late_cycles += 1
            if stall >= stall_after and self._throttle.ready("stall"):
                logger.info("Control loop '%s': this thread was held up for %.1f ms (the host did not run "
                            "it, or a controller blocked; not a hardware fault; %d so far); the "
                            "controllers' clock advanced by %.1f ms only", self.name, stall * 1e3,
                            self._stats.stalls, dt * 1e3)
            if missed:
                if overrun and self._throttle.ready("overrun"):
                    logger.warning("Control loop '%s' overran: cycle took %.2f ms (%.2f ms on the CPU), "
                                   "period %.2f ms (%d overruns so far)", self.name, exec_time * 1e3,
                                   exec_cpu * 1e3, period * 1e3, self._stats.overruns)
                elif not overrun and self._throttle.ready("late"):
                    logger.debug("Control loop '%s' woke up %.2f ms late (%d late cycles so far)",
                                 self.name, (end - deadline) * 1e3, self._stats.late_cycles)
                deadline = end  # re-anchor: skip the missed cycles instead of bursting
                continue
            self._wait(deadline - end)

    def _wait(self, timeout: float) -> None:
        """Sleep until the next deadline, waking at once on :meth:`stop` (tests override it together
        with ``monotonic`` to run the schedule on a simulated clock)."""
        self._stop.wait(timeout)

    def _safe_now(self) -> float:
        try:
            return float(self._now())
        except Exception:  # noqa: BLE001 - statistics only
            return 0.0

    def cycle(self, period: float) -> None:
        """One ``read -> (after_read) -> update -> write`` with the ROS time read now (the thread calls
        this; tests may call it directly without starting the thread)."""
        try:
            t = float(self._now())
        except Exception as err:  # noqa: BLE001 - the time source failing (ROS shutting down)
            self._error("now", err)
            return
        try:
            self.robot_hw.read(t, period)
            if self.robot_hw.consume_reset_request():
                self._reset = True
        except Exception as err:  # noqa: BLE001 - reported, never kills the loop
            self._error("read", err)
        hook = self.after_read
        if hook is not None:
            try:
                hook(t, period)
            except Exception as err:  # noqa: BLE001
                self._error("after_read", err)
        requested = self._reset_requests.sequence()
        if requested != self._reset_seen:
            self._reset_seen = requested
            self._reset = True
        cm = self.controller_manager
        if cm is not None:
            try:
                if self._reset:
                    self._reset = False
                    cm.update(t, period, True)
                else:
                    cm.update(t, period)
            except Exception as err:  # noqa: BLE001
                self._error("update", err)
        try:
            self.robot_hw.write(t, period)
        except Exception as err:  # noqa: BLE001
            self._error("write", err)

    def _error(self, where: str, err: BaseException) -> None:
        with self._stats_lock:
            self._stats.errors += 1
        if self._once.ready((where, type(err))):
            logger.error("Control loop '%s': %s() raised %s: %s", self.name, where, type(err).__name__, err,
                         exc_info=err)
        elif self._throttle.ready(where):
            logger.error("Control loop '%s': %s() raised %s: %s (%d errors so far)", self.name, where,
                         type(err).__name__, err, self._stats.errors)
