"""``MiddlewareRobotHW``: the RobotHW of a robot whose motors and sensors live in a :class:`Middleware`.

See :mod:`rospy_control.robot_hw` for construction, parameters and the switching/holding rules.

Internals: every URDF transmission (or 1:1 hardware-XML binding) is a *group* of joints and motors run
in one motor mode (:mod:`._records`).  This class keeps the lifecycle, ``read()`` and the public API,
and hands the rest to objects built for one configuration:

* :mod:`._build` -- parameters checked, records, handles and interfaces built into fresh objects,
  adopted only when all succeeded;
* :mod:`._writer` -- ``write()``: limits, joint -> actuator, commands in each group's mode;
* :mod:`._faults` -- what ``read()`` does when a motor goes to FAULT or comes back;
* :mod:`._switching` -- ``prepare_switch`` / ``do_switch`` / ``switch_result`` book-keeping;
* :mod:`._status` -- ``status()`` (the node's ``/diagnostics`` builder reads it).

Threads: ``read``/``write``/``do_switch``/``switch_result`` run on the control thread;
``prepare_switch`` and the diagnostics getters may run on another one.  They only read references
that the control thread replaces atomically (the switch planner's ``running`` and ``switch``, the
fault tracker's ``faulted_joints``, the configuration's objects), never containers it mutates.
"""
from __future__ import annotations

import time as _time
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from rospy_control.dynamics import compensation_options, configuration_root
from rospy_control.exceptions import CommunicationError, ConfigError, HardwareError, HardwareInterfaceError
from rospy_control.hardware_interface import ControllerInfo, RobotHW, SwitchState
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware import ControlMode, Middleware
from rospy_control.robot_hw._binding import bind
from rospy_control.robot_hw._build import build, check_params, read_text
from rospy_control.robot_hw._faults import FaultTracker
from rospy_control.robot_hw._homing import HomingTracker
from rospy_control.robot_hw._gravity import GravityFeedForward, build_feed_forward
from rospy_control.robot_hw._records import HOLD_MODES, KIND_INTERFACES, WATCHDOG_MODES, Joint, Records
from rospy_control.robot_hw._status import build_status
from rospy_control.robot_hw._switching import SwitchPlanner
from rospy_control.robot_hw._writer import Writer
from rospy_control.transmission_interface import (
    ActuatorToJointStateHandle, ActuatorToJointStateInterface, SimpleTransmission,
    TransmissionInterfaceLoader,
)

__all__ = ["MiddlewareRobotHW", "HOLD_MODES"]

logger = get_logger(__name__)


def _state_plan(rec: Records) -> Tuple[List[Tuple[Any, Any, float, float, Callable[[], None]]],
                                       List[Callable[[], None]]]:
    """The actuator -> joint state propagation of ``rec``'s transmissions, for ``read()``.

    ``(simple, others)``: ``simple`` holds ``(actuator data, joint data, reduction, offset, propagate)``
    of every :class:`SimpleTransmission` state handle (computed inline by ``read()``, the same
    arithmetic as the transmission's, without a list and a method call per value); ``others`` the
    ``propagate`` methods of the remaining handles (differentials, four-bar linkages, ...), in the
    loader's order.
    """
    loader = rec.loader
    if loader is None:
        return [], []
    iface = loader.robot_transmissions.get(ActuatorToJointStateInterface)
    if iface is None:
        return [], []
    simple: List[Tuple[Any, Any, float, float, Callable[[], None]]] = []
    others: List[Callable[[], None]] = []
    for handle in iface.get_handles():
        tr = handle.get_transmission()
        acts = getattr(handle, "_actuators", None)
        jnts = getattr(handle, "_joints", None)
        if type(tr) is SimpleTransmission and type(handle) is ActuatorToJointStateHandle \
                and acts is not None and jnts is not None and len(acts) == 1 and len(jnts) == 1 \
                and all(hasattr(jnts[0], f) for f in ("absolute_position", "torque_sensor")):
            simple.append((acts[0], jnts[0], tr.reduction, tr.joint_offset, handle.propagate))
        else:
            others.append(handle.propagate)
    return simple, others


