"""Random sequences of controller_manager calls keep the life-cycle invariants.

A hypothesis ``RuleBasedStateMachine`` drives the in-memory controller manager rig
(``rospy_control.testing.cm_rig``; a plain three-joint robot, the test controllers of
``rospy_control.testing.controllers``) with load / unload / switch (STRICT and BEST_EFFORT, start_asap
or not, overlapping lists, unknown names) / list / list_types / reload_libraries (with and without
force_kill) calls, control cycles in between.  After every step:

* no controller is listed twice, and the listing is the model's set of loaded controllers;
* no resource (joint) is claimed by two running controllers, nor twice by one;
* the running set is what ros_control's switch rules give (model below), and the robot keeps being
  updated (``update`` never raises).

``make test`` runs a fixed, derandomized budget; ``FUZZ_EXAMPLES=<n>`` (``make fuzz``) a larger
randomized one.  Steps run are written to ``.ws/fuzz/cm_lifecycle.json``.
"""
from __future__ import annotations

import os
import threading
from collections import Counter

from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from rospy_control.controller_manager.controller_manager import BEST_EFFORT, STRICT
from rospy_control.testing.cm_rig import ControllerManagerRig
from rospy_control.testing.robot_hw import JointsRobotHW
from reports import register

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
RANDOM_BUDGET = int(os.environ.get("FUZZ_EXAMPLES", "0") or 0)
TC = "rospy_control.testing.controllers:"

#: name -> (type, params, resources it claims when running; None = cannot be loaded)
CONTROLLERS = {
    "eff12": (TC + "EffortTestController", {"joints": ["joint1", "joint2"]}, {"joint1", "joint2"}),
    "eff3": (TC + "EffortTestController", {"joints": ["joint3"]}, {"joint3"}),
    "vel1": (TC + "VelocityTestController", {"joints": ["joint1"]}, {"joint1"}),
    "vel23": (TC + "VelocityTestController", {"joints": ["joint2", "joint3"]}, {"joint2", "joint3"}),
    "state": (TC + "StateTestController", {}, set()),
    "state2": (TC + "StateTestController", {}, set()),
    "veleff": (TC + "VelEffController", {}, {"joint1", "joint2", "joint3"}),
    # claims joint1 through two interfaces: loads, but can never start
    "self_conflict": (TC + "PositionEffortController", {}, None),
    # cannot be loaded: unknown type, a joint the robot lacks, no parameters at all
    "bad_type": ("no_such_package/NoSuchController", {}, None),
    "bad_joint": (TC + "EffortTestController", {"joints": ["joint9"]}, None),
}
NAMES = sorted(CONTROLLERS) + ["unconfigured"]
LOADABLE = {n for n, (_, _, res) in CONTROLLERS.items() if res is not None} | {"self_conflict"}
STEPS: Counter = Counter()
register("cm_lifecycle", lambda: dict(STEPS))


def run_in_loop(rig: ControllerManagerRig, call):
    """``call()`` in a thread while the test thread plays the control loop (switches block on it)."""
    out = {}

    def target():
        out["result"] = call()

    thread = threading.Thread(target=target)
    thread.start()
    for _ in range(20000):
        if not thread.is_alive():
            break
        rig.cycle()
    thread.join(10.0)
    assert not thread.is_alive(), "the call never returned"
    return out["result"]


