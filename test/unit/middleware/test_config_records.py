"""The configuration records: each device module's reader turns its ``<unit>`` into one frozen record,
the driver's device and the simulated device are both built from it, and neither sees the other."""
from __future__ import annotations

import dataclasses
import glob
import os

import pytest

from rospy_control.devices import HardwareUnit, Motor
from rospy_control.devices.cubemars.codec import CubeMarsV3Scale
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_config.document import parse_hardware_xml
from rospy_control.hardware_config.records import ChannelConfig, UnitConfig
from rospy_control.middleware import Middleware
from rospy_control.middleware.configuration import read_configuration
from rospy_control.simulator import SimulatedRobot

from middleware_testutil import motor_xml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
#: the example hardware descriptions (the stepper arm's is a board's, read by the downlink)
EXAMPLES = sorted(p for p in glob.glob(os.path.join(ROOT, "config", "*hardware*.xml")) if "stepper" not in p)


def _needs(path: str) -> None:
    if "cia402" in os.path.basename(path):
        pytest.importorskip("canopen", reason="tools/bootstrap.sh installs canopen into .ws/venv")


@pytest.mark.parametrize("path", EXAMPLES, ids=os.path.basename)
def test_every_example_is_read_into_records_the_driver_and_the_simulator_share(path):
    _needs(path)
    mw = Middleware.from_xml(path)
    config = mw.config
    assert [c.name for c in config.channels] == list(mw.channels)
    for cc in config.channels:
        assert isinstance(cc, ChannelConfig)
        assert [u.name for u in cc.units] == [u.name for u in mw.channels[cc.name].units]
        assert cc.master_id == mw.channels[cc.name].master_id
    for uc in config.units:
        unit = mw.unit(uc.name)
        assert isinstance(uc, UnitConfig) and uc.kinds[0] == type(unit).__name__
        assert uc.where == unit.where or not unit.where
        for key in ("can_id", "node_id", "direction", "zero_offset", "joint"):
            if key in uc.arguments:   # what the reader read is what the device was built with
                assert getattr(uc, key) == getattr(unit, key), (uc.name, key)
    sim = SimulatedRobot(config, simulate=True)
    for channel, firmware in sim.simulators().items():
        for name, model in firmware.by_name.items():
            record = getattr(model, "unit", None) or getattr(model.joint, "unit", None)
            assert record is config.unit(name)
            assert not [k for k, v in vars(model).items() if isinstance(v, HardwareUnit)], name
    sim.stop()
    mw.shutdown()


def test_a_record_is_frozen_and_complete():
    config = read_configuration(parse_hardware_xml(motor_xml(1, motor_attrs='direction="-1"')))
    record = config.unit("m1")
    assert record.direction == -1 and record.can_id == 1
    # a value the element left out is the constructor's default, as the device uses it
    assert record.zero_offset == 0.0 and record.reply_dlc == Motor.DEFAULT_REPLY_DLC
    # (an MIT-firmware motor's element has no CubeMars attributes: the record still has their defaults)
    assert record.scale == CubeMarsV3Scale() and "scale" not in record.arguments
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.direction = 1
    with pytest.raises(TypeError):
        record.settings["direction"] = 1    # type: ignore[index]
    with pytest.raises(AttributeError, match="has no setting 'nonsense'"):
        record.nonsense
    assert record.is_a("Motor") and record.is_a("CanUnit") and not record.is_a("DamiaoMotor")


def test_a_value_only_the_simulated_device_cannot_carry_is_a_config_error_naming_the_file():
    # the simulator started alone (its own node) meets a value the CubeMars frames cannot carry
    xml = motor_xml(1, motor_attrs='firmware="cubemars_v3"').replace('can_id="1"', 'can_id="0x100"')
    with pytest.raises(ConfigError) as err:
        SimulatedRobot(xml, simulate=True)
    assert "m1" in str(err.value) and err.value.line is not None


class _OwnBuilder(HardwareUnit):
    """A unit type written before the readers: it builds itself in ``from_info``."""

    TYPE_NAME = "test/OwnBuilder"

    @classmethod
    def from_info(cls, info):
        unit = cls(info.name)
        unit.where = "built by itself"
        return unit


def test_a_unit_type_that_builds_itself_in_from_info_still_loads():
    xml = motor_xml(1, extra=f'<unit name="own" type="{__name__}:_OwnBuilder"/>')
    mw = Middleware.from_xml(xml)
    assert isinstance(mw.unit("own"), _OwnBuilder) and mw.unit("own").where == "built by itself"
    assert mw.config.unit("own").arguments == ()
    mw.shutdown()
