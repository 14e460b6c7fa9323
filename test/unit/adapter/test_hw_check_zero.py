"""``hw_check zero``: the maker's set-zero command where the device has one, the XML's zero_offset
where it has none; asks first, never saves unasked, refuses while another host commands the bus."""
from __future__ import annotations

import io
import os
import threading
import uuid

import can

from rospy_control.adapter.tools import hw_check, hw_check_zero
from rospy_control.adapter.tools.hw_check_zero import foreign_commands
from rospy_control.middleware import Middleware

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def _xml(tmp_path, start: float = 0.7, channel: str = "", simulated: bool = True) -> str:
    chan = channel or f"zero-{uuid.uuid4().hex[:8]}"
    text = (f'<hardware name="t"><channel name="bus" interface="virtual" channel="{chan}" rate="500" '
            f'fault_timeout="0.05"><simulation enabled="{"true" if simulated else "false"}"/></channel>'
            '<unit name="m1" type="rospy_control/Motor" channel="bus" can_id="1">'
            f'<simulation initial_position="{start}"/></unit></hardware>')
    path = tmp_path / "hw.xml"
    path.write_text(text)
    return str(path)


def _run(argv, answer="y\n"):
    """hw_check zero with ``answer`` typed at its question."""
    out = io.StringIO()
    code = hw_check_zero.main(argv, out, answer=lambda: answer)
    return code, out.getvalue()


def test_the_makers_set_zero_makes_the_current_position_zero(tmp_path):
    out = io.StringIO()
    code = hw_check.main(["zero", _xml(tmp_path), "m1", "--sim", "--yes"], out)
    text = out.getvalue()
    assert code == 0, text
    assert "reads 0.69" in text or "reads 0.70" in text, text
    assert "set zero sent" in text
    after = float(text.split("now reads ")[1].split()[0])
    assert abs(after) < 0.01, text


def test_it_asks_first_and_a_no_sends_nothing(tmp_path):
    code, text = _run([_xml(tmp_path), "m1", "--sim"], answer="n\n")
    assert code == 1 and "[y/N]" in text and "nothing sent" in text


def test_save_is_refused_where_the_device_keeps_no_zero_in_flash(tmp_path, capsys):
    code, _ = _run([_xml(tmp_path), "m1", "--sim", "--yes", "--save"])
    assert code == 1 and "--save refused" in capsys.readouterr().err


def test_a_device_without_a_set_zero_command_gets_the_zero_offset_for_the_xml():
    out = io.StringIO()
    path = os.path.join(ROOT, "config", "arm_hardware_odrive.xml")
    unit = Middleware.from_xml(path).motors()[0].name
    code = hw_check.main(["zero", path, unit, "--sim", "--yes"], out)
    text = out.getvalue()
    assert code == 0, text
    assert "no set-zero command" in text and 'zero_offset="' in text and "nothing was sent" in text


def test_it_refuses_while_another_host_commands_the_devices(tmp_path, capsys):
    chan = f"foreign-{uuid.uuid4().hex[:8]}"
    path = _xml(tmp_path, channel=chan, simulated=False)
    other = can.Bus(interface="virtual", channel=chan)
    stop = threading.Event()

    def drive():   # another host's controller, commanding motor 1 at 200 Hz
        while not stop.wait(0.005):
            other.send(can.Message(arbitration_id=1, is_extended_id=False, data=bytes(8)))
    t = threading.Thread(target=drive, daemon=True)
    t.start()
    try:
        mw = Middleware.from_xml(path)
        assert ("bus", 1) in foreign_commands(mw, [])
        code, _ = _run([path, "m1", "--hardware", "--yes"])
        assert code == 1 and "another host is commanding" in capsys.readouterr().err
    finally:
        stop.set()
        t.join()
        other.shutdown()
