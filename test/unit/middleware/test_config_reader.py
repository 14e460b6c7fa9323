"""The hardware XML's one reader: immutable located records, the same tree with or without lxml."""
import pickle

import pytest

from rospy_control.exceptions import ConfigError
from rospy_control.hardware_config.board import parse_board_xml
from rospy_control.hardware_config.document import ElementInfo, parse_hardware_xml
from rospy_control.hardware_config.reader import read_xml

HW = """<hardware name="arm">
  <!-- a comment is not an element -->
  <channel name="can0" type="rospy_control/CanChannel"/>
  <unit name="m1" type="rospy_control/Motor" channel="can0" can_id="1">
    <limits max_velocity="2"/>
  </unit>
</hardware>"""

BOARD = """<robot_hardware>
  <board name="arm_board" address="127.0.0.1:7700">
    <axis name="joint_1" steps_per_rad="1000"/>
    <axis name="joint_2" steps_per_rad="1000"/>
  </board>
</robot_hardware>"""


def test_records_are_immutable():
    info = parse_hardware_xml(HW)
    el = info.units[0].element
    with pytest.raises(TypeError):
        el.attributes["can_id"] = "2"       # type: ignore[index]
    with pytest.raises(AttributeError):
        el.tag = "group"                    # type: ignore[misc]
    assert isinstance(info.channels, tuple) and isinstance(info.units, tuple)
    assert isinstance(el.children, tuple)
    assert el.attributes["can_id"] == "1" and dict(el.attributes)["channel"] == "can0"


def test_element_built_from_a_dict_is_frozen_and_copies_it():
    attrs = {"inertia": "0.02"}
    el = ElementInfo("simulation", attrs, "arm.xml", 9, [])
    attrs["inertia"] = "5"
    assert el.attributes["inertia"] == "0.02" and el.children == ()
    with pytest.raises(TypeError):
        el.attributes["inertia"] = "1"      # type: ignore[index]
    assert el._replace(attributes={"x": "1"}).attributes.get("x") == "1"
    with pytest.raises(TypeError):
        el._replace(attributes={"x": "1"}).attributes["x"] = "2"   # type: ignore[index]
    assert pickle.loads(pickle.dumps(el)) == el and hash(el) == hash(pickle.loads(pickle.dumps(el)))


def test_board_records_are_immutable():
    desc = parse_board_xml(BOARD)
    assert isinstance(desc.axes, tuple) and desc.joints == ["joint_1", "joint_2"]
    with pytest.raises(AttributeError):
        desc.axes[0].steps_per_rad = 2.0    # type: ignore[misc]
    assert desc.axes[1].element.line == 4 and desc.line == 2


@pytest.mark.parametrize("text", [HW, BOARD])
def test_without_lxml_the_same_tree_and_lines(text, tmp_path):
    path = tmp_path / "hw.xml"
    path.write_text(text)
    for source in (text, str(path)):
        assert read_xml(source, use_lxml=False) == read_xml(source, use_lxml=True)


@pytest.mark.parametrize("use_lxml", [True, False])
def test_malformed_xml_names_file_and_line(use_lxml, tmp_path):
    path = tmp_path / "bad.xml"
    path.write_text("<hardware>\n  <unit name='a'>\n</hardware>\n")
    with pytest.raises(ConfigError) as err:
        read_xml(str(path), use_lxml=use_lxml)
    assert err.value.source == str(path) and err.value.line == 3
    assert f"{path}:3: malformed XML" in str(err.value)


def test_missing_file():
    with pytest.raises(ConfigError, match="nowhere.xml: hardware description file not found"):
        parse_hardware_xml("nowhere.xml")
    with pytest.raises(ConfigError, match="nowhere.xml: cannot read the hardware XML"):
        parse_board_xml("nowhere.xml")
