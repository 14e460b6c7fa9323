"""Construction of a :class:`~rospy_control.robot_hw.MiddlewareRobotHW`: checked parameters, then every
record, handle and interface built into fresh objects.

:func:`build` registers the interfaces in a staging :class:`~rospy_control.hardware_interface.RobotHW`
and returns them with the :class:`~._records.Records`; the caller adopts both only when everything
succeeded, so a configuration error leaves the RobotHW as it was.
"""
from __future__ import annotations

import os
from typing import List, Tuple

from rospy_control.exceptions import ConfigError, TransmissionInterfaceError
from rospy_control.hardware_interface import (
    ActuatorData,
    ActuatorHandle,
    ActuatorStateHandle,
    ActuatorStateInterface,
    ContactSensorData,
    ContactSensorHandle,
    ContactSensorInterface,
    EffortActuatorInterface,
    EffortJointInterface,
    ForceTorqueSensorData,
    ForceTorqueSensorHandle,
    ForceTorqueSensorInterface,
    ImuSensorData,
    ImuSensorHandle,
    ImuSensorInterface,
    JointStateInterface,
    PositionActuatorInterface,
    PositionJointInterface,
    PosVelJointHandle,
    PosVelJointInterface,
    RobotHW,
    VelocityActuatorInterface,
    VelocityJointInterface,
)
from rospy_control.log import get_logger
from rospy_control.middleware import ContactSensor, ForceTorqueSensor, ImuSensor, Middleware
from rospy_control.robot_hw._limits import load_limits, make_handles
from rospy_control.robot_hw._records import (
    HOLD_MODES, KIND_INTERFACES, KIND_MODE, Actuator, Group, Joint, Records,
)
from rospy_control.transmission_interface import TransmissionInterfaceLoader

__all__ = ["read_text", "check_params", "build"]

logger = get_logger(__name__)


def read_text(value: str, what: str) -> Tuple[str, str]:
    """(text, source name) from XML text or a file path."""
    if not isinstance(value, (str, bytes)) or not value:
        raise ConfigError(f"{what} must be XML text or a file path, got {value!r}")
    if isinstance(value, bytes):
        value = value.decode("utf-8")
    if value.lstrip().startswith("<"):
        return value, what
    if os.path.isfile(value):
        with open(value, encoding="utf-8") as stream:
            return stream.read(), value
    raise ConfigError(f"{what}: '{value}' is neither XML text nor an existing file")


def check_params(params: dict, params_source: str) -> str:
    """Check the options of ``params`` (see :mod:`rospy_control.robot_hw`); return the hold mode name.

    :raises ConfigError: a bad ``hold_mode``, flag or ``joint_limits`` value.
    """
    hold = params.get("hold_mode", "position")
    if not isinstance(hold, str) or hold not in HOLD_MODES:
        raise ConfigError(f"hold_mode: expected one of {', '.join(HOLD_MODES)}, got {hold!r}",
                          source=params_source)
    for key in ("posvel_interface", "skip_unknown_actuators"):
        if not isinstance(params.get(key, False), bool):
            raise ConfigError(f"{key}: expected true or false, got {params[key]!r}", source=params_source)
    if not isinstance(params.get("joint_limits", {}), dict):
        raise ConfigError("joint_limits: expected a mapping joint -> limits, got "
                          f"{params['joint_limits']!r}", source=params_source)
    return hold


def build(mw: Middleware, binding, params: dict, hold: str, urdf_source: str,
          params_source: str) -> Tuple[Records, RobotHW]:
    """Records and interfaces of ``mw``'s motors and sensors bound to joints by ``binding``.

    :returns: the records and a staging RobotHW holding every interface built.
    :raises ConfigError: the transmissions cannot be loaded, or bad limits.
    """
    rec = Records(hold)
    staging = RobotHW()
    for motor in mw.motors():
        if not motor.supports(rec.hold_mode):
            raise ConfigError(f"hold_mode: '{hold}' needs {rec.hold_mode.name} mode, which actuator "
                              f"'{motor.name}' ({type(motor).__name__}) does not have", source=params_source)
    _register_actuators(mw, rec, staging)
    _register_joints(binding, params, rec, staging, urdf_source, params_source)
    _register_sensors(mw, rec, staging)
    return rec, staging


def _register_actuators(mw: Middleware, rec: Records, hw: RobotHW) -> None:
    """Motors -> actuator records and interfaces."""
    ifaces = {cls: cls() for cls in (ActuatorStateInterface, PositionActuatorInterface,
                                     VelocityActuatorInterface, EffortActuatorInterface)}
    for motor in mw.motors():
        data = ActuatorData()
        state = ActuatorStateHandle(motor.name, data)
        ifaces[ActuatorStateInterface].register_handle(state)
        ifaces[PositionActuatorInterface].register_handle(ActuatorHandle(state, data, "command_position"))
        ifaces[VelocityActuatorInterface].register_handle(ActuatorHandle(state, data, "command_velocity"))
        ifaces[EffortActuatorInterface].register_handle(ActuatorHandle(state, data, "command_effort"))
        act = Actuator(motor.name, motor, data)
        rec.actuators.append(act)
        rec.acts_by_name[motor.name] = act
    for iface in ifaces.values():
        hw.register_interface(iface)


