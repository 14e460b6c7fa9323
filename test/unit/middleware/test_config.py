"""Hardware XML errors name file:line, the element, the attribute and what was expected."""
from __future__ import annotations

import pytest

from rospy_control.exceptions import ConfigError, PluginError
from rospy_control.middleware import ContactSensor, Motor, UnitGroup
from rospy_control.hardware_config.document import parse_hardware_xml
from rospy_control.testing.sim_rig import sim_of, simulated_middleware

from middleware_testutil import data_file, motor_xml


def load(src):
    return simulated_middleware(src)  # the driver's and the simulator's configuration, both checked


def test_minimal_file_builds_without_opening_anything():
    mw = load(data_file("minimal_ok.xml"))
    assert [u.name for u in mw.units()] == ["m1"]
    assert mw.channels["bus"].rate == 1000.0
    assert sim_of(mw).is_simulated("bus")
    assert not mw.running
    mw.shutdown()  # safe without start


def test_unknown_type_lists_known_types_with_file_and_line():
    path = data_file("invalid_unknown_type.xml")
    with pytest.raises(PluginError) as exc:
        load(path)
    msg = str(exc.value)
    assert f"{path}:5: <unit name='m2'>" in msg
    assert "unknown hardware unit type 'rospy_control/Moter'" in msg
    assert "rospy_control/Motor" in msg and "rospy_control/ImuSensor" in msg and "module:Class" in msg


def test_duplicate_name():
    path = data_file("invalid_duplicate_name.xml")
    with pytest.raises(ConfigError) as exc:
        load(path)
    msg = str(exc.value)
    assert msg.startswith(f"{path}:7: <unit name='knee'>: duplicate name 'knee'")
    assert f"first defined at {path}:5" in msg


def test_unit_bound_to_missing_channel():
    path = data_file("invalid_missing_channel.xml")
    with pytest.raises(ConfigError) as exc:
        load(path)
    assert str(exc.value) == (f"{path}:5: <unit name='m1'>: attribute 'channel'='can2': no such channel; "
                              "defined channels: can0")


def test_missing_can_id():
    path = data_file("invalid_missing_can_id.xml")
    with pytest.raises(ConfigError) as exc:
        load(path)
    assert str(exc.value) == (f"{path}:4: <unit name='m1'>: required attribute 'can_id' is missing: "
                              "expected an integer CAN id 0x000..0x7FF")


def test_limits_min_not_below_max():
    path = data_file("invalid_limits.xml")
    with pytest.raises(ConfigError) as exc:
        load(path)
    msg = str(exc.value)
    # lxml gives the line where a multi-line start tag ends (the t_min line here)
    assert msg.startswith(f"{path}:6: <limits> of <unit name='m1'>: attribute 't_min'=18.0 must be smaller")
    assert "'t_max'=-18.0" in msg


def test_bad_attribute_value_names_value_and_expectation():
    xml = motor_xml(1).replace('can_id="1"', 'can_id="one"')
    with pytest.raises(ConfigError, match=r"<xml string>:1: <unit name='m1'>: attribute 'can_id'='one': "
                                          r"expected an integer CAN id"):
        load(xml)


def test_unknown_attribute_lists_accepted_ones():
    xml = '<hardware>\n<channel name="b" interface="virtual" channel="x"/>\n' \
          '<unit name="m" type="rospy_control/Motor" channel="b" can_id="1" directoin="-1"/>\n</hardware>'
    with pytest.raises(ConfigError) as exc:
        load(xml)
    msg = str(exc.value)
    assert msg.startswith("<xml string>:3: <unit name='m'>: unknown attribute 'directoin'='-1'")
    assert "direction" in msg and "can_id" in msg


def test_duplicate_can_id_on_one_bus():
    xml = motor_xml(2).replace('can_id="2"', 'can_id="1"')
    with pytest.raises(ConfigError, match="CAN id 0x001 is already used by 'm1' on channel 'bus'"):
        load(xml)


def test_bad_bitrate_lists_valid_ones():
    xml = '<hardware><channel name="b" interface="pcan" channel="PCAN_USBBUS1" bitrate="300000"/></hardware>'
    with pytest.raises(ConfigError, match=r"<channel name='b'>: attribute 'bitrate'='300000': "
                                          r"expected a classic CAN bitrate: .*1000000"):
        load(xml)


def test_malformed_xml_has_line():
    with pytest.raises(ConfigError, match=r"<xml string>:3: malformed XML"):
        load("<hardware>\n<channel name='b'>\n</hardware>")


def test_missing_file():
    with pytest.raises(ConfigError, match="no_such.xml: hardware description file not found"):
        load("/tmp/no_such.xml")


def test_wrong_root_and_unexpected_element():
    with pytest.raises(ConfigError, match="the root element must be <hardware>"):
        load("<robot/>")
    with pytest.raises(ConfigError,
                       match=r":2: <motor name='x'>: unexpected element <motor> inside <hardware>"):
        load('<hardware>\n<motor name="x"/></hardware>')


