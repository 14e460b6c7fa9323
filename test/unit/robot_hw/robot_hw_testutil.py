"""Helpers shared by the robot_hw tests (imported as a plain module)."""
from __future__ import annotations

import os
import time
from typing import Callable, Optional

import yaml

from rospy_control.testing import wait_until  # noqa: F401 - re-exported for the robot_hw tests

ROOT = os.path.normpath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
ARM_HW = os.path.join(ROOT, "config", "arm_hardware.xml")
ARM_URDF = os.path.join(ROOT, "urdf", "arm.urdf")
QUAD_HW = os.path.join(ROOT, "config", "quadruped_hardware.xml")
QUAD_URDF = os.path.join(ROOT, "urdf", "quadruped.urdf")
DT = 0.002


def load_yaml(name: str) -> dict:
    with open(os.path.join(ROOT, "config", name)) as stream:
        return yaml.safe_load(stream)


def spin(hw, seconds: float, before_write: Optional[Callable[[], None]] = None,
         until: Optional[Callable[[], bool]] = None) -> bool:
    """Run read -> (before_write) -> write with the real middleware threads for ``seconds`` (or until
    ``until()`` holds, checked after each write).  Returns whether ``until`` became true."""
    end = time.monotonic() + seconds
    t = 0.0
    while time.monotonic() < end:
        hw.read(t, DT)
        if before_write is not None:
            before_write()
        hw.write(t, DT)
        if until is not None and until():
            return True
        time.sleep(DT)
        t += DT
    return until is None


def motor(name: str, can_id: int, extra: str = "", sim: str = "", kp: float = 30.0, kd: float = 1.0,
          vkd: float = 1.0) -> str:
    return (f'<unit name="{name}" type="rospy_control/Motor" channel="bus" can_id="{can_id}" {extra}>'
            f'<gains position_kp="{kp}" position_kd="{kd}" velocity_kd="{vkd}"/>'
            f'<simulation inertia="0.01" damping="0.05" friction="0.02" {sim}/></unit>')


def hardware(*units: str, rate: float = 1000.0, fault_timeout: float = 0.05) -> str:
    return (f'<hardware name="t"><channel name="bus" interface="socketcan" channel="can9" rate="{rate}" '
            f'fault_timeout="{fault_timeout}"><simulation rate="2000"/></channel>{"".join(units)}</hardware>')


def joint(name: str, kind: str = "revolute", limit: str = 'lower="-3" upper="3" velocity="5" effort="10"',
          extra: str = "") -> str:
    lim = f"<limit {limit}/>" if limit else ""
    return (f'<joint name="{name}" type="{kind}"><parent link="base"/><child link="{name}_link"/>'
            f'<axis xyz="0 0 1"/>{lim}{extra}</joint><link name="{name}_link"/>')


IFACES = ("PositionJointInterface", "VelocityJointInterface", "EffortJointInterface")


def simple(name: str, joint_name: str, actuator: str, reduction: float = 1.0, offset: float = 0.0,
           ifaces=IFACES) -> str:
    hw = "".join(f"<hardwareInterface>hardware_interface/{i}</hardwareInterface>" for i in ifaces)
    return (f'<transmission name="{name}"><type>transmission_interface/SimpleTransmission</type>'
            f'<joint name="{joint_name}">{hw}<offset>{offset}</offset></joint>'
            f'<actuator name="{actuator}"><mechanicalReduction>{reduction}</mechanicalReduction></actuator>'
            '</transmission>')


def differential(name: str, j1: str, j2: str, a1: str, a2: str, ifaces=IFACES) -> str:
    hw = "".join(f"<hardwareInterface>hardware_interface/{i}</hardwareInterface>" for i in ifaces)
    return (f'<transmission name="{name}"><type>transmission_interface/DifferentialTransmission</type>'
            f'<joint name="{j1}"><role>joint1</role>{hw}</joint>'
            f'<joint name="{j2}"><role>joint2</role>{hw}</joint>'
            f'<actuator name="{a1}"><role>actuator1</role>'
            '<mechanicalReduction>1</mechanicalReduction></actuator>'
            f'<actuator name="{a2}"><role>actuator2</role>'
            '<mechanicalReduction>1</mechanicalReduction></actuator>'
            '</transmission>')


def urdf(*parts: str) -> str:
    return '<?xml version="1.0"?>\n<robot name="r"><link name="base"/>\n' + "\n".join(parts) + "\n</robot>"


def info(name: str, iface, *joints: str):
    """A ControllerInfo claiming ``joints`` through interface class ``iface``."""
    from rospy_control.hardware_interface import ControllerInfo, InterfaceResources
    return ControllerInfo(name, "test/Controller", [InterfaceResources(iface.TYPE_NAME, set(joints))])


def switch(hw, start=(), stop=(), timeout: float = 2.0, before_write=None):
    """prepare + do_switch, then run the loop until switch_result() is not ONGOING.

    Returns the list of results seen (first one right after do_switch)."""
    from rospy_control.hardware_interface import SwitchState
    start, stop = list(start), list(stop)
    assert hw.prepare_switch(start, stop)
    hw.do_switch(start, stop)
    results = [hw.switch_result()]

    def finished():
        results.append(hw.switch_result())
        return results[-1] != SwitchState.ONGOING

    if results[0] == SwitchState.ONGOING:
        spin(hw, timeout, before_write=before_write, until=finished)
    return results


def position(hw, joint_name: str) -> float:
    from rospy_control.hardware_interface import JointStateInterface
    return hw.get(JointStateInterface).get_handle(joint_name).get_position()
