"""The driver node's configuration, without ROS: its private parameters, the controller YAML checks
and the RobotHW it builds.

Everything here takes plain values (a ``get(name, default)`` callable, the parameter tree as a
dict, a :class:`~rospy_control.controller_interface.node_handle.NodeHandle`), so it is unit-tested
without a ROS master; :mod:`rospy_control.adapter.driver` feeds it from rospy.  The parameters'
meaning is documented once, in the module docstring of :mod:`rospy_control.adapter.driver`.
"""
from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Optional

from rospy_control.controller_interface.node_handle import NodeHandle
from rospy_control.exceptions import ConfigError
from rospy_control.hardware_interface import ROBOT_HW, CombinedRobotHW, JointStateInterface, RobotHW
from rospy_control.middleware import Middleware
from rospy_control.plugins import Registry
from rospy_control.robot_hw import MiddlewareRobotHW

__all__ = [
    "DriverParams", "SENSOR_CONTROLLER_PACKAGES", "JSC_TYPE", "controller_namespaces",
    "check_controller_params", "default_trajectory_controllers", "default_sensor_controllers",
    "build_robot_hw", "load_robot_hw", "joint_names",
]

#: Types whose namespaces ``~sensor_controllers`` defaults to.
SENSOR_CONTROLLER_PACKAGES = ("imu_sensor_controller/", "force_torque_sensor_controller/",
                              "contact_sensor_controller/")
#: Type of ``~joint_state_controller`` when its namespace gives none.
JSC_TYPE = "joint_state_controller/JointStateController"


def hardware_config_param(get: Callable[[str, Any], Any], deprecations: List[str]) -> Any:
    """``~hardware_config``: the hardware XML (path or text), the one name the driver, the simulator
    node and the launch files use.  The former name ``~configure`` still works, with a deprecation
    warning appended to ``deprecations``; given both, ``~hardware_config`` wins."""
    value = get("hardware_config", None)
    old = get("configure", None)
    if old is not None:
        if value is None:
            deprecations.append("parameter ~configure is deprecated; name the hardware XML "
                                "~hardware_config (the launch argument's name)")
            return old
        if old != value:
            deprecations.append("parameters ~hardware_config and the deprecated ~configure differ; "
                                "using ~hardware_config")
    return value


def resolve_hardware_config(value: Any, package_root: Optional[str]) -> Any:
    """A relative hardware XML path made absolute: against the working directory if the file is
    there, else against the package (``hardware_config:=config/arm_hardware_damiao.xml`` works from
    ``make run``, whose nodes roslaunch starts in ``$ROS_HOME``).  XML text, absolute paths and
    paths found nowhere are returned unchanged (the loader's error names them)."""
    if not isinstance(value, str):
        return value
    text = value.strip()
    if not text or text.startswith("<") or os.path.isabs(text):
        return value
    if os.path.exists(text):
        return os.path.abspath(text)
    if package_root:
        candidate = os.path.join(package_root, text)
        if os.path.exists(candidate):
            return candidate
    return value


