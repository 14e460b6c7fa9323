"""The driver's actuator telemetry and its gains at run time (rospy glue).

* ``~telemetry`` (``rospy_control/ActuatorTelemetry``): every actuator's temperature, bus voltage,
  current, effort, position, confirmed mode, error code (with the maker's name for it), enabled and
  fault flags and the gains the driver sends, at ``~telemetry_rate`` Hz (0 = off).  The thread
  sleeps until it is due and builds nothing while nobody subscribes.
* ``~set_gains`` (``rospy_control/SetGains``): ``position_kp``, ``position_kd`` and ``velocity_kd``
  of one actuator whose command frames carry its gains (MIT, CubeMars, DaMiao and RobStride in MIT
  or operation mode), each within what the frame can carry, taking effect with the next command.
  A device that keeps its gains itself (ODrive's controller gains, a CiA 402 drive's loops) is
  refused with the reason; ``save`` (write them to flash) is refused where the device keeps no
  gains in flash, which is every protocol whose frames carry them.
"""
from __future__ import annotations

import math
import threading
from typing import Any, Callable, List, Optional, Tuple

from rospy_control.devices import ActuatorUnit
from rospy_control.devices.encodable import encodable_error
from rospy_control.log import Throttle, get_logger
from rospy_control.realtime import join_thread, start_thread

__all__ = ["telemetry_message", "TelemetryThread", "set_gains", "GAINS"]

logger = get_logger(__name__)

NAN = float("nan")
#: the gains ``~set_gains`` changes
GAINS = ("position_kp", "position_kd", "velocity_kd")


def _actuators(middlewares: List[Any]) -> List[ActuatorUnit]:
    return [m for mw in middlewares for m in mw.motors()]


def _num(value: Optional[float]) -> float:
    return NAN if value is None else float(value)


def telemetry_message(msg_type: Any, middlewares: List[Any], stamp: Any = None) -> Any:
    """One ``ActuatorTelemetry`` (``msg_type``) of every actuator of ``middlewares``."""
    msg = msg_type()
    if stamp is not None:
        msg.header.stamp = stamp
    for mw in middlewares:
        snap = mw.snapshot()
        for m in mw.motors():
            s = snap.get(m.name)
            if s is None:
                continue
            msg.name.append(m.name)
            msg.joint.append(m.joint or "")
            msg.temperature.append(_num(s.temperature))
            msg.bus_voltage.append(_num(getattr(s, "bus_voltage", None)))
            msg.current.append(_num(getattr(s, "current", None)))
            msg.effort.append(float(s.effort))
            msg.position.append(float(s.position))
            msg.mode.append(s.mode.name)
            msg.error_code.append(int(s.error_code) & 0xFFFFFFFF)
            name = getattr(m, "ERRORS", {}).get(s.error_code, "") if s.error_code else ""
            msg.error.append(name or (f"error code 0x{s.error_code:X}" if s.error_code else ""))
            msg.enabled.append(bool(s.enabled))
            msg.fault.append(bool(s.fault))
            msg.fault_reason.append(s.fault_reason or "")
            for gain in GAINS:
                getattr(msg, gain).append(float(getattr(m, gain, NAN)))
    return msg


class TelemetryThread:
    """Publishes :func:`telemetry_message` every ``1 / rate`` s in its own thread, while
    ``subscribed()`` is true."""

    def __init__(self, build: Callable[[], Any], publish: Callable[[Any], None],
                 subscribed: Callable[[], bool], rate: float) -> None:
        if not rate > 0.0:
            raise ValueError(f"telemetry rate must be > 0 Hz, got {rate}")
        self.period = 1.0 / float(rate)
        self._build, self._publish, self._subscribed = build, publish, subscribed
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._throttle = Throttle(30.0)
        #: messages published
        self.published = 0

    def start(self) -> None:
        self._thread = start_thread(self._run, "telemetry")

    def stop(self) -> bool:
        """Stop and join the thread; False if it did not stop (logged)."""
        self._stop.set()
        return join_thread(self._thread, 2.0 + self.period, "telemetry")

    def _run(self) -> None:
        while not self._stop.wait(self.period):
            if not self._subscribed():
                continue
            try:
                self._publish(self._build())
                self.published += 1
            except Exception as err:  # noqa: BLE001 - telemetry never takes the node down
                if self._throttle.ready():
                    logger.warning("could not publish telemetry: %s", err)


