"""``BoardRobotHW.home`` end to end: the driver's RobotHW and controller manager against a board server
in this process whose simulated axes have limit switches (real TCP, real time), the driver's
``Homing`` (what ``~home`` does) on top; and a board program without homing refused clearly."""
from __future__ import annotations

import re
import threading

import pytest
from actionlib_msgs.msg import GoalStatus

from rospy_control.board.backends import SimBackend
from rospy_control.board.server import BoardServer
from rospy_control.control_loop.homing import Homing
from rospy_control.downlink.hardware_xml import board_config, parse_board_xml
from rospy_control.exceptions import ConfigError
from rospy_control.testing import InMemoryActionClient

from test_board_robot_hw import XML, goal, make_rig, positions

START_ERROR = 0.05      # rad: where the simulated axes stand at start, off their zero


@pytest.fixture
def homing_xml(tmp_path):
    """The stepper arm's hardware XML with joint_1 homing on its min switch and joint_2 on its max."""
    with open(XML) as f:
        text = re.sub(r"<homing [^>]*/>", "", f.read())     # the shipped XML's own (joint_6) left out
    for joint, homing in (("joint_1", '<homing switch="min" search_speed="1.0" backoff_speed="0.05" '
                                      'position="-0.2" max_travel="1.0" at_start="true"/>'),
                          ("joint_2", '<homing switch="max" search_speed="1.0" backoff_speed="0.05" '
                                      'position="0.3" max_travel="1.0"/>')):
        head = f'<axis name="{joint}"'
        i = text.index(head)
        j = text.index("/>", i)
        text = text[:j] + f">{homing}</axis>" + text[j + 2:]
    path = tmp_path / "homing_arm.xml"
    path.write_text(text)
    return str(path)


def serve(path, server_class=BoardServer):
    cfg = board_config(parse_board_xml(path))
    return server_class(cfg, backend=SimBackend(cfg.axes, start_error=START_ERROR)).start()


def test_the_homing_xml_is_read_with_its_switches(homing_xml):
    desc = parse_board_xml(homing_xml)
    h1, h2 = desc.axes[0].homing, desc.axes[1].homing
    assert (h1.switch, h1.search_speed, h1.backoff_speed, h1.position, h1.max_travel, h1.at_start) == \
        ("min", 1.0, 0.05, -0.2, 1.0, True)
    assert (h2.switch, h2.position, h2.at_start) == ("max", 0.3, False)
    assert desc.axes[2].homing is None
    cfg = board_config(desc)
    assert cfg.axes[0].homing.sign == -1 and cfg.axes[1].homing.sign == 1


@pytest.mark.parametrize("homing, expected", [
    ('<homing search_speed="1"/>', "required attribute 'switch' is missing"),
    ('<homing switch="left"/>', "attribute 'switch'='left': expected min or max"),
    ('<homing switch="min" search_speed="50"/>',
     "attribute 'search_speed'='50': expected a number > 0 and at most the axis's velocity limit 2 rad/s"),
    ('<homing switch="min" position="7"/>', "attribute 'position'='7': expected a position within [-3, 3]"),
    ('<homing switch="min" max_travel="0"/>', "attribute 'max_travel'='0'"),
    ('<homing switch="min" speed="1"/>', "unknown attribute 'speed'='1'"),
])
def test_a_bad_homing_is_named_with_file_line_attribute_and_value(homing, expected):
    text = (f'<board name="b" address="h:1">\n<axis name="a" steps_per_rad="1000" max_velocity="2" '
            f'min_position="-3" max_position="3">\n{homing}\n</axis>\n</board>')
    with pytest.raises(ConfigError) as err:
        parse_board_xml(text)
    assert expected in str(err.value)
    assert "<xml string>:3: <homing>" in str(err.value)


