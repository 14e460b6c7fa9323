"""``CombinedRobotHW``: several RobotHWs seen as one (``combined_robot_hw/combined_robot_hw.h``).

Build it from RobotHW objects::

    hw = CombinedRobotHW([arm_hw, leg_hw])

or from parameters shaped like ros_control's ``robot_hardware`` namespace::

    robot_hw_nh params:
        robot_hardware: [arm, legs]
        arm:  {type: my_pkg/ArmHW, ...}       # type: a lookup name (see below) or "module:Class"
        legs: {type: "my_pkg.legs:LegsHW", ...}

A lookup name ``pkg/Type`` is the one registered in :data:`ROBOT_HW`, else the class ``Type`` that
the Python package ``pkg`` offers (``from pkg import Type``): pluginlib's ``pkg/Type`` spelling
without a plugin XML.  ``module:Class`` always names a class directly.

``CombinedRobotHW.from_params(params)`` (a plain dict) or ``CombinedRobotHW().init(root_nh,
robot_hw_nh)`` (a node handle) loads each entry, constructs it without arguments and calls its
``init(root_nh, <robot_hw_nh>/<name>)``; any failure fails the whole load.

``read``/``write`` run every part in order; interfaces are merged through ``get()``.  ``start`` and
``shutdown`` (what a RobotHW does after ``init`` and when the node stops) are forwarded to every part;
a load that fails shuts down the parts already loaded.  The other capabilities of
:class:`~rospy_control.hardware_interface.robot_hw.RobotHW` are aggregated over the parts: faulted
joints and units are the union, ``reset_faults`` resets each part and merges what is still in fault,
``home`` goes to the part that has the unit,
``consume_reset_request`` is True when any part asks (each part's request is consumed),
``limit_command_steps`` goes to every part (each caps the motors of its own joints), readiness needs
every part ready, ``status`` concatenates the parts' reports and ``middlewares`` lists theirs.
``prepare_switch`` / ``do_switch`` / ``switch_result`` are forwarded to each part with the controller
lists filtered to the interfaces and resources that part owns; controllers that claim nothing are
passed to every part.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from rospy_control.exceptions import ConfigError, HardwareInterfaceError, PluginError
from rospy_control.hardware_interface.robot_hw import ControllerInfo, InterfaceResources, RobotHW, SwitchState
from rospy_control.log import get_logger
from rospy_control.plugins import Registry

logger = get_logger(__name__)

__all__ = ["CombinedRobotHW", "ROBOT_HW", "RobotHWRegistry", "ParamNodeHandle", "filter_controller_list",
           "merge_status"]


class RobotHWRegistry(Registry):
    """A :class:`Registry` that also resolves an unregistered ``pkg/Type`` as ``from pkg import Type``."""

    def resolve(self, type_name: str, where: Optional[str] = None) -> type:
        if type_name in self or ":" in type_name or type_name.count("/") != 1:
            return super().resolve(type_name, where)
        package, _, class_name = type_name.partition("/")
        if not package or not class_name:
            return super().resolve(type_name, where)
        try:
            return super().resolve(f"{package}:{class_name}", where)
        except PluginError as err:
            known = ", ".join(self.names()) or "(none)"
            prefix = f"{where}: " if where else ""
            raise PluginError(
                f"{prefix}unknown {self.kind} '{type_name}': not registered (known: {known}) and "
                f"'from {package} import {class_name}' failed ({err.reason}); "
                "or give a Python class as 'module:Class'.") from err


#: Registry of RobotHW types for ``robot_hardware/<name>/type`` (open to third parties:
#: ``ROBOT_HW.register("my_pkg/MyHW", "my_pkg.hw:MyHW")``).
ROBOT_HW = RobotHWRegistry("robot hardware type", RobotHW)
# Our own RobotHWs, resolvable from configuration alone (imported only when first used).
ROBOT_HW.register("rospy_control/MiddlewareRobotHW", "rospy_control.robot_hw:MiddlewareRobotHW")
ROBOT_HW.register("rospy_control/SimpleRobotHW", "rospy_control.examples.simple_robot_hw:SimpleRobotHW")
ROBOT_HW.register("rospy_control/BoardRobotHW", "rospy_control.downlink.robot_hw:BoardRobotHW")

_RAISE = object()


class ParamNodeHandle:
    """Minimal read-only node handle over a nested dict (used by :meth:`CombinedRobotHW.from_params`).

    Offers ``namespace``, ``child(name)``, ``resolve_name(name)``, ``has_param(key)`` and
    ``get_param(key, default)`` with ``/``-separated keys relative to the namespace.
    """

    def __init__(self, params: Dict[str, Any], namespace: str = "/") -> None:
        self._params = params
        self.namespace = namespace

    def resolve_name(self, name: str) -> str:
        return self.namespace.rstrip("/") + "/" + name

    def child(self, name: str) -> "ParamNodeHandle":
        sub = self.get_param(name, {})
        if not isinstance(sub, dict):
            sub = {}
        return ParamNodeHandle(sub, self.resolve_name(name))

    def _lookup(self, key: str):
        node: Any = self._params
        for part in [p for p in key.split("/") if p]:
            if not isinstance(node, dict) or part not in node:
                raise KeyError(key)
            node = node[part]
        return node

    def has_param(self, key: str) -> bool:
        try:
            self._lookup(key)
        except KeyError:
            return False
        return True

    def get_param(self, key: str, default: Any = _RAISE) -> Any:
        try:
            return self._lookup(key)
        except KeyError:
            if default is _RAISE:
                raise KeyError(f"parameter '{self.resolve_name(key)}' is not set") from None
            return default


def _owns(robot_hw: RobotHW, claimed: InterfaceResources) -> InterfaceResources:
    if claimed.hardware_interface not in robot_hw.get_names():
        return InterfaceResources(claimed.hardware_interface, set())
    owned = set(robot_hw.get_interface_resources(claimed.hardware_interface))
    return InterfaceResources(claimed.hardware_interface, set(claimed.resources) & owned)


def filter_controller_list(infos: Sequence[ControllerInfo], robot_hw: RobotHW) -> List[ControllerInfo]:
    """The controllers of ``infos`` restricted to what ``robot_hw`` owns.

    Each controller keeps only the (interface, resources) entries that ``robot_hw`` exposes; a
    controller left with nothing is dropped.  Controllers that claim no resource at all (e.g. a joint
    state controller) are passed through unchanged.
    """
    out: List[ControllerInfo] = []
    for info in infos:
        if not info.all_resources():
            out.append(info)
            continue
        kept = [r for r in (_owns(robot_hw, c) for c in info.claimed_resources) if r.resources]
        if kept:
            out.append(ControllerInfo(info.name, info.type, kept))
    return out


def _shutdown_part(hw: RobotHW) -> None:
    try:
        hw.shutdown()
    except Exception as err:  # noqa: BLE001 - shut down the others regardless
        logger.error("shutting down robot hardware %r failed: %s", hw, err)


def merge_status(reports: Sequence[Tuple[str, Dict[str, Any]]]) -> Dict[str, Any]:
    """One ``status()`` report out of ``(part name, report)`` pairs (see :meth:`CombinedRobotHW.status`)."""
    if len(reports) == 1:
        return dict(reports[0][1])
    out: Dict[str, Any] = {"joints": {}, "motors": {}, "sensors": {}, "values": []}
    holds: List[str] = []
    errors: List[str] = []
    warnings: List[str] = []
    pending: List[str] = []
    switch_errors: List[str] = []
    finished = True
    for name, report in reports:
        for key in ("joints", "motors", "sensors"):
            out[key].update(report.get(key) or {})
        out["values"].append(("robot_hw", name))
        out["values"].extend(report.get("values") or [])
        if report.get("hold_mode"):
            holds.append(f"{name}: {report['hold_mode']}")
        if report.get("error"):
            errors.append(f"{name}: {report['error']}")
        if report.get("warning"):
            warnings.append(f"{name}: {report['warning']}")
        sw = report.get("switch") or {}
        pending.extend(sw.get("pending") or [])
        if sw.get("error"):
            switch_errors.append(f"{name}: {sw['error']}")
        finished = finished and sw.get("finished", True)
    out["hold_mode"] = "; ".join(holds)
    out["switch"] = {"pending": pending, "error": "; ".join(switch_errors) or None, "finished": finished}
    out["error"] = "; ".join(errors) or None
    out["warning"] = "; ".join(warnings) or None
    return out


class CombinedRobotHW(RobotHW):
    """Merge several RobotHWs.

    :param robot_hws: parts, in read/write order.
    :param registry: where ``type`` strings are resolved by :meth:`init` (default :data:`ROBOT_HW`).
    """

    def __init__(self, robot_hws: Optional[Sequence[RobotHW]] = None, registry: Optional[Registry] = None):
        super().__init__()
        self._registry = registry if registry is not None else ROBOT_HW
        self._robot_hws: List[RobotHW] = []
        self._names: List[str] = []
        for index, hw in enumerate(robot_hws or ()):
            self.add_robot_hw(hw, f"robot_hw_{index}")

    def add_robot_hw(self, robot_hw: RobotHW, name: str = "") -> None:
        """Append a part (already initialised)."""
        if not isinstance(robot_hw, RobotHW):
            raise HardwareInterfaceError(f"CombinedRobotHW part {name!r} is not a RobotHW: {robot_hw!r}")
        self._robot_hws.append(robot_hw)
        self._names.append(name or f"robot_hw_{len(self._robot_hws) - 1}")
        self.register_interface_manager(robot_hw)

    @property
    def robot_hws(self) -> List[RobotHW]:
        return list(self._robot_hws)

    @property
    def robot_hw_names(self) -> List[str]:
        return list(self._names)

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_params(cls, params: Dict[str, Any], root_nh=None, registry: Optional[Registry] = None,
                    namespace: str = "/") -> "CombinedRobotHW":
        """Build from a dict holding ``robot_hardware`` and one ``<name>: {type: ...}`` per name.

        :raises ConfigError: missing/ill-typed ``robot_hardware`` or ``type``, unknown type
            (:class:`~rospy_control.exceptions.PluginError`), or a part whose ``init`` fails.
        """
        combined = cls(registry=registry)
        combined.load(root_nh, ParamNodeHandle(params, namespace))
        return combined

    def init(self, root_nh, robot_hw_nh) -> bool:
        """Load the parts listed in ``robot_hardware``; False (with an error log) on any failure."""
        try:
            self.load(root_nh, robot_hw_nh)
        except ConfigError as err:
            logger.error("%s", err)
            return False
        return True

    def load(self, root_nh, robot_hw_nh) -> None:
        """Like :meth:`init` but raising :class:`ConfigError` with the reason (the parts loaded
        before the failing one are shut down again)."""
        loaded = len(self._robot_hws)
        try:
            self._load(root_nh, robot_hw_nh)
        except BaseException:
            parts = self._robot_hws[loaded:]
            del self._robot_hws[loaded:]
            del self._names[loaded:]
            del self._managers[loaded:]
            self._combined.clear()
            for hw in reversed(parts):
                _shutdown_part(hw)
            raise

    def _load(self, root_nh, robot_hw_nh) -> None:
        where = robot_hw_nh.resolve_name("robot_hardware")
        if not robot_hw_nh.has_param("robot_hardware"):
            raise ConfigError("parameter is not set (expected a list of RobotHW names)", source=where)
        names = robot_hw_nh.get_param("robot_hardware")
        if not isinstance(names, (list, tuple)) or not all(isinstance(n, str) and n for n in names):
            raise ConfigError(f"expected a list of RobotHW names, got {names!r}", source=where)
        for name in names:
            type_key = f"{name}/type"
            type_where = robot_hw_nh.resolve_name(type_key)
            if not robot_hw_nh.has_param(type_key):
                raise ConfigError(
                    f"the type of robot hardware '{name}' is not specified "
                    f"(set '{type_where}', e.g. to a registered name or 'module:Class')",
                    source=type_where,
                )
            type_name = robot_hw_nh.get_param(type_key)
            if not isinstance(type_name, str) or not type_name:
                raise ConfigError(f"expected a type name ('pkg/Type' or 'module:Class'), got {type_name!r}",
                                  source=type_where)
            hw_cls = self._registry.resolve(type_name, where=type_where)
            try:
                hw = hw_cls()
            except Exception as err:  # noqa: BLE001 - a plugin's constructor may raise anything
                raise ConfigError(f"robot hardware '{name}' ({type_name}) cannot be constructed without "
                                  f"arguments: {type(err).__name__}: {err}", source=type_where) from err
            try:
                ok = hw.init(root_nh, robot_hw_nh.child(name))
            except Exception as err:  # noqa: BLE001 - a plugin's init may raise anything
                _shutdown_part(hw)
                why = str(err) if isinstance(err, ConfigError) else f"{type(err).__name__}: {err}"
                raise ConfigError(f"robot hardware '{name}' ({type_name}) failed to initialise: {why}",
                                  source=type_where) from err
            if not ok:
                _shutdown_part(hw)
                raise ConfigError(f"robot hardware '{name}' ({type_name}) failed to initialise "
                                  "(init returned False)", source=type_where)
            self.add_robot_hw(hw, name)

    # ------------------------------------------------------------------ lifecycle (optional hooks)
    def start(self) -> None:
        """Call ``start()`` of every part, in order."""
        for hw in self._robot_hws:
            hw.start()

    def shutdown(self) -> None:
        """Call ``shutdown()`` of every part, in reverse order; never raises."""
        for hw in reversed(self._robot_hws):
            _shutdown_part(hw)

    # ------------------------------------------------------------------ capabilities (aggregated)
    def faulted_joints(self) -> Dict[str, str]:
        """Union of the parts' faulted joints."""
        out: Dict[str, str] = {}
        for hw in self._robot_hws:
            out.update(hw.faulted_joints())
        return out

    def faulted_units(self) -> Dict[str, str]:
        """Union of the parts' faulted units."""
        out: Dict[str, str] = {}
        for hw in self._robot_hws:
            out.update(hw.faulted_units())
        return out

    def reset_faults(self, timeout: Optional[float] = None) -> Dict[str, str]:
        """Reset the faults of every part that has any, in order; what is still in fault, merged.  A
        part whose reset raises keeps its units in fault with the error as the reason."""
        still: Dict[str, str] = {}
        for name, hw in zip(self._names, self._robot_hws):
            if not hw.faulted_units():
                continue
            try:
                still.update(hw.reset_faults(timeout))
            except Exception as err:  # noqa: BLE001 - the other parts are reset regardless
                logger.error("Robot hardware '%s': reset_faults failed: %s", name, err)
                why = f"reset failed: {type(err).__name__}: {err}"
                still.update({unit: why for unit in hw.faulted_units()} or {name: why})
        return still

    def homeable_units(self) -> List[str]:
        """Every part's homeable units."""
        return [u for hw in self._robot_hws for u in hw.homeable_units()]

    def homing_at_start(self) -> List[str]:
        return [u for hw in self._robot_hws for u in hw.homing_at_start()]

    def homing_units(self) -> List[str]:
        return [u for hw in self._robot_hws for u in hw.homing_units()]

    def home(self, units: Sequence[str], timeout: Optional[float] = None) -> Dict[str, Tuple[bool, str]]:
        """Each unit homed by the part that has it (one part after the other); a unit no part has is
        reported as such."""
        out: Dict[str, Tuple[bool, str]] = {}
        for hw in self._robot_hws:
            mine = [u for u in units if u in hw.homeable_units()]
            if mine:
                out.update(hw.home(mine, timeout))
        for u in units:
            out.setdefault(u, (False, f"no part of the combined RobotHW can home '{u}'"))
        return out

    def consume_reset_request(self) -> bool:
        """True when any part asks for the controllers' restart (every part's request is consumed)."""
        requested = False
        for hw in self._robot_hws:
            if hw.consume_reset_request():
                requested = True
        return requested

    def limit_command_steps(self, nominal_period: float, periods: float = 2.0) -> Dict[str, float]:
        """Every part caps the motors of its own joints; the caps of all parts, merged."""
        caps: Dict[str, float] = {}
        for hw in self._robot_hws:
            caps.update(hw.limit_command_steps(nominal_period, periods))
        return caps

    def not_ready_joints(self) -> Dict[str, str]:
        """Union of the parts' joints not ready (the whole is ready when every part is)."""
        out: Dict[str, str] = {}
        for hw in self._robot_hws:
            out.update(hw.not_ready_joints())
        return out

    def status(self) -> Optional[Dict[str, Any]]:
        """The parts' reports concatenated: ``joints``, ``motors`` and ``sensors`` merged, ``values``
        concatenated (each after a ``robot_hw`` entry naming its part), ``hold_mode``, ``error`` and
        ``warning`` joined per part, a pending switch of any part pending."""
        reports = []
        for name, hw in zip(self._names, self._robot_hws):
            try:
                report = hw.status()
            except Exception as err:  # noqa: BLE001 - one part's failure is that part's error
                report = {"error": f"status failed: {type(err).__name__}: {err}"}
            if report is not None:
                reports.append((name, report if isinstance(report, dict)
                                else {"values": [("status", report)]}))
        if not reports:
            return None
        return merge_status(reports)

    def middlewares(self) -> List[Any]:
        """The parts' middlewares, in order."""
        out: List[Any] = []
        for hw in self._robot_hws:
            out.extend(m for m in hw.middlewares() if all(m is not o for o in out))
        return out

    # ------------------------------------------------------------------ cyclic
    def read(self, time: float, period: float) -> None:
        for hw in self._robot_hws:
            hw.read(time, period)

    def write(self, time: float, period: float) -> None:
        for hw in self._robot_hws:
            hw.write(time, period)

    # ------------------------------------------------------------------ switching
    def check_for_conflict(self, info: Sequence[ControllerInfo]) -> bool:
        """Default rule over all controllers, then each part's own rule on its filtered list."""
        if super().check_for_conflict(info):
            return True
        for hw in self._robot_hws:
            if type(hw).check_for_conflict is RobotHW.check_for_conflict:
                continue  # the default rule on a subset cannot find more than on the whole list
            if hw.check_for_conflict(filter_controller_list(info, hw)):
                return True
        return False

    def prepare_switch(self, start_list: Sequence[ControllerInfo],
                       stop_list: Sequence[ControllerInfo]) -> bool:
        for name, hw in zip(self._names, self._robot_hws):
            starts = filter_controller_list(start_list, hw)
            stops = filter_controller_list(stop_list, hw)
            if not hw.prepare_switch(starts, stops):
                logger.error("Robot hardware '%s' refused the controller switch.", name)
                return False
        return True

    def do_switch(self, start_list: Sequence[ControllerInfo], stop_list: Sequence[ControllerInfo]) -> None:
        for hw in self._robot_hws:
            hw.do_switch(filter_controller_list(start_list, hw), filter_controller_list(stop_list, hw))

    def switch_result(self, info: Optional[ControllerInfo] = None) -> SwitchState:
        """ERROR if any part reports ERROR, else ONGOING if any is ONGOING, else DONE.

        With ``info``, only the parts that own some of the controller's resources are asked (all of
        them for a controller that claims nothing).
        """
        results = []
        for hw in self._robot_hws:
            if info is None:
                results.append(hw.switch_result())
            else:
                filtered = filter_controller_list([info], hw)
                if filtered:
                    results.append(hw.switch_result(filtered[0]))
        if SwitchState.ERROR in results:
            return SwitchState.ERROR
        if SwitchState.ONGOING in results:
            return SwitchState.ONGOING
        return SwitchState.DONE
