"""The ``<board>`` of a hardware XML (ROS-free) as immutable records: address, protocol, timeouts, axes.

::

    <robot_hardware>
      <board name="arm_board" address="127.0.0.1:7700" protocol="full"
             heartbeat_period="0.2" board_timeout="1.0" heartbeat_timeout="1.5"
             reconnect_period="1.0" buffer_capacity="256" feedback_rate="100" start_tolerance="0.01">
        <axis name="joint_1" joint="joint_1" motor_steps_per_rev="200" microsteps="2" reduction="36"
              direction="1" max_velocity="3.14" max_acceleration="10" max_step_rate="8000"
              min_position="-3.1" max_position="3.1">
          <homing switch="min" search_speed="0.3" backoff_speed="0.03" position="-3.0" max_travel="6.3"
                  max_backoff="0.2" at_start="false"/>
        </axis>
        ...
      </board>
    </robot_hardware>

The root element may also be the ``<board>`` itself.  Per axis, the pulses per joint radian are
either ``steps_per_rad`` (given directly, at the joint) or ``motor_steps_per_rev`` x ``microsteps``
/ 2 pi x ``reduction`` (the original board's 1.8 deg motor, 2 microsteps, 36:1 -> 2291.8 pulses/rad); the
``reduction`` is the transmission between motor and joint (a simple reduction, as ros_control's
``SimpleTransmission``), ``direction`` (1 or -1) which way the motor turns for a positive joint
motion.  An optional ``<homing>`` child configures the axis's homing against a limit switch
(:class:`BoardHoming`; the board runs it on the protocol's Home request).  Every error names
file:line, element, attribute and value.

The downlink client takes the :class:`BoardDescription`; ``rospy_control.downlink.hardware_xml.board_config``
turns it into the configuration the board program runs (``trajectory_board --hardware-config FILE``), so
the simulated board and the driver always agree on the axes.
"""
from __future__ import annotations

import math
from typing import Dict, List, NamedTuple, Optional, Tuple

from rospy_control.exceptions import ConfigError

from .document import AttributeReader, ElementInfo, to_bool, to_float, to_int, to_str
from .reader import read_xml

__all__ = ["BoardAxis", "BoardHoming", "BoardDescription", "parse_board_xml", "PROTOCOLS", "protocol_name"]

#: the board protocols: ``full`` (streamed, closed loop) and ``original`` (the original board program's:
#: one trajectory per connection, open loop)
PROTOCOLS = ("full", "original")
#: former names still accepted
PROTOCOL_ALIASES = {"seed": "original"}


def protocol_name(text: str) -> str:
    """The board protocol ``text`` names (a former name gives the current one).

    :raises ValueError: not a board protocol."""
    name = text.strip()
    name = PROTOCOL_ALIASES.get(name, name)
    if name not in PROTOCOLS:
        raise ValueError(f"board protocol {text!r}; expected full or original")
    return name


class BoardHoming(NamedTuple):
    """An axis's ``<homing>``: the board homes it against one of its limit switches."""
    switch: str               #: "min" or "max": which limit switch (the search goes toward it)
    search_speed: float       #: rad/s toward the switch
    backoff_speed: float      #: rad/s away from it until it opens (slow: where it opens is the reference)
    position: float           #: rad: the axis's position where the switch opened
    max_travel: float         #: rad: the longest search; the switch not closed by then fails the homing
    max_backoff: float        #: rad: the longest back-off
    at_start: bool            #: home when the driver starts (default: on demand only)
    element: ElementInfo


class BoardAxis(NamedTuple):
    name: str                 #: the board's axis name
    joint: str                #: the joint it drives
    steps_per_rad: float      #: pulses per joint radian (reduction included)
    reduction: float
    direction: int
    max_velocity: float
    max_acceleration: float
    max_step_rate: float
    min_position: float
    max_position: float
    element: ElementInfo
    homing: Optional[BoardHoming] = None


