"""CombinedRobotHW: merging, loading from params, filtered switch forwarding."""
from __future__ import annotations

import logging

import pytest

from rospy_control.exceptions import ConfigError, HardwareInterfaceError, PluginError
from rospy_control.hardware_interface import (
    ROBOT_HW,
    CombinedRobotHW,
    ControllerInfo,
    EffortJointInterface,
    InterfaceResources,
    JointData,
    JointHandle,
    JointStateHandle,
    JointStateInterface,
    ParamNodeHandle,
    PositionJointInterface,
    RobotHW,
    SwitchState,
)

POS = PositionJointInterface.TYPE_NAME
EFF = EffortJointInterface.TYPE_NAME
JS = JointStateInterface.TYPE_NAME


class RecordingHW(RobotHW):
    """A RobotHW with joints from its init params, recording every call."""

    def __init__(self, joints=(), result=SwitchState.DONE, accept=True):
        super().__init__()
        self.calls = []
        self.result = result
        self.accept = accept
        self._add_joints(joints)

    def _add_joints(self, joints):
        state = self.get(JointStateInterface) or JointStateInterface()
        pos = self.get(PositionJointInterface) or PositionJointInterface()
        eff = self.get(EffortJointInterface) or EffortJointInterface()
        for name in joints:
            sh = JointStateHandle(name, JointData())
            state.register_handle(sh)
            pos.register_handle(JointHandle(sh))
            eff.register_handle(JointHandle(sh))
        for iface in (state, pos, eff):
            if self.get(type(iface)) is None:
                self.register_interface(iface)

    def init(self, root_nh, robot_hw_nh):
        self.calls.append(("init", robot_hw_nh.namespace))
        self._add_joints(robot_hw_nh.get_param("joints", []))
        return robot_hw_nh.get_param("ok", True)

    def read(self, time, period):
        self.calls.append(("read", time))

    def write(self, time, period):
        self.calls.append(("write", time))

    def prepare_switch(self, start_list, stop_list):
        self.calls.append(("prepare", start_list, stop_list))
        return self.accept

    def do_switch(self, start_list, stop_list):
        self.calls.append(("do", start_list, stop_list))

    def switch_result(self, info=None):
        self.calls.append(("result", info))
        return self.result


ROBOT_HW.register("test/RecordingHW", RecordingHW)


def info(name, *claims):
    return ControllerInfo(name, "t", [InterfaceResources(iface, set(res)) for iface, res in claims])


def test_merges_interfaces_and_reads_writes_in_order():
    a, b = RecordingHW(["a1"]), RecordingHW(["b1"])
    hw = CombinedRobotHW([a, b])
    assert hw.get(PositionJointInterface).get_names() == ["a1", "b1"]
    assert hw.get_interface_resources(EFF) == ["a1", "b1"]
    hw.read(1.0, 0.1)
    hw.write(2.0, 0.1)
    assert a.calls == [("read", 1.0), ("write", 2.0)] and b.calls == [("read", 1.0), ("write", 2.0)]
    assert hw.robot_hws == [a, b]


def test_rejects_non_robot_hw_parts():
    with pytest.raises(HardwareInterfaceError, match="is not a RobotHW"):
        CombinedRobotHW([object()])  # type: ignore[list-item]


def test_switch_lists_are_filtered_to_each_parts_resources():
    a, b = RecordingHW(["a1", "a2"]), RecordingHW(["b1"])
    hw = CombinedRobotHW([a, b])
    both = info("both", (POS, {"a1", "b1"}))
    only_a = info("only_a", (EFF, {"a2"}))
    jsc = info("jsc", (JS, set()))
    stop = info("old", (POS, {"b1"}))
    assert hw.prepare_switch([both, only_a, jsc], [stop]) is True
    hw.do_switch([both, only_a, jsc], [stop])
    for part in (a, b):
        kinds = [c[0] for c in part.calls]
        assert kinds == ["prepare", "do"]
    _, a_start, a_stop = a.calls[0]
    assert [c.name for c in a_start] == ["both", "only_a", "jsc"]
    assert a_start[0].claimed_resources == [InterfaceResources(POS, {"a1"})]
    assert a_stop == []
    _, b_start, b_stop = b.calls[1]
    assert [c.name for c in b_start] == ["both", "jsc"]
    assert b_start[0].claimed_resources == [InterfaceResources(POS, {"b1"})]
    assert [c.name for c in b_stop] == ["old"]


def test_controllers_without_claims_reach_every_part():
    a, b = RecordingHW(["a1"]), RecordingHW(["b1"])
    hw = CombinedRobotHW([a, b])
    hw.prepare_switch([ControllerInfo("empty", "t", [])], [])
    assert [c.name for c in a.calls[0][1]] == ["empty"] and [c.name for c in b.calls[0][1]] == ["empty"]


def test_prepare_switch_veto_by_one_part(caplog):
    a, b = RecordingHW(["a1"]), RecordingHW(["b1"], accept=False)
    hw = CombinedRobotHW([a, b])
    with caplog.at_level(logging.ERROR):
        assert hw.prepare_switch([info("c", (POS, {"b1"}))], []) is False
    assert "refused the controller switch" in caplog.text


