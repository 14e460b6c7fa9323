"""load_transmission: per-type full/minimal/invalid fixtures and required/optional rules."""
from __future__ import annotations

import pytest

from rospy_control.transmission_interface import (
    TRANSMISSION_LOADERS,
    DifferentialTransmission,
    FourBarLinkageTransmission,
    SimpleTransmission,
    TransmissionInterfaceError,
    TransmissionLoader,
    TransmissionParser,
    load_transmission,
)


def parse(urdf, name):
    return TransmissionParser.parse(urdf(name), source=name)


def test_simple_full(urdf):
    (info,) = parse(urdf, "simple_transmission_loader_full.urdf")
    assert info.joints[0].role == "" and len(info.joints[0].hardware_interfaces) == 3
    tr = load_transmission(info)
    assert isinstance(tr, SimpleTransmission)
    assert (tr.get_mechanical_reduction(), tr.get_joint_offset()) == (50.0, 0.5)


def test_simple_minimal(urdf):
    (info,) = parse(urdf, "simple_transmission_loader_minimal.urdf")
    tr = load_transmission(info)
    assert (tr.get_mechanical_reduction(), tr.get_joint_offset()) == (50.0, 0.0)


def test_simple_invalid_all_parse_all_fail(urdf):
    infos = parse(urdf, "simple_transmission_loader_invalid.urdf")
    assert len(infos) == 4
    messages = []
    for info in infos:
        with pytest.raises(TransmissionInterfaceError) as err:
            load_transmission(info)
        messages.append(str(err.value))
    assert "Transmission 'no_reduction' (simple_transmission_loader_invalid.urdf:" in messages[0]
    assert "actuator 'a1' does not specify the required <mechanicalReduction> element" in messages[0]
    assert "actuator 'a2' has an invalid <mechanicalReduction> element 'fifty': it must be a number" \
        in messages[1]
    assert "joint 'j3' has an invalid <offset> element 'zero': it must be a number" in messages[2]
    assert "reduction cannot be zero" in messages[3]


@pytest.mark.parametrize("stem, cls", [("differential", DifferentialTransmission),
                                       ("four_bar_linkage", FourBarLinkageTransmission)])
def test_two_by_two_full_orders_by_role(urdf, stem, cls):
    (info,) = parse(urdf, f"{stem}_transmission_loader_full.urdf")
    assert [j.name for j in info.joints] == ["bar_joint", "foo_joint"]  # reverse document order
    tr = load_transmission(info)
    assert isinstance(tr, cls)
    assert tr.get_actuator_reduction() == [50.0, -50.0]
    assert tr.get_joint_reduction() == [2.0, -2.0]
    assert tr.get_joint_offset() == [0.5, -0.5]


@pytest.mark.parametrize("stem", ["differential", "four_bar_linkage"])
def test_two_by_two_minimal_defaults(urdf, stem):
    (info,) = parse(urdf, f"{stem}_transmission_loader_minimal.urdf")
    tr = load_transmission(info)
    assert tr.get_actuator_reduction() == [50.0, -50.0]
    assert tr.get_joint_reduction() == [1.0, 1.0]
    assert tr.get_joint_offset() == [0.0, 0.0]


EXPECTED_2X2 = {
    "joint_role_missing": "joint 'j1_joint_role_missing' does not specify the required <role> element",
    "joint_role_invalid": "has an invalid <role> 'joint3': expected one of 'joint1', 'joint2'",
    "joint_role_empty": "joint 'j1_joint_role_empty' has an empty <role> element",
    "actuator_role_missing": "actuator 'a1_actuator_role_missing' does not specify the required <role>",
    "actuator_role_invalid": "has an invalid <role> 'actuator3': expected one of 'actuator1', 'actuator2'",
    "actuator_role_empty": "actuator 'a1_actuator_role_empty' has an empty <role> element",
    "joint_roles_duplicate": "both have role 'joint1'; roles must be distinct",
    "actuator_roles_duplicate": "both have role 'actuator1'; roles must be distinct",
    "actuator_reduction_missing": "does not specify the required <mechanicalReduction> element",
    "actuator_reduction_nan": "invalid <mechanicalReduction> element 'fifty'",
    "joint_reduction_nan": "invalid <mechanicalReduction> element 'zero'",
    "joint_reduction_zero": "joint_reduction[0] cannot be zero",
    "joint_offset_nan": "invalid <offset> element 'zero'",
    "actuator_reduction_zero": "actuator_reduction[0] cannot be zero",
}


@pytest.mark.parametrize("stem, count", [("differential", 13), ("four_bar_linkage", 14)])
def test_two_by_two_invalid_all_parse_all_fail(urdf, stem, count):
    infos = parse(urdf, f"{stem}_transmission_loader_invalid.urdf")
    assert len(infos) == count
    for info in infos:
        with pytest.raises(TransmissionInterfaceError) as err:
            load_transmission(info)
        assert f"Transmission '{info.name}'" in str(err.value)
        assert EXPECTED_2X2[info.name] in str(err.value)


def test_counts_checked_first():
    text = """<robot name='r'><transmission name='t'>
      <type>transmission_interface/DifferentialTransmission</type>
      <joint name='j'><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
      <actuator name='a'/></transmission></robot>"""
    (info,) = TransmissionParser.parse(text)
    with pytest.raises(TransmissionInterfaceError, match=r"expected 2 actuator\(s\), got 1"):
        load_transmission(info)


def test_reduction_under_transmission_hints_where_it_belongs():
    text = """<robot name='r'><transmission name='t'><type>transmission_interface/SimpleTransmission</type>
      <joint name='j'><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
      <actuator name='a'/><mechanicalReduction>5</mechanicalReduction></transmission></robot>"""
    (info,) = TransmissionParser.parse(text)
    with pytest.raises(TransmissionInterfaceError, match="move it into <actuator>"):
        load_transmission(info)


def test_unsupported_type_lists_known_types():
    text = """<robot name='r'><transmission name='t'><type>acme/Magic</type>
      <joint name='j'><hardwareInterface>hardware_interface/EffortJointInterface</hardwareInterface></joint>
      <actuator name='a'/></transmission></robot>"""
    (info,) = TransmissionParser.parse(text)
    with pytest.raises(TransmissionInterfaceError, match="unsupported type 'acme/Magic'.*SimpleTransmission"):
        load_transmission(info)


class DoublingLoader(TransmissionLoader):
    def load(self, info):
        return SimpleTransmission(2.0)


def test_third_party_type_through_registry_and_module_path():
    TRANSMISSION_LOADERS.register("acme/Doubling", DoublingLoader)
    for type_name in ("acme/Doubling", f"{__name__}:DoublingLoader"):
        text = f"""<robot name='r'><transmission name='t'><type>{type_name}</type>
          <joint name='j'><hardwareInterface>x</hardwareInterface></joint><actuator name='a'/>
          </transmission></robot>"""
        (info,) = TransmissionParser.parse(text)
        assert load_transmission(info).get_mechanical_reduction() == 2.0