def _read_plan(rec: Records) -> Tuple[List[tuple], List[Any], List[Callable[[], None]]]:
    """``(fused, plain, others)`` for ``read()``: ``fused`` holds ``(actuator, name, actuator data,
    joint data, reduction, offset)`` of each motor whose data feeds one 1:1 transmission's joint (see
    :func:`_state_plan`), ``plain`` the other motors, ``others`` the other transmissions' propagate
    methods."""
    simple, others = _state_plan(rec)
    by_data = {id(entry[0]): entry for entry in simple}
    fused: List[tuple] = []
    plain: List[Any] = []
    for act in rec.actuators:
        entry = by_data.pop(id(act.data), None)
        if entry is not None:
            fused.append((act, act.name) + entry[:4])
        else:
            plain.append(act)
    # a 1:1 handle over data no motor record holds (none today): its own propagate, as before
    others.extend(entry[4] for entry in by_data.values())
    return fused, plain, others


def _compose(hardware_xml: str, simulate: Optional[bool]) -> Tuple[Middleware, Any]:
    """The middleware of ``hardware_xml`` and its simulated peer (or None): the decision sits outside
    the driver's code path, in :func:`rospy_control.composition.compose_middleware`."""
    from rospy_control.composition import compose_middleware
    return compose_middleware(hardware_xml, simulate)


def _give_urdf(peer: Any, urdf: str, urdf_source: str) -> None:
    """The composed peer (if any) gets the URDF once the RobotHW accepted it (its errors come first)."""
    if peer is not None:
        from rospy_control.composition import give_urdf
        give_urdf(peer, read_text(urdf, urdf_source)[0], urdf_source)