class ControllerManagerLifecycle(RuleBasedStateMachine):

    def __init__(self) -> None:
        super().__init__()
        self.rig = ControllerManagerRig(JointsRobotHW(("joint1", "joint2", "joint3")), t0=1.0,
                                        switch_wall_margin=0.5, switch_wait_limit=5.0)
        for name, (type_name, params, _) in CONTROLLERS.items():
            self.rig.configure(name, type_name, **params)
        self.loaded: set = set()
        self.running: set = set()

    def teardown(self) -> None:
        self.rig.shutdown()

    # -- rules ------------------------------------------------------------------------------------
    @rule(name=st.sampled_from(NAMES))
    def load(self, name):
        STEPS["load"] += 1
        result = self.rig.cm.load_controller(name)
        expected = name in LOADABLE and name not in self.loaded
        assert result.ok == expected, (name, result)
        if result.ok:
            self.loaded.add(name)

    @rule(name=st.sampled_from(NAMES))
    def unload(self, name):
        STEPS["unload"] += 1
        result = self.rig.cm.unload_controller(name)
        expected = name in self.loaded and name not in self.running
        assert result.ok == expected, (name, result)
        if result.ok:
            self.loaded.discard(name)

    @rule(start=st.lists(st.sampled_from(NAMES), max_size=3),
          stop=st.lists(st.sampled_from(NAMES), max_size=3),
          strictness=st.sampled_from([STRICT, BEST_EFFORT, 0]), start_asap=st.booleans())
    def switch(self, start, stop, strictness, start_asap):
        STEPS["switch " + ("STRICT" if strictness == STRICT else "BEST_EFFORT")] += 1
        result = self.rig.switch(start, stop, strictness, start_asap)
        expected = self.model_switch(start, stop, strictness == STRICT)
        STEPS["switch ok" if result.ok else "switch refused"] += 1
        if expected is None:
            assert not result.ok, (start, stop, strictness, result)
        else:
            assert result.ok, (start, stop, strictness, result, self.running)
            self.running = expected

    def model_switch(self, start, stop, strict):
        """Running set after the switch by ros_control's rules (ours: a name in both lists always fails,
        BEST_EFFORT drops what it cannot do), or None if the switch must fail."""
        known_start = [n for n in start if n in self.loaded]
        known_stop = [n for n in stop if n in self.loaded]
        if strict and (len(known_start) != len(start) or len(known_stop) != len(stop)):
            return None
        if set(known_start) & set(known_stop):
            return None
        if strict and (any(n not in self.running for n in known_stop)
                       or any(n in self.running for n in known_start)):
            return None
        after = (self.running - set(known_stop)) | set(known_start)
        claims = []
        for n in after:
            res = CONTROLLERS[n][2]
            if res is None:  # the self-conflicting controller
                return None
            claims.extend(res)
        if len(claims) != len(set(claims)):
            return None
        return after

    @rule(force_kill=st.booleans())
    def reload_libraries(self, force_kill):
        STEPS["reload_libraries"] += 1
        result = run_in_loop(self.rig, lambda: self.rig.cm.reload_controller_libraries(force_kill))
        if self.loaded and not force_kill:
            assert not result.ok, result
        else:
            assert result.ok, result
            self.loaded.clear()
            self.running.clear()

    @rule()
    def list_types(self):
        STEPS["list_types"] += 1
        types, bases = self.rig.cm.list_controller_types()
        assert len(types) == len(bases) and len(types) >= 3

    @rule(cycles=st.integers(1, 5))
    def cycle(self, cycles):
        STEPS["cycles"] += cycles
        for _ in range(cycles):
            self.rig.cycle()

    # -- invariants -------------------------------------------------------------------------------
    @invariant()
    def listing_matches_and_no_double_claims(self):
        STEPS["invariant checks"] += 1
        listing = self.rig.cm.list_controllers()
        names = [c.name for c in listing]
        assert len(names) == len(set(names)), names
        assert set(names) == self.loaded, (names, self.loaded)
        running = {c.name for c in listing if c.state == "running"}
        assert running == self.running, (running, self.running)
        claimed = []
        for c in listing:
            if c.state == "running":
                for res in c.claimed_resources:
                    claimed.extend(res.resources)
        assert len(claimed) == len(set(claimed)), \
            f"a resource claimed twice by running controllers: {claimed}"


ControllerManagerLifecycle.TestCase.settings = settings(
    max_examples=RANDOM_BUDGET or 150, stateful_step_count=30, derandomize=not RANDOM_BUDGET, deadline=None,
    database=None, suppress_health_check=[HealthCheck.too_slow])
TestControllerManagerLifecycle = ControllerManagerLifecycle.TestCase
