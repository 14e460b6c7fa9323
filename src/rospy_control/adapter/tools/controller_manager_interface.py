"""Python API for a controller manager's services (ros_control's ``controller_manager_interface``).

The module-level functions keep upstream's names -- :func:`list_controller_types`,
:func:`reload_libraries`, :func:`list_controllers`, :func:`load_controller`,
:func:`unload_controller`, :func:`start_controller`, :func:`start_controllers`,
:func:`stop_controller`, :func:`stop_controllers`, :func:`start_stop_controllers` -- and their
True/False results, with these differences:

* they **return** what upstream printed (the controller list, the types) and **log** the outcome
  through ``rospy_control.log`` instead of printing; the command-line tools
  (:mod:`.controller_manager_cli`, :mod:`.controller_group`) print upstream's exact lines;
* every wait is bounded: a manager whose services do not show up within ``timeout`` seconds
  (default :data:`DEFAULT_TIMEOUT`; ``None`` waits forever) raises
  :class:`ControllerManagerUnavailable` instead of hanging -- a *missing manager* is an error, a
  *refused request* (``ok == False``) is a ``False`` result.  A ROS master that is not up yet is
  waited for within the same ``timeout`` (the error then says the master is not reachable);
* no mutable default arguments; every function takes the manager's ``namespace`` (``""`` = the
  caller's namespace, as upstream; ``"/robot"`` = ``/robot/controller_manager/...``).

:class:`ControllerManagerClient` is the object behind them; the spawner and the tools use it
directly.  Its transport is pluggable (:class:`RospyTransport` by default) so the tools are unit-tested
against an in-memory controller manager without a ROS master.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Iterable, List, Optional, Sequence, Tuple

from controller_manager_msgs.srv import (
    ListControllers,
    ListControllersRequest,
    ListControllerTypes,
    ListControllerTypesRequest,
    LoadController,
    LoadControllerRequest,
    ReloadControllerLibraries,
    ReloadControllerLibrariesRequest,
    SwitchController,
    SwitchControllerRequest,
    UnloadController,
    UnloadControllerRequest,
)

from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = [
    "BEST_EFFORT", "STRICT", "DEFAULT_TIMEOUT", "ControllerManagerUnavailable", "ControllerManagerClient",
    "RospyTransport", "service_name", "claimed_interfaces", "format_controller_line",
    "list_controller_types", "reload_libraries", "list_controllers", "load_controller",
    "unload_controller", "start_controller", "start_controllers", "stop_controller", "stop_controllers",
    "start_stop_controllers",
]

BEST_EFFORT = SwitchControllerRequest.BEST_EFFORT
STRICT = SwitchControllerRequest.STRICT

#: Seconds the functions and the command-line tools wait for a service to appear before giving up
#: (generous: a manager on a loaded host can take many seconds to come up; upstream waits forever).
DEFAULT_TIMEOUT = 30.0

_SERVICE_TYPES = {
    "load_controller": LoadController,
    "unload_controller": UnloadController,
    "switch_controller": SwitchController,
    "list_controllers": ListControllers,
    "list_controller_types": ListControllerTypes,
    "reload_controller_libraries": ReloadControllerLibraries,
}


class ControllerManagerUnavailable(RuntimeError):
    """The controller manager's service could not be reached (not advertised within the timeout,
    connection lost, node shutting down)."""


def service_name(namespace: str, service: str) -> str:
    """``<namespace>/controller_manager/<service>``; an empty namespace gives the relative name
    ``controller_manager/<service>`` (resolved in the caller's namespace)."""
    if not namespace:
        return f"controller_manager/{service}"
    return namespace.rstrip("/") + f"/controller_manager/{service}"


def claimed_interfaces(state: Any) -> List[str]:
    """Distinct interface names of a ``ControllerState``'s ``claimed_resources``, in order."""
    out: List[str] = []
    for claimed in state.claimed_resources:
        if claimed.hardware_interface not in out:
            out.append(claimed.hardware_interface)
    return out


def format_controller_line(state: Any) -> str:
    """The ``controller_manager list`` line: ``'<name>' - '<iface1+iface2>' ( <state> )``."""
    return "'%s' - '%s' ( %s )" % (state.name, "+".join(claimed_interfaces(state)), state.state)


# ---------------------------------------------------------------------------------------------
# Transport
# ---------------------------------------------------------------------------------------------
class RospyTransport:
    """Service calls through rospy (``rospy.wait_for_service`` + ``rospy.ServiceProxy``).

    Works without ``rospy.init_node`` (like ``rosservice``); names are resolved in the caller's
    namespace.
    """

    #: Seconds between two attempts while the master or the service cannot be contacted.
    RETRY = 0.3

    def wait_for_service(self, name: str, timeout: Optional[float]) -> None:
        """Block until ``name`` is advertised and answers a probe, at most ``timeout`` seconds
        (``None`` or <= 0: forever), also while the ROS master is not up yet.

        :raises ControllerManagerUnavailable: not there in time (the message says whether the master
            or the service was missing), or rospy shut down meanwhile.
        """
        import rospy

        deadline = None if timeout is None or timeout <= 0 else time.monotonic() + float(timeout)
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            if remaining is not None and remaining <= 0.0:
                break
            try:
                rospy.wait_for_service(name, timeout=remaining)
                return
            except rospy.ROSInterruptException as err:
                raise ControllerManagerUnavailable(f"interrupted while waiting for service [{name}]") from err
            except (rospy.ROSException, OSError):
                # Timed out, or (without init_node) rospy gave up at the first failed contact: the
                # master is not up yet, or the service is registered but its node does not answer
                # yet.  Try again until our own deadline.
                if rospy.core.is_shutdown():
                    raise ControllerManagerUnavailable(
                        f"interrupted while waiting for service [{name}]") from None
            time.sleep(self.RETRY if remaining is None else max(0.0, min(self.RETRY, remaining)))
        if not _master_reachable():
            raise ControllerManagerUnavailable(
                f"the ROS master at {_master_uri()} is not reachable (waited {timeout:g} s for service "
                f"[{name}]); is roscore running?")
        raise ControllerManagerUnavailable(f"service [{name}] is not available (waited {timeout:g} s)")

    def call(self, name: str, srv_class: type, request: Any) -> Any:
        import rospy

        try:
            return rospy.ServiceProxy(name, srv_class)(request)
        except (rospy.ServiceException, rospy.ROSException, OSError) as err:
            raise ControllerManagerUnavailable(f"call to service [{name}] failed: {err}") from err


def _master_uri() -> str:
    try:
        import rosgraph

        return str(rosgraph.get_master_uri())
    except Exception:  # noqa: BLE001 - only for a message
        return "$ROS_MASTER_URI"


def _master_reachable() -> bool:
    try:
        import rosgraph

        rosgraph.Master("/controller_manager_interface").getPid()
        return True
    except Exception:  # noqa: BLE001 - any failure means "not reachable"
        return False


# ---------------------------------------------------------------------------------------------
# Client
# ---------------------------------------------------------------------------------------------
class ControllerManagerClient:
    """Calls the six services of one controller manager.

    :param namespace: namespace of the controller manager (``""`` = relative, see :func:`service_name`).
    :param timeout: seconds to wait for a service to appear (``None`` or <= 0: forever).
    :param transport: object with ``wait_for_service(name, timeout)`` and ``call(name, srv_class,
        request)``; default :class:`RospyTransport`.
    """

    def __init__(self, namespace: str = "", timeout: Optional[float] = DEFAULT_TIMEOUT,
                 transport: Optional[Any] = None) -> None:
        self.namespace = namespace
        self.timeout = timeout
        self.transport = transport if transport is not None else RospyTransport()

    def service_name(self, service: str) -> str:
        return service_name(self.namespace, service)

    def wait_for_services(self, services: Iterable[str] = tuple(_SERVICE_TYPES),
                          timeout: Optional[float] = None) -> None:
        """Wait until every service in ``services`` is advertised.

        :param timeout: per service; default :attr:`timeout`.
        :raises ControllerManagerUnavailable: one did not appear in time.
        """
        for service in services:
            self.transport.wait_for_service(self.service_name(service),
                                            self.timeout if timeout is None else timeout)

    def call(self, service: str, request: Any, wait: bool = True) -> Any:
        """Call ``service`` (a short name such as ``"list_controllers"``) with ``request``.

        :param wait: wait (bounded) for the service first.
        :raises ControllerManagerUnavailable: not reachable.
        """
        name = self.service_name(service)
        if wait:
            self.transport.wait_for_service(name, self.timeout)
        return self.transport.call(name, _SERVICE_TYPES[service], request)

    # -- the six services ------------------------------------------------------------------------
    # Each method waits (bounded) for its service unless ``wait=False`` (then a missing service fails
    # at once, which is what a shutting-down caller wants).
    def load_controller(self, name: str, wait: bool = True) -> bool:
        return bool(self.call("load_controller", LoadControllerRequest(name=name), wait).ok)

    def unload_controller(self, name: str, wait: bool = True) -> bool:
        return bool(self.call("unload_controller", UnloadControllerRequest(name=name), wait).ok)

    def switch_controller(self, start_controllers: Sequence[str] = (), stop_controllers: Sequence[str] = (),
                          strictness: int = STRICT, start_asap: bool = False, timeout: float = 0.0,
                          wait: bool = True) -> bool:
        request = SwitchControllerRequest(
            start_controllers=list(start_controllers), stop_controllers=list(stop_controllers),
            strictness=int(strictness), start_asap=bool(start_asap), timeout=float(timeout))
        return bool(self.call("switch_controller", request, wait).ok)

    def list_controllers(self, wait: bool = True) -> List[Any]:
        """``controller_manager_msgs/ControllerState`` list, in load order."""
        return list(self.call("list_controllers", ListControllersRequest(), wait).controller)

    def list_controller_types(self) -> Tuple[List[str], List[str]]:
        """``(types, base_classes)``."""
        response = self.call("list_controller_types", ListControllerTypesRequest())
        return list(response.types), list(response.base_classes)

    def reload_controller_libraries(self, force_kill: bool) -> bool:
        request = ReloadControllerLibrariesRequest(force_kill=bool(force_kill))
        return bool(self.call("reload_controller_libraries", request).ok)


def call_with_timeout(func: Callable[[], Any], timeout: float, what: str) -> Any:
    """Run ``func()`` in a daemon thread and wait at most ``timeout`` seconds for it.

    Used where hanging is not an option (a spawner shutting down while the manager is frozen):
    rospy service calls have no timeout of their own.

    :raises ControllerManagerUnavailable: ``func`` did not return in time (it is abandoned).
    :raises: whatever ``func`` raised.
    """
    box: List[Any] = []

    def run() -> None:
        try:
            box.append((True, func()))
        except BaseException as err:  # noqa: BLE001 - re-raised in the caller's thread
            box.append((False, err))

    thread = threading.Thread(target=run, name=f"rospy_control.call:{what}", daemon=True)
    thread.start()
    thread.join(max(0.0, timeout))
    if not box:
        raise ControllerManagerUnavailable(f"{what} did not answer within {timeout:.1f} s")
    ok, value = box[0]
    if not ok:
        raise value
    return value


# ---------------------------------------------------------------------------------------------
# upstream-named functions
# ---------------------------------------------------------------------------------------------
def _client(namespace: str, timeout: Optional[float]) -> ControllerManagerClient:
    return ControllerManagerClient(namespace, timeout)


def list_controller_types(namespace: str = "", timeout: Optional[float] = DEFAULT_TIMEOUT) -> List[str]:
    """The controller types the manager can load."""
    return _client(namespace, timeout).list_controller_types()[0]


def reload_libraries(force_kill: bool, restore: bool = False, namespace: str = "",
                     timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """Reload the controller libraries (``force_kill`` stops and unloads every controller first).

    With ``restore``, the controllers loaded before are loaded again and those that were running are
    started again (BEST_EFFORT), as upstream does.
    """
    client = _client(namespace, timeout)
    return reload_libraries_with(client, force_kill, restore)


def reload_libraries_with(client: ControllerManagerClient, force_kill: bool, restore: bool = False,
                          report: Optional[Callable[[str], None]] = None) -> bool:
    """:func:`reload_libraries` through ``client``; ``report(line)`` receives upstream's output lines."""
    _say(report, f"Restore: {restore}")
    before = client.list_controllers() if restore else []
    ok = client.reload_controller_libraries(force_kill)
    if ok:
        _say(report, "Successfully reloaded libraries")
    else:
        _say(report, "Failed to reload libraries. Do you still have controllers loaded?", error=True)
    if restore:
        for state in before:
            if not client.load_controller(state.name):
                logger.error("Could not load '%s' again after reloading the libraries", state.name)
        running = [s.name for s in before if s.state == "running"]
        if running and not client.switch_controller(running, [], BEST_EFFORT):
            logger.error("Could not start %s again after reloading the libraries", running)
        _say(report, "Controllers restored to original state")
    return ok


def _logged(ok: bool, success: str, failure: str) -> bool:
    """``ok``, with the stock tools' line logged: ``success`` (info) or ``failure`` (error)."""
    if ok:
        logger.info("%s", success)
    else:
        logger.error("%s", failure)
    return ok


def list_controllers(namespace: str = "", timeout: Optional[float] = DEFAULT_TIMEOUT) -> List[Any]:
    """The loaded controllers (``controller_manager_msgs/ControllerState``), in load order."""
    return _client(namespace, timeout).list_controllers()


def load_controller(name: str, namespace: str = "", timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """Load controller ``name``; True on success."""
    return _logged(_client(namespace, timeout).load_controller(name), f"Loaded '{name}'",
                   f"Error when loading '{name}'")


def load_with(client: "ControllerManagerClient", name: str, report: Callable[[str], None]) -> bool:
    """Load controller ``name`` through ``client`` and report the stock tools' line; True on success."""
    ok = client.load_controller(name)
    report(f"Loaded '{name}'" if ok else f"Error when loading '{name}'")
    return ok


def unload_controller(name: str, namespace: str = "", timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """Unload controller ``name`` (it must not be running); True on success."""
    return _logged(_client(namespace, timeout).unload_controller(name), f"Unloaded '{name}' successfully",
                   f"Error when unloading '{name}'")


def start_controller(name: str, namespace: str = "", timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """Start one controller (STRICT)."""
    return start_stop_controllers([name], None, namespace, timeout)


def start_controllers(names: Sequence[str], namespace: str = "",
                      timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """Start several controllers in one STRICT switch."""
    return start_stop_controllers(names, None, namespace, timeout)


def stop_controller(name: str, namespace: str = "", timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """Stop one controller (STRICT)."""
    return start_stop_controllers(None, [name], namespace, timeout)


def stop_controllers(names: Sequence[str], namespace: str = "",
                     timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """Stop several controllers in one STRICT switch."""
    return start_stop_controllers(None, names, namespace, timeout)


def start_stop_controllers(start_controllers: Optional[Sequence[str]] = None,
                           stop_controllers: Optional[Sequence[str]] = None, namespace: str = "",
                           timeout: Optional[float] = DEFAULT_TIMEOUT) -> bool:
    """One STRICT switch (start_asap False, timeout 0) starting and stopping the given controllers."""
    return start_stop_with(_client(namespace, timeout), start_controllers, stop_controllers)


def start_stop_with(client: ControllerManagerClient, start: Optional[Sequence[str]],
                    stop: Optional[Sequence[str]], report: Optional[Callable[[str], None]] = None) -> bool:
    """:func:`start_stop_controllers` through ``client``; ``report(line)`` receives upstream's lines."""
    start_list = list(start or ())
    stop_list = list(stop or ())
    ok = client.switch_controller(start_list, stop_list, STRICT, False, 0.0)
    if ok:
        if start_list:
            _say(report, "Started {} successfully".format(start_list))
        if stop_list:
            _say(report, "Stopped {} successfully".format(stop_list))
    else:
        _say(report, "Error when starting {} and stopping {}".format(start_list, stop_list), error=True)
    return ok


def _say(report: Optional[Callable[[str], None]], line: str, error: bool = False) -> None:
    if report is not None:
        report(line)
    elif error:
        logger.error("%s", line)
    else:
        logger.info("%s", line)
