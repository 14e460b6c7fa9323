"""Broken hardware XML, URDF transmissions and limits, joint_limits and controller YAML: one clear error.

Issue #12 item 4.  Two sources of broken input, both through the entry points the driver uses:

* a corpus of hand-written broken files, ``test/unit/data/broken/`` (each file's first line says what
  its error must name);
* hypothesis mutations of the shipped arm configuration (``config/arm_hardware.xml``,
  ``urdf/arm.urdf``, ``config/arm_joint_limits.yaml``, ``config/arm_controllers.yaml``): an attribute
  or text set to a hostile value or removed, an element removed, the file truncated.

Entry points: ``Middleware.from_xml`` (hardware XML), ``MiddlewareRobotHW.from_config`` (URDF
transmissions and limits, ``joint_limits`` parameters; what the driver's ``build_robot_hw`` runs),
``check_controller_params`` and ``ControllerManager.load_controller`` (controller YAML).  Each input
either loads, or fails with a ConfigError (RospyControlError) whose message names ``file:line`` or the
parameter -- never another exception, which the driver would print as a bare traceback.

``make test`` runs a fixed, derandomized budget; ``FUZZ_EXAMPLES=<n>`` (``make fuzz``) more.  Figures:
``.ws/fuzz/broken_config.json``.
"""
from __future__ import annotations

