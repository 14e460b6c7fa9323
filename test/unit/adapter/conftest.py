"""Fixtures of the adapter unit tests (helpers in ``adapter_testutil``).

* ``served`` -- a :class:`adapter_testutil.Served` bundle (controller manager + services + control
  loop on an in-memory graph), closed after the test;
* ``client`` -- a ControllerManagerClient talking to it.
"""
from __future__ import annotations

import pytest
from adapter_testutil import Served


@pytest.fixture
def served():
    bundle = Served()
    yield bundle
    bundle.close()


@pytest.fixture
def client(served):
    return served.client()
