"""Controllers over one hardware interface (``Controller<T>``) or several (``MultiInterfaceController``).

Writing a controller::

    class MyController(Controller):
        INTERFACE = PositionJointInterface          # the one interface it uses

        def init(self, hw, root_nh, controller_nh):
            self.joint = hw.get_handle(controller_nh.get_param("joint"))   # claims the joint
            return True

        def update(self, time, period):
            self.joint.set_command(...)

Resource claiming works as in ros_control: before ``init`` the claims of the interface(s) are
cleared, every ``get_handle()`` on a *claiming* interface (joint command interfaces) records the name,
and after ``init`` the claims are collected into ``InterfaceResources`` entries and cleared again.
The controller manager uses them for ``check_for_conflict`` and ``list_controllers``.

* :class:`Controller`: exactly one entry (``INTERFACE.TYPE_NAME``), possibly with no resources
  (state interfaces do not claim).  ``init`` receives the interface itself.
* :class:`MultiInterfaceController`: one entry per declared interface the robot has.  ``init`` receives
  a reduced :class:`~rospy_control.hardware_interface.RobotHW` holding only the declared interfaces.
  All of them are required unless ``ALLOW_OPTIONAL_INTERFACES`` (or the constructor argument) is True;
  then absent ones are skipped and ``init`` checks what it got with ``hw.get(Interface)``.

``init`` returns True on success; returning ``None`` counts as success (a forgotten ``return True``),
``False`` fails the load.  Raising (``ControllerError``, ``ConfigError``, ``HardwareInterfaceError``...)
fails the load with that message, which is the preferred way to say what is wrong.
"""
from __future__ import annotations

from typing import List, Optional, Sequence, Type

from rospy_control.controller_interface.controller_base import ControllerBase, ControllerState
from rospy_control.exceptions import ControllerError
from rospy_control.hardware_interface import HardwareInterface, InterfaceResources, RobotHW

__all__ = ["Controller", "MultiInterfaceController"]


def _check_constructed(controller: ControllerBase) -> None:
    if controller.state != ControllerState.CONSTRUCTED:
        raise ControllerError(
            f"Cannot initialize controller {type(controller).__name__}: it is already initialized "
            f"(state '{controller.state.label}')")


def _init_ok(result: object) -> bool:
    return result is None or bool(result)


class Controller(ControllerBase):
    """Controller over a single hardware interface class :attr:`INTERFACE`."""

    #: The hardware interface class this controller uses (set by every subclass).
    INTERFACE: Optional[Type[HardwareInterface]] = None

    def init(self, hw: HardwareInterface, root_nh, controller_nh) -> bool:
        """Non-real-time initialisation: read params, get handles (claims), create ROS interfaces.

        :param hw: the robot's ``INTERFACE`` instance.
        :param root_nh: handle in the controller manager's namespace (topics like ``joint_states``).
        :param controller_nh: handle in ``<ns>/<controller name>`` (the controller's params).
        """
        return True

    def init_request(self, robot_hw, root_nh, controller_nh) -> List[InterfaceResources]:
        _check_constructed(self)
        iface_cls = self.INTERFACE
        if iface_cls is None:
            raise ControllerError(f"{type(self).__name__} does not declare its INTERFACE")
        hw = robot_hw.get(iface_cls)
        if hw is None:
            raise ControllerError(
                f"This controller requires a hardware interface of type '{iface_cls.TYPE_NAME}'. "
                "Make sure this is registered in the hardware_interface::RobotHW class. "
                f"Available interfaces in robot: {_enumerate(robot_hw.get_names())}")
        hw.clear_claims()
        try:
            if not _init_ok(self.init(hw, root_nh, controller_nh)):
                raise ControllerError(_init_false(self))
            claimed = [InterfaceResources(iface_cls.TYPE_NAME, set(hw.get_claims()))]
        finally:
            hw.clear_claims()
        self.state = ControllerState.INITIALIZED
        return claimed


class MultiInterfaceController(ControllerBase):
    """Controller over several hardware interface classes :attr:`INTERFACES`.

    :param allow_optional_interfaces: overrides :attr:`ALLOW_OPTIONAL_INTERFACES` when not None.
    """

    #: The hardware interface classes this controller uses (distinct classes).
    INTERFACES: Sequence[Type[HardwareInterface]] = ()
    #: If True, absent interfaces do not fail the load.
    ALLOW_OPTIONAL_INTERFACES = False

    def __init__(self, allow_optional_interfaces: Optional[bool] = None) -> None:
        super().__init__()
        if allow_optional_interfaces is not None:
            self.ALLOW_OPTIONAL_INTERFACES = bool(allow_optional_interfaces)
        #: The reduced RobotHW given to ``init`` (only the declared interfaces).
        self.robot_hw_ctrl: Optional[RobotHW] = None

    def init(self, robot_hw: RobotHW, root_nh, controller_nh) -> bool:
        """Non-real-time initialisation; ``robot_hw`` holds only the declared interfaces."""
        return True

    def init_request(self, robot_hw, root_nh, controller_nh) -> List[InterfaceResources]:
        _check_constructed(self)
        if not self.INTERFACES:
            raise ControllerError(f"{type(self).__name__} does not declare its INTERFACES")
        present = []
        for iface_cls in self.INTERFACES:
            hw = robot_hw.get(iface_cls)
            if hw is None:
                if not self.ALLOW_OPTIONAL_INTERFACES:
                    raise ControllerError(
                        f"This controller requires a hardware interface of type '{iface_cls.TYPE_NAME}', "
                        "but is not exposed by the robot. Available interfaces in robot:\n"
                        + "\n".join(f"- '{n}'" for n in robot_hw.get_names()))
                continue
            present.append((iface_cls, hw))
        reduced = RobotHW()
        for _, hw in present:
            reduced.register_interface(hw)
            hw.clear_claims()
        self.robot_hw_ctrl = reduced
        try:
            if not _init_ok(self.init(reduced, root_nh, controller_nh)):
                raise ControllerError(_init_false(self))
            claimed = [InterfaceResources(cls.TYPE_NAME, set(hw.get_claims())) for cls, hw in present]
        finally:
            for _, hw in present:
                hw.clear_claims()
        self.state = ControllerState.INITIALIZED
        return claimed


def _init_false(controller: ControllerBase) -> str:
    return f"Failed to initialize the controller ({type(controller).__name__}.init returned False)"


def _enumerate(names: Sequence[str]) -> str:
    return ", ".join(f"'{n}'" for n in names) or "(none)"
