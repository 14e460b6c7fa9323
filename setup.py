"""Python package set-up for catkin (``catkin_python_setup()`` in CMakeLists.txt).

catkin does not support setuptools ``entry_points`` in the devel space, so executables live in
``scripts/`` and plugins are resolved through ``rospy_control.plugins`` registries.
"""
from setuptools import find_packages, setup

from catkin_pkg.python_setup import generate_distutils_setup

setup(**generate_distutils_setup(
    packages=find_packages("src"),
    package_dir={"": "src"},
))
