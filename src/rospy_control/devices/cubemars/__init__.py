"""devices.cubemars."""
