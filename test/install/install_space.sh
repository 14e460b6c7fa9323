#!/usr/bin/env bash
# The install space works on its own: `catkin_make install` into a workspace outside this repository
# (tools/build_ws.sh --install), then, in a clean environment where only that install space is
# sourced (nothing from .ws/devel or the source tree), `roslaunch rospy_control bringup.launch` (the
# default arm, then the CiA 402 arm, whose canopen the install space carries itself) on a
# free port must publish /joint_states, offer the driver's services (std_srvs/Trigger
# ~reset_faults, our generated rospy_control/SetSimFault), get its controllers started by the
# installed spawner (controller_manager_msgs from the install space where ros_deps/ provided it),
# and stop cleanly on Ctrl-C (SIGINT).
#
# Prints one line 'install space: PASS ...' or 'install space: FAIL: <why>' (then the log's tail);
# exit status 0 on pass. The workspace is kept between runs (incremental build; the install space
# itself is rebuilt from scratch every time): RC_INSTALL_WS, default
# ${TMPDIR:-/tmp}/rospy_control-install-<hash of this repository's path>. Logs in
# .ws/test_logs/install_space*.log.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
ready_timeout="${RC_INSTALL_READY_TIMEOUT:-120}"     # s for the launch to come up (loaded 2-core VM)
ws="${RC_INSTALL_WS:-${TMPDIR:-/tmp}/rospy_control-install-$(pwd -P | md5sum | cut -c1-10)}"
mkdir -p .ws/test_logs
log="$root/.ws/test_logs/install_space.log"
launch_log="$root/.ws/test_logs/install_space-roslaunch.log"
: >"$log"; : >"$launch_log"
t0=$(date +%s)

fail() {
  echo "install space: FAIL: $*"
  echo "   last lines of $log:"; tail -n 25 "$log" | sed 's/^/   | /'
  if [ -s "$launch_log" ]; then
    echo "   last lines of $launch_log:"; tail -n 25 "$launch_log" | sed 's/^/   | /'
  fi
  exit 1
}

echo "== install space (catkin_make install into $ws/install, then roslaunch from it alone)"
if ! timeout 900 tools/build_ws.sh --install "$ws" >>"$log" 2>&1; then
  fail "tools/build_ws.sh --install $ws failed (build log: $ws/build.log)"
fi
t_built=$(date +%s)

ros_home="$(mktemp -d "${TMPDIR:-/tmp}/rospy_control-install-home.XXXXXX")"
trap 'rm -rf "$ros_home"' EXIT
port="$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
# What .ws/venv holds for the devices (canopen, a newer python-can) is installed into the install
# space itself: the check puts nothing of the repository on the path.

# The check runs in `env -i`: only HOME (for pip --user packages), a plain PATH and the variables
# below; the install space's setup.bash chains the underlay it was built against (/opt/ros/noetic on
# Ubuntu, nothing on Debian).
env -i HOME="$HOME" PATH=/usr/bin:/bin:/usr/sbin:/sbin LANG=C.UTF-8 TERM=dumb \
    RC_REPO="$root" RC_REPO_PHYS="$(pwd -P)" RC_WS="$ws" RC_ROS_HOME="$ros_home" RC_PORT="$port" \
    RC_LAUNCH_LOG="$launch_log" RC_READY_TIMEOUT="$ready_timeout" \
    /bin/bash --norc --noprofile -s >>"$log" 2>&1 <<'CHECK'
