"""devices.cia402."""
