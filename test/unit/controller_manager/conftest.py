"""Fixtures of the controller manager tests; the fakes live in cm_fakes.py."""
from __future__ import annotations

import pytest

from cm_fakes import Env


@pytest.fixture
def env():
    """A fake robot, an in-memory graph and a controller manager (shut down afterwards)."""
    e = Env()
    yield e
    e.cm.shutdown()