def _register_joints(binding, params: dict, rec: Records, hw: RobotHW, urdf_source: str,
                     params_source: str) -> None:
    """Transmissions -> joint interfaces (by the loader, from the checked binding), groups and joints."""
    loader = TransmissionInterfaceLoader(hw)
    try:
        loader.load(binding.infos, raise_errors=True)
    except TransmissionInterfaceError as err:
        raise ConfigError(str(err), source=urdf_source) from err
    loader.parse_result = binding.parse_result
    rec.loader = loader
    transmissions = {td.name: td.transmission for td in loader.get_data().transmission_data}
    joint_data = loader.get_data().joint_data
    jsi = hw.get(JointStateInterface)
    posvel_iface = None
    limits_params = {"joint_limits": params.get("joint_limits") or {}}
    for info in binding.infos:
        group = Group(info.name, info.where, transmissions[info.name], [], [], rec.hold_mode)
        for a in info.ordered_actuators():
            act = rec.acts_by_name[a.name]
            act.group = group
            group.actuators.append(act)
        for j in info.ordered_joints():
            kinds = []
            for k in ("position", "velocity", "effort"):
                iface = hw.get(KIND_INTERFACES[k])
                if iface is not None and iface.has_handle(j.name):
                    kinds.append(k)
            posvel_all = params.get("posvel_interface", False)
            if j.name in binding.posvel_joints or (
                    posvel_all and "position" in kinds and "velocity" in kinds):
                kinds.append("posvel")
            _check_capabilities(info, j.name, kinds, group)
            data = joint_data[j.name]
            assert jsi is not None  # the loader registered it for the joints of the loaded transmissions
            state = jsi.get_handle(j.name)  # JointStateInterface does not claim
            limits, soft = load_limits(j.name, binding.joint_elements.get(j.name), limits_params,
                                       urdf_source, params_source)
            joint = Joint(j.name, data, state, group, kinds, limits, soft)
            for kind in kinds:
                joint.handles[kind] = make_handles(state, data, kind, limits, soft)
            if "posvel" in kinds:
                if posvel_iface is None:
                    posvel_iface = PosVelJointInterface()
                    hw.register_interface(posvel_iface)
                posvel_iface.register_handle(PosVelJointHandle(state, data))
            group.joints.append(joint)
            rec.joints[j.name] = joint
        group.buf = [0.0] * len(group.joints), [0.0] * len(group.joints)
        rec.groups.append(group)
    for name in (params.get("joint_limits") or {}):
        if name not in rec.joints:
            logger.warning("%s/joint_limits/%s: no such joint in this RobotHW (joints: %s); ignored",
                           params_source, name, ", ".join(sorted(rec.joints)))
    # joints whose transmission the parser skipped: explain on lookup
    for joint, reason in binding.parse_result.skipped_joints.items():
        for cls in (JointStateInterface, PositionJointInterface, VelocityJointInterface,
                    EffortJointInterface, PosVelJointInterface):
            iface = hw.get(cls)
            if iface is not None:
                iface.explain_missing(joint, f"Its URDF transmission was skipped: {reason}")


def _check_capabilities(info, joint: str, kinds: List[str], group: Group) -> None:
    """Every interface offered for ``joint`` must be one its actuators' devices can carry (a command the
    device cannot take would otherwise fail in the control loop or be dropped without a word).

    :raises ConfigError: naming the transmission, joint, interface, actuator and device type.
    """
    for kind in kinds:
        mode = KIND_MODE[kind]
        for act in group.actuators:
            m = act.motor
            missing = None
            if not m.supports(mode):
                missing = f"no {mode.name} mode"
            elif kind == "posvel" and not m.CAPABILITIES.position_velocity_ff:
                missing = "no velocity feed-forward in its position command"
            if missing is not None:
                cls = PosVelJointInterface if kind == "posvel" else KIND_INTERFACES[kind]
                iface = cls.TYPE_NAME
                raise ConfigError(
                    f"transmission '{info.name}' ({info.where}) offers {iface} for joint '{joint}', but its "
                    f"actuator '{act.name}' ({type(m).__name__}) has {missing}; leave that "
                    "<hardwareInterface> out")


def _register_sensors(mw: Middleware, rec: Records, hw: RobotHW) -> None:
    """IMU, force-torque and contact units -> sensor data and interfaces (those with handles)."""
    imu_iface, ft_iface, contact_iface = ImuSensorInterface(), ForceTorqueSensorInterface(), \
        ContactSensorInterface()
    for unit in mw.units():
        if isinstance(unit, ImuSensor):
            s = unit.state()
            imu = ImuSensorData(s.orientation, s.orientation_covariance, s.angular_velocity,
                                s.angular_velocity_covariance, s.linear_acceleration,
                                s.linear_acceleration_covariance)
            imu_iface.register_handle(ImuSensorHandle(unit.name, unit.frame_id, imu))
            rec.imus.append((unit.name, imu))
        elif isinstance(unit, ForceTorqueSensor):
            s = unit.state()
            ft = ForceTorqueSensorData(s.force, s.torque)
            ft_iface.register_handle(ForceTorqueSensorHandle(unit.name, unit.frame_id, ft))
            rec.fts.append((unit.name, ft))
        elif isinstance(unit, ContactSensor):
            s = unit.state()
            contact = ContactSensorData(s.in_contact, s.force)
            contact_iface.register_handle(ContactSensorHandle(unit.name, unit.frame_id, contact))
            rec.contacts.append((unit.name, contact))
        else:
            continue
        rec.sensor_units[unit.name] = unit
    for iface in (imu_iface, ft_iface, contact_iface):
        if iface.get_names():
            hw.register_interface(iface)
