"""The controller manager, ROS-free core (``controller_manager::ControllerManager``).

Two sides, as in ros_control:

* **non-real-time** (service threads): :meth:`ControllerManager.load_controller`,
  :meth:`~ControllerManager.unload_controller`, :meth:`~ControllerManager.switch_controller`,
  :meth:`~ControllerManager.list_controllers`, :meth:`~ControllerManager.list_controller_types`,
  :meth:`~ControllerManager.reload_controller_libraries`.  All six take one "services" lock, so they
  are fully serialized (a pending switch blocks a ``list_controllers``), and return a :class:`Result`
  (``ok``, ``message``) -- or the listing -- instead of raising; the rospy service layer maps ``ok``
  onto the response and the message is also logged with ros_control's wording.
* **real-time** (the control loop): :meth:`ControllerManager.update`, called once per cycle between
  ``robot_hw.read`` and ``robot_hw.write``::

      robot_hw.read(t, dt); cm.update(t, dt, reset_controllers); robot_hw.write(t, dt)

  It never takes a blocking lock: the controller list is an immutable tuple that the non-RT side
  replaces atomically ("publish a new tuple"), and a pending switch is applied under a *try*-lock
  that the non-RT side holds only to cancel a switch that timed out.

Switching (``switch_controller`` here, applied by :meth:`ControllerManager.update`; ros_control's
``switchController`` / ``manageSwitch``), and the decisions taken where ros_control is ambiguous:

* Filtering exactly as ros_control: unknown names fail STRICT / are dropped in BEST_EFFORT (strictness
  0 warns and means BEST_EFFORT); stopping a controller that is not running and starting one that is
  already running fail STRICT / are dropped in BEST_EFFORT.
* **A name in both lists always fails**, in both strictness modes ("conflicting switching command",
  ros_control 0.20 / PR #506).  We check it right after name resolution, so it fails whatever the
  controller's state.  A restart is two switches (stop, then start).
* **No BEST_EFFORT restart quirk**: ros_control calls ``starting()`` again on an already-running
  controller named in ``start_controllers`` in BEST_EFFORT mode (its RT start list is not filtered).
  We drop such a controller from the start list entirely, so BEST_EFFORT "start what is already
  running" is a no-op for it -- the documented meaning of BEST_EFFORT.
* ``robot_hw.check_for_conflict`` on the set running after the switch, then ``prepare_switch``
  (veto); both fail the switch in either mode.
* The switch is then armed and applied at the end of the next :meth:`update`: ``do_switch`` once,
  ``stopping`` for the stop list, then per ``switch_result``: DONE starts, ERROR or ``timeout``
  (ROS time since arming, when ``timeout > 0``) aborts, ONGOING puts the start list in WAITING and
  retries next cycle; with ``start_asap`` the same per controller with ``switch_result(info)``.
  The call returns ok once the loop finished the switch -- also when controllers ended up aborted,
  like ros_control.
* **Never deadlocks**: the caller waits at most ``timeout + switch_wall_margin`` wall-clock seconds
  (ros_control's +1 s guard) or, when ``timeout == 0``, ``switch_wait_limit`` seconds (default 30 s;
  ``None`` waits forever like ros_control).  If the loop never picked the switch up (``update()`` not
  running) nothing has changed and the call fails with an error saying so; if the hardware switch
  was still ongoing, the controllers still waiting to start are aborted and the call fails.  The wait
  also ends when ``root_nh.ok()`` turns False (node shutting down).

Controller exceptions never escape :meth:`update`: a controller raising in ``update``, ``starting``,
``stopping``, ``waiting`` or ``aborting`` is logged (throttled) and put in ABORTED (its ``aborting``
hook runs, e.g. velocity controllers write zero); the loop and the other controllers go on.  Each such
failure is kept (:meth:`ControllerManager.controller_failures`, the driver's ``/diagnostics``); the
controller runs again only when a switch starts it again.

Statistics (``controller_manager_msgs/ControllerStatistics``, which ros_control never publishes): per
controller, the wall time of each ``update`` call (mean, max, variance, in seconds), the number of
calls that took longer than the cycle ``period`` ("overruns") and the ROS time of the last one; see
:meth:`ControllerManager.get_statistics`.
"""
from __future__ import annotations

