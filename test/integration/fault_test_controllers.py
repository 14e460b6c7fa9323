"""A controller for the fault-injection rostest (the driver imports it: the .test file puts this
folder on the driver's PYTHONPATH).  Type: ``fault_test_controllers:RaisingController``."""
from __future__ import annotations

from rospy_control.controller_interface import Controller
from rospy_control.hardware_interface import JointStateInterface


class RaisingController(Controller):
    """Claims nothing; raises in ``update()`` while its parameter ``raise_in_update`` (read at each
    start) is true."""

    INTERFACE = JointStateInterface

    def init(self, hw, root_nh, controller_nh) -> bool:
        self.nh = controller_nh
        self.raise_in_update = True
        self.updates = 0
        return True

    def starting(self, time: float) -> None:
        self.raise_in_update = bool(self.nh.get_param("raise_in_update", True))

    def update(self, time: float, period: float) -> None:
        self.updates += 1
        if self.raise_in_update:
            raise RuntimeError("injected failure in update()")
