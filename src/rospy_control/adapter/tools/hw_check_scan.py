"""``hw_check scan XML [--sim|--hardware] [--listen S]``: what is on each channel, against the XML.

Per channel of the hardware XML, hw_check first **listens** (``--listen`` s, at least two and a half
periods of the slowest cyclic message the XML configures there): it hears what devices send on their
own (ODrive heartbeats and encoder estimates, CANopen boot-up and heartbeats, CubeMars status
uploads) and refuses to go on while frames to a unit's command id come from another host (as
``hw_check zero`` does).  Then it **probes**, protocol by protocol, every id the protocols of the
channel's units allow, with frames that do not move anything (each protocol's ``probe`` module says
which and why; :mod:`rospy_control.devices.scan` is the shared model):

========================  =====================================================================
MIT mode                  exit motor mode ``FF..FD`` to ids 1..255 (also on RobStride channels)
CubeMars V3               limp MIT command (kp = kd = torque = 0) to ``0x800 + id``, ids 0..255
DaMiao                    register read of MST_ID through 0x7FF, slave ids 1..255; then, to the
                          XML's motors that did not answer, disable ``FF..FD`` at slave id + 0,
                          0x100, 0x200, 0x300 (old firmware)
ODrive CAN Simple         RTR Get_Version and Get_Encoder_Estimates, nodes 0..63
RobStride                 type 0 get device id, motor ids 1..252
CiA 402                   SDO reads of 0x1000, then 0x1018:01 and 0x100A, nodes 1..127
========================  =====================================================================

Probes are pipelined: a protocol's round goes out as one batch and the replies are collected until
one deadline (``--reply-window`` after the last frame went out).  On a channel with ODrive axes no
other protocol's 11-bit probes are sent (CAN Simple's node and command ids cover every 11-bit id:
0x7FF is node 63's Enter_DFU_Mode) but to its own units' command ids; elsewhere no probe goes to
another unit's command id.
A full scan of a 1 Mbit/s channel with every protocol sends about 1300 frames, under 0.2 s on the
wire (worst-case frame times, :func:`~rospy_control.devices.scan.frame_time`); with the listening
(0.5 s) and twelve rounds' deadlines it takes about 1.3 s (at 250 kbit/s the wire time is four times
longer).  One protocol's scan of a simulated arm takes 0.1-0.2 s after the listening.

It prints each device found (protocol, id, firmware and identity where the protocol tells them) and
names every difference from the XML: a unit that does not answer; a device at another id; a device
answering another protocol or mode at a unit's id; a device in a state the driver cannot use
(cyclic messages off, NMT stopped, old firmware, another master id); a device the XML does not name.

Exit status: 0 the bus matches the XML; 1 configuration error, or refused (another host commands the
devices); 2 communication error; 3 a unit of the XML answers nowhere; 4 every unit answers, but
something differs.
"""
from __future__ import annotations

import argparse
import sys
import time
from typing import Dict, List, Optional, Sequence, TextIO, Tuple

import can

from rospy_control.adapter.tools.hw_check_zero import command_ids, sim_arguments, simulate_of
from rospy_control.bus.adapter import open_bus
from rospy_control.devices.cia402.probe import Cia402Scanner
from rospy_control.devices.cubemars.probe import CubeMarsScanner
from rospy_control.devices.damiao.probe import DamiaoScanner
from rospy_control.devices.mit.probe import MitScanner
from rospy_control.devices.odrive.probe import OdriveScanner
from rospy_control.devices.robstride.probe import RobStrideScanner
from rospy_control.devices.scan import Expected, Finding, Probe, Scanner, Sighting, compare, frame_time
from rospy_control.exceptions import CommunicationError, ConfigError
from rospy_control.middleware.middleware import Middleware
from rospy_control.simulator import SimulatedRobot

__all__ = ["main", "scan_channel", "EXIT_MISSING", "EXIT_DIFFERENT"]

#: exit statuses (module docstring)
EXIT_MISSING = 3
EXIT_DIFFERENT = 4
LISTEN = 0.5
REPLY_WINDOW = 0.05


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="hw_check scan", description=__doc__.split("\n\n")[0])
    p.add_argument("config", help="hardware XML file")
    sim_arguments(p)
    p.add_argument("--listen", type=float, default=LISTEN,
                   help=f"seconds to listen before probing (default {LISTEN:g}; longer if a cyclic "
                        "message of the XML is slower)")
    p.add_argument("--reply-window", type=float, default=REPLY_WINDOW,
                   help=f"seconds to wait for replies after a round's last probe (default {REPLY_WINDOW:g})")
    return p


