"""The units of a channel: their event log, the bus load they make, and which unit a received frame
belongs to -- the ids each unit registers (unique per bus; a reply id several units share only with
one demultiplexer and a unique key; 29-bit ids under masks that must not overlap) and the dispatch of
a frame to its unit (error frames: bus errors, bus-off).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import can

from rospy_control.exceptions import ConfigError
from rospy_control.log import Throttle, get_logger
from rospy_control.bus.adapter import CAN_ERR_BUSOFF, CAN_ERR_RESTARTED
from rospy_control.bus.events import EventLog
from rospy_control.devices import CanUnit, frame_bits

__all__ = ["UnitRouting"]

logger = get_logger("rospy_control.bus.channel")


class UnitRouting:
    """The routing side of :class:`.channel.CanChannel`."""

    # the channel's (declared for the type checker)
    name: str
    master_id: int
    units: List[CanUnit]
    event_log: EventLog
    bus_off: bool
    bus_errors: int
    bad_frames: int
    unknown_frames: int
    _ids: Dict[int, str]
    _routes: Dict[int, CanUnit]
    _ext_routes: List[Tuple[int, int, CanUnit]]
    _shared: Dict[int, Tuple[Callable, Dict[object, CanUnit]]]
    _published: Any
    _throttle: Throttle
    _enter_bus_off: Callable[[str], None]
    _leave_bus_off: Callable[[str], None]
    rate: float
    bitrate: int

    def add_unit(self, unit: CanUnit) -> None:
        """Register a unit; its request and reply ids must be unique on this bus (a shared reply id
        only with the same demultiplexer and a unique key)."""
        ids = list(unit.request_ids()) + list(unit.reply_ids())
        for i in ids:
            if i in self._ids:
                raise ConfigError(
                    f"unit '{unit.name}' ({unit.where}): CAN id 0x{i:03X} is already used by "
                    f"'{self._ids[i]}' on channel '{self.name}'; ids must be unique per bus")
        shared = unit.shared_reply(self.master_id)
        if shared is not None:
            sid = shared.arbitration_id
            entry = self._shared.get(sid)
            if entry is None:
                if sid in self._ids and not (sid == self.master_id and self._ids[sid] == "master_id"):
                    raise ConfigError(
                        f"unit '{unit.name}' ({unit.where}): shared reply id 0x{sid:03X} is already used "
                        f"by '{self._ids[sid]}' on channel '{self.name}'")
                entry = self._shared[sid] = (shared.demux, {})
            elif entry[0] is not shared.demux:
                raise ConfigError(
                    f"unit '{unit.name}' ({unit.where}): reply id 0x{sid:03X} on channel '{self.name}' is "
                    "shared by units of different protocols")
            other = entry[1].get(shared.key)
            if other is not None:
                raise ConfigError(
                    f"unit '{unit.name}' ({unit.where}): its replies on id 0x{sid:03X} cannot be told "
                    f"from those of '{other.name}' (same key {shared.key!r}) on channel '{self.name}'")
            entry[1][shared.key] = unit
        for i in ids:
            self._ids[i] = unit.name
        for i in unit.reply_ids():
            self._routes[i] = unit
        for mask, value in unit.extended_routes():
            for other_mask, other_value, other in self._ext_routes:
                common = mask & other_mask
                if value & common == other_value & common:
                    raise ConfigError(
                        f"unit '{unit.name}' ({unit.where}): its 29-bit ids (0x{value:08X} under mask "
                        f"0x{mask:08X}) overlap those of '{other.name}' (0x{other_value:08X} under mask "
                        f"0x{other_mask:08X}) on channel '{self.name}'")
            self._ext_routes.append((mask, value, unit))
        unit.attach(self.name, self.event_log)
        self.units.append(unit)
        stamp, states = self._published.read_from_non_rt()
        self._published.write_from_non_rt((stamp, {**states, unit.name: unit.state()}))

    def _route(self, msg: can.Message) -> Optional[CanUnit]:
        """The unit a (data, standard-id) frame belongs to, None if nobody's."""
        if msg.is_error_frame:
            return None
        aid = msg.arbitration_id
        if msg.is_extended_id:
            return self._ext_route(aid)
        entry = self._shared.get(aid)
        if entry is not None:
            return entry[1].get(entry[0](msg.data))
        return self._routes.get(aid)

    def _ext_route(self, aid: int) -> Optional[CanUnit]:
        for mask, value, unit in self._ext_routes:
            if aid & mask == value:
                return unit
        return None

    def _dispatch(self, msg: can.Message, now: float) -> int:
        if msg.is_error_frame:
            self.bus_errors += 1
            if msg.arbitration_id & CAN_ERR_BUSOFF:
                self._enter_bus_off("error frame CAN_ERR_BUSOFF")
            elif self.bus_off and msg.arbitration_id & CAN_ERR_RESTARTED:
                self._leave_bus_off("error frame CAN_ERR_RESTARTED: the controller restarted")
            if self._throttle.ready("bus_error"):
                logger.warning("channel '%s': CAN error frame received (bus errors so far: %d)",
                               self.name, self.bus_errors)
            return 0
        aid = msg.arbitration_id
        data = msg.data
        entry = None if msg.is_extended_id else self._shared.get(aid)
        if msg.is_extended_id:
            unit = self._ext_route(aid)
        elif entry is not None:
            key = entry[0](data)
            if key is None:
                self.bad_frames += 1
                return 0
            unit = entry[1].get(key)
        else:
            unit = self._routes.get(aid)
        if unit is None:
            self.unknown_frames += 1
            return 0
        if self.bus_off:
            self._leave_bus_off(f"'{unit.name}' answered")
        unit.last_heard = now
        return unit.on_frame(aid, data, now)

    def set_event_log(self, log: EventLog) -> None:
        """Use ``log`` (shared by the middleware's channels) for this channel's units' events."""
        self.event_log = log
        for u in self.units:
            u.attach(self.name, log)

    def bus_load(self) -> float:
        """Estimated bus load (0..1+) at ``rate`` with worst-case bit stuffing (11-bit ids)."""
        bits = sum(u.bits_per_cycle() for u in self.units)
        return bits * self.rate / self.bitrate

    def max_rate(self, load: float = 1.0) -> float:
        """Highest cycle rate that keeps the estimated load at ``load``."""
        bits = sum(u.bits_per_cycle() for u in self.units) or frame_bits(8)
        return load * self.bitrate / bits
