#!/usr/bin/env bash
# Static checks run by CI: Python 3.8 compatibility of everything users run (Ubuntu 20.04 Noetic
# has Python 3.8), flake8 over the code and tests, mypy (as Python 3.8) over the package, and the
# package's shape (tools/check_structure.py).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
mapfile -t scripts < <(grep -l -E '^#!.*python' scripts/* 2>/dev/null || true)
echo "== vermin --target=3.8- (src/ scripts/ test/ bench/)"
# test/integration nodes have no .py suffix in some cases: pass every python script explicitly.
mapfile -t test_nodes < <(grep -l -E '^#!.*python' test/integration/* 2>/dev/null || true)
.ws/venv/bin/vermin --target=3.8- --no-tips --violations --eval-annotations -q src test bench "${scripts[@]}" "${test_nodes[@]}"
echo "   ok: no construct newer than Python 3.8"
echo "== flake8 (src/ scripts/ test/ bench/)"
/usr/bin/python3 -m flake8 src test bench "${scripts[@]}" "${test_nodes[@]}"
echo "   ok"
echo "== mypy --python-version 3.8 (src/rospy_control, settings in mypy.ini)"
.ws/venv/bin/mypy --config-file mypy.ini
echo "== structure (src/ files <= 600 lines, no simulator on the driver's path, imports go down, no cycles)"
/usr/bin/python3 tools/check_structure.py
echo "   ok"
