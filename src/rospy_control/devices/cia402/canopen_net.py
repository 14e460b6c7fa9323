"""The ``canopen`` library on the middleware's own bus: one reader, no second notifier, no shutdown.

``canopen.Network.connect()`` always starts its own ``can.Notifier`` (a second reader on a bus the
channel already reads) and ``disconnect()`` shuts the bus down (canopen 2.4.1 ``network.py``).
:class:`CanopenNetwork` calls neither: it builds ``canopen.Network(bus)`` on the channel's existing
python-can bus (sending goes through ``bus.send`` under the network's send lock), and the channel's
receive path hands every received frame to :meth:`CanopenNetwork.on_message`, which feeds
``network.notify`` exactly as canopen's own ``MessageListener`` would.  :attr:`listener` is that
listener, for a caller that registers listeners with its own ``can.Notifier`` instead.

``canopen`` (PyPI, MIT; not packaged by Debian or Ubuntu 20.04) is imported on first use, so every
other device runs without it; ``tools/bootstrap.sh`` installs it into the workspace's venv.  Without
it, :func:`import_canopen` raises one :class:`ConfigError` saying what to install.

Also here, because they need a node of the library: :meth:`CanopenNetwork.add_node` (EDS/DCF into a
``RemoteNode``, errors naming the file), :meth:`CanopenNetwork.reset_and_wait_for_bootup` (NMT reset
plus boot-up detection with an error naming the node), :func:`describe_pdos` (the PDO maps as text,
for the log) and :func:`emcy_of` (a library EMCY as :class:`..cia402.Emcy`, with the standard texts).
"""
from __future__ import annotations

import os
import threading
from typing import Any, Dict, List, Optional

from rospy_control.exceptions import CommunicationTimeout, ConfigError
from rospy_control.log import get_logger
from rospy_control.devices.cia402 import codec as cia402

__all__ = ["CanopenNetwork", "import_canopen", "describe_pdos", "emcy_of", "INSTALL_HINT"]

logger = get_logger(__name__)

#: what to do when ``canopen`` is missing
INSTALL_HINT = ("install it into the workspace's venv with tools/bootstrap.sh (or: "
                ".ws/venv/bin/python -m pip install 'canopen>=2.4.1,<2.5'; on Ubuntu 20.04 without the venv: "
                "python3 -m pip install --user 'canopen>=2.4.1,<2.5'); never into the system Python")


def import_canopen(what: str = "a CiA 402 device") -> Any:
    """The ``canopen`` module.

    :param what: who needs it, for the message (e.g. "unit 'shoulder' (type ...Cia402Drive) in arm.xml").
    :raises ConfigError: it is not installed (naming ``what`` and how to install it).
    """
    try:
        import canopen
    except ImportError as err:
        raise ConfigError(f"{what} needs the Python package 'canopen' (PyPI, MIT licence), which is not "
                          f"importable ({err}); {INSTALL_HINT}") from err
    return canopen