def scanners_for(units: Sequence, master_id: int) -> Tuple[List[Scanner], List[Expected]]:
    """The scanners a channel with ``units`` needs, and every unit as they look for it."""
    candidates: List[Scanner] = [MitScanner(master_id), CubeMarsScanner(), DamiaoScanner(), OdriveScanner(),
                                 RobStrideScanner(), Cia402Scanner()]
    used: List[Scanner] = []
    expected: List[Expected] = []
    for sc in candidates:
        mine = [e for e in (sc.expected(u) for u in units) if e is not None]
        if mine:
            used.append(sc)
            expected.extend(mine)
    protocols = {sc.protocol for sc in used}
    for sc in candidates:    # a protocol the channel's devices can be switched to
        if sc not in used and protocols & set(sc.alternative_of):
            used.append(sc)
    return used, expected


def _safe(sc: Scanner, probes: List[Probe], units: Sequence, odrive: bool) -> List[Probe]:
    """The probes of ``sc`` that reach no other unit's command id (next to ODrive axes, 11-bit ones only
    to the command ids of ``sc``'s own units)."""
    mine = {e.unit for e in (sc.expected(u) for u in units) if e is not None}
    if odrive and not isinstance(sc, OdriveScanner):   # only where the driver itself sends
        own = {i for u in units if u.name in mine for i in u.request_ids()}
        return [p for p in probes if p.extended or p.arbitration_id in own]
    protected = {i for u in units if u.name not in mine for i in getattr(u, "request_ids", lambda: ())()}
    return [p for p in probes if p.extended or p.arbitration_id not in protected]


class ChannelScan:
    """One channel's scan: its bus, scanners, what was heard and what answered."""

    def __init__(self, name: str, ch, bus: can.BusABC) -> None:
        self.name, self.ch, self.bus = name, ch, bus
        self.scanners, self.expected = scanners_for(ch.units, ch.master_id)
        self.seen: Dict[int, List[Sighting]] = {id(sc): [] for sc in self.scanners}
        self.unknown: Dict[int, int] = {}
        self.sent = 0
        self.wire = 0.0
        self.heard: List[can.Message] = []

    def hear(self, msg: can.Message, scanner: Optional[Scanner] = None, round_: int = 0) -> None:
        if msg.is_error_frame:
            return
        if scanner is not None:
            s = scanner.reply(round_, msg)
            if s is not None:
                self.seen[id(scanner)].append(s)
                return
        for sc in self.scanners:
            s = sc.passive(msg)
            if s is not None:
                self.seen[id(sc)].append(s)
                return
        self.unknown[msg.arbitration_id] = self.unknown.get(msg.arbitration_id, 0) + 1

    def probe(self, reply_window: float, out: TextIO) -> None:
        odrive = any(isinstance(sc, OdriveScanner) for sc in self.scanners)
        for sc in self.scanners:
            for r in range(sc.rounds):
                wanted = sc.probes(r, [e for e in self.expected if e.protocol == sc.protocol],
                                   self.seen[id(sc)])
                probes = _safe(sc, wanted, self.ch.units, odrive)
                if len(probes) < len(wanted) and r == 0:
                    out.write(f"  {self.name}: {len(wanted) - len(probes)} {sc.protocol} probes not sent "
                              "(they would reach another unit's command id)\n")
                if probes:
                    self._round(sc, r, probes, reply_window)

    def _round(self, sc: Scanner, r: int, probes: List[Probe], reply_window: float) -> None:
        for p in probes:
            self._send(p.message())
            self.wire += frame_time(p.rtr_dlc if p.remote else len(p.data), p.extended, self.ch.bitrate)
            msg = self.bus.recv(0.0)       # keep the receive queue short while sending
            while msg is not None:
                self.hear(msg, sc, r)
                msg = self.bus.recv(0.0)
        end = time.monotonic() + reply_window
        while True:
            left = end - time.monotonic()
            if left <= 0:
                break
            msg = self.bus.recv(left)
            if msg is not None:
                self.hear(msg, sc, r)

    def _send(self, msg: can.Message) -> None:
        for attempt in range(50):
            try:
                self.bus.send(msg, timeout=0.05)
                self.sent += 1
                return
            except can.CanOperationError:   # transmit queue full: let it drain
                if attempt == 49:
                    raise
                time.sleep(0.002)

    def result(self) -> Tuple[List[Sighting], List[Finding]]:
        found: List[Sighting] = []
        for sc in self.scanners:
            found.extend(sc.review(self.seen[id(sc)]))
        alternatives: Dict[str, List[str]] = {}
        fixes = {}
        for sc in self.scanners:
            for p in sc.alternative_of:
                alternatives.setdefault(p, []).append(sc.protocol)
            fixes[sc.protocol] = sc.alternative_fix
        return found, compare(self.expected, found, alternatives, fixes)


