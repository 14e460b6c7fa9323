"""The driver's simulator-process parameters and their wiring in launch/bringup.launch."""
from __future__ import annotations

import os
import xml.etree.ElementTree as ET

import pytest

from rospy_control.control_loop.driver_config import DriverParams
from rospy_control.exceptions import ConfigError

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _params(**values):
    return DriverParams(lambda name, default: values.get(name, default))


def test_defaults_keep_a_driver_started_on_its_own_self_contained():
    p = _params(configure="x.xml")
    assert p.sim and not p.sim_process
    assert (p.sim_bus_key, p.sim_node, p.sim_wait) == ("", "sim", 60.0)


def test_values_from_the_launch_file():
    p = _params(configure="x.xml", sim_process="true", sim_bus_key="robot2", sim_node="/my_sim", sim_wait="5")
    assert p.sim_process and (p.sim_bus_key, p.sim_node, p.sim_wait) == ("robot2", "/my_sim", 5.0)


@pytest.mark.parametrize("values, where", [
    ({"sim_process": "perhaps"}, "~sim_process"),
    ({"sim_wait": -1}, "~sim_wait"),
])
def test_errors_name_the_parameter(values, where):
    with pytest.raises(ConfigError) as err:
        _params(configure="x.xml", **values)
    assert err.value.source == where


def test_bringup_starts_the_sim_node_on_request_with_the_drivers_xml_and_bus_key():
    root = ET.parse(os.path.join(ROOT, "launch", "bringup.launch")).getroot()
    args = {a.get("name"): a.get("default") for a in root.findall("arg")}
    assert args["sim_process"] == "true" and args["sim_bus_key"] == ""  # the default: own node
    nodes = {n.get("name"): n for n in root.findall("node")}
    sim, driver = nodes["sim"], nodes["driver"]
    # not with a RobotHW of your own (robot_hw:=...) nor the stepper arm (its board program simulates
    # it), which have no CAN bus to simulate
    assert sim.get("type") == "sim_node"
    assert sim.get("if") == "$(eval sim and sim_process and robot_hw == '' and robot != 'stepper_arm')"
    sim_params = {p.get("name"): p.get("value") for p in sim.findall("param")}
    drv_params = {p.get("name"): p.get("value") for p in driver.findall("param")}
    assert sim_params["hardware_config"] == drv_params["hardware_config"] == "$(arg hardware_config)"
    assert sim_params["bus_key"] == drv_params["sim_bus_key"] == "$(arg sim_bus_key)"
    assert drv_params["sim_process"] == "$(arg sim_process)" and drv_params["sim_node"] == sim.get("name")
    script = os.path.join(ROOT, "scripts", "sim_node")
    assert os.access(script, os.X_OK)
    assert "from rospy_control.adapter.sim_node import main" in open(script).read()
