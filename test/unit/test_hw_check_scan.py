"""hw_check scan: probe frames byte for byte, and scans of the example arms and of mismatches (--sim)."""
import io
import os

import pytest

from rospy_control.adapter.tools import hw_check
from rospy_control.devices.cia402.probe import upload_probe
from rospy_control.devices.cubemars.probe import probe_frame as cubemars_probe
from rospy_control.devices.damiao.probe import disable_probe, register_probe
from rospy_control.devices.mit.probe import probe_frame as mit_probe
from rospy_control.devices.odrive.probe import probe_frames as odrive_probes
from rospy_control.devices.robstride.probe import probe_frame as robstride_probe
from rospy_control.devices.scan import frame_time

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
ARMS = sorted(f for f in os.listdir(os.path.join(ROOT, "config")) if f.startswith("arm_hardware"))


def test_probe_frames_match_the_documents():
    # DaMiao D5: register read MST_ID of motor 1
    assert register_probe(1) == (0x7FF, bytes.fromhex("0100330700000000"), False, False, 0)
    assert disable_probe(3, 0x100) == (0x103, bytes.fromhex("FFFFFFFFFFFFFFFD"), False, False, 0)
    # MIT exit motor mode
    assert mit_probe(5) == (5, bytes.fromhex("FFFFFFFFFFFFFFFD"), False, False, 0)
    # CiA 402 C3's form: SDO upload of 0x1000 from node 3
    assert upload_probe(3, 0x1000) == (0x603, bytes.fromhex("4000100000000000"), False, False, 0)
    # RobStride type 0 from host 0xFD to motor 0x7F: id 0x0000FD7F
    assert robstride_probe(0x7F) == (0x0000FD7F, bytes(8), True, False, 0)
    # ODrive: RTR Get_Version (cmd 0) and Get_Encoder_Estimates (cmd 9) of node 3
    assert [(p.arbitration_id, p.remote) for p in odrive_probes(3)] == [(0x060, True), (0x069, True)]
    # CubeMars V3: limp command to 0x800 + id, kp = kd = 0 in the first 24 bits
    p = cubemars_probe(4)
    assert p.arbitration_id == 0x804 and p.extended and p.data[:3] == bytes(3)


def test_frame_time_worst_case_at_1_mbit():
    assert frame_time(8, False, 1000000) == pytest.approx(135e-6)


def _scan(path, capsys):
    out = io.StringIO()
    status = hw_check.main(["scan", path, "--sim", "--listen", "0.3"], out)
    return status, out.getvalue() + capsys.readouterr().err


@pytest.mark.parametrize("name", ARMS)
def test_scan_of_each_example_arm_matches(name, capsys):
    status, text = _scan(os.path.join(ROOT, "config", name), capsys)
    assert status == 0, text
    assert "the bus matches the XML" in text


def _variant(tmp_path, name, unit, attrs):
    text = open(os.path.join(ROOT, "config", name)).read()
    i = text.index(f'name="{unit}"')
    j = text.index("<simulation", i)
    text = text[:j] + "<simulation " + attrs + " " + text[j + len("<simulation "):]
    path = tmp_path / name
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("name,attrs,status,words", [
    ("arm_hardware.xml", 'answer_id="9"', 4, ["(moved)", "'elbow_motor'", "id 9"]),
    ("arm_hardware.xml", 'silent="true"', 3, ["(missing)", "'elbow_motor'"]),
    ("arm_hardware_damiao.xml", 'answer_id="9"', 4, ["(moved)", "DaMiao id 9"]),
    ("arm_hardware_damiao.xml", 'id_offset="true" ctrl_mode="2"', 4, ["old firmware", "0x103"]),
    ("arm_hardware_odrive.xml", 'cyclic="false"', 4, ["neither heartbeat nor encoder"]),
    ("arm_hardware_odrive.xml", 'encoder_estimates="off"', 4, ["encoder estimates do not"]),
    ("arm_hardware_cia402.xml", 'nmt="stopped" heartbeat_ms="100"', 4, ["NMT STOPPED"]),
    ("arm_hardware_cia402.xml", 'answer_id="9"', 4, ["(moved)", "CiA 402 id 9"]),
    ("arm_hardware_robstride.xml", 'silent="true"', 3, ["(missing)", "RobStride"]),
    ("arm_hardware_robstride.xml", 'mode="mit"', 4, ["(protocol)", "'elbow_motor'", "MIT"]),
    ("arm_hardware_cubemars.xml", 'answer_id="9"', 4, ["(moved)", "CubeMars V3 id 9"]),
])
def test_scan_names_each_mismatch(tmp_path, capsys, name, attrs, status, words):
    got, text = _scan(_variant(tmp_path, name, "elbow_motor", attrs), capsys)
    assert got == status, text
    for w in words:
        assert w in text, text
