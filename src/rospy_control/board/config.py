"""The board's axes and settings, from a YAML or XML file (or the original board's numbers by default).

YAML::

    board: {name: stepper_arm_board, buffer_capacity: 256, heartbeat_timeout: 1.5,
            feedback_rate: 100, start_tolerance: 0.01}
    axes:
      - {name: joint_1, steps_per_rad: 2291.83, max_velocity: 3.14, max_acceleration: 10,
         max_step_rate: 8000, min_position: -3.14, max_position: 3.14, direction: 1,
         pins: {step: 17, dir: 27}, encoder: {counts_per_rad: 6366.2, pins: {a: 5, b: 6}}}

XML: ``<board name=".." buffer_capacity=".."><axis name=".." steps_per_rad=".." .../></board>``
with ``<pins step=".." dir=".."/>``, ``<encoder counts_per_rad=".."/>`` and ``<homing switch="min"
search_speed=".." backoff_speed=".." position=".." max_travel=".."/>`` children (YAML: a ``homing``
mapping with the same keys).
"""
from __future__ import annotations

import math
import os
from typing import Any, Dict, List, Optional

from ..exceptions import ConfigError

#: the original board's drive: 1.8 deg motor, 2 microsteps, 36:1 gearbox -> 14400 pulses per joint turn
SEED_STEPS_PER_RAD = 360.0 / 1.8 * 2 * 36 / (2 * math.pi)     # 2291.83


class EncoderConfig:
    def __init__(self, counts_per_unit: float, pin_a: Optional[int] = None, pin_b: Optional[int] = None,
                 max_following_error: float = 0.05) -> None:
        self.counts_per_unit = counts_per_unit
        self.pin_a = pin_a
        self.pin_b = pin_b
        self.max_following_error = max_following_error


class HomingConfig:
    """An axis's homing switch: ``switch`` "min" or "max" (which limit switch, so which way the search
    goes), ``search_speed`` toward it, ``backoff_speed`` away from it until it opens, the ``position``
    the axis takes where it opened, ``max_travel``, the longest search, and ``max_backoff``, the longest
back-off."""

    def __init__(self, switch: str = "min", search_speed: float = 0.2, backoff_speed: float = 0.02,
                 position: float = 0.0, max_travel: float = 6.3, max_backoff: float = 0.2) -> None:
        self.switch = switch
        self.search_speed = search_speed
        self.backoff_speed = backoff_speed
        self.position = position
        self.max_travel = max_travel
        self.max_backoff = max_backoff

    @property
    def longest(self) -> float:
        """s the homing of the axis may take at most (search and back-off at their speeds, and margin)."""
        return self.max_travel / self.search_speed + self.max_backoff / self.backoff_speed + 2.0

    @property
    def sign(self) -> int:
        """The direction of the search: -1 toward the min switch, +1 toward the max switch."""
        return -1 if self.switch == "min" else 1


class AxisConfig:
    def __init__(self, name: str, steps_per_unit: float = SEED_STEPS_PER_RAD, unit: str = "rad",
                 max_velocity: float = math.pi, max_acceleration: float = 10.0,
                 max_step_rate: float = 8000.0, min_position: float = 0.0, max_position: float = 0.0,
                 direction: int = 1, max_velocity_step: Optional[float] = None,
                 step_pin: Optional[int] = None, dir_pin: Optional[int] = None,
                 encoder: Optional[EncoderConfig] = None, homing: Optional[HomingConfig] = None) -> None:
        self.name = name
        self.steps_per_unit = steps_per_unit
        self.unit = unit
        self.max_velocity = max_velocity
        self.max_acceleration = max_acceleration
        self.max_step_rate = max_step_rate
        self.min_position = min_position
        self.max_position = max_position
        self.direction = direction
        # the largest velocity change a drive takes without a ramp (a stepper's start/stop speed):
        # checked at the knots of straight-line (positions-only) segments and at their ends
        self.max_velocity_step = max_velocity_step if max_velocity_step is not None else 0.25 * max_velocity
        self.step_pin = step_pin
        self.dir_pin = dir_pin
        self.encoder = encoder
        self.homing = homing

    @property
    def position_limited(self) -> bool:
        return self.max_position > self.min_position

    @property
    def velocity_limit(self) -> float:
        """The tighter of max_velocity and the step rate, in unit/s."""
        return min(self.max_velocity, self.max_step_rate / abs(self.steps_per_unit))


