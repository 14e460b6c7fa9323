"""How a node starts: a configuration or hardware error stops it with one fatal message, naming what
is wrong, and an exit code (1: configuration, 2: hardware), and nothing half-starts."""
from __future__ import annotations

from typing import Callable, Optional, Tuple, TypeVar

import rospy

from rospy_control.exceptions import CommunicationError, ConfigError, RospyControlError

__all__ = ["start_node"]

T = TypeVar("T")


def start_node(node: str, start: Callable[[], T], hardware_message: str = "hardware error, not starting",
               hardware_reason: str = "hardware error") -> Tuple[Optional[T], int]:
    """``(start(), 0)``; on a :class:`ConfigError` ``(None, 1)``, on a hardware error ``(None, 2)``, each
    logged fatally as ``<node>: <what>: <error>`` and the node shut down with the reason."""
    try:
        return start(), 0
    except ConfigError as err:
        rospy.logfatal("%s: configuration error, not starting: %s", node, err)
        rospy.signal_shutdown("configuration error")
        return None, 1
    except (CommunicationError, RospyControlError) as err:
        rospy.logfatal("%s: %s: %s", node, hardware_message, err)
        rospy.signal_shutdown(hardware_reason)
        return None, 2