class CanopenNetwork:
    """A ``canopen.Network`` on an existing python-can ``bus``, fed by the caller's receive path.

    :param bus: the channel's open bus (never shut down by this class).
    :param what: who needs canopen (for the error if it is missing).
    """

    def __init__(self, bus: Any, what: str = "a CiA 402 device") -> None:
        canopen = import_canopen(what)
        self._canopen = canopen
        self.bus = bus
        # Network(bus) only stores the bus: no notifier, nothing started (canopen 2.4.1)
        self.network = canopen.Network(bus)
        self._error: Optional[BaseException] = None
        self._closed = False
        self._bootup_watch: Dict[int, threading.Event] = {}

    # -- receive path -----------------------------------------------------------------------------------
    @property
    def listener(self) -> Any:
        """canopen's own ``can.Listener`` of this network (for a caller's ``can.Notifier``)."""
        return self.network.listeners[0]

    def on_message(self, msg: Any) -> None:
        """Feed one received ``can.Message`` to the network (call it from the channel's RX thread).

        Error, remote and 29-bit frames are not CANopen and are skipped.  An exception raised by a
        library callback is logged and kept for :meth:`check`; it never ends the caller's thread.
        """
        if msg.is_error_frame or msg.is_remote_frame or msg.is_extended_id:
            return
        try:
            self.network.notify(msg.arbitration_id, msg.data, msg.timestamp)
        except Exception as err:  # noqa: BLE001 - the RX thread must survive a callback's bug
            logger.error("canopen: error while handling 0x%03X: %s: %s", msg.arbitration_id,
                         type(err).__name__, err)
            if self._error is None:
                self._error = err

    def check(self) -> None:
        """Re-raise (once) an exception a callback raised in the receive path."""
        err, self._error = self._error, None
        if err is not None:
            raise err

    # -- nodes -----------------------------------------------------------------------------------------------
    def add_node(self, node_id: int, eds: str, where: str = "", profile402: bool = False) -> Any:
        """Load an EDS/DCF file into a ``canopen.RemoteNode`` on this network.

        :param where: the config location that named the file (for the error message).
        :param profile402: make it a ``canopen.BaseNode402`` (the CiA 402 state machine, op modes).
        :raises ConfigError: bad node id, missing file, or a file canopen cannot parse (naming it).
        """
        prefix = f"{where}: " if where else ""
        if not 1 <= int(node_id) <= 127:
            raise ConfigError(f"{prefix}CANopen node id {node_id} is not in 1..127")
        if not os.path.isfile(eds):
            raise ConfigError(f"{prefix}object dictionary file '{eds}' of CANopen node {node_id} "
                              "does not exist")
        try:
            od = self._canopen.import_od(eds, node_id)
        except Exception as err:  # noqa: BLE001 - parsers raise anything from KeyError to ValueError
            raise ConfigError(f"{prefix}cannot read object dictionary '{eds}' of CANopen node {node_id}: "
                              f"{type(err).__name__}: {err}") from err
        cls = self._canopen.BaseNode402 if profile402 else self._canopen.RemoteNode
        node = self.network.add_node(cls(node_id, od))
        node.nmt.add_heartbeat_callback(lambda state, n=node_id: self._on_state(n, state))
        return node

    def reset_and_wait_for_bootup(self, node_id: int, timeout: float,
                                  command: int = cia402.NMT_RESET_NODE,
                                  stop: Optional[threading.Event] = None) -> None:
        """Send an NMT reset (node or communication) and wait for the node's boot-up message.

        The watch is armed before the command goes out, so a drive that boots within microseconds
        is not missed (canopen's ``wait_for_bootup`` starts listening only when called).  A set ``stop``
        event (with :meth:`cancel_waits`) ends the wait early without an error: the caller is stopping.

        :raises CommunicationTimeout: no boot-up within ``timeout`` s, naming the node and what to check.
        """
        if node_id not in self.network:
            raise KeyError(f"CANopen node {node_id} was not added to this network")
        booted = threading.Event()
        self._bootup_watch[node_id] = booted
        try:
            self.network.send_message(cia402.NMT_ID, bytes((command, node_id)))
            if not booted.wait(timeout) and not (stop is not None and stop.is_set()):
                raise CommunicationTimeout(
                    f"CANopen node {node_id} sent no boot-up message (0x{0x700 + node_id:03X}: 00) within "
                    f"{timeout:g} s after NMT {cia402.NMT_COMMANDS[command]}: check that the drive is "
                    "powered, its node id and bitrate, the wiring and the termination")
        finally:
            self._bootup_watch.pop(node_id, None)

    def cancel_waits(self) -> None:
        """End the boot-up waits in progress at once (their caller set its ``stop`` event first)."""
        for ev in list(self._bootup_watch.values()):
            ev.set()

    def _on_state(self, node_id: int, state: int) -> None:
        if state == cia402.NMT_BOOTUP:
            ev = self._bootup_watch.get(node_id)
            if ev is not None:
                ev.set()

    def last_heartbeat(self, node_id: int) -> Optional[float]:
        """Receive timestamp of the node's latest heartbeat or boot-up (None: none yet), for liveness."""
        return self.network[node_id].nmt.timestamp

    def close(self) -> None:
        """Stop what this network started (PDO timers, SYNC producer) without touching the bus
        (never ``disconnect()``, which would shut it down).  Idempotent."""
        if self._closed:
            return
        self._closed = True
        for node in list(self.network.nodes.values()):
            pdo = getattr(node, "pdo", None)
            if pdo is not None:
                try:
                    pdo.stop()
                except Exception as err:  # noqa: BLE001 - closing must go on
                    logger.warning("canopen: stopping the PDOs of node %s: %s", node.id, err)
        try:
            self.network.sync.stop()
        except Exception as err:  # noqa: BLE001
            logger.warning("canopen: stopping SYNC: %s", err)


def describe_pdos(node: Any) -> List[str]:
    """One line per enabled PDO of a ``RemoteNode`` whose maps were read (``node.tpdo.read()``)::

        TPDO1 0x183 type 255: 0x6041:00 Statusword (16 bit), 0x6061:00 Modes of operation display (8 bit)
    """
    lines = []
    for kind, maps in (("RPDO", node.rpdo.map), ("TPDO", node.tpdo.map)):
        for n in sorted(maps):
            m = maps[n]
            if not m.enabled:
                continue
            entries = ", ".join(f"0x{v.index:04X}:{v.subindex:02X} {v.name} ({v.length} bit)" for v in m.map)
            lines.append(f"{kind}{n} 0x{m.cob_id:03X} type {m.trans_type}: {entries or '(empty)'}")
    return lines


def emcy_of(node_id: int, err: Any) -> cia402.Emcy:
    """A ``canopen`` ``EmcyError`` as :class:`cia402.Emcy` (standard error-code text, register bits)."""
    return cia402.Emcy(node_id, err.code, err.register, bytes(err.data))