class DriverParams:
    """The node's private parameters with their defaults (one place; their meaning is in the
    module docstring of :mod:`rospy_control.adapter.driver`).

    :param get: ``get(name, default)`` for private names (``rospy.get_param("~" + name, default)``).
    :param namespace_robot_hardware: ``robot_hardware`` of the node's namespace (not private), used
        when ``~robot_hardware`` is not set: ros_control's ``combined_robot_hw`` nodes read it there,
        so a YAML loaded into the launch namespace works too.
    :raises ConfigError: a value of the wrong kind, naming the parameter (``~control_rate``, ...).
    """

    CONTROL_RATE = 200.0
    PUBLISH_RATE = 100.0
    DIAGNOSTICS_PERIOD = 1.0
    TELEMETRY_RATE = 10.0
    STATISTICS_PERIOD = 1.0
    #: s the driver waits for the simulator process before it falls back to the in-process one
    SIM_WAIT = 60.0

    def __init__(self, get: Callable[[str, Any], Any], namespace_robot_hardware: Any = None) -> None:
        #: ``~robot_hardware``: the RobotHW(s) to load (ros_control's combined_robot_hw shape); None:
        #: the CAN middleware RobotHW of ``~hardware_config``
        self.robot_hardware = get("robot_hardware", None)
        #: True: :attr:`robot_hardware` (and each part's parameters) are in the node's namespace
        self.robot_hardware_in_namespace = False
        if self.robot_hardware is None and namespace_robot_hardware is not None:
            self.robot_hardware = namespace_robot_hardware
            self.robot_hardware_in_namespace = True
        #: warnings for the log (a deprecated parameter name was used)
        self.deprecations: List[str] = []
        self.hardware_config = hardware_config_param(get, self.deprecations)
        self.sim = _as_bool("~sim", get("sim", True))
        # false unless asked for: a driver started on its own (rosrun, a test's subprocess) has no
        # simulator node to talk to; bringup.launch starts one and sets this true (its default)
        self.sim_process = _as_bool("~sim_process", get("sim_process", False))
        self.sim_bus_key = str(get("sim_bus_key", "") or "")
        self.sim_node = str(get("sim_node", "sim") or "sim")
        self.sim_wait = _non_negative("~sim_wait", get("sim_wait", self.SIM_WAIT))
        self.use_ros_control = _as_bool("~use_ros_control", get("use_ros_control", True))
        self.control_rate = _positive("~control_rate", get("control_rate", self.CONTROL_RATE))
        self.publish_rate_given = get("publish_rate", None) is not None
        self.publish_rate = _positive("~publish_rate", get("publish_rate", self.PUBLISH_RATE))
        self.start_jsc = _as_bool("~start_joint_state_controller",
                                  get("start_joint_state_controller", True))
        self.jsc_name = str(get("joint_state_controller", "joint_state_controller"))
        self.trajectory_controllers = _name_list("~trajectory_controllers",
                                                 get("trajectory_controllers", None))
        self.sensor_controllers = _name_list("~sensor_controllers", get("sensor_controllers", None))
        self.check_controllers = _as_bool("~check_controllers", get("check_controllers", True))
        self.diagnostics_period = _non_negative("~diagnostics_period",
                                                get("diagnostics_period", self.DIAGNOSTICS_PERIOD))
        self.telemetry_rate = _non_negative("~telemetry_rate", get("telemetry_rate", self.TELEMETRY_RATE))
        self.statistics_period = _non_negative("~statistics_period",
                                               get("statistics_period", self.STATISTICS_PERIOD))
        hold = get("hold_mode", "")
        self.hold_mode: Optional[str] = str(hold) if hold else None
        prio = get("loop_priority", -1)
        self.loop_priority: Optional[int] = int(prio) if prio is not None and int(prio) >= 0 else None
        if self.robot_hardware is not None:
            if not isinstance(self.robot_hardware, list) or not self.robot_hardware or \
                    not all(isinstance(n, str) and n for n in self.robot_hardware):
                raise ConfigError(f"expected a non-empty list of RobotHW names, got {self.robot_hardware!r}",
                                  "robot_hardware" if self.robot_hardware_in_namespace else "~robot_hardware")
        elif not isinstance(self.hardware_config, str) or not self.hardware_config.strip():
            raise ConfigError("private parameter ~hardware_config (formerly ~configure) is not set: give the "
                              "hardware XML path (or the XML text), e.g. _hardware_config:=$(rospack find "
                              "rospy_control)/config/arm_hardware.xml, or name your RobotHW in "
                              "~robot_hardware",
                              "~hardware_config")

    @property
    def configure(self) -> Optional[str]:
        """The hardware XML (the former name of :attr:`hardware_config`)."""
        return self.hardware_config

    def standalone_controllers(self, types: Dict[str, str]) -> List[str]:
        """Standalone branch: ``~trajectory_controllers`` (default: every ``*/JointTrajectoryController``
        of ``types``), then the ``~sensor_controllers`` not already listed (default: every sensor
        broadcaster of ``types``)."""
        trajectory = self.standalone_trajectory_controllers(types)
        sensors = self.sensor_controllers
        if sensors is None:
            sensors = default_sensor_controllers(types)
        return trajectory + [s for s in sensors if s not in trajectory]

    def standalone_trajectory_controllers(self, types: Dict[str, str]) -> List[str]:
        """``~trajectory_controllers``, default every ``*/JointTrajectoryController`` of ``types``."""
        if self.trajectory_controllers is not None:
            return list(self.trajectory_controllers)
        return default_trajectory_controllers(types)


