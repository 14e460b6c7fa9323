"""Hardware interfaces as resource managers (``hardware_interface::HardwareInterface`` and
``hardware_interface::internal::ResourceManager``).

Every interface class carries three class attributes:

* ``TYPE_NAME`` -- ros_control's demangled C++ name (``hardware_interface::PositionJointInterface``).
  It keys interfaces inside a RobotHW and is what ``list_controllers`` reports.
* ``LOOKUP_NAME`` -- the name used in URDF ``<hardwareInterface>`` and YAML
  (``hardware_interface/PositionJointInterface``), resolvable through
  :data:`rospy_control.hardware_interface.INTERFACES`.
* ``CLAIMS`` -- whether :meth:`ResourceManager.get_handle` claims the resource (joint command
  interfaces do; state, actuator and sensor interfaces do not).

A subclass that does not set ``TYPE_NAME`` / ``LOOKUP_NAME`` gets ``<module>.<Class>`` /
``<module>:<Class>``, so a derived interface never silently shares its parent's key (in C++ a
derived class has its own demangled name too).
"""
from __future__ import annotations

from typing import Dict, Iterable, List, Set

from rospy_control.exceptions import HardwareInterfaceError
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["HardwareInterface", "ResourceManager"]


class HardwareInterface:
    """Base of every hardware interface: resource claims (``hardware_interface::HardwareInterface``).

    Robot-specific interfaces that are not handle containers (ros_control's pattern of registering
    the robot class itself as an interface) derive from this directly.
    """

    TYPE_NAME = "hardware_interface::HardwareInterface"
    LOOKUP_NAME = "hardware_interface/HardwareInterface"
    CLAIMS = False

    def __init_subclass__(cls, **kwargs) -> None:
        super().__init_subclass__(**kwargs)
        if "TYPE_NAME" not in cls.__dict__:
            cls.TYPE_NAME = f"{cls.__module__}.{cls.__qualname__}"
        if "LOOKUP_NAME" not in cls.__dict__:
            cls.LOOKUP_NAME = f"{cls.__module__}:{cls.__qualname__}"

    def __init__(self) -> None:
        self._claims: Set[str] = set()

    def claim(self, resource: str) -> None:
        """Record that the controller being initialised uses ``resource``."""
        self._claims.add(resource)

    def get_claims(self) -> Set[str]:
        """A copy of the claimed resource names."""
        return set(self._claims)

    def clear_claims(self) -> None:
        self._claims.clear()


class ResourceManager(HardwareInterface):
    """A hardware interface holding named handles of one type.

    ``HANDLE_TYPE`` (class attribute) is the accepted handle class (or tuple of classes).
    Handles are kept by name; :meth:`get_names` is alphabetical like ros_control's ``std::map``.
    """

    TYPE_NAME = "hardware_interface::ResourceManager"
    LOOKUP_NAME = "hardware_interface/ResourceManager"
    HANDLE_TYPE: object = object

    def __init__(self) -> None:
        super().__init__()
        self._handles: Dict[str, object] = {}
        self._missing_hints: Dict[str, str] = {}

    def register_handle(self, handle) -> None:
        """Add ``handle`` under ``handle.get_name()``; an existing handle of that name is replaced
        with a warning.

        :raises HardwareInterfaceError: ``handle`` is not a ``HANDLE_TYPE``.
        """
        if not isinstance(handle, self.HANDLE_TYPE):  # type: ignore[arg-type]
            expected = getattr(self.HANDLE_TYPE, "__name__", str(self.HANDLE_TYPE))
            raise HardwareInterfaceError(
                f"Cannot register {handle!r} in '{self.TYPE_NAME}': expected a {expected}."
            )
        name = handle.get_name()
        if name in self._handles:
            logger.warning("Replacing previously registered handle '%s' in '%s'.", name, self.TYPE_NAME)
        self._handles[name] = handle

    def get_names(self) -> List[str]:
        """Registered resource names, alphabetical."""
        return sorted(self._handles)

    def get_handle(self, name: str):
        """The handle of ``name``; claims ``name`` when the interface is a claiming one.

        :raises HardwareInterfaceError: "Could not find resource '<name>' in '<TYPE_NAME>'".
        """
        try:
            handle = self._handles[name]
        except (KeyError, TypeError):
            hint = self._missing_hints.get(name) if isinstance(name, str) else None
            raise HardwareInterfaceError(
                f"Could not find resource '{name}' in '{self.TYPE_NAME}'" + (f". {hint}" if hint else "")
            ) from None
        if self.CLAIMS:
            self.claim(name)
        return handle

    def explain_missing(self, name: str, hint: str) -> None:
        """Append ``hint`` to the error :meth:`get_handle` raises for ``name`` while it is absent.

        Used to point at the cause, e.g. the URDF transmission of that joint was skipped.
        """
        self._missing_hints[name] = hint

    def has_handle(self, name: str) -> bool:
        return name in self._handles

    def get_handles(self) -> List[object]:
        """All handles in name order (does not claim)."""
        return [self._handles[n] for n in sorted(self._handles)]

    def __contains__(self, name: str) -> bool:
        return name in self._handles

    @classmethod
    def combine(cls, interfaces: Iterable["ResourceManager"]) -> "ResourceManager":
        """A new interface of this class holding the handles of all ``interfaces`` (later ones win)."""
        combined = cls()
        for iface in interfaces:
            combined._missing_hints.update(iface._missing_hints)
            for handle in iface.get_handles():
                combined.register_handle(handle)
        return combined
