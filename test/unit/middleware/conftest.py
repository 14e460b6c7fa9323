"""Fixtures of the middleware tests."""
from __future__ import annotations

import pytest


@pytest.fixture
def make_mw():
    """Factory building Middleware objects that are always shut down after the test."""
    from rospy_control.middleware import Middleware
    made = []

    def factory(xml: str, **kw):
        mw = Middleware.from_xml(xml, **kw)
        made.append(mw)
        return mw

    yield factory
    for mw in made:
        mw.shutdown()