import copy
import os
import re
from collections import Counter, defaultdict

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from rospy_control.control_loop.driver_config import check_controller_params
from rospy_control.controller_manager import ControllerManager
from rospy_control.exceptions import ConfigError, RospyControlError
from rospy_control.middleware import Middleware
from rospy_control.controller_manager.controller_types import CONTROLLER_TYPES
from rospy_control.robot_hw import MiddlewareRobotHW
from rospy_control.testing import InMemoryGraph, InMemoryNodeHandle
from reports import register

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
BROKEN = os.path.join(ROOT, "test", "unit", "data", "broken")
RANDOM_BUDGET = int(os.environ.get("FUZZ_EXAMPLES", "0") or 0)
SETTINGS = dict(max_examples=RANDOM_BUDGET or 150, derandomize=not RANDOM_BUDGET, deadline=None,
                database=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
FIGURES: dict = defaultdict(Counter)
register("broken_config", lambda: {k: dict(v) for k, v in sorted(FIGURES.items())})


def read(*parts):
    with open(os.path.join(ROOT, *parts)) as f:
        return f.read()


ARM_XML = read("config", "arm_hardware.xml")
ARM_URDF = read("urdf", "arm.urdf")
ARM_LIMITS = yaml.safe_load(read("config", "arm_joint_limits.yaml"))["joint_limits"]
ARM_CONTROLLERS = yaml.safe_load(read("config", "arm_controllers.yaml"))
HOSTILE = ["", " ", "abc", "nan", "inf", "-inf", "-1", "0", "1e400", "-1e400", "1e308",
           "99999999999999999999",
           "0x10", "1,5", "true", "\u00e9", "<", "&amp;", "None", "3.5.1"]
HOSTILE_VALUES = [None, "abc", "", -1, 0, -1e400, float("nan"), float("inf"), True, [], {}, [1, 2], {"a": 1},
                  1e308, "1e400", -0.0]


def outcome(kind: str, call, where: re.Pattern):
    """Run ``call``; it may succeed, or raise a RospyControlError matching ``where``; anything else fails."""
    try:
        result = call()
    except RospyControlError as err:
        text = str(err)
        assert where.search(text), f"{kind}: the error names no file:line or parameter: {text!r}"
        assert "Traceback" not in text
        assert "\n" not in text.strip() or len(text.strip().splitlines()) <= 3, text
        FIGURES[kind]["clear error"] += 1
        return None
    FIGURES[kind]["loaded"] += 1
    return result


# -- mutations ------------------------------------------------------------------------------------
@st.composite
def mutated_xml(draw, text: str, tags=None):
    """``text`` with one element's attribute or text set to a hostile value, an attribute or a one-line
    element removed, or the file truncated."""
    lines = text.splitlines()
    kind = draw(st.sampled_from(["attribute", "attribute", "attribute", "remove_attribute", "text",
                                 "remove_line", "truncate", "garbage"]))
    if kind == "truncate":
        return text[:draw(st.integers(0, len(text) - 1))], kind
    if kind == "garbage":
        k = draw(st.integers(0, len(lines) - 1))
        lines.insert(k, draw(st.sampled_from(["<", "</robot>", "<unit>", "&bogus;", "<a b=c/>", "\x01"])))
        return "\n".join(lines), kind
    if kind == "text":
        candidates = [i for i, line in enumerate(lines) if re.search(r">[^<>]+</", line)]
        if candidates:
            i = draw(st.sampled_from(candidates))
            value = draw(st.sampled_from(HOSTILE)).replace("<", "&lt;")
            lines[i] = re.sub(r">([^<>]+)</", ">" + value + "</", lines[i], count=1)
            return "\n".join(lines), kind
        kind = "attribute"
    attr_lines = [i for i, line in enumerate(lines) if re.search(r'\w+="[^"]*"', line)
                  and (tags is None or any(f"<{t}" in line for t in tags))]
    i = draw(st.sampled_from(attr_lines))
    attrs = list(re.finditer(r'(\w+)="([^"]*)"', lines[i]))
    m = draw(st.sampled_from(attrs))
    if kind == "remove_line":
        if lines[i].rstrip().endswith("/>") and lines[i].lstrip().startswith("<"):
            del lines[i]
            return "\n".join(lines), kind
        kind = "remove_attribute"
    if kind == "remove_attribute":
        lines[i] = lines[i][:m.start()] + lines[i][m.end():]
    else:
        value = draw(st.sampled_from(HOSTILE)).replace("&", "&amp;").replace("<", "&lt;")
        lines[i] = lines[i][:m.start(2)] + value + lines[i][m.end(2):]
    return "\n".join(lines), kind


def mutate_tree(draw, tree):
    """One value of a nested dict set to a hostile value, or one key removed."""
    tree = copy.deepcopy(tree)
    paths = []

    def walk(node, path):
        if isinstance(node, dict):
            for k, v in node.items():
                paths.append(path + [k])
                walk(v, path + [k])
        elif isinstance(node, list):
            for k, v in enumerate(node):
                paths.append(path + [k])
                walk(v, path + [k])

    walk(tree, [])
    path = draw(st.sampled_from(paths))
    parent = tree
    for k in path[:-1]:
        parent = parent[k]
    if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
        del parent[path[-1]]
        return tree, "/".join(map(str, path)), "removed"
    parent[path[-1]] = draw(st.sampled_from(HOSTILE_VALUES))
    return tree, "/".join(map(str, path)), "set"


# -- hardware XML ---------------------------------------------------------------------------------
@settings(**SETTINGS)
@given(mutation=mutated_xml(ARM_XML))
def test_mutated_hardware_xml_gives_one_clear_error(tmp_path, mutation):
    text, kind = mutation
    path = str(tmp_path / "arm_hardware.xml")
    with open(path, "w") as f:
        f.write(text)
    mw = outcome("hardware XML", lambda: Middleware.from_xml(path), re.compile(re.escape(path) + r":\d+"))
    if mw is not None:
        mw.shutdown()


# -- URDF transmissions and limits, joint_limits ----------------------------------------------------
def build_hw(urdf_text, params=None):
    hw = MiddlewareRobotHW.from_config(ARM_XML, urdf_text, params, start=False)
    hw.shutdown()
    return hw


@settings(**SETTINGS)
@given(mutation=mutated_xml(ARM_URDF, tags=("limit", "joint", "transmission", "actuator", "safety_controller",
                                            "mimic")))
def test_mutated_urdf_gives_one_clear_error(mutation):
    text, kind = mutation
    outcome("URDF", lambda: build_hw(text, {"joint_limits": ARM_LIMITS}),
            re.compile(r"robot_description(:\d+|\b)|joint_limits/|URDF"))


@settings(**SETTINGS)
@given(data=st.data())
def test_mutated_joint_limits_give_one_clear_error(data):
    limits, where, _ = mutate_tree(data.draw, ARM_LIMITS)
    outcome("joint_limits", lambda: build_hw(ARM_URDF, {"joint_limits": limits}),
            re.compile(r"joint_limits"))


# -- controller YAML ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def arm_hw():
    hw = MiddlewareRobotHW.from_config(ARM_XML, ARM_URDF, {"joint_limits": ARM_LIMITS}, start=False)
    yield hw
    hw.shutdown()


@settings(**SETTINGS)
@given(data=st.data())
def test_mutated_controller_yaml_gives_one_clear_error(arm_hw, data):
    names = [n for n, v in ARM_CONTROLLERS.items() if isinstance(v, dict) and "type" in v]
    name = data.draw(st.sampled_from(names))
    ctrl, where, _ = mutate_tree(data.draw, {name: ARM_CONTROLLERS[name]})
    graph = InMemoryGraph(time=1.0)
    root = InMemoryNodeHandle("/", graph)
    root.set_param("robot_description", ARM_URDF)
    root.set_param("joint_limits", ARM_LIMITS)
    params = dict(ARM_CONTROLLERS, **ctrl)
    for key, value in params.items():
        root.set_param(key, value)
    cm = ControllerManager(arm_hw, root, switch_wall_margin=0.5, switch_wait_limit=1.0)
    joints = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint", "wrist_2_joint",
              "wrist_3_joint", "gripper_finger_joint", "gripper_finger_mirror_joint"]
    try:
        checked = outcome("controller YAML (checks)",
                          lambda: check_controller_params(params, "/", joints, cm.registry) or True,
                          re.compile(re.escape(f"/{name}")))
        if checked is None:
            return
        result = cm.load_controller(name)
        FIGURES["controller YAML (load)"]["loaded" if result.ok else "clear error"] += 1
        if not result.ok:
            assert "Traceback" not in result.message
            assert name in result.message, result.message
    finally:
        cm.shutdown()


