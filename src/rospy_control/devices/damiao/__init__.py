"""devices.damiao."""
