"""Composition of a :class:`~rospy_control.middleware.Middleware` with whatever answers on its buses.

The driver's code path (middleware, bus, devices, robot_hw, ...) never decides whether a channel is
simulated: it opens the buses it is given.  The decision sits here, outside it, for the public entry
points that take ``simulate=`` -- :meth:`MiddlewareRobotHW.from_config(..., simulate=...)
<rospy_control.robot_hw.MiddlewareRobotHW.from_config>` and the RobotHW parameter ``simulate`` read by
its ``init()`` -- which call :func:`compose_middleware` when they are used.  The driver node, the sim
node, ``hw_check --sim``, the benchmarks and the tests compose the same way with
:class:`rospy_control.simulator.SimulatedRobot` directly.
"""
from __future__ import annotations

import weakref
from typing import Any, Optional, Tuple

from rospy_control.hardware_config.document import parse_hardware_xml
from rospy_control.middleware import Middleware

__all__ = ["compose_middleware", "give_urdf", "peer_of"]

_PEERS: "weakref.WeakKeyDictionary[Middleware, Any]" = weakref.WeakKeyDictionary()


def compose_middleware(source: str, simulate: Optional[bool] = None, urdf: Optional[str] = None,
                       urdf_source: str = "robot_description") -> Tuple[Middleware, Any]:
    """``(middleware, simulated robot or None)`` of the hardware XML ``source`` (path or text).

    :param simulate: ``None`` = as each channel's ``<simulation>`` says, ``True`` = every channel,
        ``False`` = none.  The simulated devices run in this process on ``virtual`` buses and feel the
        weights of ``urdf`` (text; or later, :func:`give_urdf`); the middleware's shutdown stops them.
    :raises ConfigError: on any configuration problem (also of a ``<simulation>`` element).
    """
    from rospy_control.simulator.robot import SimulatedRobot  # the peer, composed only here
    mw = Middleware(parse_hardware_xml(source))   # the driver's checks first
    robot = SimulatedRobot(mw.config, simulate=simulate, urdf=urdf, urdf_source=urdf_source)
    if not robot.simulators():
        return mw, None
    mw.set_buses(robot.buses())
    _PEERS[mw] = robot
    return mw, robot


def give_urdf(peer: Any, urdf: str, urdf_source: str = "robot_description") -> None:
    """Give the simulated ``peer`` of :func:`compose_middleware` (None: nothing to do) the URDF text:
    its actuators feel the links' weights."""
    if peer is not None and urdf:
        peer.attach_gravity(urdf, urdf_source)


def peer_of(middleware: Middleware) -> Any:
    """The simulated peer :func:`compose_middleware` composed ``middleware`` with (None: none)."""
    return _PEERS.get(middleware)
