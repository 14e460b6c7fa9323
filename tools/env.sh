# Source me: the environment every rospy_control command runs in (workspace, interpreter, venv).
_rc_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export PATH="/usr/bin:/bin:/usr/sbin:/sbin:$PATH"
if [ -f /opt/ros/noetic/setup.bash ]; then source /opt/ros/noetic/setup.bash; fi
# shellcheck disable=SC1091
source "$_rc_root/.ws/devel/setup.bash"
# Packages installed into the venv (e.g. a newer python-can) take precedence for every
# /usr/bin/python3 process, including the nodes that roslaunch starts.
_rc_site="$(ls -d "$_rc_root"/.ws/venv/lib/python3*/site-packages 2>/dev/null | head -n 1 || true)"
if [ -n "$_rc_site" ]; then export PYTHONPATH="$PYTHONPATH:$_rc_site"; fi
export ROS_HOME="${ROS_HOME:-$_rc_root/.ws/ros_home}"
# byte-code caches outside the source tree, kept between runs (node start-up compiles nothing)
export PYTHONPYCACHEPREFIX="${PYTHONPYCACHEPREFIX:-$_rc_root/.ws/pycache}"
# ... which must be written: with a prefix, Python looks there for the byte code of every module (the
# system's and the standard library's too), so a PYTHONDONTWRITEBYTECODE from the user's shell would
# make each process compile all it imports at every start (a node: 1.7 s instead of 0.5 s).
unset PYTHONDONTWRITEBYTECODE
# roscd, rosls, rosed, ... are shell functions from rosbash's `rosbash` file. /opt/ros/noetic's
# setup.bash defines them; Debian's setup.bash does not (Debian ships the file as a bash completion
# script, loaded at best on the first <Tab> after roscd), so define them here, in bash only.
if [ -n "${BASH_VERSION:-}" ] && [ "$(type -t roscd)" != function ]; then
  for _rc_rosbash in /usr/share/rosbash/rosbash /usr/share/bash-completion/completions/rosbash; do
    # shellcheck disable=SC1090
    if [ -f "$_rc_rosbash" ]; then source "$_rc_rosbash"; break; fi
  done
  unset _rc_rosbash
fi
unset _rc_site
