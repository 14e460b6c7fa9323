"""devices.robstride."""
