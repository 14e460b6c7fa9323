"""The driver node (seed 003's ROSAdapter): hardware XML -> Middleware -> RobotHW -> one of two branches.

``scripts/driver_node`` only calls :func:`main`.  Start-up, in this order, each step undone if a
later one fails (nothing half-starts):

1. read the private parameters below;
2. build the :class:`~rospy_control.middleware.Middleware` from ``~configure`` (a file path or the
   XML text itself), honouring ``~sim``;
3. read the URDF from ``robot_description`` (resolved in the node's namespace, as
   ``robot_state_publisher`` does) and build the
   :class:`~rospy_control.robot_hw.MiddlewareRobotHW` (transmissions, joint limits from
   ``joint_limits/<joint>`` params and the URDF);
4. check the controller YAML in the node's namespace: every ``<name>/type`` must name a known
   controller type and every ``joints``/``joint`` a joint of the robot;
5. start the middleware (buses open, motors enabled, first replies in);
6. per ``~use_ros_control``:

   * **true** (ros_control branch): :class:`~rospy_control.controller_manager.ControllerManager` in
     the node's namespace, the control loop (read -> update -> write at ``~control_rate``, monotonic
     deadlines, overruns counted), ``joint_state_controller`` loaded and started (so
     ``/joint_states`` flows before any spawner runs), then the six ``controller_manager/*``
     services and ``controller_manager/statistics``;
   * **false** (standalone branch): no controller manager.  The trajectory controllers (and sensor
     broadcasters) run directly in the control loop through
     :class:`~rospy_control.adapter.standalone.ControllerRunner` -- so each
     ``<name>/follow_joint_trajectory`` action, ``<name>/state``, ``<name>/command`` and
     ``<name>/query_state`` behave exactly as the JointTrajectoryController's -- and a thread
     publishes ``joint_states`` for every joint at ``~publish_rate``, also while idle, with strictly
     increasing stamps;

7. ``/diagnostics`` about once per second from its own thread
   (:mod:`rospy_control.adapter.diagnostics`).

Shutdown (SIGINT, ``rosnode kill``): diagnostics and publishers stop, the services are withdrawn, the
loop stops, every controller is stopped, the middleware sends exit-motor-mode to every motor and
closes the buses; exit code 0.  A configuration error (hardware XML, URDF, controller YAML,
parameters) is logged as one FATAL line naming the file:line or parameter, and the node exits with
code 1; a bus that cannot be opened exits with code 2.

ROS API
-------
Private parameters (all settable from ``launch/bringup.launch`` arguments):

* ``~configure`` (string, **required**) -- hardware XML: a file path, or the XML text itself.
* ``~sim`` (bool, default true) -- true: every CAN channel is simulated (the XML's ``<simulation>``
  elements give the model; channels without one get default models); false: every
  ``<simulation>`` element is ignored and the configured real python-can interfaces are opened.
* ``~use_ros_control`` (bool, default true) -- the branch (see above).
* ``~control_rate`` (double, Hz, default 200) -- rate of the read -> update -> write loop.
* ``~publish_rate`` (double, Hz, default 100) -- ``/joint_states`` rate.  Standalone: the
  publishing thread's rate.  ros_control: written to ``<joint_state_controller>/publish_rate``
  before that controller is loaded.
* ``~start_joint_state_controller`` (bool, default true) -- ros_control branch: load and start
  ``~joint_state_controller`` at start-up.
* ``~joint_state_controller`` (string, default ``joint_state_controller``) -- its name; when its
  namespace has no ``type`` the standard ``joint_state_controller/JointStateController`` is used.
* ``~trajectory_controllers`` (list of names, default: every controller namespace whose ``type``
  is a ``*/JointTrajectoryController``) -- standalone branch: the action servers to serve.
* ``~sensor_controllers`` (list of names, default: every ``imu_sensor_controller/...``,
  ``force_torque_sensor_controller/...`` and ``contact_sensor_controller/...`` namespace) --
  standalone branch: sensor broadcasters run alongside (IMU, foot contact topics).
* ``~check_controllers`` (bool, default true) -- step 4 above.
* ``~diagnostics_period`` (double, s, default 1.0) -- ``/diagnostics`` period; 0 disables.
* ``~statistics_period`` (double, s, default 1.0) -- ros_control branch:
  ``controller_manager/statistics`` period; 0 disables.
* ``~hold_mode`` (string, default ``position``) -- what joints no running controller commands do:
  ``position`` (hold where they are), ``damping`` or ``none`` (limp); see
  :mod:`rospy_control.robot_hw`.
* ``~loop_priority`` (int, default -1 = none) -- SCHED_FIFO priority of the control thread (needs
  the capability; otherwise a warning).

Parameters read: ``robot_description`` (URDF), ``joint_limits/<joint>/...``, ``<controller>/...``.

Published: ``joint_states`` (sensor_msgs/JointState), ``/diagnostics``
(diagnostic_msgs/DiagnosticArray), the controllers' topics and actions, and (ros_control branch)
``controller_manager/statistics``.  Services (ros_control branch): ``controller_manager/*``.

Services (both branches):

* ``~reset_faults`` (std_srvs/Trigger) -- re-enables every unit in FAULT whose cause has cleared and
  answers once the control loop has taken the recovered joints back (the running controllers
  restart holding the measured position, the trajectory controller accepts goals again);
  ``success`` is false and ``message`` names the units still failing, with the reason.
* ``~sim/set_fault`` (rospy_control/SetSimFault) and ``~sim/reset_command_stats``
  (std_srvs/Trigger), with ``~sim`` only -- switch a fault of the simulated firmware on or off, and
  reset the per-motor command statistics the simulator reports on ``/diagnostics``.

A fault at start-up (a motor that does not answer) is not a configuration error: the node starts,
reports the faulted joints (log and ``/diagnostics``), runs the controllers, whose faulted joints get
no commands until ``~reset_faults`` succeeds.
"""
from __future__ import annotations

