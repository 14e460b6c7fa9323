"""The simulator node: the simulated firmware of a hardware XML in a process of its own.

``scripts/sim_node`` only calls :func:`main`; ``launch/bringup.launch`` starts it (as ``sim``) next to
the driver with ``sim:=true`` (and ``sim_process:=true``, the default).  It runs every simulated
channel's :class:`~rospy_control.simulator.SimulatedFirmware` on that channel's
``udp_multicast`` bus (:mod:`rospy_control.simulator.process`), so the driver's frames reach it
through their hardware code path, and a stall of the driver process leaves the "motors" running,
holding their last command, as real ones do.

Private parameters:

* ``~hardware_config`` (string, **required**) -- the hardware XML (path or text), the driver's
  (``~configure``, its former name, still works with a deprecation warning).
* ``~sim`` (bool, default true) -- true: simulate every channel (as the driver's ``~sim``); false:
  only the channels whose ``<simulation>`` is enabled.
* ``~bus_key`` (string, default ``<ROS master port><namespace>``) -- must equal the driver's
  ``~sim_bus_key`` (see :mod:`rospy_control.simulator.bus`).
* ``~diagnostics_period`` (double, s, default 1.0) -- ``/diagnostics`` period; 0 disables.

Read too: ``robot_description`` (the URDF, optional): the simulated motors feel the static gravity
torque of its links at the current pose (:mod:`rospy_control.simulator.gravity`).

Services: ``~set_fault`` (rospy_control/SetSimFault: switch a simulated fault on or off; ``unit``
may name a channel for the bus-wide ``bus_errors`` and ``bus_off``), ``~reset_command_stats``
(std_srvs/Trigger) and ``~command_stats`` (rospy_control/SimCommandStats: per motor the frames and
command frames it received, its last position set-point and largest step; per channel whether the
bus is off).  The driver's ``~sim/set_fault`` and ``~sim/reset_command_stats`` forward to them; with
the in-process simulator the driver offers all three itself.

Published: ``/diagnostics`` with a ``<node>: simulator`` status (per motor the command frames
received and the largest position step between two consecutive command frames) and a
``<node>: simulator bus`` status (the multicast group and port of each channel, frames handled,
errors of the firmware threads).

Exit codes: 0 clean shutdown, 1 configuration error, 2 the bus cannot be opened (the driver then
falls back to its in-process simulator after ``~sim_wait``).
"""
from __future__ import annotations

import sys
from typing import Any, List, Optional, Tuple

import rosgraph
import rospy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from std_srvs.srv import Trigger, TriggerResponse

from rospy_control.adapter.diagnostics import DiagnosticsThread, DriverDiagnostics
from rospy_control.adapter.sim_switches import command_stats, set_bus_off
from rospy_control.adapter.paths import package_root
from rospy_control.adapter.startup import start_node
from rospy_control.control_loop.driver_config import (
    _as_bool, _non_negative, hardware_config_param, resolve_hardware_config,
)
from rospy_control.exceptions import ConfigError
from rospy_control.log import get_logger
from rospy_control.simulator.process import SimulatorHost, apply_sim_fault
from rospy_control.simulator.bus import default_bus_key
from rospy_control.srv import SetSimFault, SetSimFaultResponse, SimCommandStats, SimCommandStatsResponse

__all__ = ["SimDiagnostics", "main"]

logger = get_logger(__name__)


class SimDiagnostics(DriverDiagnostics):
    """The simulator node's ``DiagnosticArray``: the ``simulator`` and ``simulator bus`` statuses."""

    def __init__(self, host: SimulatorHost, prefix: str) -> None:
        super().__init__(host.robot.config, prefix, simulator=host.robot)
        self.host = host

    def build(self, stamp: Any = None) -> DiagnosticArray:
        msg = DiagnosticArray()
        if stamp is not None:
            msg.header.stamp = stamp
        sim = self.simulator_status()
        if sim is not None:
            msg.status.append(sim)
        errors = self.host.errors()
        values = []
        for name, address in self.host.addresses.items():
            values.append(KeyValue(key=f"{name} bus", value=f"{address.group} port {address.port}"))
            values.append(KeyValue(key=f"{name} frames handled",
                                   value=str(self.host.simulators[name].frames_handled)))
            firmware = self.host.simulators[name]
            values.append(KeyValue(key=f"{name} frames dropped (waited > "
                                       f"{1000.0 * firmware.STALE_AFTER:.0f} ms: host too busy)",
                                   value=str(firmware.frames_stale)))
        for name, err in errors.items():
            values.append(KeyValue(key=f"{name} error", value=err))
        msg.status.append(DiagnosticStatus(
            level=DiagnosticStatus.WARN if errors else DiagnosticStatus.OK, name=self._name("simulator bus"),
            message=("errors: " + "; ".join(errors.values())) if errors else f"bus key '{self.host.key}'",
            hardware_id=self.mw.name, values=values))
        return msg


