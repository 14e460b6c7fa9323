"""The optional capabilities of RobotHW: safe defaults, and CombinedRobotHW aggregating them."""
from __future__ import annotations

from rospy_control.hardware_interface import RobotHW
from rospy_control.hardware_interface.combined_robot_hw import CombinedRobotHW


class Part(RobotHW):
    """A part with its own faults, caps, readiness and status."""

    def __init__(self, name, joints, faulted=None, resettable=True, caps=None, not_ready=None, report=None):
        super().__init__()
        self.name = name
        self.joints = joints
        self.faulted = dict(faulted or {})
        self.resettable = resettable
        self.caps = dict(caps or {})
        self.not_ready = dict(not_ready or {})
        self.report = report
        self.requests = []
        self.calls = []

    def start(self):
        self.calls.append("start")

    def shutdown(self):
        self.calls.append("shutdown")

    def faulted_joints(self):
        return {j: r for j, r in self.faulted.items() if j in self.joints}

    def faulted_units(self):
        return {f"{self.name}_unit": r for r in self.faulted.values()}

    def reset_faults(self, timeout=None):
        self.calls.append(("reset", timeout))
        if self.resettable:
            self.faulted.clear()
        return self.faulted_units()

    def consume_reset_request(self):
        return self.requests.pop(0) if self.requests else False

    def limit_command_steps(self, nominal_period, periods=2.0):
        self.calls.append(("limit", nominal_period, periods))
        return dict(self.caps)

    def not_ready_joints(self):
        return dict(self.not_ready)

    def status(self):
        return self.report


def test_a_plain_robot_hw_has_every_capability_with_a_safe_default():
    hw = RobotHW()
    hw.start()
    hw.shutdown()
    assert hw.faulted_joints() == {} and hw.faulted_units() == {}
    assert hw.reset_faults() == {} and hw.reset_faults(1.0) == {}
    assert hw.consume_reset_request() is False
    assert hw.limit_command_steps(0.005) == {}
    assert hw.not_ready_joints() == {} and hw.is_ready()
    assert hw.status() is None
    assert hw.middlewares() == []


def test_the_default_reset_leaves_the_faulted_units_in_fault():
    class Faulty(RobotHW):
        def faulted_joints(self):
            return {"j": "overheated"}

    assert Faulty().reset_faults() == {"j": "overheated"}


def test_faults_are_the_union_and_reset_goes_to_the_faulted_parts_only():
    arm = Part("arm", ["a1", "a2"], faulted={"a1": "silent"})
    grip = Part("grip", ["g"], faulted={"g": "jammed"}, resettable=False)
    board = Part("board", ["b"])
    hw = CombinedRobotHW([arm, grip, board])
    assert hw.faulted_joints() == {"a1": "silent", "g": "jammed"}
    assert hw.faulted_units() == {"arm_unit": "silent", "grip_unit": "jammed"}
    assert hw.reset_faults(0.5) == {"grip_unit": "jammed"}
    assert ("reset", 0.5) in arm.calls and ("reset", 0.5) in grip.calls
    assert not any(isinstance(c, tuple) and c[0] == "reset" for c in board.calls)
    assert hw.faulted_joints() == {"g": "jammed"}


def test_a_part_whose_reset_raises_keeps_its_units_in_fault_and_the_others_are_reset():
    class Broken(Part):
        def reset_faults(self, timeout=None):
            raise RuntimeError("no link")

    arm = Part("arm", ["a"], faulted={"a": "silent"})
    broken = Broken("x", ["x"], faulted={"x": "stuck"})
    still = CombinedRobotHW([broken, arm]).reset_faults()
    assert still == {"x_unit": "reset failed: RuntimeError: no link"}
    assert arm.faulted == {}


def test_a_reset_request_of_any_part_restarts_the_controllers_and_every_request_is_consumed():
    arm, grip = Part("arm", ["a"]), Part("grip", ["g"])
    arm.requests = [True]
    grip.requests = [True]
    hw = CombinedRobotHW([arm, grip])
    assert hw.consume_reset_request() is True
    assert arm.requests == [] and grip.requests == []
    assert hw.consume_reset_request() is False


def test_the_step_cap_goes_to_every_part_and_the_caps_are_merged():
    arm = Part("arm", ["a"], caps={"shoulder_motor": 0.01})
    grip = Part("grip", ["g"])
    hw = CombinedRobotHW([arm, grip])
    assert hw.limit_command_steps(0.005) == {"shoulder_motor": 0.01}
    assert ("limit", 0.005, 2.0) in arm.calls and ("limit", 0.005, 2.0) in grip.calls


def test_readiness_needs_every_part():
    arm = Part("arm", ["a"])
    grip = Part("grip", ["g"], not_ready={"g": "not connected"})
    hw = CombinedRobotHW([arm, grip])
    assert hw.not_ready_joints() == {"g": "not connected"}
    assert not hw.is_ready()
    grip.not_ready = {}
    assert hw.is_ready()


def test_start_in_order_and_shutdown_in_reverse():
    order = []

    class Logged(Part):
        def start(self):
            order.append(("start", self.name))

        def shutdown(self):
            order.append(("shutdown", self.name))

    hw = CombinedRobotHW([Logged("a", []), Logged("b", [])])
    hw.start()
    hw.shutdown()
    assert order == [("start", "a"), ("start", "b"), ("shutdown", "b"), ("shutdown", "a")]


def test_status_of_one_part_is_its_own_and_of_several_the_concatenation():
    arm_report = {"hold_mode": "position", "joints": {"a": {"interface": None, "fault": False}},
                  "motors": {"m": {"joints": ["a"]}}, "switch": {"pending": ["m"], "finished": False},
                  "values": [("bus", "can0")]}
    grip_report = {"joints": {"g": {"interface": "x", "fault": True}}, "error": "jammed",
                   "values": [("grip", 1)], "warning": "worn"}
    arm = Part("arm", ["a"], report=arm_report)
    assert CombinedRobotHW([arm]).status() == arm_report
    assert CombinedRobotHW([Part("n", [])]).status() is None
    hw = CombinedRobotHW([arm, Part("grip", ["g"], report=grip_report), Part("quiet", [])])
    hw._names[:] = ["arm", "grip", "quiet"]
    report = hw.status()
    assert set(report["joints"]) == {"a", "g"} and set(report["motors"]) == {"m"}
    assert report["values"] == [("robot_hw", "arm"), ("bus", "can0"), ("robot_hw", "grip"), ("grip", 1)]
    assert report["hold_mode"] == "arm: position"
    assert report["error"] == "grip: jammed" and report["warning"] == "grip: worn"
    assert report["switch"] == {"pending": ["m"], "error": None, "finished": False}


def test_a_part_whose_status_raises_reports_it_as_its_error():
    class Broken(Part):
        def status(self):
            raise ValueError("bad")

    hw = CombinedRobotHW([Broken("x", []), Part("y", [], report={"values": []})])
    assert "status failed: ValueError: bad" in hw.status()["error"]


def test_middlewares_are_listed_once_in_order():
    shared, other = object(), object()

    class WithMw(Part):
        def __init__(self, name, mws):
            super().__init__(name, [])
            self.mws = mws

        def middlewares(self):
            return list(self.mws)

    hw = CombinedRobotHW([WithMw("a", [shared]), WithMw("b", [shared, other]), Part("c", [])])
    assert hw.middlewares() == [shared, other]