def _as_bool(name: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = value.strip().lower() if isinstance(value, str) else None
    if text in ("true", "1", "yes", "on"):
        return True
    if text in ("false", "0", "no", "off"):
        return False
    if isinstance(value, int):
        return bool(value)
    raise ConfigError(f"expected true or false, got {value!r}", name)


def _number(name: str, value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"expected a number, got {value!r}", name) from None


def _positive(name: str, value: Any) -> float:
    v = _number(name, value)
    if not v > 0.0:
        raise ConfigError(f"expected a value > 0, got {value!r}", name)
    return v


def _non_negative(name: str, value: Any) -> float:
    v = _number(name, value)
    if v < 0.0:
        raise ConfigError(f"expected a value >= 0, got {value!r}", name)
    return v


def _name_list(name: str, value: Any) -> Optional[List[str]]:
    if value is None or value == "":
        return None
    if isinstance(value, str):  # "a b" or "a,b" from the command line
        return [v for v in value.replace(",", " ").split() if v]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return list(value)
    raise ConfigError(f"expected a list of controller names, got {value!r}", name)


# ---------------------------------------------------------------------------------------------
# Controller YAML (the parameter tree of the node's namespace, as a dict)
# ---------------------------------------------------------------------------------------------
def controller_namespaces(params: Dict[str, Any]) -> Dict[str, str]:
    """``{name: type}`` of every entry of ``params`` (one namespace's parameter dict) that looks like a
    controller (a dict with a string ``type``), sorted by name."""
    out = {}
    for name in sorted(params):
        value = params[name]
        if isinstance(value, dict) and isinstance(value.get("type"), str):
            out[name] = value["type"]
    return out


def check_controller_params(params: Dict[str, Any], namespace: str, joint_names: List[str],
                            registry: Registry) -> List[str]:
    """Check every controller namespace of ``params``; return warnings, raise on errors.

    Errors: a ``type`` that is not a string or names no known type (a typo), ``joints`` that is not
    a list of strings, a joint (``joints`` or ``joint``) the robot does not have.  A registered type
    whose module cannot be imported is only a warning (the spawner reports it when it is used).

    :raises ConfigError: naming the parameter (``<namespace>/<name>/...``).
    """
    warnings = []
    known = set(joint_names)
    ns = namespace.rstrip("/")
    for name in sorted(params):
        value = params[name]
        if not isinstance(value, dict) or "type" not in value:
            continue
        where = f"{ns}/{name}"
        type_name = value["type"]
        if not isinstance(type_name, str) or not type_name:
            raise ConfigError(f"controller type must be a non-empty string, got {type_name!r}",
                              where + "/type")
        if type_name not in registry and ":" not in type_name:
            raise ConfigError(f"unknown controller type '{type_name}'; known types: "
                              f"{', '.join(registry.names())}", where + "/type")
        try:
            registry.resolve(type_name)
        except ConfigError as err:
            if type_name in registry:
                warnings.append(f"controller '{name}': type '{type_name}' is not available: {err}")
            else:
                raise ConfigError(str(err), where + "/type") from None
        joints = value.get("joints")
        if joints is not None:
            if not isinstance(joints, list) or not all(isinstance(j, str) for j in joints):
                raise ConfigError(f"'joints' must be a list of joint names, got {joints!r}",
                                  where + "/joints")
            unknown = [j for j in joints if j not in known]
            if unknown:
                raise ConfigError(f"unknown joint(s) {', '.join(unknown)}; the robot's joints are "
                                  f"{', '.join(joint_names)}", where + "/joints")
        joint = value.get("joint")
        if isinstance(joint, str) and joint not in known:
            raise ConfigError(f"unknown joint '{joint}'; the robot's joints are {', '.join(joint_names)}",
                              where + "/joint")
    return warnings


def default_trajectory_controllers(types: Dict[str, str]) -> List[str]:
    """Names of ``types`` whose type is a ``*/JointTrajectoryController`` (sorted as ``types``)."""
    return [n for n, t in types.items() if t.endswith("/JointTrajectoryController")]


def default_sensor_controllers(types: Dict[str, str]) -> List[str]:
    """Names of ``types`` whose type is an IMU, force-torque or contact sensor broadcaster."""
    return [n for n, t in types.items() if t.startswith(SENSOR_CONTROLLER_PACKAGES)]


# ---------------------------------------------------------------------------------------------
# The RobotHW
# ---------------------------------------------------------------------------------------------
def build_robot_hw(middleware: Middleware, urdf: str, root_nh: NodeHandle,
                   hold_mode: Optional[str] = None) -> MiddlewareRobotHW:
    """The :class:`~rospy_control.robot_hw.MiddlewareRobotHW` over ``middleware`` for ``urdf``, with the
    joint limits of ``<root_nh>/joint_limits``.  The middleware stays owned by the caller.

    :raises ConfigError: the URDF, the transmissions or the joint limits are wrong, or a motor and a
        joint do not match.
    """
    params: Dict[str, Any] = {}
    limits = root_nh.get_param("joint_limits", None)
    if limits is not None:
        params["joint_limits"] = limits
    if hold_mode:
        params["hold_mode"] = hold_mode
    return MiddlewareRobotHW(middleware, urdf, params, urdf_source=root_nh.resolve_name("robot_description"),
                             params_source=root_nh.namespace, owns_middleware=False)


def load_robot_hw(root_nh: NodeHandle, robot_hw_nh: NodeHandle,
                  registry: Optional[Registry] = None) -> RobotHW:
    """The RobotHW(s) named by ``<robot_hw_nh>/robot_hardware`` (ros_control's ``combined_robot_hw``
    parameters): each ``<name>/type`` resolved (a registered ``pkg/Type``, ``from pkg import Type``,
    or ``module:Class``), constructed without arguments and initialised with
    ``init(root_nh, <robot_hw_nh>/<name>)``.  One name gives that RobotHW itself (so its own extras,
    such as ``status()``, stay visible), several a :class:`CombinedRobotHW` of them.

    :raises ConfigError: the list or a type is missing or wrong, a class cannot be imported, or a
        part's ``init`` raised or returned False (naming the parameter; the parts already loaded are
        shut down).
    """
    combined = CombinedRobotHW(registry=registry if registry is not None else ROBOT_HW)
    combined.load(root_nh, robot_hw_nh)
    parts = combined.robot_hws
    return parts[0] if len(parts) == 1 else combined


def joint_names(robot_hw: RobotHW) -> List[str]:
    """Joints of the RobotHW's JointStateInterface (sorted, as ``get_names()`` returns them)."""
    js = robot_hw.get(JointStateInterface)
    return list(js.get_names()) if js is not None else []
