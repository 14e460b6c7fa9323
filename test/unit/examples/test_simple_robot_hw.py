"""The example RobotHW that is not on CAN, loaded from parameters as the driver node loads any RobotHW
(``driver_config.load_robot_hw``: ``robot_hardware`` + ``<name>/type``), then driven by the stock
controllers on an in-memory graph: a FollowJointTrajectory goal, a velocity group controller, the
limits.  Also the ways a type is named and the errors a user gets for a wrong one."""
from __future__ import annotations

import os
import sys
import textwrap

import genpy
import pytest
from actionlib_msgs.msg import GoalStatus
from control_msgs.msg import FollowJointTrajectoryGoal
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectoryPoint

from rospy_control.control_loop.driver_config import load_robot_hw
from rospy_control.examples.simple_robot_hw import SimpleRobotHW
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import CombinedRobotHW, JointStateInterface, PositionJointInterface
from rospy_control.testing import InMemoryActionClient
from rospy_control.testing.cm_rig import ControllerManagerRig

HERE = os.path.dirname(os.path.abspath(__file__))
URDF = os.path.join(HERE, "..", "..", "..", "urdf", "arm.urdf")
ARM = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
       "wrist_3_joint"]
TYPE = "rospy_control.examples.simple_robot_hw:SimpleRobotHW"


class Rig(ControllerManagerRig):
    """The control loop as the driver runs it: read -> update -> write."""

    def control(self, t: float, dt: float) -> None:
        self.robot_hw.read(t, dt)
        self.cm.update(t, dt)
        self.robot_hw.write(t, dt)


def make_rig(servos: dict, joint_limits: dict = None, names=("servos",)) -> Rig:
    with open(URDF) as f:
        urdf = f.read()
    rig = Rig(None, dt=0.005, robot_description=urdf)
    nh = rig.root_nh
    if joint_limits is not None:
        nh.set_param("joint_limits", joint_limits)
    nh.set_param("driver/robot_hardware", list(names))
    for name in names:
        nh.set_param(f"driver/{name}", servos)
    hw = load_robot_hw(nh, nh.child("driver"))
    rig.robot_hw = hw
    rig.cm.robot_hw = hw
    return rig


@pytest.fixture
def rig():
    r = make_rig({"type": TYPE, "initial_positions": {"elbow_joint": 0.5}})
    yield r
    r.shutdown()


def positions(hw, joints):
    js = hw.get(JointStateInterface)
    return [js.get_handle(j).get_position() for j in joints]


def test_loaded_from_params_with_every_movable_urdf_joint(rig):
    hw = rig.robot_hw
    assert isinstance(hw, SimpleRobotHW)  # one name: the RobotHW itself, not a CombinedRobotHW
    names = hw.get(JointStateInterface).get_names()
    assert set(ARM) <= set(names) and "gripper_finger_joint" in names
    assert hw.get(PositionJointInterface).get_names() == names
    assert positions(hw, ["elbow_joint"]) == [0.5]


def trajectory_goal(joints, start, target, duration):
    goal = FollowJointTrajectoryGoal()
    goal.trajectory.joint_names = list(joints)
    for k in range(1, 11):
        s = k / 10.0
        pt = JointTrajectoryPoint()
        pt.positions = [a + (b - a) * (3 * s * s - 2 * s ** 3) for a, b in zip(start, target)]
        pt.time_from_start = genpy.Duration.from_sec(duration * s)
        goal.trajectory.points.append(pt)
    return goal


def test_follow_joint_trajectory_goal_succeeds(rig):
    rig.load("arm_controller", "position_controllers/JointTrajectoryController", joints=ARM,
             constraints={"goal_time": 0.5, **{j: {"goal": 0.02, "trajectory": 0.2} for j in ARM}})
    assert rig.switch(["arm_controller"]).ok
    start = positions(rig.robot_hw, ARM)
    target = [0.4, -0.5, 1.0, 0.3, -0.4, 0.6]
    client = InMemoryActionClient(rig.root_nh, "arm_controller/follow_joint_trajectory")
    goal = client.send_goal(trajectory_goal(ARM, start, target, 1.0))
    for _ in range(600):
        rig.cycle()
        if goal.is_done():
            break
    assert goal.get_goal_status() == GoalStatus.SUCCEEDED, goal.get_goal_status_text()
    assert max(abs(a - b) for a, b in zip(positions(rig.robot_hw, ARM), target)) < 0.02


