"""The bus between the driver and a simulated firmware running in another process.

With the simulator in its own process (``scripts/sim_node``, ``python3 -m
rospy_control.simulator.process``) frames travel over python-can's ``udp_multicast`` interface:
UDP datagrams to a multicast group, which every process on this machine that joined the group and
bound the port receives.  Each simulated channel gets its own group and port, derived
deterministically from a **bus key** (one per launch: by default ``<ROS master port><namespace>``,
e.g. ``11311/``) and the channel's name (:func:`sim_bus_address`), so two simulated robots or two
rostests running at once never hear each other.  Groups are IPv4 ``239.255.x.y`` (administratively
scoped); ports lie in ``20000..32767``, below Linux's ephemeral range.  The ports matter most: Linux
delivers a multicast datagram to every socket bound to its port that joined *any* group on the host
(``IP_MULTICAST_ALL``), so two channels are kept apart by their ports (a collision between two given
channels has a chance of about 1 in 12768; give one of them another ``sim_bus_key`` then).

Frames never leave the machine: they are sent with hop limit (TTL) 0, which the kernel delivers to
local sockets only.  (Joining a group still makes the kernel send one IGMP membership report on the
default interface.)  Python-can's ``udp_multicast`` has no ``receive_own_messages=False`` filtering:
each side would also receive the frames it sent itself; :func:`rospy_control.bus.echo.drop_own_echoes`
drops them, undecoded, on every bus the driver and the simulator open.

Readiness: a process that wants to talk to the simulator first sends :data:`PING_ID` frames (29-bit
id, payload a nonce) until the simulated firmware answers on :data:`PONG_ID` with the same payload
(:func:`wait_for_simulator`); only then are motors enabled, so no enter-motor-mode frame is lost to a
simulator that is still starting.
"""
from __future__ import annotations

import hashlib
import os
import time
from typing import Any, Dict, NamedTuple, Optional
from urllib.parse import urlparse

import can

from rospy_control.bus.echo import drop_own_echoes

__all__ = ["SIM_INTERFACE", "PING_ID", "PONG_ID", "PORT_MIN", "PORT_MAX", "SimBusAddress",
           "sim_bus_address", "default_bus_key", "wait_for_simulator"]

#: python-can interface carrying frames between processes on this machine
SIM_INTERFACE = "udp_multicast"
#: 29-bit id of the readiness probe the simulated firmware answers (never sent to real hardware)
PING_ID = 0x1FFFFF5A
#: 29-bit id of the simulated firmware's answer to :data:`PING_ID` (same payload)
PONG_ID = 0x1FFFFF5B
#: range of the UDP ports (inclusive); below Linux's ephemeral ports (32768..60999)
PORT_MIN = 20000
PORT_MAX = 32767
#: hop limit / TTL of the datagrams: 0 = delivered to this machine only
HOP_LIMIT = 0


class SimBusAddress(NamedTuple):
    """Multicast group and UDP port of one simulated channel."""

    group: str
    port: int

    def bus_kwargs(self) -> Dict[str, Any]:
        """What ``can.Bus(interface="udp_multicast", channel=group, ...)`` needs besides the group."""
        return {"port": self.port, "hop_limit": HOP_LIMIT}

    def __str__(self) -> str:
        return f"{SIM_INTERFACE} {self.group} port {self.port}"


def sim_bus_address(key: str, channel: str) -> SimBusAddress:
    """The group and port of channel ``channel`` of the simulated robot identified by ``key``.

    Deterministic (a SHA-256 of ``key`` and ``channel``), so the driver and the simulator process
    derive the same address independently.
    """
    digest = hashlib.sha256(f"rospy_control.sim\0{key}\0{channel}".encode("utf-8")).digest()
    port = PORT_MIN + int.from_bytes(digest[0:4], "big") % (PORT_MAX - PORT_MIN + 1)
    group = f"239.255.{digest[4]}.{digest[5] % 254 + 1}"
    return SimBusAddress(group, port)


def default_bus_key(master_uri: Optional[str] = None, namespace: str = "/") -> str:
    """``<ROS master port><namespace>`` (e.g. ``11311/``): unique per running master and namespace.

    :param master_uri: default ``$ROS_MASTER_URI`` (port 11311 when absent or without a port).
    """
    uri = master_uri if master_uri is not None else os.environ.get("ROS_MASTER_URI", "")
    try:
        port = urlparse(uri).port if uri else None
    except ValueError:
        port = None
    ns = namespace if namespace.startswith("/") else "/" + namespace
    if not ns.endswith("/"):
        ns += "/"
    return f"{port or 11311}{ns}"


#: receive buffer asked for on a simulated bus's socket (bytes; the kernel caps it at rmem_max)
RECEIVE_BUFFER = 4 * 1024 * 1024


def enlarge_receive_buffer(bus: Optional[can.BusABC], size: int = RECEIVE_BUFFER) -> int:
    """Give a ``udp_multicast`` bus's socket a receive buffer of ``size`` bytes; the size granted
    (0: not such a bus, or refused).

    A process the host does not schedule for 100-250 ms must not lose the frames that arrive
    meanwhile: a lost command frame is a jump of the simulated motor when the next one comes, which a
    real bus (whose controller queues frames in hardware, and whose sender retransmits) does not do.
    With Linux's default 208 KiB a socket holds only a few hundred datagrams (each costs about
    1 KiB of kernel memory): about 50 ms of the arm's traffic, echoes included.
    """
    sock = getattr(getattr(bus, "_multicast", None), "_socket", None)
    if sock is None:
        return 0
    import socket
    for opt in (getattr(socket, "SO_RCVBUFFORCE", None), socket.SO_RCVBUF):
        if opt is None:
            continue
        try:
            sock.setsockopt(socket.SOL_SOCKET, opt, size)
            break
        except OSError:
            continue
    try:
        return int(sock.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))
    except OSError:
        return 0


def open_sim_bus(address: SimBusAddress) -> can.BusABC:
    """A python-can bus on ``address`` (raises what python-can raises)."""
    # can.Bus is declared as an abstract BusABC subclass; its __new__ returns the interface's bus
    return drop_own_echoes(can.Bus(interface=SIM_INTERFACE, channel=address.group,  # type: ignore[abstract]
                                   receive_own_messages=False, **address.bus_kwargs()))


def wait_for_simulator(address: SimBusAddress, timeout: float, interval: float = 0.05,
                       bus: Optional[can.BusABC] = None) -> bool:
    """Ping the simulated firmware on ``address`` until it answers; False after ``timeout`` seconds.

    Opens a probe bus of its own (closed again) unless ``bus`` is given.

    :raises can.CanError, OSError: the bus cannot be opened.
    """
    own = bus is None
    probe = open_sim_bus(address) if bus is None else bus
    try:
        nonce = os.urandom(8)
        ping = can.Message(arbitration_id=PING_ID, is_extended_id=True, data=nonce)
        end = time.monotonic() + max(0.0, timeout)
        while True:
            probe.send(ping)
            until = min(end, time.monotonic() + interval)
            while True:
                left = until - time.monotonic()
                msg = probe.recv(max(0.0, left))
                if msg is not None and msg.is_extended_id and msg.arbitration_id == PONG_ID \
                        and bytes(msg.data) == nonce:
                    return True
                if msg is None or left <= 0.0:
                    break
            if time.monotonic() >= end:
                return False
    finally:
        if own:
            probe.shutdown()