@pytest.mark.parametrize(
    "results, expected",
    [
        ((SwitchState.DONE, SwitchState.DONE), SwitchState.DONE),
        ((SwitchState.DONE, SwitchState.ONGOING), SwitchState.ONGOING),
        ((SwitchState.ONGOING, SwitchState.ERROR), SwitchState.ERROR),
    ],
)
def test_switch_result_combines_parts(results, expected):
    hw = CombinedRobotHW([RecordingHW(["a1"], result=results[0]), RecordingHW(["b1"], result=results[1])])
    assert hw.switch_result() is expected


def test_switch_result_per_controller_asks_only_owning_parts():
    a = RecordingHW(["a1"], result=SwitchState.DONE)
    b = RecordingHW(["b1"], result=SwitchState.ONGOING)
    hw = CombinedRobotHW([a, b])
    assert hw.switch_result(info("c", (POS, {"a1"}))) is SwitchState.DONE
    assert b.calls == []
    assert hw.switch_result(info("d", (POS, {"b1"}))) is SwitchState.ONGOING
    assert hw.switch_result(info("jsc")) is SwitchState.ONGOING  # no claims: every part


def test_conflicts_across_parts():
    hw = CombinedRobotHW([RecordingHW(["a1"]), RecordingHW(["b1"])])
    assert not hw.check_for_conflict([info("x", (POS, {"a1"})), info("y", (POS, {"b1"}))])
    assert hw.check_for_conflict([info("x", (POS, {"a1", "b1"})), info("y", (EFF, {"b1"}))])


def test_part_specific_conflict_rule_is_consulted():
    class Strict(RecordingHW):
        def check_for_conflict(self, infos):
            self.calls.append(("conflict", [i.name for i in infos]))
            return len(infos) > 1

    strict = Strict(["s1", "s2"])
    hw = CombinedRobotHW([RecordingHW(["a1"]), strict])
    assert hw.check_for_conflict([info("x", (POS, {"s1"})), info("y", (POS, {"s2"}))])
    assert strict.calls == [("conflict", ["x", "y"])]


PARAMS = {
    "robot_hardware": ["arm", "legs"],
    "arm": {"type": "test/RecordingHW", "joints": ["arm_1"]},
    "legs": {"type": f"{__name__}:RecordingHW", "joints": ["leg_1", "leg_2"]},
}


def test_from_params_loads_each_part_with_its_namespace():
    hw = CombinedRobotHW.from_params(PARAMS, namespace="/robot")
    assert hw.robot_hw_names == ["arm", "legs"]
    assert [p.calls[0] for p in hw.robot_hws] == [("init", "/robot/arm"), ("init", "/robot/legs")]
    assert hw.get_interface_resources(POS) == ["arm_1", "leg_1", "leg_2"]


def test_init_from_node_handle_returns_false_on_failure(caplog):
    bad = dict(PARAMS, legs={"type": "test/RecordingHW", "ok": False})
    hw = CombinedRobotHW()
    with caplog.at_level(logging.ERROR):
        assert hw.init(None, ParamNodeHandle(bad, "/hw")) is False
    assert "robot hardware 'legs' (test/RecordingHW) failed to initialise" in caplog.text
    assert CombinedRobotHW().init(None, ParamNodeHandle(PARAMS, "/hw")) is True


def test_from_params_errors():
    with pytest.raises(ConfigError, match="/robot_hardware: parameter is not set"):
        CombinedRobotHW.from_params({})
    with pytest.raises(ConfigError, match="expected a list of RobotHW names"):
        CombinedRobotHW.from_params({"robot_hardware": "arm"})
    with pytest.raises(ConfigError, match=r"robot hardware 'arm' is not specified \(set '/arm/type'"):
        CombinedRobotHW.from_params({"robot_hardware": ["arm"], "arm": {}})
    with pytest.raises(PluginError, match="unknown robot hardware type 'nope/HW'"):
        CombinedRobotHW.from_params({"robot_hardware": ["arm"], "arm": {"type": "nope/HW"}})
    with pytest.raises(PluginError, match="does not derive from"):
        CombinedRobotHW.from_params({"robot_hardware": ["arm"], "arm": {"type": "builtins:dict"}})


def test_param_node_handle():
    nh = ParamNodeHandle({"a": {"b": 1}}, "/ns")
    assert nh.get_param("a/b") == 1 and nh.has_param("a/b") and not nh.has_param("a/c")
    assert nh.child("a").get_param("b") == 1 and nh.child("a").namespace == "/ns/a"
    assert nh.get_param("zz", 5) == 5
    with pytest.raises(KeyError, match="'/ns/zz' is not set"):
        nh.get_param("zz")


def test_middleware_robot_hw_type_resolves_from_configuration_alone():
    # A robot_hardware/<name>/type string must work without the caller importing robot_hw first,
    # and listing the registry must not import it.
    import os
    import subprocess
    import sys
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "src")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(src) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    probe = (
        "import sys\n"
        "from rospy_control.hardware_interface import ROBOT_HW\n"
        "assert 'rospy_control/MiddlewareRobotHW' in ROBOT_HW.names()\n"
        "assert 'rospy_control.robot_hw' not in sys.modules\n"
        "print(ROBOT_HW.resolve('rospy_control/MiddlewareRobotHW').__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "MiddlewareRobotHW"
