"""The driver's side of a simulator in another process: find it, and learn when it did not run.

:func:`connect_simulator_process` pings the simulated firmware on each simulated channel's
``udp_multicast`` bus (:mod:`.bus`) and attaches to its shared sign-of-life record
(:mod:`.liveness`), so that a simulator process the host did not schedule is not blamed on
its motors.  The frames themselves travel through the channel's ordinary (hardware) code path.
"""
from __future__ import annotations

import time
from typing import Dict, Iterable, NamedTuple, Optional

from rospy_control.log import get_logger
from rospy_control.simulator.bus import SimBusAddress, sim_bus_address, wait_for_simulator
from rospy_control.simulator.liveness import SharedLiveness, liveness_path

__all__ = ["SimLink", "connect_simulator_process"]

logger = get_logger(__name__)


class SimLink(NamedTuple):
    """How the driver reaches one simulated channel in another process."""

    address: SimBusAddress
    #: the simulator's shared sign of life (None: it offers none, then no cycle is excused)
    liveness: Optional[SharedLiveness]


def connect_simulator_process(key: str, channels: Iterable[str], wait: float) -> Dict[str, SimLink]:
    """Wait up to ``wait`` s for the simulator process on each channel's bus.

    :returns: ``{channel: SimLink}``; empty after one logged warning if any channel's simulator did
        not answer or its bus cannot be opened (the caller falls back to the in-process simulator).
    """
    addresses = {name: sim_bus_address(key, name) for name in channels}
    logger.info("simulator: waiting up to %g s for the simulator process (bus key '%s': %s)", wait, key,
                "; ".join(f"channel '{n}' on {a}" for n, a in addresses.items()))
    end = time.monotonic() + wait
    for name, address in addresses.items():
        try:
            ok = wait_for_simulator(address, max(0.0, end - time.monotonic()))
            why = f"no simulator answered within {wait:g} s"
        except Exception as err:  # noqa: BLE001 - python-can raises many kinds; all mean "unavailable"
            ok, why = False, f"cannot open the bus: {type(err).__name__}: {err}"
        if not ok:
            logger.warning("simulator: cannot use the simulator process for channel '%s' on %s (bus key "
                           "'%s'): %s; falling back to the in-process simulator (virtual bus)", name,
                           address, key, why)
            return {}
    links = {}
    for name, address in addresses.items():
        live = SharedLiveness.attach(liveness_path(key, name))
        if live is None:
            logger.warning("simulator: channel '%s': the simulator process shares no sign of life (%s); "
                           "a stall of that process will look like silent motors", name,
                           liveness_path(key, name))
        links[name] = SimLink(address, live)
    logger.info("simulator: talking to the simulator process over %s", "; ".join(
        f"channel '{n}': {a}" for n, a in addresses.items()))
    return links
