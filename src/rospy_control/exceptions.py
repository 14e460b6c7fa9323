"""Exception hierarchy of rospy_control.

Every error the package raises derives from :class:`RospyControlError`, so a caller can catch
everything of ours in one clause, or one family precisely:

* :class:`ConfigError` -- a configuration file or parameter is wrong (hardware XML, URDF,
  controller YAML).  The message names the file (and line) or parameter, the element or key,
  the offending value and what was expected.  Raised at load time; nothing half-starts.
* :class:`PluginError` (a :class:`ConfigError`) -- a ``type`` string cannot be resolved to a class
  (unknown name, import failure, missing class, wrong base class).
* :class:`HardwareError` -- the hardware misbehaves at run time.
  :class:`CommunicationError` wraps a python-can error (``raise ... from err``);
  :class:`CommunicationTimeout` is also a builtin :class:`TimeoutError`.
* :class:`HardwareInterfaceError`, :class:`TransmissionInterfaceError`, :class:`JointLimitsError`
  and :class:`ControllerError` mirror ros_control's per-package exceptions
  (``hardware_interface::HardwareInterfaceException`` ...).
"""
from __future__ import annotations

from typing import Optional


class RospyControlError(Exception):
    """Base class of every exception raised by rospy_control."""


class ConfigError(RospyControlError, ValueError):
    """A configuration source (file, element, attribute, parameter) holds a bad value.

    :param message: what is wrong and what was expected.
    :param source: file name (or parameter namespace) the value came from.
    :param line: 1-based line number in ``source`` where known.
    """

    def __init__(self, message: str, source: Optional[str] = None, line: Optional[int] = None) -> None:
        self.source = source
        self.line = line
        self.reason = message
        where = ""
        if source is not None:
            where = f"{source}:{line}: " if line is not None else f"{source}: "
        super().__init__(where + message)


class PluginError(ConfigError):
    """A plugin ``type`` string could not be resolved to a suitable class."""


class HardwareError(RospyControlError):
    """The hardware (bus, adapter, device) failed at run time."""


class CommunicationError(HardwareError):
    """A communication channel failed (wraps the python-can error as ``__cause__``)."""


class CommunicationTimeout(CommunicationError, TimeoutError):
    """A device or channel did not answer in time."""


class HardwareInterfaceError(RospyControlError):
    """Counterpart of ``hardware_interface::HardwareInterfaceException``."""


class TransmissionInterfaceError(RospyControlError):
    """Counterpart of ``transmission_interface::TransmissionInterfaceException``."""


class JointLimitsError(RospyControlError):
    """Counterpart of ``joint_limits_interface::JointLimitsInterfaceException``."""


class ControllerError(RospyControlError):
    """A controller could not be loaded, initialised, switched or run."""
