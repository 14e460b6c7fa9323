#!/usr/bin/env bash
# Build the catkin workspace in .ws/ (incremental). Message packages from ros_deps/ are added only
# where the system does not provide them.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ws="$root/.ws"
mkdir -p "$ws/src"
ln -sfn ../.. "$ws/src/rospy_control"
for pkg in control_msgs controller_manager_msgs; do
  if [ -f "/usr/share/$pkg/package.xml" ] || [ -f "/opt/ros/noetic/share/$pkg/package.xml" ]; then
    rm -f "$ws/src/$pkg"           # the system has it: use the system's
  else
    ln -sfn "../../ros_deps/$pkg" "$ws/src/$pkg"
  fi
done
if [ -f /opt/ros/noetic/setup.bash ]; then set +u; source /opt/ros/noetic/setup.bash; set -u; fi
log="$ws/build.log"
cd "$ws"
if ! PATH="/usr/bin:$PATH" catkin_make -DPYTHON_EXECUTABLE=/usr/bin/python3 -DCATKIN_ENABLE_TESTING=ON \
     -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "build: catkin_make failed; full log in $log" >&2
  exit 1
fi
echo "build: workspace ready in .ws (log: .ws/build.log)"
