#!/usr/bin/env bash
# Builds the C++ ros_control anchor (anchor_bench: controller_manager::ControllerManager::update() in
# bench_controller_manager.py's scenario) into .ws/anchor_ws, by the recipe of the anchor_bench folder's
# README (Debian bookworm, ROS 1 from Debian packages).  run_all.py finds it there.
#
# Usage: bench/build_anchor.sh <anchor_bench folder> <folder holding the five repositories' git mirrors>
#   the mirrors as <dir>/ros-controls+<name>/repo (bare), for ros_control, ros_controllers, control_msgs,
#   realtime_tools and control_toolbox.  Needs root for apt-get (skipped when the packages are there).
# Niced, one job: about 12 min at -j2 on an idle 2-vCPU guest; several times that on a busy one.
set -euo pipefail
anchor=${1:?anchor_bench folder}
mirrors=${2:?folder of the git mirrors}
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ws="$root/.ws/anchor_ws"
mkdir -p "$ws/src"
cd "$ws/src"
for spec in ros_control:noetic-devel ros_controllers:noetic-devel control_msgs:kinetic-devel \
            realtime_tools:noetic-devel control_toolbox:noetic-devel; do
  name=${spec%%:*}
  branch=${spec##*:}
  if [ ! -d "$name" ]; then
    git --git-dir="$mirrors/ros-controls+$name/repo" archive --prefix="$name/" "$branch" | tar -x
    if [ "$name" = ros_controllers ]; then
      (cd ros_controllers && patch -p1 < "$anchor/joint_state_controller_time_min.patch")
    fi
  fi
done
mkdir -p anchor_bench
cp -r "$anchor/package.xml" "$anchor/CMakeLists.txt" "$anchor/src" anchor_bench/
pkgs="libactionlib-dev liburdf-dev libangles-dev libtinyxml-dev libdynamic-reconfigure-config-init-mutex-dev
      python3-dynamic-reconfigure"
# shellcheck disable=SC2086
if ! dpkg -s $pkgs > /dev/null 2>&1; then
  # shellcheck disable=SC2086
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends $pkgs
fi
cd "$ws"
PATH=/usr/bin:$PATH nice -n 19 catkin_make -DPYTHON_EXECUTABLE=/usr/bin/python3 -DCMAKE_BUILD_TYPE=Release \
  -DCATKIN_ENABLE_TESTING=OFF -j1 \
  -DCATKIN_WHITELIST_PACKAGES="control_msgs;controller_manager_msgs;realtime_tools;control_toolbox;hardware_interface;controller_interface;controller_manager;joint_state_controller;joint_trajectory_controller;anchor_bench"
echo "built: $ws/devel/lib/anchor_bench/anchor_bench"
