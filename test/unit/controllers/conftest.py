"""Fixtures of the controller tests; the robot and rig live in ctrl_rig.py."""
from __future__ import annotations

import pytest

from ctrl_rig import Rig


@pytest.fixture
def rig():
    """Robot + in-memory graph + controller manager (shut down afterwards)."""
    r = Rig()
    yield r
    r.cm.shutdown()