class BoardDescription(NamedTuple):
    name: str
    host: str
    port: int
    protocol: str
    heartbeat_period: float
    board_timeout: float
    heartbeat_timeout: float
    reconnect_period: float
    buffer_capacity: int
    feedback_rate: float
    start_tolerance: float
    path_tolerance: float      #: original protocol: largest deviation re-sampling may cause (rad)
    axes: Tuple[BoardAxis, ...]
    source: str
    line: Optional[int]

    @property
    def joints(self) -> List[str]:
        return [a.joint for a in self.axes]

    @property
    def address(self) -> str:
        return f"{self.host}:{self.port}"


def _address(text: str) -> Tuple[str, int]:
    host, sep, port = text.strip().rpartition(":")
    if not sep or not host:
        raise ValueError("no host:port")
    value = int(port)
    if not 0 < value < 65536:
        raise ValueError("port out of range")
    return host, value


_address.expected = "host:port with a port in 1..65535"  # type: ignore[attr-defined]


def _protocol(text: str) -> str:
    return protocol_name(text)


_protocol.expected = "full or original"  # type: ignore[attr-defined]


def _direction(text: str) -> int:
    value = int(text)
    if value not in (1, -1):
        raise ValueError(text)
    return value


_direction.expected = "1 or -1"  # type: ignore[attr-defined]


def _positive(v) -> bool:
    return v > 0


def parse_board_xml(source: str, address: Optional[str] = None,
                    protocol: Optional[str] = None) -> BoardDescription:
    """The ``<board>`` of a hardware XML (a path, or the XML text itself starting with ``<``).

    :param address: ``host:port`` overriding the XML's (a launch argument), or None.
    :param protocol: ``full``/``original`` overriding the XML's, or None.
    :raises ConfigError: naming file:line, element, attribute and value.
    """
    top = read_xml(source, cannot_read="cannot read the hardware XML")
    name = top.source
    if top.tag == "board":
        boards = [top]
    else:
        boards = [c for c in top.children if c.tag == "board"]
    if not boards:
        raise top.error("no <board> element; a trajectory board is described by "
                        "<board name='..' address='host:port'> with <axis> children")
    if len(boards) > 1:
        raise boards[1].error("only one <board> per hardware XML is supported (give each board its own "
                              "RobotHW in robot_hardware)")
    el = boards[0]
    r = AttributeReader(el)
    board_name = r.get("name", to_str)
    host, port = r.get("address", _address)
    if address:
        try:
            host, port = _address(address)
        except ValueError:
            raise ConfigError(f"board address override '{address}': expected host:port", name) from None
    proto = r.get("protocol", _protocol, "full")
    if protocol:
        try:
            proto = protocol_name(protocol)
        except ValueError:
            raise ConfigError(f"board protocol override '{protocol}': expected full or original",
                              name) from None
    hb = r.get("heartbeat_period", to_float, 0.2, _positive, "a number > 0 (s)")
    timeout = r.get("board_timeout", to_float, 1.0, _positive, "a number > 0 (s)")
    board_hb = r.get("heartbeat_timeout", to_float, 1.5, _positive, "a number > 0 (s)")
    reconnect = r.get("reconnect_period", to_float, 1.0, _positive, "a number > 0 (s)")
    capacity = r.get("buffer_capacity", to_int, 256, lambda v: v >= 2, "an integer >= 2")
    rate = r.get("feedback_rate", to_float, 100.0, _positive, "a number > 0 (Hz)")
    start_tol = r.get("start_tolerance", to_float, 0.01, _positive, "a number > 0 (rad)")
    path_tol = r.get("path_tolerance", to_float, 0.005, _positive, "a number > 0 (rad)")
    r.finish()
    if timeout <= hb:
        raise el.error(f"attribute 'board_timeout'='{el.attributes.get('board_timeout')}': expected more "
                       f"than heartbeat_period ({hb:g} s)")
    axes: List[BoardAxis] = []
    for child in el.children:
        if child.tag != "axis":
            raise child.error(f"unexpected element inside {el.describe()}; expected <axis>")
        axes.append(_axis(child))
    if not axes:
        raise el.error("no <axis> element; a board drives at least one axis")
    for key in ("name", "joint"):
        seen: Dict[str, Optional[int]] = {}
        for a in axes:
            value = getattr(a, key)
            if value in seen:
                raise a.element.error(f"attribute '{key}'='{value}' is already used by the axis on line "
                                      f"{seen[value]}")
            seen[value] = a.element.line
    return BoardDescription(board_name, host, port, proto, hb, timeout, board_hb, reconnect, capacity, rate,
                            start_tol, path_tol, tuple(axes), name, el.line)