def test_home_through_the_robot_hw_moves_the_zero_and_the_joints_restart(homing_xml):
    board = serve(homing_xml)
    rig = make_rig(board.address[1], xml=homing_xml)
    hw = rig.robot_hw
    try:
        assert hw.homeable_units() == ["joint_1", "joint_2"]
        assert hw.homing_at_start() == ["joint_1"]
        assert rig.run_until(lambda: not hw.faulted_joints(), 10.0), hw.faulted_joints()
        hw.consume_reset_request()
        outcome = {}
        homing = Homing(hw)
        th = threading.Thread(target=lambda: outcome.update(r=homing.home()))
        th.start()
        seen = []
        while th.is_alive():
            rig.cycle()
            seen.append(hw.faulted_joints().get("joint_4", ""))
        th.join()
        ok, message = outcome["r"]
        assert ok, message
        assert re.fullmatch(r"joint_1: homed; now at -0\.19\d\d rad; joint_2: homed; now at 0\.29\d\d rad",
                            message), message
        # meanwhile every joint of the board was held (the board takes no goal while it homes)
        assert any(s.startswith("homing: board 'stepper_arm_board'") for s in seen), seen[:3]
        rig.run_until(lambda: False, 0.1)
        assert not hw.faulted_joints()
        # counted from the new zero: the axes stand just past where their switches opened
        p = positions(rig)
        assert p[0] == pytest.approx(-0.2, abs=0.01) and p[1] == pytest.approx(0.3, abs=0.01)
        assert p[2:] == pytest.approx([0.0] * 4, abs=1e-9)
        raw = board.backend.pulse_count_at(0, board.clock.now()) / board.config.axes[0].steps_per_unit
        assert p[0] - raw == pytest.approx(START_ERROR, abs=0.002)
        # a goal from the new positions runs
        client = InMemoryActionClient(rig.root_nh, "arm_controller/follow_joint_trajectory")
        handle = client.send_goal(goal([0.0] * 6, duration=1.0, start=p))
        assert rig.run_until(handle.is_done, 10.0)
        assert handle.get_goal_status() == GoalStatus.SUCCEEDED, handle.get_result()
        # one unit alone, and a unit that cannot home
        assert hw.home(["joint_2"])["joint_2"][0]
        refused = hw.home(["joint_3"])["joint_3"]
        assert not refused[0] and "the units that can are joint_1, joint_2" in refused[1]
    finally:
        rig.shutdown()
        hw.shutdown()
        board.stop()


def test_a_switch_not_found_is_reported_naming_the_axis(homing_xml):
    board = serve(homing_xml)
    board.backend.switches[0] = {"min": -5.0}
    rig = make_rig(board.address[1], xml=homing_xml, start_controller=False)
    hw = rig.robot_hw
    try:
        assert rig.run_until(lambda: not hw.faulted_joints(), 10.0)
        result = hw.home(["joint_1", "joint_2"])
        ok, message = result["joint_1"]
        assert not ok and message.startswith(
            "HOME_SWITCH_NOT_FOUND: board 'stepper_arm_board', axis 'joint_1'"), message
        assert "did not close within max_travel 1 rad" in message
        assert not result["joint_2"][0]         # never reached: the board stops at the first failure
    finally:
        rig.shutdown()
        hw.shutdown()
        board.stop()


class OldBoard(BoardServer):
    """A board program that predates homing: its hello announces no feature."""

    def hello(self):
        env = super().hello()
        env.hello.ClearField("features")
        return env


def test_a_board_without_homing_is_refused_clearly(homing_xml):
    board = serve(homing_xml, OldBoard)
    rig = make_rig(board.address[1], xml=homing_xml, start_controller=False)
    hw = rig.robot_hw
    try:
        assert rig.run_until(lambda: not hw.faulted_joints(), 10.0)
        ok, message = hw.home(["joint_1"], timeout=5.0)["joint_1"]
        assert not ok and "does not announce the protocol feature 'home'" in message, message
        assert board.errors == []          # nothing it cannot read was sent
    finally:
        rig.shutdown()
        hw.shutdown()
        board.stop()