import sys
from typing import Any, Dict, List, Optional

from rospy_control.exceptions import CommunicationError, ConfigError, RospyControlError
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["Driver", "DriverParams", "main", "controller_namespaces", "check_controller_params"]

#: Types whose namespaces ``~sensor_controllers`` defaults to.
SENSOR_CONTROLLER_PACKAGES = ("imu_sensor_controller/", "force_torque_sensor_controller/",
                              "contact_sensor_controller/")
JSC_TYPE = "joint_state_controller/JointStateController"


class DriverParams:
    """The node's private parameters with their defaults (one place; see the module docstring)."""

    CONTROL_RATE = 200.0
    PUBLISH_RATE = 100.0
    DIAGNOSTICS_PERIOD = 1.0
    STATISTICS_PERIOD = 1.0

    def __init__(self, get: Any) -> None:
        """:param get: ``get(name, default)`` for private names (``rospy.get_param("~" + name, d)``)."""
        self.configure = get("configure", None)
        self.sim = _as_bool("~sim", get("sim", True))
        self.use_ros_control = _as_bool("~use_ros_control", get("use_ros_control", True))
        self.control_rate = _positive("~control_rate", get("control_rate", self.CONTROL_RATE))
        self.publish_rate_given = get("publish_rate", None) is not None
        self.publish_rate = _positive("~publish_rate", get("publish_rate", self.PUBLISH_RATE))
        self.start_jsc = _as_bool("~start_joint_state_controller",
                                  get("start_joint_state_controller", True))
        self.jsc_name = str(get("joint_state_controller", "joint_state_controller"))
        self.trajectory_controllers = _name_list("~trajectory_controllers",
                                                 get("trajectory_controllers", None))
        self.sensor_controllers = _name_list("~sensor_controllers", get("sensor_controllers", None))
        self.check_controllers = _as_bool("~check_controllers", get("check_controllers", True))
        self.diagnostics_period = _non_negative("~diagnostics_period",
                                                get("diagnostics_period", self.DIAGNOSTICS_PERIOD))
        self.statistics_period = _non_negative("~statistics_period",
                                               get("statistics_period", self.STATISTICS_PERIOD))
        hold = get("hold_mode", "")
        self.hold_mode: Optional[str] = str(hold) if hold else None
        prio = get("loop_priority", -1)
        self.loop_priority: Optional[int] = int(prio) if prio is not None and int(prio) >= 0 else None
        if not isinstance(self.configure, str) or not self.configure.strip():
            raise ConfigError("private parameter ~configure is not set: give the hardware XML path "
                              "(or the XML text), e.g. _configure:=$(rospack find rospy_control)/config/"
                              "arm_hardware.xml", "~configure")


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    if isinstance(value, int):
        return bool(value)
    raise ConfigError(f"expected true or false, got {value!r}", name)


