"""rospy_control.controller_interface: controller base classes and the node-handle facade.

* :class:`ControllerBase` / :class:`ControllerState` -- the guarded life cycle (``controller_base``).
* :class:`Controller` (one hardware interface) and :class:`MultiInterfaceController` (several,
  optionally optional) -- resource claiming through the interfaces (``controller``).
* :class:`NodeHandle` -- the ROS facade handed to controllers (params, topics, services, actions,
  time); the rospy implementation lives in :mod:`rospy_control.adapter`, an in-memory one for tests
  in :mod:`rospy_control.testing`.
* :class:`RealtimePublisher` -- non-blocking publishing from the control loop.
"""
from __future__ import annotations

from rospy_control.controller_interface.controller import Controller, MultiInterfaceController
from rospy_control.controller_interface.controller_base import ControllerBase, ControllerState
from rospy_control.controller_interface.node_handle import (
    RAISE,
    ActionServer,
    NodeHandle,
    NodeHandleError,
    Publisher,
    ServerGoalHandle,
    ServiceServer,
    Subscriber,
)
from rospy_control.controller_interface.realtime_publisher import RealtimePublisher

__all__ = [
    "ActionServer", "Controller", "ControllerBase", "ControllerState", "MultiInterfaceController",
    "NodeHandle", "NodeHandleError", "Publisher", "RAISE", "RealtimePublisher", "ServerGoalHandle",
    "ServiceServer", "Subscriber",
]
