"""``joint_state_controller/JointStateController``: publish ``sensor_msgs/JointState``.

ROS API
-------
Parameters (controller namespace):

* ``publish_rate`` (double, **required**) -- Hz; ``<= 0`` loads fine but never publishes.
* ``joints`` (list of names, optional) -- subset and order of the published joints; default: every
  joint of the JointStateInterface (alphabetical).  An unknown name fails the load.
* ``extra_joints`` (list, optional) -- joints that are not in the hardware, published with static
  values: ``[{name: j, position: 0.0, velocity: 0.0, effort: 0.0}, ...]`` (missing values are 0.0).
  Entries that are not dicts, have no ``name``, have a non-numeric value or name a joint already
  published are skipped with an error (warning for the duplicate), as ros_controllers does; a
  non-list value is ignored with an error.  Integers are accepted as numbers (ros_controllers
  only accepts XmlRpc doubles -- a deliberate leniency).

Publishes: ``joint_states`` (``sensor_msgs/JointState``, queue 4) in the **controller manager's
namespace** (root_nh), through a :class:`~rospy_control.controller_interface.RealtimePublisher`;
``header.stamp`` is the update time, ``frame_id`` empty; hardware joints then extra joints.

Rate keeping: due when ``last + 1/rate < time``; ``last`` advances by exactly ``1/rate`` per accepted
publish (average rate kept; may burst to catch up).  ``last`` is set once, on the first start, to
``time - 1.001/rate`` so that the first cycle publishes, and kept across stop/start.  A busy
publisher skips the cycle without advancing ``last``.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Any, List, Optional

from sensor_msgs.msg import JointState

from rospy_control.controller_interface import Controller, RealtimePublisher
from rospy_control.controllers._common import PublishRate, required_param, to_stamp
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import JointStateHandle, JointStateInterface
from rospy_control.log import get_logger

logger = get_logger(__name__)

__all__ = ["JointStateController"]

_POSITION = attrgetter("position")
_VELOCITY = attrgetter("velocity")
_EFFORT = attrgetter("effort")
_GETTERS = ("get_position", "get_velocity", "get_effort")


def _plain_data(handles: List[Any]) -> Optional[List[Any]]:
    """The handles' data objects when every handle reads its state straight from it (plain
    :class:`JointStateHandle` getters: one C-level ``map`` per field then reads all joints), else None."""
    for h in handles:
        own = getattr(h, "__dict__", ())
        if any(getattr(type(h), g, None) is not getattr(JointStateHandle, g) or g in own for g in _GETTERS):
            return None
    return [h.get_data() for h in handles]


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


class JointStateController(Controller):
    """Publishes the state of every (or the configured) joint at ``publish_rate``."""

    INTERFACE = JointStateInterface

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.rate = PublishRate(required_param(controller_nh, "publish_rate", float))
        names = controller_nh.get_param("joints", None)
        if names is None:
            names = hw.get_names()
        elif not isinstance(names, list) or not all(isinstance(n, str) for n in names):
            raise ConfigError(f"Parameter 'joints' must be a list of joint names, got {names!r}",
                              controller_nh.resolve_name("joints"))
        self.handles = [hw.get_handle(name) for name in names]
        self.names: List[str] = [h.get_name() for h in self.handles]
        self._data = _plain_data(self.handles)
        self.extra_names: List[str] = []
        self.extra_values: List[tuple] = []
        self._add_extra_joints(controller_nh)
        self.publisher = RealtimePublisher(root_nh, "joint_states", JointState, 4)
        return True

    def _add_extra_joints(self, nh) -> None:
        extra = nh.get_param("extra_joints", None)
        if extra is None:
            logger.debug("No extra joints specification found.")
            return
        if not isinstance(extra, list):
            logger.error("Extra joints specification is not an array. Ignoring.")
            return
        for entry in extra:
            if not isinstance(entry, dict):
                logger.error("Extra joint specification is not a struct, but rather '%s'. Ignoring.",
                             type(entry).__name__)
                continue
            name = entry.get("name")
            if not isinstance(name, str) or not name:
                logger.error("Extra joint does not specify name. Ignoring.")
                continue
            if name in self.names or name in self.extra_names:
                logger.warning("Joint state interface already contains specified extra joint '%s'.", name)
                continue
            values = []
            for field in ("position", "velocity", "effort"):
                value = entry.get(field, 0.0)
                if not _is_number(value):
                    logger.error("Extra joint '%s' does not specify a valid default %s. Ignoring.",
                                 name, field)
                    break
                values.append(float(value))
            else:
                self.extra_names.append(name)
                self.extra_values.append(tuple(values))

    def starting(self, time: float) -> None:
        if self.rate.last is None and self.rate.enabled:
            self.rate.reset(time - 1.001 * self.rate.period)

    def update(self, time: float, period: float) -> None:
        rate = self.rate  # PublishRate.due() inlined: this check is all most cycles do
        last = rate.last
        if last is None or not last + rate.period < time:  # a disabled rate's period is inf
            return
        msg = JointState()
        msg.header.stamp = to_stamp(time)
        msg.name = self.names + self.extra_names
        data = self._data
        if data is not None:
            msg.position = list(map(_POSITION, data)) + [v[0] for v in self.extra_values]
            msg.velocity = list(map(_VELOCITY, data)) + [v[1] for v in self.extra_values]
            msg.effort = list(map(_EFFORT, data)) + [v[2] for v in self.extra_values]
        else:
            msg.position = [h.get_position() for h in self.handles] + [v[0] for v in self.extra_values]
            msg.velocity = [h.get_velocity() for h in self.handles] + [v[1] for v in self.extra_values]
            msg.effort = [h.get_effort() for h in self.handles] + [v[2] for v in self.extra_values]
        if self.publisher.try_publish(msg):
            self.rate.published()