def test_bad_simulation_attribute_fails_at_load_even_without_simulation():
    xml = motor_xml(1, sim_attrs='inertia="-1"', simulation='<simulation enabled="false"/>')
    with pytest.raises(ConfigError,
                       match=r"<simulation>: attribute 'inertia'='-1': expected a positive inertia"):
        load(xml)


def test_contact_simulation_referencing_unknown_motor():
    extra = ('<unit name="foot" type="rospy_control/ContactSensor" channel="bus" can_id="0x30">'
             '<simulation hfe_motor="m1" kfe_motor="knee"/></unit>')
    with pytest.raises(ConfigError, match="refers to motor 'knee', which is not a motor on channel 'bus'"):
        load(motor_xml(1, extra=extra))


def test_module_class_type_and_groups():
    xml = ('<hardware><channel name="b" interface="virtual" channel="x"/>'
           '<group name="leg" channel="b">'
           '<unit name="knee" type="rospy_control.devices:Motor" can_id="3" joint="knee_joint"/>'
           '<unit name="foot" type="rospy_control/ContactSensor" can_id="0x30" frame_id="foot_link"/>'
           '</group></hardware>')
    mw = load(xml)
    leg = mw.unit("leg")
    assert isinstance(leg, UnitGroup)
    assert [u.name for u in leg] == ["knee", "foot"]
    assert leg.find("foot").frame_id == "foot_link"
    assert mw.motor("knee").joint == "knee_joint"
    assert mw.units_of_type("rospy_control/ContactSensor") == [leg.find("foot")]
    assert mw.units_of_type(Motor) == [mw.unit("knee")]
    assert isinstance(mw.unit("foot"), ContactSensor)


def test_module_class_wrong_base():
    xml = ('<hardware><channel name="b" interface="virtual" channel="x"/>'
           '<unit name="u" type="collections:OrderedDict" channel="b"/></hardware>')
    with pytest.raises(PluginError,
                       match="does not derive from 'rospy_control.devices.HardwareUnit'"):
        load(xml)


def test_unknown_unit_lookup_lists_known():
    mw = load(motor_xml(2))
    from rospy_control.exceptions import HardwareError
    with pytest.raises(HardwareError,
                       match="Could not find unit 'm3' in middleware 't'; known units: m1, m2"):
        mw.unit("m3")


def test_parse_is_plain_data():
    info = parse_hardware_xml(data_file("minimal_ok.xml"))
    assert info.channels[0].name == "bus"
    assert info.units[0].element.line == 6
    assert info.units[0].element.attributes["can_id"] == "1"


def _shipped_configs():
    import glob
    import os
    from middleware_testutil import CONFIG
    names = sorted(os.path.basename(p) for p in glob.glob(os.path.join(CONFIG, "*.xml")))
    assert {"arm_hardware.xml", "quadruped_hardware.xml"} <= set(names)
    return names


@pytest.mark.parametrize("name", _shipped_configs())
def test_example_configs_load(name):
    """Every shipped hardware XML loads cleanly: nothing in it is beyond what its devices can carry.

    A trajectory board's file (root ``<robot_hardware>``, read by the board RobotHW) is checked by its
    own loader; every other file is a middleware ``<hardware>``."""
    import os
    from lxml import etree
    from middleware_testutil import CONFIG
    path = os.path.join(CONFIG, name)
    if etree.parse(path).getroot().tag == "robot_hardware":
        from rospy_control.downlink.hardware_xml import parse_board_xml
        desc = parse_board_xml(path)
        assert desc.axes
        return
    mw = load(path)
    assert all(sim_of(mw).is_simulated(c) for c in mw.channels)
    assert all(load_ <= 0.8 for load_ in mw.bus_load().values())


def test_hardware_element_attributes_are_checked():
    with pytest.raises(ConfigError,
                       match=r"<hardware name='x'>: attribute 'rate'='fast': expected a positive"):
        load('<hardware name="x" rate="fast"/>')
    with pytest.raises(ConfigError, match=r"unknown attribute 'rte'='5'; accepted attributes: "
                                          r"command_timeout, name, rate"):
        load('<hardware name="x" rte="5"/>')
    with pytest.raises(ConfigError,
                       match=r"attribute 'command_timeout'='-1': expected a number of seconds >= 0"):
        load('<hardware name="x" command_timeout="-1"/>')


def test_documented_example_loads_and_runs():
    import os
    import re
    from middleware_testutil import CONFIG
    text = open(os.path.join(CONFIG, "..", "docs", "hardware_xml.md")).read()
    xml = re.search(r"```xml\n(.*?)```", text, re.S).group(1)
    with load(xml) as mw:
        snap = mw.snapshot()
        assert not mw.faults()
        assert snap["lf_foot_contact"].in_contact
        assert snap["lf_knee_encoder"].position == pytest.approx(-1.4, abs=0.01)


def _doc_default(text: str, heading: str, attribute: str) -> str:
    """The default column of ``attribute``'s row in the table under ``heading`` of the XML schema doc."""
    section = text.split(heading, 1)[1].split("\n#", 1)[0]
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] == f"`{attribute}`":
            return cells[1]
    raise AssertionError(f"no row for '{attribute}' under '{heading}'")


