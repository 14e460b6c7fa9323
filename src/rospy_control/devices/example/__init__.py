"""devices.example."""
