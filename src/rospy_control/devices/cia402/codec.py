"""CANopen: CiA 301 frames and the CiA 402 drive profile (pure codec, no I/O, no ``canopen`` needed).

The driver talks to drives through the ``canopen`` library (:mod:`.canopen_net`); this module (one
surface over its parts :mod:`.nmt`, :mod:`.sdo`, :mod:`.pdo`, :mod:`.state_machine` and :mod:`.objects`)
is what that library does not give, or what must not depend on it: byte-exact frame builders and parsers
for the tests, the simulated drive and the diagnostics, the 402 state machine as data, the object
indices, and the unit conversions.  Sources: CiA 301 v4.2 (NMT, SYNC, EMCY, heartbeat, SDO, PDO
COB-IDs and communication/mapping objects, the EMCY error-code and SDO abort-code tables), CiA
402-2 (state machine, controlword/statusword bits, modes of operation, objects 0x6040-0x60FF).
The controlword/statusword masks agree with ``canopen``'s ``BaseNode402``.

**COB-IDs** (11-bit, node 1-127)::

    0x000          NMT          [command, node]   (node 0 = all nodes)
    0x080          SYNC         DLC 0 (or 1: counter)
    0x080 + node   EMCY         u16 error code, u8 error register (0x1001), 5 manufacturer bytes
    0x180/0x280/0x380/0x480 + node   TPDO1-4 (drive -> host)
    0x200/0x300/0x400/0x500 + node   RPDO1-4 (host -> drive)
    0x580 + node   SDO response (server -> client),  0x600 + node  SDO request
    0x700 + node   heartbeat / boot-up: [state]  0x00 boot-up, 0x04 stopped, 0x05 operational,
                   0x7F pre-operational

**SDO** (8 bytes, little-endian): byte 0 command specifier, bytes 1-2 index, byte 3 sub-index, bytes
4-7 data (expedited, size in bits 3-2 as ``4 - n``) or a u32 size (segmented initiate); segments
carry 7 data bytes after a command byte with the toggle bit 4 and "no more segments" bit 0.

**Units**: positions and velocities in drive increments (``counts``), velocity per second, torque in
per mille of the motor's rated torque (0x6076, mN m).  :class:`UnitScale` converts them to rad,
rad/s and N m on the joint side of a gearbox.
"""
from __future__ import annotations

