"""Plugin registries: pluginlib-style lookup names resolved to Python classes.

Each kind of plugin (hardware units, channels, transmissions, controllers, ...) has a
:class:`Registry` mapping a lookup name such as ``rospy_control/Motor`` or
``position_controllers/JointTrajectoryController`` to a ``"module:Class"`` string, imported lazily on
first use (the python-can ``BACKENDS`` pattern).  A type string that contains ``:`` is taken as
``module:Class`` and imported directly, so third-party code needs neither a registry edit nor
packaging metadata; it works in a catkin devel space and in plain pytest.

:meth:`Registry.resolve` checks the class against the registry's base class (pluginlib's
``base_class_type``) and raises :class:`~rospy_control.exceptions.PluginError` with separate messages
for an unknown name, an import failure, a missing class and a wrong base class.
"""
from __future__ import annotations

import importlib
from typing import Any, Dict, List, Optional, Type

from rospy_control.exceptions import PluginError


class Registry:
    """A lazy name → class registry for one kind of plugin.

    :param kind: human name of the plugin kind, used in messages ("hardware unit type").
    :param base: class every resolved plugin must derive from; may be given later with
        :meth:`set_base` to avoid import cycles.
    """

    def __init__(self, kind: str, base: Optional[type] = None) -> None:
        self.kind = kind
        self._base = base
        self._entries: Dict[str, str] = {}
        self._cache: Dict[str, type] = {}

    def set_base(self, base: type) -> None:
        """Set the base class that resolved classes must derive from."""
        self._base = base

    def register(self, name: str, target) -> None:
        """Register ``name`` for ``target``: a class or a ``"module:Class"`` string.

        Registering a name again replaces the previous entry (like ros_control's handles).
        """
        if isinstance(target, str):
            self._entries[name] = target
            self._cache.pop(name, None)
        else:
            self._entries[name] = f"{target.__module__}:{target.__qualname__}"
            self._cache[name] = target

    def names(self) -> List[str]:
        """Registered lookup names, sorted."""
        return sorted(self._entries)

    def __contains__(self, name: str) -> bool:
        return name in self._entries

    def resolve(self, type_name: str, where: Optional[str] = None) -> type:
        """Return the class for ``type_name`` (a registered name or ``module:Class``).

        :param where: where the type string came from (``"robot.xml:12 <unit name='x'>"``),
            prefixed to error messages.
        :raises PluginError: unknown name, failed import, missing class or wrong base class.
        """
        cls = self._cache.get(type_name)
        if cls is not None:
            return cls
        prefix = f"{where}: " if where else ""
        if type_name in self._entries:
            target = self._entries[type_name]
        elif ":" in type_name:
            target = type_name
        else:
            known = ", ".join(self.names()) or "(none)"
            raise PluginError(
                f"{prefix}unknown {self.kind} '{type_name}'. Known {self.kind}s: {known}; "
                "or give a Python class as 'module:Class'."
            )
        module_name, _, class_name = target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as err:  # noqa: BLE001 - any import-time error is reported the same way
            raise PluginError(
                f"{prefix}{self.kind} '{type_name}': cannot import module '{module_name}': {err}"
            ) from err
        obj: Any = module
        for part in class_name.split("."):
            obj = getattr(obj, part, None)
            if obj is None:
                raise PluginError(
                    f"{prefix}{self.kind} '{type_name}': module '{module_name}' has no class '{class_name}'"
                )
        if not isinstance(obj, type):
            raise PluginError(f"{prefix}{self.kind} '{type_name}': '{target}' is not a class")
        if self._base is not None and not issubclass(obj, self._base):
            raise PluginError(
                f"{prefix}{self.kind} '{type_name}': class '{target}' does not derive from "
                f"'{self._base.__module__}.{self._base.__qualname__}'"
            )
        if type_name in self._entries:
            self._cache[type_name] = obj
        return obj

    def clear_cache(self) -> None:
        """Forget resolved classes (used by ``reload_controller_libraries``)."""
        self._cache.clear()


def resolve_class(type_name: str, base: Optional[type] = None, kind: str = "plugin") -> Type:
    """Resolve a ``module:Class`` string without a registry."""
    return Registry(kind, base).resolve(type_name)
