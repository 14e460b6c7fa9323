"""``spawner``: load (and start) controllers when run, stop and unload them when killed.

Drop-in for ros_control's ``controller_manager spawner``, usually started from a launch file::

    <node pkg="rospy_control" type="spawner" name="controller_spawner"
          args="joint_state_controller arm_controller"/>

Arguments:

* ``controller ...`` -- controller names, or paths of YAML files: a file is loaded onto the parameter
  server in the spawner's namespace and its top-level keys are the controllers to spawn;
* ``--stopped`` -- load only, do not start;
* ``--wait-for TOPIC`` -- do nothing until ``TOPIC`` (``std_msgs/Bool``) says ``True``;
* ``--namespace NS`` -- the manager's services are ``NS/controller_manager/...`` (default: relative
  to the spawner's namespace);
* ``--timeout T`` -- seconds to wait for the manager's services (default 30; ``<= 0`` = forever);
  ``--no-timeout`` is the same as ``--timeout 0``.  When ``/use_sim_time`` is true and ``/clock`` has
  not started yet, the spawner keeps waiting ("Waiting for /clock") instead of giving up;
* ``--shutdown-timeout T`` -- accepted for compatibility, deprecated, no effect.

Behaviour: waits for ``load_controller``, ``switch_controller`` and ``unload_controller``; loads the
controllers in order (a failed load is logged and skipped); unless ``--stopped``, starts every loaded
one in a single STRICT switch (start_asap false, timeout 0); then spins.

On shutdown it cleans up **only its own controllers, only as far as they still exist**, and never
hangs (the long-standing upstream complaints ros_control#160/#195/#300/#304): it asks
``list_controllers`` which of the controllers *it loaded* are still loaded, stops (STRICT) those of
them that are running, and unloads them in reverse order.  Every call is bounded; the whole clean-up
takes at most :attr:`Spawner.SHUTDOWN_BUDGET` seconds, and a manager that is already gone is reported
with one warning.  A shutdown that arrives while a load or start request is in flight (roslaunch's
SIGINT can come at any moment) first waits for that request's answer, so a controller loaded at that
moment is taken down too; SIGINT/SIGTERM run the clean-up in a thread of its own, never inside the
signal handler (see :mod:`._signals`).

Exit status: 0 after a normal shutdown; 1 when the manager's services did not appear within
``--timeout`` (upstream exits 0 there, which hides the failure from scripts).
"""
from __future__ import annotations

import argparse
import functools
import os
import threading
import time
from typing import Any, Callable, Dict, List, Optional, Sequence

import yaml

from rospy_control.adapter.tools._signals import shutdown_on_signals
from rospy_control.adapter.tools.controller_manager_interface import (
    STRICT,
    ControllerManagerClient,
    ControllerManagerUnavailable,
    call_with_timeout,
)
from rospy_control.log import get_logger

logger = get_logger("rospy_control.spawner")

__all__ = ["Spawner", "parse_args", "expand_controllers", "main"]

#: Services the spawner needs before it does anything (as upstream).
REQUIRED_SERVICES = ("load_controller", "switch_controller", "unload_controller")


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the spawner's arguments (ROS remapping arguments already removed)."""
    parser = argparse.ArgumentParser(prog="spawner", description="Controller spawner")
    parser.add_argument("--stopped", action="store_true", help="loads controllers, but does not start them")
    parser.add_argument("--wait-for", metavar="topic", dest="wait_for",
                        help='does not load or start controllers until it hears "True" on a topic (Bool)')
    parser.add_argument("--namespace", metavar="ns", help="namespace of the controller_manager services")
    parser.add_argument("--timeout", metavar="T", type=float, default=30.0,
                        help="how long to wait for controller_manager services when starting up [s] "
                             "(default: 30); <= 0 waits forever")
    parser.add_argument("--no-timeout", action="store_true",
                        help="wait for the controller_manager services indefinitely (same as --timeout 0)")
    parser.add_argument("--shutdown-timeout", metavar="T", type=float, default=None,
                        help="DEPRECATED, has no effect (the shutdown is always bounded)")
    parser.add_argument("controllers", metavar="controller", nargs="+",
                        help="controllers to load (names, or YAML files whose top-level keys are "
                             "controllers)")
    return parser.parse_args(list(argv))


def expand_controllers(args: Sequence[str], set_param: Callable[[str, Any], None],
                       exists: Callable[[str], bool] = os.path.isfile) -> List[str]:
    """Controller names from the command line: names as they are; for an existing YAML file, upload
    each top-level key with ``set_param(key, value)`` (relative to the spawner's namespace) and use
    the keys as names, in file order.  A file that is not a YAML mapping is logged and skipped."""
    names: List[str] = []
    for arg in args:
        if not exists(arg):
            names.append(arg)
            continue
        try:
            with open(arg, "r", encoding="utf-8") as stream:
                content = yaml.safe_load(stream)
        except (OSError, yaml.YAMLError) as err:
            logger.error("Controller Spawner: could not read controller file '%s': %s", arg, err)
            continue
        if not isinstance(content, dict):
            logger.error("Controller Spawner: '%s' must contain a mapping of controller names to "
                         "their configuration, got %s", arg, type(content).__name__)
            continue
        for key, value in content.items():
            set_param(str(key), value)
            names.append(str(key))
    return names


