"""Middleware + simulated peer in one call, for tests and benchmarks.

:func:`simulated_middleware` composes a :class:`~rospy_control.middleware.Middleware` with the
:class:`~rospy_control.simulator.SimulatedRobot` of the same hardware XML (as the driver node does)
and :func:`sim_of` finds that simulated robot again, for its fault switches and command record::

    mw = simulated_middleware(xml)                 # the XML's <simulation> decides; simulate=True: all
    mw.start()
    sim_of(mw).set_fault("elbow_motor", "silent")  # also command_stats(), bus_off(), firmware_of() ...

``sim_of`` also takes a :class:`~rospy_control.robot_hw.MiddlewareRobotHW` built with
``from_config(..., simulate=...)`` (its ``simulator``).
"""
from __future__ import annotations

import weakref
from typing import Any, Optional

from rospy_control.exceptions import HardwareError
from rospy_control.hardware_config.document import HardwareInfo, parse_hardware_xml
from rospy_control.middleware import Middleware
from rospy_control.simulator import SimulatedRobot

__all__ = ["simulated_middleware", "sim_of"]

_PEERS: "weakref.WeakKeyDictionary[Middleware, SimulatedRobot]" = weakref.WeakKeyDictionary()


def simulated_middleware(source: Any, simulate: Optional[bool] = None, urdf: Optional[str] = None,
                         urdf_source: str = "robot_description", process_key: Optional[str] = None,
                         wait: float = 10.0) -> Middleware:
    """A middleware of ``source`` (XML path or text, or a parsed description) whose simulated channels
    talk to a :class:`SimulatedRobot` (arguments: see there and :meth:`SimulatedRobot.buses`)."""
    info = source if isinstance(source, HardwareInfo) else parse_hardware_xml(source)
    mw = Middleware(info)   # the driver's checks first; the simulator reads the same records
    robot = SimulatedRobot(mw.config, simulate=simulate, urdf=urdf, urdf_source=urdf_source)
    mw.set_buses(robot.buses(process_key, wait))
    _PEERS[mw] = robot
    return mw


def sim_of(owner: Any) -> SimulatedRobot:
    """The simulated robot of a middleware from :func:`simulated_middleware`, or of a RobotHW composed
    with ``simulate``.  :raises HardwareError: it has none."""
    sim = getattr(owner, "simulator", None)
    if isinstance(sim, SimulatedRobot):
        return sim
    if isinstance(owner, Middleware):
        if owner in _PEERS:
            return _PEERS[owner]
        from rospy_control.composition import peer_of
        composed = peer_of(owner)
        if composed is not None:
            return composed
    raise HardwareError(f"{type(owner).__name__} has no simulated peer (build it with "
                        "rospy_control.testing.sim_rig.simulated_middleware)")