def _listen_time(ch, seconds: float) -> float:
    periods = [float(getattr(u, a, 0.0) or 0.0) for u in ch.units for a in ("heartbeat_rate", "encoder_rate")]
    return max([seconds] + [2.5 * p for p in periods])


def scan_channel(scan: ChannelScan, listen: float, reply_window: float, out: TextIO) -> None:
    """Probe one channel (after the listening) and print what it found."""
    scan.probe(reply_window, out)


def main(argv: List[str], out: TextIO = sys.stdout) -> int:
    args = _parser().parse_args(argv)
    simulate = simulate_of(args)
    try:
        mw = Middleware.from_xml(args.config)
        robot = SimulatedRobot(mw.config, simulate=simulate)
    except ConfigError as err:
        sys.stderr.write(f"hw_check scan: configuration error: {err}\n")
        return 1
    specs = robot.buses()
    scans: List[ChannelScan] = []
    closers = []
    status = 0
    try:
        for name, ch in mw.channels.items():
            spec = specs.get(name)
            if spec is not None:
                if spec.before_open is not None:
                    spec.before_open()
                if spec.after_close is not None:
                    closers.append(spec.after_close)
                bus = open_bus(spec.interface, spec.channel, ch.bitrate, where=f"channel '{name}'",
                               **spec.kwargs)
            else:
                bus = open_bus(ch.interface, ch.channel, ch.bitrate, where=f"channel '{name}'")
            scans.append(ChannelScan(name, ch, bus))
        status = _run(scans, specs, args, out)
    except CommunicationError as err:
        sys.stderr.write(f"hw_check scan: communication error: {err}\n")
        status = 2
    except can.CanError as err:
        sys.stderr.write(f"hw_check scan: communication error: {type(err).__name__}: {err}\n")
        status = 2
    except KeyboardInterrupt:
        status = 130
    finally:
        for s in scans:
            s.bus.shutdown()
        for close in closers:
            close()
        robot.stop()
    return status


def _run(scans: List[ChannelScan], simulated, args, out: TextIO) -> int:
    listen = max(_listen_time(s.ch, args.listen) for s in scans) if scans else 0.0
    out.write(f"listening {listen:.2f} s on {', '.join(s.name for s in scans)} ...\n")
    end = time.monotonic() + listen
    while time.monotonic() < end:
        idle = True
        for s in scans:
            msg = s.bus.recv(0.0)
            while msg is not None:
                idle = False
                s.heard.append(msg)
                s.hear(msg)
                msg = s.bus.recv(0.0)
        if idle:
            time.sleep(0.001)
    foreign: List[Tuple[str, int]] = []
    for s in scans:
        if s.name in simulated:
            continue      # a simulated channel's bus is private: no other host is on it
        ids = command_ids(s.ch)
        foreign.extend((s.name, m.arbitration_id) for m in s.heard
                       if not m.is_error_frame and m.arbitration_id in ids)
    if foreign:
        sys.stderr.write("hw_check scan: refused: another host is commanding these devices ("
                         + ", ".join(f"channel '{c}' id 0x{i:X}" for c, i in sorted(set(foreign)))
                         + "); stop it first; nothing was sent\n")
        return 1
    status = 0
    for s in scans:
        t0 = time.monotonic()
        scan_channel(s, listen, args.reply_window, out)
        found, findings = s.result()
        out.write(f"\nchannel '{s.name}' ({s.ch.bitrate // 1000} kbit/s): {s.sent} probes, "
                  f"{1000 * s.wire:.0f} ms on the wire, {time.monotonic() - t0:.2f} s\n")
        for f in found:
            detail = f": {f.detail}" if f.detail else ""
            out.write(f"  found {f.protocol} id {f.ident} (0x{f.ident:X}){detail}\n")
        if not found:
            out.write("  found nothing\n")
        if s.unknown:
            out.write("  also heard, not understood: " + ", ".join(
                f"0x{i:X} x{n}" for i, n in sorted(s.unknown.items())[:12]) + "\n")
        for d in findings:
            out.write(f"  DIFFERENCE ({d.kind}): {d.text}\n")
        if any(d.kind == "missing" for d in findings):
            status = EXIT_MISSING
        elif findings and status == 0:
            status = EXIT_DIFFERENT
    out.write("\nthe bus matches the XML\n" if status == 0 else "\nthe bus differs from the XML\n")
    return status
