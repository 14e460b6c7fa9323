"""The driver node, the ROS side of the package: hardware XML -> Middleware -> RobotHW -> one of two
branches (``docs/architecture.md``, "The driver node").

``scripts/driver_node`` only calls :func:`main`.  Start-up, in this order, each step undone if a
later one fails (nothing half-starts):

1. read the private parameters below;
2. with ``~robot_hardware`` (see below): load and ``init`` that RobotHW, skip to step 4; otherwise
   build the :class:`~rospy_control.middleware.Middleware` from ``~hardware_config`` (a file path or the
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
   * **false** (standalone branch): the same controller manager runs the trajectory controllers
     (and sensor broadcasters) of ``~trajectory_controllers`` / ``~sensor_controllers``, loaded and
     switched on at start-up, but without its ROS API (no ``controller_manager/*`` services, no
     statistics topic): each ``<name>/follow_joint_trajectory`` action, ``<name>/state``,
     ``<name>/command`` and ``<name>/query_state`` is the JointTrajectoryController's own.  A thread
     publishes ``joint_states`` for every joint at ``~publish_rate``, also while idle, with strictly
     increasing stamps, from the joint states the control loop copies once per cycle
     (:mod:`rospy_control.control_loop.standalone`);

7. ``/diagnostics`` about once per second from its own thread
   (:mod:`rospy_control.adapter.diagnostics`).

Shutdown (SIGINT, ``rosnode kill``): diagnostics and publishers stop, the services are withdrawn, the
loop stops, every controller is stopped, the middleware sends exit-motor-mode to every motor and
closes the buses; exit code 0.  If the control loop's thread does not stop, the shutdown stops there
and says so (:meth:`Driver.shutdown`).  The control loop's and the bus threads' log records go
through a queue (:mod:`rospy_control.realtime.log_queue`), so rospy's console, file and ``/rosout``
handlers never run on them.  A configuration error (hardware XML, URDF, controller YAML,
parameters) is logged as one FATAL line naming the file:line or parameter, and the node exits with
code 1; a bus that cannot be opened exits with code 2.

ROS API
-------
Private parameters (all settable from ``launch/bringup.launch`` arguments):

* ``~robot_hardware`` (list of names, default none) -- run your own RobotHW(s) instead of the CAN one,
  with ros_control's ``combined_robot_hw`` parameters: for each name, ``~<name>/type`` (a registered
  ``pkg/Type``, the class ``Type`` of the Python package ``pkg``, or ``module:Class``) and that
  RobotHW's own parameters under ``~<name>/``; it is constructed without arguments and given
  ``init(root_nh, ~<name>)`` (``docs/writing_a_robot_hw.md``).  Absent, ``robot_hardware`` in the
  node's namespace is used the same way (``<name>/...`` there).  With either, ``~hardware_config``,
  ``~sim``, ``~sim_process`` and ``~hold_mode`` are not used; ``~reset_faults`` calls the RobotHW's
  ``reset_faults()`` (each part's, for several); a part that drives the CAN middleware
  (``rospy_control/MiddlewareRobotHW``) has its units on ``/diagnostics``, its position steps capped
  on the wire and, simulated, ``~sim/*``.
* ``~hardware_config`` (string, **required** without ``~robot_hardware``; its former name ``~configure``
  still works, with a deprecation warning) -- hardware XML: a file path, or the
  XML text itself.
* ``~sim`` (bool, default true) -- true: every CAN channel is simulated (the XML's ``<simulation>``
  elements give the model; channels without one get default models); false: every
  ``<simulation>`` element is ignored and the configured real python-can interfaces are opened.
* ``~sim_process`` (bool, default false; ``bringup.launch`` sets it from its ``sim_process``
  argument, default true) -- with ``~sim``, true: the simulated firmware runs in its own process,
  the simulator node (``scripts/sim_node``, :mod:`rospy_control.adapter.sim_node`, started by
  ``bringup.launch``), and the channels talk to it over python-can's ``udp_multicast`` interface
  through their hardware code path; a host stall of the driver then no longer freezes the motors.
  Before enabling the motors the driver waits up to ``~sim_wait`` for the simulator to answer; if
  the bus cannot be opened or nobody answers, it says so in one warning and falls back to the
  in-process simulator.  false: the simulated firmware runs in this process on a ``virtual`` bus
  (a driver started on its own, without a simulator node).
* ``~sim_bus_key`` (string, default ``<ROS master port><namespace>``, e.g. ``11311/``) -- the key the
  multicast group and port of each channel are derived from
  (:func:`rospy_control.simulator.bus.sim_bus_address`); the simulator node must use the
  same (``bringup.launch`` passes its ``sim_bus_key`` argument to both).
* ``~sim_node`` (string, default ``sim``, resolved in the node's namespace) -- the simulator node,
  whose ``set_fault`` and ``reset_command_stats`` services ``~sim/...`` forward to.
* ``~sim_wait`` (double, s, default 60) -- how long to wait for the simulator process.
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
* ``~telemetry_rate`` (double, Hz, default 10) -- ``~telemetry`` (``rospy_control/ActuatorTelemetry``:
  temperatures, bus voltage, current, mode, error codes, gains) rate; 0 disables.  ``~set_gains``
  changes an actuator's gains at run time (:mod:`.telemetry`).
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
* ``~home`` and ``~home/<unit>`` (std_srvs/Trigger) -- homing on demand of the units that can (a CiA
  402 drive with ``<homing>``), refused while a trajectory runs (:mod:`.homing_services`).
* ``~sim/set_fault`` (rospy_control/SetSimFault), ``~sim/command_stats`` (rospy_control/SimCommandStats)
  and ``~sim/reset_command_stats``
  (std_srvs/Trigger), with ``~sim`` only -- switch a fault of the simulated firmware on or off, and
  reset the per-motor command statistics the simulator reports on ``/diagnostics``.  With the
  simulator in its own process they forward to its ``<~sim_node>/set_fault`` and
  ``<~sim_node>/reset_command_stats`` (which it also offers directly); with the in-process simulator
  they act here.

A fault at start-up (a motor that does not answer) is not a configuration error: the node starts,
reports the faulted joints (log and ``/diagnostics``), runs the controllers, whose faulted joints get
no commands until ``~reset_faults`` succeeds.
"""
from __future__ import annotations

