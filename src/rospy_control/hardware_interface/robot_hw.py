"""``InterfaceManager`` and ``RobotHW`` (``hardware_interface/robot_hw.h``), ``ControllerInfo``.

Real-time split, as in ros_control:

* non-real-time: :meth:`RobotHW.init`, :meth:`RobotHW.check_for_conflict`,
  :meth:`RobotHW.prepare_switch` (may veto a switch);
* real-time (control loop, must not block): :meth:`RobotHW.read`, :meth:`RobotHW.do_switch`,
  :meth:`RobotHW.switch_result`, :meth:`RobotHW.write`.

Deviation from ros_control, on purpose: :meth:`InterfaceManager.get_interface_resources` reads the
interface's handle names when asked, not a snapshot taken at ``register_interface`` time, so handles
registered after the interface are not forgotten.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Dict, Iterable, List, Optional, Sequence, Set, Tuple, Type, TypeVar, Union

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface.resource_manager import HardwareInterface, ResourceManager
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["InterfaceResources", "ControllerInfo", "SwitchState", "InterfaceManager", "RobotHW"]

T = TypeVar("T", bound=HardwareInterface)


@dataclass
class InterfaceResources:
    """Resources a controller claimed through one interface.

    :ivar hardware_interface: the interface's ``TYPE_NAME``.
    :ivar resources: claimed resource names.
    """

    hardware_interface: str
    resources: Set[str] = field(default_factory=set)


@dataclass
class ControllerInfo:
    """What the controller manager knows about one controller (``hardware_interface::ControllerInfo``)."""

    name: str
    type: str = ""
    claimed_resources: List[InterfaceResources] = field(default_factory=list)

    def all_resources(self) -> Set[str]:
        """Union of the resources claimed through every interface."""
        out: Set[str] = set()
        for claimed in self.claimed_resources:
            out.update(claimed.resources)
        return out


class SwitchState(enum.Enum):
    """Result of :meth:`RobotHW.switch_result`."""

    DONE = 0
    ONGOING = 1
    ERROR = 2


def _type_name(iface: Union[str, type, HardwareInterface]) -> str:
    if isinstance(iface, str):
        return iface
    return iface.TYPE_NAME  # type: ignore[union-attr]


class InterfaceManager:
    """Holds hardware interfaces by ``TYPE_NAME`` and merges those of registered sub-managers."""

    def __init__(self) -> None:
        self._interfaces: Dict[str, HardwareInterface] = {}
        self._managers: List[InterfaceManager] = []
        self._combined: Dict[str, Tuple[tuple, HardwareInterface]] = {}

    def register_interface(self, iface: HardwareInterface) -> None:
        """Register ``iface`` under its ``TYPE_NAME``; an existing one is replaced with a warning."""
        if not isinstance(iface, HardwareInterface):
            raise HardwareInterfaceError(
                f"Cannot register {iface!r}: it is not a hardware_interface.HardwareInterface."
            )
        name = iface.TYPE_NAME
        if name in self._interfaces:
            logger.warning("Replacing previously registered interface '%s'.", name)
        self._interfaces[name] = iface

    def register_interface_manager(self, manager: "InterfaceManager") -> None:
        """Make ``manager``'s interfaces visible through :meth:`get` of this one."""
        self._managers.append(manager)

    def _collect(self, type_name: str) -> List[HardwareInterface]:
        found: List[HardwareInterface] = []
        own = self._interfaces.get(type_name)
        if own is not None:
            found.append(own)
        for manager in self._managers:
            sub = manager.get(type_name)
            if sub is not None:
                found.append(sub)
        return found

    def get(self, iface: Union[str, Type[T]]) -> Optional[T]:
        """The interface of the given class (or ``TYPE_NAME``), ``None`` if absent.

        When this manager and its sub-managers hold several interfaces of that type, a combined
        interface with all their handles is built (and cached while the parts are unchanged); that is
        only possible for :class:`ResourceManager` interfaces, otherwise ``None`` is returned with an
        error log, as ros_control does.
        """
        type_name = _type_name(iface)
        found = self._collect(type_name)
        if not found:
            return None
        if len(found) == 1:
            return found[0]  # type: ignore[return-value]
        if not all(isinstance(i, ResourceManager) for i in found):
            logger.error("Cannot combine several '%s' interfaces: they are not resource managers.", type_name)
            return None
        key = tuple((id(i), len(i.get_names())) for i in found)  # type: ignore[attr-defined]
        cached = self._combined.get(type_name)
        if cached is not None and cached[0] == key:
            return cached[1]  # type: ignore[return-value]
        combined = type(found[0]).combine(found)  # type: ignore[attr-defined]
        self._combined[type_name] = (key, combined)
        return combined

    def get_names(self) -> List[str]:
        """``TYPE_NAME`` of every interface of this manager and its sub-managers, sorted."""
        names = set(self._interfaces)
        for manager in self._managers:
            names.update(manager.get_names())
        return sorted(names)

    def get_interface_resources(self, type_name: Union[str, type]) -> List[str]:
        """Resource names of interface ``type_name`` across this manager and sub-managers, sorted."""
        type_name = _type_name(type_name)
        names: Set[str] = set()
        own = self._interfaces.get(type_name)
        if isinstance(own, ResourceManager):
            names.update(own.get_names())
        for manager in self._managers:
            names.update(manager.get_interface_resources(type_name))
        return sorted(names)