# -- the hand-written corpus ------------------------------------------------------------------------
def corpus():
    return sorted(f for f in os.listdir(BROKEN) if not f.startswith("."))


def expectation(path):
    with open(path) as f:
        first = f.readline()
    m = re.search(r"expect: (.*?)\s*(-->)?\s*$", first)
    assert m, f"{path}: first line must say 'expect: <regex>'"
    return re.compile(m.group(1).replace("{path}", re.escape(path)))


@pytest.mark.parametrize("name", corpus())
def test_broken_corpus_file_gives_one_clear_error(name):
    path = os.path.join(BROKEN, name)
    where = expectation(path)
    with open(path) as f:
        text = f.read()
    if name.endswith(".xml"):
        call = lambda: Middleware.from_xml(path)  # noqa: E731
    elif name.endswith(".urdf"):
        call = lambda: build_hw(text, {"joint_limits": ARM_LIMITS})  # noqa: E731
    elif name.startswith("joint_limits"):
        call = lambda: build_hw(ARM_URDF, yaml.safe_load(text))  # noqa: E731
    else:
        params = yaml.safe_load(text)
        call = lambda: check_controller_params(  # noqa: E731
            params, "/", ["shoulder_pan_joint", "elbow_joint", "gripper_finger_joint"], CONTROLLER_TYPES)
    with pytest.raises(ConfigError) as info:
        call()
    assert where.search(str(info.value)), str(info.value)
    FIGURES["corpus"][os.path.splitext(name)[1] or name] += 1
