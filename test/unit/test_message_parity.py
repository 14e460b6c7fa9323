"""Our control_msgs / controller_manager_msgs must be Noetic's, md5sum for md5sum.

MoveIt, rqt_controller_manager and the stock spawner check the md5sum of every topic, service and
action type they connect to: one changed field and they refuse us.  ``data/noetic_md5sums.txt``
lists the 69 types of control_msgs 1.5.2 and controller_manager_msgs 0.20.0 as built on Noetic.

The built modules come from the catkin workspace (``make build`` and ``source tools/env.sh``), or
from the system where it packages them.
"""
from __future__ import annotations

import importlib
import os
import shutil

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SPEC = os.path.join(HERE, "data", "noetic_md5sums.txt")


def _expected():
    with open(SPEC) as f:
        rows = [line.split() for line in f if line.strip()]
    return [(typ, md5) for md5, typ in rows]


EXPECTED = _expected()


def _load(type_name):
    pkg, name = type_name.split("/")
    for kind in ("msg", "srv"):
        try:
            module = importlib.import_module(f"{pkg}.{kind}")
        except ImportError:
            continue
        if hasattr(module, name):
            return getattr(module, name)
    raise AssertionError(
        f"{type_name} cannot be imported: build the workspace (make build) and run the tests "
        "with tools/env.sh sourced"
    )


def test_spec_lists_all_69_types():
    assert len(EXPECTED) == 69
    assert len({t for t, _ in EXPECTED}) == 69


@pytest.mark.parametrize("type_name,md5", EXPECTED, ids=[t for t, _ in EXPECTED])
def test_built_type_has_noetic_md5sum(type_name, md5):
    cls = _load(type_name)
    assert cls._md5sum == md5, f"{type_name}: md5sum {cls._md5sum} differs from Noetic's {md5}"


def _md5_from_sources(msg_dir, package, type_name):
    """md5sum of a .msg computed by genmsg from the definitions we carry (no build)."""
    genmsg = pytest.importorskip("genmsg")
    from genmsg import msg_loader
    from genmsg.gentools import compute_md5

    ctx = msg_loader.MsgContext.create_default()
    search = {package: [msg_dir]}
    for dep in ("std_msgs", "geometry_msgs", "trajectory_msgs", "actionlib_msgs"):
        share = f"/usr/share/{dep}/msg"
        noetic = f"/opt/ros/noetic/share/{dep}/msg"
        search[dep] = [d for d in (share, noetic) if os.path.isdir(d)]
    spec = msg_loader.load_msg_by_type(ctx, f"{package}/{type_name}", search)
    msg_loader.load_depends(ctx, spec, search)
    assert genmsg  # imported for its side effect of being present
    return compute_md5(ctx, spec)


@pytest.mark.parametrize("package,type_name", [
    ("control_msgs", "JointTrajectoryControllerState"),
    ("control_msgs", "JointTolerance"),
    ("controller_manager_msgs", "ControllerState"),
])
def test_carried_definitions_match_and_a_changed_field_is_caught(tmp_path, package, type_name):
    src = os.path.join(ROOT, "ros_deps", package, "msg")
    expected = dict(EXPECTED)[f"{package}/{type_name}"]
    assert _md5_from_sources(src, package, type_name) == expected

    # The same definition with one field renamed must no longer match: the check has teeth.
    mutated = tmp_path / "msg"
    shutil.copytree(src, mutated)
    path = mutated / f"{type_name}.msg"
    lines = path.read_text().splitlines()
    last = lines[-1].split()
    lines[-1] = f"{last[0]} {last[1]}_renamed"
    path.write_text("\n".join(lines) + "\n")
    assert _md5_from_sources(str(mutated), package, type_name) != expected
