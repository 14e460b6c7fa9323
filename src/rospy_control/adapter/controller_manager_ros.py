"""The controller manager's ROS API: the six ``controller_manager_msgs`` services and statistics.

:class:`ControllerManagerRos` binds a ROS-free
:class:`~rospy_control.controller_manager.ControllerManager` to its ROS interface, with exactly
ros_control's semantics so that ``spawner``, ``rqt_controller_manager`` and MoveIt cannot tell the
difference.

ROS API (``<ns>`` = the namespace of the node handle given, normally the node's namespace)
-----------------------------------------------------------------------------------------
Services (all six serialized by one lock; each handler always answers -- a failure is reported only
through ``ok``, never as a failed service call):

* ``<ns>/controller_manager/load_controller`` (``controller_manager_msgs/LoadController``)
* ``<ns>/controller_manager/unload_controller`` (``controller_manager_msgs/UnloadController``)
* ``<ns>/controller_manager/switch_controller`` (``controller_manager_msgs/SwitchController``):
  ``strictness`` STRICT (2) / BEST_EFFORT (1) (0 = BEST_EFFORT with a warning), ``start_asap``,
  ``timeout``; answers once the control loop applied the switch (or the wall-clock guard expired).
* ``<ns>/controller_manager/list_controllers`` (``controller_manager_msgs/ListControllers``): load
  order; ``state`` one of ``initialized``, ``running``, ``stopped``, ``waiting``, ``aborted``;
  ``claimed_resources`` one entry per interface with ros_control's type name
  (``hardware_interface::PositionJointInterface``) and sorted resource names.
* ``<ns>/controller_manager/list_controller_types`` (``controller_manager_msgs/ListControllerTypes``):
  parallel ``types`` / ``base_classes`` arrays.
* ``<ns>/controller_manager/reload_controller_libraries``
  (``controller_manager_msgs/ReloadControllerLibraries``): ``force_kill`` semantics of ros_control.

Published topic (ros_control defines the message but never publishes it):

* ``<ns>/controller_manager/statistics`` (``controller_manager_msgs/ControllersStatistics``), every
  ``statistics_period`` seconds (default 1 s, wall clock) from its own thread: per loaded controller
  the wall time its ``update()`` takes (``max_time``, ``mean_time``, ``variance_time`` -- the latter in
  s², carried in a ``duration`` field as ros_control's message declares it), whether it runs, and how
  many updates took longer than the control period (``num_control_loop_overruns``, with the ROS time
  of the last one).  ``header.stamp`` is the ROS time of publication.  Set the period to 0 to disable.

Threading: handlers run in rospy's service threads and may block (a switch waits for the control
loop) but never block the loop itself: the core's :meth:`ControllerManager.update` takes no lock
that a handler holds.  The handlers go through the :class:`NodeHandle` facade only (no rospy import
here), so they are unit-tested with the in-memory handle.
"""
from __future__ import annotations

import threading
from typing import Any, Callable, List, Optional

import genpy
from controller_manager_msgs.msg import (
    ControllersStatistics,
    ControllerState,
    ControllerStatistics,
    HardwareInterfaceResources,
)
from controller_manager_msgs.srv import (
    ListControllers,
    ListControllersResponse,
    ListControllerTypes,
    ListControllerTypesResponse,
    LoadController,
    LoadControllerResponse,
    ReloadControllerLibraries,
    ReloadControllerLibrariesResponse,
    SwitchController,
    SwitchControllerResponse,
    UnloadController,
    UnloadControllerResponse,
)

from rospy_control.controller_interface.node_handle import NodeHandle, Publisher, ServiceServer
from rospy_control.log import Throttle, get_logger
from rospy_control.realtime import join_thread, start_thread

logger = get_logger(__name__)

__all__ = ["ControllerManagerRos", "SERVICE_NAMES", "STATISTICS_TOPIC"]

#: The six service names, relative to ``<ns>/controller_manager``.
SERVICE_NAMES = (
    "load_controller", "unload_controller", "switch_controller", "list_controllers",
    "list_controller_types", "reload_controller_libraries",
)
#: Statistics topic, relative to ``<ns>/controller_manager``.
STATISTICS_TOPIC = "statistics"


def _ok(result: Any) -> bool:
    """``ok`` of a core result (a ``Result`` named tuple, or a plain bool)."""
    return bool(getattr(result, "ok", result))