def _number(name: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"expected a number, got {value!r}", name) from None


def _positive(name: str, value: Any) -> float:
    v = _number(name, value)
    if not v > 0.0:
        raise ConfigError(f"expected a value > 0, got {value!r}", name)
    return v


def _non_negative(name: str, value: Any) -> float:
    v = _number(name, value)
    if v < 0.0:
        raise ConfigError(f"expected a value >= 0, got {value!r}", name)
    return v


def _name_list(name: str, value: Any) -> Optional[List[str]]:
    if value is None or value == "":
        return None
    if isinstance(value, str):  # "a b" or "a,b" from the command line
        return [v for v in value.replace(",", " ").split() if v]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"expected a list of controller names, got {value!r}", name)


# ---------------------------------------------------------------------------------------------
# Controller YAML helpers (ROS-free: they take the parameter tree as a dict)
# ---------------------------------------------------------------------------------------------
def controller_namespaces(params: Dict[str, Any]) -> Dict[str, str]:
    """``{name: type}`` of every entry of ``params`` (one namespace's parameter dict) that looks like a
    controller (a dict with a string ``type``), sorted by name."""
    out = {}
    for name in sorted(params):
        value = params[name]
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            out[name] = value["type"]
    return out


def check_controller_params(params: Dict[str, Any], namespace: str, joint_names: List[str],
                            registry: Any) -> List[str]:
    """Check every controller namespace of ``params``; return warnings, raise on errors.

    Errors: a ``type`` that is not a string or names no known type (a typo), ``joints`` that is not
    a list of strings, a joint (``joints`` or ``joint``) the robot does not have.  A registered type
    whose module cannot be imported is only a warning (the spawner reports it when it is used).

    :raises ConfigError: naming the parameter (``<namespace>/<name>/...``).
    """
    warnings = []
    known = set(joint_names)
    ns = namespace.rstrip("/")
    for name in sorted(params):
        value = params[name]
        if not isinstance(value, dict) or "type" not in value:
            continue
        where = f"{ns}/{name}"
        type_name = value["type"]
        if not isinstance(type_name, str) or not type_name:
            raise ConfigError(f"controller type must be a non-empty string, got {type_name!r}",
                              where + "/type")
        if type_name not in registry and ":" not in type_name:
            raise ConfigError(f"unknown controller type '{type_name}'; known types: "
                              f"{', '.join(registry.names())}", where + "/type")
        try:
            registry.resolve(type_name)
        except ConfigError as err:
            if type_name in registry:
                warnings.append(f"controller '{name}': type '{type_name}' is not available: {err}")
            else:
                raise ConfigError(str(err), where + "/type") from None
        joints = value.get("joints")
        if joints is not None:
            if not isinstance(joints, list) or not all(isinstance(j, str) for j in joints):
                raise ConfigError(f"'joints' must be a list of joint names, got {joints!r}",
                                  where + "/joints")
            unknown = [j for j in joints if j not in known]
            if unknown:
                raise ConfigError(f"unknown joint(s) {', '.join(unknown)}; the robot's joints are "
                                  f"{', '.join(joint_names)}", where + "/joints")
        joint = value.get("joint")
        if isinstance(joint, str) and joint not in known:
            raise ConfigError(f"unknown joint '{joint}'; the robot's joints are {', '.join(joint_names)}",
                              where + "/joint")
    return warnings


def default_trajectory_controllers(types: Dict[str, str]) -> List[str]:
    return [n for n, t in types.items() if t.endswith("/JointTrajectoryController")]