import functools
import sys
from typing import Any, Callable, Dict, List, Optional

import rosgraph
import rosgraph.names
import rospy
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from std_srvs.srv import Trigger, TriggerResponse

from rospy_control.control_loop.loop import ControlLoop
from rospy_control.adapter.controller_manager_ros import ControllerManagerRos
from rospy_control.adapter.homing_services import HomingServices
from rospy_control.adapter.telemetry import TelemetryServices
from rospy_control.adapter.diagnostics import DiagnosticsThread, DriverDiagnostics
from rospy_control.adapter.paths import package_root
from rospy_control.adapter.startup import start_node
from rospy_control.control_loop.driver_config import (
    JSC_TYPE,
    DriverParams,
    build_robot_hw,
    resolve_hardware_config,
    check_controller_params,
    load_robot_hw,
    controller_namespaces,
    default_trajectory_controllers,
    joint_names,
)
from rospy_control.control_loop.fault_reset import FaultReset
from rospy_control.adapter.ros_node_handle import RosNodeHandle
from rospy_control.adapter.sim_node import sim_fault_services
from rospy_control.control_loop.standalone import (
    JointStateSampler,
    JointStatesThread,
    controller_states,
    load_controllers,
    stamp_from_nsec,
    start_controllers,
)
from rospy_control.controller_manager import ControllerManager
from rospy_control.controller_manager.controller_types import CONTROLLER_TYPES
from rospy_control.composition import peer_of
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import RobotHW
from rospy_control.log import get_logger
from rospy_control.middleware import Middleware
from rospy_control.simulator import SimulatedRobot
from rospy_control.simulator.bus import default_bus_key
from rospy_control.realtime import install_log_queue, stop_in_order
from rospy_control.srv import SetSimFault, SetSimFaultResponse, SimCommandStats, SimCommandStatsResponse

