"""Fixtures of the dynamics tests (the RobotHW factory, as in the robot_hw tests)."""
from __future__ import annotations

import pytest


@pytest.fixture
def make_hw():
    """Factory: ``make_hw(hardware_xml, urdf, params=None, start=True, **kw)`` -> MiddlewareRobotHW whose
    middleware is always shut down after the test."""
    from rospy_control.robot_hw import MiddlewareRobotHW
    made = []

    def factory(hardware_xml, urdf_xml, params=None, start=True, **kw):
        hw = MiddlewareRobotHW.from_config(hardware_xml, urdf_xml, params, start=start, **kw)
        made.append(hw)
        return hw

    yield factory
    for hw in made:
        hw.shutdown()