def test_velocity_controller_switches_the_joints_to_velocity_mode_and_limits_hold(rig):
    rig.load("vel", "velocity_controllers/JointGroupVelocityController", joints=ARM)
    assert rig.switch(["vel"]).ok
    pub = rig.root_nh.advertise("vel/command", Float64MultiArray)
    pub.publish(Float64MultiArray(data=[100.0, 0.0, 0.0, 0.0, 0.0, -0.5]))
    for _ in range(100):  # 0.5 s
        rig.cycle()
    pan, wrist3 = positions(rig.robot_hw, ["shoulder_pan_joint", "wrist_3_joint"])
    # 100 rad/s is saturated to the URDF velocity limit of shoulder_pan (3.0 rad/s)
    assert 1.4 < pan <= 1.5 + 1e-9
    assert wrist3 == pytest.approx(-0.25, abs=0.02)
    # stopping the controller holds the joints where they are
    assert rig.switch([], ["vel"]).ok
    held = positions(rig.robot_hw, ARM)
    for _ in range(40):
        rig.cycle()
    assert positions(rig.robot_hw, ARM) == pytest.approx(held, abs=1e-6)


def test_joint_limits_params_override_the_urdf():
    rig = make_rig({"type": TYPE}, joint_limits={"elbow_joint": {"has_position_limits": True,
                                                                 "min_position": -0.1, "max_position": 0.2}})
    try:
        rig.load("pos", "position_controllers/JointGroupPositionController", joints=["elbow_joint"])
        assert rig.switch(["pos"]).ok
        rig.root_nh.advertise("pos/command", Float64MultiArray).publish(Float64MultiArray(data=[1.5]))
        for _ in range(400):
            rig.cycle()
        assert positions(rig.robot_hw, ["elbow_joint"]) == [pytest.approx(0.2)]
    finally:
        rig.shutdown()


def test_registered_lookup_name_and_two_parts_combined():
    rig = make_rig({"type": "rospy_control/SimpleRobotHW", "joints": ["elbow_joint"]}, names=("a",))
    assert isinstance(rig.robot_hw, SimpleRobotHW)
    rig.shutdown()
    with open(URDF) as f:
        urdf = f.read()
    r2 = Rig(None, robot_description=urdf)
    nh = r2.root_nh
    nh.set_param("d/robot_hardware", ["arm", "wrist"])
    nh.set_param("d/arm", {"type": TYPE, "joints": ARM[:3]})
    nh.set_param("d/wrist", {"type": "rospy_control/SimpleRobotHW", "joints": ARM[3:]})
    hw = load_robot_hw(nh, nh.child("d"))
    assert isinstance(hw, CombinedRobotHW)
    assert hw.get(JointStateInterface).get_names() == sorted(ARM)


def test_pkg_slash_type_resolves_a_class_the_python_package_offers(tmp_path, monkeypatch):
    pkg = tmp_path / "my_robot_hw_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""
        from rospy_control.examples.simple_robot_hw import SimpleRobotHW

        class MyRobotHW(SimpleRobotHW):
            pass
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        rig = make_rig({"type": "my_robot_hw_pkg/MyRobotHW", "joints": ["elbow_joint"]})
        assert type(rig.robot_hw).__name__ == "MyRobotHW"
    finally:
        sys.modules.pop("my_robot_hw_pkg", None)


@pytest.mark.parametrize("servos, expected", [
    ({"type": "no_such_pkg/NoSuchHW"},
     "/driver/servos/type: unknown robot hardware type 'no_such_pkg/NoSuchHW'"),
    ({"type": "rospy_control.examples.simple_robot_hw:Nope"}, "has no class 'Nope'"),
    ({"type": "rospy_control.hardware_interface:JointData"}, "does not derive from"),
    ({"type": TYPE, "joints": ["no_joint"]}, "not a movable joint of the URDF"),
    ({"type": TYPE, "time_constant": -1}, "/driver/servos/time_constant"),
    ({}, "the type of robot hardware 'servos' is not specified"),
])
def test_bad_parameters_name_the_parameter(servos, expected):
    with pytest.raises(ConfigError) as info:
        make_rig(servos)
    assert expected in str(info.value)


def test_a_failing_part_shuts_down_the_parts_loaded_before_it():
    with open(URDF) as f:
        urdf = f.read()
    rig = Rig(None, robot_description=urdf)
    nh = rig.root_nh
    nh.set_param("d/robot_hardware", ["ok", "bad"])
    nh.set_param("d/ok", {"type": "test_simple_robot_hw:Recording"})
    nh.set_param("d/bad", {"type": TYPE, "joints": 3})
    Recording.shut = 0
    with pytest.raises(ConfigError, match="/d/bad/joints"):
        load_robot_hw(nh, nh.child("d"))
    assert Recording.shut == 1


class Recording(SimpleRobotHW):
    shut = 0

    def shutdown(self) -> None:
        type(self).shut += 1