from rospy_control.devices.frame import Frame  # noqa: F401 - re-exported
from rospy_control.devices.cia402.nmt import (  # noqa: F401 - this module's surface
    Cia402Error, NMT_ID, NMT_START, NMT_STOP, NMT_PRE_OPERATIONAL, NMT_RESET_NODE,
    NMT_RESET_COMMUNICATION, NMT_COMMANDS, NMT_BOOTUP, NMT_STOPPED, NMT_OPERATIONAL, NMT_PRE_OP,
    NMT_STATES, check_node, nmt_command, parse_nmt, SYNC_ID, sync_frame, EMCY_BASE, EMCY_CODES,
    ERROR_REGISTER_BITS, emcy_text, Emcy, emcy_frame, parse_emcy, HEARTBEAT_BASE, heartbeat_frame,
    bootup_frame, parse_heartbeat,
)
from rospy_control.devices.cia402.sdo import (  # noqa: F401 - this module's surface
    SDO_TX_BASE, SDO_RX_BASE, CCS_DOWNLOAD_SEGMENT, CCS_DOWNLOAD_INITIATE, CCS_UPLOAD_INITIATE,
    CCS_UPLOAD_SEGMENT, CS_ABORT, SCS_UPLOAD_SEGMENT, SCS_DOWNLOAD_SEGMENT, SCS_UPLOAD_INITIATE,
    SCS_DOWNLOAD_INITIATE, SDO_ABORT_CODES, ABORT_TOGGLE, ABORT_COMMAND, ABORT_UNSUPPORTED,
    ABORT_WRITE_ONLY, ABORT_READ_ONLY, ABORT_NO_OBJECT, ABORT_NOT_MAPPABLE, ABORT_PDO_LENGTH,
    ABORT_LENGTH, ABORT_NO_SUBINDEX, ABORT_VALUE, ABORT_DEVICE_STATE, sdo_abort_text, SdoAbortError,
    sdo_upload_request, sdo_download_request, sdo_abort_frame, sdo_upload_response,
    sdo_upload_segmented_response, sdo_download_response, sdo_upload_segment_response,
    sdo_download_segment_response, SdoRequest, parse_sdo_request, SdoResponse, parse_sdo_response,
    SdoDownload, SdoUpload,
)
from rospy_control.devices.cia402.pdo import (  # noqa: F401 - this module's surface
    RPDO_COMM, RPDO_MAP, TPDO_COMM, TPDO_MAP, PDO_INVALID, tpdo_cob_id, rpdo_cob_id, pdo_map_entry,
    parse_pdo_map_entry, pack_pdo, unpack_pdo,
)
from rospy_control.devices.cia402.state_machine import (  # noqa: F401 - this module's surface
    State, STATE_NAMES, SW_READY_TO_SWITCH_ON, SW_SWITCHED_ON, SW_OPERATION_ENABLED, SW_FAULT,
    SW_VOLTAGE_ENABLED, SW_QUICK_STOP, SW_SWITCH_ON_DISABLED, SW_WARNING, SW_REMOTE, SW_TARGET_REACHED,
    SW_INTERNAL_LIMIT, SW_OP_MODE_12, SW_OP_MODE_13, decode_statusword, Command, CONTROLWORDS,
    CW_FAULT_RESET, CW_HALT, CW_NEW_SET_POINT, decode_controlword, next_command,
    path_to_operation_enabled, path_to_switch_on_disabled, MODES, MODE_NAMES, CSP, CSV, CST, PP, PV,
)
from rospy_control.devices.cia402.objects import (  # noqa: F401 - this module's surface
    ObjectInfo, OBJECTS, CONTROLWORD, STATUSWORD, MODES_OF_OPERATION, MODES_OF_OPERATION_DISPLAY,
    POSITION_ACTUAL, VELOCITY_ACTUAL, TORQUE_ACTUAL, TARGET_POSITION, TARGET_VELOCITY, TARGET_TORQUE,
    VELOCITY_OFFSET, TORQUE_OFFSET, ERROR_CODE, ERROR_REGISTER, HEARTBEAT_PRODUCER, RATED_TORQUE,
    INTERPOLATION_PERIOD, object_info, struct_code, UnitScale, interpolation_period_s, check_sync_period,
)

__all__ = [
    "Frame", "Cia402Error", "SdoAbortError", "NMT_COMMANDS", "NMT_STATES", "nmt_command", "parse_nmt",
    "sync_frame", "emcy_frame", "parse_emcy", "Emcy", "emcy_text", "EMCY_CODES", "ERROR_REGISTER_BITS",
    "heartbeat_frame", "parse_heartbeat", "bootup_frame", "sdo_upload_request", "sdo_download_request",
    "SdoDownload", "SdoUpload", "SdoRequest", "parse_sdo_request", "SdoResponse", "parse_sdo_response",
    "sdo_abort_frame", "SDO_ABORT_CODES", "sdo_abort_text", "tpdo_cob_id", "rpdo_cob_id", "pdo_map_entry",
    "parse_pdo_map_entry", "pack_pdo", "unpack_pdo", "State", "STATE_NAMES", "decode_statusword",
    "Command", "CONTROLWORDS", "decode_controlword", "next_command", "path_to_operation_enabled",
    "path_to_switch_on_disabled", "MODES", "MODE_NAMES", "OBJECTS", "ObjectInfo", "object_info",
    "UnitScale", "interpolation_period_s", "check_sync_period",
]