class BoardConfig:
    def __init__(self, axes: List[AxisConfig], name: str = "trajectory_board", buffer_capacity: int = 256,
                 heartbeat_timeout: float = 1.5, feedback_rate: float = 100.0, start_tolerance: float = 0.01,
                 max_frame_bytes: int = 1024 * 1024, source: str = "<defaults>") -> None:
        self.axes = axes
        self.name = name
        self.buffer_capacity = buffer_capacity
        self.heartbeat_timeout = heartbeat_timeout
        self.feedback_rate = feedback_rate
        self.start_tolerance = start_tolerance
        self.max_frame_bytes = max_frame_bytes
        self.source = source
        self.validate()

    def validate(self) -> None:
        src = self.source
        if not self.axes:
            raise ConfigError("no axes", src)
        names = [a.name for a in self.axes]
        for a in self.axes:
            if names.count(a.name) > 1:
                raise ConfigError(f"axis name {a.name!r} appears twice", src)
            for key in ("steps_per_unit", "max_velocity", "max_acceleration", "max_step_rate"):
                value = getattr(a, key)
                if not (math.isfinite(value) and value != 0 and (key == "steps_per_unit" or value > 0)):
                    raise ConfigError(f"axis {a.name!r}: {key} = {value!r}; expected a finite positive "
                                      f"number", src)
            if a.direction not in (1, -1):
                raise ConfigError(f"axis {a.name!r}: direction = {a.direction!r}; expected 1 or -1", src)
            if a.homing is not None:
                _check_homing(a, src)
        for key in ("heartbeat_timeout", "feedback_rate"):
            value = getattr(self, key)
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"board: {key} = {value!r}; expected a finite positive number", src)
        if self.buffer_capacity < 2:
            raise ConfigError(f"board: buffer_capacity = {self.buffer_capacity!r}; expected at least 2", src)


def _check_homing(a: AxisConfig, src: str) -> None:
    h = a.homing
    assert h is not None
    if h.switch not in ("min", "max"):
        raise ConfigError(f"axis {a.name!r}: homing.switch = {h.switch!r}; expected min or max", src)
    for key in ("search_speed", "backoff_speed", "max_travel", "max_backoff"):
        value = getattr(h, key)
        if not (math.isfinite(value) and value > 0):
            raise ConfigError(f"axis {a.name!r}: homing.{key} = {value!r}; expected a finite positive number",
                              src)
    for key in ("search_speed", "backoff_speed"):
        value = getattr(h, key)
        if value > a.velocity_limit:
            raise ConfigError(f"axis {a.name!r}: homing.{key} = {value!r}; expected at most the axis's "
                              f"velocity limit {a.velocity_limit:.4g} {a.unit}/s", src)
    if not math.isfinite(h.position) or (a.position_limited and not a.min_position <= h.position
                                         <= a.max_position):
        raise ConfigError(f"axis {a.name!r}: homing.position = {h.position!r}; expected a position within "
                          f"[{a.min_position:g}, {a.max_position:g}] (goals start from it)", src)


def seed_config(n_axes: int = 6, **board: Any) -> BoardConfig:
    """Six axes at the original board's numbers (2291.8 pulses/rad, pi rad/s = 7.2 kHz)."""
    return BoardConfig([AxisConfig(f"joint_{i + 1}") for i in range(n_axes)], **board)


_AXIS_KEYS = {"name", "steps_per_rad", "steps_per_unit", "unit", "max_velocity", "max_acceleration",
              "max_step_rate", "min_position", "max_position", "direction", "max_velocity_step", "pins",
              "encoder", "homing"}
_BOARD_KEYS = {"name", "buffer_capacity", "heartbeat_timeout", "feedback_rate", "start_tolerance",
               "max_frame_bytes"}


def _num(src: str, where: str, key: str, value: Any, kind=float):
    try:
        return kind(value)
    except (TypeError, ValueError):
        raise ConfigError(f"{where}: {key} = {value!r}; expected a number", src) from None


