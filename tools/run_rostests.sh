#!/usr/bin/env bash
# Run every test/integration/*.test with rostest (each starts its own master on a free port, and the
# simulated buses derive their addresses from that port, so files can run side by side).
# ROSTEST_JOBS files run at once (default 2: the suite's tests wait on wall time far more than they
# use the CPU, and every one of them is built to pass on a busy host -- `make stress` checks that with
# two CPU hogs alongside; three at a time left simulated arms behind their goals, as their simulator
# processes did not get the CPU), except the CPU-bound files of ROSTEST_EXCLUSIVE, which run alone,
# first.
# Prints rostest's summary per file (in file order) and a total; exit status 1 if any failed.
# Expects tools/env.sh to be sourced.  Optional args: the .test files to run.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
files=("$@")
if [ "${#files[@]}" -eq 0 ]; then
  shopt -s nullglob
  files=(test/integration/*.test)
fi
jobs_max="${ROSTEST_JOBS:-2}"
mkdir -p .ws/test_logs
run_id="$$"

run_one() {  # file -> .ws/test_logs/rostest-<name>.log and .result ("rc tests errors failures")
  local f="$1" name log rc summary tests errors failures t0
  name="$(basename "$f" .test)"
  log=".ws/test_logs/rostest-$name.log"
  t0=$SECONDS
  timeout --signal=INT --kill-after=20 600 rostest rospy_control "$(basename "$f")" >"$log" 2>&1
  rc=$?
  summary="$(sed -e 's/\x1b\[[0-9;]*m//g' "$log" | sed -n '/^SUMMARY/,$p')"
  tests="$(grep -oP '^ \* TESTS: \K[0-9]+' <<<"$summary" | tail -n1)"
  errors="$(grep -oP '^ \* ERRORS: \K[0-9]+' <<<"$summary" | tail -n1)"
  failures="$(grep -oP '^ \* FAILURES: \K[0-9]+' <<<"$summary" | tail -n1)"
  echo "$rc ${tests:-0} ${errors:-0} ${failures:-0} $((SECONDS - t0))" > ".ws/test_logs/rostest-$name.result.$run_id"
}

# Files whose processes keep both cores busy by themselves (a quadruped's buses at 300 Hz, gravity's
# 0.003 rad holding check, the JTC scenarios' tight path tolerances, controller_manager.test's
# stock-tool processes: 41 s alone, 124 s beside an arm whose simulator it starved) run alone: beside
# another file they measure the neighbour, not the driver.  The others run ROSTEST_JOBS at a time,
# the load and fuzz generators too: they assert results, not timing (the loop's late cycles under
# load are bench/bench_load.py's figures).
exclusive_re="${ROSTEST_EXCLUSIVE:-/((driver_quadruped|driver_gravity|jtc_arm)[^/]*|controller_manager)\.test$}"
# The files that run alone go first, one after the other; then the others, ROSTEST_JOBS at a time, so
# the parallel pool never drains to let a lone file start.
# In the pool the longest files start first (load, fuzz, injected faults: about a minute each), so
# that the pool does not end on one of them running by itself.
long_re="${ROSTEST_LONG:-/(load|fuzz_goals|fault_injection)[^/]*\.test$}"
order=()
for f in "${files[@]}"; do [[ "$f" =~ $exclusive_re ]] && order+=("$f"); done
for f in "${files[@]}"; do [[ ! "$f" =~ $exclusive_re && "$f" =~ $long_re ]] && order+=("$f"); done
for f in "${files[@]}"; do [[ ! "$f" =~ $exclusive_re && ! "$f" =~ $long_re ]] && order+=("$f"); done
running=0
for f in "${order[@]}"; do
  alone=0
  if [[ "$f" =~ $exclusive_re ]]; then alone=1; fi
  limit="$jobs_max"
  if [ "$alone" -eq 1 ]; then limit=1; fi
  while [ "$running" -ge "$limit" ]; do
    wait -n
    running=$((running - 1))
  done
  if [ "$alone" -eq 1 ]; then how="started, alone"; else how="started"; fi
  echo "== rostest $(basename "$f" .test) ($how)"
  run_one "$f" &
  running=$((running + 1))
  if [ "$alone" -eq 1 ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
elapsed=$SECONDS

total=0; failed_files=()
for f in "${files[@]}"; do
  name="$(basename "$f" .test)"
  log=".ws/test_logs/rostest-$name.log"
  res=".ws/test_logs/rostest-$name.result.$run_id"
  read -r rc tests errors failures secs < "$res" 2>/dev/null || { rc=1; tests=0; errors=0; failures=0; secs=0; }
  rm -f "$res"
  echo "== rostest $name (${secs} s)"
  sed -e 's/\x1b\[[0-9;]*m//g' "$log" | sed -n '/^SUMMARY/,$p' | sed 's/^/   /'
  total=$((total + tests))
  if [ "$rc" -ne 0 ] || [ "$errors" -ne 0 ] || [ "$failures" -ne 0 ] || [ "$tests" -eq 0 ]; then
    failed_files+=("$name")
    echo "   FAILED (exit $rc); last lines of $log:"; tail -n 30 "$log" | sed 's/^/   | /'
  fi
done
echo "rostest: ${#files[@]} file(s), $total test(s), ${#failed_files[@]} file(s) failed${failed_files:+: ${failed_files[*]}} (${elapsed} s)"
echo "$total ${#failed_files[@]}" > .ws/test_logs/rostest.counts
[ "${#failed_files[@]}" -eq 0 ]
