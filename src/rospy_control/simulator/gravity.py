"""Gravity in the simulated firmware: every simulated actuator feels the static gravity torque of the
links it carries at the current pose, computed from the URDF.

:class:`SimulatedGravity` is shared by the simulated joints of one robot, across all its simulated
channels and protocols (each channel's firmware runs its own thread, so it holds a lock).  A joint
is what :meth:`SimulatedFirmware.gravity_joints
<rospy_control.simulator.SimulatedFirmware.gravity_joints>` gives: an MIT
:class:`~rospy_control.simulator.SimulatedMotor`, or the
:class:`~rospy_control.simulator.joint.JointModel` of a protocol peer (DaMiao, ODrive,
RobStride, CiA 402, CubeMars V3); all offer ``unit``, ``joint_position()`` (the unit's radians as
the RobotHW sees them), ``gravity_load`` and ``gravity``.  A joint asks for a refresh before it
integrates (:meth:`SimulatedGravity.refresh`); at most every ``interval`` seconds it reads every
joint's position, maps it through the transmissions to joint positions, computes the holding torques
with :class:`~.gravity.GravityModel` and stores, in each joint, ``gravity_load`` = minus its share in
the motor's frame (the load the actuator must overcome).  The motor frame is the unit's side of any
gear the device converts through (an ODrive's ``ratio``, a CiA 402 drive's ``gear_ratio``), the frame
in which the unit reads its effort (``effort = direction * torque``): so the load an actuator feels
is exactly the effort the RobotHW must command to hold it.  The constant ``load_torque`` of a unit's
``<simulation>`` adds to it (for loads outside the URDF model).

Where the URDF comes from: :meth:`SimulatedRobot.attach_gravity
<rospy_control.simulator.robot.SimulatedRobot.attach_gravity>` (or its ``urdf`` argument) calls
:func:`attach_to_middleware`, given the URDF by the composition root: the driver node
(``robot_description``; the in-process fallback), :class:`~rospy_control.simulator.process.SimulatorHost`
(``--urdf``; the ``sim`` node passes ``/robot_description``), ``hw_check --urdf``, and
``rospy_control.composition`` for ``MiddlewareRobotHW.from_config(..., simulate=...)``.  Without a
URDF the simulator applies only the constant loads.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Dict, Iterable, List, Optional, Sequence, Tuple

from rospy_control.dynamics.actuation import ActuatorBinding, bind_actuators
from rospy_control.dynamics.gravity import GravityModel
from rospy_control.dynamics.options import GravityOptions, configuration_root, simulation_options
from rospy_control.log import get_logger
from rospy_control.transmission_interface import Transmission

__all__ = ["SimulatedGravity", "attach_simulated_gravity", "attach_to_middleware"]

logger = get_logger(__name__)


class SimulatedGravity:
    """The gravity load of a set of simulated joints (see the module docstring).

    :param model: the robot's gravity model (the simulation's gravity vector and payloads included).
    :param motors: ``{unit name: simulated joint}`` of every simulated actuator of the robot.
    :param bindings: transmissions between those motors and the model's joints.
    :param interval: seconds between two recomputations (the firmware threads ask far more often).
    """

    def __init__(self, model: GravityModel, motors: Dict[str, object], bindings: Sequence[ActuatorBinding],
                 interval: float = 0.001) -> None:
        self.model = model
        self.interval = interval
        self._plan: List[Tuple[List[Any], Tuple[int, ...], Transmission]] = [
            ([motors[a] for a in b.actuators], b.joints, b.transmission) for b in bindings]
        self._q = [0.0] * len(model.joint_names)
        self._lock = threading.Lock()
        self._last = -1e300
        #: recomputations done (for tests and the benchmark)
        self.updates = 0

    def refresh(self, now: float) -> None:
        """Recompute the loads if the last computation is older than ``interval`` (any thread)."""
        if now - self._last < self.interval:
            return
        with self._lock:
            if now - self._last < self.interval:
                return
            self._last = now
            self.update()

    def update(self) -> None:
        """Recompute every motor's ``gravity_load`` from the current positions."""
        q = self._q
        for motors, joints, tr in self._plan:
            pos = tr.actuator_to_joint_position([m.joint_position() for m in motors])
            for k, i in enumerate(joints):
                if i >= 0:
                    q[i] = pos[k]
        tau = self.model.compute(q)
        for motors, joints, tr in self._plan:
            act = tr.joint_to_actuator_effort([tau[i] if i >= 0 else 0.0 for i in joints])
            for m, t in zip(motors, act):
                m.gravity_load = -m.unit.direction * t
        self.updates += 1

    def loads(self) -> Dict[str, float]:
        """``{motor: gravity load in the motor's frame (N·m)}`` as last computed."""
        return {m.unit.name: m.gravity_load for motors, _, _ in self._plan for m in motors}