def default_sensor_controllers(types: Dict[str, str]) -> List[str]:
    return [n for n, t in types.items() if t.startswith(SENSOR_CONTROLLER_PACKAGES)]


# ---------------------------------------------------------------------------------------------
# The node
# ---------------------------------------------------------------------------------------------
class Driver:
    """Everything the node owns, started by :meth:`start` and torn down by :meth:`shutdown`.

    :param params: the node's parameters.
    """

    def __init__(self, params: DriverParams) -> None:
        self.params = params
        self.middleware: Any = None
        self.robot_hw: Any = None
        self.root_nh: Any = None
        self.controller_manager: Any = None
        self.cm_ros: Any = None
        self.runner: Any = None
        self.loop: Any = None
        self.joint_states: Any = None
        self.diagnostics: Any = None
        self._diag_pub: Any = None
        self._js_pub: Any = None
        self.fault_reset: Any = None
        self._services: List[Any] = []
        self._closed = False

    # -- start-up ---------------------------------------------------------------------------------
    def start(self) -> None:
        """Build and start everything (see the module docstring).

        :raises ConfigError: bad XML / URDF / YAML / parameter (everything started is shut down).
        :raises CommunicationError: a bus cannot be opened.
        """
        try:
            self._start()
        except BaseException:
            self.shutdown()
            raise

    def _start(self) -> None:
        import rospy

        from rospy_control.adapter.ros_node_handle import RosNodeHandle
        from rospy_control.middleware import Middleware

        p = self.params
        self.middleware = Middleware.from_xml(p.configure, simulate=True if p.sim else False)
        urdf = rospy.get_param("robot_description", None)
        if not isinstance(urdf, str) or not urdf.strip():
            raise ConfigError("parameter 'robot_description' is not set (load the URDF, e.g. "
                              "<param name=\"robot_description\" textfile=\"...urdf\"/>)",
                              rospy.resolve_name("robot_description"))
        self.root_nh = RosNodeHandle()
        self.robot_hw = build_robot_hw(self.middleware, urdf, self.root_nh, p.hold_mode)
        joints = joint_names(self.robot_hw)
        tree = _param_tree(self.root_nh.namespace)
        types = controller_namespaces(tree) if isinstance(tree, dict) else {}
        if p.check_controllers and isinstance(tree, dict):
            from rospy_control.controller_manager.controller_types import CONTROLLER_TYPES
            for warning in check_controller_params(tree, self.root_nh.namespace, joints, CONTROLLER_TYPES):
                logger.warning("%s", warning)
        # Through the RobotHW: it starts the middleware and sends the hold commands at once, so no
        # joint hangs limp under gravity while the control loop is being set up.
        self.robot_hw.start()
        if p.use_ros_control:
            self._start_ros_control()
        else:
            self._start_standalone(types)
        self._start_fault_services()
        if p.diagnostics_period > 0.0:
            self._start_diagnostics()
        self._report_start_faults()
        self._hint(types)
        logger.info("driver: %s branch running at %.0f Hz with %d joint(s)%s; hardware '%s'%s",
                    "ros_control" if p.use_ros_control else "standalone", p.control_rate, len(joints),
                    "" if not joints else f" ({', '.join(joints)})", self.middleware.name,
                    " (simulated)" if p.sim else "")

    def _hint(self, types: Dict[str, str]) -> None:
        """Tell a user how to drive the robot (``make run`` prints this)."""
        if self.params.use_ros_control:
            names = default_trajectory_controllers(types)
        else:
            names = list(self.runner.controllers) if self.runner is not None else []
            names = [n for n in names if n in default_trajectory_controllers(types)
                     or n in (self.params.trajectory_controllers or [])]
        if not names:
            return
        logger.info("driver: ready. Drive it with a MoveIt-shaped goal: rosrun rospy_control demo_trajectory "
                    "%s   (or, in this repository: source tools/env.sh && scripts/demo_trajectory %s); "
                    "trajectory actions: %s", names[0], names[0],
                    ", ".join(self.root_nh.resolve_name(n + "/follow_joint_trajectory") for n in names))

    def _start_ros_control(self) -> None:
        from rospy_control.adapter.control_loop import ControlLoop
        from rospy_control.adapter.controller_manager_ros import ControllerManagerRos
        from rospy_control.controller_manager import ControllerManager
        from rospy_control.controller_manager.controller_manager import STRICT

        p = self.params
        nh = self.root_nh
        self.controller_manager = ControllerManager(self.robot_hw, nh)
        self.loop = ControlLoop(self.robot_hw, self.controller_manager, p.control_rate, now=nh.now,
                                name="control_loop", priority=p.loop_priority)
        self.loop.start()
        if p.start_jsc:
            jsc = nh.child(p.jsc_name)
            if not jsc.has_param("type"):
                jsc.set_param("type", JSC_TYPE)
            if p.publish_rate_given or not jsc.has_param("publish_rate"):
                jsc.set_param("publish_rate", p.publish_rate)
            result = self.controller_manager.load_controller(p.jsc_name)
            if not result:
                raise ConfigError(f"cannot load '{p.jsc_name}': {result.message}", jsc.namespace)
            result = self.controller_manager.switch_controller([p.jsc_name], [], STRICT, False, 0.0)
            if not result:
                raise ConfigError(f"cannot start '{p.jsc_name}': {result.message}", jsc.namespace)
        self.cm_ros = ControllerManagerRos(self.controller_manager, nh, statistics_period=p.statistics_period)

    def _start_standalone(self, types: Dict[str, str]) -> None:
        import genpy
        import rospy
        from sensor_msgs.msg import JointState

        from rospy_control.adapter.control_loop import ControlLoop
        from rospy_control.adapter.standalone import ControllerRunner, JointStatesThread

        p = self.params
        nh = self.root_nh
        trajectory = p.trajectory_controllers
        if trajectory is None:
            trajectory = default_trajectory_controllers(types)
        sensors = p.sensor_controllers
        if sensors is None:
            sensors = default_sensor_controllers(types)
        if not trajectory:
            logger.warning("standalone: no trajectory controller configured (no "
                           "'*/JointTrajectoryController' namespace under '%s' and "
                           "~trajectory_controllers empty): only joint_states",
                           nh.namespace)
        self.runner = ControllerRunner(self.robot_hw, nh, list(trajectory) + [s for s in sensors
                                                                              if s not in trajectory])
        self.runner.load()
        self._js_pub = rospy.Publisher(nh.resolve_name("joint_states"), JointState, queue_size=10)
        self.loop = ControlLoop(self.robot_hw, self.runner, p.control_rate, now=nh.now, name="control_loop",
                                priority=p.loop_priority)
        self.loop.start()
        self.joint_states = JointStatesThread(lambda: self.runner.latest, self._js_pub.publish,
                                              rospy.get_time, p.publish_rate, JointState,
                                              genpy.Time.from_sec)
        self.joint_states.start()
        for name in trajectory:
            logger.info("standalone: FollowJointTrajectory server '%s'", nh.resolve_name(
                name + "/follow_joint_trajectory"))

    def _start_fault_services(self) -> None:
        """``~reset_faults`` (std_srvs/Trigger) and, on the simulated robot, ``~sim/set_fault``
        (rospy_control/SetSimFault) and ``~sim/reset_command_stats`` (std_srvs/Trigger)."""
        import rospy
        from std_srvs.srv import Trigger, TriggerResponse

        from rospy_control.adapter.fault_reset import FaultReset

        self.fault_reset = FaultReset(self.robot_hw, self.loop)

        def reset_faults(_req):
            try:
                ok, message = self.fault_reset.reset()
            except Exception as err:  # noqa: BLE001 - answer the caller, never kill the service thread
                logger.error("reset_faults failed: %s", err, exc_info=err)
                ok, message = False, f"reset failed: {type(err).__name__}: {err}"
            return TriggerResponse(success=ok, message=message)

        self._services.append(rospy.Service("~reset_faults", Trigger, reset_faults))
        if not self.params.sim:
            return
        from rospy_control.srv import SetSimFault, SetSimFaultResponse

        mw = self.middleware

        def set_fault(req):
            value = req.value if req.value else None
            unit = req.unit
            channel = mw.channels.get(unit)
            if channel is not None and channel.units:  # a bus-wide fault named by its channel
                unit = channel.units[0].name
            try:
                mw.set_sim_fault(unit, req.fault, bool(req.enable), value)
            except Exception as err:  # noqa: BLE001 - a bad request is answered, not raised
                return SetSimFaultResponse(success=False, message=str(err))
            text = f"simulated fault '{req.fault}' of '{req.unit}' switched {'on' if req.enable else 'off'}"
            logger.warning("sim: %s", text)
            return SetSimFaultResponse(success=True, message=text)

        def reset_stats(_req):
            mw.reset_simulator_command_stats()
            return TriggerResponse(success=True, message="command statistics of the simulated motors reset")

        self._services.append(rospy.Service("~sim/set_fault", SetSimFault, set_fault))
        self._services.append(rospy.Service("~sim/reset_command_stats", Trigger, reset_stats))

    def _report_start_faults(self) -> None:
        """A fault at start-up is a fault, not a configuration error: the node stays up and says so."""
        import rospy

        faulted = self.robot_hw.faulted_joints() if self.robot_hw is not None else {}
        if not faulted:
            return
        logger.error("driver: started with joint(s) in FAULT: %s. Their controllers run but send them "
                     "nothing; once the hardware answers, call 'rosservice call %s' to bring them back",
                     "; ".join(f"{j} ({r})" for j, r in sorted(faulted.items())),
                     rospy.resolve_name("~reset_faults"))

    def _start_diagnostics(self) -> None:
        import rospy
        from diagnostic_msgs.msg import DiagnosticArray

        from rospy_control.adapter.diagnostics import DiagnosticsThread, DriverDiagnostics

        extra = []
        if self.runner is not None:
            extra.append(self._runner_status)
        builder = DriverDiagnostics(self.middleware, rospy.get_name(), loop=self.loop,
                                    robot_hw=self.robot_hw, extra=extra)
        self._diag_pub = rospy.Publisher("/diagnostics", DiagnosticArray, queue_size=10)
        self.diagnostics = DiagnosticsThread(builder, self._diag_pub.publish, rospy.Time.now,
                                             self.params.diagnostics_period)
        self.diagnostics.start()

    def _runner_status(self) -> list:
        import rospy
        from diagnostic_msgs.msg import DiagnosticStatus, KeyValue

        states = self.runner.states()
        bad = [n for n, s in states.items() if s != "running"]
        level = DiagnosticStatus.OK if not bad else DiagnosticStatus.WARN
        return [DiagnosticStatus(level=level, name=f"{rospy.get_name().strip('/')}: controllers",
                                 message="all running" if not bad else f"not running: {', '.join(bad)}",
                                 hardware_id="standalone",
                                 values=[KeyValue(key=n, value=s) for n, s in states.items()])]

    # -- shutdown ---------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop everything that was started, in reverse order; idempotent, never raises."""
        if self._closed:
            return
        self._closed = True
        steps = [
            ("diagnostics", lambda: self.diagnostics and self.diagnostics.stop()),
            ("fault services", self._shutdown_services),
            ("joint_states thread", lambda: self.joint_states and self.joint_states.stop()),
            ("controller manager services", lambda: self.cm_ros and self.cm_ros.shutdown()),
            ("control loop", lambda: self.loop and self.loop.stop()),
            ("controller manager", lambda: self.controller_manager and self.controller_manager.shutdown()),
            ("standalone controllers", self._stop_runner),
            ("robot_hw", lambda: _call_if(self.robot_hw, "shutdown")),
            ("middleware", lambda: self.middleware and self.middleware.shutdown()),
            ("publishers", self._unregister),
        ]
        for what, step in steps:
            try:
                step()
            except Exception as err:  # noqa: BLE001 - shut down the rest regardless
                logger.error("driver: shutting down the %s failed: %s", what, err)

    def _shutdown_services(self) -> None:
        for service in self._services:
            service.shutdown("driver shutting down")
        self._services = []

    def _stop_runner(self) -> None:
        if self.runner is None:
            return
        now = self.root_nh.now() if self.root_nh is not None else 0.0
        self.runner.stop(now)
        self.runner.shutdown_ros()

    def _unregister(self) -> None:
        for pub in (self._js_pub, self._diag_pub):
            if pub is not None:
                pub.unregister()


