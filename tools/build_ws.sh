#!/usr/bin/env bash
# Build the catkin workspace in .ws/ (incremental). Message packages from ros_deps/ are added only
# where the system does not provide them.
#
#   tools/build_ws.sh                  the devel space in .ws/ (what `make build` runs)
#   tools/build_ws.sh --install DIR    a separate workspace in DIR (outside this repository: DIR/src,
#                                      DIR/build, DIR/devel) whose `catkin_make install` fills
#                                      DIR/install afresh (incremental build, install space emptied
#                                      first); .ws/ is not touched. Use it with
#                                      `source DIR/install/setup.bash` alone.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

mode=devel
if [ "${1:-}" = "--install" ]; then
  [ -n "${2:-}" ] || { echo "usage: $0 [--install DIR]" >&2; exit 2; }
  mode=install
  mkdir -p "$2"
  ws="$(cd "$2" && pwd -P)"
  case "$ws/" in
    "$(cd "$root" && pwd -P)/"*)
      echo "build: --install DIR must be outside the repository (got $ws)" >&2; exit 2 ;;
  esac
elif [ $# -gt 0 ]; then
  echo "usage: $0 [--install DIR]" >&2; exit 2
else
  ws="$root/.ws"
fi

# The package as catkin, rospack, rosrun and roscd see it: WS/pkg/rospy_control, a directory of
# links to this repository's entries except the dot ones (.ws/, .git/, ...) and in-tree catkin
# spaces. Linking the repository itself would put .ws/ (the devel and build spaces, with their
# copies of every script) inside the package: `rosrun rospy_control hw_check` searches the whole
# package directory and would find hw_check five times and ask which one to run.
# CMakeLists.txt installs directories with a trailing slash (`launch/`) so that their files, not the
# links, are installed.
link_package() {
  local shadow="$1" entry name target
  mkdir -p "$shadow"
  for entry in "$shadow"/*; do                  # entries removed from the repository
    if [ -L "$entry" ] && [ ! -e "$entry" ]; then rm -f "$entry"; fi
  done
  for entry in "$root"/*; do
    name="$(basename "$entry")"
    case "$name" in build|devel|install|logs) continue ;; esac
    target="$(realpath --relative-to="$shadow" "$entry")"
    if [ "$(readlink "$shadow/$name" || true)" != "$target" ]; then
      ln -sfn "$target" "$shadow/$name"
    fi
  done
}

mkdir -p "$ws/src"
# One build at a time per workspace (catkin_make in parallel on one build dir corrupts it).
if command -v flock >/dev/null; then
  exec 9>"$ws/.build.lock"
  flock -w 900 9 || { echo "build: another build of $ws still runs after 15 min" >&2; exit 1; }
fi
link_package "$ws/pkg/rospy_control"
ln -sfn ../pkg/rospy_control "$ws/src/rospy_control"     # atomic: replaces an older link to ../..
for pkg in control_msgs controller_manager_msgs; do
  if [ -f "/usr/share/$pkg/package.xml" ] || [ -f "/opt/ros/noetic/share/$pkg/package.xml" ]; then
    rm -f "$ws/src/$pkg"           # the system has it: use the system's
  else
    ln -sfn "$(realpath --relative-to="$ws/src" "$root/ros_deps/$pkg")" "$ws/src/$pkg"
  fi
done
log="$ws/build.log"
cd "$ws"
if [ "$mode" = devel ]; then
  if [ -f /opt/ros/noetic/setup.bash ]; then set +u; source /opt/ros/noetic/setup.bash; set -u; fi
  if ! PATH="/usr/bin:$PATH" catkin_make -DPYTHON_EXECUTABLE=/usr/bin/python3 -DCATKIN_ENABLE_TESTING=ON \
       -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "build: catkin_make failed; full log in $log" >&2
    exit 1
  fi
  echo "build: workspace ready in .ws (log: .ws/build.log)"
else
  # A fresh install space every time: files a removed install rule left behind must not hide it.
  if [ -e "$ws/install" ] && [ ! -f "$ws/install/.catkin" ] && [ -n "$(ls -A "$ws/install")" ]; then
    echo "build: $ws/install exists and is not a catkin install space; not removing it" >&2; exit 1
  fi
  rm -rf "$ws/install"
  # In a clean environment: the install space must chain no workspace the caller has sourced (such
  # as .ws/devel through tools/env.sh), only the system's ROS (/opt/ros/noetic on Ubuntu).
  if ! env -i HOME="$HOME" PATH=/usr/bin:/bin:/usr/sbin:/sbin:/usr/local/bin LANG=C.UTF-8 \
       ${TMPDIR:+TMPDIR="$TMPDIR"} RC_PREFIX="$ws/install" /bin/bash --norc --noprofile -c '
         if [ -f /opt/ros/noetic/setup.bash ]; then source /opt/ros/noetic/setup.bash; fi
         exec catkin_make install -DPYTHON_EXECUTABLE=/usr/bin/python3 -DCATKIN_ENABLE_TESTING=OFF \
           -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$RC_PREFIX"' >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "build: catkin_make install failed; full log in $log" >&2
    exit 1
  fi
  echo "build: install space ready in $ws/install (log: $log)"
fi
