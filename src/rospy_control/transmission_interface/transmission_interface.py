"""Transmission handles and interfaces: propagate values between actuator and joint data.

A handle binds one transmission to the live data of its actuators and joints (lists ordered like the
transmission's roles) and :meth:`propagate` maps them:

* ``ActuatorToJointStateHandle`` -- actuator position/velocity/effort (+ absolute position and torque
  sensor when every actuator has them and the transmission supports them) → joint; used in ``read()``.
* ``JointToActuatorStateHandle`` -- joint state → actuator state (simulation, BiDirectional).
* ``JointToActuator{Position,Velocity,Effort}Handle`` -- joint command → actuator command; used in
  ``write()``.
* ``ActuatorToJoint{Position,Velocity,Effort}Handle`` -- actuator command → joint command
  (BiDirectional).

Command handles read/write one value per element: an element is either a hardware handle with
``get_command()``/``set_command()`` (e.g. an :class:`~rospy_control.hardware_interface.ActuatorHandle`)
or a data object whose attribute ``actuator_field`` / ``joint_field`` (default ``"command"``) holds it.

Construction checks (ros_control's preconditions): a transmission is given; not both lists are
empty; each non-empty list has the transmission's size; no element is None; every element has the
needed field.  Violations raise :class:`~rospy_control.exceptions.TransmissionInterfaceError`.
"""
from __future__ import annotations

from typing import Any, Callable, List, Sequence, Tuple, cast

from rospy_control.exceptions import TransmissionInterfaceError
from rospy_control.hardware_interface import InterfaceManager, ResourceManager
from rospy_control.transmission_interface.transmission import Transmission

__all__ = [
    "TransmissionHandle",
    "ActuatorToJointStateHandle",
    "ActuatorToJointPositionHandle",
    "ActuatorToJointVelocityHandle",
    "ActuatorToJointEffortHandle",
    "JointToActuatorStateHandle",
    "JointToActuatorPositionHandle",
    "JointToActuatorVelocityHandle",
    "JointToActuatorEffortHandle",
    "ActuatorToJointStateInterface",
    "ActuatorToJointPositionInterface",
    "ActuatorToJointVelocityInterface",
    "ActuatorToJointEffortInterface",
    "JointToActuatorStateInterface",
    "JointToActuatorPositionInterface",
    "JointToActuatorVelocityInterface",
    "JointToActuatorEffortInterface",
    "RobotTransmissions",
]

_Port = Tuple[Callable[[], float], Callable[[float], None]]


def _port(obj: Any, field: str) -> _Port:
    if field == "command" and callable(getattr(obj, "get_command", None)) and callable(
        getattr(obj, "set_command", None)
    ):
        return obj.get_command, obj.set_command
    return (lambda: getattr(obj, field)), (lambda value: setattr(obj, field, value))


class TransmissionHandle:
    """Common validation and storage (``transmission_interface::TransmissionHandle``).

    :param name: handle name (the transmission's name).
    :param transmission: the :class:`Transmission`.
    :param actuators: actuator data objects / handles, ordered by role.
    :param joints: joint data objects / handles, ordered by role.
    """

    _FIELDS: Sequence[str] = ()

    def __init__(self, name: str, transmission: Transmission, actuators: Sequence[Any] = (),
                 joints: Sequence[Any] = (), actuator_field: str = "command", joint_field: str = "command"):
        self._name = name
        prefix = f"Transmission handle '{name}'"
        if not isinstance(transmission, Transmission):
            raise TransmissionInterfaceError(f"{prefix}: no transmission given (got {transmission!r}).")
        actuators, joints = list(actuators), list(joints)
        if not actuators and not joints:
            raise TransmissionInterfaceError(f"{prefix}: all data vectors are empty.")
        for kind, items, expected in (("actuator", actuators, transmission.num_actuators),
                                      ("joint", joints, transmission.num_joints)):
            if items and len(items) != expected:
                raise TransmissionInterfaceError(
                    f"{prefix}: {kind} data has {len(items)} element(s), the transmission expects {expected}."
                )
            for index, item in enumerate(items):
                if item is None:
                    raise TransmissionInterfaceError(f"{prefix}: {kind} data element {index} is None.")
        self._transmission = transmission
        self._actuators = actuators
        self._joints = joints
        self._actuator_field = actuator_field
        self._joint_field = joint_field
        self._validate()

    def _validate(self) -> None:
        for kind, items, field in (("actuator", self._actuators, self._actuator_field),
                                   ("joint", self._joints, self._joint_field)):
            for item in items:
                if field == "command" and callable(getattr(item, "set_command", None)):
                    continue
                if not hasattr(item, field):
                    raise TransmissionInterfaceError(
                        f"Transmission handle '{self._name}': {kind} data {item!r} has no '{field}' field."
                    )

    def get_name(self) -> str:
        return self._name

    def get_transmission(self) -> Transmission:
        return self._transmission

    def propagate(self) -> None:
        raise NotImplementedError


class _StateHandle(TransmissionHandle):
    """State propagation over position, velocity, effort (+ optional absolute position, torque)."""

    def __init__(self, name: str, transmission: Transmission, actuators: Sequence[Any] = (),
                 joints: Sequence[Any] = ()) -> None:
        super().__init__(name, transmission, actuators, joints, "position", "position")

    def _validate(self) -> None:
        for kind, items in (("actuator", self._actuators), ("joint", self._joints)):
            for item in items:
                for field in ("position", "velocity", "effort"):
                    if not hasattr(item, field):
                        raise TransmissionInterfaceError(
                            f"Transmission handle '{self._name}': {kind} data {item!r} has no "
                            f"'{field}' field."
                        )


