"""``hw_check params`` / ``backup`` / ``restore`` / ``set-id``: the frames of each protocol byte for byte
(vectors of device_protocols.md section 8 where it has them), and each subcommand against the
simulated devices of the example arms."""
from __future__ import annotations

import io
import os
import struct
import types

import pytest
import yaml

from rospy_control.adapter.tools import hw_check
from rospy_control.devices.cia402.parameters import Cia402Parameters
from rospy_control.devices.damiao.parameters import DamiaoParameters
from rospy_control.devices.odrive.parameters import OdriveParameters
from rospy_control.devices.parameters import ParameterError, Refused
from rospy_control.devices.robstride.parameters import RobStrideParameters

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _cfg(name: str) -> str:
    return os.path.join(ROOT, "config", name)


def _unit(**kw):
    return types.SimpleNamespace(name="m", channel_name="bus", where="", **kw)


# -- frames ---------------------------------------------------------------------------------------------
def test_damiao_register_frames_match_vector_d5():
    a = DamiaoParameters(_unit(can_id=1, master_id=0x11))
    ex = a.read(a.parameter("MST_ID"))
    assert (ex.frame.arbitration_id, ex.frame.data.hex()) == (0x7FF, "0100330700000000")
    ex = a.write(a.parameter("CTRL_MODE"), 2)
    assert (ex.frame.arbitration_id, ex.frame.data.hex()) == (0x7FF, "0100550a02000000")
    assert a.save().frame.data.hex() == "0100aa0000000000"
    assert a.set_id(5).frame.data.hex() == "0100550805000000"
    # the answer: on the master id, echoing slave id, command and register
    assert ex.answer(0x11, False, bytes.fromhex("0100550a02000000")) == 2
    assert ex.answer(0x11, False, bytes.fromhex("0100550b02000000")) is None   # another register


def test_damiao_refuses_out_of_range_and_read_only_values():
    a = DamiaoParameters(_unit(can_id=1, master_id=0x11))
    with pytest.raises(ParameterError, match=r"CTRL_MODE=5 is outside .*\[1, 4\]"):
        a.write(a.parameter("CTRL_MODE"), "5")
    with pytest.raises(ParameterError, match="read-only"):
        a.write(a.parameter("SN"), "1")
    with pytest.raises(ParameterError, match="set-id"):
        a.write(a.parameter("ESC_ID"), "2")


def test_robstride_parameter_frames_match_vector_r1_and_save_is_robstride_only():
    rs02 = _unit(can_id=2, host_id=0xAA, model="rs02", limits=None)
    from rospy_control.devices.robstride import codec as rs
    rs02.limits = rs.limits_for("rs02")
    a = RobStrideParameters(rs02)
    ex = a.write(a.parameter("run_mode"), 1)
    assert (ex.frame.arbitration_id, ex.frame.data.hex()) == (0x1200AA02, "0570000001000000")
    assert ex.frame.is_extended_id
    s = a.save()
    assert (s.frame.arbitration_id, s.frame.data.hex()) == (0x1600AA02, "0102030405060708")
    assert a.set_id(9).frame.arbitration_id == 0x0709AA02
    with pytest.raises(ParameterError, match="limit_spd"):
        a.write(a.parameter("limit_spd"), 100.0)   # rs02: 0..44 rad/s
    cg = _unit(can_id=2, host_id=0xAA, model="cybergear", limits=rs.limits_for("cybergear"))
    with pytest.raises(Refused, match="type 22 changes the baud rate"):
        RobStrideParameters(cg).save()


def test_cia402_sdo_frames_match_vectors_and_store_signature():
    a = Cia402Parameters(_unit(node_id=3))
    ex = a.read(a.parameter("statusword"))
    assert (ex.frame.arbitration_id, ex.frame.data.hex()) == (0x603, "4041600000000000")   # C3
    assert ex.answer(0x583, False, bytes.fromhex("4b41600037020000")) == 0x0237
    ex = a.write(a.parameter("0x6072"), 1500)
    assert ex.frame.data.hex() == "2b726000dc050000"
    assert a.save().frame.data.hex() == "2310100173617665"   # "save"
    with pytest.raises(ParameterError, match="Object does not exist"):
        ex.answer(0x583, False, bytes.fromhex("8072600000000206"))
    with pytest.raises(Refused, match="LSS"):
        a.set_id(4)


def test_odrive_sets_only_and_needs_both_values_of_a_message():
    a = OdriveParameters(_unit(node_id=3, firmware="0.5"))
    ex, = a.writes({"vel_gain": 0.25, "vel_integrator_gain": 0.5})
    assert (ex.frame.arbitration_id, ex.frame.data) == (0x07B, struct.pack("<ff", 0.25, 0.5))
    with pytest.raises(ParameterError, match="give both"):
        a.writes({"vel_limit": 2.0})
    with pytest.raises(Refused, match="no parameter read"):
        a.read(a.parameter("pos_gain"))
    assert (a.set_id(9).frame.arbitration_id, a.set_id(9).frame.data.hex()) == (0x066, "09000000")
    with pytest.raises(Refused, match="Address"):
        OdriveParameters(_unit(node_id=3, firmware="0.6")).set_id(9)


# -- against the simulated devices -------------------------------------------------------------------
def _run(*argv):
    out = io.StringIO()
    code = hw_check.main(list(argv) + ["--sim"], out)
    return code, out.getvalue()


