"""The start-up and reset of a CiA 402 drive, in a worker thread of the unit (its steps block on SDO
round trips: never in the channel's cycle).

* **NMT start-up** (CiA 301 7.2.8): reset node, wait for the boot-up message ``0x700+n: 00``, configure
  in PRE-OPERATIONAL, then start remote node, sent again every ``NMT_RETRY`` until a TPDO shows the
  drive OPERATIONAL (NMT is not acknowledged).
* **SDO configuration** (CiA 301 7.2.4) through the ``canopen`` SDO client: 0x1017, 0x60C2, 0x6072, the
  PDO mapping, and the targets set to the measured position and zero **before** the drive is enabled.
* **the 402 state machine** (CiA 402-2 figure 33): controlword writes along
  :func:`.state_machine.path_to_operation_enabled`, each confirmed by the statusword.

The worker sends through the canopen network, which the drive binds to the channel's bus and send lock
(:meth:`.device.Cia402Drive.bind_bus`); :meth:`Cia402BringUp._check_stopping` ends it when the drive
is deactivated.
"""
from __future__ import annotations

import threading
import time
from typing import Any, ClassVar, Dict, Optional, Tuple

from rospy_control.exceptions import CommunicationTimeout
from rospy_control.log import get_logger
from rospy_control.devices.cia402 import codec as co
from rospy_control.devices.cia402.codec import State
from rospy_control.devices.cia402.common import CIA_MODE as _CIA_MODE
from rospy_control.devices.cia402.common import CONFIGURING, IDLE, RUNNING
from rospy_control.devices.streamed import StreamWatch
from rospy_control.devices.cia402.common import DriveCommand as _Cmd
from rospy_control.devices.cia402.common import StartUpFailed as _Failed
from rospy_control.devices.actuator import ControlMode
from rospy_control.realtime.threads import join_thread, start_thread

__all__ = ["Cia402BringUp"]

logger = get_logger("rospy_control.devices.cia402.device")


