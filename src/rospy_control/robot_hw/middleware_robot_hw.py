"""``MiddlewareRobotHW``: the RobotHW of a robot whose motors and sensors live in a :class:`Middleware`.

See :mod:`rospy_control.robot_hw` for construction, parameters and the switching/holding rules.

Internals in one paragraph: every URDF transmission (or 1:1 hardware-XML binding) is a *group* --
its joints, its motors (ordered by role) and its :class:`~rospy_control.transmission_interface.Transmission`.
A group runs in exactly one motor :class:`~rospy_control.middleware.ControlMode` at a time (a
differential couples its two motors, so they always switch together), derived from the command
interfaces its joints are claimed through, or the hold mode when none is.  ``read()`` copies the
snapshot into :class:`~rospy_control.hardware_interface.ActuatorData` and lets the transmission
interface loader propagate actuator -> joint state; ``write()`` walks the groups, sanitises and
limits the joint commands of the group's mode, maps them joint -> actuator with the group's
transmission and hands them to the motors (non-blocking).

Threads: ``read``/``write``/``do_switch``/``switch_result`` run on the control thread;
``prepare_switch`` and the diagnostics getters may run on another one.  They only read references
that the control thread replaces atomically (``_running``, ``_switch``), never containers it mutates.
"""
from __future__ import annotations

import math
import os
from typing import Dict, Iterable, List, NamedTuple, Optional, Sequence, Set, Tuple

from rospy_control.exceptions import (
    CommunicationError,
    ConfigError,
    HardwareError,
    HardwareInterfaceError,
    TransmissionInterfaceError,
)
from rospy_control.hardware_interface import (
    ActuatorData,
    ActuatorHandle,
    ActuatorStateHandle,
    ActuatorStateInterface,
    ContactSensorData,
    ContactSensorHandle,
    ContactSensorInterface,
    ControllerInfo,
    EffortActuatorInterface,
    EffortJointInterface,
    ForceTorqueSensorData,
    ForceTorqueSensorHandle,
    ForceTorqueSensorInterface,
    ImuSensorData,
    ImuSensorHandle,
    ImuSensorInterface,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    PosVelAccJointInterface,
    PosVelJointHandle,
    PosVelJointInterface,
    RobotHW,
    SwitchState,
    VelocityActuatorInterface,
    VelocityJointInterface,
)
from rospy_control.log import Throttle, get_logger
from rospy_control.middleware import (
    ContactSensor,
    ControlMode,
    ForceTorqueSensor,
    ImuSensor,
    Middleware,
    Motor,
)
from rospy_control.robot_hw._binding import bind
from rospy_control.robot_hw._limits import load_limits, make_handles
from rospy_control.transmission_interface import TransmissionInterfaceLoader

__all__ = ["MiddlewareRobotHW", "DiagnosticRecord", "HOLD_MODES", "OK", "WARN", "ERROR", "STALE"]

logger = get_logger(__name__)

#: ``hold_mode`` parameter value -> motor mode of groups no running controller commands.
HOLD_MODES = {"position": ControlMode.POSITION, "damping": ControlMode.MIT, "none": ControlMode.NONE}

#: ``hold_mode`` -> the middleware's command-watchdog mode (what the bus thread does by itself when the
#: control loop stops writing commands).
WATCHDOG_MODES = {"position": "position", "damping": "damping", "none": "damping"}

#: Joint command interfaces this RobotHW offers, by kind.
KIND_INTERFACES = {
    "position": PositionJointInterface,
    "velocity": VelocityJointInterface,
    "effort": EffortJointInterface,
    "posvel": PosVelJointInterface,
}
_KIND_MODE = {"position": ControlMode.POSITION, "posvel": ControlMode.POSITION,
              "velocity": ControlMode.VELOCITY, "effort": ControlMode.EFFORT}
_KIND_BY_NAME: Dict[str, str] = {}
for _kind, _cls in KIND_INTERFACES.items():
    _KIND_BY_NAME[_cls.TYPE_NAME] = _kind
    _KIND_BY_NAME[_cls.LOOKUP_NAME] = _kind
_KIND_BY_NAME[PosVelAccJointInterface.TYPE_NAME] = "posvelacc"
_KIND_BY_NAME[PosVelAccJointInterface.LOOKUP_NAME] = "posvelacc"
del _kind, _cls

#: diagnostic levels (``diagnostic_msgs/DiagnosticStatus``)
OK, WARN, ERROR, STALE = 0, 1, 2, 3
#: a motor within this many degrees of its ``max_temperature`` is reported as WARN
TEMPERATURE_MARGIN = 10.0

_isfinite = math.isfinite


class DiagnosticRecord(NamedTuple):
    """One ``diagnostic_msgs/DiagnosticStatus``: ``values`` are (key, value) string pairs."""

    level: int
    name: str
    message: str
    hardware_id: str
    values: List[Tuple[str, str]]


class _Joint:
    __slots__ = ("name", "data", "state", "group", "kinds", "kind", "owner", "hold", "setpoint", "handles",
                 "limits", "soft")

    def __init__(self, name, data, state, group, kinds, limits, soft) -> None:
        self.name = name
        self.data = data
        self.state = state
        self.group = group
        self.kinds: List[str] = kinds
        self.kind: Optional[str] = None      # active command interface kind, None = held
        self.owner: Optional[str] = None     # controller commanding the joint
        self.hold = math.nan                 # position held while unclaimed (NaN: take the measured one)
        self.setpoint = math.nan             # last position command sent (joint space)
        self.handles: Dict[str, list] = {}
        self.limits = limits
        self.soft = soft


