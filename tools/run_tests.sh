#!/usr/bin/env bash
# Every test: the ROS-free pytest suite, the rostests, then test/install (rosrun/roscd, and the install
# space). Exits non-zero on any failure and ends with one plain 'N passed, N failed' line covering all.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
set +u; source tools/env.sh; set -u
mkdir -p .ws/test_results .ws/test_logs

# The unit tests wait on threads and sockets far more than they compute: two pytest-xdist workers
# (UNIT_JOBS) halve the wall time on two cores; without pytest-xdist they run in one process.
unit_jobs=()
if /usr/bin/python3 -c "import xdist" 2>/dev/null && [ "${UNIT_JOBS:-2}" -gt 1 ]; then
  unit_jobs=(-n "${UNIT_JOBS:-2}")
fi
echo "== pytest test/unit ${unit_jobs[*]}"
/usr/bin/python3 -m pytest test/unit "${unit_jobs[@]}" --durations=12 --junitxml=.ws/test_results/pytest-unit.xml
unit_rc=$?
unit_secs=$SECONDS

tools/run_rostests.sh
ros_rc=$?
ros_secs=$((SECONDS - unit_secs))

# The commands users type (rosrun, roscd) and the install space (catkin_make install, then
# roslaunch from it alone): one pass or fail each.
extra_passed=0; extra_failed=0
for check in test/install/ros_commands.sh test/install/install_space.sh; do
  if "$check"; then extra_passed=$((extra_passed + 1)); else extra_failed=$((extra_failed + 1)); fi
done

read -r unit_passed unit_failed < <(/usr/bin/python3 - <<'PYEOF'
import xml.etree.ElementTree as ET
try:
    root = ET.parse(".ws/test_results/pytest-unit.xml").getroot()
except (OSError, ET.ParseError):
    print(0, 1); raise SystemExit
suites = [root] if root.tag == "testsuite" else list(root)
t = sum(int(s.get("tests", 0)) for s in suites)
f = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
k = sum(int(s.get("skipped", 0)) for s in suites)
print(t - f - k, f)
PYEOF
)
read -r ros_tests ros_bad_files < .ws/test_logs/rostest.counts || { ros_tests=0; ros_bad_files=1; }
passed=$((unit_passed + ros_tests + extra_passed))
failed=$((unit_failed + ros_bad_files + extra_failed))
if [ "$unit_rc" -ne 0 ] && [ "$unit_failed" -eq 0 ]; then failed=$((failed + 1)); fi
echo "unit: exit $unit_rc (${unit_secs} s); rostest: exit $ros_rc (${ros_secs} s);" \
     "test/install: $extra_passed passed, $extra_failed failed ($((SECONDS - unit_secs - ros_secs)) s)"
echo "$passed passed, $failed failed"
[ "$unit_rc" -eq 0 ] && [ "$ros_rc" -eq 0 ] && [ "$extra_failed" -eq 0 ]
