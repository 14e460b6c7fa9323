# rospy_control: the two commands of the README.
#   make run   -- install what is missing, build the catkin workspace, launch the simulated robot
#   make test  -- same set-up, then every test (pytest unit suite + rostests)
# Other targets: deps, build, unit, rostest, stress (rostests with two CPU hogs alongside), lint, bench,
# fuzz (the fuzzing tests with a larger randomized budget: FUZZ_EXAMPLES, FUZZ_TIME), clean.
#
# The catkin workspace lives in .ws/ (ignored by git): .ws/src links this repository and, only where
# the system lacks them, the message packages carried in ros_deps/.
SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
# Debian's (and Ubuntu Noetic's) ROS runs on /usr/bin/python3; put it first so that nodes started by
# roslaunch (#!/usr/bin/env python3) get that interpreter, not a pyenv/venv one.
export PATH := /usr/bin:/bin:/usr/sbin:/sbin:$(PATH)
# Byte-code caches go to .ws/pycache (ignored by git), not into the source tree, and are kept: every
# node and tool started by a test would otherwise compile the package from source at each start.
export PYTHONPYCACHEPREFIX := $(CURDIR)/.ws/pycache
# With a cache prefix, Python looks for every module's byte code there, the system's and the standard
# library's too; a PYTHONDONTWRITEBYTECODE inherited from the shell would then leave the prefix empty
# and every process would compile all it imports at each start (1.7 s instead of 0.5 s for a node).
unexport PYTHONDONTWRITEBYTECODE

PY := /usr/bin/python3
WS := $(CURDIR)/.ws
ENV := $(CURDIR)/tools/env.sh

.PHONY: all deps build unit rostest stress test lint run bench fuzz clean

all: build

deps:
	@$(CURDIR)/tools/bootstrap.sh

build: deps
	@$(CURDIR)/tools/build_ws.sh

unit: build
	@source $(ENV) && $(PY) -m pytest test/unit

rostest: build
	@source $(ENV) && $(CURDIR)/tools/run_rostests.sh

stress: build
	@source $(ENV) && $(CURDIR)/tools/stress.sh

test: build
	@$(CURDIR)/tools/run_tests.sh

lint: deps
	@$(CURDIR)/tools/lint.sh

bench: build
	@$(PY) -c "import matplotlib" 2>/dev/null || { echo "make bench: installing python3-matplotlib (for the plots)"; \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-matplotlib >/dev/null \
	  || echo "make bench: python3-matplotlib unavailable; the plots are skipped"; }
	@source $(ENV) && $(PY) bench/run_all.py --out $(WS)/bench/results.json

fuzz: build
	@source $(ENV) && export FUZZ_EXAMPLES=$${FUZZ_EXAMPLES:-3000} FUZZ_TIME=$${FUZZ_TIME:-420} && \
	  $(PY) -m pytest -q test/unit/controllers/test_fuzz_jtc_goals.py \
	    test/unit/controller_manager/test_fuzz_cm_lifecycle.py test/unit/test_fuzz_broken_config.py && \
	  $(CURDIR)/tools/run_rostests.sh test/integration/fuzz_goals_ros_control.test \
	    test/integration/fuzz_goals_standalone.test

run: build
	@if [ ! -x scripts/driver_node ] || [ ! -f launch/bringup.launch ]; then \
	  echo "make run: the workspace is built, but the driver node (scripts/driver_node) or" \
	       "launch/bringup.launch does not exist yet, so there is nothing to launch." >&2; \
	  exit 2; \
	fi
	@source $(ENV) && roslaunch rospy_control bringup.launch $(ARGS)

clean:
	rm -rf $(WS)
