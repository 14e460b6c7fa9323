"""``InterfaceManager`` and ``RobotHW`` (``hardware_interface/robot_hw.h``), ``ControllerInfo``.

Real-time split, as in ros_control:

* non-real-time: :meth:`RobotHW.init`, :meth:`RobotHW.check_for_conflict`,
  :meth:`RobotHW.prepare_switch` (may veto a switch);
* real-time (control loop, must not block): :meth:`RobotHW.read`, :meth:`RobotHW.do_switch`,
  :meth:`RobotHW.switch_result`, :meth:`RobotHW.write`.

Beyond ros_control, a RobotHW declares the optional capabilities the driver node uses, each with a
safe default so a RobotHW of your own overrides only what it has (``docs/writing_a_robot_hw.md``):
:meth:`RobotHW.start` / :meth:`RobotHW.shutdown` (lifecycle), :meth:`RobotHW.faulted_joints`,
:meth:`RobotHW.faulted_units`, :meth:`RobotHW.reset_faults` (``~reset_faults``),
:meth:`RobotHW.consume_reset_request` (controllers restart after a recovery),
:meth:`RobotHW.limit_command_steps` (the position-step cap on the wire),
:meth:`RobotHW.not_ready_joints` / :meth:`RobotHW.is_ready` (readiness), :meth:`RobotHW.status`
(``/diagnostics``) and :meth:`RobotHW.middlewares` (the CAN middlewares whose units the node reports).

Deviation from ros_control, on purpose: :meth:`InterfaceManager.get_interface_resources` reads the
interface's handle names when asked, not a snapshot taken at ``register_interface`` time, so handles
registered after the interface are not forgotten.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Sequence, Set, Tuple, Type, TypeVar, Union

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.hardware_interface.resource_manager import HardwareInterface, ResourceManager
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["InterfaceResources", "ControllerInfo", "SwitchState", "InterfaceManager", "RobotHW", "HOMING"]

#: the beginning of a joint's ``fault`` while its unit homes (:meth:`RobotHW.home`)
HOMING = "homing: "

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

    # ------------------------------------------------------------------ optional capabilities
    # Non-real-time unless said otherwise.  The defaults describe hardware that has none of them.

    def start(self) -> None:
        """Start the hardware after :meth:`init` (open buses, enable motors, read once); the node calls
        it before the control loop starts.  Default: nothing (``init`` did everything)."""

    def shutdown(self) -> None:
        """Stop the hardware when the node stops (after the control loop); must not raise twice.
        Default: nothing."""

    def faulted_joints(self) -> Dict[str, str]:
        """``{joint: reason}`` of the joints in fault as of the last :meth:`read` (any thread; a new
        dict).  Default: none."""
        return {}

    def faulted_units(self) -> Dict[str, str]:
        """``{unit: reason}`` of the hardware units (motors, sensors, boards) in fault, the names
        :meth:`reset_faults` answers with.  Default: the faulted joints, one unit per joint."""
        return self.faulted_joints()

    def reset_faults(self, timeout: Optional[float] = None) -> Dict[str, str]:
        """Clear what can be cleared and wait (at most ``timeout`` s, None: the hardware's own
        default) until each faulted unit answered again or failed (blocking: the ``~reset_faults``
        service calls it, never the control loop).

        :returns: ``{unit: reason}`` of the units still in fault (empty: everything recovered).
            Default: nothing can be reset, every faulted unit stays so.
        """
        return self.faulted_units()

    def homeable_units(self) -> List[str]:
        """The units that can home on demand (the ``~home`` service offers them).  Default: none."""
        return []

    def homing_at_start(self) -> List[str]:
        """The units whose configuration asks for a homing when the driver starts.  Default: none."""
        return []

    def homing_units(self) -> List[str]:
        """The units asked to home or homing now.  Default: none."""
        return []

    def home(self, units: Sequence[str], timeout: Optional[float] = None) -> Dict[str, Tuple[bool, str]]:
        """Home ``units`` and wait until each ended (blocking: the ``~home`` service calls it, never the
        control loop); the joints of a homing unit get no commands meanwhile and restart from the
        measured position afterwards.

        :returns: ``{unit: (ok, message)}``.  Default: nothing can home.
        """
        return {u: (False, f"{type(self).__name__} cannot home '{u}'") for u in units}

    def consume_reset_request(self) -> bool:
        """True once after a faulted joint recovered (real-time, called after each :meth:`read`): the
        control loop then restarts the running controllers from the measured state.  Default: False."""
        return False

    def limit_command_steps(self, nominal_period: float, periods: float = 2.0) -> Dict[str, float]:
        """Cap, on the wire, the position step between two consecutive command frames of each motor at
        what its joints' velocity limits allow over ``periods`` control periods of ``nominal_period``
        seconds.  The node calls it once before :meth:`start`.

        :returns: ``{motor: cap}`` of the motors that got a cap.  Default: none (the hardware takes
            no such cap).
        """
        return {}

    def not_ready_joints(self) -> Dict[str, str]:
        """``{joint: why}`` of the joints that cannot follow commands yet (starting up, not
        connected); a trajectory controller refuses goals for them.  Default: none."""
        return {}

    def is_ready(self) -> bool:
        """True when every joint is ready (:meth:`not_ready_joints` empty)."""
        return not self.not_ready_joints()

    def status(self) -> Optional[Dict[str, Any]]:
        """Plain data for the node's ``robot_hw`` status on ``/diagnostics`` (any thread), or None for
        nothing to report (the default).  Keys the node reads: ``hold_mode``, ``joints`` (``{joint:
        {interface, mode, controller, fault}}``), ``switch`` (``{pending, error, finished}``),
        ``values`` (``[(key, value)]``), ``error`` and ``warning`` (texts), ``motors``."""
        return None

    def middlewares(self) -> List[Any]:
        """The CAN :class:`~rospy_control.middleware.Middleware` objects this RobotHW drives (the node
        reports their units on ``/diagnostics`` and offers ``~sim/*`` for a simulated one).
        Default: none."""
        return []


def claims_of(infos: Iterable[ControllerInfo]) -> Dict[str, List[str]]:
    """resource → names of the controllers claiming it (helper for custom conflict rules)."""
    users: Dict[str, List[str]] = {}
    for controller in infos:
        for resource in controller.all_resources():
            users.setdefault(resource, []).append(controller.name)
    return users
