"""Command-line tools and the Python client of the controller manager services.

* :mod:`.controller_manager_interface` -- ros_control's ``controller_manager_interface`` functions and
  :class:`~.controller_manager_interface.ControllerManagerClient`;
* :mod:`.spawner`, :mod:`.unspawner`, :mod:`.controller_manager_cli`, :mod:`.controller_group` -- the
  logic behind ``scripts/spawner``, ``scripts/unspawner``, ``scripts/controller_manager`` and
  ``scripts/controller_group`` (each script only calls ``main()``).
"""