def sim_fault_services(robot: Any, prefix: str) -> List[Any]:
    """``<prefix>set_fault`` (rospy_control/SetSimFault), ``<prefix>reset_command_stats``
    (std_srvs/Trigger) and ``<prefix>command_stats`` (rospy_control/SimCommandStats) over the simulated
    firmware of the :class:`~rospy_control.simulator.SimulatedRobot` ``robot`` (the simulator node's
    own, or the driver's in-process one)."""

    def set_fault(req: Any) -> SetSimFaultResponse:
        if req.fault == "bus_off":
            ok, text = set_bus_off(robot, req.unit, bool(req.enable))
        else:
            ok, text = apply_sim_fault(robot, req.unit, req.fault, bool(req.enable), req.value)
        if ok:
            logger.warning("sim: %s", text)
        return SetSimFaultResponse(success=ok, message=text)

    def reset_stats(_req: Any) -> TriggerResponse:
        robot.reset_command_stats()
        return TriggerResponse(success=True, message="command statistics of the simulated motors reset")

    def get_stats(req: Any) -> SimCommandStatsResponse:
        try:
            table = command_stats(robot, req.unit)
        except Exception as err:  # noqa: BLE001 - a bad request is answered, not raised
            return SimCommandStatsResponse(success=False, message=str(err))
        return SimCommandStatsResponse(success=True, message=f"{len(table['units'])} simulated motor(s)",
                                       **table)

    return [rospy.Service(prefix + "set_fault", SetSimFault, set_fault),
            rospy.Service(prefix + "reset_command_stats", Trigger, reset_stats),
            rospy.Service(prefix + "command_stats", SimCommandStats, get_stats)]


def _start() -> Tuple[Any, float]:
    """Read the parameters, build and start the simulator host: ``(host, diagnostics period)``."""
    deprecations: List[str] = []
    configure = hardware_config_param(lambda name, default: rospy.get_param("~" + name, default),
                                      deprecations)
    for text in deprecations:
        rospy.logwarn("sim: %s", text)
    configure = resolve_hardware_config(configure, package_root())
    if not isinstance(configure, str) or not configure.strip():
        raise ConfigError("private parameter ~hardware_config (formerly ~configure) is not set: give "
                          "the hardware XML path", "~hardware_config")
    simulate = _as_bool("~sim", rospy.get_param("~sim", True))
    key = str(rospy.get_param("~bus_key", "") or "")
    if not key:
        key = default_bus_key(rosgraph.get_master_uri(), rospy.get_namespace())
    period = _non_negative("~diagnostics_period", rospy.get_param("~diagnostics_period", 1.0))
    # the URDF (robot_description, as the driver reads it) gives the motors their links' weights
    urdf = rospy.get_param("robot_description", None)
    host = SimulatorHost.from_xml(configure, key, simulate=True if simulate else None,
                                  urdf=urdf if isinstance(urdf, str) else None,
                                  urdf_source=rospy.resolve_name("robot_description"))
    host.start()
    return host, period


def main(argv: Optional[List[str]] = None) -> int:
    """Run the simulator node until shutdown (parameters and exit codes: module docstring)."""
    rospy.init_node("sim", argv=argv if argv is not None else sys.argv)
    services: List[rospy.Service] = []
    diagnostics = None
    started, code = start_node("sim", _start, "cannot run the simulator process (the driver falls back to "
                               "its in-process simulator)", "bus error")
    if started is None:
        return code
    host, period = started
    robot = host.robot
    try:
        services.extend(sim_fault_services(robot, "~"))
        pub = rospy.Publisher("/diagnostics", DiagnosticArray, queue_size=10)
        if period > 0.0:
            diagnostics = DiagnosticsThread(SimDiagnostics(host, rospy.get_name()), pub.publish,
                                            rospy.Time.now, period)
            diagnostics.start()
        logger.info("sim: simulated firmware of '%s' running; faults: rosservice call %s", robot.name,
                    rospy.resolve_name("~set_fault"))
        rospy.spin()
    finally:
        if diagnostics is not None:
            diagnostics.stop()
        for service in services:
            service.shutdown("sim shutting down")
        host.stop()
    return 0
