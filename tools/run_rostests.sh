#!/usr/bin/env bash
# Run every test/integration/*.test with rostest (each starts its own master on a free port).
# Prints rostest's summary per file and a total; exit status 1 if any failed.
# Expects tools/env.sh to be sourced.  Optional args: the .test files to run.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
files=("$@")
if [ "${#files[@]}" -eq 0 ]; then
  shopt -s nullglob
  files=(test/integration/*.test)
fi
total=0; bad=0; failed_files=()
mkdir -p .ws/test_logs
for f in "${files[@]}"; do
  name="$(basename "$f" .test)"
  log=".ws/test_logs/rostest-$name.log"
  echo "== rostest $name"
  timeout --signal=INT --kill-after=20 600 rostest rospy_control "$(basename "$f")" >"$log" 2>&1
  rc=$?
  summary="$(sed -e 's/\x1b\[[0-9;]*m//g' "$log" | sed -n '/^SUMMARY/,$p')"
  tests="$(grep -oP '^ \* TESTS: \K[0-9]+' <<<"$summary" | tail -n1)"; tests="${tests:-0}"
  errors="$(grep -oP '^ \* ERRORS: \K[0-9]+' <<<"$summary" | tail -n1)"; errors="${errors:-0}"
  failures="$(grep -oP '^ \* FAILURES: \K[0-9]+' <<<"$summary" | tail -n1)"; failures="${failures:-0}"
  echo "$summary" | sed 's/^/   /'
  total=$((total + tests))
  if [ "$rc" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$failures" -ne 0 ] || [ "$tests" -eq 0 ]; then
    bad=$((bad + 1)); failed_files+=("$name")
    echo "   FAILED (exit $rc); last lines of $log:"; tail -n 30 "$log" | sed 's/^/   | /'
  fi
done
echo "rostest: ${#files[@]} file(s), $total test(s), ${#failed_files[@]} file(s) failed${failed_files:+: ${failed_files[*]}}"
echo "$total $bad" > .ws/test_logs/rostest.counts
[ "$bad" -eq 0 ]
