"""A plain catkin shell (``source .ws/devel/setup.bash``, nothing else) finds every Python package the
devices need, also those ``make build`` put into ``.ws/venv`` because the system lacks them (canopen
for CiA 402 drives, a python-can >= 4): the devel space's environment hook (env-hooks/)."""
from __future__ import annotations

import glob
import os
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SETUP = os.path.join(ROOT, ".ws", "devel", "setup.bash")
VENV_SITES = glob.glob(os.path.join(ROOT, ".ws", "venv", "lib", "python3*", "site-packages"))


@pytest.mark.skipif(not os.path.isfile(SETUP) or not VENV_SITES, reason="no workspace with a venv built here")
def test_a_plain_catkin_shell_imports_what_the_venv_provides():
    site = VENV_SITES[0]
    wanted = [name for name in ("canopen", "can") if glob.glob(os.path.join(site, name))]
    imports = ", ".join(["rospy_control.devices"] + wanted)
    script = f"source {SETUP} && /usr/bin/python3 -c 'import {imports}' && echo \"$PYTHONPATH\""
    proc = subprocess.run(["env", "-i", f"HOME={os.environ.get('HOME', '/root')}", "PATH=/usr/bin:/bin",
                           "/bin/bash", "--norc", "--noprofile", "-c", script],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert site in proc.stdout.strip().split(":"), proc.stdout
