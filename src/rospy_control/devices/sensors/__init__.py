"""devices.sensors."""
