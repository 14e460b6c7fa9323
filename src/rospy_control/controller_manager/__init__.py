"""rospy_control.controller_manager: the controller manager, ROS-free core.

* :class:`ControllerManager` -- load / unload / switch / list / reload and the real-time
  :meth:`~ControllerManager.update` (see :mod:`.controller_manager` for every rule).
* :data:`CONTROLLER_TYPES` -- the registry of controller types (ros_controllers' spellings, lazy).
* Result types mirroring ``controller_manager_msgs``: :class:`Result`, :class:`ControllerDescription`,
  :class:`HardwareInterfaceResources`, :class:`ControllerStatistics`; :data:`STRICT`, :data:`BEST_EFFORT`
  (in :mod:`.records`).

The rospy service layer lives in :mod:`rospy_control.adapter`.
"""
from __future__ import annotations

from rospy_control.controller_manager.controller_manager import ControllerManager
from rospy_control.controller_manager.controller_types import BASE_CLASS_NAME, CONTROLLER_TYPES
from rospy_control.controller_manager.records import (
    BEST_EFFORT,
    STRICT,
    ControllerDescription,
    ControllerSpec,
    ControllerStatistics,
    HardwareInterfaceResources,
    Result,
)

__all__ = [
    "BASE_CLASS_NAME", "BEST_EFFORT", "CONTROLLER_TYPES", "ControllerDescription", "ControllerManager",
    "ControllerSpec", "ControllerStatistics", "HardwareInterfaceResources", "Result", "STRICT",
]
