#!/usr/bin/env bash
# Every test: the ROS-free pytest suite, then the rostests. Exits non-zero on any failure and ends
# with one plain 'N passed, N failed' line covering both.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
set +u; source tools/env.sh; set -u
mkdir -p .ws/test_results .ws/test_logs

echo "== pytest test/unit"
/usr/bin/python3 -m pytest test/unit --junitxml=.ws/test_results/pytest-unit.xml
unit_rc=$?

tools/run_rostests.sh
ros_rc=$?

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
passed=$((unit_passed + ros_tests))
failed=$((unit_failed + ros_bad_files))
if [ "$unit_rc" -ne 0 ] && [ "$unit_failed" -eq 0 ]; then failed=$((failed + 1)); fi
echo "unit: exit $unit_rc; rostest: exit $ros_rc"
echo "$passed passed, $failed failed"
[ "$unit_rc" -eq 0 ] && [ "$ros_rc" -eq 0 ]
