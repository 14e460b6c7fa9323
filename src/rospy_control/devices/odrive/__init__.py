"""devices.odrive."""
