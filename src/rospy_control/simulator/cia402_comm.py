"""CANopen communication of the simulated CiA 402 drive (:mod:`.cia402`): the SDO server (expedited
and segmented transfers, aborts), object writes with their side effects (PDO communication and
mapping checks, heartbeat, controlword), RPDO reception and TPDO transmission (SYNC-driven, on change
and on their event timer)."""
from __future__ import annotations

import struct
from typing import Dict, List, Optional, Tuple

from rospy_control.devices.cia402 import codec as co
from rospy_control.simulator.cia402_homing import METHODS as HOMING_METHODS
from rospy_control.simulator.cia402_homing import SimulatedHoming
from rospy_control.simulator.cia402_od import _SIZE, Cia402ObjectDictionary, Key

__all__ = ["Cia402Communication", "SAVE_SIGNATURE"]

#: 0x1010:1 "save": the ASCII "save" as a little-endian u32 (CiA 301 7.5.2.13)
SAVE_SIGNATURE = 0x65766173
#: abort "Data cannot be transferred or stored to the application" (a wrong store signature)
ABORT_STORE = 0x08000020
#: abort "Value of parameter written too high"
ABORT_TOO_HIGH = 0x06090031


class Cia402Communication(Cia402ObjectDictionary):
    """The SDO server and the PDOs of a simulated drive, over its object dictionary.

    The drive sets the attributes declared here and provides :meth:`_send` (queue a frame) and
    :meth:`_controlword` (its 402 state machine).
    """

    SUPPORTED_MODES: Tuple[int, ...]
    homing: SimulatedHoming
    t: Optional[float]
    nmt_state: int
    emcys_sent: int
    _sdo: Optional[dict]
    _next_heartbeat: Optional[float]
    _tpdo_cache: Optional[List[Tuple[int, int, int, int, List[Tuple[Key, int]]]]]
    _pending_rpdos: Dict[int, bytes]
    _sync_count: Dict[int, int]
    _tpdo_last: Dict[int, bytes]
    _tpdo_timer: Dict[int, float]
    #: the read-write objects as last stored through 0x1010:1 (set by the first store)
    stored: Dict[Key, object]

    def _send(self, frame: co.Frame) -> None:
        raise NotImplementedError  # the drive's

    def _controlword(self, cw: int, previous: int) -> None:
        raise NotImplementedError  # the drive's

    # -- writes (SDO and RPDO) ------------------------------------------------------------------------------
    def _write(self, key: Key, raw: bytes) -> Optional[int]:
        """Store ``raw`` in ``key`` with the object's side effects; an abort code if refused."""
        e = self.od.get(key)
        if e is None:
            return co.ABORT_NO_OBJECT if not any(k[0] == key[0] for k in self.od) else co.ABORT_NO_SUBINDEX
        if e.access in ("ro", "const"):
            return co.ABORT_READ_ONLY
        if e.dtype == "VISIBLE_STRING":
            e.value = bytes(raw)
            return None
        size = _SIZE[e.dtype]
        if len(raw) != size:
            return co.ABORT_LENGTH
        (value,) = struct.unpack("<" + co.struct_code(e.dtype), bytes(raw))
        index, sub = key
        if index == 0x1010:
            # store parameters: only the signature "save" is taken (CiA 301 7.5.2.13)
            if value != SAVE_SIGNATURE:
                return ABORT_STORE
            self.stored = {k: e.value for k, e in self.od.items() if e.access == "rw"}
            return None
        if index == 0x6072 and value > 0x7FFF:
            return ABORT_TOO_HIGH   # max torque: at most 3276.7 % of the rated torque
        if index == 0x6060:
            if value not in self.SUPPORTED_MODES:
                return co.ABORT_VALUE
            e.value = value
            if self.od[(0x6061, 0)].value != value:
                self.homing.leave()
            self.od[(0x6061, 0)].value = value
            return None
        if index == 0x6098 and value not in HOMING_METHODS:
            return co.ABORT_VALUE       # a homing method the drive does not have
        if 0x1600 <= index <= 0x1603 or 0x1A00 <= index <= 0x1A03:
            code = self._check_mapping(index, sub, value)
            if code:
                return code
        if index in (0x1400, 0x1401, 0x1402, 0x1403, 0x1800, 0x1801, 0x1802, 0x1803) and sub == 1:
            valid_before = not self._val(index, 1) & co.PDO_INVALID
            moved = (value & 0x7FF) != (self._val(index, 1) & 0x7FF)
            if valid_before and not value & co.PDO_INVALID and moved:
                return co.ABORT_VALUE   # the COB-ID of a valid PDO cannot change (CiA 301 7.5.2.35)
        previous = e.value
        e.value = value
        if 0x1800 <= index <= 0x1AFF:
            self._tpdo_cache = None
        if index == 0x6040:
            assert isinstance(previous, int)
            self._controlword(value, previous)
        elif index == 0x1017:
            self._next_heartbeat = (self.t or 0.0) + value / 1000.0 if value else None
        return None

    def _check_mapping(self, index: int, sub: int, value: int) -> Optional[int]:
        if sub == 0:
            if value > 8:
                return co.ABORT_VALUE
            bits = 0
            rx = index < 0x1A00
            for s in range(1, value + 1):
                mi, ms, mb = co.parse_pdo_map_entry(self._val(index, s))
                e = self.od.get((mi, ms))
                if e is None:
                    return co.ABORT_NO_OBJECT
                if not e.pdo or (rx and e.access not in ("rw", "wo")) or _SIZE.get(e.dtype, 0) * 8 != mb:
                    return co.ABORT_NOT_MAPPABLE
                bits += mb
            if bits > 64:
                return co.ABORT_PDO_LENGTH
            return None
        if self._val(index, 0) != 0:
            return co.ABORT_UNSUPPORTED  # entries change only while the mapping is off (sub 0 = 0)
        mi, ms, mb = co.parse_pdo_map_entry(value)
        e = self.od.get((mi, ms))
        if value and e is None:
            return co.ABORT_NO_OBJECT
        if value and e is not None and (not e.pdo or _SIZE.get(e.dtype, 0) * 8 != mb):
            return co.ABORT_NOT_MAPPABLE
        return None

    # SDO server --------------------------------------------------------------------------------------------
    def _abort(self, index: int, sub: int, code: int) -> None:
        self._sdo = None
        self._send(co.sdo_abort_frame(self.node_id, index, sub, code, server=True))

    def _on_sdo(self, data: bytes) -> None:
        try:
            req = co.parse_sdo_request(data)
        except co.SdoAbortError as err:
            self._abort(err.index, err.subindex, err.code)
            return
        except co.Cia402Error:
            return  # not 8 bytes: not an SDO the drive can parse; real drives ignore it
        node = self.node_id
        if req.kind == "abort":
            self._sdo = None
            return
        if req.kind == "upload":
            self._refresh_actuals()
            key = (req.index, req.subindex)
            e = self.od.get(key)
            if e is None:
                code = co.ABORT_NO_SUBINDEX if any(k[0] == req.index for k in self.od) else co.ABORT_NO_OBJECT
                self._abort(req.index, req.subindex, code)
                return
            if e.access == "wo":
                self._abort(req.index, req.subindex, co.ABORT_WRITE_ONLY)
                return
            raw = self._encode(key)
            if 1 <= len(raw) <= 4:
                self._sdo = None
                self._send(co.sdo_upload_response(node, req.index, req.subindex, raw))
            else:
                self._sdo = {"kind": "upload", "index": req.index, "sub": req.subindex, "data": raw, "pos": 0,
                             "toggle": 0}
                self._send(co.sdo_upload_segmented_response(node, req.index, req.subindex, len(raw)))
            return
        if req.kind == "upload_segment":
            t = self._sdo
            if t is None or t["kind"] != "upload":
                self._abort(0, 0, co.ABORT_COMMAND)
                return
            if req.toggle != t["toggle"]:
                self._abort(t["index"], t["sub"], co.ABORT_TOGGLE)
                return
            chunk = t["data"][t["pos"]:t["pos"] + 7]
            t["pos"] += len(chunk)
            last = t["pos"] >= len(t["data"])
            self._send(co.sdo_upload_segment_response(node, t["toggle"], chunk, last))
            t["toggle"] ^= 1
            if last:
                self._sdo = None
            return
        if req.kind == "download":
            key = (req.index, req.subindex)
            if req.size is None and req.data:
                refused = self._write(key, req.data)
                if refused:
                    self._abort(req.index, req.subindex, refused)
                else:
                    self._sdo = None
                    self._send(co.sdo_download_response(node, req.index, req.subindex))
                return
            e = self.od.get(key)
            if e is None:
                code = co.ABORT_NO_SUBINDEX if any(k[0] == req.index for k in self.od) else co.ABORT_NO_OBJECT
                self._abort(req.index, req.subindex, code)
                return
            if e.access in ("ro", "const"):
                self._abort(req.index, req.subindex, co.ABORT_READ_ONLY)
                return
            self._sdo = {"kind": "download", "index": req.index, "sub": req.subindex, "data": b"",
                         "size": req.size, "toggle": 0}
            self._send(co.sdo_download_response(node, req.index, req.subindex))
            return
        if req.kind == "download_segment":
            t = self._sdo
            if t is None or t["kind"] != "download":
                self._abort(0, 0, co.ABORT_COMMAND)
                return
            if req.toggle != t["toggle"]:
                self._abort(t["index"], t["sub"], co.ABORT_TOGGLE)
                return
            t["data"] += req.data
            if req.last:
                if t["size"] is not None and len(t["data"]) != t["size"]:
                    self._abort(t["index"], t["sub"], co.ABORT_LENGTH)
                    return
                refused = self._write((t["index"], t["sub"]), t["data"])
                if refused:
                    self._abort(t["index"], t["sub"], refused)
                    return
                self._sdo = None
            else:
                t["toggle"] ^= 1
            self._send(co.sdo_download_segment_response(node, req.toggle))

    # PDOs --------------------------------------------------------------------------------------------------
    def _mapping(self, map_index: int) -> List[Tuple[int, int, int]]:
        count = self._val(map_index, 0)
        return [co.parse_pdo_map_entry(self._val(map_index, s)) for s in range(1, count + 1)]

    def _on_rpdo(self, i: int, data: bytes) -> None:
        mapping = self._mapping(0x1600 + i)
        need = sum(b for _i, _s, b in mapping) // 8
        if len(data) < need:
            self._send(co.emcy_frame(self.node_id, 0x8210, self._val(0x1001) | 0x10, bytes((i + 1,))))
            self.emcys_sent += 1
            return
        if self._val(0x1400 + i, 2) <= 240:
            self._pending_rpdos[i] = data
        else:
            self._apply_rpdo(i, data)

    def _apply_rpdo(self, i: int, data: bytes) -> None:
        pos = 0
        for index, sub, bits in self._mapping(0x1600 + i):
            n = bits // 8
            self._write((index, sub), data[pos:pos + n])
            pos += n

    def _tpdo_conf(self) -> List[Tuple[int, int, int, int, List[Tuple[Key, int]]]]:
        """``(i, cob_id, type, event timer ms, [(object, bytes)])`` of every TPDO, cached until a
        communication or mapping object is written (the SYNC path runs a thousand times a second)."""
        c = self._tpdo_cache
        if c is None:
            c = self._tpdo_cache = [
                (i, self._val(0x1800 + i, 1), self._val(0x1800 + i, 2), self._val(0x1800 + i, 5),
                 [((index, sub), bits // 8) for index, sub, bits in self._mapping(0x1A00 + i)])
                for i in range(4)]
        return c

    def _tpdo_payload(self, i: int) -> bytes:
        return b"".join(self._encode(key)[:n] for key, n in self._tpdo_conf()[i][4])

    def _send_tpdo(self, i: int, payload: bytes) -> None:
        self._tpdo_last[i] = payload
        self._send(co.Frame(self._tpdo_conf()[i][1] & 0x7FF, payload))

    def _on_sync(self) -> None:
        for i in sorted(self._pending_rpdos):
            self._apply_rpdo(i, self._pending_rpdos[i])
        self._pending_rpdos.clear()
        self._refresh_actuals()
        for i, cob, ttype, _timer, _m in self._tpdo_conf():
            if cob & co.PDO_INVALID or not 1 <= ttype <= 240:
                continue
            n = self._sync_count.get(i, 0) + 1
            if n >= ttype:
                n = 0
                self._send_tpdo(i, self._tpdo_payload(i))
            self._sync_count[i] = n

    def _event_tpdos(self, now: float) -> None:
        if self.nmt_state != co.NMT_OPERATIONAL:
            return
        self._refresh_actuals()
        for i, cob, ttype, timer_ms, _m in self._tpdo_conf():
            if cob & co.PDO_INVALID or ttype < 254:
                continue
            payload = self._tpdo_payload(i)
            timer = timer_ms / 1000.0
            due = timer and now >= self._tpdo_timer.get(i, 0.0)
            if payload != self._tpdo_last.get(i) or due:
                self._send_tpdo(i, payload)
                if timer:
                    self._tpdo_timer[i] = now + timer