class _Actuator:
    __slots__ = ("name", "motor", "data", "group", "fault", "fault_reason", "received", "hold", "state")

    def __init__(self, name: str, motor: Motor, data: ActuatorData) -> None:
        self.name = name
        self.motor = motor
        self.data = data
        self.group: Optional[_Group] = None
        self.fault = False
        self.fault_reason = ""
        self.received = False
        self.hold = math.nan
        self.state = None


class _Group:
    __slots__ = ("name", "where", "transmission", "joints", "actuators", "mode", "faulted", "ready", "reseed",
                 "buf")

    def __init__(self, name: str, where: str, transmission, joints: List[_Joint],
                 actuators: List[_Actuator], mode: ControlMode) -> None:
        self.name = name
        self.where = where
        self.transmission = transmission
        self.joints = joints
        self.actuators = actuators
        self.mode = mode
        self.faulted = False
        self.ready = False
        self.reseed = False
        self.buf = [0.0] * len(joints), [0.0] * len(joints)


class _Switch:
    """Book-keeping of the last ``do_switch`` until ``switch_result`` reports it finished."""

    __slots__ = ("pending", "starts", "deferred", "error", "done", "failed", "finished")

    def __init__(self, error: Optional[str] = None) -> None:
        self.pending: Dict[str, Tuple[Motor, ControlMode]] = {}
        self.starts: Dict[str, Set[str]] = {}     # controller -> motors it waits for
        # motor -> fault reason: in FAULT at or during the switch; it takes the new mode when
        # ~reset_faults brings it back (a dead motor never blocks the controllers of healthy joints)
        self.deferred: Dict[str, str] = {}
        self.error = error
        self.done: Set[str] = set()
        self.failed: Set[str] = set()
        self.finished = error is not None


