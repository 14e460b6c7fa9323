"""Own echoes dropped on python-can's ``udp_multicast`` buses, before they are decoded.

Python-can's ``udp_multicast`` interface delivers every datagram sent to the group to every socket on
the port, the sender's own included, and (in 4.x) has no ``receive_own_messages=False`` filtering: a
process receives, unpacks into ``can.Message`` objects and hands up every frame it sent itself.  On
the simulated link that is half of what each side receives (every command comes back to the driver,
every reply to the simulator), where a CAN interface delivers none.

:func:`drop_own_echoes` makes such a bus behave as ``receive_own_messages=False`` says: each datagram
it sends is remembered (its bytes: python-can's packing of the frame, timestamp included) until its
echo arrives, and the echo is dropped as raw bytes, without unpacking it.  A datagram of another
sender that happens to be byte-identical is counted against the same entry, so the number of
frames handed up stays right.  Buses of other interfaces, or of a python-can whose ``udp_multicast``
is built otherwise, are returned unchanged.
"""
from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import can

__all__ = ["drop_own_echoes", "MAX_PENDING"]

#: datagrams remembered at most (their echoes lost: an overflowed receive buffer); then forgotten
MAX_PENDING = 4096


def drop_own_echoes(bus: can.BusABC) -> can.BusABC:
    """Install the filter on ``bus`` (see the module docstring) and return it."""
    multicast = getattr(bus, "_multicast", None)
    if multicast is None or not callable(getattr(multicast, "recv", None)) \
            or not callable(getattr(multicast, "send", None)):
        return bus
    try:
        from can.interfaces.udp_multicast.utils import pack_message, unpack_message
    except ImportError:
        return bus
    pending: Dict[bytes, int] = {}
    is_fd = bool(getattr(bus, "is_fd", False))

    def send(msg: can.Message, timeout: Optional[float] = None) -> None:
        if not is_fd and msg.is_fd:
            raise can.CanOperationError("cannot send FD message over bus with CAN FD disabled")
        data = pack_message(msg)
        if len(pending) >= MAX_PENDING:
            pending.clear()
        pending[data] = pending.get(data, 0) + 1
        multicast.send(data, timeout)

    def _recv_internal(timeout: Optional[float]) -> Tuple[Optional[can.Message], bool]:
        result = multicast.recv(timeout)
        if not result:
            return None, False
        data, _, timestamp = result
        n = pending.get(data)
        if n is not None:
            if n > 1:
                pending[data] = n - 1
            else:
                del pending[data]
            return None, False
        try:
            msg = unpack_message(data, replace={"timestamp": timestamp}, check=True)
        except Exception as err:  # noqa: BLE001 - as python-can's own receive path reports it
            raise can.CanOperationError("could not unpack received message") from err
        if not is_fd and msg.is_fd:
            return None, False
        return msg, False

    bus.send = send  # type: ignore[method-assign]
    bus._recv_internal = _recv_internal  # type: ignore[method-assign]
    setattr(bus, "own_echoes_dropped", True)
    return bus


def echo_filter_of(bus: Any) -> bool:
    """True when :func:`drop_own_echoes` is installed on ``bus``."""
    return bool(getattr(bus, "own_echoes_dropped", False))
