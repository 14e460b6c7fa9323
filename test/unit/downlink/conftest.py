"""Fixtures of the trajectory downlink tests: the original board program's own .proto compiled by
protoc, boards."""
from __future__ import annotations

import os

import pytest

from rospy_control.board import wire

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


@pytest.fixture(scope="session")
def seed_pb(tmp_path_factory):
    """The original board program's jointtrajectory.proto (shipped verbatim in proto/) compiled by the
    system protoc."""
    out = tmp_path_factory.mktemp("seed_proto")
    path = wire.compile_proto(os.path.join(REPO, "proto", wire.SEED_PROTO_FILE), str(out))
    return wire.load_module(path, "jointtrajectory_pb2")


@pytest.fixture
def board_factory():
    """BoardServer objects on 127.0.0.1 (any free port), always stopped after the test."""
    from rospy_control.board.server import BoardServer
    made = []

    def factory(config, **kw):
        server = BoardServer(config, **kw).start()
        made.append(server)
        return server

    yield factory
    for server in made:
        server.stop()