class Spawner:
    """The spawner's logic, independent of rospy's process-level set-up (see the module docstring).

    :param client: client of the controller manager.
    :param is_shutdown: returns True once the node shuts down.
    :param sim_time_waiting: returns True while ``/use_sim_time`` is set and ``/clock`` is still 0.
    """

    #: Total seconds the clean-up may take (roslaunch escalates to SIGTERM after 15 s).
    SHUTDOWN_BUDGET = 10.0
    #: Seconds between "Waiting for /clock" checks.
    CLOCK_POLL = 1.0

    def __init__(self, client: ControllerManagerClient, is_shutdown: Callable[[], bool] = lambda: False,
                 sim_time_waiting: Callable[[], bool] = lambda: False) -> None:
        self.client = client
        self.is_shutdown = is_shutdown
        self.sim_time_waiting = sim_time_waiting
        #: Controllers this spawner loaded, in order.
        self.loaded: List[str] = []
        #: Guards ``loaded``, ``_cleaned`` and ``_abandoned``.
        self._lock = threading.Lock()
        #: Held while a load/start request is in flight; :meth:`shutdown` waits for it (bounded).
        self._request = threading.Lock()
        #: The clean-up has begun: no new request starts.
        self._cleaned = False
        #: The clean-up stopped waiting for an in-flight request (the manager did not answer within
        #: the budget): that request's controllers are taken down by whoever made it.
        self._abandoned = False

    # -- start-up ---------------------------------------------------------------------------------
    def wait_for_manager(self, timeout: Optional[float]) -> bool:
        """Wait for the three required services; False (with upstream's warning) if they do not
        appear within ``timeout`` seconds (``None`` = forever) or the node shuts down."""
        for service in REQUIRED_SERVICES:
            name = self.client.service_name(service)
            logger.info("Controller Spawner: Waiting for service %s", name)
            while True:
                try:
                    self.client.transport.wait_for_service(name, timeout)
                    break
                except ControllerManagerUnavailable:
                    if self.is_shutdown():
                        return False
                    if self.sim_time_waiting():
                        logger.info("Waiting for /clock")
                        continue
                    logger.warning("Controller Spawner couldn't find the expected controller_manager ROS "
                                   "interface.")
                    return False
        return True

    def load(self, names: Sequence[str]) -> List[str]:
        """Load ``names`` in order; failures are logged and skipped.  Returns what was loaded.

        Stops early once the clean-up has begun (:meth:`shutdown`, from a signal or ``rosnode
        kill``): nothing is loaded after it, and what is loaded before it is torn down by it.
        """
        for name in names:
            if self.is_shutdown():
                break
            with self._request:
                if self._cleaned:
                    break
                logger.info("Loading controller: %s", name)
                try:
                    ok = self.client.load_controller(name)
                except ControllerManagerUnavailable as err:
                    logger.error("Controller Spawner: lost the controller manager while loading '%s': %s",
                                 name, err)
                    break
                if not ok:
                    logger.error("Failed to load %s", name)
                    continue
                with self._lock:
                    late = self._abandoned
                    if not late:
                        self.loaded.append(name)
            if late:  # the clean-up gave up waiting for this load: do not leave it behind
                self._take_down([name], time.monotonic() + self.SHUTDOWN_BUDGET)
                break
        logger.info("Controller Spawner: Loaded controllers: %s", ", ".join(self.loaded))
        return list(self.loaded)

    def start(self) -> bool:
        """Start everything loaded in one STRICT switch (not once the clean-up has begun)."""
        with self._request:
            with self._lock:
                names = list(self.loaded)
                if self._cleaned:
                    return False
            if not names:
                return True
            try:
                ok = self.client.switch_controller(names, [], STRICT, False, 0.0)
            except ControllerManagerUnavailable as err:
                logger.error("Failed to start controllers: %s (%s)", ", ".join(names), err)
                return False
            with self._lock:
                late = self._abandoned
        if ok:
            logger.info("Started controllers: %s", ", ".join(names))
        else:
            logger.error("Failed to start controllers: %s", ", ".join(names))
        if late:  # the clean-up gave up waiting for this switch and may have missed its effect
            self._take_down(names, time.monotonic() + self.SHUTDOWN_BUDGET)
        return ok

    # -- shutdown ---------------------------------------------------------------------------------
    def shutdown(self) -> None:
        """Stop and unload what this spawner loaded and is still loaded; bounded; runs once.

        Waits (within :attr:`SHUTDOWN_BUDGET`) for a load or start request in flight, so that its
        outcome is known before listing what to take down.
        """
        with self._lock:
            if self._cleaned:
                return
            self._cleaned = True
        deadline = time.monotonic() + self.SHUTDOWN_BUDGET
        wait = self.SHUTDOWN_BUDGET / 2  # the other half is for the take-down itself
        got = self._request.acquire(timeout=wait)
        try:
            with self._lock:
                if not got:
                    self._abandoned = True
                mine = list(self.loaded)
            if not got:
                logger.warning("Controller Spawner: a request to the controller manager is still "
                               "unanswered after %.1f s; taking down %s", wait, mine)
            if not mine:
                return
            logger.info("Shutting down spawner. Stopping and unloading controllers...")
            self._take_down(mine, deadline)
        finally:
            if got:
                self._request.release()

    def _take_down(self, mine: Sequence[str], deadline: float) -> None:
        """Stop (STRICT) those of ``mine`` that are running, then unload those still loaded, in
        reverse order; every call bounded by ``deadline``; never raises."""
        try:
            states: Dict[str, str] = {
                s.name: s.state
                for s in self._bounded(lambda: self.client.list_controllers(wait=False), deadline,
                                       "list_controllers")}
        except Exception as err:  # noqa: BLE001 - the manager may be gone in any way; never raise here
            logger.warning("Controller Spawner couldn't reach controller_manager to take down controllers "
                           "%s: %s", list(mine), err)
            return
        still_loaded = [n for n in mine if n in states]
        gone = [n for n in mine if n not in states]
        if gone:
            logger.info("Controllers %s are not loaded any more; leaving them alone", gone)
        running = [n for n in still_loaded if states[n] == "running"]
        if running:
            logger.info("Stopping controllers: %s", ", ".join(running))
            try:
                ok = self._bounded(
                    lambda: self.client.switch_controller([], running, STRICT, False, 0.0, wait=False),
                    deadline, "switch_controller")
                if not ok:
                    logger.warning("Controller Spawner could not stop %s", running)
            except Exception as err:  # noqa: BLE001
                logger.warning("Controller Spawner couldn't stop %s: %s", running, err)
                return
        self._unload_quietly(list(reversed(still_loaded)), deadline)

    def _unload_quietly(self, names: Sequence[str], deadline: float) -> None:
        for name in names:
            try:
                ok = self._bounded(functools.partial(self.client.unload_controller, name, wait=False),
                                   deadline, "unload_controller")
            except Exception as err:  # noqa: BLE001
                logger.warning("Controller Spawner couldn't unload '%s': %s", name, err)
                return
            if ok:
                logger.info("Unloaded %s", name)
            else:
                logger.warning("Controller Spawner could not unload '%s'", name)

    @staticmethod
    def _bounded(func: Callable[[], Any], deadline: float, what: str) -> Any:
        remaining = deadline - time.monotonic()
        if remaining <= 0.0:
            raise ControllerManagerUnavailable(f"no time left for {what}")
        return call_with_timeout(func, remaining, what)


