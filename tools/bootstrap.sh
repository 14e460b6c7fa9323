#!/usr/bin/env bash
# Install what rospy_control needs and is missing; fast (one dpkg query) when nothing is.
#
# Debian bookworm: ROS 1 Noetic's core comes as Debian packages, installed with apt-get.
# Ubuntu 20.04 with /opt/ros/noetic: ROS comes from packages.ros.org; run rosdep yourself
#   (see README), this script only checks python-can, canopen and the lint tools.
# Python packages not available (or too old) from the distribution go into .ws/venv, a virtual
# environment that sees the system packages, so the system Python is never modified.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ws="$root/.ws"
py=/usr/bin/python3

debian_packages=(
  catkin python3-catkin-pkg ros-core-dev ros-message-generation ros-message-runtime
  python3-genpy python3-genmsg python3-rospy python3-roslaunch python3-rostest librostest-dev python3-rosunit
  python3-rosservice python3-rostopic python3-rosparam python3-rosnode python3-actionlib
  ros-actionlib-msgs python3-actionlib-msgs ros-std-msgs python3-std-msgs ros-std-srvs python3-std-srvs ros-geometry-msgs
  python3-geometry-msgs ros-sensor-msgs python3-sensor-msgs ros-trajectory-msgs
  python3-trajectory-msgs ros-diagnostic-msgs python3-diagnostic-msgs python3-diagnostic-updater
  ros-robot-state-publisher rosbash python3-can python3-lxml python3-numpy python3-yaml python3-pytest python3-pytest-timeout python3-pytest-xdist python3-hypothesis
  protobuf-compiler python3-protobuf
  python3-venv flake8
)

as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
    echo "bootstrap: need root to run: $*" >&2; exit 1; fi
}

if [ -f /opt/ros/noetic/setup.bash ]; then
  echo "bootstrap: found /opt/ros/noetic (Ubuntu Noetic); system packages come from rosdep:"
  echo "           rosdep install --from-paths . --ignore-src -y"
else
  missing=()
  status="$(dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${debian_packages[@]}" 2>/dev/null || true)"
  for p in "${debian_packages[@]}"; do
    grep -qx "$p installed" <<<"$status" || missing+=("$p")
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "bootstrap: installing ${#missing[@]} Debian package(s): ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
fi

# Python-side tools and fallbacks, in .ws/venv (sees system site-packages).
mkdir -p "$ws"
if [ ! -x "$ws/venv/bin/python" ]; then
  "$py" -m venv --system-site-packages "$ws/venv"
fi
want=()
"$ws/venv/bin/python" - <<'PYEOF' || want+=("python-can>=4.0,<4.6")
import sys
import can
major = int(can.__version__.split(".")[0])
sys.exit(0 if major >= 4 else 1)
PYEOF
[ -x "$ws/venv/bin/vermin" ] || want+=("vermin")
# CANopen (CiA 301/402) drives go through the `canopen` library (MIT licence; not packaged by Debian
# nor Ubuntu 20.04). 2.4.x declares Python >=3.8 and python-can >=3.0, so one pin serves Noetic and
# bookworm; the driver imports it lazily, so every other device runs without it.
"$ws/venv/bin/python" -c "import canopen" 2>/dev/null || want+=("canopen>=2.4.1,<2.5")
# mypy 1.17 dropped type-checking for Python 3.8 (mypy.ini's python_version)
[ -x "$ws/venv/bin/mypy" ] || want+=("mypy>=1.10,<1.17")
if [ "${#want[@]}" -gt 0 ]; then
  echo "bootstrap: installing from PyPI into .ws/venv: ${want[*]}"
  # a registry that does not answer is tried again, five attempts over about two minutes (a network
  # blip of a minute happens), then the set-up stops here with pip's own message
  waits=(10 20 40 60)
  for attempt in 1 2 3 4 5; do
    if "$ws/venv/bin/python" -m pip install -q --disable-pip-version-check "${want[@]}" 2>"$ws/pip.err" &&
       [ -x "$ws/venv/bin/vermin" ] && [ -x "$ws/venv/bin/mypy" ] &&
       "$ws/venv/bin/python" -c "import canopen" 2>/dev/null; then
      break
    fi
    if [ "$attempt" -eq 5 ]; then
      tail -n 5 "$ws/pip.err" >&2
      echo "bootstrap: pip could not install ${want[*]} into .ws/venv (5 attempts)" >&2; exit 1
    fi
    wait_s=${waits[$((attempt - 1))]}
    echo "bootstrap: pip failed (attempt $attempt of 5: $(tail -n 1 "$ws/pip.err")); trying again in ${wait_s} s" >&2
    sleep "$wait_s"
  done
fi
