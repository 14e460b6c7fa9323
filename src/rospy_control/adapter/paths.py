"""Where the package is, for the nodes: relative file parameters fall back to it."""
from __future__ import annotations

from typing import Optional


def package_root() -> Optional[str]:
    """The rospy_control package's directory (rospack's answer), None when ROS cannot say."""
    try:
        import rospkg  # type: ignore
        return rospkg.RosPack().get_path("rospy_control")
    except Exception:  # noqa: BLE001 - no ROS package path: relative names stay relative
        return None
