"""``/diagnostics`` for the driver node: motors, sensors, CAN channels, control loop, RobotHW.

:class:`DriverDiagnostics` turns what the layers already count into one
``diagnostic_msgs/DiagnosticArray`` (the same message ``diagnostic_updater`` publishes, so
``rqt_robot_monitor`` and ``diagnostic_aggregator`` work unchanged).  It is built and published by
:class:`DiagnosticsThread` about once per second, **off the control thread**: it only reads the
middleware's immutable snapshot, the channels' counters and the loop's statistics copy.

Statuses (``name`` is ``"<node name>: <what>"``, ``hardware_id`` the bus and CAN id):

* ``motor <name>`` -- ``mode`` (confirmed), ``requested_mode``, ``enabled``, position, velocity,
  effort, ``temperature``, ``error_code``, ``fault`` and ``fault_reason``, ``reply_timeouts``.
  ERROR while in FAULT, WARN before the first reply, with a firmware error code, within
  ``TEMPERATURE_MARGIN`` (10 °C) of the motor's ``max_temperature`` (it faults above it), or while the
  command watchdog holds it.  This is the one builder of motor statuses the node publishes.
* ``imu <name>``, ``contact <name>``, ``force_torque <name>``, ``encoder <name>`` -- fault and the
  latest values.
* ``channel <name>`` -- interface, bitrate, configured rate, measured cycles/s, ``frames_sent/s``,
  ``frames_received/s``, error counters, ``bus_load_estimate`` (%), late cycles and overruns.
  WARN above the channel's ``max_bus_load`` or when errors grew since the last report; ERROR while
  the bus is off (``bus_off``: the CAN controller reported bus-off; every unit on it is in FAULT).
* ``control loop`` -- configured rate, measured rate, overruns (total and since last report),
  errors, execution times, host stalls (count, longest, since last report) and the trajectory
  delay they caused (the period passed to the controllers is bounded, see
  :mod:`~rospy_control.control_loop.loop`).  WARN when the measured rate is more than 10 % below
  the configured one, when overruns grew or when the host stalled since the last report (a host
  problem, never reported as a hardware fault).
* ``faults`` -- the middleware's fault log: each fault with its wall time, unit and reason, each
  reset request, recovery or failed reset, each command-watchdog hold and release (newest last).
  ERROR while a unit is in FAULT (message: the units and reasons), else OK.
* ``simulator`` -- with the simulated firmware only: per motor the command frames received and the
  largest position step between two consecutive command frames (joint side).
* ``controller failures`` -- controllers that raised in ``update`` (or ``starting``, ...) and were
  aborted by the controller manager (the loop and the other controllers go on): ERROR while one of
  them is still aborted, naming it, the hook and the error; OK once each was started again.
* ``robot_hw`` -- from the RobotHW's ``status()``: hold mode, per joint the command interface,
  motor mode and controller, the pending mode switch, faulted joints (ERROR).  The motor statuses
  also get each driven joint's interface and controller from it.
* ``controllers`` -- standalone branch only (``controller_states`` given; the ros_control branch
  has ``controller_manager/list_controllers``): each controller's state, OK when all run, else
  WARN naming those that do not (``hardware_id`` ``standalone``).

Rates ("/s" values) are differences between two reports divided by the wall time between them; the
first report gives the average since start.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Dict, List, Optional, Tuple

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from rospy_control.log import Throttle, get_logger
from rospy_control.devices import ActuatorUnit
from rospy_control.realtime import join_thread, start_thread

logger = get_logger(__name__)

__all__ = ["DriverDiagnostics", "DiagnosticsThread", "OK", "WARN", "ERROR", "STALE"]

OK = DiagnosticStatus.OK
WARN = DiagnosticStatus.WARN
ERROR = DiagnosticStatus.ERROR
STALE = DiagnosticStatus.STALE

#: A motor within this many degrees Celsius of its ``max_temperature`` is reported as WARN.
TEMPERATURE_MARGIN = 10.0

#: Fraction below the configured loop rate at which the loop status turns WARN.
RATE_WARN_FRACTION = 0.9


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if hasattr(value, "name") and hasattr(value, "value"):  # IntEnum (ControlMode)
        return str(value.name)
    return str(value)


def _wall(stamp: float) -> str:
    """``time.time()`` stamp -> local ``HH:MM:SS.mmm`` ("-" for 0)."""
    if not stamp:
        return "-"
    return time.strftime("%H:%M:%S", time.localtime(stamp)) + f".{int((stamp % 1.0) * 1000):03d}"


def _near_max_temperature(unit: Any, state: Any) -> bool:
    """The motor reports a temperature within :data:`TEMPERATURE_MARGIN` of its ``max_temperature``."""
    temp = getattr(state, "temperature", None)
    limit = getattr(unit, "max_temperature", None)
    if not isinstance(temp, (int, float)) or not isinstance(limit, (int, float)):
        return False
    return temp >= limit - TEMPERATURE_MARGIN


def _status(name: str, hardware_id: str, level: int, message: str,
            values: List[Tuple[str, Any]]) -> DiagnosticStatus:
    return DiagnosticStatus(level=level, name=name, message=message, hardware_id=hardware_id,
                            values=[KeyValue(key=str(k), value=_fmt(v)) for k, v in values])


class DriverDiagnostics:
    """Builds the driver's ``DiagnosticArray`` (see the module docstring).

    :param middleware: the :class:`~rospy_control.middleware.Middleware`, or None for a RobotHW that is
        not over it (then units, channels, faults and simulator are left out).
    :param prefix: status name prefix (the node's name).
    :param loop: the :class:`~rospy_control.control_loop.loop.ControlLoop` (or None).
    :param robot_hw: the RobotHW; its ``status()`` is reported unless it is None.
    :param extra: callables returning more ``DiagnosticStatus`` objects.
    :param controller_states: callable returning ``{controller: state}`` (the standalone branch's
        controllers), reported as the ``controllers`` status.
    :param clock: monotonic clock (tests).
    :param simulator: the :class:`~rospy_control.simulator.SimulatedRobot` the middleware's simulated
        channels talk to (None: real hardware); its command statistics are the ``simulator`` status.
    """

    def __init__(self, middleware: Any, prefix: str, loop: Any = None, robot_hw: Any = None,
                 extra: Optional[List[Callable[[], List[DiagnosticStatus]]]] = None,
                 clock: Callable[[], float] = time.monotonic,
                 controller_states: Optional[Callable[[], Dict[str, str]]] = None,
                 simulator: Any = None) -> None:
        self.mw = middleware
        self.simulator = simulator
        self.prefix = prefix.strip("/") or "driver"
        self.loop = loop
        self.robot_hw = robot_hw
        self.extra = list(extra or [])
        self.controller_states = controller_states
        self._clock = clock
        self._start = clock()
        self._last_time: Optional[float] = None
        self._last_channels: Dict[str, dict] = {}
        self._last_loop: Optional[dict] = None
        self._throttle = Throttle(30.0)

    def _name(self, what: str) -> str:
        return f"{self.prefix}: {what}"

    # -- the whole array --------------------------------------------------------------------------
    def build(self, stamp: Any = None) -> DiagnosticArray:
        """One ``DiagnosticArray`` (``header.stamp`` = ``stamp`` if given)."""
        now = self._clock()
        elapsed = now - (self._last_time if self._last_time is not None else self._start)
        elapsed = max(elapsed, 1e-6)
        msg = DiagnosticArray()
        if stamp is not None:
            msg.header.stamp = stamp
        statuses = msg.status
        hw_status = self._robot_hw_report()
        stats: Dict[str, Any] = {"channels": {}}
        if self.mw is not None:  # the CAN middleware; a RobotHW of your own reports through status()
            statuses.extend(self.unit_statuses(hw_status))
            try:
                stats = self.mw.statistics()
            except Exception as err:  # noqa: BLE001 - diagnostics never take the node down
                statuses.append(_status(self._name("middleware"), self.mw.name, ERROR,
                                        f"statistics failed: {err}", []))
        for name, ch in sorted(stats.get("channels", {}).items()):
            statuses.append(self.channel_status(name, ch, elapsed))
        if self.loop is not None:
            statuses.append(self.loop_status(elapsed))
        hw = self.robot_hw_status(hw_status)
        if hw is not None:
            statuses.append(hw)
        if self.mw is not None:
            statuses.append(self.faults_status())
            sim = self.simulator_status()
            if sim is not None:
                statuses.append(sim)
        if self.controller_states is not None:
            statuses.append(self.controllers_status())
        failures = self.controller_failures_status()
        if failures is not None:
            statuses.append(failures)
        for source in self.extra:
            try:
                statuses.extend(source())
            except Exception as err:  # noqa: BLE001
                if self._throttle.ready(id(source)):
                    logger.warning("diagnostics source %r failed: %s", source, err)
        self._last_time = now
        return msg

    # -- units ------------------------------------------------------------------------------------
    def unit_statuses(self, hw_status: Optional[dict] = None) -> List[DiagnosticStatus]:
        snap = self.mw.snapshot()
        motors = (hw_status or {}).get("motors", {}) if isinstance(hw_status, dict) else {}
        joints = (hw_status or {}).get("joints", {}) if isinstance(hw_status, dict) else {}
        out = []
        for unit in self.mw.units():
            state = snap.get(unit.name)
            status = self.unit_status(unit, state)
            info = motors.get(unit.name)
            if isinstance(info, dict):  # what the RobotHW knows: joints, interface, controller
                for jn in info.get("joints", []):
                    j = joints.get(jn, {})
                    status.values.append(KeyValue(key=f"{jn} interface",
                                                  value=str(j.get("interface") or "hold")))
                    status.values.append(KeyValue(key=f"{jn} controller",
                                                  value=str(j.get("controller") or "")))
                    if j.get("start_check"):   # refused at start-up, or a turn applied (wrap="auto")
                        status.values.append(KeyValue(key=f"{jn} start-up check",
                                                      value=str(j["start_check"])))
            out.append(status)
        return out

    def unit_status(self, unit: Any, state: Any) -> DiagnosticStatus:
        channel = getattr(unit, "channel_name", "")
        can_id = getattr(unit, "can_id", None)
        hw_id = f"{channel} id 0x{can_id:X}" if can_id is not None else str(channel)
        actuator = isinstance(unit, ActuatorUnit)  # any protocol's actuator is a "motor" here
        kind = "Motor" if actuator else type(unit).__name__
        label = {"Motor": "motor", "ImuSensor": "imu", "ContactSensor": "contact",
                 "ForceTorqueSensor": "force_torque", "Encoder": "encoder"}.get(kind, kind.lower())
        name = self._name(f"{label} {unit.name}")
        values: List[Tuple[str, Any]] = []
        timeouts = getattr(unit, "reply_timeouts", 0)
        if state is None:
            return _status(name, hw_id, STALE, "no state yet", [("reply_timeouts", timeouts)])
        fields = getattr(state, "_fields", ())
        for field in fields:
            if field in ("name", "stamp"):
                continue
            values.append((field, getattr(state, field)))
        values.append(("reply_timeouts", timeouts))
        if getattr(unit, "joint", None):
            values.append(("joint", unit.joint))
        homing = unit.homing_state() if actuator and unit.CAPABILITIES.home else None
        if homing is not None:
            values.append(("homing", ("running: " if homing.active else "") + homing.message))
        if state.fault:
            level, message = ERROR, f"FAULT: {state.fault_reason}"
        elif not getattr(state, "received", True):
            level, message = WARN, "no reply yet"
        elif getattr(state, "error_code", 0):
            level, message = WARN, f"firmware error code 0x{state.error_code:02X}"
        elif _near_max_temperature(unit, state):
            level, message = WARN, (f"temperature {state.temperature:.0f} C close to max_temperature "
                                    f"{unit.max_temperature:.0f} C (FAULT above it)")
        elif getattr(state, "watchdog", False):
            level, message = WARN, ("command watchdog: the control loop sent no command for too long, the "
                                    "bus thread holds the motor")
        elif homing is not None and homing.active:
            level, message = WARN, "homing (~home): commands resume when it ends"
        elif homing is not None and homing.ok is False:
            level, message = WARN, f"last homing failed: {homing.message}"
        elif kind == "Motor":
            level = OK
            message = f"{_fmt(state.mode)}" + ("" if state.enabled else " (disabled)")
            if state.requested_mode != state.mode:
                message += f", switching to {_fmt(state.requested_mode)}"
        else:
            level, message = OK, "OK"
        return _status(name, hw_id, level, message, values)

    # -- channels ---------------------------------------------------------------------------------
    def channel_status(self, name: str, ch: dict, elapsed: float) -> DiagnosticStatus:
        last = self._last_channels.get(name, {})

        def per_s(key: str) -> float:
            return (ch.get(key, 0) - last.get(key, 0)) / elapsed

        error_keys = ("bus_errors", "tx_errors", "rx_errors", "thread_errors", "bad_frames")
        errors = sum(int(ch.get(k, 0)) for k in error_keys)
        last_errors = sum(int(last.get(k, 0)) for k in error_keys)
        timeouts = ch.get("reply_timeouts", {}) or {}
        load = float(ch.get("bus_load_estimate", 0.0))
        values: List[Tuple[str, Any]] = [
            ("interface", ch.get("interface", "")), ("channel", ch.get("channel", "")),
            ("bitrate", ch.get("bitrate", "")), ("rate (configured, Hz)", float(ch.get("rate", 0.0))),
            ("cycles/s", per_s("cycles")), ("frames_sent/s", per_s("frames_sent")),
            ("frames_received/s", per_s("frames_received")),
            ("bus_load_estimate (%)", 100.0 * load),
            ("errors", errors), ("errors since last report", errors - last_errors),
            ("reply_timeouts", sum(int(v) for v in timeouts.values())),
        ]
        for key in ("cycles", "late_cycles", "overruns", "frames_sent", "frames_received", "unknown_frames",
                    "bad_frames", "bus_errors", "tx_errors", "rx_errors", "thread_errors"):
            if key in ch:
                values.append((key, ch[key]))
        # host lateness of the bus thread (never a unit's fault) and the command watchdog
        for key, value in sorted(ch.items()):
            if ("stall" in key or "watchdog" in key) and not isinstance(value, dict):
                values.append((key, value))
        for unit, n in sorted(timeouts.items()):
            values.append((f"reply_timeouts {unit}", n))
        bus_off = bool(ch.get("bus_off"))
        values.append(("bus_off", bus_off))
        values.append(("bus_off_count", ch.get("bus_off_count", 0)))
        self._last_channels[name] = dict(ch)
        max_load = 0.8
        channel_obj = getattr(self.mw, "channels", {}).get(name)
        if channel_obj is not None:
            max_load = float(getattr(channel_obj, "max_bus_load", max_load))
        simulated = ""
        try:
            simulated = " (simulated)" if self.simulator is not None and self.simulator.is_simulated(name) \
                else ""
        except Exception:  # noqa: BLE001
            pass
        if bus_off:
            since = _wall(ch.get("bus_off_since") or 0.0)
            level, message = ERROR, (f"BUS-OFF since {since}: the CAN controller left the bus; nothing is "
                                     "sent, every unit on it is in FAULT until the controller restarts and "
                                     "~reset_faults re-enables them")
        elif errors > last_errors:
            level, message = WARN, f"{errors - last_errors} new bus error(s)"
        elif load > max_load:
            level, message = WARN, f"bus load estimate {100 * load:.0f} % above {100 * max_load:.0f} %"
        else:
            level, message = OK, f"{per_s('cycles'):.0f} cycles/s, load {100 * load:.0f} %{simulated}"
        return _status(self._name(f"channel {name}"), f"{ch.get('interface', '')}:{ch.get('channel', '')}",
                       level, message, values)

    # -- control loop -----------------------------------------------------------------------------
    def loop_status(self, elapsed: float) -> DiagnosticStatus:
        loop = self.loop
        stats = loop.stats().as_dict()
        last = self._last_loop or {"cycles": 0, "overruns": 0, "errors": 0, "stalls": 0}
        rate = (stats["cycles"] - last["cycles"]) / elapsed
        new_overruns = stats["overruns"] - last["overruns"]
        new_errors = stats["errors"] - last["errors"]
        new_stalls = stats.get("stalls", 0) - last.get("stalls", 0)
        self._last_loop = stats
        values: List[Tuple[str, Any]] = [
            ("rate (configured, Hz)", float(loop.rate)), ("rate (measured, Hz)", rate),
            ("overruns", stats["overruns"]), ("overruns since last report", new_overruns),
            ("late cycles (woke up late)", stats.get("late_cycles", 0)),
            ("errors", stats["errors"]), ("cycles", stats["cycles"]),
            ("mean execution time (ms)", 1e3 * stats["mean_exec"]),
            ("max execution time (ms)", 1e3 * stats["max_exec"]),
            ("last period (ms)", 1e3 * stats["last_period"]),
            ("host stalls (>= 20 ms)", stats.get("stalls", 0)), ("host stalls since last report", new_stalls),
            ("longest host stall (ms)", 1e3 * stats.get("longest_stall", 0.0)),
            ("last host stall (wall time)", _wall(stats.get("last_stall_time", 0.0))),
            ("bounded periods", stats.get("clamped_cycles", 0)),
            ("trajectory delay (ms)", 1e3 * stats.get("delay", 0.0)),
            ("max period passed (ms)", 1e3 * float(getattr(loop, "max_period", 0.0))),
        ]
        running = loop.is_running()
        if not running:
            level, message = ERROR, "control loop not running"
        elif new_errors:
            level, message = ERROR, f"{new_errors} error(s) in read/update/write"
        elif self._last_time is not None and rate < RATE_WARN_FRACTION * loop.rate:
            level, message = WARN, f"rate {rate:.1f} Hz below the configured {loop.rate:.1f} Hz"
        elif new_overruns:
            level, message = WARN, f"{new_overruns} overrun(s)"
        elif new_stalls:
            longest = 1e3 * stats.get("longest_stall", 0.0)
            delay = 1e3 * stats.get("delay", 0.0)
            level, message = WARN, (f"host stalled {new_stalls} time(s) (longest so far {longest:.0f} ms); "
                                    f"trajectories delayed by {delay:.0f} ms in total; not a hardware fault")
        else:
            level, message = OK, f"{rate:.1f} Hz"
        return _status(self._name("control loop"), getattr(loop, "name", "control_loop"), level, message,
                       values)

    # -- fault log and simulator ------------------------------------------------------------------
    #: events shown in the ``faults`` status (newest)
    MAX_EVENTS = 40

    def faults_status(self) -> DiagnosticStatus:
        """Current faults (ERROR) and the fault log: faults, resets, recoveries, watchdog holds."""
        name = self._name("faults")
        try:
            current = self.mw.faults()
        except Exception as err:  # noqa: BLE001
            return _status(name, self.mw.name, ERROR, f"fault state unavailable: {err}", [])
        events_fn = getattr(self.mw, "events", None)
        events = list(events_fn()) if callable(events_fn) else []
        values: List[Tuple[str, Any]] = [("units in FAULT", len(current))]
        for unit, reason in sorted(current.items()):
            values.append((f"FAULT {unit}", reason))
        values.append(("events logged", len(events)))
        for ev in events[-self.MAX_EVENTS:]:
            values.append((f"#{ev.seq} {_wall(ev.wall_time)} {ev.unit}", f"{ev.kind}: {ev.message}"))
        if current:
            level = ERROR
            message = "FAULT: " + "; ".join(f"{u}: {r}" for u, r in sorted(current.items()))
        else:
            level = OK
            resets = sum(1 for ev in events if ev.kind == "recovered")
            message = "no unit in FAULT" + (f" ({resets} recovered by reset)" if resets else "")
        return _status(name, self.mw.name, level, message, values)

    def simulator_status(self) -> Optional[DiagnosticStatus]:
        """Command statistics of the simulated firmware (None on real hardware)."""
        stats_fn = getattr(self.simulator, "command_stats", None)
        if not callable(stats_fn):
            return None
        try:
            stats = stats_fn()
        except Exception as err:  # noqa: BLE001
            return _status(self._name("simulator"), self.mw.name, WARN, f"statistics failed: {err}", [])
        if not stats:
            return None
        values: List[Tuple[str, Any]] = []
        worst = 0.0
        for unit, st in sorted(stats.items()):
            step = float(st.get("max_step", 0.0) or 0.0)
            worst = max(worst, step)
            values.append((f"{unit} command frames", st.get("count", 0)))
            values.append((f"{unit} max command step (rad)", step))
        return _status(self._name("simulator"), self.mw.name, OK,
                       f"simulated firmware; largest command step {worst:.4f} rad", values)

    # -- controllers (standalone branch) ----------------------------------------------------------
    def controllers_status(self) -> DiagnosticStatus:
        """The state of each controller of ``controller_states`` (OK when all run)."""
        name = self._name("controllers")
        try:
            states = dict(self.controller_states()) if self.controller_states is not None else {}
        except Exception as err:  # noqa: BLE001
            return _status(name, "standalone", ERROR, f"controller states unavailable: {err}", [])
        bad = [n for n, s in states.items() if s != "running"]
        level = OK if not bad else WARN
        message = "all running" if not bad else f"not running: {', '.join(bad)}"
        return _status(name, "standalone", level, message, list(states.items()))

    def controller_failures_status(self) -> Optional[DiagnosticStatus]:
        """Controllers the controller manager aborted because they raised (None without a manager)."""
        cm = getattr(self.loop, "controller_manager", None) if self.loop is not None else None
        fn = getattr(cm, "controller_failures", None)
        if cm is None or not callable(fn):
            return None
        name = self._name("controller failures")
        try:
            failures = list(fn())
            latest: Dict[str, Tuple[str, str]] = {}
            for _, ctrl, hook, error in failures:
                latest[ctrl] = (hook, error)
            aborted = {}
            for ctrl, what in latest.items():
                c = cm.get_controller_by_name(ctrl)
                if c is not None and c.is_aborted():
                    aborted[ctrl] = what
        except Exception as err:  # noqa: BLE001
            return _status(name, "controller_manager", WARN, f"controller failures unavailable: {err}", [])
        values: List[Tuple[str, Any]] = [("failures", len(failures))]
        for wall, ctrl, hook, error in failures[-self.MAX_EVENTS:]:
            values.append((f"{_wall(wall)} {ctrl}", f"{hook}(): {error}"))
        if aborted:
            level = ERROR
            message = "aborted after raising: " + "; ".join(
                f"{c} ({h}(): {e})" for c, (h, e) in sorted(aborted.items())) + \
                "; the control loop and the other controllers go on"
        else:
            level = OK
            message = "no controller failed" if not failures else \
                f"{len(failures)} failure(s), every failed controller was started again or unloaded"
        return _status(name, "controller_manager", level, message, values)

    # -- robot_hw ---------------------------------------------------------------------------------
    def _robot_hw_report(self) -> Any:
        """The RobotHW's ``status()`` (a dict), or None / an exception object."""
        if self.robot_hw is None:
            return None
        try:
            return self.robot_hw.status()
        except Exception as err:  # noqa: BLE001
            return err

    def robot_hw_status(self, report: Any) -> Optional[DiagnosticStatus]:
        """Summary of the RobotHW: hold mode, pending switch, faulted joints, joint interfaces."""
        if report is None:
            return None
        name = self._name("robot_hw")
        hw_id = type(self.robot_hw).__name__
        if isinstance(report, BaseException):
            return _status(name, hw_id, ERROR, f"status failed: {report}", [])
        if not isinstance(report, dict):
            return _status(name, hw_id, OK, str(report), [])
        values: List[Tuple[str, Any]] = [("hold_mode", report.get("hold_mode", ""))]
        faulted = []
        for jn, j in sorted((report.get("joints") or {}).items()):
            values.append((f"{jn}", f"{j.get('interface') or 'hold'} / {j.get('mode', '')} / "
                                    f"{j.get('controller') or '-'}"))
            if j.get("fault"):
                faulted.append(jn)
        sw = report.get("switch") or {}
        values.append(("switch pending", ", ".join(sw.get("pending") or []) or "-"))
        if sw.get("error"):
            values.append(("switch error", sw.get("error")))
        values.extend((str(k), v) for k, v in (report.get("values") or []))   # the RobotHW's own
        if report.get("error"):
            level, message = ERROR, str(report["error"])
        elif faulted:
            level, message = ERROR, f"joints in fault: {', '.join(faulted)}"
        elif sw.get("error"):
            level, message = ERROR, f"switch failed: {sw.get('error')}"
        elif not sw.get("finished", True):
            level, message = WARN, "mode switch in progress"
        elif report.get("warning"):
            level, message = WARN, str(report["warning"])
        else:
            level, message = OK, "OK"
        return _status(name, hw_id, level, message, values)


class DiagnosticsThread:
    """Publishes :meth:`DriverDiagnostics.build` every ``period`` seconds (wall clock) in its own thread.

    :param diagnostics: the builder.
    :param publish: callable taking the ``DiagnosticArray`` (e.g. a ``rospy.Publisher.publish``).
    :param stamp: callable returning the header stamp (e.g. ``rospy.Time.now``).
    :param period: seconds between two messages (> 0).
    """

    def __init__(self, diagnostics: DriverDiagnostics, publish: Callable[[DiagnosticArray], None],
                 stamp: Callable[[], Any], period: float = 1.0) -> None:
        if not period > 0.0:
            raise ValueError(f"diagnostics period must be > 0 s, got {period}")
        self.diagnostics = diagnostics
        self.period = float(period)
        self._publish = publish
        self._stamp = stamp
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._throttle = Throttle(30.0)

    def start(self) -> None:
        self._thread = start_thread(self._run, "diagnostics")

    def stop(self) -> bool:
        """Stop and join the thread; False if it did not stop (logged)."""
        self._stop.set()
        return join_thread(self._thread, 2.0 + self.period, "diagnostics")

    def publish_once(self) -> None:
        try:
            self._publish(self.diagnostics.build(self._stamp()))
        except Exception as err:  # noqa: BLE001 - diagnostics never take the node down
            if self._throttle.ready():
                logger.warning("could not publish diagnostics: %s", err)

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            self.publish_once()