logger = get_logger(__name__)

__all__ = ["Driver", "DriverParams", "main"]


class Driver:
    """Everything the node owns, started by :meth:`start` and torn down by :meth:`shutdown`.

    :param params: the node's parameters.
    """

    def __init__(self, params: DriverParams) -> None:
        self.params = params
        self.middleware: Optional[Middleware] = None
        #: with ``~sim``: the simulated robot, a peer on the middleware's buses (its own process, or
        #: this one's as the fallback)
        self.simulator: Optional[SimulatedRobot] = None
        #: the RobotHW: ``~robot_hardware``'s, or the MiddlewareRobotHW of ``~hardware_config``
        self.robot_hw: Optional[RobotHW] = None
        self.root_nh: Optional[RosNodeHandle] = None
        #: both branches; in the standalone one without its ROS API (:attr:`cm_ros` stays None)
        self.controller_manager: Optional[ControllerManager] = None
        self.cm_ros: Optional[ControllerManagerRos] = None
        self.loop: Optional[ControlLoop] = None
        #: standalone branch: the trajectory controllers served (the first ones loaded)
        self.trajectory_controllers: List[str] = []
        self.joint_states: Optional[JointStatesThread] = None
        self.diagnostics: Optional[DiagnosticsThread] = None
        self.telemetry: Optional[TelemetryServices] = None
        self.homing: Optional[HomingServices] = None
        self.fault_reset: Optional[FaultReset] = None
        self._diag_pub: Optional[rospy.Publisher] = None
        self._js_pub: Optional[rospy.Publisher] = None
        self._services: List[rospy.Service] = []
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
        p = self.params
        self.root_nh = RosNodeHandle()
        if p.robot_hardware is not None:
            # any RobotHW, named by ~robot_hardware (ros_control's combined_robot_hw parameters)
            robot_hw_nh = self.root_nh if p.robot_hardware_in_namespace else self.root_nh.child("~")
            self.robot_hw = load_robot_hw(self.root_nh, robot_hw_nh)
            self.middleware = self._first_middleware()
            # a MiddlewareRobotHW listed there with `simulate` was composed with its simulated peer
            self.simulator = peer_of(self.middleware) if self.middleware is not None else None
        else:
            self._build_middleware_robot_hw()
        # between two command frames a motor never sees a position step larger than its joints' URDF
        # velocity limits allow over two control periods (enforced on the wire, whatever the timing)
        caps = self.robot_hw.limit_command_steps(1.0 / p.control_rate)
        if caps:
            logger.info("driver: position step per command frame capped for %d motor(s) (URDF velocity limit "
                        "x 2 control periods)", len(caps))
        joints = joint_names(self.robot_hw)
        tree = _param_tree(self.root_nh.namespace)
        if p.robot_hardware_in_namespace:  # the RobotHWs' namespaces have a 'type' too: not controllers
            tree = {k: v for k, v in tree.items() if k != "robot_hardware" and k not in p.robot_hardware}
        types = controller_namespaces(tree)
        if p.check_controllers:
            for warning in check_controller_params(tree, self.root_nh.namespace, joints, CONTROLLER_TYPES):
                logger.warning("%s", warning)
        # Through the RobotHW: it starts the middleware and sends the hold commands at once, so no
        # joint hangs limp under gravity while the control loop is being set up.  (A RobotHW of your
        # own may leave start() as it is: init() may have done everything.)
        self.robot_hw.start()
        if p.use_ros_control:
            self._start_ros_control()
        else:
            self._start_standalone(types)
        self._start_fault_services()
        self.homing = HomingServices(self.robot_hw, self.loop, self.controller_manager)
        if p.diagnostics_period > 0.0:
            self._start_diagnostics()
        self.telemetry = TelemetryServices(self.robot_hw.middlewares, p.telemetry_rate)
        self._report_start_faults()
        self._hint(types)
        mw = self.middleware
        logger.info("driver: %s branch running at %.0f Hz with %d joint(s)%s; hardware '%s'%s",
                    "ros_control" if p.use_ros_control else "standalone", p.control_rate, len(joints),
                    "" if not joints else f" ({', '.join(joints)})",
                    mw.name if mw is not None else type(self.robot_hw).__name__,
                    _simulated(self.simulator))

    def _build_middleware_robot_hw(self) -> None:
        """The default RobotHW: the CAN middleware of ``~hardware_config`` (hardware XML) under the URDF."""
        p = self.params
        urdf = rospy.get_param("robot_description", None)
        if not isinstance(urdf, str) or not urdf.strip():
            raise ConfigError("parameter 'robot_description' is not set (load the URDF, e.g. "
                              "<param name=\"robot_description\" textfile=\"...urdf\"/>)",
                              rospy.resolve_name("robot_description"))
        if p.sim:
            # the simulated robot is a peer on the buses: in the simulator node's process when it
            # answers, else in this process (where it feels the URDF's weights, given below)
            # the driver's devices check the configuration first; the simulated robot is built from
            # the same records
            self.middleware = Middleware.from_xml(p.hardware_config)
            self.simulator = SimulatedRobot(self.middleware.config, simulate=True)
        else:
            self.middleware = Middleware.from_xml(p.hardware_config)
        self.robot_hw = build_robot_hw(self.middleware, urdf, self.root_nh, p.hold_mode)
        if self.simulator is not None:
            # the configuration is accepted (its errors came first): give the simulator the URDF and
            # the middleware the simulator's buses (waiting for the simulator process, if any)
            self.simulator.attach_gravity(urdf, rospy.resolve_name("robot_description"))
            key = None
            if p.sim_process:
                key = p.sim_bus_key or default_bus_key(rosgraph.get_master_uri(), rospy.get_namespace())
            self.middleware.set_buses(self.simulator.buses(key, p.sim_wait))

    def _hint(self, types: Dict[str, str]) -> None:
        """Tell a user how to drive the robot (``make run`` prints this)."""
        if self.params.use_ros_control:
            names = default_trajectory_controllers(types)
        else:
            names = self.trajectory_controllers
        if not names:
            return
        logger.info("driver: ready. Drive it with a MoveIt-shaped goal: rosrun rospy_control demo_trajectory "
                    "%s   (or, in this repository: source tools/env.sh && scripts/demo_trajectory %s); "
                    "trajectory actions: %s", names[0], names[0],
                    ", ".join(self.root_nh.resolve_name(n + "/follow_joint_trajectory") for n in names))

    def _start_control_loop(self, after_read: Optional[Callable[[float, float], None]] = None) -> None:
        """The controller manager in the node's namespace and the control loop running it."""
        p = self.params
        self.controller_manager = ControllerManager(self.robot_hw, self.root_nh)
        self.loop = ControlLoop(self.robot_hw, self.controller_manager, p.control_rate, now=self.root_nh.now,
                                name="control_loop", priority=p.loop_priority, after_read=after_read)
        self.loop.start()

    def _start_ros_control(self) -> None:
        p = self.params
        nh = self.root_nh
        self._start_control_loop()
        if p.start_jsc:
            jsc = nh.child(p.jsc_name)
            if not jsc.has_param("type"):
                jsc.set_param("type", JSC_TYPE)
            if p.publish_rate_given or not jsc.has_param("publish_rate"):
                jsc.set_param("publish_rate", p.publish_rate)
            load_controllers(self.controller_manager, [p.jsc_name])
            start_controllers(self.controller_manager, [p.jsc_name])
        self.cm_ros = ControllerManagerRos(self.controller_manager, nh, statistics_period=p.statistics_period)

    def _start_standalone(self, types: Dict[str, str]) -> None:
        p = self.params
        nh = self.root_nh
        self.trajectory_controllers = p.standalone_trajectory_controllers(types)
        names = p.standalone_controllers(types)
        if not self.trajectory_controllers:
            logger.warning("standalone: no trajectory controller configured (no "
                           "'*/JointTrajectoryController' namespace under '%s' and "
                           "~trajectory_controllers empty): only joint_states", nh.namespace)
        sampler = JointStateSampler(self.robot_hw)
        self._start_control_loop(after_read=sampler.sample)
        load_controllers(self.controller_manager, names)
        self._js_pub = rospy.Publisher(nh.resolve_name("joint_states"), JointState, queue_size=10)
        self.joint_states = JointStatesThread(sampler, self._js_pub.publish, rospy.get_time, p.publish_rate,
                                              JointState, stamp_from_nsec)
        self.joint_states.start()
        start_controllers(self.controller_manager, names)
        for name in self.trajectory_controllers:
            logger.info("standalone: FollowJointTrajectory server '%s'", nh.resolve_name(
                name + "/follow_joint_trajectory"))

    def _first_middleware(self) -> Optional[Middleware]:
        """The CAN middleware of ``~robot_hardware``'s RobotHW(s): its units go to ``/diagnostics`` and,
        simulated, it offers ``~sim/*`` (with several, the first one; the others are said)."""
        mws = self.robot_hw.middlewares()
        if len(mws) > 1:
            logger.warning("driver: %d CAN middlewares (%s): /diagnostics reports the units of '%s' only, "
                           "~sim/* acts on it only", len(mws), ", ".join(m.name for m in mws), mws[0].name)
        return mws[0] if mws else None

    def _start_fault_services(self) -> None:
        """``~reset_faults`` (std_srvs/Trigger) through the RobotHW's ``reset_faults`` and, on the
        simulated CAN robot, ``~sim/set_fault`` (rospy_control/SetSimFault) and
        ``~sim/reset_command_stats`` (std_srvs/Trigger)."""
        self.fault_reset = FaultReset(self.robot_hw, self.loop)

        def reset_faults(_req: Any) -> TriggerResponse:
            try:
                ok, message = self.fault_reset.reset()
            except Exception as err:  # noqa: BLE001 - answer the caller, never kill the service thread
                logger.error("reset_faults failed: %s", err, exc_info=err)
                ok, message = False, f"reset failed: {type(err).__name__}: {err}"
            return TriggerResponse(success=ok, message=message)

        self._services.append(rospy.Service("~reset_faults", Trigger, reset_faults))
        if self.simulator is None:
            return
        if self.simulator.process:
            self._start_sim_forwarders()
            return
        self._services.extend(sim_fault_services(self.simulator, "~sim/"))

    def _start_sim_forwarders(self) -> None:
        """``~sim/set_fault``, ``~sim/reset_command_stats`` and ``~sim/command_stats`` forwarded to the
        simulator node."""
        sim_ns = rospy.resolve_name(self.params.sim_node)
        targets = {name: rosgraph.names.ns_join(sim_ns, name)
                   for name in ("set_fault", "reset_command_stats", "command_stats")}
        logger.info("driver: ~sim/set_fault and ~sim/reset_command_stats forward to %s and %s",
                    targets["set_fault"], targets["reset_command_stats"])

        def call(name: str, cls: Any, req: Any, failed: Callable[[str], Any]) -> Any:
            try:
                rospy.wait_for_service(targets[name], 5.0)
                return rospy.ServiceProxy(targets[name], cls)(req)
            except Exception as err:  # noqa: BLE001 - answer the caller, never kill the service thread
                return failed(f"simulator node service {targets[name]} unreachable: "
                              f"{type(err).__name__}: {err}")

        def set_fault(req: Any) -> Any:
            answer = call("set_fault", SetSimFault, req,
                          lambda why: SetSimFaultResponse(success=False, message=why))
            if answer.success:
                logger.warning("sim: %s", answer.message)
            return answer

        def reset_stats(req: Any) -> Any:
            return call("reset_command_stats", Trigger, req,
                        lambda why: TriggerResponse(success=False, message=why))

        def stats(req: Any) -> Any:
            return call("command_stats", SimCommandStats, req,
                        lambda why: SimCommandStatsResponse(success=False, message=why))

        self._services.append(rospy.Service("~sim/set_fault", SetSimFault, set_fault))
        self._services.append(rospy.Service("~sim/reset_command_stats", Trigger, reset_stats))
        self._services.append(rospy.Service("~sim/command_stats", SimCommandStats, stats))

    def _report_start_faults(self) -> None:
        """A fault at start-up is a fault, not a configuration error: the node stays up and says so."""
        faulted = self.robot_hw.faulted_joints()
        if not faulted:
            return
        logger.error("driver: started with joint(s) in FAULT: %s. Their controllers run but send them "
                     "nothing; once the hardware answers, call 'rosservice call %s' to bring them back",
                     "; ".join(f"{j} ({r})" for j, r in sorted(faulted.items())),
                     rospy.resolve_name("~reset_faults"))

    def _start_diagnostics(self) -> None:
        states = None
        if not self.params.use_ros_control and self.controller_manager is not None:
            states = functools.partial(controller_states, self.controller_manager)
        builder = DriverDiagnostics(self.middleware, rospy.get_name(), loop=self.loop,
                                    robot_hw=self.robot_hw, controller_states=states,
                                    simulator=self.simulator)
        self._diag_pub = rospy.Publisher("/diagnostics", DiagnosticArray, queue_size=10)
        self.diagnostics = DiagnosticsThread(builder, self._diag_pub.publish, rospy.Time.now,
                                             self.params.diagnostics_period)
        self.diagnostics.start()

    # -- shutdown ---------------------------------------------------------------------------------
    def shutdown(self) -> Optional[str]:
        """Stop everything that was started, in reverse order; idempotent, never raises.

        The order is a dependency chain: nothing is torn down while a thread that may still use it
        runs.  The observers (diagnostics, ``/joint_states``) only read; one that does not stop is
        reported and the shutdown goes on.  The control loop is the gate: if its thread does not
        stop (a ``read``/``update``/``write`` that never returns), the controllers' ``stopping()``,
        the RobotHW and the buses are left alone -- stopping them under a running ``update()`` is
        what must not happen -- and the log says so; the motors' firmware CAN timeout is then the
        safety net.

        :returns: None, or the step that stopped the sequence.
        """
        if self._closed:
            return None
        self._closed = True
        steps = [
            ("diagnostics", lambda: _stop_observer(self.diagnostics)),
            ("telemetry", lambda: _stop_observer(self.telemetry)),
            ("homing services", lambda: _stop_observer(self.homing)),
            ("fault services", self._shutdown_services),
            ("joint_states thread", lambda: _stop_observer(self.joint_states)),
            ("controller manager services", lambda: self.cm_ros and self.cm_ros.shutdown()),
            # False when the thread did not join: stop_in_order ends here
            ("control loop", lambda: self.loop.stop() if self.loop is not None else True),
            # stops the running controllers and closes their topics, services and actions
            ("controller manager", lambda: self.controller_manager and self.controller_manager.shutdown()),
            ("robot_hw", self._shutdown_robot_hw),
            ("middleware", lambda: self.middleware and self.middleware.shutdown()),
            ("publishers", self._unregister),
        ]
        return stop_in_order(steps, "driver")

    def _shutdown_robot_hw(self) -> None:
        if self.robot_hw is not None:
            self.robot_hw.shutdown()

    def _shutdown_services(self) -> None:
        for service in self._services:
            service.shutdown("driver shutting down")
        self._services = []

    def _unregister(self) -> None:
        for pub in (self._js_pub, self._diag_pub):
            if pub is not None:
                pub.unregister()


