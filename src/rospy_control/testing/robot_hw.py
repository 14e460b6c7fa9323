"""A RobotHW with plain joints, the base of the fake robots of tests, rostests and benchmarks.

:class:`JointsRobotHW` registers each joint in the JointStateInterface and in the joint command
interfaces asked for, each interface's handles writing their own :class:`JointData` field -- by
default position, velocity and effort commands go to ``command_position``, ``command_velocity`` and
``command_effort``, like a multi-mode motor that keeps one command per mode.  It moves nothing:
subclasses add the dynamics (``read`` / ``write`` / a ``step``), sensors or scripted switching.
"""
from __future__ import annotations

from typing import Dict, Mapping, Optional, Sequence, Type

from rospy_control.hardware_interface import (
    EffortJointInterface, JointData, JointHandle, JointStateHandle, JointStateInterface,
    PositionJointInterface, ResourceManager, RobotHW, VelocityJointInterface,
)

__all__ = ["JointsRobotHW", "SEPARATE_COMMANDS"]

#: Position, velocity and effort joint interfaces, each writing its own command field.
SEPARATE_COMMANDS: Mapping[Type[ResourceManager], str] = {
    PositionJointInterface: "command_position",
    VelocityJointInterface: "command_velocity",
    EffortJointInterface: "command_effort",
}


class JointsRobotHW(RobotHW):
    """``joints`` in the JointStateInterface and in the command interfaces of ``commands``.

    :param joints: joint names; :attr:`data` maps each to its live :class:`JointData`.
    :param commands: joint command interface class -> the ``JointData`` field its handles write, in
        registration order (default :data:`SEPARATE_COMMANDS`).
    :param initial_positions: start positions (also the initial position command); default 0.

    :attr:`js` is the JointStateInterface; :attr:`command_interfaces` maps each class of
    ``commands`` to its instance (``get(cls)`` returns the same).
    """

    def __init__(self, joints: Sequence[str],
                 commands: Optional[Mapping[Type[ResourceManager], str]] = None,
                 initial_positions: Optional[Sequence[float]] = None) -> None:
        super().__init__()
        commands = SEPARATE_COMMANDS if commands is None else commands
        positions = list(initial_positions or [0.0] * len(joints))
        self.joint_names = list(joints)
        self.data: Dict[str, JointData] = {}
        self.js = JointStateInterface()
        self.command_interfaces: Dict[Type[ResourceManager], ResourceManager] = {
            cls: cls() for cls in commands}
        for name, position in zip(self.joint_names, positions):
            data = JointData(position=float(position), command_position=float(position))
            self.data[name] = data
            state = JointStateHandle(name, data)
            self.js.register_handle(state)
            for cls, field in commands.items():
                self.command_interfaces[cls].register_handle(JointHandle(state, data, field))
        self.register_interface(self.js)
        for iface in self.command_interfaces.values():
            self.register_interface(iface)