class Cia402BringUp:
    """The worker side of :class:`.device.Cia402Drive` (NMT, SDO configuration, the 402 state machine);
    its result goes to the channel thread through ``_result`` under ``_lock``."""

    # the drive's (declared for the type checker)
    NMT_RETRY: ClassVar[float]
    SDO_TRIES: ClassVar[int]
    name: str
    node_id: int
    net: Any
    node: Any
    heartbeat: float
    boot_timeout: float
    sdo_timeout: float
    transition_timeout: float
    max_torque: int
    _lock: threading.Lock
    _stopping: threading.Event
    _result: Optional[Tuple[bool, str]]
    _doing: str
    _period: float
    _hb_state: Optional[int]
    _tpdos_heard: int
    _tvars: Dict[int, Any]
    _vals: Dict[Tuple[int, int], int]
    _error_text: Any
    _worker: Optional[threading.Thread]
    _cmd_buf: Any
    _phase: str
    _heartbeat: StreamWatch
    _event_sent: Dict[int, Tuple[bytes, float]]
    _step_cap: Any
    _probing: bool
    _probe_ok: bool
    _probe_error: Optional[str]
    WORKER_JOIN_TIMEOUT: ClassVar[float]
    emit: Any
    set_fault: Any

    # -- the worker's thread (started, results taken and stopped by the channel thread) ----------------

    def _start_worker(self, first: bool) -> None:
        self._phase = CONFIGURING
        with self._lock:
            self._result = None
        cmd = self._cmd_buf.read_from_rt()
        self._stopping.clear()
        self._worker = start_thread(self._work, f"cia402.{self.name}", args=(first, cmd))

    def _stop_worker(self) -> bool:
        """End a start-up or reset still running (its waits end at once) and join its thread."""
        worker = self._worker
        if worker is None:
            return True
        self._stopping.set()
        self.net.cancel_waits()
        if not join_thread(worker, self.WORKER_JOIN_TIMEOUT, owner=f"drive '{self.name}'"):
            return False
        self._worker = None
        return True

    def _take_result(self) -> None:
        with self._lock:
            result, self._result = self._result, None
        if result is None:
            return
        ok, why = result
        if ok:
            self._phase = RUNNING
            self._heartbeat.clear()
            self._event_sent.clear()
            self._step_cap.forget()
            if self._probing:
                self._probe_ok = True
            else:
                self.emit("enabled", f"CANopen node {self.node_id} in OPERATION ENABLED")
            return
        self._phase = IDLE
        logger.error("drive '%s': %s", self.name, why)
        if self._probing:
            if self._probe_error is None:
                self._probe_error = "reset failed: " + why
        else:
            self.set_fault(why)

    # -- the worker -------------------------------------------------------------------------------------
    def _work(self, first: bool, cmd: _Cmd) -> None:
        try:
            self._bring_up(first, cmd)
            result = (True, "")
        except _Failed as err:
            result = (False, str(err))
        except Exception as err:  # noqa: BLE001 - any library error ends this attempt with its text
            result = (False, self._describe(err))
        with self._lock:
            self._result = result

    def _describe(self, err: BaseException) -> str:
        if isinstance(err, CommunicationTimeout):
            return str(err)      # no boot-up: canopen_net's message names the node and what to check
        text = f"{type(err).__name__}: {err}"
        code = getattr(err, "code", None)
        if isinstance(code, int) and code > 0xFFFF:
            text = f"SDO aborted with 0x{code:08X} {co.sdo_abort_text(code)} ({err})"
        if "timeout" in type(err).__name__.lower() or "No SDO response" in str(err):
            text = (f"CANopen node {self.node_id} does not answer SDO requests (no response to "
                    f"{self._doing} within {self.SDO_TRIES} x {self.sdo_timeout:g} s)")
        elif code is not None:
            text += f" in {self._doing}"
        return f"CANopen node {self.node_id}: {text}" if not text.startswith("CANopen node") else text

    def _sdo(self, sdo: Any, fn: Any) -> Any:
        """Run one SDO transfer; a response that belongs to an earlier, repeated request (it came
        after its timeout: a late host or simulator) is dropped and the transfer done again."""
        for attempt in range(5):
            try:
                return fn()
            except Exception as err:  # noqa: BLE001 - canopen's SdoCommunicationError, by its text
                if "Unexpected response" not in str(err) or attempt == 4:
                    raise
                time.sleep(0.2)   # let the late responses come, then drop them
                while not sdo.responses.empty():
                    try:
                        sdo.responses.get_nowait()
                    except Exception:  # noqa: BLE001 - emptied meanwhile
                        break
        return None

    def _w(self, sdo: Any, index: int, value: int, sub: Optional[int] = None) -> None:
        self._doing = f"the SDO write of 0x{index:04X}:{sub or 0:02X} = {value}"
        var = sdo[index] if sub is None else sdo[index][sub]

        def write() -> None:
            var.raw = value
        self._sdo(sdo, write)

    def _r(self, sdo: Any, index: int, sub: Optional[int] = None) -> int:
        self._doing = f"the SDO read of 0x{index:04X}:{sub or 0:02X}"
        var = sdo[index] if sub is None else sdo[index][sub]
        return int(self._sdo(sdo, lambda: var.raw))

    def _bring_up(self, first: bool, cmd: _Cmd) -> None:
        net, node, n = self.net, self.node, self.node_id
        sdo = node.sdo
        if first:
            # NMT reset, boot-up, then the whole configuration in PRE-OPERATIONAL; a reset of a drive
            # that did not reboot keeps it and only re-enables (a few SDOs, well within ~reset_faults)
            net.reset_and_wait_for_bootup(n, self.boot_timeout, stop=self._stopping)
            self._check_stopping()
            if self.heartbeat > 0:
                self._w(sdo, co.HEARTBEAT_PRODUCER, int(round(self.heartbeat * 1000.0)))
            self._interpolation_period(sdo)
            if 0x6072 in node.object_dictionary:
                self._w(sdo, 0x6072, self.max_torque)
            for m in list(node.rpdo.map.values()) + list(node.tpdo.map.values()):
                if m.cob_id:
                    self._doing = f"the PDO mapping of {m.name}"
                    m.save()
        # safe targets before the drive is enabled: the measured position, zero velocity and torque
        actual = self._r(sdo, co.POSITION_ACTUAL)
        self._vals[(co.POSITION_ACTUAL, 0)] = actual
        for index, value in ((co.TARGET_POSITION, actual), (co.TARGET_VELOCITY, 0), (co.TARGET_TORQUE, 0),
                             (co.VELOCITY_OFFSET, 0), (co.TORQUE_OFFSET, 0)):
            if index in node.object_dictionary:
                self._w(sdo, index, value)
        mode = _CIA_MODE[cmd.mode]
        if cmd.mode == ControlMode.POSITION:
            mode = co.CSP
        self._w(sdo, co.MODES_OF_OPERATION, mode)
        heard = self._tpdos_heard
        node.nmt.send_command(co.NMT_START)
        self._to_operation_enabled(sdo)
        self._confirm_operational(node, heard)

    def _confirm_operational(self, node: Any, heard: int) -> None:
        """Until a TPDO came after "start remote node" (each SYNC brings them from an OPERATIONAL
        drive), send the command again every :attr:`NMT_RETRY`, for at most ``boot_timeout``."""
        if not self._tvars:
            return            # no TPDO mapped: nothing would show it
        n = self.node_id
        start = time.monotonic()
        again = start + self.NMT_RETRY
        sent = 1
        while self._tpdos_heard == heard:
            self._check_stopping()
            now = time.monotonic()
            if now - start > self.boot_timeout:
                state = self._hb_state
                shown = "no heartbeat" if state is None else \
                    f"its heartbeat shows {co.NMT_STATES.get(state, f'0x{state:02X}')}"
                raise _Failed(f"CANopen node {n}: no PDO within {self.boot_timeout:g} s of NMT 'start remote "
                              f"node' (sent {sent} times; {shown})")
            if now >= again:
                if sent == 1:
                    logger.warning("drive '%s': no PDO %.0f ms after NMT 'start remote node': sending it "
                                   "again (a lost frame?)", self.name, 1000.0 * (now - start))
                node.nmt.send_command(co.NMT_START)
                sent += 1
                again = now + self.NMT_RETRY
            time.sleep(0.005)

    def _interpolation_period(self, sdo: Any) -> None:
        period = self._period
        if not period or 0x60C2 not in self.node.object_dictionary:
            return
        index = -3
        value = period / 10.0 ** index
        while abs(value - round(value)) > 1e-6 * value and index > -6:
            index -= 1
            value = period / 10.0 ** index
        try:
            self._w(sdo, 0x60C2, int(round(value)), 1)
            self._w(sdo, 0x60C2, index, 2)
        except Exception as err:  # noqa: BLE001 - a drive with a fixed period: it must agree
            if getattr(err, "code", None) is None:
                raise          # no answer at all: not a refusal
            v, i = self._r(sdo, 0x60C2, 1), self._r(sdo, 0x60C2, 2)
            try:
                co.check_sync_period(period, v, i, self.node_id)
            except ValueError as err:
                raise _Failed(f"{err}: set the channel's rate to match, or a period the drive "
                              "accepts") from None

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise _Failed(f"CANopen node {self.node_id}: the start-up was stopped (the drive was "
                          "deactivated)")

    def _statusword(self, sdo: Any) -> Tuple[int, str]:
        self._check_stopping()
        sw = self._r(sdo, co.STATUSWORD)
        return sw, co.decode_statusword(sw)

    def _to_operation_enabled(self, sdo: Any) -> None:
        n = self.node_id
        sw, state = self._statusword(sdo)
        # a drive still initialising leaves NOT READY TO SWITCH ON by itself (within its boot time); a
        # controlword written before that may be ignored, so the path starts from where it goes
        deadline = time.monotonic() + max(self.boot_timeout, self.transition_timeout)
        while state == State.NOT_READY_TO_SWITCH_ON and time.monotonic() < deadline:
            time.sleep(0.005)
            sw, state = self._statusword(sdo)
        path = co.path_to_operation_enabled(state)
        for cw, expected in path:
            self._w(sdo, co.CONTROLWORD, cw)
            deadline = time.monotonic() + self.transition_timeout
            while True:
                sw, state = self._statusword(sdo)
                if state == expected:
                    break
                if time.monotonic() > deadline:
                    if state in (State.FAULT, State.FAULT_REACTION_ACTIVE):
                        raise _Failed(f"drive (CANopen node {n}) still in {state}: {self._error_text()}")
                    raise _Failed(f"CANopen node {n}: controlword 0x{cw:04X} did not bring the drive to "
                                  f"{expected} within {self.transition_timeout:g} s: it is in {state} "
                                  f"(statusword 0x{sw:04X})")
                time.sleep(0.005)
        if state != State.OPERATION_ENABLED:
            raise _Failed(f"CANopen node {n}: the drive is in {state}, not OPERATION ENABLED")
