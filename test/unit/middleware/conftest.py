"""Fixtures of the middleware tests."""
from __future__ import annotations

from rospy_control.testing.sim_rig import simulated_middleware
import pytest


@pytest.fixture
def make_mw():
    """Factory building Middleware objects that are always shut down after the test."""
    made = []

    def factory(xml: str, **kw):
        mw = simulated_middleware(xml, **kw)
        made.append(mw)
        return mw

    yield factory
    for mw in made:
        mw.shutdown()