class ControllerManagerRos:
    """Serve ``controller_manager`` (the core) on ROS (see the module docstring for the API).

    :param controller_manager: the :class:`~rospy_control.controller_manager.ControllerManager`.
    :param nh: handle in the controller manager's namespace (the node handle given to the core);
        default: the core's ``root_nh``.
    :param statistics_period: seconds between statistics messages; 0 disables them.
    :param start: advertise at once (default); otherwise call :meth:`start`.
    """

    #: Default of ``statistics_period``.
    STATISTICS_PERIOD = 1.0

    def __init__(self, controller_manager: Any, nh: Optional[NodeHandle] = None,
                 statistics_period: Optional[float] = None, start: bool = True) -> None:
        self.cm = controller_manager
        root = nh if nh is not None else controller_manager.root_nh
        #: Handle in ``<ns>/controller_manager``; owns the services and the statistics publisher.
        self.nh: NodeHandle = root.child("controller_manager")
        self.statistics_period = float(
            self.STATISTICS_PERIOD if statistics_period is None else statistics_period)
        self._lock = threading.Lock()
        self._services: List[ServiceServer] = []
        self._stats_pub: Optional[Publisher] = None
        self._stats_thread: Optional[threading.Thread] = None
        self._stop = threading.Event()
        self._started = False
        self._throttle = Throttle(10.0)
        if start:
            self.start()

    # -- life cycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Advertise the statistics topic, start its thread, then the six services (last, as
        ros_control does: a client that sees the services sees a ready manager).  Idempotent."""
        if self._started:
            return
        self._started = True
        if self.statistics_period > 0.0:
            self._stats_pub = self.nh.advertise(STATISTICS_TOPIC, ControllersStatistics, queue_size=1)
            self._stats_thread = start_thread(self._statistics_loop, "controller_manager_statistics")
        handlers = (
            ("load_controller", LoadController, self.handle_load_controller),
            ("unload_controller", UnloadController, self.handle_unload_controller),
            ("switch_controller", SwitchController, self.handle_switch_controller),
            ("list_controllers", ListControllers, self.handle_list_controllers),
            ("list_controller_types", ListControllerTypes, self.handle_list_controller_types),
            ("reload_controller_libraries", ReloadControllerLibraries,
             self.handle_reload_controller_libraries),
        )
        for name, srv_class, handler in handlers:
            self._services.append(self.nh.advertise_service(name, srv_class, handler))
        logger.info("Controller manager services ready under '%s'", self.nh.namespace)

    def shutdown(self) -> None:
        """Withdraw the services and the statistics topic; idempotent.  Does not touch the core."""
        self._stop.set()
        join_thread(self._stats_thread, 2.0, "controller manager statistics")  # logs one that did not stop
        self.nh.shutdown()
        self._services = []

    # -- service handlers ------------------------------------------------------------------------
    def _call(self, what: str, func: Callable[[], Any]) -> Any:
        """Run a core call under the services lock; an exception is logged and means failure."""
        with self._lock:
            try:
                return func()
            except Exception:  # noqa: BLE001 - a service must answer, failures only through ok
                logger.exception("controller_manager/%s failed with an exception", what)
                return None

    def handle_load_controller(self, req: Any) -> LoadControllerResponse:
        logger.debug("loading service called for controller '%s'", req.name)
        result = self._call("load_controller", lambda: self.cm.load_controller(req.name))
        return LoadControllerResponse(ok=result is not None and _ok(result))

    def handle_unload_controller(self, req: Any) -> UnloadControllerResponse:
        logger.debug("unloading service called for controller '%s'", req.name)
        result = self._call("unload_controller", lambda: self.cm.unload_controller(req.name))
        return UnloadControllerResponse(ok=result is not None and _ok(result))

    def handle_switch_controller(self, req: Any) -> SwitchControllerResponse:
        logger.debug("switching service called: start %s, stop %s, strictness %d, start_asap %s, timeout %s",
                     list(req.start_controllers), list(req.stop_controllers), req.strictness,
                     req.start_asap, req.timeout)
        result = self._call("switch_controller", lambda: self.cm.switch_controller(
            list(req.start_controllers), list(req.stop_controllers), int(req.strictness),
            bool(req.start_asap), float(req.timeout)))
        return SwitchControllerResponse(ok=result is not None and _ok(result))

    def handle_list_controllers(self, req: Any) -> ListControllersResponse:
        descriptions = self._call("list_controllers", self.cm.list_controllers) or []
        response = ListControllersResponse()
        for desc in descriptions:
            response.controller.append(ControllerState(
                name=desc.name, state=desc.state, type=desc.type,
                claimed_resources=[
                    HardwareInterfaceResources(hardware_interface=r.hardware_interface,
                                               resources=sorted(r.resources))
                    for r in desc.claimed_resources
                ]))
        return response

    def handle_list_controller_types(self, req: Any) -> ListControllerTypesResponse:
        listing = self._call("list_controller_types", self.cm.list_controller_types)
        types, bases = listing if listing is not None else ([], [])
        return ListControllerTypesResponse(types=list(types), base_classes=list(bases))

    def handle_reload_controller_libraries(self, req: Any) -> ReloadControllerLibrariesResponse:
        result = self._call("reload_controller_libraries",
                            lambda: self.cm.reload_controller_libraries(bool(req.force_kill)))
        return ReloadControllerLibrariesResponse(ok=result is not None and _ok(result))

    # -- statistics --------------------------------------------------------------------------------
    def statistics_message(self) -> ControllersStatistics:
        """The current ``ControllersStatistics`` (what the statistics thread publishes)."""
        msg = ControllersStatistics()
        msg.header.stamp = genpy.Time.from_sec(max(0.0, float(self.nh.now())))
        for st in self.cm.get_statistics():
            msg.controller.append(ControllerStatistics(
                name=st.name, type=st.type,
                timestamp=genpy.Time.from_sec(max(0.0, float(st.timestamp))),
                running=bool(st.running),
                max_time=genpy.Duration.from_sec(float(st.max_time)),
                mean_time=genpy.Duration.from_sec(float(st.mean_time)),
                variance_time=genpy.Duration.from_sec(float(st.variance_time)),
                num_control_loop_overruns=int(st.num_control_loop_overruns),
                time_last_control_loop_overrun=genpy.Time.from_sec(
                    max(0.0, float(st.time_last_control_loop_overrun)))))
        return msg

    def publish_statistics(self) -> None:
        """Build and publish one statistics message (errors are logged, throttled)."""
        pub = self._stats_pub
        if pub is None:
            return
        try:
            pub.publish(self.statistics_message())
        except Exception as err:  # noqa: BLE001 - statistics must never take anything down
            if self._throttle.ready():
                logger.warning("Could not publish controller statistics: %s", err)

    def _statistics_loop(self) -> None:
        while not self._stop.wait(self.statistics_period):
            if not self.nh.ok():
                return
            self.publish_statistics()