def _param_tree(namespace: str) -> Dict[str, Any]:
    """The parameter dict of ``namespace`` straight from the master.

    Not ``rospy.get_param(namespace)``: rospy answers it from its parameter cache when that cache
    holds anything under the namespace (rosout caches ``/rosout_disable_topics_generation``), so
    ``get_param("/")`` returns only the cached entries.
    """
    import rosgraph
    import rospy

    try:
        tree = rosgraph.Master(rospy.get_name()).getParam(namespace)
    except Exception:  # noqa: BLE001 - no such namespace (KeyError-like master failure)
        return {}
    return tree if isinstance(tree, dict) else {}


def _call_if(obj: Any, method: str) -> None:
    fn = getattr(obj, method, None) if obj is not None else None
    if callable(fn):
        fn()


def build_robot_hw(middleware: Any, urdf: str, root_nh: Any, hold_mode: Optional[str] = None) -> Any:
    """The :class:`~rospy_control.robot_hw.MiddlewareRobotHW` over ``middleware`` for ``urdf``, with the
    joint limits of ``<root_nh>/joint_limits``.  The middleware stays owned by the caller.

    :raises ConfigError: the URDF, the transmissions or the joint limits are wrong, or a motor and a
        joint do not match.
    """
    from rospy_control.robot_hw.middleware_robot_hw import MiddlewareRobotHW

    params: Dict[str, Any] = {}
    limits = root_nh.get_param("joint_limits", None)
    if limits is not None:
        params["joint_limits"] = limits
    if hold_mode:
        params["hold_mode"] = hold_mode
    return MiddlewareRobotHW(middleware, urdf, params, urdf_source=root_nh.resolve_name("robot_description"),
                             params_source=root_nh.namespace, owns_middleware=False)