def test_params_get_lists_every_register_of_a_simulated_damiao():
    code, text = _run("params", _cfg("arm_hardware_damiao.xml"), "elbow_motor", "get")
    assert code == 0, text
    assert "PMAX" in text and "CTRL_MODE" in text and "rad/s" in text and "(read-only)" in text


def test_params_set_writes_ram_reads_back_and_save_stores_it(capsys):
    path = _cfg("arm_hardware_robstride.xml")
    code, text = _run("params", path, "elbow_motor", "set", "limit_spd", "3.5", "--yes", "--save")
    assert code == 0, text + capsys.readouterr().err
    assert "limit_spd = 3.5" in text and "save parameters (type 22) sent" in text
    code, _ = _run("params", path, "wrist_a_motor", "save", "--yes")   # a CyberGear
    assert code == 1 and "CyberGear offers no command that stores" in capsys.readouterr().err


def test_a_value_the_drive_refuses_is_its_abort(capsys):
    code, _ = _run("params", _cfg("arm_hardware_cia402.xml"), "elbow_motor", "set", "max_torque", "40000")
    assert code == 1 and "Value of parameter written too high" in capsys.readouterr().err


@pytest.mark.parametrize("config, unit, words", [
    ("arm_hardware.xml", "elbow_motor", "MIT mode"),
    ("arm_hardware_cubemars.xml", "elbow_motor", "CubeMars V3"),
    ("arm_hardware_cia402.xml", "elbow_motor", "LSS"),
    ("arm_hardware_odrive.xml", "shoulder_pan_motor", "Address"),
])
def test_set_id_is_refused_where_the_document_has_no_id_command(config, unit, words, capsys):
    code, _ = _run("set-id", _cfg(config), unit, "9", "--yes")
    err = capsys.readouterr().err
    assert code == 1 and words in err and "nothing was sent" in err


def test_damiao_set_id_moves_the_motor_and_only_a_store_survives_a_power_cycle(capsys):
    from rospy_control.adapter.tools import hw_check_session
    from rospy_control.adapter.tools.hw_check_session import open_session
    args = types.SimpleNamespace(config=_cfg("arm_hardware_damiao.xml"), sim=True, hardware=False,
                                 timeout=0.5)
    session = open_session("t", args)
    try:
        access = session.access("elbow_motor")
        session.run(access, access.set_id(9))
        assert session.run(access, access.probe(9)) == 9
        device = session.robot.firmware_of("elbow_motor").by_name["elbow_motor"].device
        device.power_cycle()                      # not stored: back at id 3
        assert session.run(access, access.probe(3)) == 3
        session.run(access, access.set_id(9))
        session.run(access, access.save(9))
        session.run(access, access.probe(9))     # the store has no answer: wait for it to be handled
        device.power_cycle()
        assert session.run(access, access.probe(9)) == 9
        with pytest.raises(hw_check_session.NoAnswer):
            session.run(access, access.probe(3))
    finally:
        session.close()


def test_set_id_prints_the_xml_line_and_notes_the_master_id():
    code, text = _run("set-id", _cfg("arm_hardware_damiao.xml"), "elbow_motor", "0x09", "--yes")
    assert code == 0, text
    assert "answers at 9" in text and "MST_ID (register 7) is unchanged" in text
    assert 'change can_id="3" to can_id="9"' in text and "arm_hardware_damiao.xml:" in text


def test_set_id_refuses_an_id_another_unit_has(capsys):
    code, _ = _run("set-id", _cfg("arm_hardware_robstride.xml"), "elbow_motor", "4", "--yes")
    assert code == 1 and "already another unit's" in capsys.readouterr().err


def test_backup_then_restore_and_a_restore_onto_another_device_is_refused(tmp_path, capsys):
    path = str(tmp_path / "arm.yaml")
    code, text = _run("backup", _cfg("arm_hardware_damiao.xml"), path)
    assert code == 0, text
    doc = yaml.safe_load(open(path))
    assert doc["elbow_motor"]["protocol"] == "DaMiao" and doc["elbow_motor"]["id"] == 3
    assert doc["elbow_motor"]["parameters"]["SN"]["restore"] is False
    assert doc["gripper_motor"]["parameters"] == {} and "MIT mode" in doc["gripper_motor"]["note"]
    doc["elbow_motor"]["parameters"]["VMAX"]["value"] = 7.5
    yaml.safe_dump(doc, open(path, "w"))
    code, text = _run("restore", _cfg("arm_hardware_damiao.xml"), path)
    assert code == 0, text + capsys.readouterr().err
    assert "elbow_motor: 24 parameters restored" in text and "to RAM" in text   # read back equal
    doc["elbow_motor"]["parameters"]["CTRL_MODE"]["value"] = 9
    yaml.safe_dump(doc, open(path, "w"))
    code, _ = _run("restore", _cfg("arm_hardware_damiao.xml"), path)
    assert code == 1 and "unit 'elbow_motor': CTRL_MODE=9 is outside" in capsys.readouterr().err
    doc["elbow_motor"]["parameters"]["CTRL_MODE"]["value"] = 1
    yaml.safe_dump(doc, open(path, "w"))
    code, _ = _run("restore", _cfg("arm_hardware_robstride.xml"), path)
    err = capsys.readouterr().err
    assert code == 1 and "refused: the backup is of a DaMiao device with id 3" in err
    assert "nothing was sent" in err