def _sim_time_waiting() -> bool:
    import rospy

    try:
        return bool(rospy.get_param("/use_sim_time", False)) and rospy.get_rostime().is_zero()
    except Exception:  # noqa: BLE001 - master unreachable: not waiting for a clock
        return False


def _wait_for_topic(topic: str, timeout: Optional[float]) -> bool:
    """Block until ``topic`` (std_msgs/Bool) says True; False if the node shuts down first."""
    import rospy
    from std_msgs.msg import Bool

    heard = threading.Event()
    true = threading.Event()

    def callback(msg: Bool) -> None:
        heard.set()
        if msg.data:
            true.set()

    subscriber = rospy.Subscriber(topic, Bool, callback)
    started = time.monotonic()
    warned = False
    try:
        while not true.wait(0.05):
            if rospy.is_shutdown():
                return False
            if not warned and not heard.is_set() and timeout and time.monotonic() - started > timeout:
                warned = True
                logger.warning('Controller Spawner hasn\'t heard anything from its "wait for" topic (%s)',
                               topic)
    finally:
        subscriber.unregister()
    return True


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of ``scripts/spawner``; returns the exit status."""
    import sys

    import rospy

    args = parse_args(rospy.myargv(sys.argv)[1:] if argv is None else argv)
    rospy.init_node("spawner", anonymous=True, disable_signals=True)
    shutdown_on_signals()  # the clean-up must not run inside a signal handler (see _signals)
    if args.shutdown_timeout is not None:
        logger.warning("Controller Spawner: --shutdown-timeout is deprecated and has no effect: the "
                       "shutdown is always bounded (%.0f s)", Spawner.SHUTDOWN_BUDGET)
    timeout: Optional[float] = args.timeout
    if args.no_timeout or (timeout is not None and timeout <= 0.0):
        timeout = None
    client = ControllerManagerClient(args.namespace or "", timeout)
    spawner = Spawner(client, rospy.is_shutdown, _sim_time_waiting)

    if not spawner.wait_for_manager(timeout):
        return 0 if rospy.is_shutdown() else 1
    if args.wait_for and not _wait_for_topic(args.wait_for, timeout):
        return 0
    rospy.on_shutdown(spawner.shutdown)
    names = expand_controllers(args.controllers, rospy.set_param)
    spawner.load(names)
    if rospy.is_shutdown():
        return 0
    if not args.stopped:
        spawner.start()
    rospy.spin()
    return 0
