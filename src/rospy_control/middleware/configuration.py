"""The hardware description as configuration records: every ``type`` resolved, every element read.

Phase 2 of the configuration (phase 1, the parse, is :mod:`rospy_control.hardware_config`): every
``type`` is resolved through :data:`UNIT_TYPES` / :data:`CHANNEL_TYPES` (``rospy_control/Motor`` or
``module:Class``) and each class's one reader (``read_settings``) reads and checks its element into a
frozen record (:mod:`rospy_control.hardware_config.records`).  :func:`read_configuration` returns
them all, before anything is built or opened, so a bad file never starts half-configured.

Two builders take the records: the :class:`~.middleware.Middleware` builds the driver's channels and
devices from them, and the simulator (:mod:`rospy_control.simulator`) builds the simulated devices
that answer on the bus -- from the same records, never from the driver's objects.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Dict, List, Type, cast

from rospy_control.bus.channel import CanChannel
from rospy_control.devices import (
    CanUnit, ContactSensor, Encoder, ExampleMotor, ForceTorqueSensor, HardwareUnit, ImuSensor, Motor,
    UnitGroup,
)
from rospy_control.hardware_config.document import (
    AttributeReader, HardwareInfo, non_negative, positive, to_float,
)
from rospy_control.hardware_config.records import ChannelConfig, RobotConfig, UnitConfig
from rospy_control.plugins import Registry

__all__ = ["UNIT_TYPES", "CHANNEL_TYPES", "read_configuration", "unit_class", "channel_class"]

#: Hardware unit types usable in ``<unit type="...">`` / ``<group type="...">``.
UNIT_TYPES = Registry("hardware unit type", HardwareUnit)
for _cls in (Motor, ExampleMotor, Encoder, ImuSensor, ContactSensor, ForceTorqueSensor, UnitGroup):
    UNIT_TYPES.register(_cls.TYPE_NAME, _cls)
# The protocol devices, imported when an XML names them (CiA 402 needs the optional canopen package).
for _name, _target in (("rospy_control/DamiaoMotor", "rospy_control.devices.damiao.device:DamiaoMotor"),
                       ("rospy_control/OdriveAxis", "rospy_control.devices.odrive.device:OdriveAxis"),
                       ("rospy_control/RobStrideMotor",
                        "rospy_control.devices.robstride.device:RobStrideMotor"),
                       ("rospy_control/Cia402Drive", "rospy_control.devices.cia402.device:Cia402Drive")):
    UNIT_TYPES.register(_name, _target)
#: Channel types usable in ``<channel type="...">``.
CHANNEL_TYPES = Registry("channel type", CanChannel)
CHANNEL_TYPES.register(CanChannel.TYPE_NAME, CanChannel)


def unit_class(config: UnitConfig) -> Type[HardwareUnit]:
    """The class the record's ``type`` names (the one that read it)."""
    el = config.element
    where = f"{el.source}:{el.line}: {el.describe()}"
    return cast(Type[HardwareUnit], UNIT_TYPES.resolve(config.type_name, where=where))


def channel_class(type_name: str, where: str = "") -> Type[CanChannel]:
    # resolve() checks that the class derives from the registry's base class
    return cast(Type[CanChannel], CHANNEL_TYPES.resolve(type_name, where=where or None))


def read_configuration(info: HardwareInfo) -> RobotConfig:
    """Every channel and unit of ``info`` read by its class into its record.

    :raises ConfigError: an unknown type, a bad attribute or a bad combination, naming file:line.
    """
    root = AttributeReader(info.element, ignore=("name",))
    rate = root.get("rate", to_float, None, check=positive, expected="a positive rate in Hz")
    command_timeout = root.get("command_timeout", to_float, None, check=non_negative,
                               expected="a number of seconds >= 0 (0 = off)")
    root.finish()
    channels: Dict[str, ChannelConfig] = {}
    for ci in info.channels:
        where = f"{ci.element.source}:{ci.element.line}: {ci.element.describe()}"
        channels[ci.name] = channel_class(ci.type, where).read_config(ci, rate, command_timeout)
    units: List[UnitConfig] = []
    on_channel: Dict[str, List[UnitConfig]] = {name: [] for name in channels}
    for ui in info.units:
        el = ui.element
        where = f"{el.source}:{el.line}: {el.describe()}"
        unit_cls = cast(Type[HardwareUnit], UNIT_TYPES.resolve(ui.type, where=where))
        if (ui.members or el.tag == "group") and not issubclass(unit_cls, UnitGroup):
            raise el.error(f"type '{ui.type}' is not a group type (expected a UnitGroup subclass)")
        config = unit_cls.read_config(ui)
        units.append(config)
        if issubclass(unit_cls, CanUnit):
            if ui.channel is None:
                raise el.error("a unit on a bus needs a channel: set attribute 'channel' here or on an "
                               "enclosing <group>")
            on_channel[ui.channel].append(config)
    return RobotConfig(info.name, info.source, info.element,
                       tuple(replace(c, units=tuple(on_channel[n])) for n, c in channels.items()),
                       tuple(units))
