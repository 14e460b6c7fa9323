#!/usr/bin/env bash
# `make stress`: every rostest while two CPU-bound processes run alongside (this machine has 2 cores,
# so the test nodes get roughly a third of the CPU they would have alone), the way a laptop that is
# also compiling drives a robot.  Time-bounded: the burners stop after STRESS_LIMIT seconds (default
# 1800) whatever happens, and each rostest keeps its own time limit.  ROSTEST_JOBS (default 2) files
# run side by side, as in `make test`.
# Expects tools/env.sh to be sourced.  Optional args: the .test files to run.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
limit="${STRESS_LIMIT:-1800}"
burners=()
for _ in 1 2; do
  timeout "$limit" /usr/bin/python3 -c 'while True: pass' &
  burners+=("$!")
done
cleanup() { kill "${burners[@]}" 2>/dev/null; wait "${burners[@]}" 2>/dev/null; }
trap cleanup EXIT INT TERM
echo "stress: 2 CPU-bound processes running alongside (pids ${burners[*]}, at most ${limit} s)"
start=$(date +%s)
timeout --signal=INT --kill-after=30 "$limit" "$root/tools/run_rostests.sh" "$@"
rc=$?
echo "stress: rostests under load took $(( $(date +%s) - start )) s, exit $rc"
exit "$rc"