class ActuatorToJointStateHandle(_StateHandle):
    """Actuator state → joint state (``read()``)."""

    def propagate(self) -> None:
        tr, acts, jnts = self._transmission, self._actuators, self._joints
        for field, fn in (("position", tr.actuator_to_joint_position),
                          ("velocity", tr.actuator_to_joint_velocity),
                          ("effort", tr.actuator_to_joint_effort)):
            for joint, value in zip(jnts, fn([getattr(a, field) for a in acts])):
                setattr(joint, field, value)
        for field, has, fn in (
            ("absolute_position", tr.has_actuator_to_joint_absolute_position,
             tr.actuator_to_joint_absolute_position),
            ("torque_sensor", tr.has_actuator_to_joint_torque_sensor, tr.actuator_to_joint_torque_sensor),
        ):
            values = [getattr(a, field, None) for a in acts]
            if None in values or not has() or not all(hasattr(j, field) for j in jnts):
                continue
            for joint, value in zip(jnts, fn(cast(List[float], values))):  # no None (checked above)
                setattr(joint, field, value)


class JointToActuatorStateHandle(_StateHandle):
    """Joint state → actuator state (inverse propagation, e.g. for simulation)."""

    def propagate(self) -> None:
        tr, acts, jnts = self._transmission, self._actuators, self._joints
        for field, fn in (("position", tr.joint_to_actuator_position),
                          ("velocity", tr.joint_to_actuator_velocity),
                          ("effort", tr.joint_to_actuator_effort)):
            for act, value in zip(acts, fn([getattr(j, field) for j in jnts])):
                setattr(act, field, value)


class _CommandHandle(TransmissionHandle):
    _A2J = True
    _METHOD = ""

    def __init__(self, name: str, transmission: Transmission, actuators: Sequence[Any] = (),
                 joints: Sequence[Any] = (), actuator_field: str = "command", joint_field: str = "command"):
        super().__init__(name, transmission, actuators, joints, actuator_field, joint_field)
        self._act_ports: List[_Port] = [_port(a, actuator_field) for a in self._actuators]
        self._jnt_ports: List[_Port] = [_port(j, joint_field) for j in self._joints]
        self._fn = getattr(transmission, self._METHOD)

    def propagate(self) -> None:
        src, dst = (self._act_ports, self._jnt_ports) if self._A2J else (self._jnt_ports, self._act_ports)
        for (_, setter), value in zip(dst, self._fn([getter() for getter, _ in src])):
            setter(value)


class ActuatorToJointPositionHandle(_CommandHandle):
    """Actuator position values → joint position values (default fields ``command``)."""

    _METHOD = "actuator_to_joint_position"


class ActuatorToJointVelocityHandle(_CommandHandle):
    _METHOD = "actuator_to_joint_velocity"


class ActuatorToJointEffortHandle(_CommandHandle):
    _METHOD = "actuator_to_joint_effort"


class JointToActuatorPositionHandle(_CommandHandle):
    """Joint position commands → actuator position commands (``write()``)."""

    _A2J = False
    _METHOD = "joint_to_actuator_position"


class JointToActuatorVelocityHandle(_CommandHandle):
    _A2J = False
    _METHOD = "joint_to_actuator_velocity"


class JointToActuatorEffortHandle(_CommandHandle):
    _A2J = False
    _METHOD = "joint_to_actuator_effort"


class _TransmissionInterface(ResourceManager):
    """Handles keyed by transmission name; :meth:`propagate` runs them all in name order."""

    def propagate(self) -> None:
        for handle in self.get_handles():
            handle.propagate()  # type: ignore[attr-defined]


def _iface(class_name: str, handle_type: type) -> type:
    return type(class_name, (_TransmissionInterface,), {
        "TYPE_NAME": f"transmission_interface::{class_name}",
        "LOOKUP_NAME": f"transmission_interface/{class_name}",
        "CLAIMS": False,
        "HANDLE_TYPE": handle_type,
        "__module__": __name__,
        "__doc__": f"Transmission interface of :class:`{handle_type.__name__}` handles.",
    })


ActuatorToJointStateInterface = _iface("ActuatorToJointStateInterface", ActuatorToJointStateHandle)
ActuatorToJointPositionInterface = _iface("ActuatorToJointPositionInterface", ActuatorToJointPositionHandle)
ActuatorToJointVelocityInterface = _iface("ActuatorToJointVelocityInterface", ActuatorToJointVelocityHandle)
ActuatorToJointEffortInterface = _iface("ActuatorToJointEffortInterface", ActuatorToJointEffortHandle)
JointToActuatorStateInterface = _iface("JointToActuatorStateInterface", JointToActuatorStateHandle)
JointToActuatorPositionInterface = _iface("JointToActuatorPositionInterface", JointToActuatorPositionHandle)
JointToActuatorVelocityInterface = _iface("JointToActuatorVelocityInterface", JointToActuatorVelocityHandle)
JointToActuatorEffortInterface = _iface("JointToActuatorEffortInterface", JointToActuatorEffortHandle)


class RobotTransmissions(InterfaceManager):
    """Holds the robot's transmission interfaces (``transmission_interface::RobotTransmissions``)."""
