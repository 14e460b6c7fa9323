"""The core must import and run without ROS: only rospy_control.adapter may import rospy.

Every module under src/rospy_control (except adapter/) is imported in a fresh interpreter in which
``rospy``, ``actionlib`` and ``rosgraph`` cannot be imported.  A module that pulls one of them in,
directly or through another module, fails here with its name.
"""
from __future__ import annotations

import os
import pkgutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", "..", "src"))

_PROBE = r"""
import importlib, importlib.abc, sys
BLOCKED = ("rospy", "actionlib", "rosgraph", "roslib", "rosnode", "rostopic")

class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ImportError(f"{name} is blocked: the ROS-free core must not import it")
        return None

sys.meta_path.insert(0, _Block())
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except Exception as err:
        failed.append(f"{name}: {type(err).__name__}: {err}")
print("\n".join(failed))
sys.exit(1 if failed else 0)
"""


def _core_modules():
    sys.path.insert(0, SRC)
    try:
        import rospy_control
    finally:
        sys.path.pop(0)
    names = ["rospy_control"]
    for info in pkgutil.walk_packages(rospy_control.__path__, "rospy_control."):
        if info.name.startswith("rospy_control.adapter"):
            continue
        names.append(info.name)
    return names


def test_every_core_module_imports_without_rospy():
    modules = _core_modules()
    assert "rospy_control.plugins" in modules
    # test support (the in-memory ROS graph) is held to the same rule: unit tests run without ROS.
    assert {"rospy_control.testing.in_memory", "rospy_control.testing.in_memory_actions"} <= set(modules)
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE] + modules, env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, "modules that need ROS:\n" + proc.stdout + proc.stderr


def test_the_probe_does_block_rospy():
    env = dict(os.environ)
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, "rospy"], env=env, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 1 and "blocked" in proc.stdout
