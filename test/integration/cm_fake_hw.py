"""An in-process fake robot for the controller manager rostests (ros_control's "dummy app" robot).

:class:`FakeRobotHW` has

* actuated joints (default ``joint1..joint3``) in the JointState, PositionJoint, VelocityJoint and
  EffortJoint interfaces, each interface with its own command field (``command_position``,
  ``command_velocity``, ``command_effort``).  Which command moves a joint is decided in
  :meth:`do_switch` from the started controllers' claimed interfaces, like a real multi-mode motor.
  Position mode follows the command at once (in :meth:`write`).  Velocity and effort mode move the
  joint in :meth:`read`, over the time that passed since the previous ``read`` (the ``time``
  argument, not the loop's ``period``, which the loop bounds): like a real motor, the joint keeps
  moving in real time while the host holds the control loop up, and the state read at time ``t`` is
  the motion up to ``t``, so ``position(t2) - position(t1) == velocity * (t2 - t1)`` between any two
  stamps.  Velocity mode integrates the last commanded velocity, effort mode drives a damped unit
  inertia with the last commanded effort;
* state-only "wave" joints (default ``wave_joint``) whose state is a known function of the time
  passed to :meth:`read`: position ``sin(t)``, velocity ``cos(t)``, effort ``-sin(t)``.  A rostest can
  therefore check that ``/joint_states`` carries exactly the hardware's values at the stamped time.
"""
from __future__ import annotations

import math
from typing import Dict, Optional, Sequence

from rospy_control.hardware_interface import (
    EffortJointInterface,
    JointData,
    JointStateHandle,
    PositionJointInterface,
    VelocityJointInterface,
)
from rospy_control.testing.robot_hw import JointsRobotHW

POSITION = PositionJointInterface.TYPE_NAME
VELOCITY = VelocityJointInterface.TYPE_NAME
EFFORT = EffortJointInterface.TYPE_NAME


def wave(t: float):
    """(position, velocity, effort) of a wave joint at time ``t``."""
    return math.sin(t), math.cos(t), -math.sin(t)


class FakeRobotHW(JointsRobotHW):
    """See the module docstring.

    :param joints: actuated joint names.
    :param wave_joints: state-only joint names.
    :param initial_positions: start positions of the actuated joints (default 0).
    :param damping: effort mode: ``acc = effort - damping * velocity``.
    """

    def __init__(self, joints: Sequence[str] = ("joint1", "joint2", "joint3"),
                 wave_joints: Sequence[str] = ("wave_joint",),
                 initial_positions: Optional[Sequence[float]] = None, damping: float = 1.0) -> None:
        # the actuated joints, each interface with its own command field
        super().__init__(joints, initial_positions=initial_positions)
        self.joints = list(joints)
        self.wave_joints = list(wave_joints)
        self.damping = damping
        self.mode: Dict[str, Optional[str]] = {name: None for name in self.joints}
        #: Time of the previous read() (None before the first).
        self.last_read: Optional[float] = None
        for name in self.wave_joints:
            data = JointData()
            self.data[name] = data
            self.js.register_handle(JointStateHandle(name, data))

    def do_switch(self, start_list, stop_list) -> None:
        for info in stop_list:
            for claimed in info.claimed_resources:
                for joint in claimed.resources:
                    if joint in self.mode:
                        self.mode[joint] = None
        for info in start_list:
            for claimed in info.claimed_resources:
                for joint in claimed.resources:
                    if joint in self.mode:
                        self.mode[joint] = claimed.hardware_interface

    def read(self, time: float, period: float) -> None:
        dt = 0.0 if self.last_read is None else max(0.0, time - self.last_read)
        self.last_read = time
        for name in self.joints:
            data = self.data[name]
            mode = self.mode[name]
            if mode == VELOCITY:
                data.position += data.velocity * dt
            elif mode == EFFORT:
                # semi-implicit Euler, in steps of at most 10 ms so that a long gap stays stable
                remaining = dt
                while remaining > 0.0:
                    step = min(remaining, 0.01)
                    data.velocity += (data.effort - self.damping * data.velocity) * step
                    data.position += data.velocity * step
                    remaining -= step
        for name in self.wave_joints:
            data = self.data[name]
            data.position, data.velocity, data.effort = wave(time)

    def write(self, time: float, period: float) -> None:
        for name in self.joints:
            data = self.data[name]
            mode = self.mode[name]
            if mode == POSITION:
                target = data.command_position
                if math.isfinite(target):
                    data.velocity = (target - data.position) / period if period > 0 else 0.0
                    data.position = target
            elif mode == VELOCITY:
                velocity = data.command_velocity
                if math.isfinite(velocity):
                    data.velocity = velocity  # read() moves the joint at this velocity
            elif mode == EFFORT:
                effort = data.command_effort
                if math.isfinite(effort):
                    data.effort = effort  # read() applies it
            else:
                data.velocity = 0.0