def _read_text(value: str, what: str) -> Tuple[str, str]:
    """(text, source name) from XML text or a file path."""
    if not isinstance(value, (str, bytes)) or not value:
        raise ConfigError(f"{what} must be XML text or a file path, got {value!r}")
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if value.lstrip().startswith("<"):
        return value, what
    if os.path.isfile(value):
        with open(value, encoding="utf-8") as stream:
            return stream.read(), value
    raise ConfigError(f"{what}: '{value}' is neither XML text nor an existing file")


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
                 params_source: str = "robot_hw", owns_middleware: bool = False) -> None:
        super().__init__()
        self._mw: Optional[Middleware] = None
        self._owns = False
        self._actuators: List[_Actuator] = []
        self._acts_by_name: Dict[str, _Actuator] = {}
        self._joints: Dict[str, _Joint] = {}
        self._groups: List[_Group] = []
        self._imus: List[Tuple[str, ImuSensorData]] = []
        self._fts: List[Tuple[str, ForceTorqueSensorData]] = []
        self._contacts: List[Tuple[str, ContactSensorData]] = []
        self._sensor_units: Dict[str, object] = {}
        self._running: Dict[str, ControllerInfo] = {}
        self._switch: Optional[_Switch] = None
        self._faulted_joints: Dict[str, str] = {}
        self._reset_request = False
        self._hold_mode = ControlMode.POSITION
        self._hold_mode_name = "position"
        self._loader: Optional[TransmissionInterfaceLoader] = None
        self._throttle = Throttle(5.0)
        self._snapshot = None
        if middleware is not None:
            self.configure(middleware, urdf_xml, params, urdf_source=urdf_source, params_source=params_source,
                           owns_middleware=owns_middleware)

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
        mw = Middleware.from_xml(hardware_xml, simulate=simulate)
        try:
            hw = cls(mw, urdf_xml, params, urdf_source=urdf_source, params_source=params_source,
                     owns_middleware=True)
            if start:
                hw.start()
        except BaseException:
            mw.shutdown()
            raise
        return hw

    def init(self, root_nh, robot_hw_nh) -> bool:
        """ros_control-style initialisation from node handles (used by ``CombinedRobotHW``).

        Parameters under ``robot_hw_nh``: ``hardware_xml`` (path or text; absent: the shared
        ``Middleware.instance()``), ``simulate`` (bool, optional), ``robot_description`` (else read
        from ``root_nh``), ``joint_limits`` (else ``root_nh``'s), ``hold_mode``,
        ``posvel_interface``, ``skip_unknown_actuators``, ``start`` (default true).

        :returns: True.  Failures raise :class:`ConfigError` (not False) so the reason reaches the
            caller; ``CombinedRobotHW`` reports it with the hardware's name.
        """
        def param(key, default=None, nh=robot_hw_nh):
            if nh is None or not nh.has_param(key):
                return default
            return nh.get_param(key)

        source = param("hardware_xml")
        if source is None:
            try:
                mw = Middleware.instance()
            except HardwareError as err:
                raise ConfigError(f"{err} (or set '{robot_hw_nh.resolve_name('hardware_xml')}')") from err
            owns = False
        else:
            mw = Middleware.from_xml(source, simulate=param("simulate"))
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
            params = {}
            for key in ("joint_limits", "hold_mode", "posvel_interface", "skip_unknown_actuators"):
                value = param(key)
                if value is not None:
                    params[key] = value
            if "joint_limits" not in params and param("joint_limits", nh=root_nh) is not None:
                params["joint_limits"] = param("joint_limits", nh=root_nh)
            self.configure(mw, urdf, params, urdf_source=urdf_source, params_source=robot_hw_nh.namespace,
                           owns_middleware=owns)
            if param("start", True):
                self.start()
        except BaseException:
            if owns:
                mw.shutdown()
            raise
        return True

    def configure(self, middleware: Middleware, urdf_xml: Optional[str], params: Optional[dict] = None,
                  urdf_source: str = "robot_description", params_source: str = "robot_hw",
                  owns_middleware: bool = False) -> None:
        """Register every interface and handle (see the class docstring for the arguments).

        :raises ConfigError: any configuration problem; the RobotHW is then left unconfigured.
        """
        if self._mw is not None:
            raise HardwareInterfaceError("MiddlewareRobotHW is already configured")
        if urdf_xml is None:
            raise ConfigError("no URDF given (robot_description)", source=urdf_source)
        urdf_text, src = _read_text(urdf_xml, urdf_source)
        if src != urdf_source:
            urdf_source = src
        params = dict(params or {})
        hold = params.get("hold_mode", "position")
        if not isinstance(hold, str) or hold not in HOLD_MODES:
            raise ConfigError(f"hold_mode: expected one of {', '.join(HOLD_MODES)}, got {hold!r}",
                              source=params_source)
        for key in ("posvel_interface", "skip_unknown_actuators"):
            if not isinstance(params.get(key, False), bool):
                raise ConfigError(f"{key}: expected true or false, got {params[key]!r}", source=params_source)
        if not isinstance(params.get("joint_limits", {}), dict):
            raise ConfigError("joint_limits: expected a mapping joint -> limits, got "
                              f"{params['joint_limits']!r}", source=params_source)
        binding = bind(middleware, urdf_text, urdf_source, params.get("skip_unknown_actuators", False))
        # all or nothing: a failure while registering leaves the RobotHW unconfigured
        try:
            self._build(middleware, binding, params, hold, urdf_source, params_source)
        except BaseException:
            self.__init__()  # forget any partial registration
            raise
        self._owns = owns_middleware
        # the bus thread's command watchdog holds like an unclaimed joint does; with hold_mode 'none'
        # (limp when unclaimed) a frozen control loop still gets damping rather than a stale command.
        # A motor whose hardware XML sets watchdog_mode keeps it.
        defaulted = [m.name for m in middleware.motors() if not m.watchdog_mode_explicit]
        if defaulted:
            middleware.set_watchdog_mode(WATCHDOG_MODES[hold], defaulted)
        n_posvel = sum(1 for j in self._joints.values() if "posvel" in j.kinds)
        logger.info("MiddlewareRobotHW '%s': %d joints, %d motors, %d transmissions (%d 1:1 from the "
                    "hardware XML), %d sensors; PosVel on %d joints; unclaimed joints hold in '%s' mode",
                    middleware.name, len(self._joints), len(self._actuators), len(self._groups),
                    len(binding.direct), len(self._imus) + len(self._fts) + len(self._contacts), n_posvel,
                    hold)

    def _build(self, mw: Middleware, binding, params: dict, hold: str, urdf_source: str,
               params_source: str) -> None:
        self._hold_mode_name = hold
        self._hold_mode = HOLD_MODES[hold]
        # 1. motors -> actuator interfaces
        ifaces = {cls: cls() for cls in (ActuatorStateInterface, PositionActuatorInterface,
                                         VelocityActuatorInterface, EffortActuatorInterface)}
        for motor in mw.motors():
            data = ActuatorData()
            state = ActuatorStateHandle(motor.name, data)
            ifaces[ActuatorStateInterface].register_handle(state)
            ifaces[PositionActuatorInterface].register_handle(ActuatorHandle(state, data, "command_position"))
            ifaces[VelocityActuatorInterface].register_handle(ActuatorHandle(state, data, "command_velocity"))
            ifaces[EffortActuatorInterface].register_handle(ActuatorHandle(state, data, "command_effort"))
            act = _Actuator(motor.name, motor, data)
            self._actuators.append(act)
            self._acts_by_name[motor.name] = act
        for iface in ifaces.values():
            self.register_interface(iface)
        # 2. transmissions -> joint interfaces (loader), with the checked binding
        loader = TransmissionInterfaceLoader(self)
        try:
            loader.load(binding.infos, raise_errors=True)
        except TransmissionInterfaceError as err:
            raise ConfigError(str(err), source=urdf_source) from err
        loader.parse_result = binding.parse_result
        self._loader = loader
        transmissions = {td.name: td.transmission for td in loader.get_data().transmission_data}
        joint_data = loader.get_data().joint_data
        jsi = self.get(JointStateInterface)
        posvel_iface = None
        limits_params = {"joint_limits": params.get("joint_limits") or {}}
        for info in binding.infos:
            group = _Group(info.name, info.where, transmissions[info.name], [], [], self._hold_mode)
            for a in info.ordered_actuators():
                act = self._acts_by_name[a.name]
                act.group = group
                group.actuators.append(act)
            for j in info.ordered_joints():
                kinds = []
                for k in ("position", "velocity", "effort"):
                    iface = self.get(KIND_INTERFACES[k])
                    if iface is not None and iface.has_handle(j.name):
                        kinds.append(k)
                posvel_all = params.get("posvel_interface", False)
                if j.name in binding.posvel_joints or (
                        posvel_all and "position" in kinds and "velocity" in kinds):
                    kinds.append("posvel")
                data = joint_data[j.name]
                state = jsi.get_handle(j.name)  # JointStateInterface does not claim
                limits, soft = load_limits(j.name, binding.joint_elements.get(j.name), limits_params,
                                           urdf_source, params_source)
                joint = _Joint(j.name, data, state, group, kinds, limits, soft)
                for kind in kinds:
                    joint.handles[kind] = make_handles(state, data, kind, limits, soft)
                if "posvel" in kinds:
                    if posvel_iface is None:
                        posvel_iface = PosVelJointInterface()
                        self.register_interface(posvel_iface)
                    posvel_iface.register_handle(PosVelJointHandle(state, data))
                group.joints.append(joint)
                self._joints[j.name] = joint
            group.buf = [0.0] * len(group.joints), [0.0] * len(group.joints)
            self._groups.append(group)
        for name in (params.get("joint_limits") or {}):
            if name not in self._joints:
                logger.warning("%s/joint_limits/%s: no such joint in this RobotHW (joints: %s); ignored",
                               params_source, name, ", ".join(sorted(self._joints)))
        # 3. joints whose transmission the parser skipped: explain on lookup
        for joint, reason in binding.parse_result.skipped_joints.items():
            for cls in (JointStateInterface, PositionJointInterface, VelocityJointInterface,
                        EffortJointInterface, PosVelJointInterface):
                iface = self.get(cls)
                if iface is not None:
                    iface.explain_missing(joint, f"Its URDF transmission was skipped: {reason}")
        # 4. sensors
        imu_iface, ft_iface, contact_iface = ImuSensorInterface(), ForceTorqueSensorInterface(), \
            ContactSensorInterface()
        for unit in mw.units():
            if isinstance(unit, ImuSensor):
                s = unit.state()
                data = ImuSensorData(s.orientation, s.orientation_covariance, s.angular_velocity,
                                     s.angular_velocity_covariance, s.linear_acceleration,
                                     s.linear_acceleration_covariance)
                imu_iface.register_handle(ImuSensorHandle(unit.name, unit.frame_id, data))
                self._imus.append((unit.name, data))
            elif isinstance(unit, ForceTorqueSensor):
                s = unit.state()
                data = ForceTorqueSensorData(s.force, s.torque)
                ft_iface.register_handle(ForceTorqueSensorHandle(unit.name, unit.frame_id, data))
                self._fts.append((unit.name, data))
            elif isinstance(unit, ContactSensor):
                s = unit.state()
                data = ContactSensorData(s.in_contact, s.force)
                contact_iface.register_handle(ContactSensorHandle(unit.name, unit.frame_id, data))
                self._contacts.append((unit.name, data))
            else:
                continue
            self._sensor_units[unit.name] = unit
        for iface in (imu_iface, ft_iface, contact_iface):
            if iface.get_names():
                self.register_interface(iface)
        self._mw = mw

    # ============================================================== lifecycle
    @property
    def middleware(self) -> Middleware:
        if self._mw is None:
            raise HardwareInterfaceError("MiddlewareRobotHW is not configured")
        return self._mw

    @property
    def transmission_loader(self) -> TransmissionInterfaceLoader:
        """The transmission interface loader (its ``get_data()`` holds joint data and transmissions)."""
        if self._loader is None:
            raise HardwareInterfaceError("MiddlewareRobotHW is not configured")
        return self._loader

    def start(self) -> None:
        """Start the middleware if it is not running (opens buses, enables motors, waits for replies),
        then :meth:`read` once so joint states are valid before the first control cycle, and
        :meth:`write` once so the motors get their hold commands at once.

        Motors are enabled with a limp command; without the immediate write a gravity-loaded joint
        would fall for as long as the node takes to start its control loop (a 6 N·m shoulder drops
        0.5 rad in 160 ms).  With ``hold_mode`` ``position`` every joint holds where it was found.
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
        snap = self._snapshot = mw.snapshot()
        states = snap.states
        for act in self._actuators:
            s = states[act.name]
            d = act.data
            d.position = s.position
            d.velocity = s.velocity
            d.effort = s.effort
            act.state = s
            if s.fault != act.fault or s.received != act.received:
                self._actuator_changed(act, s)
        self._loader.propagate_state()
        for name, data in self._imus:
            s = states[name]
            data.orientation = s.orientation
            data.angular_velocity = s.angular_velocity
            data.linear_acceleration = s.linear_acceleration
        for name, data in self._fts:
            s = states[name]
            data.force = s.force
            data.torque = s.torque
        for name, data in self._contacts:
            s = states[name]
            data.in_contact = s.in_contact
            data.force = s.force
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
        for g in self._groups:
            if not g.ready:
                continue
            if g.faulted:
                self._write_faulted(g)
                continue
            if g.reseed:
                g.reseed = False
                for j in g.joints:
                    self._reseed(j, g.mode)
            mode = g.mode
            if mode == ControlMode.POSITION:
                self._write_position(g, period)
            elif mode == ControlMode.VELOCITY:
                self._write_scalar(g, period, "velocity", "command_velocity")
            elif mode == ControlMode.EFFORT:
                self._write_scalar(g, period, "effort", "command_effort")
            else:
                for a in g.actuators:
                    self._send_neutral(a, mode)

    def _write_position(self, g: _Group, period: float) -> None:
        pos, vel = g.buf
        feed_forward = False
        for i, j in enumerate(g.joints):
            d = j.data
            kind = j.kind
            if kind is None:
                h = j.hold
                if h != h:
                    h = j.hold = d.position
                pos[i] = j.setpoint = h
                vel[i] = 0.0
                continue
            if not _isfinite(d.command_position):
                d.command_position = self._nan_hold(j)
            if kind == "posvel" and not _isfinite(d.command_velocity):
                self._warn_nan(j, "velocity")
                d.command_velocity = 0.0
            for h in j.handles[kind]:
                h.enforce_limits(period)
            pos[i] = j.setpoint = d.command_position
            if kind == "posvel":
                v = vel[i] = d.command_velocity
                if v:
                    feed_forward = True
            else:
                vel[i] = 0.0
        tr = g.transmission
        act_pos = tr.joint_to_actuator_position(pos)
        act_vel = tr.joint_to_actuator_velocity(vel) if feed_forward else None
        for i, a in enumerate(g.actuators):
            p = act_pos[i]
            if not _isfinite(p):  # cannot happen with finite joint values; never send it anyway
                self._warn_nan(a, "actuator position")
                continue
            ad = a.data
            ad.command_position = p
            if act_vel is not None and _isfinite(act_vel[i]):
                ad.command_velocity = act_vel[i]
                a.motor.set_position(p, act_vel[i])
            else:
                ad.command_velocity = 0.0
                a.motor.set_command(ControlMode.POSITION, p)

    def _write_scalar(self, g: _Group, period: float, kind: str, field: str) -> None:
        values = g.buf[0]
        for i, j in enumerate(g.joints):
            if j.kind is None:
                values[i] = 0.0
                continue
            d = j.data
            if not _isfinite(getattr(d, field)):
                self._warn_nan(j, kind)
                setattr(d, field, 0.0)
            for h in j.handles[kind]:
                h.enforce_limits(period)
            values[i] = getattr(d, field)
        tr = g.transmission
        if kind == "velocity":
            out = tr.joint_to_actuator_velocity(values)
            mode = ControlMode.VELOCITY
        else:
            out = tr.joint_to_actuator_effort(values)
            mode = ControlMode.EFFORT
        for i, a in enumerate(g.actuators):
            v = out[i]
            if not _isfinite(v):
                self._warn_nan(a, "actuator " + kind)
                v = 0.0
            setattr(a.data, field, v)
            a.motor.set_command(mode, v)

    def _write_faulted(self, g: _Group) -> None:
        if self._throttle.ready(("fault", g.name)):
            faults = ", ".join(f"'{a.name}' ({a.fault_reason})" for a in g.actuators if a.fault)
            logger.error("joint(s) %s: motor(s) %s in FAULT; their commands are not sent",
                         ", ".join(j.name for j in g.joints), faults)
        for a in g.actuators:
            if a.fault:
                continue
            if self._hold_mode == ControlMode.POSITION:
                if a.hold != a.hold:
                    a.hold = a.data.position
                a.motor.set_command(ControlMode.POSITION, a.hold)
            else:
                self._send_neutral(a, self._hold_mode)

    def _send_neutral(self, a: _Actuator, mode: ControlMode) -> None:
        """The safe command of ``mode``: hold position, zero velocity/effort, damping, limp."""
        m = a.motor
        if mode == ControlMode.POSITION:
            m.request_mode(ControlMode.POSITION)
        elif mode == ControlMode.MIT:
            m.set_mit_command(0.0, 0.0, 0.0, m.velocity_kd, 0.0)
        else:
            m.set_command(mode, 0.0)

    def _nan_hold(self, j: _Joint) -> float:
        self._warn_nan(j, "position")
        sp = j.setpoint
        return sp if _isfinite(sp) else j.data.position

    def _warn_nan(self, who, what: str) -> None:
        if self._throttle.ready(("nan", who.name, what)):
            logger.warning("'%s': non-finite %s command replaced by the hold value (not sent)",
                           who.name, what)

    # -- faults -------------------------------------------------------------------------------------
    def _actuator_changed(self, act: _Actuator, s) -> None:
        act.received = s.received
        act.fault = s.fault
        act.fault_reason = s.fault_reason
        g = act.group
        if g is None:
            return
        g.ready = all(a.received for a in g.actuators)
        faulted = any(a.fault for a in g.actuators)
        if faulted and not g.faulted:
            g.faulted = True
            for a in g.actuators:
                sp = a.data.command_position
                a.hold = sp if g.mode == ControlMode.POSITION and _isfinite(sp) else a.data.position
            self._throttle.ready(("fault", g.name))  # the transition is logged here; repeats every 5 s
            logger.error("joint(s) %s: motor '%s' went to FAULT: %s; commands to it are not sent until "
                         "the fault is reset (~reset_faults)", ", ".join(j.name for j in g.joints), act.name,
                         s.fault_reason)
        elif g.faulted and not faulted:
            g.faulted = False
            g.reseed = True
            self._reset_request = True
            logger.warning("joint(s) %s: motors back from FAULT; commands resume from the measured position",
                           ", ".join(j.name for j in g.joints))
        self._faulted_joints = {
            j.name: "; ".join(f"motor '{a.name}': {a.fault_reason}" for a in grp.actuators if a.fault)
            for grp in self._groups if grp.faulted for j in grp.joints}
        # Controllers see it through JointStateHandle.get_fault() (the JTC aborts its goal).
        for j in g.joints:
            j.data.fault = self._faulted_joints.get(j.name)

    def faulted_joints(self) -> Dict[str, str]:
        """``{joint: reason}`` of joints one of whose motors is in FAULT (as of the last ``read``)."""
        return dict(self._faulted_joints)

    def faulted_motors(self) -> Dict[str, str]:
        """``{motor: reason}`` of the motors this RobotHW treats as faulted (as of the last ``read``)."""
        return {a.name: a.fault_reason for a in self._actuators if a.fault}

    def reset_faults(self, timeout: Optional[float] = None) -> Dict[str, str]:
        """Reset every unit in FAULT and wait until each recovered or failed again (blocking; call it
        off the control thread, e.g. from the ``~reset_faults`` service).

        A recovered motor's transmission restarts from the measured position at the next
        :meth:`read` (commands re-seeded, limit handles reset, :meth:`consume_reset_request` True
        once, so the running controllers restart holding).

        :returns: ``{unit: reason}`` of the units still in FAULT (empty: all recovered).
        """
        return self.middleware.reset_faults(timeout=timeout)

    def consume_reset_request(self) -> bool:
        """True once after a faulted group recovered (pass it as ``reset_controllers`` to the
        controller manager's ``update`` so running controllers restart from the measured state)."""
        request, self._reset_request = self._reset_request, False
        return request

    # ============================================================== switching
    def _plan(self, infos: Iterable[ControllerInfo]) -> Tuple[Dict[str, Tuple[str, str]], List[str]]:
        """joint -> (controller, kind) for the controllers ``infos`` running, and the problems."""
        claims: Dict[str, List[Tuple[str, str, str]]] = {}
        errors: List[str] = []
        for info in infos:
            for res in info.claimed_resources:
                kind = _KIND_BY_NAME.get(res.hardware_interface)
                if kind is None:
                    continue
                for name in sorted(res.resources):
                    j = self._joints.get(name)
                    if j is None:
                        continue
                    if kind not in j.kinds:
                        offered = ", ".join(KIND_INTERFACES[k].TYPE_NAME for k in j.kinds) or "none"
                        errors.append(f"controller '{info.name}' needs '{res.hardware_interface}' for joint "
                                      f"'{name}', which its transmission '{j.group.name}' does not offer "
                                      f"(offered: {offered})")
                        continue
                    claims.setdefault(name, []).append((info.name, kind, res.hardware_interface))
        owners: Dict[str, Tuple[str, str]] = {}
        for name, users in claims.items():
            if len(users) > 1:
                errors.append(f"joint '{name}' would be commanded through {len(users)} interfaces at once: "
                              + ", ".join(f"'{c}' via '{iface}'" for c, _, iface in users))
            owners[name] = users[0][:2]
        for g in self._groups:
            modes: Dict[ControlMode, List[str]] = {}
            for j in g.joints:
                owner = owners.get(j.name)
                if owner is not None:
                    modes.setdefault(_KIND_MODE[owner[1]], []).append(f"'{j.name}' ({owner[1]})")
            if len(modes) > 1:
                errors.append(
                    f"joints {', '.join(n for names in modes.values() for n in names)} share transmission "
                    f"'{g.name}' whose motors ({', '.join(a.name for a in g.actuators)}) run one control "
                    "mode at a time; command them through interfaces of the same mode")
        return owners, errors

    def _effective_running(self) -> Dict[str, ControllerInfo]:
        sw = self._switch
        if sw is None or sw.finished:
            return self._running
        # the previous switch never finished: its caller gave up (timeout), so its starts are not running
        stale = set(sw.starts) - sw.done
        return {n: i for n, i in self._running.items() if n not in stale}

    def _after(self, start_list: Sequence[ControllerInfo],
               stop_list: Sequence[ControllerInfo]) -> Dict[str, ControllerInfo]:
        stops = {i.name for i in stop_list}
        running = {n: i for n, i in self._effective_running().items() if n not in stops}
        for info in start_list:
            running[info.name] = info
        return running

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
        _, errors = self._plan(self._after(start_list, stop_list).values())
        for info in start_list:
            for res in info.claimed_resources:
                if _KIND_BY_NAME.get(res.hardware_interface) is None:
                    continue
                for name in sorted(res.resources):
                    j = self._joints.get(name)
                    if j is None:
                        continue
                    for a in j.group.actuators:
                        if a.motor.fault and self._throttle.ready(("start-fault", info.name, name)):
                            logger.warning("controller '%s' starts with joint '%s' in FAULT (motor '%s': "
                                           "%s): the joint gets no commands until the fault is reset "
                                           "(~reset_faults), then it holds", info.name, name, a.name,
                                           a.motor.fault_reason)
        for err in errors:
            logger.error("Rejecting the controller switch: %s", err)
        return not errors

    def do_switch(self, start_list: Sequence[ControllerInfo], stop_list: Sequence[ControllerInfo]) -> None:
        """Apply the switch: new command interfaces per joint, motor modes per group, seeded commands and
        reset limit handles for switched joints.  ``switch_result`` then follows the confirmations."""
        if self._mw is None:
            return
        running = self._after(start_list, stop_list)
        _, errors = self._plan(running.values())
        if errors:
            for err in errors:
                logger.error("do_switch refused: %s", err)
            sw = _Switch(error="; ".join(errors))
            sw.starts = {i.name: set() for i in start_list}
            sw.failed = set(sw.starts)
            self._switch = sw
            return
        changed = self._apply(running)
        sw = _Switch()
        for info in start_list:
            motors: Set[str] = set()
            for name in info.all_resources():
                j = self._joints.get(name)
                if j is not None:
                    motors.update(a.name for a in j.group.actuators)
            sw.starts[info.name] = motors
        for g in changed:
            for a in g.actuators:
                if a.motor.fault:
                    sw.deferred[a.name] = a.motor.fault_reason
                else:
                    sw.pending[a.name] = (a.motor, g.mode)
                    if g.ready and not g.faulted:  # without a measured position there is nothing to hold
                        self._send_neutral(a, g.mode)
        sw.finished = not sw.pending
        self._switch = sw
        if changed:
            logger.info("switch: %s", "; ".join(
                f"transmission '{g.name}' -> {g.mode.name} ({', '.join(a.name for a in g.actuators)})"
                for g in changed))

    def _apply(self, running: Dict[str, ControllerInfo]) -> List[_Group]:
        """Make ``running`` the commanding controllers; return the groups whose motor mode changed."""
        owners, _ = self._plan(running.values())
        changed: List[_Group] = []
        for g in self._groups:
            new = [owners.get(j.name, (None, None)) for j in g.joints]
            switched = [(j.owner, j.kind) != o for j, o in zip(g.joints, new)]
            if not any(switched):
                continue
            old_mode = g.mode
            modes = {_KIND_MODE[k] for _, k in new if k is not None}
            new_mode = modes.pop() if modes else self._hold_mode
            for j, (owner, kind), sw in zip(g.joints, new, switched):
                j.owner, j.kind = owner, kind
                if sw or (new_mode != old_mode and kind is None):
                    self._reseed(j, old_mode)
            g.mode = new_mode
            if new_mode != old_mode:
                changed.append(g)
        self._running = running
        return changed

    def _reseed(self, j: _Joint, old_mode: ControlMode) -> None:
        """First command after a switch: hold.  Position commands = measured position, velocity and
        effort = 0; limit handles forget their previous command (ros_control#193).  A joint left
        unclaimed holds the position it was commanded to (if it was in position mode) or measured."""
        d = j.data
        p = d.position
        d.command_position = p
        d.command_velocity = 0.0
        d.command_effort = 0.0
        d.command_acceleration = 0.0
        for handles in j.handles.values():
            for h in handles:
                reset = getattr(h, "reset", None)
                if reset is not None:
                    reset()
        if j.kind is None:
            sp = j.setpoint
            j.hold = sp if old_mode == ControlMode.POSITION and _isfinite(sp) else p
        if old_mode != ControlMode.POSITION:
            j.setpoint = math.nan  # from another mode: not a position the motor was tracking

    def switch_result(self, info: Optional[ControllerInfo] = None) -> SwitchState:
        """ONGOING until every healthy motor whose mode the last switch changed confirmed it (a reply to
        a frame in the new mode), else DONE.  A motor in FAULT (before or during the switch) is not
        waited for: it takes the new mode when its fault is reset.  ERROR only for a switch
        :meth:`do_switch` refused.  With ``info``: only the motors of that controller's joints
        (``start_asap``)."""
        sw = self._switch
        if sw is None:
            return SwitchState.DONE
        if sw.error is not None:
            if info is None or info.name in sw.failed:
                return SwitchState.ERROR
            return SwitchState.DONE
        if sw.pending:
            for name, (motor, mode) in list(sw.pending.items()):
                if motor.fault:
                    sw.deferred[name] = motor.fault_reason
                    del sw.pending[name]
                    logger.warning("switch: motor '%s' went to FAULT before confirming %s (%s); its joints "
                                   "take the new mode when the fault is reset", name, mode.name,
                                   motor.fault_reason)
                elif motor.mode_confirmed(mode):
                    del sw.pending[name]
        if info is None:
            if sw.pending:
                return SwitchState.ONGOING
            sw.finished = True
            sw.done.update(set(sw.starts) - sw.failed)
            return SwitchState.DONE
        motors = sw.starts.get(info.name)
        if motors is None or info.name in sw.done:
            return SwitchState.DONE
        if info.name in sw.failed:
            return SwitchState.ERROR
        if any(m in sw.pending for m in motors):
            return SwitchState.ONGOING
        sw.done.add(info.name)
        if len(sw.done) + len(sw.failed) >= len(sw.starts):
            sw.finished = True
        return SwitchState.DONE

    # ============================================================== introspection
    def joint_names(self) -> List[str]:
        return sorted(self._joints)

    def actuator_names(self) -> List[str]:
        return [a.name for a in self._actuators]

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

    def _joint(self, name: str) -> _Joint:
        try:
            return self._joints[name]
        except KeyError:
            raise HardwareInterfaceError(f"Could not find joint '{name}' in MiddlewareRobotHW (joints: "
                                         f"{', '.join(sorted(self._joints))})") from None

    def status(self) -> dict:
        """Per-joint, per-motor and per-sensor status for diagnostics (plain data)."""
        mw = self.middleware
        snap = mw.snapshot().states
        joints = {}
        for name in sorted(self._joints):
            j = self._joints[name]
            joints[name] = {
                "interface": KIND_INTERFACES[j.kind].TYPE_NAME if j.kind else None,
                "controller": j.owner,
                "mode": j.group.mode.name,
                "transmission": j.group.name,
                "motors": [a.name for a in j.group.actuators],
                "fault": j.group.faulted,
                "fault_reason": self._faulted_joints.get(name, ""),
                "position": j.data.position,
                "velocity": j.data.velocity,
                "effort": j.data.effort,
            }
        motors = {}
        for a in self._actuators:
            s = snap[a.name]
            motors[a.name] = {
                "joints": [j.name for j in a.group.joints] if a.group else [],
                "mode": s.mode.name,
                "requested_mode": s.requested_mode.name,
                "enabled": s.enabled,
                "received": s.received,
                "fault": s.fault,
                "fault_reason": s.fault_reason,
                "temperature": s.temperature,
                "max_temperature": a.motor.max_temperature,
                "error_code": s.error_code,
                "position": s.position,
                "velocity": s.velocity,
                "effort": s.effort,
                "can_id": a.motor.can_id,
                "channel": a.motor.channel_name,
            }
        sensors = {}
        for name, unit in self._sensor_units.items():
            s = snap[name]
            sensors[name] = {"type": type(unit).__name__, "frame_id": unit.frame_id, "received": s.received,
                             "fault": s.fault, "fault_reason": s.fault_reason}
        sw = self._switch
        switch = {"finished": True, "pending": [], "error": None}
        if sw is not None:
            switch = {"finished": sw.finished, "pending": sorted(sw.pending), "error": sw.error,
                      "deferred": dict(sw.deferred)}
        return {"name": mw.name, "hold_mode": self._hold_mode_name, "joints": joints, "motors": motors,
                "sensors": sensors, "switch": switch}

    def diagnostics(self) -> List[DiagnosticRecord]:
        """One record per motor and per sensor, shaped like ``diagnostic_msgs/DiagnosticStatus``:
        ERROR for a fault (message = reason), WARN near ``max_temperature`` or while a mode switch is
        unconfirmed, STALE before the first reply, else OK."""
        st = self.status()
        hw = st["name"]
        out: List[DiagnosticRecord] = []
        for name, m in st["motors"].items():
            temp = m["temperature"]
            if m["fault"]:
                level, msg = ERROR, f"FAULT: {m['fault_reason']}"
            elif not m["received"]:
                level, msg = STALE, "no reply yet"
            elif temp is not None and temp >= m["max_temperature"] - TEMPERATURE_MARGIN:
                level, msg = WARN, f"temperature {temp:.0f} C close to the limit {m['max_temperature']:.0f} C"
            elif m["mode"] != m["requested_mode"]:
                level, msg = WARN, f"switching {m['mode']} -> {m['requested_mode']}"
            else:
                level, msg = OK, f"{m['mode']}"
            joints = m["joints"]
            values = [("joints", ", ".join(joints)), ("mode", m["mode"]),
                      ("requested mode", m["requested_mode"]),
                      ("enabled", str(m["enabled"])), ("fault", str(m["fault"])),
                      ("fault reason", m["fault_reason"]),
                      ("temperature", "" if temp is None else f"{temp:.1f}"),
                      ("error code", f"0x{m['error_code']:02X}"), ("position", f"{m['position']:.4f}"),
                      ("velocity", f"{m['velocity']:.4f}"), ("effort", f"{m['effort']:.4f}")]
            for jn in joints:
                j = st["joints"][jn]
                values.append((f"{jn} interface", j["interface"] or f"hold ({st['hold_mode']})"))
                values.append((f"{jn} controller", j["controller"] or ""))
            out.append(DiagnosticRecord(level, f"{hw}: motor {name}", msg,
                                        f"{m['channel']}/0x{m['can_id']:02X}", values))
        for name, s in st["sensors"].items():
            if s["fault"]:
                level, msg = ERROR, f"FAULT: {s['fault_reason']}"
            elif not s["received"]:
                level, msg = STALE, "no reply yet"
            else:
                level, msg = OK, "OK"
            out.append(DiagnosticRecord(level, f"{hw}: {s['type']} {name}", msg, name,
                                        [("frame_id", s["frame_id"]), ("fault", str(s["fault"])),
                                         ("fault reason", s["fault_reason"])]))
        return out