class RobotHW(InterfaceManager):
    """Base class of robot hardware abstractions (``hardware_interface::RobotHW``).

    Subclasses register interfaces (usually in ``__init__`` or :meth:`init`) and override
    :meth:`read` / :meth:`write`, and for mode switching :meth:`prepare_switch`, :meth:`do_switch`
    and :meth:`switch_result`.
    """

    def init(self, root_nh, robot_hw_nh) -> bool:
        """Non-real-time initialisation from the node handles; default: nothing, success."""
        return True

    def read(self, time: float, period: float) -> None:
        """Read the hardware state into the handles' data (real-time)."""

    def write(self, time: float, period: float) -> None:
        """Send the handles' commands to the hardware (real-time)."""

    def check_for_conflict(self, info: Sequence[ControllerInfo]) -> bool:
        """True if the controllers in ``info`` cannot run together.

        Default rule: a resource name claimed more than once -- by two controllers, or by one
        controller through two interfaces -- is a conflict, whatever the interface types.
        Each conflicting resource is logged ("Resource conflict on [x]. Controllers = [a, b]").
        """
        users: Dict[str, List[str]] = {}
        for controller in info:
            for claimed in controller.claimed_resources:
                for resource in claimed.resources:
                    users.setdefault(resource, []).append(controller.name)
        conflict = False
        for resource in sorted(users):
            names = users[resource]
            if len(names) > 1:
                logger.warning("Resource conflict on [%s]. Controllers = [%s]", resource, ", ".join(names))
                conflict = True
        return conflict

    def prepare_switch(self, start_list: Sequence[ControllerInfo],
                       stop_list: Sequence[ControllerInfo]) -> bool:
        """Non-real-time check/preparation of a switch; False vetoes it.  Default: True."""
        return True

    def do_switch(self, start_list: Sequence[ControllerInfo], stop_list: Sequence[ControllerInfo]) -> None:
        """Real-time part of a switch (e.g. change motor modes).  Default: nothing."""

    def switch_result(self, info: Optional[ControllerInfo] = None) -> SwitchState:
        """State of the last switch, globally or for one controller.  Default: DONE."""
        return SwitchState.DONE


def claims_of(infos: Iterable[ControllerInfo]) -> Dict[str, List[str]]:
    """resource → names of the controllers claiming it (helper for custom conflict rules)."""
    users: Dict[str, List[str]] = {}
    for controller in infos:
        for resource in controller.all_resources():
            users.setdefault(resource, []).append(controller.name)
    return users