set -u
set +u; source "$RC_WS/install/setup.bash"; set -u
for var in CMAKE_PREFIX_PATH ROS_PACKAGE_PATH PYTHONPATH PATH LD_LIBRARY_PATH; do
  case ":${!var:-}" in *":$RC_REPO"/*|*":$RC_REPO_PHYS"/*)
    echo "CHECK-FAIL $var after sourcing the install space names the repository: ${!var}"; exit 1 ;;
  esac
done
export ROS_HOME="$RC_ROS_HOME" ROS_MASTER_URI="http://127.0.0.1:$RC_PORT" ROS_HOSTNAME=127.0.0.1
echo "ROS_PACKAGE_PATH=$ROS_PACKAGE_PATH"
echo "PYTHONPATH=$PYTHONPATH"
pkg="$(rospack find rospy_control)"
mod="$(/usr/bin/python3 -c 'import rospy_control, os; print(os.path.realpath(rospy_control.__file__))')"
srv="$(/usr/bin/python3 -c 'import rospy_control.srv as s, os; print(os.path.realpath(s.__file__))')"
echo "rospy_control: package $pkg, module $mod, services $srv"
for p in "$pkg" "$mod" "$srv"; do
  case "$p" in "$RC_WS/install/"*) ;; *) echo "CHECK-FAIL not from the install space: $p"; exit 1 ;; esac
done

while IFS= read -r -d '' link; do     # a link into the source tree (or nowhere) is no install
  case "$(realpath -m "$link")" in "$RC_WS/install/"*) ;; *)
    echo "CHECK-FAIL the install space links outside itself: $link -> $(readlink "$link")"; exit 1 ;;
  esac
done < <(find "$RC_WS/install" -type l -print0)

# the default arm, then the CiA 402 arm (canopen comes from the install space too)
for hw in "" "$pkg/config/arm_hardware_cia402.xml"; do
echo "== bringup.launch ${hw:+hardware_config:=$hw}"
deadline=$(( $(date +%s) + RC_READY_TIMEOUT ))
setsid roslaunch -p "$RC_PORT" rospy_control bringup.launch ${hw:+hardware_config:=$hw} >>"$RC_LAUNCH_LOG" 2>&1 </dev/null &
launch=$!
# Interrupted (Ctrl-C, timeout): take the launch down too, it runs in a session of its own.
trap 'if kill -0 "$launch" 2>/dev/null; then kill -INT "$launch"; sleep 5; kill -KILL -- "-$launch"; fi 2>/dev/null' EXIT
trap 'exit 130' INT TERM
stop_launch() {   # SIGINT as Ctrl-C would; then the whole process group if it hangs
  if ! kill -0 "$launch" 2>/dev/null; then wait "$launch"; return 1; fi   # reported already
  kill -INT "$launch"
  for _ in $(seq 60); do kill -0 "$launch" 2>/dev/null || break; sleep 0.5; done
  if kill -0 "$launch" 2>/dev/null; then
    echo "CHECK-FAIL roslaunch still runs 30 s after SIGINT; killing its process group"
    kill -TERM -- "-$launch" 2>/dev/null; sleep 5; kill -KILL -- "-$launch" 2>/dev/null
    return 1
  fi
  wait "$launch"; local rc=$?
  if kill -0 -- "-$launch" 2>/dev/null; then
    echo "CHECK-FAIL processes of the launch outlived roslaunch"; kill -KILL -- "-$launch"; return 1
  fi
  [ "$rc" -eq 0 ] || { echo "CHECK-FAIL roslaunch exited with status $rc after SIGINT"; return 1; }
  echo "roslaunch stopped cleanly on SIGINT"
}
until_ready() {   # until_ready <what> <command...>: retry the command until it succeeds or time is up
  local what="$1"; shift
  while :; do
    if ! kill -0 "$launch" 2>/dev/null; then echo "CHECK-FAIL roslaunch exited before $what"; return 1; fi
    if "$@"; then echo "ready: $what after $(( $(date +%s) - deadline + RC_READY_TIMEOUT )) s"; return 0; fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      echo "CHECK-FAIL no $what within $RC_READY_TIMEOUT s"; return 1
    fi
    sleep 1
  done
}
probe() {         # probe <pattern> <command...>: run, log its output, succeed if the pattern is in it
  local pattern="$1" out; shift
  out="$(timeout 20 "$@" 2>&1)"
  echo "\$ $*"; head -n 15 <<<"$out" | sed 's/^/  /'
  grep -q -- "$pattern" <<<"$out"
}
joint_states() { probe elbow_joint rostopic echo -n 1 /joint_states; }
reset_faults() { probe 'success: True' rosservice call /driver/reset_faults; }
set_fault() {
  probe 'success: True' rosservice call /driver/sim/set_fault \
    "{unit: elbow_motor, fault: silent, enable: false, value: 0.0}"
}
controllers() {
  local out
  out="$(timeout 20 rosservice call /controller_manager/list_controllers 2>&1)"
  echo "\$ rosservice call /controller_manager/list_controllers"; head -n 40 <<<"$out" | sed 's/^/  /'
  tr -d '\n ' <<<"$out" | grep -q 'name:"arm_controller"state:"running"'
}
ok=0
until_ready /joint_states joint_states &&
  until_ready "/driver/reset_faults (std_srvs/Trigger)" reset_faults &&
  until_ready "/driver/sim/set_fault (rospy_control/SetSimFault)" set_fault &&
  until_ready "arm_controller running (spawner, controller_manager_msgs)" controllers &&
  ok=1
stop_launch || ok=0
[ "$ok" -eq 1 ] || exit 1
done
CHECK
rc=$?
t_end=$(date +%s)
if [ "$rc" -ne 0 ]; then
  why="$(grep -m1 '^CHECK-FAIL' "$log" | sed 's/^CHECK-FAIL //')"
  fail "${why:-the launch check failed (exit $rc)}"
fi
echo "install space: PASS (build $((t_built - t0)) s, launch, checks and shutdown $((t_end - t_built)) s)"