def set_gains(middlewares: List[Any], unit: str, values: Tuple[float, float, float],
              save: bool = False) -> Tuple[bool, str]:
    """Set the gains of ``unit`` (``values``: position_kp, position_kd, velocity_kd; NaN = keep).

    :returns: ``(success, message)``; nothing changes unless every given gain fits.
    """
    motors = {m.name: m for m in _actuators(middlewares)}
    m = motors.get(unit)
    if m is None:
        return False, (f"no actuator '{unit}'; actuators: {', '.join(motors) or '(none)'}")
    protocol = getattr(m, "PROTOCOL", type(m).__name__)
    if not m.CAPABILITIES.gains:
        return False, (f"'{unit}' ({protocol}) keeps its gains on the device; its command frames carry "
                       "none, so they are set with the device's own parameters (see docs/hardware_xml.md), "
                       "not at run time here")
    if save:
        return False, (f"'{unit}' ({protocol}): its gains travel in every command frame and the device "
                       "keeps none in flash; nothing changed (call again with save=false)")
    ranges = m.encodable_ranges()
    changes = []
    for gain, value in zip(GAINS, values):
        if value is None or (isinstance(value, float) and math.isnan(value)):
            continue
        low, high = ranges.get(gain, (0.0, math.inf))
        error = encodable_error(gain, value, max(0.0, low), high, protocol, unit)
        if error is not None:
            return False, error + "; nothing changed"
        changes.append((gain, float(value)))
    if not changes:
        return False, "no gain given (every value NaN); nothing changed"
    for gain, value in changes:   # one float each: the next command takes the new value
        setattr(m, gain, value)
    text = ", ".join(f"{g}={v:g}" for g, v in changes)
    logger.info("set_gains: '%s' now %s", unit, text)
    return True, f"'{unit}': {text} (from the next command on; not saved: the device keeps none)"


class TelemetryServices:
    """The node's side: ``~telemetry`` (when ``rate`` > 0) and ``~set_gains`` over the actuators of
    ``middlewares`` (a callable: the RobotHW's middlewares, read when asked)."""

    def __init__(self, middlewares: Callable[[], List[Any]], rate: float) -> None:
        import rospy
        from rospy_control.msg import ActuatorTelemetry
        from rospy_control.srv import SetGains, SetGainsResponse

        self.thread: Optional[TelemetryThread] = None
        if rate > 0.0:
            pub = rospy.Publisher("~telemetry", ActuatorTelemetry, queue_size=10)
            self.thread = TelemetryThread(
                lambda: telemetry_message(ActuatorTelemetry, middlewares(), rospy.Time.now()),
                pub.publish, lambda: pub.get_num_connections() > 0, rate)
            self.thread.start()

        def handle(req: Any) -> Any:
            try:
                ok, text = set_gains(middlewares(), req.unit,
                                     (req.position_kp, req.position_kd, req.velocity_kd), bool(req.save))
            except Exception as err:  # noqa: BLE001 - answer the caller, never kill the service thread
                logger.error("set_gains failed: %s", err, exc_info=err)
                ok, text = False, f"set_gains failed: {type(err).__name__}: {err}"
            return SetGainsResponse(success=ok, message=text)

        self.service = rospy.Service("~set_gains", SetGains, handle)

    def stop(self) -> bool:
        """Stop the thread and the service; False if the thread did not stop."""
        self.service.shutdown("driver shutting down")
        return self.thread.stop() if self.thread is not None else True