def test_documented_defaults_are_the_code_defaults():
    """docs/hardware_xml.md states the defaults the classes define once, as DEFAULT_* constants."""
    import os
    import re
    from rospy_control.middleware import CanChannel, ImuSensor
    from rospy_control.simulator import SimulationSettings
    from rospy_control.devices import Encoder, ForceTorqueSensor
    path = os.path.join(os.path.dirname(__file__), "..", "..", "..", "docs", "hardware_xml.md")
    with open(path, encoding="utf-8") as stream:
        text = stream.read()
    hardware, channel, motor = "### `<hardware>`", "### `<channel>`", "### `rospy_control/Motor`"
    assert float(_doc_default(text, hardware, "rate")) == CanChannel.DEFAULT_RATE
    assert float(_doc_default(text, hardware, "command_timeout")) == CanChannel.DEFAULT_COMMAND_TIMEOUT
    for attribute in ("bitrate", "master_id", "reply_window", "fault_timeout", "max_bus_load"):
        documented = float(_doc_default(text, channel, attribute))
        assert documented == getattr(CanChannel, "DEFAULT_" + attribute.upper()), attribute
    documented = _doc_default(text, channel, "command_timeout")
    assert documented.endswith(f"else {CanChannel.DEFAULT_COMMAND_TIMEOUT}")
    for attribute in ("direction", "zero_offset", "reply_dlc", "max_temperature", "firmware_timeout"):
        documented = float(_doc_default(text, motor, attribute))
        assert documented == getattr(Motor, "DEFAULT_" + attribute.upper()), attribute
    assert _doc_default(text, motor, "watchdog_mode") == f"`{Motor.DEFAULT_WATCHDOG_MODE}`"
    gains = [float(g) for g in _doc_default(text, motor, "<gains>").split("/")]
    assert gains == [Motor.DEFAULT_POSITION_KP, Motor.DEFAULT_POSITION_KD, Motor.DEFAULT_VELOCITY_KD]
    # sensors and <simulation>: "`attribute` (default unit)" in the prose and the sensor table
    for cls in (ImuSensor, ContactSensor, ForceTorqueSensor, Encoder):
        row = next(line for line in text.splitlines() if line.startswith(f"| `{cls.TYPE_NAME}` |"))
        for a in cls.ATTRIBUTES:
            found = re.search(rf"`{a.name}` \(([0-9.e+-]+)", row)
            assert found is not None and float(found.group(1)) == a.default, (cls.TYPE_NAME, a.name)
    simulation = text.split("`<simulation>` (optional, inside `<channel>`)", 1)[1].split("\n\n", 1)[0]
    assert f"`enabled` ({str(SimulationSettings.DEFAULT_ENABLED).lower()})" in simulation
    assert float(re.search(r"`rate` \(([0-9.]+)", simulation).group(1)) == SimulationSettings.DEFAULT_RATE
    latency = float(re.search(r"`latency` \(([0-9.]+)", simulation).group(1))
    assert latency == SimulationSettings.DEFAULT_LATENCY


def _gains_xml(gains: str, limits: str = "") -> str:
    return ('<hardware name="t"><channel name="bus" interface="socketcan" channel="can9"/>\n'
            f'<unit name="lift" type="rospy_control/Motor" channel="bus" can_id="2">{limits}\n'
            f'<gains {gains}/></unit></hardware>')


@pytest.mark.parametrize("gains, attr, value, lo, hi, sent", [
    ('position_kd="9.0"', "position_kd", "9.0", "0.0", "5.0", "5"),
    ('velocity_kd="5.5"', "velocity_kd", "5.5", "0.0", "5.0", "5"),
    ('position_kp="501"', "position_kp", "501.0", "0.0", "500.0", "500"),
])
def test_a_gain_the_protocol_cannot_encode_is_a_start_up_error(gains, attr, value, lo, hi, sent):
    """MIT frames carry kp in 0..kp_max and kd in 0..kd_max: a gain beyond them would be clamped in
    every frame without a word, so loading fails naming the unit, the attribute, the value and the range."""
    with pytest.raises(ConfigError) as exc:
        load(_gains_xml(gains))
    assert str(exc.value) == (f"<xml string>:2: unit 'lift': {attr}={value} is outside what MIT mode can "
                              f"encode ({lo} .. {hi}); every frame would carry {sent} instead")


def test_the_gain_range_is_the_motor_s_own():
    """A motor whose firmware maps kd onto 0..10 may be given kd 9; at the edge of the range is fine."""
    mw = load(_gains_xml('position_kd="9.0"', '<limits kd_max="10"/>'))
    assert mw.motor("lift").position_kd == 9.0
    mw = load(_gains_xml('position_kp="500" position_kd="5" velocity_kd="0"'))
    assert mw.motor("lift").position_kp == 500.0
    with pytest.raises(ConfigError, match=r"position_kd=9.0 is outside what MIT mode can encode "
                                          r"\(0.0 \.\. 8.0\)"):
        load(_gains_xml('position_kd="9.0"', '<limits kd_max="8"/>'))