def _stop_observer(thread_owner: Any) -> None:
    """Stop a thread that only reads (diagnostics, /joint_states); one that does not join is logged by
    its ``stop()`` and does not hold up the shutdown."""
    if thread_owner is not None:
        thread_owner.stop()


def _simulated(sim: Optional[SimulatedRobot]) -> str:
    if sim is None:
        return ""
    return " (simulated in the simulator process)" if sim.process else " (simulated in this process)"


def _param_tree(namespace: str) -> Dict[str, Any]:
    """The parameter dict of ``namespace`` straight from the master.

    Not ``rospy.get_param(namespace)``: rospy answers it from its parameter cache when that cache
    holds anything under the namespace (rosout caches ``/rosout_disable_topics_generation``), so
    ``get_param("/")`` returns only the cached entries.
    """
    try:
        tree = rosgraph.Master(rospy.get_name()).getParam(namespace)
    except Exception:  # noqa: BLE001 - no such namespace (KeyError-like master failure)
        return {}
    return tree if isinstance(tree, dict) else {}


#: seconds a thread may hold the GIL while another one waits for it (Python's default: 0.005)
SWITCH_INTERVAL = 0.001


def main(argv: Optional[List[str]] = None) -> int:
    """Run the driver node until shutdown (details of each in the module docstring).

    Private parameters: ``~hardware_config`` (hardware XML path or text, required), ``~sim`` (true),
    ``~sim_process`` (false), ``~sim_bus_key`` (master port + namespace), ``~sim_node`` (sim),
    ``~sim_wait`` (60 s), ``~use_ros_control`` (true), ``~control_rate`` (200 Hz), ``~publish_rate`` (100 Hz),
    ``~start_joint_state_controller`` (true), ``~joint_state_controller`` (its name),
    ``~trajectory_controllers`` / ``~sensor_controllers`` (standalone; default: from the YAML),
    ``~check_controllers`` (true), ``~hold_mode`` (position), ``~diagnostics_period`` (1 s),
    ``~statistics_period`` (1 s), ``~loop_priority`` (-1 = none).  Also reads ``robot_description``,
    ``joint_limits/...`` and the controllers' namespaces.

    :returns: the exit code (0 clean shutdown, 1 configuration error, 2 hardware error).
    """
    # The control loop and the bus threads share the interpreter with rospy's threads (action goals,
    # services, subscribers).  A thread that wants the GIL waits up to the switch interval for a
    # running one to let go: Python's default 5 ms is a whole period at 200 Hz, so a goal being
    # processed made the loop miss its deadline; 1 ms bounds that wait well inside a period.
    sys.setswitchinterval(SWITCH_INTERVAL)
    rospy.init_node("driver", argv=argv if argv is not None else sys.argv)
    # the control loop and the bus threads only enqueue their log records; rospy's handlers
    # (console, file, /rosout) run in the log thread
    log_queue = install_log_queue()
    try:
        return _run()
    finally:
        log_queue.stop()


def _start() -> "Driver":
    params = DriverParams(lambda name, default: rospy.get_param("~" + name, default),
                          rospy.get_param("robot_hardware", None))
    for text in params.deprecations:
        rospy.logwarn("driver: %s", text)
    params.hardware_config = resolve_hardware_config(params.hardware_config, package_root())
    driver = Driver(params)
    driver.start()
    return driver


def _run() -> int:
    driver, code = start_node("driver", _start)
    if driver is None:
        return code
    try:
        rospy.spin()
    finally:
        stopped_at = driver.shutdown()
        if stopped_at is None:
            logger.info("driver: shut down cleanly")
    return 0