def _axis(el: ElementInfo) -> BoardAxis:
    r = AttributeReader(el)
    name = r.get("name", to_str)
    joint = r.get("joint", to_str, name)
    reduction = r.get("reduction", to_float, 1.0, lambda v: v != 0, "a nonzero number")
    direct = r.get("steps_per_rad", to_float, None, _positive, "a number > 0 (pulses per joint rad)")
    motor_steps = r.get("motor_steps_per_rev", to_float, None, _positive, "a number > 0")
    microsteps = r.get("microsteps", to_float, 1.0, _positive, "a number > 0")
    if direct is not None and motor_steps is not None:
        raise el.error("give either 'steps_per_rad' or 'motor_steps_per_rev' (with microsteps and "
                       "reduction), not both")
    if direct is None and motor_steps is None:
        raise el.error("required attribute 'steps_per_rad' (pulses per joint rad) or "
                       "'motor_steps_per_rev' is missing")
    if direct is not None:
        steps = direct
    else:
        steps = motor_steps * microsteps / (2.0 * math.pi) * abs(reduction)
    direction = r.get("direction", _direction, 1)
    if reduction < 0:
        direction = -direction
    max_velocity = r.get("max_velocity", to_float, math.pi, _positive, "a number > 0 (rad/s)")
    max_acceleration = r.get("max_acceleration", to_float, 10.0, _positive, "a number > 0 (rad/s^2)")
    max_step_rate = r.get("max_step_rate", to_float, 8000.0, _positive, "a number > 0 (pulses/s)")
    lo = r.get("min_position", to_float, 0.0)
    hi = r.get("max_position", to_float, 0.0)
    r.finish()
    if hi < lo:
        raise el.error(f"attribute 'max_position'='{el.attributes.get('max_position')}': expected at least "
                       f"min_position ({lo:g})")
    homing = None
    for child in el.children:
        if child.tag != "homing" or homing is not None:
            raise child.error(f"unexpected element inside {el.describe()}; expected at most one <homing>")
        homing = _homing(child, min(max_velocity, max_step_rate / steps), lo, hi)
    return BoardAxis(name, joint, steps, abs(reduction), direction, max_velocity, max_acceleration,
                     max_step_rate, lo, hi, el, homing)


def _homing(el: ElementInfo, vmax: float, lo: float, hi: float) -> BoardHoming:
    r = AttributeReader(el)
    speed = f"a number > 0 and at most the axis's velocity limit {vmax:.4g} rad/s"
    switch = r.get("switch", to_str, None, lambda v: v in ("min", "max"), "min or max")
    if switch is None:
        raise el.error("required attribute 'switch' is missing: expected min or max (the limit switch the "
                       "axis homes against)")
    search = r.get("search_speed", to_float, 0.2, lambda v: 0 < v <= vmax, speed)
    backoff = r.get("backoff_speed", to_float, 0.02, lambda v: 0 < v <= vmax, speed)
    within = f"a position within [{lo:g}, {hi:g}] (goals start from it)" if hi > lo else None
    position = r.get("position", to_float, 0.0, (lambda v: lo <= v <= hi) if hi > lo else None, within)
    travel = r.get("max_travel", to_float, 6.3, _positive, "a number > 0 (rad)")
    max_backoff = r.get("max_backoff", to_float, 0.2, _positive, "a number > 0 (rad)")
    at_start = r.get("at_start", to_bool, False)
    r.finish()
    return BoardHoming(switch, search, backoff, position, travel, max_backoff, at_start, el)
