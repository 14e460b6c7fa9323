"""A RobotHW that is not the package's, written from docs/writing_a_robot_hw.md alone, the way a user
would: a pan-tilt head whose servos reach their commands at once.  Loaded as ``pan_tilt_hw/PanTiltHW``
(the class the Python package ``pan_tilt_hw`` offers), from PYTHONPATH."""
from __future__ import annotations

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import (
    JointData, JointHandle, JointStateHandle, JointStateInterface, PositionJointInterface, RobotHW,
)
from rospy_control.urdf import find_robot_description, parse_urdf


class PanTiltHW(RobotHW):
    def __init__(self):
        super().__init__()
        self.js = JointStateInterface()
        self.pos = PositionJointInterface()
        self.data = {}
        self.hardware = {}  # what the servos report
        self.started = False

    def init(self, root_nh, robot_hw_nh) -> bool:
        text, where = find_robot_description(root_nh)
        if text is None:
            raise ConfigError("no robot_description", where)
        urdf_joints = {j.get("name") for j in parse_urdf(text, where).findall("joint")}
        joints = robot_hw_nh.get_param("joints")
        for name in joints:
            if name not in urdf_joints:
                raise ConfigError(f"no joint {name} in the URDF", robot_hw_nh.resolve_name("joints"))
            data = JointData(position=0.0, command_position=0.0)
            state = JointStateHandle(name, data)
            self.js.register_handle(state)
            self.pos.register_handle(JointHandle(state, data, "command_position"))
            self.data[name] = data
            self.hardware[name] = 0.0
        self.register_interface(self.js)
        self.register_interface(self.pos)
        return True

    def start(self):
        self.started = True

    def read(self, time, period):
        for name, data in self.data.items():
            data.position = self.hardware[name]

    def write(self, time, period):
        for name, data in self.data.items():
            self.hardware[name] = data.command_position

    def shutdown(self):
        self.started = False
