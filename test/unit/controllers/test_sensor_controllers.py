"""IMU, force/torque and foot-contact broadcasters."""
from __future__ import annotations

import pytest
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import Imu
from std_msgs.msg import Bool

IMU = "imu_sensor_controller/ImuSensorController"
FT = "force_torque_sensor_controller/ForceTorqueSensorController"
CONTACT = "contact_sensor_controller/ContactSensorController"


@pytest.mark.parametrize("type_name", [IMU, FT, CONTACT])
def test_publish_rate_is_required(rig, type_name):
    rig.root_nh.set_param("s", {"type": type_name})
    result = rig.cm.load_controller("s")
    assert not result.ok and "Parameter 'publish_rate' not set" in result.message


def test_imu_message_and_covariance_rules(rig):
    msgs = rig.record("imu", Imu)
    ctrl = rig.load("imu_ctrl", IMU, publish_rate=10.0)
    ctrl.start_request(2.0)
    ctrl.update_request(2.05, 0.05)
    assert msgs == []                                   # first message one period after start
    ctrl.update_request(2.15, 0.05)
    [msg] = msgs
    assert msg.header.frame_id == "imu_link" and msg.header.stamp.to_sec() == pytest.approx(2.15)
    q = msg.orientation
    assert (q.x, q.y, q.z, q.w) == (0.0, 0.0, 0.0, 1.0)
    assert list(msg.orientation_covariance) == [0.1] * 9             # provided
    assert (msg.angular_velocity.x, msg.angular_velocity.y, msg.angular_velocity.z) == (0.1, 0.2, 0.3)
    assert list(msg.angular_velocity_covariance) == [0.0] * 9        # quantity without covariance
    assert list(msg.linear_acceleration_covariance) == [-1.0] + [0.0] * 8   # quantity absent


def test_imu_rate_kept_and_restarted_on_start(rig):
    msgs = rig.record("imu", Imu)
    ctrl = rig.load("imu_ctrl", IMU, publish_rate=20.0)
    ctrl.start_request(0.0)
    for k in range(1, 101):
        ctrl.update_request(k * 0.01, 0.01)
    assert len(msgs) == pytest.approx(20, abs=1)
    ctrl.stop_request(1.0)
    ctrl.start_request(5.0)
    ctrl.update_request(5.01, 0.01)
    assert len(msgs) == pytest.approx(20, abs=1)                     # no burst after restart


def test_force_torque_message(rig):
    msgs = rig.record("wrist_ft", WrenchStamped)
    ctrl = rig.load("ft", FT, publish_rate=100.0)
    ctrl.start_request(1.0)
    ctrl.update_request(1.02, 0.02)
    [msg] = msgs
    assert msg.header.frame_id == "wrist"
    force, torque = msg.wrench.force, msg.wrench.torque
    assert (force.x, force.y, force.z) == (1.0, 2.0, 3.0)
    assert (torque.x, torque.y, torque.z) == (0.0, 0.0, 0.0)         # not measured


def test_contact_messages_per_foot(rig):
    left_wrench, left_contact = rig.record("left_foot", WrenchStamped), rig.record("left_foot/contact", Bool)
    right_contact = rig.record("right_foot/contact", Bool)
    ctrl = rig.load("feet", CONTACT, publish_rate=50.0)
    ctrl.start_request(1.0)
    ctrl.update_request(1.03, 0.03)
    assert left_wrench[0].wrench.force.z == 120.5 and left_wrench[0].header.frame_id == "left_foot_frame"
    assert left_wrench[0].wrench.force.x == 0.0
    assert left_contact[0].data is True and right_contact[0].data is False
    rig.robot.feet["right_foot"].in_contact = True
    ctrl.update_request(1.06, 0.03)
    assert right_contact[-1].data is True


def test_sensor_controllers_claim_nothing_and_run_in_the_loop(rig):
    rig.load("imu_ctrl", IMU, publish_rate=50.0)
    rig.load("ft", FT, publish_rate=50.0)
    rig.load("feet", CONTACT, publish_rate=50.0)
    assert all(r.resources == [] for c in rig.cm.list_controllers() for r in c.claimed_resources)
    msgs = rig.record("imu", Imu)
    rig.switch(start=["imu_ctrl", "ft", "feet"])
    for _ in range(50):
        rig.cycle(0.01)
    assert len(msgs) == pytest.approx(25, abs=2)
