"""devices.mit."""