def _axis_from_dict(src: str, d: Dict[str, Any], i: int) -> AxisConfig:
    if not isinstance(d, dict) or "name" not in d:
        raise ConfigError(f"axes[{i}]: expected a mapping with a name, got {d!r}", src)
    where = f"axis {d['name']!r}"
    unknown = set(d) - _AXIS_KEYS
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {sorted(unknown)}; known: {sorted(_AXIS_KEYS)}", src)
    kw: Dict[str, Any] = {"name": str(d["name"])}
    for key in ("max_velocity", "max_acceleration", "max_step_rate", "min_position", "max_position",
                "max_velocity_step"):
        if key in d:
            kw[key] = _num(src, where, key, d[key])
    if "steps_per_rad" in d:
        kw["steps_per_unit"] = _num(src, where, "steps_per_rad", d["steps_per_rad"])
    if "steps_per_unit" in d:
        kw["steps_per_unit"] = _num(src, where, "steps_per_unit", d["steps_per_unit"])
    if "unit" in d:
        kw["unit"] = str(d["unit"])
    if "direction" in d:
        kw["direction"] = _num(src, where, "direction", d["direction"], int)
    pins = d.get("pins") or {}
    if "step" in pins:
        kw["step_pin"] = _num(src, where, "pins.step", pins["step"], int)
    if "dir" in pins:
        kw["dir_pin"] = _num(src, where, "pins.dir", pins["dir"], int)
    enc = d.get("encoder")
    if enc:
        epins = enc.get("pins") or {}
        kw["encoder"] = EncoderConfig(
            _num(src, where, "encoder.counts_per_rad", enc.get("counts_per_rad", enc.get("counts_per_unit"))),
            _num(src, where, "encoder.pins.a", epins["a"], int) if "a" in epins else None,
            _num(src, where, "encoder.pins.b", epins["b"], int) if "b" in epins else None,
            _num(src, where, "encoder.max_following_error", enc.get("max_following_error", 0.05)))
    hom = d.get("homing")
    if hom:
        kw["homing"] = _homing_from_dict(src, where, hom)
    return AxisConfig(**kw)


_HOMING_KEYS = {"switch", "search_speed", "backoff_speed", "position", "max_travel", "max_backoff",
                "at_start"}


def _homing_from_dict(src: str, where: str, d: Dict[str, Any]) -> HomingConfig:
    if not isinstance(d, dict):
        raise ConfigError(f"{where}: homing = {d!r}; expected a mapping", src)
    unknown = set(d) - _HOMING_KEYS
    if unknown:
        raise ConfigError(f"{where}: homing: unknown key(s) {sorted(unknown)}; known: {sorted(_HOMING_KEYS)}",
                          src)
    kw: Dict[str, Any] = {k: _num(src, where, f"homing.{k}", v) for k, v in d.items()
                          if k not in ("switch", "at_start")}
    return HomingConfig(switch=str(d.get("switch", "min")), **kw)


def _board_kwargs(src: str, d: Dict[str, Any]) -> Dict[str, Any]:
    unknown = set(d) - _BOARD_KEYS
    if unknown:
        raise ConfigError(f"board: unknown key(s) {sorted(unknown)}; known: {sorted(_BOARD_KEYS)}", src)
    kw: Dict[str, Any] = {}
    for key, value in d.items():
        if key == "name":
            kw[key] = str(value)
        elif key in ("buffer_capacity", "max_frame_bytes"):
            kw[key] = _num(src, "board", key, value, int)
        else:
            kw[key] = _num(src, "board", key, value)
    return kw


def load_config(path: str) -> BoardConfig:
    """A :class:`BoardConfig` from a .yaml/.yml or .xml file; :class:`ConfigError` naming file and key."""
    if not os.path.isfile(path):
        raise ConfigError("no such file", path)
    if path.endswith(".xml"):
        return _load_xml(path)
    import yaml
    with open(path) as f:
        try:
            data = yaml.safe_load(f) or {}
        except yaml.YAMLError as err:
            raise ConfigError(f"not valid YAML: {err}", path) from None
    if not isinstance(data, dict) or not isinstance(data.get("axes"), list):
        raise ConfigError("expected a mapping with an 'axes' list", path)
    axes = [_axis_from_dict(path, d, i) for i, d in enumerate(data["axes"])]
    return BoardConfig(axes, source=path, **_board_kwargs(path, data.get("board") or {}))


def _load_xml(path: str) -> BoardConfig:
    # read by the one reader of the project's XML (lxml, or expat where the board's computer has none)
    from ..hardware_config.reader import read_xml
    root = read_xml(path)
    if root.tag != "board":
        raise ConfigError(f"root element <{root.tag}>; expected <board>", path, root.line)
    axes = []
    for i, el in enumerate(c for c in root.children if c.tag == "axis"):
        d: Dict[str, Any] = dict(el.attributes)
        pins = el.child("pins")
        if pins is not None:
            d["pins"] = dict(pins.attributes)
        enc = el.child("encoder")
        if enc is not None:
            e: Dict[str, Any] = {k: v for k, v in enc.attributes.items() if k not in ("a", "b")}
            e["pins"] = {k: v for k, v in enc.attributes.items() if k in ("a", "b")}
            d["encoder"] = e
        hom = el.child("homing")
        if hom is not None:
            d["homing"] = dict(hom.attributes)
        axes.append(_axis_from_dict(f"{path}:{el.line}", d, i))
    return BoardConfig(axes, source=path, **_board_kwargs(path, dict(root.attributes)))
