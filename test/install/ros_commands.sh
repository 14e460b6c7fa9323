#!/usr/bin/env bash
# The commands ROS users type work in the .ws workspace once tools/env.sh is sourced:
#   * `rosrun rospy_control <script>` resolves every script in scripts/ to exactly one executable
#     (rosrun searches the whole package directory; with .ws/ inside it, it found each script
#     several times and asked which one to run);
#   * `rosrun rospy_control hw_check config/arm_hardware.xml --sim` runs against the simulator and
#     exits; `rosrun rospy_control spawner --help` answers;
#   * `roscd rospy_control` is a shell function and lands in the package.
# No master needed. Prints one line 'ros commands: PASS' or 'ros commands: FAIL: <why>'; exit status
# 0 on pass. Sources tools/env.sh itself (the result must not depend on the caller's shell).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
mkdir -p .ws/test_logs
log="$root/.ws/test_logs/ros_commands.log"
: >"$log"
echo "== ros commands (rosrun, roscd with tools/env.sh)"

env -i HOME="$HOME" PATH=/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 TERM=dumb RC_ROOT="$root" \
    ROS_HOME="$root/.ws/ros_home" /bin/bash --norc --noprofile -s >>"$log" 2>&1 <<'CHECK'
cd "$RC_ROOT"
source tools/env.sh   # no set -u: rosbash's functions are not written for it
fail() { echo "CHECK-FAIL $*"; exit 1; }

[ "$(type -t roscd)" = function ] || fail "roscd is not defined after sourcing tools/env.sh"
roscd rospy_control || fail "roscd rospy_control failed"
[ -f package.xml ] && grep -q '<name>rospy_control</name>' package.xml \
  || fail "roscd rospy_control went to $PWD, not the package"
echo "roscd rospy_control -> $PWD"
cd /

# rosrun --prefix echo: prints the executable it picked instead of running it; with several
# candidates rosrun asks on stdin (here /dev/null) and prints the list.
for script in "$RC_ROOT"/scripts/*; do
  name="$(basename "$script")"
  out="$(timeout 60 rosrun --prefix echo rospy_control "$name" </dev/null 2>&1)"
  echo "rosrun rospy_control $name -> $out"
  [ "$(wc -l <<<"$out")" -eq 1 ] && [ -x "$out" ] && [ "$(basename "$out")" = "$name" ] \
    || fail "rosrun rospy_control $name does not resolve to one executable: $out"
done

out="$(timeout 60 rosrun rospy_control spawner --help </dev/null 2>&1)" \
  || fail "rosrun rospy_control spawner --help failed: $out"
grep -q '^usage: spawner' <<<"$out" || fail "rosrun rospy_control spawner --help: $out"

cd "$RC_ROOT"
out="$(timeout 120 rosrun rospy_control hw_check config/arm_hardware.xml --sim --duration 1 </dev/null 2>&1)"
rc=$?
echo "$out" | tail -n 5
[ "$rc" -eq 0 ] || fail "rosrun rospy_control hw_check config/arm_hardware.xml --sim exited $rc"
CHECK
rc=$?
if [ "$rc" -ne 0 ]; then
  why="$(grep -m1 '^CHECK-FAIL' "$log" | sed 's/^CHECK-FAIL //')"
  echo "ros commands: FAIL: ${why:-exit $rc}"
  tail -n 20 "$log" | sed 's/^/   | /'
  exit 1
fi
echo "ros commands: PASS (roscd, rosrun of every script, hw_check --sim)"
