"""``TransmissionInterfaceLoader``: wire a RobotHW's actuators to joints through URDF transmissions.

Usage (inside a RobotHW that already registered ActuatorStateInterface and the
Position/Velocity/EffortActuatorInterface it supports)::

    loader = TransmissionInterfaceLoader(robot_hw)            # RobotTransmissions created if not given
    loader.load(urdf_xml, raise_errors=True)                   # or load(infos) / load(info) -> bool
    ...
    def read(self, time, period):   # after filling actuator data
        loader.propagate_state()                               # actuator -> joint state
    def write(self, time, period):
        loader.propagate_commands()                            # joint -> actuator commands

For each transmission (ros_control's rules): the ``<type>`` must be known; all joints must list the
same *set* of hardware interfaces; for each interface name a requisite provider is looked up in
:data:`REQUISITE_PROVIDERS` (``hardware_interface/JointStateInterface``,
``hardware_interface/{Position,Velocity,Effort}JointInterface`` and
``hardware_interface/BiDirectional{Position,Velocity,Effort}JointInterface``; a bare name such as
``PositionJointInterface`` is accepted with a deprecation warning).  Unknown interface names, and
interfaces whose actuator side is missing, are skipped with a warning; the transmission fails only if
**no** interface could be set up.  Loading a list stops at the first failing transmission.

A provider first looks up the actuator handles it needs (ActuatorStateInterface, and the matching
actuator command interface), then creates the joint data (NaN-initialised
:class:`~rospy_control.hardware_interface.JointData`), registers JointStateHandle and, for command
providers, a JointHandle (command field ``command_position`` / ``command_velocity`` /
``command_effort``) in the RobotHW -- creating the joint interfaces if absent and reusing the
RobotHW's own interface and joint data when it already has them (so ros_control#260 does not happen
here) -- and registers ActuatorToJointState + JointToActuator<X> transmission handles.  BiDirectional
providers also register JointToActuatorState and ActuatorToJoint<X> (inverse propagation).

Joints whose URDF transmission the parser skipped get a hint on the RobotHW's joint interfaces, so a
controller asking for one fails with the skip reason (house style), and :meth:`require_joint` raises it.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from rospy_control.exceptions import PluginError, TransmissionInterfaceError
from rospy_control.hardware_interface import (
    ActuatorStateInterface,
    EffortActuatorInterface,
    EffortJointInterface,
    JointData,
    JointHandle,
    JointStateHandle,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    RobotHW,
    VelocityActuatorInterface,
    VelocityJointInterface,
)
from rospy_control.log import get_logger
from rospy_control.plugins import Registry
from rospy_control.transmission_interface.parser import ParseResult, TransmissionParser
from rospy_control.transmission_interface.transmission import Transmission
from rospy_control.transmission_interface.transmission_info import TransmissionInfo
import rospy_control.transmission_interface.transmission_interface as ti
from rospy_control.transmission_interface.transmission_interface import RobotTransmissions
from rospy_control.transmission_interface.transmission_loader import TRANSMISSION_LOADERS, load_transmission

logger = get_logger(__name__)

__all__ = [
    "TransmissionInterfaceLoader",
    "TransmissionLoaderData",
    "TransmissionData",
    "RequisiteProvider",
    "REQUISITE_PROVIDERS",
]


@dataclass
class TransmissionData:
    """One successfully processed (transmission, hardware interface) pair."""

    name: str
    hardware_interface: str
    transmission: Transmission


@dataclass
class TransmissionLoaderData:
    """What the loader built (ros_control's ``TransmissionLoaderData`` / ``getData()``)."""

    robot_hw: RobotHW
    robot_transmissions: RobotTransmissions
    joint_data: Dict[str, JointData] = field(default_factory=dict)
    transmission_data: List[TransmissionData] = field(default_factory=list)


def _ensure_interface(manager, cls):
    iface = manager.get(cls)
    if iface is None:
        iface = cls()
        manager.register_interface(iface)
    return iface


class RequisiteProvider:
    """Sets up one joint-space hardware interface for a transmission (ros_control's plugin base).

    Class attributes of the standard providers: ``JOINT_INTERFACE`` (None for joint state only),
    ``ACTUATOR_INTERFACE``, ``JOINT_FIELD`` (joint command field), forward/inverse handle and
    interface classes, ``BIDIRECTIONAL``.
    """

    JOINT_INTERFACE: Optional[type] = None
    ACTUATOR_INTERFACE: Optional[type] = None
    JOINT_FIELD = "command"
    FORWARD = None          # (JointToActuator<X>Handle, JointToActuator<X>Interface)
    INVERSE = None          # (ActuatorToJoint<X>Handle, ActuatorToJoint<X>Interface)
    BIDIRECTIONAL = False

    def load(self, info: TransmissionInfo, transmission: Transmission, data: TransmissionLoaderData) -> None:
        """Register joints and transmission handles; raise :class:`TransmissionInterfaceError` if the
        actuator side is missing (nothing is registered then)."""
        robot_hw, transmissions = data.robot_hw, data.robot_transmissions
        actuators = info.ordered_actuators()
        joints = info.ordered_joints()
        # 1. actuator side first, so that a failure leaves no dangling joints
        act_state = self._actuator_handles(robot_hw, ActuatorStateInterface, actuators, info)
        act_cmd = (self._actuator_handles(robot_hw, self.ACTUATOR_INTERFACE, actuators, info)
                   if self.ACTUATOR_INTERFACE is not None else [])
        act_data = [h.get_data() for h in act_state]
        # 2. joint side
        state_iface = _ensure_interface(robot_hw, JointStateInterface)
        with_abs = transmission.has_actuator_to_joint_absolute_position() and all(
            getattr(d, "absolute_position", None) is not None for d in act_data)
        with_torque = transmission.has_actuator_to_joint_torque_sensor() and all(
            getattr(d, "torque_sensor", None) is not None for d in act_data)
        joint_data, joint_cmd = [], []
        for joint in joints:
            if state_iface.has_handle(joint.name):
                state = state_iface.get_handle(joint.name)
                jdata = state.get_data()
            else:
                jdata = data.joint_data.get(joint.name) or JointData.nan(with_abs, with_torque)
                state = JointStateHandle(joint.name, jdata)
                state_iface.register_handle(state)
            data.joint_data[joint.name] = jdata
            joint_data.append(jdata)
            if self.JOINT_INTERFACE is not None:
                cmd_iface = _ensure_interface(robot_hw, self.JOINT_INTERFACE)
                if cmd_iface.has_handle(joint.name):
                    handle = cmd_iface._handles[joint.name]  # no claim: this is not a controller
                else:
                    handle = JointHandle(state, jdata, self.JOINT_FIELD)
                    cmd_iface.register_handle(handle)
                joint_cmd.append(handle)
        # 3. transmission handles
        # (state handle and interface, command handle and interface): forward, then inverse
        directions: List[Tuple[Tuple[Any, Any], Any]] = [
            ((ti.ActuatorToJointStateHandle, ti.ActuatorToJointStateInterface), self.FORWARD)]
        if self.BIDIRECTIONAL:
            directions.append(((ti.JointToActuatorStateHandle, ti.JointToActuatorStateInterface),
                               self.INVERSE))
        for (state_handle, state_iface), command in directions:
            states = _ensure_interface(transmissions, state_iface)
            if not states.has_handle(info.name):
                states.register_handle(state_handle(info.name, transmission, act_data, joint_data))
            if command is not None:
                handle_cls, iface_cls = command
                _ensure_interface(transmissions, iface_cls).register_handle(
                    handle_cls(info.name, transmission, act_cmd, joint_cmd))

    @staticmethod
    def _actuator_handles(robot_hw: RobotHW, iface_cls, actuators, info: TransmissionInfo) -> List:
        iface = robot_hw.get(iface_cls)
        if iface is None:
            raise TransmissionInterfaceError(
                f"Transmission '{info.name}' ({info.where}): the RobotHW does not expose "
                f"'{iface_cls.TYPE_NAME}'."
            )
        handles = []
        for actuator in actuators:
            if not iface.has_handle(actuator.name):
                raise TransmissionInterfaceError(
                    f"Transmission '{info.name}' ({info.where}): actuator '{actuator.name}' is not in "
                    f"'{iface_cls.TYPE_NAME}' (known: {', '.join(iface.get_names()) or 'none'})."
                )
            handles.append(iface.get_handle(actuator.name))
        return handles


def _provider(name: str, joint_iface, act_iface, field_name, forward, inverse, bidirectional):
    return type(name, (RequisiteProvider,), {
        "JOINT_INTERFACE": joint_iface, "ACTUATOR_INTERFACE": act_iface, "JOINT_FIELD": field_name,
        "FORWARD": forward, "INVERSE": inverse, "BIDIRECTIONAL": bidirectional, "__module__": __name__,
    })


JointStateInterfaceProvider = _provider(
    "JointStateInterfaceProvider", None, None, "command", None, None, False)
_POS = (PositionJointInterface, PositionActuatorInterface, "command_position",
        (ti.JointToActuatorPositionHandle, ti.JointToActuatorPositionInterface),
        (ti.ActuatorToJointPositionHandle, ti.ActuatorToJointPositionInterface))
_VEL = (VelocityJointInterface, VelocityActuatorInterface, "command_velocity",
        (ti.JointToActuatorVelocityHandle, ti.JointToActuatorVelocityInterface),
        (ti.ActuatorToJointVelocityHandle, ti.ActuatorToJointVelocityInterface))
_EFF = (EffortJointInterface, EffortActuatorInterface, "command_effort",
        (ti.JointToActuatorEffortHandle, ti.JointToActuatorEffortInterface),
        (ti.ActuatorToJointEffortHandle, ti.ActuatorToJointEffortInterface))
PositionJointInterfaceProvider = _provider("PositionJointInterfaceProvider", *_POS, False)
VelocityJointInterfaceProvider = _provider("VelocityJointInterfaceProvider", *_VEL, False)
EffortJointInterfaceProvider = _provider("EffortJointInterfaceProvider", *_EFF, False)
BiDirectionalPositionJointInterfaceProvider = _provider(
    "BiDirectionalPositionJointInterfaceProvider", *_POS, True)
BiDirectionalVelocityJointInterfaceProvider = _provider(
    "BiDirectionalVelocityJointInterfaceProvider", *_VEL, True)
BiDirectionalEffortJointInterfaceProvider = _provider(
    "BiDirectionalEffortJointInterfaceProvider", *_EFF, True)

#: ``<hardwareInterface>`` name → RequisiteProvider class (open registry).
REQUISITE_PROVIDERS = Registry("requisite provider", RequisiteProvider)
for _name, _cls in (
    ("JointStateInterface", JointStateInterfaceProvider),
    ("PositionJointInterface", PositionJointInterfaceProvider),
    ("VelocityJointInterface", VelocityJointInterfaceProvider),
    ("EffortJointInterface", EffortJointInterfaceProvider),
    ("BiDirectionalPositionJointInterface", BiDirectionalPositionJointInterfaceProvider),
    ("BiDirectionalVelocityJointInterface", BiDirectionalVelocityJointInterfaceProvider),
    ("BiDirectionalEffortJointInterface", BiDirectionalEffortJointInterfaceProvider),
):
    REQUISITE_PROVIDERS.register(f"hardware_interface/{_name}", _cls)


class TransmissionInterfaceLoader:
    """Load URDF transmissions into a RobotHW and a :class:`RobotTransmissions`.

    :param robot_hw: a RobotHW exposing (at least) ``ActuatorStateInterface``.
    :param robot_transmissions: where transmission interfaces go; created if None.
    :raises TransmissionInterfaceError: ``robot_hw`` is not a RobotHW.
    """

    def __init__(self, robot_hw: RobotHW, robot_transmissions: Optional[RobotTransmissions] = None,
                 loaders: Optional[Registry] = None, providers: Optional[Registry] = None) -> None:
        if not isinstance(robot_hw, RobotHW):
            raise TransmissionInterfaceError(f"Invalid robot hardware: {robot_hw!r} is not a RobotHW.")
        if robot_transmissions is None:
            robot_transmissions = RobotTransmissions()
        elif not isinstance(robot_transmissions, RobotTransmissions):
            raise TransmissionInterfaceError(
                f"Invalid robot transmissions: {robot_transmissions!r} is not a RobotTransmissions.")
        self._data = TransmissionLoaderData(robot_hw, robot_transmissions)
        self._loaders = loaders if loaders is not None else TRANSMISSION_LOADERS
        self._providers = providers if providers is not None else REQUISITE_PROVIDERS
        self.parse_result: Optional[ParseResult] = None

    # ------------------------------------------------------------------ data
    def get_data(self) -> TransmissionLoaderData:
        return self._data

    @property
    def robot_transmissions(self) -> RobotTransmissions:
        return self._data.robot_transmissions

    def propagate_state(self) -> None:
        """Actuator → joint state for every transmission (call in ``read()``)."""
        iface = self._data.robot_transmissions.get(ti.ActuatorToJointStateInterface)
        if iface is not None:
            iface.propagate()

    def propagate_commands(self) -> None:
        """Joint → actuator commands for every transmission and interface (call in ``write()``)."""
        for cls in (ti.JointToActuatorPositionInterface, ti.JointToActuatorVelocityInterface,
                    ti.JointToActuatorEffortInterface):
            iface = self._data.robot_transmissions.get(cls)
            if iface is not None:
                iface.propagate()

    def require_joint(self, joint_name: str) -> JointData:
        """The joint data of ``joint_name``.

        :raises TransmissionInterfaceError: the joint was not loaded; when its URDF transmission was
            skipped, the message gives the parser's reason.
        """
        if joint_name in self._data.joint_data:
            return self._data.joint_data[joint_name]
        if self.parse_result is not None and self.parse_result.skip_reason(joint_name):
            self.parse_result.require_joint(joint_name)  # raises with the reason
        raise TransmissionInterfaceError(f"Joint '{joint_name}' was not loaded from any transmission.")

    # ------------------------------------------------------------------ loading
    def load(self, source: Union[str, bytes, TransmissionInfo, Sequence[TransmissionInfo]],
             raise_errors: bool = False) -> bool:
        """Load a URDF (text), a list of TransmissionInfo, or one TransmissionInfo.

        Returns False (with an error log) on failure, or raises
        :class:`TransmissionInterfaceError` when ``raise_errors`` is true.  A URDF without
        transmissions fails; a list stops at its first failing transmission.
        """
        try:
            self._load(source)
        except TransmissionInterfaceError as err:
            if raise_errors:
                raise
            logger.error("%s", err)
            return False
        return True

    def _load(self, source) -> None:
        if isinstance(source, TransmissionInfo):
            self._load_info(source)
            return
        if isinstance(source, (str, bytes)):
            result = TransmissionParser.parse(source)
            self.parse_result = result
            if not result:
                detail = f".\n{result.summary()}" if result.skipped else "."
                raise TransmissionInterfaceError("No transmissions to load from the URDF" + detail)
            try:
                for info in result:
                    self._load_info(info)
            finally:
                self._explain_skipped(result)
            return
        for info in list(source):
            self._load_info(info)

    def _explain_skipped(self, result: ParseResult) -> None:
        robot_hw = self._data.robot_hw
        for joint, reason in result.skipped_joints.items():
            hint = f"Its URDF transmission was skipped: {reason}"
            for cls in (JointStateInterface, PositionJointInterface, VelocityJointInterface,
                        EffortJointInterface):
                iface = _ensure_interface(robot_hw, cls) if cls is JointStateInterface else robot_hw.get(cls)
                if iface is not None and hasattr(iface, "explain_missing"):
                    iface.explain_missing(joint, hint)

    def _resolve_provider(self, name: str, info: TransmissionInfo):
        key = name
        if key not in self._providers and "/" not in key and f"hardware_interface/{key}" in self._providers:
            logger.warning(
                "Transmission '%s' (%s): deprecated syntax, please prepend 'hardware_interface/' to '%s' "
                "within the <hardwareInterface> tag.", info.name, info.where, name)
            key = f"hardware_interface/{key}"
        try:
            return self._providers.resolve(key)
        except PluginError as err:
            logger.warning("Transmission '%s' (%s): skipping hardware interface '%s': %s",
                           info.name, info.where, name, err.reason)
            return None

    def _load_info(self, info: TransmissionInfo) -> None:
        if not info.joints:
            raise TransmissionInterfaceError(f"Transmission '{info.name}' ({info.where}) has no joints.")
        reference = set(info.joints[0].hardware_interfaces)
        for joint in info.joints[1:]:
            if set(joint.hardware_interfaces) != reference or len(joint.hardware_interfaces) != len(
                    info.joints[0].hardware_interfaces):
                raise TransmissionInterfaceError(
                    f"Transmission '{info.name}' ({info.where}) has joints with different hardware "
                    "interfaces "
                    f"({info.joints[0].name}: {info.joints[0].hardware_interfaces}, {joint.name}: "
                    f"{joint.hardware_interfaces}). This is currently unsupported."
                )
        transmission = load_transmission(info, self._loaders)
        loaded = 0
        problems: List[str] = []
        for iface_name in info.joints[0].hardware_interfaces:
            provider_cls = self._resolve_provider(iface_name, info)
            if provider_cls is None:
                problems.append(f"'{iface_name}' is not a known joint interface")
                continue
            try:
                provider_cls().load(info, transmission, self._data)
            except TransmissionInterfaceError as err:
                logger.warning("Skipping hardware interface '%s': %s", iface_name, err)
                problems.append(f"'{iface_name}': {err}")
                continue
            self._data.transmission_data.append(TransmissionData(info.name, iface_name, transmission))
            loaded += 1
        if not loaded:
            raise TransmissionInterfaceError(
                f"Failed to load transmission '{info.name}' ({info.where}): it contains no valid hardware "
                f"interfaces ({'; '.join(problems)})."
            )
