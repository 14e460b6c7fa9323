"""``BoardRobotHW``: the joints of a trajectory board as a RobotHW (ROS-free).

Loaded by the driver node from its private parameters (``config/stepper_arm_robot_hw.yaml``)::

    robot_hardware: [board]
    board:
      type: rospy_control/BoardRobotHW          # or rospy_control.downlink.robot_hw:BoardRobotHW
      hardware_config: /path/to/stepper_arm_hardware.xml   # the <board> (downlink/hardware_xml.py)
      address: ""                                # optional host:port overriding the XML's
      protocol: ""                               # optional full | original overriding the XML's

Interfaces: ``hardware_interface::JointStateInterface`` (positions and velocities from the board's
feedback; with ``protocol="original"``, which reports nothing, from the plan) and
``hardware_interface::JointTrajectoryInterface`` (the ``pass_through_controllers/JointTrajectoryController``
sends whole trajectories through it to a :class:`BoardDevice` or :class:`SeedBoardDevice`).

Homing: the axes with a ``<homing>`` (full protocol) are the units of :meth:`BoardRobotHW.home` (the
driver's ``~home``): the board homes them against their limit switches (docs/trajectory_downlink.md).

Faults: a joint is in fault while its board is not connected (the RobotHW reconnects by itself
every ``reconnect_period``) or holds a latched fault (the board's code and text).  A fault the
board latched is cleared by :meth:`BoardRobotHW.reset_faults` (the driver's ``~reset_faults``).

Threads: the client's reader thread publishes feedback and reports; a connector thread connects
and reconnects; a worker thread sends cancels (``cancel`` must not block); :meth:`read` only takes
the latest snapshot (one reference replaced as a whole).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..exceptions import ConfigError
from ..hardware_interface import JointData, JointStateHandle, JointStateInterface, RobotHW
from ..hardware_interface.robot_hw import HOMING
from ..hardware_interface.joint_trajectory_interface import JointTrajectoryInterface
from ..log import get_logger
from .board_device import BoardDevice
from ..hardware_config.board import protocol_name
from .hardware_xml import BoardDescription, board_config, parse_board_xml
from .seed_device import SeedBoardDevice

logger = get_logger(__name__)

__all__ = ["BoardRobotHW", "BoardDevice", "SeedBoardDevice"]


class BoardRobotHW(RobotHW):
    """The joints of one trajectory board (see the module docstring)."""

    def __init__(self) -> None:
        super().__init__()
        self.desc: Optional[BoardDescription] = None
        self.device: Any = None
        self._data: Dict[str, JointData] = {}
        self._js = JointStateInterface()
        self._traj = JointTrajectoryInterface()
        self._homing: List[str] = []        # the axes homing now
        self._restart = False               # the controllers restart from the positions after a homing

    def init(self, root_nh: Any, robot_hw_nh: Any) -> bool:
        key = "hardware_config"
        path = robot_hw_nh.get_param(key, None)
        if not isinstance(path, str) or not path.strip():
            raise ConfigError(f"expected the path of a hardware XML with a <board>, got {path!r}",
                              robot_hw_nh.resolve_name(key))
        address = robot_hw_nh.get_param("address", "") or None
        protocol = robot_hw_nh.get_param("protocol", "") or None
        if protocol is not None:
            try:
                protocol = protocol_name(protocol)
            except ValueError:
                raise ConfigError(f"expected full or original, got {protocol!r}",
                                  robot_hw_nh.resolve_name("protocol")) from None
        try:
            self.desc = desc = parse_board_xml(path, address=address, protocol=protocol)
        except ConfigError as err:
            if address and "override" in str(err):
                raise ConfigError(f"expected host:port, got {address!r}",
                                  robot_hw_nh.resolve_name("address")) from None
            raise
        self._check_urdf(root_nh, desc)
        port_file = robot_hw_nh.get_param("port_file", "") or ""
        if not isinstance(port_file, str):
            raise ConfigError(f"expected a file path or empty, got {port_file!r}",
                              robot_hw_nh.resolve_name("port_file"))
        self.device = SeedBoardDevice(desc) if desc.protocol == "original" else BoardDevice(desc)
        self.device.port_file = port_file
        states = []
        for axis in desc.axes:
            data = JointData(position=0.0)
            data.fault = f"board {self.device.label}: not connected yet" if desc.protocol == "full" else None
            state = JointStateHandle(axis.joint, data)
            self._js.register_handle(state)
            states.append(state)
            self._data[axis.joint] = data
        self._traj.register_device(self.device, states)
        self.register_interface(self._js)
        self.register_interface(self._traj)
        logger.info("BoardRobotHW: board %s, %s protocol, joints %s", desc.name, desc.protocol,
                    ", ".join(desc.joints))
        return True

    @staticmethod
    def _check_urdf(root_nh: Any, desc: BoardDescription) -> None:
        from ..urdf import find_robot_description, parse_urdf
        try:
            text, where = find_robot_description(root_nh)
        except Exception:  # noqa: BLE001 - no URDF to check against
            return
        if text is None:
            return
        names = {j.get("name") for j in parse_urdf(text, where).findall("joint")}
        for axis in desc.axes:
            if axis.joint not in names:
                raise axis.element.error(f"attribute 'joint'='{axis.joint}' is not a joint of the URDF "
                                         f"({where})")

    def start(self) -> None:
        self.device.start()

    def shutdown(self) -> None:
        if self.device is not None:
            self.device.shutdown()

    def read(self, time: float, period: float) -> None:
        snap = self.device.snapshot()
        homing = self._homing
        fault = snap.fault or (f"{HOMING}board {self.device.label} homes {', '.join(homing)} (~home); "
                               "commands resume when it ends" if homing else None)
        for i, name in enumerate(self.device.joint_names):
            data = self._data[name]
            data.position = snap.positions[i]
            data.velocity = snap.velocities[i]
            data.effort = 0.0
            data.fault = fault

    def write(self, time: float, period: float) -> None:
        pass      # trajectories go to the board through the JointTrajectoryInterface

    def faulted_joints(self) -> Dict[str, str]:
        return {n: d.fault for n, d in self._data.items() if d.fault}

    def faulted_units(self) -> Dict[str, str]:
        """``{board: reason}`` while one of its joints is in fault (not connected, latched fault)."""
        reasons = sorted({d.fault for d in self._data.values() if d.fault})
        return {self.desc.name: "; ".join(reasons)} if reasons and self.desc is not None else {}

    def not_ready_joints(self) -> Dict[str, str]:
        """The joints of a board that has not reported a position yet (not connected)."""
        if self.device is None or self.device.have_position():
            return {}
        return {n: d.fault or f"board {self.device.label}: no position yet" for n, d in self._data.items()}

    def reset_faults(self, timeout: Optional[float] = None) -> Dict[str, str]:
        """Clear what the board can clear (its latched fault), waiting up to ``timeout`` s (default 3).

        :returns: ``{board: reason}`` if the board is still in fault (or unreachable), else empty.
        """
        ok, message = self.device.reset_faults(3.0 if timeout is None else timeout)
        (logger.info if ok else logger.warning)("BoardRobotHW: %s", message)
        return {} if ok else {self.device.name: message}

    # ---- homing against the board's limit switches (the axes with <homing>, full protocol) -----------
    def homeable_units(self) -> List[str]:
        """The board's axes with a ``<homing>`` (none on the original protocol, which has no Home)."""
        if self.desc is None or self.desc.protocol != "full":
            return []
        return [a.name for a in self.desc.axes if a.homing is not None]

    def homing_at_start(self) -> List[str]:
        can = self.homeable_units()
        axes = self.desc.axes if self.desc is not None else ()
        return [a.name for a in axes if a.name in can and a.homing is not None and a.homing.at_start]

    def homing_units(self) -> List[str]:
        return list(self._homing)

    def home(self, units: Sequence[str], timeout: Optional[float] = None) -> Dict[str, Tuple[bool, str]]:
        """Home the board's axes ``units`` (one request: the board homes them one after the other) and
        wait for the outcome; meanwhile every joint of the board is in fault (``homing: ...``: the board
        takes no goal while it homes), and afterwards the controllers restart from the new positions.

        :param timeout: s; None: the longest the axes' searches and back-offs may take, plus 5 s.
        """
        can = self.homeable_units()
        unknown = [u for u in units if u not in can]
        if unknown or not units:
            why = (f"the units that can are {', '.join(can)}" if can else
                   "no <axis> of the board has a <homing> (or the board speaks the original protocol)")
            return {u: (False, f"cannot home '{u}': {why}") for u in units}
        assert self.desc is not None
        if timeout is None:
            timeout = 5.0 + sum(a.homing.longest for a in board_config(self.desc).axes
                                if a.name in units and a.homing is not None)
        self._homing = list(units)
        try:
            results = self.device.home(list(units), timeout)
        finally:
            self._homing = []
            self._restart = True
        for unit, (ok, message) in results.items():
            (logger.info if ok else logger.error)("BoardRobotHW: axis '%s': %s", unit, message)
        return results

    def consume_reset_request(self) -> bool:
        """True once after a homing: the controllers restart from the positions counted from the new zero."""
        restart, self._restart = self._restart, False
        return restart

    def status(self) -> dict:
        report = self.device.status()
        fault = report.get("error")
        report["joints"] = {n: {"interface": JointTrajectoryInterface.TYPE_NAME, "mode": "trajectory",
                                "fault": bool(fault)} for n in self._data}
        report["hold_mode"] = "board"
        return report