def joint_names(robot_hw: Any) -> List[str]:
    """Joints of the RobotHW's JointStateInterface (sorted, as ``get_names()`` returns them)."""
    from rospy_control.hardware_interface import JointStateInterface

    js = robot_hw.get(JointStateInterface)
    return list(js.get_names()) if js is not None else []


def main(argv: Optional[List[str]] = None) -> int:
    """Run the driver node until shutdown (details of each in the module docstring).

    Private parameters: ``~configure`` (hardware XML path or text, required), ``~sim`` (true),
    ``~use_ros_control`` (true), ``~control_rate`` (200 Hz), ``~publish_rate`` (100 Hz),
    ``~start_joint_state_controller`` (true), ``~joint_state_controller`` (its name),
    ``~trajectory_controllers`` / ``~sensor_controllers`` (standalone; default: from the YAML),
    ``~check_controllers`` (true), ``~hold_mode`` (position), ``~diagnostics_period`` (1 s),
    ``~statistics_period`` (1 s), ``~loop_priority`` (-1 = none).  Also reads ``robot_description``,
    ``joint_limits/...`` and the controllers' namespaces.

    :returns: the exit code (0 clean shutdown, 1 configuration error, 2 hardware error).
    """
    import rospy

    rospy.init_node("driver", argv=argv if argv is not None else sys.argv)
    driver = None
    try:
        driver = Driver(DriverParams(lambda name, default: rospy.get_param("~" + name, default)))
        driver.start()
    except ConfigError as err:
        rospy.logfatal("driver: configuration error, not starting: %s", err)
        rospy.signal_shutdown("configuration error")
        return 1
    except (CommunicationError, RospyControlError) as err:
        rospy.logfatal("driver: hardware error, not starting: %s", err)
        rospy.signal_shutdown("hardware error")
        return 2
    try:
        rospy.spin()
    finally:
        driver.shutdown()
        logger.info("driver: shut down cleanly")
    return 0
