"""Fixtures of the transmission_interface tests: URDF files from test/unit/data/urdf."""
from __future__ import annotations

import os

import pytest

URDF_DIR = os.path.join(os.path.dirname(__file__), os.pardir, "data", "urdf")


def read_urdf(name: str) -> str:
    with open(os.path.join(URDF_DIR, name), encoding="utf-8") as stream:
        return stream.read()


@pytest.fixture
def urdf():
    return read_urdf
