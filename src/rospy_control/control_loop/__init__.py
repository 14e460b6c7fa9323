"""rospy_control.control_loop: the hardware node's loop, without ROS (ros_control_boilerplate's
generic control loop, beside the controller manager).

* :class:`~rospy_control.control_loop.loop.ControlLoop` -- ``read -> controller_manager.update ->
  write`` in a thread at a fixed rate: monotonic deadlines, the bounded period (a stalled host delays
  trajectories instead of making them leap), overruns, late cycles and host stalls counted, reset
  requests honoured (:mod:`.loop`);
* :class:`~rospy_control.control_loop.fault_reset.FaultReset` -- what ``~reset_faults`` does: reset
  the RobotHW's faulted units, wait until the loop has taken the recovered joints back
  (:mod:`.fault_reset`);
* :mod:`.standalone` -- the standalone branch's pieces: loading and starting controllers without the
  controller manager's ROS API, the joint-state sampler and the ``/joint_states`` thread;
* :mod:`.driver_config` -- the driver node's parameters, the controller YAML checks and the RobotHW
  it runs (``~robot_hardware``: any RobotHW; default the CAN middleware's).

Everything here takes plain values and callables (a node-handle facade, ``now()``, ``publish``), so it
is imported and unit-tested without rospy; :mod:`rospy_control.adapter.driver` is the rospy glue that
feeds it.  The old ``rospy_control.adapter.{control_loop,fault_reset,standalone,driver_config}``
import paths still work.
"""
from __future__ import annotations

from rospy_control.control_loop.fault_reset import FaultReset
from rospy_control.control_loop.loop import ControlLoop, ControlLoopStats

__all__ = ["ControlLoop", "ControlLoopStats", "FaultReset"]