import threading
import time as _time
from collections import deque
from typing import Any, Iterable, List, Optional, Sequence, Set, Tuple

from rospy_control.controller_interface.controller_base import ControllerBase, ControllerState
from rospy_control.controller_interface.node_handle import NodeHandle
from rospy_control.controller_manager.controller_types import BASE_CLASS_NAME, CONTROLLER_TYPES
from rospy_control.controller_manager.records import (
    BEST_EFFORT, STRICT, ControllerDescription, ControllerSpec, ControllerStatistics,
    HardwareInterfaceResources, Result, UpdateStats,
)
from rospy_control.controller_manager.records import PendingSwitch as _Switch
from rospy_control.controller_manager.reload import reload_modules
from rospy_control.exceptions import PluginError
from rospy_control.hardware_interface import ControllerInfo, SwitchState
from rospy_control.log import Throttle, get_logger
from rospy_control.plugins import Registry

logger = get_logger(__name__)

__all__ = [
    "BEST_EFFORT", "STRICT", "Result", "HardwareInterfaceResources", "ControllerDescription",
    "ControllerStatistics", "ControllerSpec", "ControllerManager",
]

#: "not given" for ``switch_wait_limit``, where None means "wait forever".
_DEFAULT: Any = object()


class ControllerManager:
    """Loads, switches and runs controllers over a RobotHW (see the module docstring).

    :param robot_hw: the :class:`~rospy_control.hardware_interface.RobotHW`.
    :param root_nh: handle in the controller manager's namespace; controller ``<name>`` reads its
        params from ``<root_nh>/<name>`` and gets ``root_nh`` for its topics.
    :param registry: controller type registry (default: the shared ``CONTROLLER_TYPES``).
    :param switch_wall_margin: wall-clock seconds added to a switch's ``timeout`` before giving up.
    :param switch_wait_limit: wall-clock seconds a switch with ``timeout == 0`` may take before giving
        up; ``None`` waits forever (ros_control's behaviour).
    """

    #: Default of ``switch_wall_margin`` (ros_control's guard, PR #458).
    SWITCH_WALL_MARGIN = 1.0
    #: Default of ``switch_wait_limit``.
    SWITCH_WAIT_LIMIT: Optional[float] = 30.0
    #: Seconds between checks of ``root_nh.ok()`` while waiting for a switch.
    SWITCH_POLL = 0.05
    #: Controller failures kept for :meth:`controller_failures`.
    FAILURES_KEPT = 50

    def __init__(self, robot_hw, root_nh: NodeHandle, registry: Optional[Registry] = None,
                 switch_wall_margin: Optional[float] = None,
                 switch_wait_limit: Optional[float] = _DEFAULT) -> None:
        self.robot_hw = robot_hw
        self.root_nh = root_nh
        self.registry = registry if registry is not None else CONTROLLER_TYPES
        self.switch_wall_margin = (
            self.SWITCH_WALL_MARGIN if switch_wall_margin is None else switch_wall_margin)
        self.switch_wait_limit = (
            self.SWITCH_WAIT_LIMIT if switch_wait_limit is _DEFAULT else switch_wait_limit)
        self._controllers: Tuple[ControllerSpec, ...] = ()
        self._services_lock = threading.Lock()
        self._switch_lock = threading.Lock()
        self._switch: Optional[_Switch] = None
        self._controller_modules: Set[str] = set()
        self._throttle = Throttle(5.0)
        self.update_count = 0
        self.last_update_time: Optional[float] = None
        #: (wall time, controller, hook, error text) of the latest controller failures
        self._failures: "deque[Tuple[float, str, str, str]]" = deque(maxlen=self.FAILURES_KEPT)

    # =============================================================================================
    # real-time side
    # =============================================================================================
    def update(self, time: float, period: float, reset_controllers: bool = False) -> None:
        """One control cycle: update every running controller (load order), then apply a pending switch.

        :param time: ROS time of this cycle (seconds).
        :param period: time since the previous cycle (seconds).
        :param reset_controllers: stop and restart every running controller first (e.g. after the
            motors were re-enabled following an e-stop).
        """
        specs = self._controllers
        self.update_count += 1
        self.last_update_time = time
        if reset_controllers:
            for spec in specs:
                if spec.c.is_running():
                    self._hook(spec, spec.c.stop_request, time)
                    self._hook(spec, spec.c.start_request, time)
        clock = _time.perf_counter
        start = clock()
        running = ControllerState.RUNNING
        for spec in specs:
            controller = spec.c
            if controller.state is not running:
                continue
            try:
                if spec.direct:
                    controller.update(time, period)  # update_request's work, its state check made above
                else:
                    controller.update_request(time, period)
            except Exception as err:  # noqa: BLE001 - a controller fault must not stop the loop
                self._controller_failed(spec, "update", err, time)
            end = clock()  # one clock read per controller: its end is the next one's start
            spec.stats.record(end - start, period, time)
            start = end
        switch = self._switch
        if switch is not None and self._switch_lock.acquire(blocking=False):
            try:
                if self._switch is switch and not switch.finished:
                    self._manage_switch(switch, time)
            finally:
                self._switch_lock.release()

    def _manage_switch(self, switch: _Switch, time: float) -> None:
        if not switch.hw_started:
            switch.hw_started = True
            try:
                self.robot_hw.do_switch(switch.hw_start, switch.hw_stop)
            except Exception as err:  # noqa: BLE001
                logger.error("robot_hw.do_switch raised: %s", err)
        for spec in switch.stop:
            if spec.c.is_running():
                self._hook(spec, spec.c.stop_request, time)
        timed_out = switch.timeout > 0.0 and (time - switch.init_time) > switch.timeout
        if not switch.start_asap:
            result = self._switch_result(None)
            if result == SwitchState.DONE:
                for spec in switch.start:
                    self._hook(spec, spec.c.start_request, time)
                self._finish_switch(switch)
            elif result == SwitchState.ERROR or timed_out:
                if result != SwitchState.ERROR:
                    logger.error("Timeout (%.3f s) while switching controllers; aborting %s",
                                 switch.timeout, [s.info.name for s in switch.start])
                for spec in switch.start:
                    self._hook(spec, spec.c.abort_request, time)
                self._finish_switch(switch)
            else:
                for spec in switch.start:
                    self._hook(spec, spec.c.wait_request, time)
            return
        for spec in switch.start:
            if id(spec) in switch.resolved or spec.c.is_running():
                continue
            result = self._switch_result(spec.info)
            if result == SwitchState.DONE:
                self._hook(spec, spec.c.start_request, time)
                switch.resolved.add(id(spec))
            elif result == SwitchState.ERROR or timed_out:
                self._hook(spec, spec.c.abort_request, time)
                switch.resolved.add(id(spec))
            else:
                self._hook(spec, spec.c.wait_request, time)
        if all(s.c.is_running() or s.c.is_aborted() for s in switch.start):
            self._finish_switch(switch)

    def _switch_result(self, info: Optional[ControllerInfo]) -> SwitchState:
        try:
            return self.robot_hw.switch_result(info) if info is not None else self.robot_hw.switch_result()
        except Exception as err:  # noqa: BLE001
            logger.error("robot_hw.switch_result raised: %s; treating it as ERROR", err)
            return SwitchState.ERROR

    def _finish_switch(self, switch: _Switch) -> None:
        switch.finished = True
        self._switch = None
        switch.done.set()

    def _hook(self, spec: ControllerSpec, request, time: float) -> None:
        """Run a ``*_request`` of a controller; a raising hook aborts the controller."""
        try:
            request(time)
        except Exception as err:  # noqa: BLE001
            self._controller_failed(spec, request.__name__, err, time)

    def _controller_failed(self, spec: ControllerSpec, what: str, err: BaseException, time: float) -> None:
        name = spec.info.name
        hook = what[:-len("_request")] if what.endswith("_request") else what
        hook = {"start": "starting", "stop": "stopping", "wait": "waiting",
                "abort": "aborting"}.get(hook, hook)
        self._failures.append((_time.time(), name, hook, f"{type(err).__name__}: {err}"))
        if self._throttle.ready((name, what)):
            logger.error("Controller '%s' raised in %s(): %r; aborting it (the control loop and the other "
                         "controllers go on; start it again with a switch)", name, hook, err)
        if what == "abort_request":
            spec.c.state = ControllerState.ABORTED
            return
        try:
            spec.c.abort_request(time)
        except Exception as abort_err:  # noqa: BLE001
            if self._throttle.ready((name, "abort_request")):
                logger.error("Controller '%s' raised in aborting(): %r", name, abort_err)
            spec.c.state = ControllerState.ABORTED

    # =============================================================================================
    # non-real-time side
    # =============================================================================================
    def controller_failures(self) -> List[Tuple[float, str, str, str]]:
        """The latest controller failures, oldest first: ``(time.time(), controller, hook, error)``,
        ``hook`` being ``update``, ``starting``, ``stopping``, ``waiting`` or ``aborting``."""
        return list(self._failures)

    def get_controller_by_name(self, name: str) -> Optional[ControllerBase]:
        """The loaded controller instance called ``name``, or None."""
        spec = self._spec(name)
        return spec.c if spec is not None else None

    def get_controller_names(self) -> List[str]:
        """Names of the loaded controllers, in load order."""
        return [s.info.name for s in self._controllers]

    def _spec(self, name: str) -> Optional[ControllerSpec]:
        for spec in self._controllers:
            if spec.info.name == name:
                return spec
        return None

    def _resolve(self, names: Sequence[str], verb: str,
                 strict: bool) -> Tuple[List[ControllerSpec], Optional[str]]:
        """Loaded controllers named in ``names`` (duplicates dropped, order kept).  An unknown name is
        returned as the failure message when ``strict``, else logged at debug and skipped."""
        specs: List[ControllerSpec] = []
        for name in names:
            spec = self._spec(name)
            if spec is None:
                message = (f"Could not {verb} controller with name '{name}' because no controller "
                           "with this name exists")
                if strict:
                    return specs, message
                logger.debug(message)
            elif spec not in specs:
                specs.append(spec)
        return specs, None

    # -- load ------------------------------------------------------------------------------------
    def load_controller(self, name: str) -> Result:
        """Load controller ``name`` of type ``<ns>/<name>/type`` and initialise it (state ``initialized``)."""
        with self._services_lock:
            return self._load_controller(name)

    def _load_controller(self, name: str) -> Result:
        logger.debug("Will load controller '%s'", name)
        if self._spec(name) is not None:
            return _fail(f"A controller named '{name}' was already loaded inside the controller manager")
        controller_nh = self.root_nh.child(name)
        try:
            type_name = controller_nh.get_param("type")
        except KeyError:
            return _fail(
                f"Could not load controller '{name}' because the type was not specified. Did you load the "
                f"controller configuration on the parameter server (namespace: '{controller_nh.namespace}')?")
        if not isinstance(type_name, str) or not type_name:
            return _fail(f"Could not load controller '{name}' because its type parameter "
                         f"'{controller_nh.resolve_name('type')}' is not a non-empty string: {type_name!r}")
        logger.debug("Constructing controller '%s' of type '%s'", name, type_name)
        try:
            cls = self.registry.resolve(type_name)
        except PluginError as err:
            details = ""
            if type_name in self.registry or ":" in type_name:
                logger.error("Could not load class '%s': %s", type_name, err)
                details = f" ({err})"
            return _fail(
                f"Could not load controller '{name}' because controller type '{type_name}' "
                f"does not exist.{details}",
                "Use 'rosservice call controller_manager/list_controller_types' to get the available types")
        try:
            controller = cls()
        except Exception as err:  # noqa: BLE001 - any constructor failure is a load failure
            return _fail(f"Could not load controller '{name}': constructing '{type_name}' raised: {err!r}")
        self._controller_modules.add(cls.__module__)
        root_view = self.root_nh.child("")
        logger.debug("Initializing controller '%s'", name)
        try:
            claimed = controller.init_request(self.robot_hw, root_view, controller_nh)
        except Exception as err:  # noqa: BLE001 - ros_control catches everything thrown by initRequest
            controller_nh.shutdown()
            root_view.shutdown()
            logger.error("Exception thrown while initializing controller '%s'.\n%s", name, err)
            return _fail(f"Initializing controller '{name}' failed: {err}")
        info = ControllerInfo(name, type_name, list(claimed))
        self._controllers = self._controllers + (ControllerSpec(info, controller, controller_nh, root_view),)
        logger.debug("Successfully load controller '%s'", name)
        return Result(True, f"Loaded controller '{name}'")

    # -- unload ----------------------------------------------------------------------------------
    def unload_controller(self, name: str) -> Result:
        """Unload a controller that is not running (any other state)."""
        with self._services_lock:
            return self._unload_controller(name)

    def _unload_controller(self, name: str) -> Result:
        logger.debug("Will unload controller '%s'", name)
        spec = self._spec(name)
        if spec is None:
            return _fail(f"Could not unload controller with name '{name}' because no controller "
                         "with this name exists")
        if spec.c.is_running():
            return _fail(f"Could not unload controller with name '{name}' because it is still running")
        self._controllers = tuple(s for s in self._controllers if s is not spec)
        spec.shutdown_ros()
        logger.debug("Successfully unloaded controller '%s'", name)
        return Result(True, f"Unloaded controller '{name}'")

    # -- switch ----------------------------------------------------------------------------------
    def switch_controller(self, start_controllers: Sequence[str], stop_controllers: Sequence[str],
                          strictness: int, start_asap: bool = False, timeout: float = 0.0) -> Result:
        """Stop ``stop_controllers`` and start ``start_controllers`` in one control cycle.

        Blocks until the control loop applied the switch (see the module docstring for every rule).

        :param strictness: :data:`STRICT` or :data:`BEST_EFFORT` (0 = BEST_EFFORT with a warning).
        :param start_asap: start each controller as soon as its own hardware switch is done.
        :param timeout: ROS-time seconds the hardware switch may stay ONGOING (0 = no limit).
        """
        with self._services_lock:
            return self._switch_controller(list(start_controllers), list(stop_controllers), strictness,
                                           bool(start_asap), float(timeout))

    def _switch_controller(self, start_names: List[str], stop_names: List[str], strictness: int,
                           start_asap: bool, timeout: float) -> Result:
        if strictness == 0:
            logger.warning(
                "Controller Manager: To switch controllers you need to specify a strictness level of "
                "controller_manager_msgs::SwitchController::STRICT (%d) or ::BEST_EFFORT (%d). "
                "Defaulting to ::BEST_EFFORT.", STRICT, BEST_EFFORT)
            strictness = BEST_EFFORT
        strict = strictness == STRICT
        logger.debug("switching controllers: start %s, stop %s", start_names, stop_names)

        stop_request, unknown = self._resolve(stop_names, "stop", strict)
        if unknown is not None:
            return _fail(unknown)
        start_request, unknown = self._resolve(start_names, "start", strict)
        if unknown is not None:
            return _fail(unknown)

        both = [s.info.name for s in start_request if s in stop_request]
        if both:
            return _fail(f"Could not switch controllers: {both} are both in the start and the stop list "
                         "(conflicting switching command); stop and start them in two calls to restart them")

        active_after: List[ControllerInfo] = []
        hw_start: List[ControllerInfo] = []
        hw_stop: List[ControllerInfo] = []
        dropped: Set[int] = set()
        for spec in self._controllers:
            in_stop = spec in stop_request
            in_start = spec in start_request
            running = spec.c.is_running()
            if in_stop and not running:
                if strict:
                    return _fail(f"Could not stop controller '{spec.info.name}' since it is not running")
                in_stop = False
                dropped.add(id(spec))
            if in_start and running:
                if strict:
                    return _fail(f"Controller '{spec.info.name}' is already running")
                in_start = False
                dropped.add(id(spec))
            if running and in_stop:
                hw_stop.append(spec.info)
            elif not running and in_start:
                hw_start.append(spec.info)
            if (running and not in_stop) or in_start:
                active_after.append(spec.info)
        stop_list = [s for s in stop_request if id(s) not in dropped]
        start_list = [s for s in start_request if id(s) not in dropped]

        try:
            conflict = self.robot_hw.check_for_conflict(active_after)
        except Exception as err:  # noqa: BLE001
            return _fail(f"Could not switch controllers: robot_hw.check_for_conflict raised: {err!r}")
        if conflict:
            return _fail("Could not switch controllers, due to resource conflict")
        try:
            feasible = self.robot_hw.prepare_switch(hw_start, hw_stop)
        except Exception as err:  # noqa: BLE001
            return _fail(f"Could not switch controllers: robot_hw.prepare_switch raised: {err!r}")
        if not feasible:
            return _fail("Could not switch controllers. The hardware interface combination for the requested "
                         "controllers is unfeasible.")

        switch = _Switch(start_list, stop_list, hw_start, hw_stop, start_asap, timeout, self.root_nh.now())
        logger.debug("Request atomic controller switch from realtime loop")
        self._switch = switch
        return self._wait_for_switch(switch)

    def _wait_for_switch(self, switch: _Switch) -> Result:
        if switch.timeout > 0.0:
            limit: Optional[float] = switch.timeout + self.switch_wall_margin
        else:
            limit = self.switch_wait_limit
        deadline = None if limit is None else _time.monotonic() + limit
        while not switch.done.wait(self.SWITCH_POLL):
            if not self.root_nh.ok():
                return self._cancel_switch(switch, "the node is shutting down")
            if deadline is not None and _time.monotonic() > deadline:
                return self._cancel_switch(switch, f"it did not complete within {limit:.3f} s (wall clock)")
        if switch.outcome is not None:
            return switch.outcome
        logger.debug("Successfully switched controllers")
        return Result(True, "Switched controllers")

    def _cancel_switch(self, switch: _Switch, why: str) -> Result:
        """Disarm ``switch`` (from a non-RT thread); its waiter gets the returned failure."""
        with self._switch_lock:
            if switch.done.is_set():
                return switch.outcome if switch.outcome is not None else Result(True, "Switched controllers")
            switch.finished = True
            self._switch = None
            if not switch.hw_started:
                result = _fail(
                    f"Could not switch controllers: {why}, and the control loop never picked the switch up "
                    f"(update() was called {self.update_count} times so far). Is the controller manager's "
                    "control loop running? Nothing was changed.")
            else:
                now = self.root_nh.now()
                aborted = []
                for spec in switch.start:
                    if not spec.c.is_running() and not spec.c.is_aborted():
                        self._hook(spec, spec.c.abort_request, now)
                        aborted.append(spec.info.name)
                result = _fail(f"Could not switch controllers: {why} while the hardware switch was still "
                               f"ongoing; aborted {aborted}")
            switch.outcome = result
            switch.done.set()
            return result

    def is_switch_pending(self) -> bool:
        """True while a switch is armed and not yet applied by the loop."""
        return self._switch is not None

    # -- listings --------------------------------------------------------------------------------
    def list_controllers(self) -> List[ControllerDescription]:
        """Every loaded controller in load order: name, state string, type, claimed resources."""
        with self._services_lock:
            return [self._describe(s) for s in self._controllers]

    @staticmethod
    def _describe(spec: ControllerSpec) -> ControllerDescription:
        claimed = [HardwareInterfaceResources(r.hardware_interface, sorted(r.resources))
                   for r in spec.info.claimed_resources]
        return ControllerDescription(spec.info.name, spec.c.state.label, spec.info.type, claimed)

    def list_controller_types(self) -> Tuple[List[str], List[str]]:
        """``(types, base_classes)``, parallel lists; nothing is imported."""
        with self._services_lock:
            types = self.registry.names()
            return types, [BASE_CLASS_NAME] * len(types)

    # -- reload ----------------------------------------------------------------------------------
    def reload_controller_libraries(self, force_kill: bool) -> Result:
        """Reload the Python modules of the controller classes used so far and forget resolved types.

        With controllers loaded: ``force_kill=False`` fails; ``force_kill=True`` stops them (BEST_EFFORT
        switch, only if some are running) and unloads them all first.
        """
        with self._services_lock:
            names = self.get_controller_names()
            if names and not force_kill:
                return _fail("Controller manager: Cannot reload controller libraries because there are still "
                             f"{len(names)} controllers running")
            if names:
                logger.info("Controller manager: Killing all running controllers")
                if any(s.c.is_running() for s in self._controllers):
                    result = self._switch_controller([], names, BEST_EFFORT, False, 0.0)
                    if not result.ok:
                        return _fail("Controller manager: Cannot reload controller libraries because "
                                     f"failed to stop running controllers: {result.message}")
                for name in names:
                    result = self._unload_controller(name)
                    if not result.ok:
                        return _fail("Controller manager: Cannot reload controller libraries because "
                                     f"failed to unload controller '{name}'")
            failures = reload_modules(self._controller_modules)
            self.registry.clear_cache()
            if failures:
                return _fail("Controller manager: reloading controller modules failed: "
                             + "; ".join(failures))
            logger.info("Controller manager: reloaded controller libraries for '%s'", "controller_interface")
            return Result(True, "Reloaded controller libraries")

    # -- statistics --------------------------------------------------------------------------------
    def get_statistics(self) -> List[ControllerStatistics]:
        """Per-controller update statistics, load order (does not take the services lock)."""
        out = []
        for spec in self._controllers:
            st = spec.stats
            out.append(ControllerStatistics(
                name=spec.info.name, type=spec.info.type,
                timestamp=st.timestamp if st.count else (self.last_update_time or 0.0),
                running=spec.c.is_running(), max_time=st.max, mean_time=st.mean, variance_time=st.variance,
                num_control_loop_overruns=st.overruns, time_last_control_loop_overrun=st.last_overrun))
        return out

    def reset_statistics(self, names: Optional[Iterable[str]] = None) -> None:
        """Forget the statistics of ``names`` (default: every controller)."""
        wanted = None if names is None else set(names)
        for spec in self._controllers:
            if wanted is None or spec.info.name in wanted:
                spec.stats = UpdateStats()

    # -- shutdown --------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop every running controller, unload all and close their ROS interfaces.

        Call it after the control loop has stopped (the ``stopping`` hooks run in this thread).
        Idempotent.  A pending switch is cancelled first.
        """
        switch = self._switch
        if switch is not None:
            self._cancel_switch(switch, "the controller manager is shutting down")
        with self._services_lock:
            now = self.root_nh.now()
            specs = self._controllers
            for spec in specs:
                if spec.c.is_running():
                    self._hook(spec, spec.c.stop_request, now)
            self._controllers = ()
            for spec in reversed(specs):
                spec.shutdown_ros()


def _fail(message: str, *more: str) -> Result:
    """Log ``message`` (and ``more`` lines) as errors and return a failed :class:`Result`."""
    logger.error("%s", message)
    for line in more:
        logger.error("%s", line)
    return Result(False, " ".join((message,) + more))
