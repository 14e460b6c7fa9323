"""The driver's code path does not know the simulator: it is a peer on the bus and nothing else.

Every module of the driver's layers is imported in a fresh interpreter in which
``rospy_control.simulator`` cannot be imported.  A module that pulls it in, directly or through
another module, fails here, naming the module whose import statement asked for it.  (The composition
roots -- ``rospy_control.adapter``, ``rospy_control.composition``, ``rospy_control.testing`` and the
simulator itself -- may import it.)
"""
from __future__ import annotations

import os
import pkgutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.abspath(os.path.join(HERE, "..", "..", "src"))

#: the packages of the driver's code path
DRIVER_PATH = ("middleware", "bus", "devices", "hardware_config", "robot_hw", "hardware_interface",
               "control_loop", "controllers", "controller_manager", "downlink", "dynamics", "trajectory",
               "transmission_interface", "joint_limits")

_PROBE = r"""
import importlib, importlib.abc, sys

class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "rospy_control.simulator" or name.startswith("rospy_control.simulator."):
            frame = sys._getframe(1)
            importer = "?"
            while frame is not None:
                mod = frame.f_globals.get("__name__", "")
                if mod.startswith("rospy_control") and not mod.startswith("importlib"):
                    importer = mod
                    break
                frame = frame.f_back
            raise ImportError(f"{importer} imports {name}")
        return None

sys.meta_path.insert(0, _Block())
failed = []
for name in sys.argv[1:]:
    try:
        importlib.import_module(name)
    except ImportError as err:
        failed.append(f"{name}: {err}")
print("\n".join(failed))
sys.exit(1 if failed else 0)
"""


def _driver_modules():
    sys.path.insert(0, SRC)
    try:
        import rospy_control
    finally:
        sys.path.pop(0)
    names = []
    for pkg in DRIVER_PATH:
        names.append(f"rospy_control.{pkg}")
        path = [os.path.join(rospy_control.__path__[0], pkg)]
        for info in pkgutil.walk_packages(path, f"rospy_control.{pkg}."):
            names.append(info.name)
    return names


def test_no_module_of_the_driver_path_imports_the_simulator():
    modules = _driver_modules()
    assert "rospy_control.middleware.middleware" in modules and "rospy_control.bus.channel" in modules
    env = dict(os.environ)
    env["PYTHONPATH"] = SRC + os.pathsep + env.get("PYTHONPATH", "")
    failures = []
    for pkg in DRIVER_PATH:  # a fresh interpreter per layer: one layer's imports do not hide another's
        batch = [m for m in modules if m == f"rospy_control.{pkg}" or m.startswith(f"rospy_control.{pkg}.")]
        proc = subprocess.run([sys.executable, "-c", _PROBE] + batch, env=env, capture_output=True,
                              text=True, timeout=120)
        if proc.returncode != 0:
            failures.append(proc.stdout.strip() or proc.stderr.strip())
    assert not failures, "the driver's code path imports the simulator:\n" + "\n".join(failures)
