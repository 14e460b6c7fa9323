"""How to open one channel's bus other than as the hardware XML says: a :class:`BusSpec`.

The middleware opens every channel on the interface and channel of the hardware XML, unless the
composition root hands it a bus override for that channel (``Middleware(info, buses={name: spec})``).
Whoever builds the override knows what is on the other side -- a peer such as the simulator, in this
process on python-can's ``virtual`` interface or in another process on ``udp_multicast`` -- the
middleware does not: it opens the bus the spec names, gives the channel the spec's liveness policy
(:mod:`rospy_control.bus.liveness`) and calls the spec's hooks around opening and closing it.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, NamedTuple, Optional

from rospy_control.bus.liveness import LivenessPolicy

__all__ = ["BusSpec"]


class BusSpec(NamedTuple):
    """One channel's bus override (see the module docstring)."""

    #: python-can interface (``virtual``, ``udp_multicast``, ...)
    interface: str
    #: the interface's channel
    channel: Any
    #: further python-can arguments (``port`` of ``udp_multicast``, ...)
    kwargs: Dict[str, Any] = {}
    #: the peer's liveness policy (None: every missing reply is the device's, as on hardware)
    liveness: Optional[LivenessPolicy] = None
    #: called just before the channel opens the bus (e.g. to start the peer on it)
    before_open: Optional[Callable[[], None]] = None
    #: called with the opened python-can bus (e.g. to enlarge its receive buffer)
    after_open: Optional[Callable[[Any], None]] = None
    #: called once the channel is shut down and its bus closed (e.g. to stop the peer)
    after_close: Optional[Callable[[], None]] = None
    #: what is on the other side, for the log and :meth:`Middleware.statistics` (``"simulator"``
    #: key): e.g. ``"in-process"`` or ``"process"``
    peer: str = ""
