"""Opening a CAN adapter through python-can, and what its errors say: the classic bitrates adapters
accept, the error-frame bits of a bus-off, an error text that means bus-off."""
from __future__ import annotations

import can

from rospy_control.bus.echo import drop_own_echoes

from rospy_control.exceptions import CommunicationError

__all__ = ["VALID_BITRATES", "CAN_ERR_BUSOFF", "CAN_ERR_RESTARTED", "open_bus"]

#: Classic CAN bitrates adapters accept (pcan silently falls back to 500k for anything else).
VALID_BITRATES = (5000, 10000, 20000, 33000, 47000, 50000, 83000, 95000, 100000, 125000, 250000,
                  500000, 800000, 1000000)

#: error class bits of an error frame's id (linux/can/error.h; python-can's socketcan keeps them in
#: ``arbitration_id``): the controller went bus-off / restarted after a bus-off
CAN_ERR_BUSOFF = 0x040
CAN_ERR_RESTARTED = 0x100


def _says_bus_off(err: BaseException) -> bool:
    """A send/receive error whose text says bus-off (pcan: "...in bus-off state", ixxat: "bus off")."""
    text = str(err).lower()
    return "bus-off" in text or "bus off" in text or "busoff" in text


def open_bus(interface: str, channel, bitrate: int, where: str = "", **kwargs) -> can.BusABC:
    """Open a python-can bus, turning every "it is not there" error into a clear CommunicationError.

    python-can raises :class:`can.CanError` subclasses, but also plain ``OSError`` (socketcan without
    the device, pcan without its library), ``TimeoutError`` (socketcand) or ``ValueError``.
    """
    try:
        # can.Bus is declared as an abstract BusABC subclass; its __new__ returns the interface's bus
        bus = can.Bus(interface=interface, channel=channel,  # type: ignore[abstract]
                      bitrate=bitrate, **kwargs)
        # udp_multicast hands every process its own frames back: drop them as receive_own_messages
        # says, before they are decoded (.echo)
        return drop_own_echoes(bus) if interface == "udp_multicast" else bus
    except (can.CanError, OSError, TimeoutError, ValueError, ImportError) as err:
        hint = {
            "socketcan": "is the interface up? (ip link set <channel> up type can bitrate <bitrate>)",
            "pcan": "is PEAK's PCAN-Basic library installed and the adapter plugged in?",
        }.get(interface, "is the adapter plugged in and the driver installed?")
        raise CommunicationError(
            f"cannot open CAN bus interface='{interface}' channel='{channel}'"
            f"{' (' + where + ')' if where else ''}: {type(err).__name__}: {err}; {hint}") from err
