"""tools/check_structure.py (run by ``make lint``): each rule finds what breaks it, names file and line,
and the package as it stands passes."""
from __future__ import annotations

import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOOL = os.path.join(ROOT, "tools", "check_structure.py")


def _tree(tmp_path, files):
    src = tmp_path / "src"
    for rel, text in files.items():
        path = src / "rospy_control" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for folder in [p for p in (src / "rospy_control").rglob("*") if p.is_dir()] + [src / "rospy_control"]:
        init = folder / "__init__.py"
        if not init.exists():
            init.write_text("")
    return str(src)


def _run(src):
    proc = subprocess.run([sys.executable, TOOL, src], capture_output=True, text=True, timeout=60)
    return proc.returncode, proc.stdout


def test_the_package_as_it_stands_keeps_its_shape():
    code, out = _run(os.path.join(ROOT, "src"))
    assert code == 0, out


def test_a_clean_tree_passes(tmp_path):
    src = _tree(tmp_path, {"bus/channel.py": "from rospy_control.devices import unit\n",
                           "devices/unit.py": "import os\n"})
    assert _run(src) == (0, "")


def test_a_file_over_600_lines_is_named(tmp_path):
    src = _tree(tmp_path, {"devices/big.py": "x = 1\n" * 601, "devices/ok.py": "x = 1\n" * 600})
    code, out = _run(src)
    assert code == 1 and "src/rospy_control/devices/big.py: 601 lines" in out and "ok.py" not in out


def test_the_driver_path_importing_the_simulator_is_named_with_its_line(tmp_path):
    bad = "import os\n\nfrom rospy_control.simulator import peers\n"
    src = _tree(tmp_path, {"middleware/middleware.py": bad,
                           "simulator/peers.py": "",
                           "adapter/driver.py": "from rospy_control.simulator import peers\n"})
    code, out = _run(src)
    assert code == 1
    assert "src/rospy_control/middleware/middleware.py:3: the driver's code path imports the simulator" in out
    assert "adapter" not in out          # the node composes the simulator: allowed


def test_an_import_from_a_lower_layer_to_a_higher_one_is_named(tmp_path):
    src = _tree(tmp_path, {"board/server.py": "def f():\n    from rospy_control.downlink import client\n",
                           "downlink/client.py": "from rospy_control.board import server\n"})
    code, out = _run(src)
    assert code == 1 and "src/rospy_control/board/server.py:2: rospy_control.board (layer 1) imports " \
        "rospy_control.downlink.client" in out
    assert "downlink/client.py" not in out


def test_an_import_cycle_is_named(tmp_path):
    src = _tree(tmp_path, {"testing/a.py": "from rospy_control.testing.b import B\nA = 1\n",
                           "testing/b.py": "from rospy_control.testing import a\nB = 2\n"})
    code, out = _run(src)
    assert code == 1 and "import cycle between rospy_control.testing.a, rospy_control.testing.b" in out
    assert "src/rospy_control/testing/a.py:1" in out and "src/rospy_control/testing/b.py:1" in out


def test_xml_read_outside_the_two_readers_is_named(tmp_path):
    src = _tree(tmp_path, {"devices/cfg.py": "import os\n\ndef f():\n    from lxml import etree\n",
                           "board/config.py": "import xml.etree.ElementTree as ET\n",
                           "hardware_config/reader.py": "from lxml import etree\n",
                           "urdf.py": "from lxml import etree\n"})
    code, out = _run(src)
    assert code == 1
    assert "src/rospy_control/devices/cfg.py:4: imports the XML library lxml" in out
    assert "src/rospy_control/board/config.py:1: imports the XML library xml.etree.ElementTree" in out
    assert "reader.py" not in out and "urdf.py:" not in out


def test_the_simulator_using_a_drivers_device_class_is_named(tmp_path):
    src = _tree(tmp_path, {
        "devices/mit/codec.py": "X = 1\n", "devices/mit/device.py": "class Motor: pass\n",
        "middleware/configuration.py": "", "middleware/middleware.py": "",
        "simulator/motor.py": ("from rospy_control.devices.mit import codec as mit\n"
                               "from rospy_control.middleware.configuration import read_configuration\n"
                               "from rospy_control.devices.mit.device import Motor\n"),
        "simulator/robot.py": "def f():\n    from rospy_control.middleware.middleware import Middleware\n",
    })
    code, out = _run(src)
    assert code == 1
    assert "simulator/motor.py:3: the simulator imports rospy_control.devices.mit.device" in out
    assert "simulator/robot.py:2: the simulator imports rospy_control.middleware.middleware" in out
    assert "motor.py:1" not in out and "motor.py:2" not in out   # codecs and the readers: allowed