class MiddlewareRobotHW(RobotHW):
    """RobotHW over a :class:`~rospy_control.middleware.Middleware` (see :mod:`rospy_control.robot_hw`).

    :param middleware: the robot's middleware, started or not (``None``: configure later with
        :meth:`configure` or :meth:`init`).
    :param urdf_xml: the URDF (robot_description) as text, or a file path.
    :param params: ``joint_limits`` (ros_control schema) and the options listed in the package
        docstring.
    :param urdf_source: name of the URDF in messages.
    :param params_source: parameter namespace of ``params`` in messages.
    :param owns_middleware: :meth:`shutdown` also shuts the middleware down.
    :raises ConfigError: any configuration problem (nothing is left half-configured).
    """

    def __init__(self, middleware: Optional[Middleware] = None, urdf_xml: Optional[str] = None,
                 params: Optional[dict] = None, urdf_source: str = "robot_description",
                 params_source: str = "robot_hw", owns_middleware: bool = False,
                 hardware_xml: Optional[str] = None) -> None:
        super().__init__()
        self._mw: Optional[Middleware] = None
        self._owns = False
        #: the simulated peer composed by :meth:`from_config` / :meth:`init` with ``simulate`` (its
        #: fault switches and command record; None: none, or composed by the caller)
        self.simulator: Any = None
        self._throttle = Throttle(5.0)
        self._reads = 0          # read() calls (control thread), for reset_faults' wait
        self._adopt(Records())  # nothing configured yet
        if middleware is not None:
            self.configure(middleware, urdf_xml, params, urdf_source=urdf_source, params_source=params_source,
                           owns_middleware=owns_middleware, hardware_xml=hardware_xml)

    def _adopt(self, rec: Records) -> None:
        """Make ``rec`` (and fresh helpers over it) the configuration this RobotHW runs."""
        self._rec = rec
        self._writer = Writer(rec, self._throttle)
        self._read_plan = _read_plan(rec)
        self._faults = FaultTracker(rec, self._throttle)
        self._homing = HomingTracker(rec, self._faults.start_check)
        self._faults.homing = self._homing.groups
        self._switching = SwitchPlanner(rec, self._throttle)

    # ============================================================== construction (non real-time)
    @classmethod
    def from_config(cls, hardware_xml: str, urdf_xml: str, params: Optional[dict] = None,
                    simulate: Optional[bool] = None, start: bool = True,
                    urdf_source: str = "robot_description",
                    params_source: str = "robot_hw") -> "MiddlewareRobotHW":
        """Build the middleware from the hardware XML (path or text), configure, and start it.

        The returned RobotHW owns the middleware: :meth:`shutdown` (or ``with``) stops it.  On any
        error the middleware is shut down again before the exception propagates.

        :raises ConfigError: bad hardware XML, URDF, transmissions, bindings or limits.
        :raises CommunicationError: a bus cannot be opened.
        """
        mw, sim = _compose(hardware_xml, simulate)
        try:
            hw = cls(mw, urdf_xml, params, urdf_source=urdf_source, params_source=params_source,
                     owns_middleware=True)
            hw.simulator = sim
            _give_urdf(sim, urdf_xml, urdf_source)
            if start:
                hw.start()
        except BaseException:
            mw.shutdown()
            raise
        return hw

    def init(self, root_nh, robot_hw_nh) -> bool:
        """ros_control-style initialisation from node handles (used by ``CombinedRobotHW``).

        Parameters under ``robot_hw_nh``: ``hardware_config`` (path or text of the hardware XML;
        absent: the shared ``Middleware.instance()``; its former name ``hardware_xml`` still works, with
        a warning), ``simulate`` (bool, optional), ``robot_description`` (else read
        from ``root_nh``), ``joint_limits`` (else ``root_nh``'s), ``hold_mode``,
        ``posvel_interface``, ``skip_unknown_actuators``, ``start`` (default true).

        :returns: True.  Failures raise :class:`ConfigError` (not False) so the reason reaches the
            caller; ``CombinedRobotHW`` reports it with the hardware's name.
        """
        def param(key, default=None, nh=robot_hw_nh):
            if nh is None or not nh.has_param(key):
                return default
            return nh.get_param(key)

        source = param("hardware_config")
        if source is None and param("hardware_xml") is not None:
            source = param("hardware_xml")
            logger.warning("'%s' is the former name of '%s'; please rename it",
                           robot_hw_nh.resolve_name("hardware_xml"),
                           robot_hw_nh.resolve_name("hardware_config"))
        if source is None:
            try:
                mw = Middleware.instance()
            except HardwareError as err:
                raise ConfigError(f"{err} (or set '{robot_hw_nh.resolve_name('hardware_config')}')") from err
            owns = False
        else:
            mw = None
            owns = True
        try:
            urdf = param("robot_description")
            urdf_source = robot_hw_nh.resolve_name("robot_description")
            if urdf is None:
                urdf = param("robot_description", nh=root_nh)
                urdf_source = (root_nh.resolve_name("robot_description") if root_nh is not None
                               else "robot_description")
            if urdf is None:
                raise ConfigError("no URDF: set 'robot_description' (next to the robot_hw parameters or in "
                                  "the root namespace)", source=urdf_source)
            if mw is None:
                mw, self.simulator = _compose(source, param("simulate"))
            params = {}
            for key in ("joint_limits", "hold_mode", "posvel_interface", "skip_unknown_actuators"):
                value = param(key)
                if value is not None:
                    params[key] = value
            if "joint_limits" not in params and param("joint_limits", nh=root_nh) is not None:
                params["joint_limits"] = param("joint_limits", nh=root_nh)
            self.configure(mw, urdf, params, urdf_source=urdf_source, params_source=robot_hw_nh.namespace,
                           owns_middleware=owns)
            if owns:
                _give_urdf(self.simulator, urdf, urdf_source)
            if param("start", True):
                self.start()
        except BaseException:
            if owns and mw is not None:
                mw.shutdown()
            raise
        return True

    def configure(self, middleware: Middleware, urdf_xml: Optional[str], params: Optional[dict] = None,
                  urdf_source: str = "robot_description", params_source: str = "robot_hw",
                  owns_middleware: bool = False, hardware_xml: Optional[str] = None) -> None:
        """Register every interface and handle (see the class docstring for the arguments).

        The robot-level ``<gravity_compensation>`` (the feed-forward, :mod:`._gravity`) and
        options are read from the description the middleware parsed, or from ``hardware_xml`` (path or
        text) when given for another one.  (A simulated peer's gravity is the simulator's own business:
        :class:`rospy_control.simulator.SimulatedRobot` is given the URDF where it is composed.)

        :raises ConfigError: any configuration problem; the RobotHW is then left unconfigured.
        """
        if self._mw is not None:
            raise HardwareInterfaceError("MiddlewareRobotHW is already configured")
        if urdf_xml is None:
            raise ConfigError("no URDF given (robot_description)", source=urdf_source)
        urdf_text, src = read_text(urdf_xml, urdf_source)
        if src != urdf_source:
            urdf_source = src
        params = dict(params or {})
        hold = check_params(params, params_source)
        binding = bind(middleware, urdf_text, urdf_source, params.get("skip_unknown_actuators", False))
        # all or nothing: everything is built into fresh objects, adopted only when all succeeded
        rec, staging = build(middleware, binding, params, hold, urdf_source, params_source)
        root = configuration_root(middleware, hardware_xml)  # the middleware's parsed description
        rec.gravity = build_feed_forward(urdf_text, urdf_source, rec, compensation_options(root))
        for name in staging.get_names():
            iface = staging.get(name)
            assert iface is not None  # one of staging's own names
            self.register_interface(iface)
        assert rec.loader is not None  # build() loaded the transmissions
        rec.loader.get_data().robot_hw = self
        self._adopt(rec)
        self._mw = middleware
        self._owns = owns_middleware
        # the bus thread's command watchdog holds like an unclaimed joint does; with hold_mode 'none'
        # (limp when unclaimed) a frozen control loop still gets damping rather than a stale command.
        # A motor whose hardware XML sets watchdog_mode keeps it.
        defaulted = [m.name for m in middleware.motors() if not m.watchdog_mode_explicit]
        if defaulted:
            middleware.set_watchdog_mode(WATCHDOG_MODES[hold], defaulted)
        n_posvel = sum(1 for j in rec.joints.values() if "posvel" in j.kinds)
        logger.info("MiddlewareRobotHW '%s': %d joints, %d motors, %d transmissions (%d 1:1 from the "
                    "hardware XML), %d sensors; PosVel on %d joints; unclaimed joints hold in '%s' mode",
                    middleware.name, len(rec.joints), len(rec.actuators), len(rec.groups),
                    len(binding.direct), len(rec.imus) + len(rec.fts) + len(rec.contacts), n_posvel, hold)

    # ============================================================== lifecycle
    @property
    def middleware(self) -> Middleware:
        if self._mw is None:
            raise HardwareInterfaceError("MiddlewareRobotHW is not configured")
        return self._mw

    @property
    def transmission_loader(self) -> TransmissionInterfaceLoader:
        """The transmission interface loader (its ``get_data()`` holds joint data and transmissions)."""
        if self._rec.loader is None:
            raise HardwareInterfaceError("MiddlewareRobotHW is not configured")
        return self._rec.loader

    def start(self) -> None:
        """Start the middleware if it is not running (opens buses, enables motors, waits for replies),
        then :meth:`read` once so joint states are valid before the first control cycle, and
        :meth:`write` once so the motors get their hold commands at once.

        Motors are enabled with a limp command; without the immediate write a gravity-loaded joint
        would fall for as long as the node takes to start its control loop (a 6 N·m shoulder drops
        0.5 rad in 160 ms; the example arm's shoulder carries up to 14 N·m).  With ``hold_mode``
        ``position`` every joint holds where it was found (with the gravity feed-forward, if on).
        """
        mw = self.middleware
        if not mw.running:
            mw.start()
        self.read(0.0, 0.0)
        self.write(0.0, 0.0)

    def shutdown(self) -> None:
        """Shut the middleware down if this RobotHW owns it (built by :meth:`from_config` / :meth:`init`
        with ``hardware_xml``).  Idempotent."""
        if self._mw is not None and self._owns:
            self._mw.shutdown()

    def __enter__(self) -> "MiddlewareRobotHW":
        self.start()
        return self

    def __exit__(self, *exc) -> None:
        self.shutdown()

    # ============================================================== cyclic (real-time)
    def read(self, time: float, period: float) -> None:
        """Snapshot -> actuator data -> (transmissions) -> joint data; sensors.  Never raises."""
        mw = self._mw
        if mw is None:
            return
        rec = self._rec
        states = mw.states()
        fused, plain, others = self._read_plan
        changed = self._faults.actuator_changed
        # a motor behind a 1:1 transmission (every joint of an MIT-motor robot, usually): its actuator
        # data and its joint's state in one step, the transmission's arithmetic inline (see _read_plan)
        for act, name, ad, jd, n, offset in fused:
            s = states[name]
            p = ad.position = s.position
            v = ad.velocity = s.velocity
            e = ad.effort = s.effort
            act.state = s
            if s.fault != act.fault or s.received != act.received:
                changed(act, s)
            jd.position = p / n + offset
            jd.velocity = v / n
            jd.effort = e * n
            ap = ad.absolute_position
            if ap is not None:
                jd.absolute_position = ap / n + offset
            ts = ad.torque_sensor
            if ts is not None:
                jd.torque_sensor = ts * n
        for act in plain:
            s = states[act.name]
            d = act.data
            d.position = s.position
            d.velocity = s.velocity
            d.effort = s.effort
            act.state = s
            if s.fault != act.fault or s.received != act.received:
                changed(act, s)
        # actuator -> joint state of the other transmissions (differentials, four-bar linkages, ...):
        # what ``loader.propagate_state()`` does, in the loader's order
        for propagate in others:
            propagate()
        for name, imu in rec.imus:
            s = states[name]
            imu.orientation = s.orientation
            imu.angular_velocity = s.angular_velocity
            imu.linear_acceleration = s.linear_acceleration
        for name, ft in rec.fts:
            s = states[name]
            ft.force = s.force
            ft.torque = s.torque
        for name, contact in rec.contacts:
            s = states[name]
            contact.in_contact = s.in_contact
            contact.force = s.force
        self._reads += 1
        faults = self._faults
        if self._homing.pending:
            self._homing.poll()      # homings asked for (~home), and the ones that ended
        if faults.faulted_joints:
            faults.follow()          # where faulted motors still report, a recovery continues their reading
        if faults.start_check.pending:
            faults.run_checks()      # joints that became ready or recovered: their reading in limits?
        faults.settled = True
        try:
            mw.check()
        except CommunicationError as err:
            if self._throttle.ready("check"):
                logger.error("middleware '%s': %s", mw.name, err)

    def write(self, time: float, period: float) -> None:
        """Limits -> joint -> actuator commands in each group's mode -> motors.  Never blocks or raises.

        Groups whose motors have not answered yet get nothing; faulted groups get nothing on their
        faulted motors (their healthy motors hold, see the package docstring); non-finite commands
        are replaced by the hold value.
        """
        self._writer.write(period)

    # -- faults -------------------------------------------------------------------------------------
    def faulted_joints(self) -> Dict[str, str]:
        """``{joint: reason}`` of joints one of whose motors is in FAULT (as of the last ``read``)."""
        return dict(self._faults.faulted_joints)

    def faulted_motors(self) -> Dict[str, str]:
        """``{motor: reason}`` of the motors this RobotHW treats as faulted (as of the last ``read``)."""
        return {a.name: a.fault_reason for a in self._rec.actuators if a.fault}

    def faulted_units(self) -> Dict[str, str]:
        """``{unit: reason}`` of the units in FAULT: the middleware's now, and the motors this RobotHW
        still treats as faulted (until the :meth:`read` that sees their recovery)."""
        units = dict(self.middleware.faults())
        units.update(self.faulted_motors())
        return units

    def not_ready_joints(self) -> Dict[str, str]:
        """``{joint: why}`` of the joints whose motors have not all answered and been enabled yet."""
        return {j.name: j.data.fault or "not ready" for g in self._rec.groups if not g.ready
                for j in g.joints}

    def middlewares(self) -> List[Middleware]:
        return [self._mw] if self._mw is not None else []

    def reset_faults(self, timeout: Optional[float] = None) -> Dict[str, str]:
        """Reset every unit in FAULT and wait until each recovered or failed again (blocking; call it
        off the control thread, e.g. from the ``~reset_faults`` service).

        A recovered motor's transmission restarts from the measured position at the next
        :meth:`read` (commands re-seeded, limit handles reset, :meth:`consume_reset_request` True
        once, so the running controllers restart holding).

        A recovered joint is checked by the control loop's next read (:mod:`._start_check`: a joint
        refused at start-up, or one whose reading moved by a turn while in FAULT); this waits for that
        check (up to 1 s) and reports the motors of a joint refused with the reason.

        :returns: ``{unit: reason}`` of the units still in FAULT (empty: all recovered).
        """
        check = self._faults.start_check
        still = dict(self.middleware.reset_faults(timeout=timeout))
        # the recovered joints are checked at the next reads (a turn lost while in FAULT is refused)
        reads = self._reads
        deadline = _time.monotonic() + 1.0
        while _time.monotonic() < deadline and (self._reads < reads + 2 or check.pending):
            _time.sleep(0.005)
        for motor, reason in check.refused.items():
            still.setdefault(motor, reason)
        return still

    # -- homing (:mod:`._homing`) -----------------------------------------------------------------------
    def homeable_units(self) -> List[str]:
        return self._homing.homeable()

    def homing_at_start(self) -> List[str]:
        return self._homing.at_start()

    def homing_units(self) -> List[str]:
        return self._homing.busy()

    def home(self, units: Sequence[str], timeout: Optional[float] = None) -> Dict[str, Tuple[bool, str]]:
        """Home ``units``, blocking until each ended (:meth:`._homing.HomingTracker.home`).
        :raises HardwareError: a unit that cannot home."""
        return self._homing.home(units, timeout)

    def limit_command_steps(self, nominal_period: float, periods: float = 2.0) -> Dict[str, float]:
        """Cap, on the wire, the position step between two consecutive command frames of every motor at
        what its joints' velocity limits allow over ``periods`` nominal control periods.

        The control loop already bounds the period it passes (so a host stall delays a trajectory
        instead of leaping it) and the saturation handles bound each command by velocity x period; this
        is the guarantee at the motor, whatever the threads' timing (two control cycles between two
        bus frames, a hold after an abort, ...).  For a coupled transmission a motor's cap sums its
        joints' contributions.  Motors of a transmission with a joint without a velocity limit get no
        cap.

        :returns: ``{motor: cap (rad, motor side)}`` of the motors that got one.
        """
        if not nominal_period > 0.0 or not periods > 0.0:
            raise ValueError(f"limit_command_steps: nominal_period {nominal_period!r} and periods "
                             f"{periods!r} must be > 0")
        caps: Dict[str, float] = {}
        for g in self._rec.groups:
            if not g.joints or not all(j.limits is not None and j.limits.has_velocity_limits
                                       and j.limits.max_velocity > 0.0 for j in g.joints):
                continue
            n = len(g.joints)
            to_actuator = g.transmission.joint_to_actuator_position
            zero = to_actuator([0.0] * n)
            rate = [0.0] * len(g.actuators)
            for k, j in enumerate(g.joints):
                unit = [0.0] * n
                unit[k] = 1.0
                column = to_actuator(unit)
                for i in range(len(g.actuators)):
                    rate[i] += abs(column[i] - zero[i]) * j.limits.max_velocity
            for i, a in enumerate(g.actuators):
                if rate[i] > 0.0:
                    a.motor.set_max_position_step(rate[i] * periods * nominal_period)
                    cap = a.motor.max_position_step
                    assert cap is not None  # set by a step > 0
                    caps[a.name] = cap
        return caps

    @property
    def gravity_feed_forward(self) -> Optional[GravityFeedForward]:
        """The gravity feed-forward (None: off; ``<gravity_compensation>`` in the hardware XML)."""
        return self._rec.gravity

    def consume_reset_request(self) -> bool:
        """True once after a faulted group recovered (pass it as ``reset_controllers`` to the
        controller manager's ``update`` so running controllers restart from the measured state)."""
        return self._faults.consume_reset_request()

    # ============================================================== switching
    def prepare_switch(self, start_list: Sequence[ControllerInfo],
                       stop_list: Sequence[ControllerInfo]) -> bool:
        """Veto a switch that would command a joint through two interfaces, use an interface a
        joint's transmission does not offer, or mix control modes inside one coupled transmission.
        Each reason is logged.  No side effects.

        A motor in FAULT does not veto: the controller starts, its faulted joints get no commands
        (the controller sees the fault on its handles) until the fault is reset, then they hold.
        """
        if self._mw is None:
            logger.error("MiddlewareRobotHW: prepare_switch before configure()")
            return False
        return self._switching.prepare(start_list, stop_list)

    def do_switch(self, start_list: Sequence[ControllerInfo], stop_list: Sequence[ControllerInfo]) -> None:
        """Apply the switch: new command interfaces per joint, motor modes per group, seeded commands and
        reset limit handles for switched joints.  ``switch_result`` then follows the confirmations."""
        if self._mw is None:
            return
        self._switching.do_switch(start_list, stop_list)

    def switch_result(self, info: Optional[ControllerInfo] = None) -> SwitchState:
        """ONGOING until every healthy motor whose mode the last switch changed confirmed it (a reply to
        a frame in the new mode), else DONE.  A motor in FAULT (before or during the switch) is not
        waited for: it takes the new mode when its fault is reset.  ERROR only for a switch
        :meth:`do_switch` refused.  With ``info``: only the motors of that controller's joints
        (``start_asap``)."""
        return self._switching.result(info)

    # ============================================================== introspection
    def joint_names(self) -> List[str]:
        return sorted(self._rec.joints)

    def actuator_names(self) -> List[str]:
        return [a.name for a in self._rec.actuators]

    def joint_interfaces(self, joint: str) -> List[str]:
        """``TYPE_NAME`` of the command interfaces joint ``joint`` offers."""
        return [KIND_INTERFACES[k].TYPE_NAME for k in self._joint(joint).kinds]

    def active_interface(self, joint: str) -> Optional[str]:
        """``TYPE_NAME`` of the interface a running controller commands ``joint`` through, None = held."""
        kind = self._joint(joint).kind
        return KIND_INTERFACES[kind].TYPE_NAME if kind else None

    def joint_mode(self, joint: str) -> ControlMode:
        """The motor mode the joint's transmission group is commanded in."""
        return self._joint(joint).group.mode

    def joint_limits(self, joint: str):
        """``(JointLimits, SoftJointLimits or None)`` enforced on ``joint``."""
        j = self._joint(joint)
        return j.limits, j.soft

    def _joint(self, name: str) -> Joint:
        try:
            return self._rec.joints[name]
        except KeyError:
            raise HardwareInterfaceError(f"Could not find joint '{name}' in MiddlewareRobotHW (joints: "
                                         f"{', '.join(sorted(self._rec.joints))})") from None

    def status(self) -> dict:
        """Per-joint, per-motor and per-sensor status for diagnostics (plain data)."""
        return build_status(self.middleware, self._rec, self._faults.faulted_joints, self._switching.status(),
                            self._faults.start_check.notes)
