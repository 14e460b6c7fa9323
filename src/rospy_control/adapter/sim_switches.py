"""The simulator's switches and command record as its services answer them, without ROS (unit-tested):
the ``bus_off`` switch of a channel named by itself or by a unit on it
(:meth:`~rospy_control.simulator.robot.SimulatedRobot.set_fault`) and the table of
``rospy_control/SimCommandStats``.  :mod:`.sim_node` offers them as services."""
from __future__ import annotations

import math
from typing import Any, Dict, Tuple

from rospy_control.simulator import SimulatedFirmware, SimulatedMotor

__all__ = ["local_simulators", "set_bus_off", "command_stats"]


def local_simulators(robot: Any) -> Dict[str, SimulatedFirmware]:
    """``{channel: firmware}`` of the simulated channels whose firmware runs in this process."""
    return robot.local()


def set_bus_off(robot: Any, unit: str, enable: bool) -> Tuple[bool, str]:
    """The ``bus_off`` switch of the channel called ``unit`` (or of the channel of unit ``unit``);
    ``(success, message)``, never raises."""
    channel = unit if unit in robot.channels else None
    if channel is None and robot.config.has_unit(unit):
        channel = robot.channel_of(unit)
    sims = local_simulators(robot)
    if channel is None or channel not in sims:
        return False, (f"'{unit}' is neither a simulated channel nor a unit on one; simulated channels: "
                       f"{', '.join(sorted(sims)) or '(none)'}")
    robot.bus_off(channel, enable)
    return True, f"simulated fault 'bus_off' of channel '{channel}' switched {'on' if enable else 'off'}"


def command_stats(robot: Any, unit: str = "") -> Dict[str, Any]:
    """What :class:`SimCommandStats` answers, as a dict of lists (see ``srv/SimCommandStats.srv``).

    :raises ValueError: ``unit`` is not a simulated motor here.
    """
    out: Dict[str, Any] = {k: [] for k in ("units", "frames", "commands", "last_p_des", "max_step", "enabled",
                                           "firmware_timeouts", "channels", "bus_off", "frames_lost")}
    found = False
    for channel, sim in sorted(local_simulators(robot).items()):
        out["channels"].append(channel)
        out["bus_off"].append(bool(sim.bus_off))
        out["frames_lost"].append(int(sim.frames_lost))
        for name, model in sim.by_name.items():
            if not isinstance(model, SimulatedMotor) or (unit and name != unit):
                continue
            found = True
            st = sim.command_stats(name)
            out["units"].append(name)
            out["frames"].append(int(model.frames))
            out["commands"].append(int(st.get("count") or 0))
            last = st.get("last_p_des")
            out["last_p_des"].append(float(last) if last is not None else math.nan)
            out["max_step"].append(float(st.get("max_step") or 0.0))
            out["enabled"].append(bool(st.get("enabled")))
            out["firmware_timeouts"].append(int(st.get("firmware_timeouts") or 0))
    if unit and not found:
        raise ValueError(f"'{unit}' is not a motor simulated here")
    return out