def attach_simulated_gravity(simulators: Iterable[Any], urdf: str, options: GravityOptions,
                             source: str = "robot_description",
                             interval: float = 0.001) -> Optional[SimulatedGravity]:
    """Give the simulated actuators of ``simulators`` (SimulatedFirmware objects; every protocol) the
    URDF's gravity.

    :returns: the shared load object, or None when ``options`` switch it off (``enabled="false"``) or
        no simulated motor drives a joint of the model (the motors keep their constant loads only).
    :raises ConfigError: a bad URDF or a payload on an unknown link.
    """
    sims = list(simulators)
    motors: Dict[str, object] = {}
    for sim in sims:
        for m in sim.gravity_joints():
            motors[m.unit.name] = m
    for m in motors.values():
        m.gravity = None  # type: ignore[attr-defined]
        m.gravity_load = 0.0  # type: ignore[attr-defined]
    if not options.enabled or not motors:
        return None
    model = GravityModel.from_urdf(urdf, source, options.gravity, options.payloads)
    units = [m.unit for m in motors.values()]  # type: ignore[attr-defined]
    bindings = bind_actuators(model, urdf, units, source)
    if not bindings:
        logger.warning("simulation: no simulated motor drives a joint of %s; no gravity applied", source)
        return None
    load = SimulatedGravity(model, motors, bindings, interval)
    load.update()
    for b in bindings:
        for a in b.actuators:
            motors[a].gravity = load  # type: ignore[attr-defined]
    extra = sum(p.mass for p in options.payloads)
    logger.info("simulation: gravity from %s (%.2f kg%s) on %d motors, g = (%g, %g, %g)", source,
                model.total_mass(), f", payload {extra:g} kg unknown to the URDF" if extra else "",
                sum(len(b.actuators) for b in bindings), *options.gravity)
    return load


def attach_to_middleware(middleware, urdf: Optional[str], hardware_xml: Optional[str] = None,
                         source: str = "robot_description") -> Optional[SimulatedGravity]:
    """:func:`attach_simulated_gravity` for every simulated channel of ``middleware`` (a
    :class:`~rospy_control.simulator.robot.SimulatedRobot`: ``simulators()`` and ``info``), with the
    root ``<simulation>`` options of the description it parsed, or of ``hardware_xml`` when that
    names another one (:func:`~.options.configuration_root`).  Nothing to do (None) without a URDF or
    without simulated channels."""
    sims = middleware.simulators()
    if not urdf or not sims:
        return None
    root = configuration_root(middleware, hardware_xml)
    return attach_simulated_gravity(sims.values(), urdf, simulation_options(root), source)


def timed_update_cost(load: SimulatedGravity, n: int = 2000) -> float:
    """Mean seconds of one :meth:`SimulatedGravity.update` (benchmark helper)."""
    t0 = time.perf_counter()
    for _ in range(n):
        load.update()
    return (time.perf_counter() - t0) / n
